#!/usr/bin/env bash
# Every guard seen failing: plant each fault the lab's runners must catch and assert that the run
# turns red through the guard that should catch it, with its own message. The plant itself must
# succeed (the program runs, the module loads; the panic's shows its own message), so that only the
# guard can turn the run red. Nothing
# of the lab is changed: plants are programs, modules and files added to the guest for one boot
# (vm/boot --add), and planted kernels built from a copy of the tree's state. Plants that cannot affect
# each other share a boot: every program plant in one (each judged by tests/ktap.py from its own
# frame of the data channel), every console plant in another (vm/boot names each class of report it
# found).
# Prints TAP. Needs the built lab (make guest).
set -euo pipefail
# The plants' own run-alls write results into their own build folders, not make plants' (whose
# LAB_RESULTS they would otherwise share, and race each other's files in).
unset LAB_RESULTS
top=$(cd "$(dirname "$0")/../.." && pwd)
py=${LAB_PYTHON:-/usr/bin/python3}
build=${BUILD:-$top/build}
plants=$build/plants
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
tree=$(readlink -f "$build/linux")
ksrc=$(ksrc_of "$tree")
harness=$ksrc/tools/testing/selftests/kselftest_harness.h
mkdir -p "$plants/guest"
debug=0
grep -qx CONFIG_DEBUG_KMEMLEAK=y "$tree/.config" && debug=1
kernel=$(sed -n 's/^LAB_KERNEL=//p' "$build/kernel.env")

# The exit code with which the tree's harness records a test's child as skipped, read from it.
if grep -q 'WEXITSTATUS(status) == 255' "$harness"; then
	skip_exit=255
elif grep -q 'WEXITSTATUS(status) == KSFT_SKIP' "$harness"; then
	skip_exit=4
else
	echo "plants.sh: cannot tell the skip exit code of $harness" >&2
	exit 1
fi
# What the tree's harness makes of a test's child exiting 2 or 3: 6.12's records KSFT_XFAIL and
# KSFT_XPASS (an "ok" with a directive), 6.1's a failure.
if grep -q 'WEXITSTATUS(status) == KSFT_XPASS' "$harness"; then
	xfail_says="global.exits_2: an expected failure (XFAIL unknown) that the skip budget"
	xpass_says="global.exits_3: XPASS (unknown)"
else
	xfail_says="global.exits_2: not ok"
	xpass_says="global.exits_3: not ok"
fi
# The plant programs, static, the harness ones on the tree's own harness as tests are built.
for src in "$top"/tests/plants/*.c; do
	name=$(basename "$src" .c)
	bin=$plants/guest/$name
	[[ $bin -nt $src && $bin -nt $harness && $bin -nt $top/tests/lib/harness.h && $bin -nt $build/obj/liblab.a &&
		$bin -nt $0 ]] && continue
	gcc -O2 -Wall -Wextra -Werror -static -isystem "$tree/usr/include" -I"$top/liblab" \
		-I"$top/tests/lib" -I"$top/drivers/pindma/uapi" -I"$ksrc/tools/testing/selftests" -DPLANT_SKIP_EXIT=$skip_exit \
		-o "$bin" "$src" "$build/obj/liblab.a"
done
# The kernel plants are modules built against the lab's tree, in a copy under $build; again only
# when their sources or the tree's build changed (a stamp of both).
[[ -f $tree/.lab-built && -f $tree/include/config/kernel.release ]] ||
	{ echo "plants.sh: $tree is not a kernel the lab has built (no .lab-built or kernel.release): build the lab's kernel first" >&2; exit 1; }
stamp=$(cat "$0" "$top"/tests/plants/kmod/* "$tree/.lab-built" "$tree/include/config/kernel.release" | sha1sum)
if [[ $(cat "$plants/kmod/.stamp" 2>/dev/null) != "$stamp" ]]; then
	rm -rf "$plants/kmod"
	cp -r "$top/tests/plants/kmod" "$plants/kmod"
	make -s -C "$tree" M="$plants/kmod" modules >"$plants/kmod.log" 2>&1 ||
		{ cat "$plants/kmod.log" >&2; echo "plants.sh: building the plant modules failed" >&2; exit 1; }
	echo "$stamp" >"$plants/kmod/.stamp"
fi

# The driver plants: pindma built from drivers/pindma with one file edited by the sed script
# tests/plants/driver/NAME.sed, in a copy under $plants (again only when its sources, the script or
# the tree's build changed), loaded in a boot of its own in place of the lab's module (sec_driver).
# NAME|file|a marker the planted file must hold|what[|the plant whose script is applied first[|a line
# the planted file must no longer hold]]
drivers=(
	"edu_cpu|edu.c|plant: the CPU copies|pindma_edu_copy() copying with the CPU and counting two edu transfers"
	"edu_cpu_read|edu.c|#define PLANT_IRQS_RAISED 2|a device read served by the CPU, edu's interrupt raised by hand twice|edu_cpu|#define PLANT_CPU_SERVES 1"
	"longterm|pin.c|plant: no FOLL_LONGTERM|PIN_LONGTERM pinning without FOLL_LONGTERM"
	"refuse8|main.c|plant: every pin refused|every pin refused (ENOMEM) once the file holds 8 handles"
	"edu_lock_kept|edu.c|plant: edu lock kept|pindma keeping its edu lock on an error path (a killable wait, which the hung-task detector skips)"
	"refuse3|main.c|plant: one pin in three refused|one pin in three that it would grant refused (ENOMEM)"
	"userns|pin.c|plant: namespaces let in|a pin from a user namespace granted, charged to the namespace's uid"
	"dma_unref|main.c|plant: the DMA holds no reference|the DMA ioctl holding no reference to its handle (an UNPIN meanwhile unpins the pages under it)"
	"close_teardown|main.c|.flush = pindma_plant_flush,|the DMA ioctl holding no reference, the handles torn down at close() (.flush)|dma_unref"
)
# The kernel memory leaks are seen object by object in /proc/slabinfo, which SLUB keeps only with
# SLUB_DEBUG (6.12's tinyconfig base selects SLUB_TINY, which leaves it out; pindma_leak_test's
# slab cases skip there, listed): planted only where the guard can see them.
slabinfo=0
if grep -qx CONFIG_SLUB_DEBUG=y "$tree/.config" && ! grep -qx CONFIG_KASAN=y "$tree/.config"; then
	slabinfo=1
	drivers+=(
		"leak|pin.c|plant: h->pages leaked|a handle's page array never freed"
		"handleleak|pin.c|plant: the handle leaked|a released handle itself never freed (72 bytes a pin)"
		"dmaleak|dma.c|plant: the bounce buffer leaked|a DMA request's bounce buffer never freed"
	)
else
	echo "# the slab leak plants need /proc/slabinfo (CONFIG_SLUB_DEBUG) and no KASAN quarantine"
fi
# Every driver plant script is one of the table's: one it does not list would never be planted.
for f in "$top"/tests/plants/driver/*.sed; do
	grep -qE "^[[:space:]]*\"$(basename "$f" .sed)\|" "$0" ||
		{ echo "plants.sh: $f is in no drivers table here" >&2; exit 1; }
done
declare -A mfile mmarker mwhat mbase mgone
for d in "${drivers[@]}"; do
	IFS='|' read -r name f marker what base gone <<<"$d"
	mfile[$name]=$f mmarker[$name]=$marker mwhat[$name]=$what mbase[$name]=$base mgone[$name]=$gone
done
# plant_module NAME: $plants/pindma-NAME.ko, built against the lab's tree (module builds write only
# their own folder). Sets $module.
plant_module() {
	local name=$1 dir=$plants/mod-$1 stamp script scripts=()
	module=$plants/pindma-$name.ko
	[[ -z ${mbase[$name]} ]] || scripts+=("$top/tests/plants/driver/${mbase[$name]}.sed")
	scripts+=("$top/tests/plants/driver/$name.sed")
	stamp=$({ cat "$0" "$top"/drivers/pindma/*.[ch] "$top"/drivers/pindma/uapi/*.h "$top/drivers/pindma/Kbuild"
		cat "${scripts[@]}" "$tree/.lab-built"; } | sha1sum)
	[[ -f $module && $(cat "$dir/.stamp" 2>/dev/null) == "$stamp" ]] && return 0
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$top/drivers/pindma" && find . -name '*.[ch]' -o -name Kbuild | cpio -pdmu --quiet "$dir")
	for script in "${scripts[@]}"; do
		sed -i -f "$script" "$dir/${mfile[$name]}"
	done
	if ! grep -qF -- "${mmarker[$name]}" "$dir/${mfile[$name]}" ||
		{ [[ -n ${mgone[$name]} ]] && grep -qF -- "${mgone[$name]}" "$dir/${mfile[$name]}"; }; then
		echo "plants.sh: the driver plant $name found nothing to change in ${mfile[$name]}" >&2
		exit 1
	fi
	# Its name as the module's version (/sys/module/pindma/version): the boot shows which pindma
	# it loaded, so that a plant the guest never loaded cannot pass for one its guard missed.
	echo "MODULE_VERSION(\"plant-$name\");" >>"$dir/main.c"
	make -s -C "$tree" M="$dir" modules >"$dir/build.log" 2>&1 ||
		{ cat "$dir/build.log" >&2; echo "plants.sh: building the driver plant $name failed" >&2; exit 1; }
	cp "$dir/pindma.ko" "$module"
	echo "$stamp" >"$dir/.stamp"
}

# The program plants: NAME|what|the failure the judge must name (tests/ktap.py data: a line
# "NAME_test failed: WHY" each; a WHY ending in ": not ok" must be the whole line, any other its
# start). Only the judge's words count: a program's own output could say anything. Some plants
# check the program's frame too (frame_check, below).
# A test program is /lab/tests/NAME_test (a plant program, or a wrapper running a real one planted).
programs=(
	"dies_midway|a program that dies by a signal after part of its plan|planned 2 cases, reported 1"
	"dies_after_all|a program that dies by a signal after its whole plan|killed by signal 11"
	"extra_ok|a program that reports more cases than its plan|planned 1 cases, reported 2"
	"silent|a program that reports no case|reported no test case"
	"dup_ok|a plan of 3 with ok 1 printed three times|test 1 reported 3 times"
	"no_plan|results without a plan|no plan line (1..N)"
	"two_plans|a second plan line|2 plan lines: 1..2, 1..2"
	"harness_exit_skip|a test's child exiting with the harness's skip code ($skip_exit)|global.dies_with_the_skip_code: skipped without a reason"
	"harness_exit_xfail|a test's child exiting 2 (6.12's harness: XFAIL)|$xfail_says"
	"harness_exit_xpass|a test's child exiting 3 (6.12's harness: XPASS)|$xpass_says"
	"harness_skip_after_expect|SKIP() after a failed EXPECT|global.fails_then_skips: an expectation failed"
	"unlisted_skip|a skip the budget does not list|global.skips_unlisted: skipped (a plant's skip), and the skip budget"
	"ghost|a program the build lists but the guest lacks|the build lists it, but /lab/tests/ghost_test is missing"
	"nopatch|the lab's kernel without its series' 0001 and 0002 (kernel.env planted)|global.switch_exists_and_is_off_by_default: not ok"
	"cow_crash|a cow.c that crashes halfway|cow.c ran its whole plan and exited as its results call for: not ok"
	"cow_missing|no cow.c at all|cow.c ran its whole plan and exited as its results call for: not ok"
	"cow_known_passed|a case cow-known.txt lists that passes|case 2 ... with base page: not ok"
	"demo_exit|a demo (consumers_demo) exiting 3, a status no records call for (0, 1 or 2)|~consumers_demo exits [0-2] as its records call for \(it exited 3\): not ok"
	"hca_unstaged|verbs rows whose HCA write carries nothing (its tag never staged)|verbs-switch-off@rxe verdict: not ok"
	"child_dontfork_kept|a child row whose MADV_DONTFORK is never asked (the child keeps the range)|child-dontfork@pindma-cpu verdict: not ok"
	"query|a row whose PINDMA_IOC_QUERY fails (run as nobody)|exited with status 2 without reporting a failed case"
	"pagemap|a row whose pagemap read fails (run as nobody)|exited with status 2 without reporting a failed case"
	"thlog_inject|a TH_LOG of several lines holding a result line of its own|ok"
	"knob_left|a program that passes but leaves the flusher off (guest/run-tests' knobs)|left /proc/sys/vm/dirty_writeback_centisecs at 0 (it was "
)
# A user's tree (KERNEL_SRC) is not patched, and there a lab patch's absence is a skip the budget lists
# and a cow-known.txt case that passes only a note, by design: those two guards do not apply there.
if [[ $kernel == src ]]; then
	echo "# a user's tree: the plants of a lab kernel without its series and of cow-known.txt run on the lab's kernels"
	keep=()
	for c in "${programs[@]}"; do
		case $c in nopatch\|* | cow_known_passed\|*) ;; *) keep+=("$c") ;; esac
	done
	programs=("${keep[@]}")
fi
# What the program itself must have shown besides (its frame of the data channel, fixed strings, a
# line each), so that the judge's failure is the one the plant was made for.
declare -A frame_check
frame_check[cow_crash]='# cow.c (plain): planned 10, reported 3, exited 139 (its results call for 0)'
frame_check[cow_missing]='# cow.c (plain): planned -, reported 0, exited 127 (its results call for 0)'
frame_check[cow_known_passed]="# case 2 ... with base page: listed in cow-known.txt for $kernel but passed: take it off the list"
frame_check[query]=$'could not run: PINDMA_IOC_QUERY\n1 rows: 0 as expected, 0 mismatched, 1 could not run\n@@lab-prog-end query_test 2 '
frame_check[pagemap]=$'could not run: reading the parent\'s PFN\n1 rows: 0 as expected, 0 mismatched, 1 could not run\n@@lab-prog-end pagemap_test 2 '
# The kept range must be seen by the guard itself: the verdict it observed, and the checks of the
# range's VmFlags and of the child's maps, not only a red verdict (which a row that could not run
# also gives); and the row must have run (frame_absent: lines the program must not have shown).
frame_check[child_dontfork_kept]=$'child-dontfork@pindma-cpu: observed PRE-FORK\nchild-dontfork@pindma-cpu: not so: the range\'s VmFlags of dc, sh, wf are "dc" ("")\nchild-dontfork@pindma-cpu: not so: the child has no such range (VM_DONTCOPY)'
declare -A frame_absent
frame_absent[child_dontfork_kept]='child-dontfork@pindma-cpu could not run'
# The judge's plants without a boot: tests/ktap.py fed a small data channel (ktap_plant, below),
# each holding the one fault it must fail: NAME|what|the line it must print (its start; the whole
# line when it ends in ": not ok").
ktaps=(
	"nested|a nested not ok under a parent's ok|x_test failed: outer: subtest: 1 inner: not ok"
	"nested_split|a nested not ok in the first of two indented blocks before one result|x_test failed: outer: subtest (block 1 of 2): 1 inner: not ok"
	"nested_skip|a skip inside a subtest, under a parent's ok|x_test failed: outer: subtest: 1 inner: skip (a plant) inside a subtest"
	"xfail|an XFAIL no budget lists|x_test failed: a: an expected failure (XFAIL anything) that the skip budget"
	"xpass|an XPASS (6.12's harness: a test's child exiting 3)|x_test failed: global.t: XPASS (unknown)"
	"indented|a result line indented by 2 spaces|x_test failed: a line indented by 2 spaces"
	"unnumbered|a result line without its number|x_test failed: a result line without a test number: not ok - b"
	"trailing|an indented block after the last result|x_test failed: an indented block after the last result"
	"cut|a frame another program's begins inside|a_test failed: its frame never ended: \"@@lab-prog-begin b_test\" came inside it"
	"open|a frame open when the guest stopped|a_test failed: its frame never ended: the guest stopped"
	"vanished|a program the manifest lists and no frame brings|b_test failed: the build's manifest"
	"nobudget|no skip budget file|run failed [skip_budget_missing]: "
	"skip_reason|a listed skip whose reason is not the budget's|x_test failed: a: skipped (a new reason), but the skip budget skip_reason.budget lists it for another reason: \"the old reason\""
	"listed_passed|a case the skip budget lists that passes|x_test failed: a: listed in the skip budget"
	"stale|a skip budget entry for a case that did not run|run failed [skip_budget_stale]: "
	"star_stale|a skip budget's * for a program none of whose cases skipped|run failed [skip_budget_star_unused]: "
	"nothing|a run that judged nothing|run failed [judged_something]: "
	"plan0|1..0 without a reason|x_test failed: 1..0 without a reason"
	"status4|exit status 4 (skip) with a case that passed|x_test failed: exited with the skip status 4, yet not every case skipped"
	"bailout|Bail out!|x_test failed: bailed out: Bail out! a plant"
)
# The console plants: module|what|vm/boot's class of report|a word of its report naming the plant
# (an extended regular expression). The soft lockup's names the plant's function (the interrupted RIP),
# the hung task's insmod, the plant's task (its stack is below the console's level): a report a
# stalled host makes in another function, or for a task other than insmod, cannot stand in.
consoles=(
	"warn|a kernel WARN|warn|plant_warn_init"
	"softlockup|a soft lockup (kernel.watchdog_thresh=1)|soft-lockup|RIP: [0-9a-f]+:plant_softlockup_init\+"
	"hungtask|a hung task (kernel.hung_task_timeout_secs=2)|hung-task|task insmod:[0-9]+ blocked for more than"
)
# lockdep first: the first taint that is not an out-of-tree module's (the WARN plant's) turns lock
# debugging off ("Disabling lock debugging due to kernel taint"), and a lock inversion after it goes
# unreported (seen: the debug boot's classes without lockdep).
debug_consoles=(
	"lockdep|a lock inversion (lockdep)|lockdep|circular locking"
	"listcorrupt|a list corruption (DEBUG_LIST)|list|list_add corruption"
	"kasan|a use-after-free (KASAN)|kasan|plant_kasan_init"
	"ubsan|an out-of-bounds shift (UBSAN)|ubsan|shift-out-of-bounds"
)
[[ $debug == 0 ]] || consoles=("${debug_consoles[0]}" "${consoles[@]}" "${debug_consoles[@]:1}")
# The reports the console check matches that every kernel can make, planted after those (their
# fifth field: the plant's name, within the report whose line the fourth matches, in the whole
# log). The general protection fault and the BUG() kill their insmod (killers): loaded last, after
# the bad page (sec_console), and a taint that turns lockdep off does not matter there.
consoles+=(
	"refcount|a refcount_t underflow|refcount|refcount_t: underflow|plant_refcount_init"
	"rcustall|an RCU CPU stall (rcu_cpu_stall_timeout=3)|rcu-stall|rcu_[a-z]+ (self-)?detected stall|plant_rcustall_init"
	"workqueue|a stuck workqueue (workqueue.watchdog_thresh=1)|workqueue|BUG: workqueue lockup|in-flight: [0-9]+:plant_workqueue_spin"
	"gpf|a general protection fault (its insmod killed)|gpf|general protection fault|RIP: [0-9a-f]+:plant_gpf_read\\+"
	"bug|skb_put() past a buffer's end, the kernel's BUG() (its insmod killed)|bug|kernel BUG at net/core/skbuff\\.c:[0-9]+|plant_bug_init\\+"
)
killers="gpf bug"
# A step before the insmod, and module parameters (none today). The plants that hold a fault up
# (soft lockup, hung task, RCU stall, stuck workqueue) hold it until the kernel has reported it
# (tests/plants/kmod/watch.h), not for a number of seconds a loaded host could outlast.
declare -A kmod_args kmod_before
# From 6.5 a work item running past wq_cpu_intensive_thresh_us leaves concurrency management, and
# another worker runs the one queued behind it: no lockup. The threshold raised, where it exists.
kmod_before[workqueue]="echo 1 >/sys/module/workqueue/parameters/watchdog_thresh && { f=/sys/module/workqueue/parameters/cpu_intensive_thresh_us; [ ! -e \$f ] || echo 1000000000 >\$f; }"
# Kernel plants: the lab's tree with one source file edited (plant_kernel, below), each for the guard
# it must turn red. 0001's commands are sync_file_range() calls in mm/fadvise.c; a user's tree
# (KERNEL_SRC) is built out of tree and has no lab series: nothing to plant against. Which plants
# run follows from the tree and the flavour, never from the text of the code under test: a plant
# whose anchor is gone fails the run (plant_kernel), rather than leaving its guard unplanted.
kplants=()
if [[ ! -f $tree/mm/fadvise.c ]]; then
	echo "# the kernel plants need the lab's own tree with kernel-patches/ applied; $tree is a build directory"
else
	# 0001 once passed len 0 on as end -1, which 6.1's file_fdatawait_range() takes as an empty
	# range; 6.12's waits to the end for it (no "end_byte < start_byte" return), so there the old
	# bug cannot be planted.
	if sed -n '/^static void __filemap_fdatawait_range/,/^}/p' "$tree/mm/filemap.c" |
		grep -q 'if (end_byte < start_byte)'; then
		kplants+=(len0)
	fi
	kplants+=(async_waits crash_write_wait)
	# What each plants: its script's header (tests/plants/kernel/NAME.sed). VFIO's where the
	# kernel has type1; 0002's switch on every kernel whose series has 0002 (kernel.env), not on
	# what its code says: a plant whose anchor 0002 no longer has fails the run (plant_kernel).
	! grep -qx CONFIG_VFIO_IOMMU_TYPE1=y "$tree/.config" || kplants+=(vfio_foll_get vfio_short)
	! grep -q '^LAB_SERIES_PATCHES=.*0002-' "$build/kernel.env" ||
		kplants+=(switch_unbounded switch_stays_on switch_shares_nothing switch_warns_always)
fi
# GUP-fast's DEBUG_VM check against a fork() that shares the page it has just pinned (0002 with the
# switch on): only a kernel with DEBUG_VM makes the check, so only the debug flavour has the plants.
if ! grep -qx CONFIG_DEBUG_VM=y "$tree/.config"; then
	echo "# the GUP-fast plants run on the debug kernel (make test FLAVOUR=debug)"
elif [[ -f $tree/mm/gup.c ]]; then
	kplants+=(gup_fast_race gup_fast_gate)
fi
# The boots that plant vm/boot's and run-all's own guards (below, after the console plants): the
# three logs and the panic (sec_vmlog), a failed guest job and a hang (sec_runall). vm/boot's boot
# deadline and signals need no boot: host/vmrun.sh checks them with a stand-in for QEMU.
others=6
# The driver plants' guards: the edu plant turns three red (pindma_trip_test, rows_test's edu rows,
# edu_mask_check), its read variant two (pindma_trip_test, edu_mask_check), the edu lock plant two
# (guest/run-tests' timeout and the kselftest runner's), the others one each; and a knob left
# changed and a program the list lacks under the kselftest runner, in the edu lock's boot.
# The bad page's report, only where no KASAN report shares its boot: KASAN's dumps a page of its own
# ("page dumped because: kasan: bad access detected"), which vm/boot's bad-page class matches on the
# console, so there the verdict could not fail. The normal kernels plant it.
badpage=$((1 - debug))
total=$((${#ktaps[@]} + ${#programs[@]} + ${#consoles[@]} + others + 1 + badpage + ${#kplants[@]} +
	2 * debug + ${#drivers[@]} + 6))
sections="crash kernels console programs runall vmlog detectors driver hang"
# The debug kernel plants what only it can catch: its detectors' console reports (lockdep, list
# corruption, KASAN, UBSAN), kmemleak and lockdep after the suite, the switch left on, GUP-fast's
# DEBUG_VM check. Every other guard (the judge, vm/boot, run-all, the runner, the driver's tests,
# 0001's fadvise) is the same code whatever the kernel's flavour, and its plants run on the normal
# flavour, which make test runs first in CI (.ci/run); on the debug kernel they took half an hour
# of CI's time. PLANTS=all runs them all here too.
if [[ $debug == 1 && ${PLANTS:-} != all ]]; then
	echo "# the debug kernel's own plants only; the others run on the normal flavour (PLANTS=all: all here)"
	consoles=("${debug_consoles[@]}")
	killers=""
	keep=()
	for k in "${kplants[@]}"; do
		[[ $k != gup_fast_* ]] || keep+=("$k")
	done
	kplants=("${keep[@]}")
	ktaps=() programs=() drivers=()
	sections="console kernels detectors"
	# The console boot's plants, the GUP-fast boots, the detectors' three.
	total=$((${#consoles[@]} + ${#kplants[@]} + 3))
fi

# Each kernel plant is tests/plants/kernel/NAME.sed, a sed script whose header says which file of the
# tree it edits ("# file: "), a marker the planted file must then hold ("# marker: "), optionally a
# line it must no longer hold ("# gone: ") and a plant whose script is applied first ("# after: ").
kplant_dir=$top/tests/plants/kernel
# kplant_field NAME FIELD: that header line of NAME's script, or nothing.
kplant_field() {
	sed -n "s/^# $2: //p" "$kplant_dir/$1.sed"
}
# Every kernel plant script is planted here, or applied first by one that is.
for f in "$kplant_dir"/*.sed; do
	k=$(basename "$f" .sed)
	grep -qE "kplants\+=\(.*\<$k\>" "$0" || grep -qx "# after: $k" "$kplant_dir"/*.sed ||
		{ echo "plants.sh: $f is planted by nothing here" >&2; exit 1; }
done
# plant_kernel NAME: the lab's tree with NAME's script (after the one it names) applied to its file,
# which must then hold its marker (and no longer what it names gone), built (only FILE's object,
# init/version*.o for its UTS version, and the link are redone) and kept
# as $plants/bzImage-NAME-HASH, HASH naming the tree as the lab built it and the plant: a warm run
# builds nothing. Sets $image. Planted and built in $plants/tree, a private copy of the tree, never in
# the tree itself, which other guests, of this run or of another clone sharing the cache, may be
# booting meanwhile. The copy is brought in line with the tree under the tree's lock, shared
# (vm/build-kernel.sh builds under it alone), so that no build of the tree is copied half done; it
# is built where the tree is, in a mount namespace of the build's own with the copy mounted over
# the tree (unshare(1)): Kbuild's objtool records absolute paths, and a copy built elsewhere
# rebuilt all of the kernel.
built=$(cat "$tree/.lab-built" 2>/dev/null || true)
release=$(cat "$tree/include/config/kernel.release" 2>/dev/null || true)
ptree=$plants/tree
# Not root: the mount namespace in a user namespace of the caller's own.
userns=()
[[ $(id -u) == 0 ]] || userns=(-r)
synced=0
image=""
sync_tree() {
	local lk
	[[ $synced == 0 ]] || return 0
	exec {lk}>"$(dirname "$tree")/.lock"
	flock -s "$lk"
	[[ $(cat "$tree/.lab-built" 2>/dev/null) == "$built" ]] ||
		{ echo "plants.sh: $tree was rebuilt while the plants ran: run them again" >&2; exit 1; }
	mkdir -p "$ptree"
	rsync -a --delete "$tree/" "$ptree/"
	exec {lk}>&-
	synced=1
}
# shellcheck disable=SC2016 # the mount namespace's shell expands its own arguments
plant_kernel() {
	local name=$1 rel file marker gone after script scripts=() ok=0
	rel=$(kplant_field "$name" file) marker=$(kplant_field "$name" marker)
	gone=$(kplant_field "$name" gone) after=$(kplant_field "$name" after)
	[[ -n $rel && -n $marker ]] || { echo "plants.sh: $kplant_dir/$name.sed names no file or marker" >&2; exit 1; }
	file=$ptree/$rel
	[[ -z $after ]] || scripts+=("$kplant_dir/$after.sed")
	scripts+=("$kplant_dir/$name.sed")
	[[ -n $built ]] || { echo "plants.sh: $tree/.lab-built is missing: build the lab's kernel first" >&2; exit 1; }
	# Its UTS version names the plant (KBUILD_BUILD_VERSION: uname -v says "#plant-NAME ..."), so that
	# a boot's data (guest/init's @@lab-kernel) shows that the planted kernel is the one that ran.
	# The tree's path and release are in the name too: a new source package may leave .lab-built
	# and the planted file as they were.
	image=$plants/bzImage-$name-$({ echo "$built plant-$name $tree $release"; cat "$tree/$rel" "${scripts[@]}"; } |
		sha1sum | cut -c1-12)
	[[ ! -f $image ]] || return 0
	# In a section (run side by side with the others) nothing is built: built before.
	[[ -z ${in_section:-} ]] || { echo "plants.sh: the planted kernel $name was not built before the sections" >&2; exit 1; }
	sync_tree
	rm -f "$plants/bzImage-$name"-*
	cp -p "$file" "$plants/$name.orig"
	for script in "${scripts[@]}"; do
		sed -i -f "$script" "$file"
	done
	if grep -qF -- "$marker" "$file" && { [[ -z $gone ]] || ! grep -qF -- "$gone" "$file"; } &&
		unshare "${userns[@]}" -m --propagation private bash -c \
			'mount --bind "$1" "$2" && exec make -C "$2" ARCH=x86_64 -j"$(nproc)" KBUILD_BUILD_VERSION="plant-$3" bzImage' \
			_ "$ptree" "$tree" "$name" >"$plants/kernel-$name.log" 2>&1; then
		cp "$ptree/arch/x86/boot/bzImage" "$image.tmp"
		ok=1
	fi
	# The next plant of the same file starts from the lab's (and is rebuilt: touched).
	cp -p "$plants/$name.orig" "$file"
	touch "$file"
	[[ $ok == 1 ]] || { cat "$plants/kernel-$name.log" >&2; echo "plants.sh: building the planted kernel $name failed" >&2; exit 1; }
	mv "$image.tmp" "$image"
}
# --build: only build the planted kernels (tests/run-all does so before it boots any guest, so that
# the builds do not compete with the boots for the CPU).
if [[ ${1:-} == --build ]]; then
	for k in "${kplants[@]}"; do
		plant_kernel "$k"
	done
	exit 0
fi
echo "TAP version 13"
echo "1..$total"
# The boots' sections (below) run side by side: their verdicts are numbered again once all are in.

# The judge fed small data channels (no boot): ktap_plant NAME writes $kt/NAME.data, and the skip
# budget (NAME.budget, or none listing anything) and manifest (NAME.manifest: a whole run) it is
# judged with.
kt=$plants/ktap
rm -rf "$kt"
mkdir -p "$kt"
echo '# a plant: no case may skip' >"$kt/empty.budget"
frame() { # NAME STATUS LINE...: a program's frame of the data channel
	local name=$1 status=$2
	shift 2
	printf '@@lab-prog-begin %s\n' "$name"
	printf '%s\n' "$@"
	printf '@@lab-prog-end %s %s 0.01\n' "$name" "$status"
}
ktap_plant() {
	local d=$kt/$1
	case $1 in
	nested) frame x_test 0 'KTAP version 1' '1..1' '    KTAP version 1' '    1..1' '    not ok 1 inner' 'ok 1 outer' ;;
	nested_split)
		frame x_test 0 '1..1' '    1..1' '    not ok 1 inner' '# a line at the outer level' '    1..1' \
			'    ok 1 inner' 'ok 1 outer'
		;;
	nested_skip) frame x_test 0 '1..1' '    1..1' '    ok 1 inner # SKIP a plant' 'ok 1 outer' ;;
	xfail) frame x_test 0 '1..1' 'ok 1 a # XFAIL anything' ;;
	xpass) frame x_test 0 '1..1' '#  RUN           global.t ...' 'ok 1 global.t # XPASS unknown' ;;
	indented) frame x_test 0 '1..2' 'ok 1 a' '  not ok 2 b' 'ok 2 c' ;;
	unnumbered) frame x_test 0 '1..1' 'ok 1 a' 'not ok - b' ;;
	trailing) frame x_test 0 '1..1' 'ok 1 a' '    garbage' '    not ok 7' ;;
	cut) printf '@@lab-prog-begin a_test\n1..1\nok 1 a\n'; frame b_test 0 '1..1' 'ok 1 b' ;;
	open) printf '@@lab-prog-begin a_test\n1..1\nok 1 a\n' ;;
	vanished) frame a_test 0 '1..1' 'ok 1 a'; printf 'a_test\nb_test\n' >"$d.manifest" ;;
	nobudget) frame x_test 0 '1..1' 'ok 1 a' ;;
	skip_reason)
		frame x_test 0 '1..2' 'ok 1 a # SKIP a new reason' 'ok 2 b'
		echo 'x_test | a | the old reason' >"$d.budget"
		;;
	listed_passed) frame x_test 0 '1..1' 'ok 1 a'; echo 'x_test | a | a plant' >"$d.budget" ;;
	stale)
		frame x_test 0 '1..1' 'ok 1 a'
		echo 'x_test | gone | a plant' >"$d.budget"
		echo x_test >"$d.manifest"
		;;
	star_stale)
		frame x_test 0 '1..1' 'ok 1 a'
		echo 'x_test | * | a plant' >"$d.budget"
		echo x_test >"$d.manifest"
		;;
	nothing) frame x_test 4 '1..1' 'ok 1 a # SKIP a plant'; echo 'x_test | a | a plant' >"$d.budget" ;;
	plan0) frame x_test 4 '1..0' ;;
	status4) frame x_test 4 '1..1' 'ok 1 a' ;;
	bailout) frame x_test 1 '1..2' 'ok 1 a' 'Bail out! a plant' ;;
	esac >"$d.data"
	local args=(--budget "$kt/empty.budget")
	[[ ! -f $d.budget ]] || args=(--budget "$d.budget")
	[[ $1 != nobudget ]] || args=(--budget "$kt/none.txt")
	[[ ! -f $d.manifest ]] || args+=(--manifest "$d.manifest")
	"$py" "$top/tests/ktap.py" data "$d.data" "${args[@]}" >"$d.verdicts" || true
}
for c in "${ktaps[@]}"; do
	IFS='|' read -r name what want <<<"$c"
	ktap_plant "$name"
	if [[ $want == *': not ok' ]]; then
		grep -qxF -- "$want" "$kt/$name.verdicts" && ok=1 || ok=0
	else
		W=$want awk 'index($0, ENVIRON["W"]) == 1 { f = 1 } END { exit !f }' "$kt/$name.verdicts" && ok=1 || ok=0
	fi
	verdict "$what turns the judge red (tests/ktap.py)" "$ok" \
		"$([[ $ok == 1 ]] || echo "expected '$want'; got: $(tr '\n' '|' <"$kt/$name.verdicts") ($kt/$name.data)")"
done

sec_programs() {
	# Boot 1: every program plant, each judged from its own frame.
	w=$plants/guest/wrap
	mkdir -p "$w" "$plants/guest/demo"
	adds=()
	run=()
	for c in "${programs[@]}"; do
		IFS='|' read -r name _ _ <<<"$c"
		case $name in
		ghost) continue ;;
		nopatch)
			printf '#!/bin/sh\nLAB_KERNEL_ENV=/lab/plants/kernel.env exec /lab/tests/fork_switch_test switch_exists_and_is_off_by_default\n' >"$w/$name" ;;
		cow_crash) printf '#!/bin/sh\nCOW=/lab/plants/cow_crash exec /lab/tests/cow_test\n' >"$w/$name" ;;
		cow_missing) printf '#!/bin/sh\nCOW=/lab/plants/none exec /lab/tests/cow_test\n' >"$w/$name" ;;
		cow_known_passed)
			printf '#!/bin/sh\nCOW=/lab/plants/cow_crash COW_KNOWN=/lab/plants/cow-known.txt exec /lab/tests/cow_test\n' >"$w/$name" ;;
		demo_exit) printf '#!/bin/sh\nLAB_DEMO_DIR=/lab/plant-demo exec /lab/tests/rows_test consumers_demo\n' >"$w/$name" ;;
		hca_unstaged) printf '#!/bin/sh\nLAB_DEMO_DIR=/lab/plant-demo exec /lab/tests/rows_test verbs_demo\n' >"$w/$name" ;;
		child_dontfork_kept)
			printf '#!/bin/sh\nLAB_DEMO_DIR=/lab/plant-demo exec /lab/tests/rows_test child_demo\n' >"$w/$name" ;;
		query) printf '#!/bin/sh\nexec su -s /bin/sh -c "/lab/demo/dontfork_demo --only pin" nobody\n' >"$w/$name" ;;
		pagemap) printf '#!/bin/sh\nexec su -s /bin/sh -c "/lab/demo/dontfork_demo --only mlock" nobody\n' >"$w/$name" ;;
		knob_left)
			printf '#!/bin/sh\necho 0 >/proc/sys/vm/dirty_writeback_centisecs || exit 1\n%s\n' \
				"printf 'TAP version 13\n1..1\nok 1 the flusher turned off (a plant)\n'" >"$w/$name" ;;
		*) adds+=(--add "$plants/guest/$name:/lab/tests/${name}_test"); run+=("${name}_test"); continue ;;
		esac
		chmod +x "$w/$name"
		adds+=(--add "$w/$name:/lab/tests/${name}_test")
		run+=("${name}_test")
	done
	# Exit 3: a status no records call for, so that the guard speaks whatever the rows did (a row that
	# could not run calls for 2). The guard is every demo's; consumers_demo's rows are quick (the
	# fadvise rows it once wrapped made the plants' longest boot longer).
	printf '#!/bin/sh\n/lab/demo/consumers_demo "$@"\nexit 3\n' >"$plants/guest/demo/consumers_demo"
	chmod +x "$plants/guest/demo/consumers_demo"
	# planted_demo DEMO FILE SED WHAT LINK...: DEMO built from demo/demo.c with a copy of rows/FILE
	# that SED changed (the plant must have found what it changes: WHAT), linked ahead of the row
	# layer's archive, whose own object the link then never pulls in; linked again only when what
	# goes into it changed (a stamp of it all).
	planted_demo() {
		local demo=$1 file=$2 script=$3 what=$4 bin=$plants/guest/demo/$1 stamp
		shift 4
		sed "$script" "$top/rows/$file" >"$plants/$file"
		! cmp -s "$plants/$file" "$top/rows/$file" ||
			{ echo "plants.sh: rows/$file has no $what to take out" >&2; exit 1; }
		stamp=$(cat "$0" "$plants/$file" "$top/demo/demo.c" "$top"/rows/*.h "$top"/liblab/*.h \
			"$top"/drivers/pindma/uapi/*.h "$build/obj/librows.a" "$build/obj/liblab.a" \
			"$tree/.lab-built" | sha1sum)
		[[ ! -x $bin || $(cat "$bin.stamp" 2>/dev/null) != "$stamp" ]] || return 0
		gcc -O2 -Wall -Wextra -Werror -fno-strict-aliasing -isystem "$tree/usr/include" \
			-I"$top/liblab" -I"$top/rows" -I"$top/drivers/pindma/uapi" \
			-DLAB_DEMO="\"$demo\"" -o "$bin" "$top/demo/demo.c" "$plants/$file" \
			"$build/obj/librows.a" "$build/obj/liblab.a" "$@"
		echo "$stamp" >"$bin.stamp"
	}
	# verbs_demo with the HCA's tag never staged before its RDMA WRITE (dynamic, as vm/guest.mk
	# links the real one).
	planted_demo verbs_demo verbs_play.c '/memcpy(stage + OFF_HCA, HCA, TAG);/d' "staging memcpy" \
		-ljson-c -libverbs
	# child_demo whose DONTFORK row never asks for MADV_DONTFORK.
	planted_demo child_demo child.c 's/if (r->dontfork && madvise(page, LAB_PAGE, MADV_DONTFORK))/if (0)/' \
		"MADV_DONTFORK madvise()" -static -ljson-c
	sed 's/^LAB_SERIES_PATCHES=.*/LAB_SERIES_PATCHES=""/' "$build/kernel.env" >"$plants/kernel.env"
	# cow-known.txt listing a case that cow_crash passes (its second), for this kernel.
	echo "$kernel | xfail | case 2 ... with base page | a plant: listed, yet it passes" >"$plants/cow-known.txt"
	# The boot's skip budget: the kernel's (a plant program running one demo checks no doc block).
	cp "$top/tests/skips/$kernel.txt" "$plants/skips.txt"
	# A folder whose manifest lists a program it lacks, run as a whole (the runner's manifest check).
	echo ghost_test >"$plants/manifest"
	# The plant demos one folder below /lab, as the lab's own (a program finds kernel.env and its
	# helpers from the folder above its own: liblab's lab_root()).
	adds+=(--add "$plants/guest/demo/consumers_demo:/lab/plant-demo/consumers_demo"
		--add "$plants/guest/demo/verbs_demo:/lab/plant-demo/verbs_demo"
		--add "$plants/guest/demo/child_demo:/lab/plant-demo/child_demo"
		--add "$plants/guest/cow_crash:/lab/plants/cow_crash" --add "$plants/kernel.env:/lab/plants/kernel.env"
		--add "$plants/cow-known.txt:/lab/plants/cow-known.txt"
		--add "$plants/manifest:/lab/plants/tests/manifest")
	rc=0
	# The plants' longest boot (with the console's): its slot before shorter ones' (VM_SLOT_FIRST).
	VM_SLOT_FIRST=1 "$top/vm/boot" --name plant-programs --out "$plants/programs.data" --disk "$build/disk-plants.img" \
		"${adds[@]}" -- sh -c "/lab/guest/run-tests ${run[*]} && LAB_TESTS_DIR=/lab/plants/tests /lab/guest/run-tests" \
		>"$plants/programs.out" 2>&1 || rc=$?
	verdicts=$plants/programs.verdicts
	"$py" "$top/tests/ktap.py" data "$plants/programs.data" --budget "$plants/skips.txt" >"$verdicts" || true
	# judge_says NAME WHY: the judge's verdicts hold "NAME_test failed: WHY" (WHY ending in ": not ok" as
	# the whole line, any other as its start; ~WHY: an extended regular expression for the whole WHY).
	judge_says() {
		local want="${1}_test failed: $2"
		if [[ $2 == '~'* ]]; then
			grep -qxE -- "${1}_test failed: ${2#'~'}" "$verdicts"
		elif [[ $2 == *': not ok' ]]; then
			grep -qxF -- "$want" "$verdicts"
		else
			W=$want awk 'index($0, ENVIRON["W"]) == 1 { f = 1 } END { exit !f }' "$verdicts"
		fi
	}
	for c in "${programs[@]}"; do
		IFS='|' read -r name what message <<<"$c"
		line=$(grep "^${name}_test " "$verdicts" | head -1 || true)
		text=$(sed -n "/^@@lab-prog-begin ${name}_test\$/,/^@@lab-prog-end ${name}_test /p" "$plants/programs.data" | tr -d '\r')
		if [[ $message == ok ]]; then
			# The guard keeps this one green: one case, the injected line read as a diagnostic.
			if [[ $rc == 0 && $line == "${name}_test ok" ]] && grep -q '^# ok 2 injected' <<<"$text" &&
				[[ $(grep -c '^ok [0-9]' <<<"$text") == 1 ]]; then
				verdict "$what is read as a diagnostic, not a result" 1
			else
				verdict "$what is read as a diagnostic, not a result" 0 "boot status $rc; got: ${line:-no frame} ($plants/programs.data)"
			fi
			continue
		fi
		shown=1
		while IFS= read -r want; do
			[[ -z $want ]] || grep -qF -- "$want" <<<"$text" || { shown=0; break; }
		done <<<"${frame_check[$name]:-}"
		while IFS= read -r unwanted; do
			[[ -z $unwanted ]] || ! grep -qF -- "$unwanted" <<<"$text" || { shown=0; break; }
		done <<<"${frame_absent[$name]:-}"
		if [[ $rc == 0 && $shown == 1 ]] && judge_says "$name" "$message"; then
			verdict "$what turns its program red" 1
		else
			verdict "$what turns its program red" 0 "boot status $rc, its frame as planted: $shown; expected '${name}_test failed: $message'; got: $(grep "^${name}_test " "$verdicts" | tr '\n' '|' || echo 'no frame') ($plants/programs.data)"
		fi
	done
}

sec_console() {
	# Boot 2: every console plant, each module loaded in turn whatever the one before did (a report
	# that kills its insmod must not stop the rest); each plant must take (its insmod exits 0, or
	# for one whose report kills it, dies of it) and vm/boot must fail the run naming the class of
	# report each causes. The boot has two vCPUs: an RCU grace period starts on the other one; and
	# init_on_alloc=1, as distros' kernels have, without which 6.12 checks no page it frees.
	# And a report only the whole kernel log carries: the bad page, with the console's level
	# lowered first (to 1: only KERN_EMERG), which the reports after it do not need.
	# Every level to the consoles first: the plants that hold a fault up let it go once their own
	# function is printed in the report's stack (tests/plants/kmod/watch.h), which some detectors
	# print below the boot's loglevel.
	cmd="echo 8 >/proc/sys/kernel/printk && echo 1 >/proc/sys/kernel/watchdog_thresh"
	cmd+=" && echo 2 >/proc/sys/kernel/hung_task_timeout_secs"
	cmd+=" && echo 3 >/sys/module/rcupdate/parameters/rcu_cpu_stall_timeout || exit 1"
	adds=()
	[[ $badpage == 0 ]] || adds=(--add "$plants/kmod/plant_badpage.ko:/lab/plants/plant_badpage.ko")
	for c in "${consoles[@]}"; do
		IFS='|' read -r mod _ _ _ <<<"$c"
		adds+=(--add "$plants/kmod/plant_$mod.ko:/lab/plants/plant_$mod.ko")
		[[ " $killers " != *" $mod "* ]] || continue
		[[ -z ${kmod_before[$mod]:-} ]] || cmd+="; ${kmod_before[$mod]} || exit 1"
		cmd+="; insmod /lab/plants/plant_$mod.ko ${kmod_args[$mod]:-}; echo \"plant-status $mod \$?\""
	done
	cmd+="; echo 1 >/proc/sys/kernel/printk || exit 1"
	[[ $badpage == 0 ]] || cmd+="; insmod /lab/plants/plant_badpage.ko; echo \"plant-status badpage \$?\""
	for mod in $killers; do
		cmd+="; insmod /lab/plants/plant_$mod.ko; echo \"plant-status $mod \$?\""
	done
	cmd+="; true"
	rc=0
	VM_SMP=2 VM_KMODS=lab VM_APPEND=init_on_alloc=1 VM_SLOT_FIRST=1 "$top/vm/boot" --name plant-console --out "$plants/console.data" "${adds[@]}" -- sh -c "$cmd" >"$plants/console.out" 2>&1 || rc=$?
	log=$build/logs/plant-console.log
	whole=$plants/console.dmesg
	sed -n '/^@@lab-dmesg-begin/,/^@@lab-dmesg-end/p' "$plants/console.data" | tr -d '\r' >"$whole"
	loaded=0
	grep -aq '@@dontfork-lab-exit=0@@' "$log" && loaded=1
	classes=$(grep -ao 'classes: [^;]*' "$plants/console.out" | head -1 || true)
	# took MOD: its insmod ended as the plant means it to: 0, or killed by its own report.
	took() {
		local st
		st=$(tr -d '\r' <"$log" | sed -n "s/^plant-status $1 \([0-9]*\)\$/\1/p" | tail -1)
		if [[ " $killers " == *" $1 "* ]]; then
			[[ -n $st && $st -gt 128 ]]
		else
			[[ $st == 0 ]]
		fi
	}
	# reported HEAD NAME: in the whole log, a line matching NAME within 60 lines after one matching
	# HEAD (extended regular expressions): the report names the plant, not another report nearby.
	reported() {
		H=$1 N=$2 awk '$0 ~ ENVIRON["H"] { at = NR } at && NR - at <= 60 && $0 ~ ENVIRON["N"] { f = 1 }
			END { exit !f }' "$whole"
	}
	for c in "${consoles[@]}"; do
		IFS='|' read -r mod what class word name <<<"$c"
		if [[ $rc != 0 && $loaded == 1 && " ${classes#classes: } " == *" $class "* ]] && took "$mod" &&
			if [[ -n $name ]]; then reported "$word" "$name"; else grep -aqE -- "$word" "$log" "$plants/console.out"; fi; then
			verdict "$what turns the run red (vm/boot: $class)" 1
		else
			verdict "$what turns the run red (vm/boot: $class)" 0 "status $rc, boot ended $loaded, $mod took: $(took "$mod" && echo yes || echo no), $classes; see $plants/console.out, $whole"
		fi
	done

	# The same boot: the kernel's bad-page report, below the console's level, is found in the whole
	# log the guest hands over, and only there (the console never shows it). Not on the debug
	# kernel ($badpage, above).
	[[ $badpage == 1 ]] || return 0
	if [[ $rc != 0 && $loaded == 1 && " ${classes#classes: } " == *" bad-page "* ]] && took badpage &&
		reported 'page dumped because: PAGE_FLAGS_CHECK_AT_FREE' 'plant_badpage_init' &&
		! grep -aqE 'page dumped because: PAGE_FLAGS_CHECK_AT_FREE|Bad page state' "$log"; then
		verdict "a page freed with a flag the allocator forbids, reported below the console's level, turns the run red (vm/boot: bad-page, from the whole kernel log)" 1
	else
		verdict "a page freed with a flag the allocator forbids, reported below the console's level, turns the run red (vm/boot: bad-page, from the whole kernel log)" 0 \
			"status $rc, boot ended $loaded, badpage took: $(took badpage && echo yes || echo no), $classes; see $plants/console.out, $whole"
	fi
}

sec_vmlog() {
	# Boots of vm/boot's guards on the log the guest hands over: each guest's command succeeds (exit
	# marker 0), so only the guard can fail the run. NAME|what|VM_APPEND|/init planted (sed script on
	# guest/init, or none)|the guest command|vm/boot's FAIL message (its start).
	vmplants=(
		"dmesg-empty|a guest whose dmesg hands over nothing||s/^\t\tdmesg -s 4194304\$/\t\ttrue/|true|the guest handed over an empty kernel log"
		"dmesg-none|a guest that hands over no kernel log||s/^if \[ -n \"\$LAB_OUT\" \]; then\$/if false; then/|true|the guest ended without handing over its whole kernel log"
		"dmesg-wrapped|a kernel log that wrapped (printed past its 128 KiB)|printk.devkmsg=on||l=\$(printf %0900d 0); i=0; while [ \$i -lt 200 ]; do echo \"<6>plant: filler \$i \$l\" >/dev/kmsg; i=\$((i + 1)); done|the kernel log wrapped: its first record is at"
	)
	for c in "${vmplants[@]}"; do
		IFS='|' read -r name what append script gcmd want <<<"$c"
		adds=()
		if [[ -n $script ]]; then
			sed "$script" "$top/guest/init" >"$plants/init-$name"
			chmod +x "$plants/init-$name"
			if cmp -s "$plants/init-$name" "$top/guest/init"; then
				verdict "$what turns the run red (vm/boot)" 0 "the plant found nothing to change in guest/init ($script)"
				continue
			fi
			adds=(--add "$plants/init-$name:/init")
		fi
		rc=0
		VM_KMODS=lab VM_APPEND=$append "$top/vm/boot" --name "plant-$name" "${adds[@]}" -- sh -c "$gcmd" >"$plants/$name.out" 2>&1 || rc=$?
		ok=0
		[[ $rc != 0 ]] && grep -aq '@@dontfork-lab-exit=0@@' "$build/logs/plant-$name.log" &&
			grep -qF -- "vm/boot: FAIL: $want" "$plants/$name.out" && ok=1
		verdict "$what turns the run red (vm/boot)" "$ok" "$([[ $ok == 1 ]] || echo "status $rc; expected 'vm/boot: FAIL: $want'; see $plants/$name.out")"
	done

	# A kernel panic, in a boot that resets the machine by design (--expect-reset, as
	# crash_durability's write boot has it): no exit marker is due there, so only the console check
	# can turn it red, and it must name the panic (its trace class alone would too). The plant took
	# (its module never finishes loading) when its panic message is in the console log. The splat is
	# the boot's one failure: no timeout, no other reason.
	rc=0
	VM_KMODS=lab "$top/vm/boot" --name plant-panic --expect-reset --timeout 120 \
		--add "$plants/kmod/plant_panic.ko:/lab/plants/plant_panic.ko" -- insmod /lab/plants/plant_panic.ko \
		>"$plants/panic.out" 2>&1 || rc=$?
	classes=$(grep -ao 'classes: [^;]*' "$plants/panic.out" | head -1 || true)
	ok=0
	[[ $rc != 0 ]] && grep -aq 'Kernel panic - not syncing: dontfork-lab plant: a panic at load' \
		"$build/logs/plant-panic.log" && [[ " ${classes#classes: } " == *" panic "* ]] &&
		[[ $(grep -c '^vm/boot: FAIL' "$plants/panic.out") == 1 ]] && ok=1
	verdict "a kernel panic turns the run red, even where the guest resets by design (vm/boot: panic)" "$ok" \
		"$([[ $ok == 1 ]] || echo "status $rc, $classes; see $plants/panic.out")"
}

sec_hang() {
	# The driver plant edu_lock_kept, whose refusal (ENXIO) of a page beyond the edu device's 28
	# bits returns with its edu lock held, in a 2 GiB guest where swiotlb cannot bounce that page; a
	# program asks twice, and its second call waits for the lock for ever, killably (the hung-task
	# detector skips such waits). Its timeout, from the settings beside it, must name it and show
	# where it waits: the judge's words, the boot itself ending well (status 0, the planted module
	# loaded, the first refusal in the frame: the plant took). Two boots: guest/run-tests' own loop
	# (its watchdog), and the tree's kselftest runner (--kselftest: the runner's timeout, the stacks
	# read before it). Before it, in the kselftest runner's boot, a program that passes but leaves
	# the flusher off: the runner's run, as run-tests' own loop, must put it back and say so.
	local d=$plants/hang rc ok line mode
	plant_module edu_lock_kept
	rm -rf "$d"
	mkdir -p "$d"
	# The hanging program's own timeout, longer than its folder's: both loops must stop it at its
	# own, the runner through the collection of its own that vm/kselftest-list.sh makes of it.
	printf '# a plant: its one program hangs at once\ntimeout=8\ntimeout_edu_refused_twice_test=20\n' \
		>"$d/settings"
	echo edu_refused_twice_test >"$d/manifest"
	printf 'knob_left_test\nedu_refused_twice_test\n' >"$d/ks-manifest"
	"$top/vm/kselftest-list.sh" "$d/settings" "$d/ks-manifest" "$d/ks"
	printf '#!/bin/sh\necho 0 >/proc/sys/vm/dirty_writeback_centisecs || exit 1\n%s\n' \
		"printf 'TAP version 13\n1..1\nok 1 the flusher turned off (a plant)\n'" >"$d/knob_left"
	# A program that would pass, which the runner's list lacks: the runner would run nothing.
	printf '#!/bin/sh\n%s\n' "printf 'TAP version 13\n1..1\nok 1 unlisted (a plant)\n'" >"$d/unlisted"
	chmod +x "$d/knob_left" "$d/unlisted"
	for mode in own kselftest; do
		rc=0 ok=0
		local adds=(--add "$module:/lab/modules/pindma.ko")
		if [[ $mode == own ]]; then
			adds+=(--add "$plants/guest/edu_refused_twice:/lab/plants/tests/edu_refused_twice_test"
				--add "$d/settings:/lab/plants/tests/settings" --add "$d/manifest:/lab/plants/tests/manifest")
			cmd='LAB_TESTS_DIR=/lab/plants/tests exec /lab/guest/run-tests'
		else
			adds+=(--add "$plants/guest/edu_refused_twice:/lab/tests/edu_refused_twice_test"
				--add "$d/ks/lab/tests/settings:/lab/tests/settings"
				--add "$d/ks/kselftest/kselftest-list.txt:/kselftest/kselftest-list.txt"
				--add "$d/knob_left:/lab/tests/knob_left_test" --add "$d/unlisted:/lab/tests/unlisted_test")
			for f in "$d"/ks/lab/tests/*/*; do
				[[ -e $f ]] || continue
				adds+=(--add "$f:/lab/tests/${f#"$d"/ks/lab/tests/}")
			done
			cmd='exec /lab/guest/run-tests --kselftest knob_left_test unlisted_test edu_refused_twice_test'
		fi
		# Bounded: without the program's timeout, the guest would wait for vm/boot's.
		# shellcheck disable=SC2016 # the guest's shell expands it
		VM_KMODS=lab VM_EDU_DMA_BITS=28 "$top/vm/boot" --name "plant-pindma-hang-$mode" --out "$d/$mode.data" \
			--timeout 300 "${adds[@]}" -- sh -c 'echo "pindma loaded: $(cat /sys/module/pindma/version)"; '"$cmd" \
			>"$d/$mode.out" 2>&1 || rc=$?
		"$py" "$top/tests/ktap.py" data "$d/$mode.data" >"$d/$mode.judged" || true
		line=$(grep '^edu_refused_twice_test failed: timed out: still running after 20 s, ' \
			"$d/$mode.judged" | head -1 || true)
		[[ $rc == 0 ]] && grep -aq '^pindma loaded: plant-edu_lock_kept' "$d/$mode.out" &&
			tr -d '\r' <"$d/$mode.data" | grep -c '^ok 1 the edu engine refuses it (ENXIO), call 1' >/dev/null &&
			[[ $line == *'blocked in the kernel (state D)'*' edu_refused_twi'*' in '*pindma_edu_copy* ]] && ok=1
		if [[ $mode == own ]]; then
			verdict "${mwhat[edu_lock_kept]} turns the run red at the program's own timeout (guest/run-tests', the stacks)" \
				"$ok" "$([[ $ok == 1 ]] || echo "status $rc; got: ${line:-$(grep -m1 'timed out' "$d/$mode.judged" || echo no timeout)} ($d/$mode.judged, $d/$mode.out)")"
		else
			[[ $line == *'stopped by the kselftest runner'* ]] || ok=0
			verdict "${mwhat[edu_lock_kept]} turns the kselftest runner's run red at the program's own timeout, its collection's (the stacks read before it)" \
				"$ok" "$([[ $ok == 1 ]] || echo "status $rc; got: ${line:-$(grep -m1 'timed out' "$d/$mode.judged" || echo no timeout)} ($d/$mode.judged, $d/$mode.out)")"
			ok=0
			grep -q '^knob_left_test failed: left /proc/sys/vm/dirty_writeback_centisecs at 0 (it was ' \
				"$d/$mode.judged" && tr -d '\r' <"$d/$mode.data" | grep -c '^ok 1 the flusher turned off' >/dev/null && ok=1
			verdict "a program that passes but leaves the flusher off under the kselftest runner turns its program red (guest/run-tests' knobs)" \
				"$ok" "$([[ $ok == 1 ]] || echo "status $rc; see $d/$mode.judged")"
			ok=0
			grep -q '^unlisted_test failed: .*not in /kselftest/kselftest-list.txt' "$d/$mode.judged" && ok=1
			verdict "a program the kselftest list lacks, asked of the kselftest runner, turns its program red (guest/run-tests)" \
				"$ok" "$([[ $ok == 1 ]] || echo "status $rc; see $d/$mode.judged")"
		fi
	done
}

# runall_build DIR: a build folder for a plant's own run-all: the lab's kernel, guest, kernel.env and
# the registry's machines, and disks of its own, so that no disk of the suite is waited for.
runall_build() {
	rm -rf "$1"
	mkdir -p "$1/guest/lab"
	for f in linux initramfs.cpio gen_init_cpio kernel.env guest/lab/machines; do
		ln -s "$(readlink -f "$build/$f")" "$1/$f"
	done
	for f in disk.img eio.img odirect.img; do
		truncate -s 1M "$1/$f"
	done
}

sec_runall() {
	# run-all with a guest job that fails (its guest times out before any program ran): the job is a
	# failed program of its own, and the run is red (a build folder of its own: runall_build).
	ra=$plants/runall
	runall_build "$ra"
	rc=0
	BUILD=$ra VM_TIMEOUT=1 T=madvise_test "$py" "$top/tests/run-all" >"$ra/out" 2>&1 || rc=$?
	ok=0
	[[ $rc == 1 ]] && grep -qx 'not ok 1 guest_test' "$ra/out" &&
		grep -q '^    # guest_test: the guest run failed: timed out after 1s' "$ra/out" && ok=1
	verdict "a guest job that fails turns run-all red" "$ok" "$([[ $ok == 1 ]] || echo "status $rc; see $ra/out")"

	# Boot 3: a guest that hangs.
	rc=0
	VM_KMODS=lab "$top/vm/boot" --name plant-hang --timeout 8 -- sleep 100 >"$plants/hang.out" 2>&1 || rc=$?
	grep -q 'timed out after 8s' "$plants/hang.out" && [[ $rc != 0 ]] && ok=1 || ok=0
	verdict "a guest that hangs turns the run red (vm/boot --timeout)" "$ok" "$([[ $ok == 1 ]] || echo "status $rc; see $plants/hang.out")"
}

# planted NAME DATA: the boot whose data channel is DATA ran plant NAME's kernel (guest/init's
# @@lab-kernel, its UTS version: plant_kernel's KBUILD_BUILD_VERSION). Otherwise says which kernel
# did, and fails.
planted() {
	grep -aqsF "@@lab-kernel $release #plant-$1 " "$2" && return 0
	echo "the planted kernel $1 did not run: the boot's data ($2) says '$(grep -as '^@@lab-kernel ' "$2" | head -1)'; "
	return 1
}
# case_lines DATA CASE: what a kselftest case said in DATA (from its RUN line to its result), a line.
case_lines() {
	awk -v c="$2" 'index($0, "RUN") && index($0, " " c " ") { on = 1 } on { printf "%s | ", $0 }
		on && /^ *(not )?ok [0-9]+ / && index($0, " " c) { exit }' "$1" | cut -c1-1500
}

sec_kernels() {
	# The kernel plants' boots (the crash test's in a section of its own: sec_crash).
	for k in "${kplants[@]}"; do
		rc=0
		case $k in
		len0 | async_waits)
			plant_kernel "$k"
			# The fadvise_test case that guards it, on a scratch disk of the plants' own. No data
			# of an earlier run is read.
			local case=file.write_wait_len_0_waits_for_writeback_in_flight
			local says='WRITE_WAIT (len 0) returned with'
			local what="WRITE_WAIT taking len 0 as an empty range, as 0001 once did, turns fadvise_test red"
			if [[ $k == async_waits ]]; then
				case=file.async_write_does_not_wait_for_writeback_in_flight
				says='ASYNC_WRITE waited for the write-out already in flight'
				what="ASYNC_WRITE waiting for the write-out already in flight turns fadvise_test red"
			fi
			rm -f "$plants/$k.data" "$plants/$k.judged"
			VM_KMODS=lab VM_KERNEL=$image "$top/vm/boot" --name "plant-$k" --out "$plants/$k.data" \
				--disk "$build/disk-plants-kernel.img" -- /lab/guest/run-tests "fadvise:$case" \
				>"$plants/$k.out" 2>&1 || rc=$?
			ok=0
			# The judge's words go to a file first: grep -q on a pipe stops reading at its first
			# match, and the judge, still printing, would die of SIGPIPE (pipefail: no verdict).
			jrc=0
			"$py" "$top/tests/ktap.py" data "$plants/$k.data" >"$plants/$k.judged" || jrc=$?
			why=$(planted "$k" "$plants/$k.data") && grep -aqF -- "$says" "$plants/$k.data" &&
				grep -q '^fadvise_test failed' "$plants/$k.judged" && ok=1
			# A plant left green says what its case saw, here: the files may be gone by the time
			# someone reads the run.
			verdict "$what" "$ok" \
				"$([[ $ok == 1 ]] || echo "status $rc; the judge's $jrc; ${why}the case said: $(case_lines "$plants/$k.data" "$case"); see $plants/$k.data, $plants/$k.judged")"
			;;
		switch_*)
			plant_kernel "$k"
			# fork_switch_test in a boot of its own on the planted kernel, held to the case and
			# the words that guard each plant; the plant ran when the switch still exists and
			# every other case of the program could run.
			rm -f "$plants/$k.data" "$plants/$k.judged"
			VM_KMODS=lab VM_KERNEL=$image "$top/vm/boot" --name "plant-$k" --out "$plants/$k.data" \
				-- /lab/guest/run-tests fork_switch_test >"$plants/$k.out" 2>&1 || rc=$?
			jrc=0
			"$py" "$top/tests/ktap.py" data "$plants/$k.data" >"$plants/$k.judged" || jrc=$?
			local says what
			case $k in
			switch_unbounded)
				says='writing 2 was taken'
				what="0002's switch taking 2 (no upper bound)" ;;
			switch_stays_on)
				says='off: fork gave the child the pinned page'
				what="0002's switch never turning fork's sharing off again" ;;
			switch_shares_nothing)
				says='on: fork did not give the child the pinned page'
				what="0002's switch never turning fork's sharing on" ;;
			switch_warns_always)
				says='the warning was logged [2-9][0-9]* times'
				what="0002's warning and taint on every enable, not once a boot" ;;
			esac
			ok=0
			why=$(planted "$k" "$plants/$k.data") &&
				grep -aqE '^ok [0-9]+ global\.switch_exists_and_is_off_by_default' "$plants/$k.data" &&
				grep -q '^fork_switch_test failed' "$plants/$k.judged" &&
				grep -aqE -- "$says" "$plants/$k.data" && ! grep -q '^vm/boot: FAIL' "$plants/$k.out" && ok=1
			verdict "$what turns fork_switch_test red" "$ok" \
				"$([[ $ok == 1 ]] || echo "status $rc, the judge's $jrc; ${why}expected '$says'; see $plants/$k.out, $plants/$k.data")"
			;;
		vfio_foll_get | vfio_short)
			plant_kernel "$k"
			# The VFIO rows in their own machine, as make test boots them. The plant ran when the
			# control still moved the page's bytes through edu; the guards: for FOLL_GET, the
			# fork row's verdict and its checks (fork copied the page, the kernel's FOLL_PIN
			# count, map and unmap); for a short pin, the page's zone, every verdict as before.
			rm -f "$plants/$k.data" "$plants/$k.judged"
			VM_KMODS=none VM_KERNEL=$image "$top/vm/boot" --iommu --name "plant-$k" --out "$plants/$k.data" \
				-- /lab/guest/run-tests vfio_rows_test >"$plants/$k.out" 2>&1 || rc=$?
			jrc=0
			"$py" "$top/tests/ktap.py" data "$plants/$k.data" >"$plants/$k.judged" || jrc=$?
			local d=$plants/$k.data says=()
			if [[ $k == vfio_foll_get ]]; then
				says=('^# vfio@vfio-edu: observed ORPHANED, this kernel'
					'^# vfio@vfio-edu: not so: fork copied the page for the child'
					'^# vfio@vfio-edu: not so: VFIO_IOMMU_MAP_DMA held the page with one FOLL_PIN pin'
					'^# vfio@vfio-edu: not so: its unmap released that pin')
				what="VFIO's type1 IOMMU holding its pages with FOLL_GET turns vfio_rows_test red (the fork row's verdict, the kernel's FOLL_PIN count)"
			else
				says=('^ok [0-9]+ vfio@vfio-edu verdict$'
					'^# vfio@vfio-edu: not so: the map moved the page out of ZONE_MOVABLE first')
				what="VFIO's type1 IOMMU pinning without FOLL_LONGTERM turns vfio_rows_test red (the page's zone by pagemap and zoneinfo)"
			fi
			ok=0
			if why=$(planted "$k" "$d") && grep -aqE '^ok [0-9]+ vfio-no-fork@vfio-edu verdict$' "$d" &&
				grep -q '^vfio_rows_test failed' "$plants/$k.judged" &&
				! grep -q '^vm/boot: FAIL' "$plants/$k.out"; then
				ok=1
				for w in "${says[@]}"; do
					grep -aqE -- "$w" "$d" || ok=0
				done
			fi
			verdict "$what" "$ok" \
				"$([[ $ok == 1 ]] || echo "status $rc, the judge's $jrc; ${why}see $plants/$k.out, $d")"
			;;
		gup_fast_race)
			plant_kernel "$k"
			# Two vCPUs, as the suite's fork_pin_race_test has: its pinner races fork().
			VM_SMP=2 VM_KERNEL=$image "$top/vm/boot" --name plant-gup-fast --out "$plants/gup_fast.data" \
				-- /lab/guest/run-tests fork_pin_race >"$plants/gup_fast.out" 2>&1 || rc=$?
			ok=0
			why=$(planted "$k" "$plants/gup_fast.data") && [[ $rc != 0 ]] &&
				grep -qE 'WARNING: CPU: [0-9]+ PID: [0-9]+ at mm/gup.c:[0-9]+ ' "$plants/gup_fast.out" &&
				grep -aq 'plant: a fork() shared the pinned page inside the window' "$plants/gup_fast.data" && ok=1
			verdict "a fork() let into GUP-fast's check after it read the switch once, racing its first enable, turns the run red (vm/boot: warn)" \
				"$ok" "$([[ $ok == 1 ]] || echo "status $rc; ${why}see $plants/gup_fast.out")"
			;;
		gup_fast_gate)
			plant_kernel "$k"
			VM_SMP=2 VM_KERNEL=$image "$top/vm/boot" --name plant-gup-gate --out "$plants/gup_gate.data" \
				-- /lab/guest/run-tests fork_pin_race >"$plants/gup_gate.out" 2>&1 || rc=$?
			ok=0
			jrc=0
			"$py" "$top/tests/ktap.py" data "$plants/gup_gate.data" >"$plants/gup_gate.judged" || jrc=$?
			why=$(planted "$k" "$plants/gup_gate.data") && [[ $rc == 0 && $jrc == 0 ]] &&
				grep -qx 'fork_pin_race_test ok' "$plants/gup_gate.judged" &&
				grep -aq 'plant: a fork() shared the pinned page inside the window' "$plants/gup_gate.data" && ok=1
			verdict "the same fork() let into 0002's check as it is, which reads the switch per page after the flag, leaves the run green" \
				"$ok" "$([[ $ok == 1 ]] || echo "status $rc, the judge's $jrc; ${why}see $plants/gup_gate.out, $plants/gup_gate.judged")"
			;;
		esac
	done
}

sec_crash() {
	# The crash test on a planted kernel, beside the other kernel plants' boots (a disk of its own).
	local k
	for k in "${kplants[@]}"; do
		[[ $k == crash_write_wait ]] || continue
		rc=0
		plant_kernel "$k"
		VM_KERNEL=$image CRASH_NAME=plant-crash CRASH_DISK=$build/disk-plants-crash.img \
			bash "$top/tests/host/crash_durability.sh" >"$plants/crash.out" 2>&1 || rc=$?
		ok=0
		# Red through the page states read right after the calls (pages left in flight), with the
		# power cut seen (this boot's QEMU ran), or, should the cut have come before the states were
		# read, through the data lost; the write boot ran the planted kernel.
		if ! why=$(planted "$k" "$build/logs/plant-crash-write.data"); then
			:
		elif [[ $rc != 0 ]] && grep -qE '^# after wait-write-wait ([1-9][0-9]* pages dirty|[0-9]+ pages dirty, [1-9][0-9]* under writeback)' "$plants/crash.out" &&
			grep -q '^not ok 1 ' "$plants/crash.out" && grep -q 'QEMU exited with status 85;' "$plants/crash.out"; then
			ok=1
		elif [[ $rc != 0 ]] && grep -q '^not ok 2 every page written with wait-write-wait survived the power cut$' "$plants/crash.out" &&
			grep -q '^ok 1 ' "$plants/crash.out"; then
			ok=1
		fi
		verdict "WRITE_WAIT and ASYNC_WRITE returning 0 at once turn the crash test red (the power cut on the slow disk)" \
			"$ok" "$([[ $ok == 1 ]] || echo "status $rc; ${why}see $plants/crash.out")"
	done
}

sec_detectors() {
	# Boot 5 (debug kernel): an object leaked during the suite, which kmemleak must report after it,
	# and lock debugging turned off silently (no report, no taint), which the lockdep line after the
	# suite must report. Each verdict reads its own guard's line only.
	if [[ $debug == 1 ]]; then
		# Lockdep is turned off by a program of the suite, after madvise_test: it must be read after
		# the last program, not before the suite.
		printf '#!/bin/sh\ninsmod /lab/plants/plant_lockoff.ko || exit 1\n%s\n' \
			"printf 'TAP version 13\n1..1\nok 1 lock debugging turned off (a plant)\n'" >"$plants/lockoff_test"
		chmod +x "$plants/lockoff_test"
		rc=0
		"$top/vm/boot" --name plant-leak --out "$plants/leak.data" \
			--add "$plants/kmod/plant_leak.ko:/lab/plants/plant_leak.ko" \
			--add "$plants/kmod/plant_lockoff.ko:/lab/plants/plant_lockoff.ko" \
			--add "$plants/lockoff_test:/lab/tests/lockoff_test" -- \
			sh -c 'insmod /lab/plants/plant_leak.ko && exec /lab/guest/run-tests madvise_test lockoff_test' \
			>"$plants/leak.out" 2>&1 || rc=$?
		"$py" "$top/tests/ktap.py" data "$plants/leak.data" --debug 1 >"$plants/leak.judged" || true
		ok=0
		grep -q '^madvise_test ok$' "$plants/leak.judged" &&
			grep -q '^kmemleak_after_suite failed' "$plants/leak.judged" && ok=1
		verdict "an object the kernel leaks during the suite turns the run red (kmemleak)" "$ok" \
			"$([[ $ok == 1 ]] || echo "status $rc; see $plants/leak.judged")"
		# The boot is red through kmemleak alone (the leak): the lockdep plant must add no report of
		# its own, and the guest must have read lockdep off (not failed to read it).
		ok=0
		grep -q '^madvise_test ok$' "$plants/leak.judged" && grep -q '^lockoff_test ok$' "$plants/leak.judged" &&
			grep -q 'vm/boot: FAIL: kernel splat in the guest.s log (classes: kmemleak;' "$plants/leak.out" &&
			tr -d '\r' <"$plants/leak.data" | grep -E '^@@lab-(prog-end|lockdep) ' | tail -1 |
			grep -qx '@@lab-lockdep debug_locks=0 prove_locking=1' &&
			grep -qx 'lockdep_after_suite failed: lockdep still on after the suite: not ok' "$plants/leak.judged" && ok=1
		verdict "lock debugging turned off silently during the suite turns the run red (lockdep_after_suite)" "$ok" \
			"$([[ $ok == 1 ]] || echo "status $rc; see $plants/leak.judged")"
		# A program that turns the fork switch on (and off again) without being one of
		# ktap.SWITCH_SETTERS: the program after it ran with DEBUG_VM's check of pinned pages
		# off, which the judge must say (from the taint its frame carries).
		# shellcheck disable=SC2016 # the guest's shell expands $LAB_SWITCH
		printf '#!/bin/sh
. /lab/guest/lab.sh
echo 1 >"$LAB_SWITCH" && echo 0 >"$LAB_SWITCH" || exit 1
%s
' \
			"printf 'TAP version 13\n1..1\nok 1 the fork switch turned on and off (a plant)\n'" >"$plants/switchon_test"
		chmod +x "$plants/switchon_test"
		rc=0
		"$top/vm/boot" --name plant-switchon --out "$plants/switchon.data" \
			--add "$plants/switchon_test:/lab/tests/switchon_test" -- \
			/lab/guest/run-tests switchon_test madvise_test:dontfork_sets_dc >"$plants/switchon.out" 2>&1 || rc=$?
		"$py" "$top/tests/ktap.py" data "$plants/switchon.data" --debug 1 >"$plants/switchon.judged" || true
		ok=0
		grep -q '^switchon_test ok$' "$plants/switchon.judged" &&
			grep -q '^madvise_test failed: ran after vm.fork_share_pinned had been on in its boot (taint U)' \
				"$plants/switchon.judged" && ok=1
		verdict "a program that turns the fork switch on, unlisted, leaves DEBUG_VM unchecked for the next, which the judge says" "$ok" \
			"$([[ $ok == 1 ]] || echo "status $rc; see $plants/switchon.judged")"
	else
		# A debug run whose guest never hands over its detectors' reports (here: the normal kernel,
		# which has neither) must fail in run-all, not pass as a guest with nothing to report.
		rd=$plants/runall-debug
		runall_build "$rd"
		rc=0
		BUILD=$rd FLAVOUR=debug T=madvise_test:dontfork_sets_dc "$py" "$top/tests/run-all" >"$rd/out" 2>&1 || rc=$?
		ok=0
		[[ $rc == 1 ]] && grep -q '^ok 1 madvise_test' "$rd/out" &&
			grep -q "^    # kmemleak_after_suite: the debug kernel's kmemleak report after the suite never came" "$rd/out" &&
			grep -q "^    # lockdep_after_suite: the debug kernel's lockdep report after the suite never came" "$rd/out" && ok=1
		verdict "a debug run whose guest hands over no kmemleak or lockdep report turns run-all red" "$ok" \
			"$([[ $ok == 1 ]] || echo "status $rc; see $rd/out")"
	fi
}

sec_driver() {
	# Each driver plant in a boot of its own, in place of the lab's pindma: the module loads (the
	# programs reach /dev/pindma), the guard names the fault. The judge's words go to a file first
	# (grep -q on a pipe would kill it with SIGPIPE). d_boot NAME ENV... -- RUN-TESTS ARGS...
	local name rc jrc
	d_boot() {
		name=$1
		shift
		local envs=()
		while [[ $1 != -- ]]; do envs+=("$1"); shift; done
		shift
		plant_module "$name"
		rm -f "$plants/driver-$name.data" "$plants/driver-$name.judged"
		rc=0
		# shellcheck disable=SC2016 # the guest's shell expands it
		env VM_KMODS=lab "${envs[@]}" "$top/vm/boot" --name "plant-driver-$name" \
			--out "$plants/driver-$name.data" --disk "$build/disk-plants-driver.img" \
			--disk "$build/odirect.img,odirect" --add "$module:/lab/modules/pindma.ko" -- \
			sh -c 'echo "pindma loaded: $(cat /sys/module/pindma/version)"; exec /lab/guest/run-tests "$@"' \
			sh "$@" >"$plants/driver-$name.out" 2>&1 || rc=$?
		jrc=0
		"$py" "$top/tests/ktap.py" data "$plants/driver-$name.data" >"$plants/driver-$name.judged" ||
			jrc=$?
	}
	# says NAME PROGRAM TEXT: the judge failed PROGRAM, and its frame says TEXT (the guard's words).
	says() {
		grep -aq "^pindma loaded: plant-$1" "$plants/driver-$1.out" &&
			grep -q "^$2 failed" "$plants/driver-$1.judged" &&
			tr -d '\r' <"$plants/driver-$1.data" | sed -n "/^@@lab-prog-begin $2\$/,/^@@lab-prog-end $2 /p" |
			grep -aF -- "$3" >/dev/null
	}
	d_verdict() { # NAME PROGRAM TEXT GUARD
		local ok=0
		says "$1" "$2" "$3" && ok=1
		verdict "${mwhat[$1]} turns $4 red" "$ok" \
			"$([[ $ok == 1 ]] || echo "boot status $rc, the judge's $jrc; expected $2 to fail saying '$3'; see $plants/driver-$1.data, $plants/driver-$1.judged")"
	}
	d_boot edu_cpu -- pindma_trip_test rows_test:dontfork_demo
	d_verdict edu_cpu pindma_trip_test "edu's interrupts, 2 chunks" "pindma_trip_test (the kernel's count of edu's interrupts)"
	d_verdict edu_cpu rows_test "the kernel counted 6 interrupts of edu's" "rows_test's edu rows (the kernel's count of edu's interrupts)"
	# edu_mask_check on the planted module d_boot last built, as dma_mask runs it (a 64-bit edu).
	# d_mask NAME TEXT GUARD
	d_mask() {
		local ok=0 log=$plants/driver-$1-mask.data
		rc=0
		# Its words on the data channel, which the console's kernel messages never interleave.
		# shellcheck disable=SC2016 # the guest's shell expands it
		VM_KMODS=lab "$top/vm/boot" --name "plant-driver-$1-mask" --out "$log" \
			--add "$module:/lab/modules/pindma.ko" -- \
			sh -c '{ echo "pindma loaded: $(cat /sys/module/pindma/version)"; /lab/bin/edu_mask_check 12; } >"$LAB_OUT" 2>&1' \
			>"$plants/driver-$1-mask.out" 2>&1 || rc=$?
		grep -aq "^pindma loaded: plant-$1\b" "$log" && grep -aqF -- "$2" "$log" && ok=1
		verdict "${mwhat[$1]} turns edu_mask_check red (dma_mask's guard: $3)" "$ok" \
			"$([[ $ok == 1 ]] || echo "status $rc; see $log")"
	}
	d_mask edu_cpu 'right bytes, but the kernel counted 0 edu interrupts' "the kernel's count of edu's interrupts"
	d_boot edu_cpu_read -- pindma_trip_test
	d_verdict edu_cpu_read pindma_trip_test "edu's last transfer after a device read" "pindma_trip_test (edu's DMA registers)"
	d_mask edu_cpu_read "right bytes read, but edu's last transfer moved" "edu's DMA registers"
	d_boot userns -- pindma_limit_test:a_pin_from_a_user_namespace_is_eperm
	d_verdict userns pindma_limit_test "step 13 failed" "pindma_limit_test (a pin from a user namespace)"
	# The two reference plants boot only the held-DMA case: under the stress rounds they would
	# touch freed handles (and oops), where the plant must fail the guard alone.
	d_boot dma_unref -- pindma_race_test:unpin_under_a_held_dma_keeps_the_pages_until_it_returns
	d_verdict dma_unref pindma_race_test "UNPIN let the pages go while a DMA into them was held" \
		"pindma_race_test (the kernel's FOLL_PIN counters under a DMA held at a userfaultfd gate)"
	d_boot close_teardown -- pindma_race_test:close_under_a_held_dma_keeps_the_pages_until_it_returns
	d_verdict close_teardown pindma_race_test "closing the file let the pages go while a DMA into them was held" \
		"pindma_race_test (the kernel's FOLL_PIN counters under a DMA held at a userfaultfd gate)"
	d_boot longterm VM_APPEND=movablecore=768M -- longterm_test
	d_verdict longterm longterm_test "the pinned page stayed at" "longterm_test (the page's zone by pagemap and zoneinfo)"
	if [[ $slabinfo == 1 ]]; then
		d_boot leak -- pindma_leak_test:thousand_pins_leave_no_slab
		d_verdict leak pindma_leak_test "kmalloc-512 grew by" "pindma_leak_test (the kmalloc caches in /proc/slabinfo)"
		d_boot handleleak -- pindma_leak_test:thousand_pins_leave_no_slab
		d_verdict handleleak pindma_leak_test "kmalloc-96 grew by" "pindma_leak_test (the kmalloc caches in /proc/slabinfo)"
		d_boot dmaleak -- pindma_leak_test:thousand_dma_cycles_leave_no_slab
		d_verdict dmaleak pindma_leak_test "kmalloc-4k grew by" "pindma_leak_test's DMA cycles (the kmalloc caches in /proc/slabinfo)"
	fi
	d_boot refuse8 VM_SMP=2 -- fuzz_test
	d_verdict refuse8 fuzz_test "below the floor of 95%" "fuzz_test (its floor on the share of pins granted)"
	d_boot refuse3 VM_SMP=2 -- fuzz_test
	d_verdict refuse3 fuzz_test "below the floor of 95%" "fuzz_test (its floor on the share of pins granted)"
}

# The boots' sections side by side, longest first (vm/boot's VM_SLOTS bounds how many guests run at
# once): they share no disk, no file and no guest (each boot has names of its own under $plants and
# logs/). Their verdicts are printed in the file's order and numbered on from the judge's; a section
# that stops short (set -e) fails, and so do the verdicts it never gave (the plan).
# The planted kernels first, one at a time in the private copy (built already when run-all ran
# --build).
for k in "${kplants[@]}"; do
	plant_kernel "$k"
done
in_section=1
declare -A pid=()
for s in $sections; do
	sec_"$s" >"$plants/sec-$s.tap" 2>"$plants/sec-$s.err" &
	pid[$s]=$!
done
n0=$n
for s in programs console vmlog runall kernels crash detectors driver hang; do
	[[ " $sections " == *" $s "* ]] || continue
	st=0
	wait "${pid[$s]}" || st=$?
	cat "$plants/sec-$s.err" >&2
	[[ $st == 0 ]] || verdict "the plants' $s section ran to its end" 0 "it stopped with status $st: its stderr: $(tail -3 "$plants/sec-$s.err" | tr '\n' '|')" >>"$plants/sec-$s.tap"
	cat "$plants/sec-$s.tap"
done >"$plants/sections.tap"
awk -v n="$n0" '/^(not )?ok [0-9]+ / { n++; sub(/ok [0-9]+ /, "ok " n " ") } { print }' "$plants/sections.tap"
