#!/usr/bin/env bash
# vm/boot kept honest without a boot. First its guest vCPU slots (VM_SLOTS), which keep make test's
# side-by-side boots from starving each other: vm/slots.py, run as vm/boot runs it, on slot files of
# a scratch folder against locks this test holds (flock(1)): a run takes exactly what it wants and
# keeps it after it exits for as long as its caller's descriptors are open, waits while every slot
# is held, with none of vm/boot's other descriptors open, and keeps none of what it wants meanwhile,
# waits while another run's first mark is locked but looks at no mark when marked first, removes a
# mark nobody locks, and stops once the vm/boot it waits for is gone (ended, or a zombie nobody
# reaps). Then vm/boot itself, in a build folder of its own, with a stand-in for QEMU: vm/boot holds
# the slot it took (and hands QEMU no other), waits for a held one, holds its first mark while it
# waits and leaves none once QEMU runs, and stops when vm/slots.py fails; it stops a boot that has
# not reached /init at its deadline (VM_BOOT_TIMEOUT) but not one that has; stopped by SIGINT or
# SIGTERM, it takes its QEMU with it. A wait is judged once the waiter has said it waits (a whole
# turn taken); every wait for an answer is bounded (20 s), every vm/boot too (60 s). Prints TAP.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
py=${LAB_PYTHON:-/usr/bin/python3}
slots=${SLOTS_PY:-$top/vm/slots.py}
run=$(mktemp -d)
cleanup() {
	local p
	for p in $(jobs -p); do
		kill "$p" 2>/dev/null || true
	done
	rm -rf "$run"
}
trap cleanup EXIT
# hold FILE: FILE locked by a process of its own (a subshell become sleep) until release PID; sets
# $held to its pid.
hold() {
	(
		exec 9>"$1"
		flock 9
		exec sleep 60
	) &
	held=$!
	local i
	for ((i = 0; i < 500; i++)); do
		flock -n "$1" true || return 0
		sleep 0.02
	done
	echo "vmrun.sh: could not lock $1" >&2
	exit 1
}
# await_said FILE [WORDS]: until FILE says its run waits (WORDS, default 'waiting for'), at most
# 20 s; fails when it never did.
await_said() {
	local i
	for ((i = 0; i < 200; i++)); do
		! grep -qs "${2:-waiting for}" "$1" || return 0
		sleep 0.1
	done
	return 1
}
# hold_all DIR: DIR/slot.1 to slot.3 held (h1, h2, h3 their holders).
hold_all() {
	hold "$1/slot.1"
	h1=$held
	hold "$1/slot.2"
	h2=$held
	hold "$1/slot.3"
	h3=$held
}
release() {
	kill "$1"
	wait "$1" 2>/dev/null || true
}
# is_free FILE: nobody holds FILE's lock.
is_free() { flock -n "$1" true; }
# open_slots N: descriptors of slot.1 to slot.N in fds, as vm/boot opens them.
open_slots() {
	local i fd
	fds=()
	for ((i = 1; i <= $1; i++)); do
		exec {fd}>"$run/slot.$i"
		fds+=("$fd")
	done
}
close_slots() {
	local fd
	for fd in "${fds[@]}"; do
		exec {fd}>&-
	done
}
# answer WANT MARK: vm/slots.py for WANT of the three slots, on descriptors left open (close_slots);
# sets rc and got (the descriptors it says it locked).
answer() {
	open_slots 3
	rc=0
	got=$(timeout 20 "$py" -I -S "$slots" $$ "$1" "$run" "$2" quiet "${fds[@]}") || rc=$?
}
# waits WANT MARK [SAMPLE]: vm/slots.py started in the background must say it waits (within 20 s),
# and after that still be waiting without an answer; with SAMPLE, slot.SAMPLE is looked at ten times
# in the second after, and $free counts how often it was free. Sets ok.
waits() {
	local i
	open_slots 3
	# Emptied here, before the waiter starts: what an earlier waiter said must not be read as its.
	: >"$run/answer"
	: >"$run/said"
	"$py" -I -S "$slots" $$ "$1" "$run" "$2" "" "${fds[@]}" >>"$run/answer" 2>>"$run/said" &
	waiter=$!
	close_slots
	ok=0 free=0 links=""
	await_said "$run/said" || true
	if grep -q 'waiting for' "$run/said"; then
		for ((i = 0; i < 10; i++)); do
			sleep 0.1
			[[ -z ${3:-} ]] || ! is_free "$run/slot.$3" || free=$((free + 1))
		done
		kill -0 "$waiter" 2>/dev/null && [[ ! -s $run/answer ]] && ok=1
		# What it has open while it waits.
		links=$(for f in /proc/"$waiter"/fd/*; do
			((${f##*/} <= 2)) || readlink "$f" || true
		done 2>/dev/null | sort | tr '\n' ' ')
	fi
	kill "$waiter" 2>/dev/null || true
	wait "$waiter" 2>/dev/null || true
}
echo "TAP version 13"
echo "1..20"
n=0
verdict() { # ok(0/1) what [diagnostic]
	n=$((n + 1))
	[[ $1 == 1 || -z ${3:-} ]] || echo "# $3"
	if [[ $1 == 1 ]]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}

answer 1 ""
ok=0
if [[ $rc == 0 && $got == "${fds[0]}" ]] && ! is_free "$run/slot.1" && is_free "$run/slot.2" &&
	is_free "$run/slot.3"; then
	close_slots
	is_free "$run/slot.1" && ok=1
else
	close_slots
fi
verdict "$ok" "a run takes exactly the one slot it wants and keeps it while its caller's descriptor is open" \
	"status $rc, said '$got' for descriptors ${fds[*]}"

hold_all "$run"
waits 1 ""
verdict "$ok" "a run waits while every slot is held" "it said: $(cat "$run/said" "$run/answer" | tr '\n' '|')"
# A descriptor of vm/boot's that is not a slot (its disk locks, its mark): closed before it waits,
# so that a run left waiting holds nothing of its vm/boot's.
exec {extra}>"$run/extra"
waits 1 ""
exec {extra}>&-
ok2=0
[[ $ok == 1 && $links == "$run/slot.1 $run/slot.2 $run/slot.3 " ]] && ok2=1
verdict "$ok2" "a run keeps open only the slots of the descriptors it inherits" \
	"waiting $ok; it had open (above 2): $links"

release "$h3"
# Two wanted, one free: the free one must stay free while it waits (it locks it only for as long as
# it takes to find the other one held).
waits 2 "" 3
[[ $ok == 1 && $free -ge 8 ]] || ok=0
verdict "$ok" "a run that waits keeps none of what it wants" "waiting $ok; slot 3 free at $free of 10 looks"
release "$h1"
release "$h2"

hold "$run/first.1"
mark=$held
waits 1 ""
verdict "$ok" "a run waits while another run's first mark is locked" "it said: $(cat "$run/said" "$run/answer" | tr '\n' '|')"
answer 1 "$run/first.1"
close_slots
ok=0
[[ $rc == 0 && -n $got ]] && ok=1
verdict "$ok" "a run marked first looks at no mark (its own is locked)" "status $rc, said '$got'"
release "$mark"

answer 1 ""
close_slots
ok=0
[[ $rc == 0 && -n $got && ! -e $run/first.1 ]] && ok=1
verdict "$ok" "a mark nobody locks is stale: the run takes its slot and removes it" \
	"status $rc, said '$got', the mark $([[ -e $run/first.1 ]] && echo "still there" || echo gone)"

# Its vm/boot gone (here a sleep that is killed), a waiting run stops within a turn or two.
hold_all "$run"
# gone_after PID: vm/slots.py waiting for vm/boot PID (every slot held) must stop once PID is
# killed, having said it waits (timeout(1)'s 20 s is a hang guard: 124 there); sets ok and diag.
gone_after() {
	open_slots 3
	: >"$run/said"
	timeout 20 "$py" -I -S "$slots" "$1" 1 "$run" "" "" "${fds[@]}" >/dev/null 2>>"$run/said" &
	waiter=$!
	close_slots
	await_said "$run/said" || true
	local t0 ms rc=0 state
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null || echo gone)
	kill "$1"
	wait "$1" 2>/dev/null || true
	t0=$(date +%s%N)
	wait "$waiter" || rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	ok=0
	grep -q 'waiting for' "$run/said" && [[ $rc == 1 ]] && ok=1
	diag="status $rc after $ms ms (124: still waiting at 20 s); the vm/boot's state before the kill:"
	diag+=" $state; it said: $(tr '\n' '|' <"$run/said")"
}
sleep 60 &
parent=$!
gone_after "$parent"
verdict "$ok" "a run whose vm/boot is gone stops waiting" "$diag"
# The same with a vm/boot that is a zombie nobody reaps (its parent, a sleep, never waits): gone.
(
	sleep 60 &
	echo $! >"$run/zombie"
	exec sleep 60
) &
reaper=$!
for ((i = 0; i < 100; i++)); do
	[[ ! -s $run/zombie ]] || break
	sleep 0.05
done
zombie=$(cat "$run/zombie")
gone_after "$zombie"
release "$reaper"
verdict "$ok" "a run whose vm/boot is a zombie nobody reaps stops waiting" "$diag"
release "$h1"
release "$h2"
release "$h3"

# vm/boot itself, in a build folder of its own (an empty initramfs: vm/boot only appends to it),
# with a stand-in for QEMU that writes what it finds: each slot of b/run held or free (by a lock of
# its own), how many of its descriptors are slot files, and the first marks there. What vm/boot says
# of the stand-in's run (no exit marker) is not judged.
b=$run/build
mkdir -p "$b/bin" "$b/pybin" "$b/linux/arch/x86/boot" "$b/run"
ln -s "$(readlink -f "${BUILD:-$top/build}/gen_init_cpio")" "$b/gen_init_cpio"
: >"$b/initramfs.cpio"
: >"$b/linux/arch/x86/boot/bzImage"
cat >"$b/bin/qemu-system-x86_64" <<EOF
#!/bin/bash
# \$b/mode: "noinit", a boot that never reaches /init; "init", one that did (\$b/init-line: what
# guest/init prints on the console, \$b/init-data: what it writes first to the data channel, the
# second -serial file:); each sleeps until stopped, its PID in \$b/pid. Otherwise it looks at the
# slots.
case \$(cat $b/mode 2>/dev/null) in
screen)
	# A console as make demo's guest prints it: the program's lines among the kernel's.
	printf 'demo: a row\\r\\n[    1.000000] ACPI: setting ELCR\\r\\n@@lab-marker@@\\r\\n'
	printf '[    2.000000] WARNING: CPU: 0 PID: 1 at mm/gup.c:1 x\\r\\ndemo: another row\\r\\n'
	exit 0
	;;
noinit | init)
	echo \$\$ >$b/pid
	if [[ \$(cat $b/mode) != noinit ]]; then
		echo "\$(cat $b/init-line) 0.50 s"
		data=\$(printf '%s\\n' "\$@" | sed -n 's/^file://p' | tail -1)
		echo "\$(cat $b/init-data) 0.50" >>"\$data"
	fi
	# As QEMU does: a TERM ends it with status 0.
	sleep 30 &
	trap 'kill \$! 2>/dev/null; wait \$!; exit 0' TERM
	wait
	exit 0
	;;
esac
for i in 1 2 3; do
	if [[ ! -e $b/run/slot.\$i ]]; then echo "slot.\$i none"
	elif flock -n $b/run/slot.\$i true; then echo "slot.\$i free"
	else echo "slot.\$i held"; fi
done >$b/seen
echo "inherited \$(for f in /proc/\$\$/fd/*; do readlink "\$f"; done | grep -c '/run/slot\.')" >>$b/seen
echo "marks \$(ls $b/run | grep -cE '^first\.[0-9]+\$')" >>$b/seen
EOF
chmod +x "$b/bin/qemu-system-x86_64"
# A Python (vm/boot's LAB_PYTHON) that fails for vm/slots.py only.
# shellcheck disable=SC2016 # expanded by the wrapper
printf '#!/bin/bash\ncase "$*" in */slots.py*) exit 3 ;; esac\nexec %q "$@"\n' "$py" >"$b/pybin/python3"
chmod +x "$b/pybin/python3"
# vmrun NAME ENV...: vm/boot of the stand-in, its stderr in $b/NAME.err, its status in rc; with
# BG=1 in the background, waiter the PID of its timeout(1) (so that a kill reaches vm/boot).
vmrun() {
	local name=$1
	shift
	rm -f "$b/seen"
	rc=0
	local cmd=(env -u VM_QUIET -u VM_SLOT_FIRST PATH="$b/bin:$PATH" BUILD="$b" VM_ACCEL=tcg VM_SMP=1
		VM_TIMEOUT=20 "$@" timeout -k 5 60 "$top/vm/boot" --name "$name" ${GDB:+--gdb} ${OUT:+--out "$OUT"} -- true)
	if [[ ${BG:-} == 1 ]]; then
		"${cmd[@]}" >"$b/$name.out" 2>"$b/$name.err" &
		waiter=$!
	else
		"${cmd[@]}" >"$b/$name.out" 2>"$b/$name.err" || rc=$?
	fi
}
seen() {
	if [[ -f $b/seen ]]; then tr '\n' ' ' <"$b/seen"; else echo "nothing (the stand-in never ran)"; fi
}

hold "$b/run/slot.1"
h1=$held
vmrun three VM_SLOTS=3
s=$(seen)
ok=0
[[ $s == "slot.1 held slot.2 held slot.3 free inherited 1 marks 0 " ]] && ok=1
verdict "$ok" "vm/boot holds the slot it took while its QEMU runs, and hands QEMU no other" "the stand-in found: $s"

# Every slot held: vm/boot says it waits and starts nothing; once the slot is free, it runs.
BG=1 vmrun waits VM_SLOTS=1
await_said "$b/waits.err" 'waiting for 1 of 1' || true
sleep 0.5
early=$(seen)
release "$h1"
wrc=0
wait "$waiter" || wrc=$?
s=$(seen)
ok=0
[[ $early == nothing* && $s == "slot.1 held"* && $wrc != 124 && $wrc != 137 ]] &&
	grep -q 'waiting for 1 of 1' "$b/waits.err" && ok=1
verdict "$ok" "vm/boot waits for a held slot, and runs once it is free" \
	"while held: $early; after: $s; status $wrc (124, 137: its 60 s were up)"

# Marked first: while it waits (every slot held) its mark is there, locked; once its QEMU runs, gone.
hold_all "$b/run"
BG=1 vmrun marked VM_SLOTS=3 VM_SLOT_FIRST=1
said=yes
await_said "$b/marked.err" || said=no
marks=$(find "$b/run" -maxdepth 1 -regex '.*/first\.[0-9]+' | wc -l)
mark_locked=no
for f in "$b"/run/first.*; do
	[[ $f =~ /first\.[0-9]+$ ]] || continue
	is_free "$f" || mark_locked=yes
done
release "$h1"
release "$h2"
release "$h3"
wait "$waiter" || true
s=$(seen)
ok=0
[[ $said == yes && $marks == 1 && $mark_locked == yes && $s == *"marks 0 " && $s == "slot.1 held"* ]] && ok=1
verdict "$ok" "vm/boot marked first holds its mark while it waits, and leaves none once its QEMU runs" \
	"it said it waits: $said; while waiting: $marks mark(s), locked: $mark_locked; the stand-in found: $s"

vmrun broken VM_SLOTS=3 LAB_PYTHON="$b/pybin/python3"
s=$(seen)
ok=0
[[ $rc != 0 && $s == nothing* ]] && ok=1
verdict "$ok" "vm/boot whose vm/slots.py fails starts no QEMU and fails" "status $rc; the stand-in found: $s"

# The boot's deadline and vm/boot's signals, with the stand-in asleep (one slot, no wait). Its /init
# lines are guest/init's, up to the time: the console's, and the data channel's, which vm/boot's
# watcher must look for.
init_line=$(sed -n 's/^echo "\(dontfork-lab: \/init at\) .*/\1/p' "$top/guest/init")
# shellcheck disable=SC2016 # guest/init's own words, its $init_at among them
init_data=$(sed -n 's/.*echo "\(@@lab-uptime init\) \$init_at".*/\1/p' "$top/guest/init")
echo "$init_line" >"$b/init-line"
echo "$init_data" >"$b/init-data"
echo noinit >"$b/mode"
# Its data channel a file that an earlier boot left holding /init's line: this boot's must not count.
echo "$init_data 9.99" >"$b/stale.data"
SECONDS=0
OUT=$b/stale.data vmrun noinit VM_SLOTS=1 VM_BOOT_TIMEOUT=1
took=$SECONDS
ok=0
# QEMU ends with status 0 on its TERM: what a guest that ended lacks is not reported.
[[ $rc != 0 ]] && grep -q 'had not reached /init after 1s' "$b/noinit.err" &&
	! grep -qE 'timed out after|without the exit marker|without handing over' "$b/noinit.err" && ok=1
verdict "$ok" "vm/boot stops a boot that has not reached /init at its deadline (VM_BOOT_TIMEOUT), and fails, whatever its --out file held before" \
	"status $rc after $took s: $(tr '\n' '|' <"$b/noinit.err")"

echo init >"$b/mode"
vmrun booted VM_SLOTS=1 VM_BOOT_TIMEOUT=6 VM_TIMEOUT=10
ok=0
[[ -n $init_line && -n $init_data ]] && grep -q 'timed out after 10s' "$b/booted.err" &&
	! grep -q 'had not reached /init' "$b/booted.err" && grep -qF "$init_line 0.50 s" "$b/booted.out" && ok=1
verdict "$ok" "vm/boot lets a boot that reached /init (guest/init's data line) run on past its deadline, its console shown" \
	"guest/init's lines: '$init_line', '$init_data'; status $rc: $(tr '\n' '|' <"$b/booted.err"); shown: $(tr '\n' '|' <"$b/booted.out")"

# VM_SCREEN=program (make demo): the terminal shows the program's lines and a kernel splat, named,
# and not the kernel's other lines nor the lab's markers; the log keeps everything.
echo screen >"$b/mode"
vmrun screen VM_SLOTS=1 VM_SCREEN=program
shown=$(tr -d '\r' <"$b/screen.out" | tr '\n' '|')
ok=0
[[ $shown == "demo: a row|kernel splat (warn): [    2.000000] WARNING: CPU: 0 PID: 1 at mm/gup.c:1 x|demo: another row|" ]] &&
	grep -q 'ACPI: setting ELCR' "$b/logs/screen.log" && ok=1
verdict "$ok" "vm/boot's VM_SCREEN=program shows the program's lines and a kernel splat, named, and nothing else of the kernel's" \
	"shown: $shown"

# --gdb: the guest waits for the debugger, not for a deadline.
echo noinit >"$b/mode"
GDB=1 vmrun gdb VM_SLOTS=1 VM_BOOT_TIMEOUT=1 VM_TIMEOUT=4
ok=0
grep -q 'timed out after 4s' "$b/gdb.err" && ! grep -q 'had not reached /init' "$b/gdb.err" && ok=1
verdict "$ok" "vm/boot --gdb has no boot deadline" "status $rc: $(tr '\n' '|' <"$b/gdb.err")"

# descendants PID: every process under PID, one per line.
descendants() {
	local c
	for c in $(pgrep -P "$1" || true); do
		echo "$c"
		descendants "$c"
	done
}
# stop SIG: vm/boot of the stand-in (booted), started by a launcher that restores the default action
# of SIGINT, SIGTERM and SIGHUP (a background job of this shell would ignore SIGINT, a terminal's
# foreground job does not; make test run under nohup(1) ignores SIGHUP, which a shell started so
# cannot trap: seen, vm/boot ran on to its timeout) and says how vm/boot ended, gets SIG once its
# QEMU runs: vm/boot must die of it, and every process under it just before (timeout(1), the
# stand-in and its sleep, the deadline's watcher, the console's tail) be gone by then: vm/boot waits
# for each, so no time is given them. A vm/boot still there after 60 s is a hang, not a slow host.
# Sets ok and diag.
stop() {
	local i pid="" vmrun="" tree st left=""
	rm -f "$b/pid" "$b/stop-$1.how"
	echo init >"$b/mode"
	env -u VM_QUIET -u VM_SLOT_FIRST PATH="$b/bin:$PATH" BUILD="$b" VM_ACCEL=tcg VM_SMP=1 VM_SLOTS=1 \
		VM_TIMEOUT=20 "$py" -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_DFL)
pid = os.fork()
if not pid:
    os.execv(sys.argv[2], sys.argv[2:])
st = os.waitpid(pid, 0)[1]
with open(sys.argv[1], "w") as f:
    f.write("signal %d" % os.WTERMSIG(st) if os.WIFSIGNALED(st) else "exit %d" % os.WEXITSTATUS(st))
' "$b/stop-$1.how" "$top/vm/boot" --name "stop-$1-$$" -- true >/dev/null 2>"$b/stop-$1.err" &
	local launcher=$!
	for ((i = 0; i < 200; i++)); do
		[[ -z $pid ]] || break
		sleep 0.1
		[[ ! -s $b/pid ]] || pid=$(cat "$b/pid")
	done
	vmrun=$(pgrep -P "$launcher" || true)
	tree=$(descendants "${vmrun:-$launcher}" | tr '\n' ' ')
	[[ -z $vmrun ]] || kill "-$1" "$vmrun" 2>/dev/null || true
	# The launcher ends once it has reaped vm/boot.
	for ((i = 0; i < 600; i++)); do
		kill -0 "$launcher" 2>/dev/null || break
		sleep 0.1
	done
	for p in $vmrun $tree; do
		! kill -0 "$p" 2>/dev/null || left+="$p "
	done
	# A hang guard: what is still there now is a failure, not a wait.
	for p in $left; do
		kill -9 "$p" 2>/dev/null || true
	done
	wait "$launcher" 2>/dev/null || true
	st=$(cat "$b/stop-$1.how" 2>/dev/null || echo "not reported")
	ok=0
	[[ -n $pid && $tree == *"$pid "* && $st == "signal $2" && -z $left ]] && ok=1
	diag="vm/boot: ${vmrun:-never seen}, ended by $st; the stand-in ${pid:-never ran}; under vm/boot:"
	diag+=" ${tree:-nothing}; left once it ended: ${left:-nothing}"
}
stop INT 2
verdict "$ok" "vm/boot stopped by SIGINT (Ctrl-C) while its QEMU runs dies of it, leaving nothing" "$diag"
stop TERM 15
verdict "$ok" "vm/boot stopped by SIGTERM while its QEMU runs dies of it, leaving nothing" "$diag"
stop HUP 1
verdict "$ok" "vm/boot stopped by SIGHUP while its QEMU runs dies of it, leaving nothing" "$diag"
