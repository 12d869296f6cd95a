#!/usr/bin/env bash
# Crash durability of LINUX_FADV_WRITE_WAIT + ASYNC_WRITE on the guest's disk: overwrite two
# preallocated, fsynced files, put one on disk with wait-write-wait and only dirty the other
# (the control), reset the guest with no sync (sysrq 'b'), boot again on the same image and read.
# The control is asserted too: with the periodic flusher stopped and the dirty limits far away,
# nothing else writes it out, so losing its new bytes is deterministic here.
# Prints TAP. Needs the built lab (make guest).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
disk=$build/disk-crash.img
run=("$top/vm/run" --disk "$disk" --timeout "${VM_TIMEOUT:-300}")

echo "TAP version 13"
echo "1..3"
# What the build applied (vm/build-kernel.sh's kernel.env): without 0001 there is no WRITE_WAIT.
if ! grep -q '^LAB_SERIES_PATCHES=.*0001-' "$build/kernel.env" 2>/dev/null; then
	why="this kernel lacks kernel-patches/.../0001: LINUX_FADV_WRITE_WAIT"
	for i in 1 2 3; do echo "ok $i # SKIP $why"; done
	exit 0
fi
write_log=$build/logs/crash-write.log
check_log=$build/logs/crash-check.log
if "${run[@]}" --name crash-write --expect-reset -- /lab/bin/crash_helper write >/dev/null 2>&1 &&
	grep -aq 'crash_helper: data written with wait-write-wait' "$write_log" &&
	grep -aq 'sysrq: Resetting' "$write_log"; then
	echo "ok 1 the guest wrote, called wait-write-wait and was reset without sync"
else
	echo "not ok 1 the guest wrote, called wait-write-wait and was reset without sync"
	echo "# see $write_log"
	echo "ok 2 # SKIP no crash happened"
	echo "ok 3 # SKIP no crash happened"
	exit 1
fi

# The check boot is judged too: a splat, a timeout or a failed read there fails both checks.
check_rc=0
"${run[@]}" --name crash-check -- /lab/bin/crash_helper check >/dev/null 2>&1 || check_rc=$?
[[ $check_rc == 0 ]] || echo "# the check boot failed with status $check_rc ($check_log)"
data=$(grep -aoE '^data [0-9]+/[0-9]+' "$check_log" | tail -1 | cut -d' ' -f2 || true)
control=$(grep -aoE '^control [0-9]+/[0-9]+' "$check_log" | tail -1 | cut -d' ' -f2 || true)
echo "# after the reset: data file ${data:-?} pages new, control ${control:-?} pages new ($check_log)"
if [[ $check_rc == 0 && -n $data && ${data%/*} == "${data#*/}" ]]; then
	echo "ok 2 every page written with wait-write-wait survived the reset"
else
	echo "not ok 2 every page written with wait-write-wait survived the reset"
fi
if [[ $check_rc == 0 && $control == 0/* ]]; then
	echo "ok 3 the control, only dirtied, lost its new bytes"
else
	echo "not ok 3 the control, only dirtied, lost its new bytes"
fi
