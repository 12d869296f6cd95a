#!/usr/bin/env bash
# Crash durability of LINUX_FADV_WRITE_WAIT + ASYNC_WRITE on the guest's disk: overwrite two
# preallocated, fsynced files, put one on disk with wait-write-wait and only dirty the other
# (the control), cut the power with no sync, boot again on the same image and read. The power cut
# is QEMU's isa-debug-exit device, written by the guest: QEMU exits at once, and what the disk
# still had queued is lost. A guest reset (sysrq 'b') is not one: QEMU completes every request it
# holds, throttled or not, before it stops, and a WRITE_WAIT that returned at once passed.
# The control is asserted too: with the periodic flusher stopped and the dirty limits far away,
# nothing else writes it out, so losing its new bytes is deterministic here.
# Both boots write at 1 MiB/s, so that the 4 MiB write-out takes about 4 s: long enough for a
# WRITE_WAIT that does not wait to lose data (tests/host/plants.sh plants one) even when other
# guests beside this one delay the power cut (at the lab's 8 MiB/s the plant once stayed green so). Prints TAP; exits 1 when a case
# failed. Needs the built lab (make guest).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
# CRASH_NAME and CRASH_DISK: the boots' names (their logs) and the image, for a second run beside
# this one (tests/host/plants.sh runs it on a planted kernel).
name=${CRASH_NAME:-crash}
disk=${CRASH_DISK:-$build/disk-crash.img}
# Nothing here uses RDMA: the boots load only the lab's modules (vm/boot).
export VM_KMODS=lab
run=("$top/vm/boot" --disk "$disk,throttling.bps-write=$((1 << 20))" --timeout "${VM_TIMEOUT:-300}")

echo "TAP version 13"
echo "1..3"
# What the build applied (vm/build-kernel.sh's kernel.env): without 0001 there is no WRITE_WAIT.
if ! grep -q '^LAB_SERIES_PATCHES=.*0001-' "$build/kernel.env" 2>/dev/null; then
	why="this kernel lacks kernel-patches/.../0001: LINUX_FADV_WRITE_WAIT"
	for i in 1 2 3; do echo "ok $i # SKIP $why"; done
	exit 0
fi
# Both boots' words come on the data channel, which the console's kernel messages never
# interleave: the write boot's page states are out of the guest before the power cut (crash_helper
# drains the UART first), after what guest/init writes at once (which kernel runs: make plants
# holds its planted kernel to it).
write_log=$build/logs/$name-write.log
write_data=$build/logs/$name-write.data
check_log=$build/logs/$name-check.data
# The guest's port write makes QEMU exit with status 2 * 0x2a + 1 (crash_helper.c): vm/boot then
# fails saying so (its reasons, NUL-ended, in $cut), and must say nothing else (no splat, no timeout).
cut=$(mktemp)
trap 'rm -f "$cut"' EXIT
# The logs of an earlier run must not be read as this one's (vm/boot writes a log only once QEMU
# starts).
rm -f "$write_log" "$write_data" "$check_log"
# A long boot (its writes at 1 MiB/s): it takes its slot before shorter ones (VM_SLOT_FIRST).
VM_SLOT_FIRST=1 VM_QEMU_ARGS="${VM_QEMU_ARGS:-} -device isa-debug-exit,iobase=0xf4,iosize=0x04" \
	"${run[@]}" --name "$name-write" --out "$write_data" --fails "$cut" --expect-reset -- /lab/bin/crash_helper write \
	>/dev/null 2>&1 || true
# The kernel's word on the data file's pages right after the calls, before the cut.
left=$(grep -aoE '^crash_helper: after wait-write-wait [0-9]+ pages dirty, [0-9]+ under writeback' "$write_data" || true)
left=${left#crash_helper: }
echo "# ${left:-no page states read} ($write_data)"
if [[ $left != "after wait-write-wait 0 pages dirty, 0 under writeback" ]]; then
	echo "not ok 1 the guest wrote, called wait-write-wait, saw no page dirty or under writeback, and had its power cut"
	tr '\0' '\n' <"$cut" | sed 's/^/# /'
	echo "not ok 2 every page written with wait-write-wait survived the power cut # pages were left in flight"
	echo "not ok 3 the control, only dirtied, lost its new bytes # pages were left in flight"
	exit 1
fi
if grep -aq '^crash_helper: data written with wait-write-wait' "$write_data" &&
	[[ $(tr -cd '\0' <"$cut" | wc -c) == 1 ]] && grep -aq '^QEMU exited with status 85;' "$cut"; then
	echo "ok 1 the guest wrote, called wait-write-wait, saw no page dirty or under writeback, and had its power cut"
else
	echo "not ok 1 the guest wrote, called wait-write-wait, saw no page dirty or under writeback, and had its power cut"
	tr '\0' '\n' <"$cut" | sed 's/^/# /'
	echo "# see $write_data, $write_log"
	echo "not ok 2 every page written with wait-write-wait survived the power cut # no power cut happened"
	echo "not ok 3 the control, only dirtied, lost its new bytes # no power cut happened"
	exit 1
fi

# The check boot is judged too: a splat, a timeout or a failed read there fails both checks.
check_rc=0
# shellcheck disable=SC2016 # $LAB_OUT is the guest shell's
"${run[@]}" --name "$name-check" --out "$check_log" -- \
	sh -c '/lab/bin/crash_helper check >"$LAB_OUT" 2>&1' >/dev/null 2>&1 || check_rc=$?
[[ $check_rc == 0 ]] || echo "# the check boot failed with status $check_rc ($check_log)"
data=$(grep -aoE '^data [0-9]+/[0-9]+' "$check_log" | tail -1 | cut -d' ' -f2 || true)
control=$(grep -aoE '^control [0-9]+/[0-9]+' "$check_log" | tail -1 | cut -d' ' -f2 || true)
echo "# after the power cut: data file ${data:-?} pages new, control ${control:-?} pages new ($check_log)"
status=0
if [[ $check_rc == 0 && -n $data && ${data%/*} == "${data#*/}" ]]; then
	echo "ok 2 every page written with wait-write-wait survived the power cut"
else
	echo "not ok 2 every page written with wait-write-wait survived the power cut"
	status=1
fi
if [[ $check_rc == 0 && $control == 0/* ]]; then
	echo "ok 3 the control, only dirtied, lost its new bytes"
else
	echo "not ok 3 the control, only dirtied, lost its new bytes"
	status=1
fi
exit "$status"
