#!/usr/bin/env bash
# vm/run's guest vCPU slots (VM_SLOTS), which keep make test's side-by-side boots from starving each
# other, kept honest without a boot: vm/slots.py run as vm/run runs it, on slot files of a scratch
# folder, against locks this test holds (flock(1)). A run waits while every slot is held, takes one
# once it is free and keeps it after it exits for as long as its caller's descriptor is open, never
# keeps part of what it wants while it waits, waits while another run's first mark is locked but not
# for its own, and removes a mark nobody locks. Each wait is judged by a timeout of 1 s. Last, vm/run
# itself, in a build folder of its own with a stand-in for QEMU that looks at the one slot
# (VM_SLOTS=1): vm/run must hold it while its QEMU runs. Prints TAP. Needs the built lab (make guest).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
slots=${SLOTS_PY:-$top/vm/slots.py}
run=$(mktemp -d)
holders=()
cleanup() {
	for p in "${holders[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	rm -rf "$run"
}
trap cleanup EXIT
# hold FILE: FILE locked by a process of its own until release; sets $held to its pid.
hold() {
	# The subshell becomes sleep, which holds the lock until killed.
	(
		exec 9>"$1"
		flock 9
		exec sleep 60
	) &
	held=$!
	holders+=("$held")
	# Locked once flock(1) runs sleep: a lock of our own fails until then.
	while flock -n "$1" true; do sleep 0.02; done
}
release() {
	kill "$1"
	wait "$1" 2>/dev/null || true
}
# try WANT MARK: vm/slots.py for WANT of slot.1 to slot.3 (opened here, as vm/run opens them), run
# for at most 1 s; sets rc (124: it was still waiting) and got (the slots it says it locked). With
# KEEP=1 the descriptors stay open (closed by close_all), so that what it locked stays locked.
try() {
	local i fd
	fds=()
	for i in 1 2 3; do
		exec {fd}>"$run/slot.$i"
		fds+=("$fd")
	done
	rc=0
	got=$(timeout 1 python3 "$slots" "$1" "$run" "$2" quiet "${fds[@]}") || rc=$?
	[[ ${KEEP:-0} == 1 ]] || close_all
}
close_all() {
	local fd
	for fd in "${fds[@]}"; do
		exec {fd}>&-
	done
}
echo "TAP version 13"
echo "1..7"
n=0
verdict() { # ok(0/1) what [diagnostic]
	n=$((n + 1))
	[[ $1 == 1 || -z ${3:-} ]] || echo "# $3"
	if [[ $1 == 1 ]]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}

hold "$run/slot.1"
h1=$held
hold "$run/slot.2"
h2=$held
hold "$run/slot.3"
h3=$held
try 1 ""
verdict "$([[ $rc == 124 ]] && echo 1 || echo 0)" "a run waits while every slot is held" "status $rc, said '$got'"

release "$h3"
KEEP=1 try 1 ""
ok=0
if [[ $rc == 0 && $got == "${fds[2]}" ]] && ! flock -n "$run/slot.3" true; then
	close_all
	flock -n "$run/slot.3" true && ok=1
else
	close_all
fi
verdict "$ok" "a run takes the free slot and keeps it while its caller's descriptor is open" \
	"status $rc, said '$got' for descriptors ${fds[*]}"

# Two wanted, one free: while it waits, the free one must stay free (it locks it only for as long
# as it takes to find the other one held). Looked at ten times over the second it waits.
timeout 1.2 python3 "$slots" 2 "$run" "" quiet 7>"$run/slot.1" 8>"$run/slot.2" 9>"$run/slot.3" 7 8 9 \
	>/dev/null &
waiter=$!
free=0
for _ in $(seq 10); do
	sleep 0.1
	! flock -n "$run/slot.3" true || free=$((free + 1))
done
rc=0
wait "$waiter" || rc=$?
verdict "$([[ $rc == 124 && $free -ge 5 ]] && echo 1 || echo 0)" \
	"a run that waits keeps none of what it wants" "status $rc; slot 3 free at $free of 10 looks"
release "$h1"
release "$h2"

hold "$run/first.1"
mark=$held
try 1 ""
verdict "$([[ $rc == 124 ]] && echo 1 || echo 0)" "a run waits while another run's first mark is locked" \
	"status $rc, said '$got'"
try 1 "$run/first.1"
verdict "$([[ $rc == 0 && -n $got ]] && echo 1 || echo 0)" "a run marked first does not wait for marks (its own is locked too)" \
	"status $rc, said '$got'"
release "$mark"

try 1 ""
verdict "$([[ $rc == 0 && -n $got && ! -e $run/first.1 ]] && echo 1 || echo 0)" \
	"a mark nobody locks is stale: the run takes its slot and removes it" \
	"status $rc, said '$got', the mark $([[ -e $run/first.1 ]] && echo "still there" || echo gone)"

# vm/run holds its slot while QEMU runs: the stand-in finds slot.1 locked (not by itself: it tries a
# descriptor of its own). What vm/run says of the stand-in's run (no exit marker) is not judged.
build=${BUILD:-$top/build}
b=$run/build
mkdir -p "$b/bin" "$b/linux/arch/x86/boot"
ln -s "$(readlink -f "$build/initramfs.cpio")" "$b/initramfs.cpio"
ln -s "$(readlink -f "$build/gen_init_cpio")" "$b/gen_init_cpio"
: >"$b/linux/arch/x86/boot/bzImage"
printf '#!/bin/sh\nif flock -n %q true; then echo free; else echo held; fi >%q\n' \
	"$b/run/slot.1" "$b/seen" >"$b/bin/qemu-system-x86_64"
chmod +x "$b/bin/qemu-system-x86_64"
rc=0
PATH=$b/bin:$PATH BUILD=$b VM_ACCEL=tcg VM_SLOTS=1 VM_SMP=1 VM_QUIET=1 VM_TIMEOUT=20 \
	"$top/vm/run" --name slots -- true >"$b/out" 2>&1 || rc=$?
seen=$(cat "$b/seen" 2>/dev/null || echo "nothing (the stand-in never ran)")
verdict "$([[ $seen == held ]] && echo 1 || echo 0)" "vm/run holds its guest vCPU slot while its QEMU runs" \
	"the stand-in found slot.1 $seen; vm/run's status $rc: $(tail -2 "$b/out" | tr '\n' '|')"
