#!/usr/bin/env bash
# The documents of build/results/ (tests/results.py) and their checks, seen failing. A made-up run
# that holds every kind of outcome (a pass, a failed case with its diagnostics and a terminal escape,
# a skip, an xfail, a program skipped as a whole, a program killed halfway, a stale skip budget
# entry, names KCIDB's path pattern cannot hold, two that differ only in what it drops) is written
# as make test writes it; its documents pass the checks, and KCIDB sees each case at its path with
# its status. Each planted fault (a wrong count in junit.xml, a field KCIDB requires missing from
# kcidb.json...) must turn the checks red with their own message; each plant is asserted applied
# first, so that only the check can turn its case red. Last, make test's own runner on one host test
# (registry, no boot) in a scratch build folder: what it writes is checked against the closing line
# it printed, and results.ktap is what it printed. Prints TAP.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
py=${LAB_PYTHON:-/usr/bin/python3}
build=${BUILD:-$top/build}
results=$top/tests/results.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The made-up run, in the frames of the guest's data channel, and the closing line its outcomes call
# for, counted by hand: passed alpha's first, beta's second and third, gamma's first; failed alpha's
# second, gamma's plan and signal, the stale entry; skipped alpha's third and delta; beta's first an
# xfail.
closing="4 passed, 4 failed, 2 skipped, 1 xfail"
esc=$'\e'
cat >"$tmp/data" <<EOF
@@lab-prog-begin alpha_test
TAP version 13
1..3
ok 1 first
# alpha.c:12:second:Expected 1 (1) == 2 (2)
# second: the device wrote ${esc}[31mnothing${esc}[0m
not ok 2 second
ok 3 third # SKIP no device here
@@lab-prog-end alpha_test 1 0.50
@@lab-prog-begin beta_test.sh
1..3
ok 1 vmsplice() + unmap in child ... with hugetlb (2048 kB) # XFAIL known xfail: the leak
ok 2 vmsplice() + unmap in child, with hugetlb (2048 kB)
ok 3 fixture.variant.name
@@lab-prog-end beta_test.sh 0 1.25
@@lab-prog-begin gamma_test
1..3
ok 1 one
@@lab-prog-end gamma_test 139 0.10
@@lab-prog-begin delta_test
1..0 # SKIP no hardware
@@lab-prog-end delta_test 4 0.01
EOF
"$py" "$results" write "$tmp/data" "$tmp/good" "delta_test: x is listed in the skip budget but did not run"

# Each path of kcidb.json with its status and, for a case, the lab's own status.
kcidb_paths() {
	"$py" - "$1" <<'PY'
import json
import sys
with open(sys.argv[1]) as f:
    for t in json.load(f)['tests']:
        print(t['path'], t['status'], t['misc'].get('lab_status', '-'))
PY
}
paths="dontfork_lab.alpha_test FAIL -
dontfork_lab.alpha_test.first PASS pass
dontfork_lab.alpha_test.second FAIL fail
dontfork_lab.alpha_test.third SKIP skip
dontfork_lab.beta_test_sh FAIL -
dontfork_lab.beta_test_sh.vmsplice_unmap_in_child_with_hugetlb_2048_kB FAIL xfail
dontfork_lab.beta_test_sh.vmsplice_unmap_in_child_with_hugetlb_2048_kB-2 PASS pass
dontfork_lab.beta_test_sh.fixture.variant.name PASS pass
dontfork_lab.gamma_test FAIL -
dontfork_lab.gamma_test.one PASS pass
dontfork_lab.gamma_test.program FAIL fail
dontfork_lab.gamma_test.program_2 FAIL fail
dontfork_lab.delta_test SKIP -
dontfork_lab.delta_test.all_cases SKIP skip
dontfork_lab.run FAIL -
dontfork_lab.run.skip_budget_stale FAIL fail"

# The plants: name|what|the check's message that must show.
plants=(
	"junit_root_count|junit.xml whose <testsuites> counts one failure less|the <testsuites> says failures=\"3\", its testcases are 4"
	"junit_case_dropped|junit.xml without one failed testcase, its counts left as they were|junit.xml holds 3 testcases of failures, the closing line says 4"
	"junit_cut|junit.xml cut short|junit.xml does not parse"
	"kcidb_build_id|kcidb.json with a test lacking build_id|'build_id' is a required property"
	"kcidb_version|kcidb.json without its schema version|'version' is a required property"
	"kcidb_checkout_origin|kcidb.json whose checkout lacks origin|'origin' is a required property"
	"kcidb_case_dropped|kcidb.json without one case's test (still valid by the schema)|kcidb.json holds 10 case tests, the closing line counts 11"
	"closing|both documents held to a closing line counting one failure more|the closing line says 5"
)

# Plant $1 into the copy $2 of the documents; print the closing line to hold them to. Fails when
# the plant did not apply.
plant() {
	local name=$1 dir=$2
	case $name in
	junit_root_count)
		sed -i '0,/^<testsuites \(.*\) failures="4"/s//<testsuites \1 failures="3"/' "$dir/junit.xml"
		grep -q '^<testsuites [^>]* failures="3"' "$dir/junit.xml" || return 1
		;;
	junit_case_dropped)
		"$py" - "$dir/junit.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
doc = ET.parse(sys.argv[1])
suite = next(s for s in doc.getroot().iter('testsuite')
             if any(c.find('failure') is not None for c in s.iter('testcase')))
suite.remove(next(c for c in suite.iter('testcase') if c.find('failure') is not None))
doc.write(sys.argv[1], encoding='utf-8', xml_declaration=True)
PY
		[[ $(grep -c '<failure ' "$dir/junit.xml") == 3 ]] || return 1
		;;
	junit_cut)
		head -c 400 "$tmp/good/junit.xml" >"$dir/junit.xml"
		[[ $(wc -c <"$dir/junit.xml") == 400 ]] || return 1
		;;
	kcidb_*)
		"$py" - "$dir/kcidb.json" "$name" <<'PY' || return 1
import json
import sys
path, name = sys.argv[1], sys.argv[2]
with open(path) as f:
    doc = json.load(f)
if name == 'kcidb_build_id':
    del doc['tests'][1]['build_id']
elif name == 'kcidb_version':
    del doc['version']
elif name == 'kcidb_checkout_origin':
    del doc['checkouts'][0]['origin']
elif name == 'kcidb_case_dropped':
    doc['tests'] = [t for t in doc['tests'] if t['path'] != 'dontfork_lab.alpha_test.first']
with open(path, 'w') as f:
    json.dump(doc, f)
# Read back: the plant is there.
with open(path) as f:
    doc = json.load(f)
sys.exit(0 if {
    'kcidb_build_id': lambda: 'build_id' not in doc['tests'][1],
    'kcidb_version': lambda: 'version' not in doc,
    'kcidb_checkout_origin': lambda: 'origin' not in doc['checkouts'][0],
    'kcidb_case_dropped': lambda: len(doc['tests']) == 15,
}[name]() else 1)
PY
		;;
	closing)
		echo "4 passed, 5 failed, 2 skipped, 1 xfail"
		return
		;;
	esac
	echo "$closing"
}

n=0
result() { # ok|not-ok description [diagnostic...]
	n=$((n + 1))
	local verdict=$1 desc=$2
	shift 2
	[[ $# == 0 ]] || printf '# %s\n' "$@"
	if [[ $verdict == ok ]]; then echo "ok $n $desc"; else echo "not ok $n $desc"; fi
}

echo "TAP version 13"
echo "1..$((${#plants[@]} + 3))"
if out=$("$py" "$results" check "$tmp/good" "$closing" 2>&1); then
	result ok "the documents of a run with every kind of outcome pass the checks"
else
	mapfile -t why <<<"$out"
	result not-ok "the documents of a run with every kind of outcome pass the checks" "${why[@]}"
fi
got=$(kcidb_paths "$tmp/good/kcidb.json")
if [[ $got == "$paths" ]]; then
	result ok "kcidb.json has each case at its path, with its status"
else
	mapfile -t why < <(diff <(echo "$paths") <(echo "$got") || true)
	result not-ok "kcidb.json has each case at its path, with its status" "${why[@]}"
fi

for p in "${plants[@]}"; do
	IFS='|' read -r name what message <<<"$p"
	desc="plant $name: $what: the checks turn red"
	dir=$tmp/$name
	cp -r "$tmp/good" "$dir"
	if ! against=$(plant "$name" "$dir"); then
		result not-ok "$desc" "the plant did not apply"
	elif out=$("$py" "$results" check "$dir" "$against" 2>&1); then
		result not-ok "$desc" "the checks stayed green"
	elif ! grep -qF -- "$message" <<<"$out"; then
		mapfile -t why <<<"$out"
		result not-ok "$desc" "red, but without \"$message\":" "${why[@]}"
	else
		result ok "$desc" "$(grep -F -m1 -- "$message" <<<"$out")"
	fi
done

# make test's runner itself, on a build folder of its own (its kernel facts from the lab's build).
desc="make test's runner writes documents that its printed closing line counts, and results.ktap is its output"
run=$tmp/run
mkdir -p "$run"
[[ ! -f $build/kernel.env ]] || cp "$build/kernel.env" "$run/"
[[ ! -e $build/linux ]] || ln -s "$(readlink -f "$build/linux")" "$run/linux"
BUILD=$run T=registry "$top/tests/run-all" >"$run/out" 2>"$run/err" || true
last=$(tail -n1 "$run/out")
if [[ ! -s $run/results/results.ktap || ! -s $run/results/junit.xml || ! -s $run/results/kcidb.json ]]; then
	mapfile -t why < <(ls -l "$run/results" 2>&1; tail -n5 "$run/err")
	result not-ok "$desc" "build/results/ lacks a document" "${why[@]}"
elif ! cmp -s "$run/out" "$run/results/results.ktap"; then
	mapfile -t why < <(diff "$run/out" "$run/results/results.ktap" | head -20 || true)
	result not-ok "$desc" "results.ktap is not what the runner printed" "${why[@]}"
elif grep -q '^# results: ' "$run/out"; then
	mapfile -t why < <(grep '^# results: ' "$run/out")
	result not-ok "$desc" "${why[@]}"
elif ! out=$("$py" "$results" check "$run/results" "$last" 2>&1); then
	mapfile -t why <<<"$out"
	result not-ok "$desc" "against \"$last\":" "${why[@]}"
else
	result ok "$desc" "the runner's closing line: $last"
fi
