#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A guest's run of the lab's kselftest collection (guest/run-tests --kselftest) held to the lab's
own judgement: the output of the tree's run_kselftest.sh, as the guest handed it over (between
@@lab-kselftest-begin and -end on the data channel), parsed by the tree's own
tools/testing/kunit/kunit.py parse, must give every program the verdict tests/ktap.py gave it from
the same run (pass, fail, or skip when it exited KSFT_SKIP), and so the same counts; the
runner must have left the guest's knobs as it found them (guest/run-tests reads them around the
whole run, which it cannot split by program).

  kselftest.py DATA KERNEL_TREE [BUDGET]   the check on a data channel; exit 1 if it failed
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ktap  # noqa: E402

# The runner's name for a program: its collection, lab/tests or, for a program with a timeout of
# its own, lab/tests/NAME (vm/kselftest-list.sh), then the program.
PREFIX = re.compile(r'selftests: lab/tests(/[a-z0-9_]+)?: ')


def handed_over(data):
    """The runner's output, one TAP document per call of the runner (guest/run-tests calls it once
    per program); None when no such block came."""
    m = re.search(r'^@@lab-kselftest-begin\r?\n(.*?)^@@lab-kselftest-end\r?$', data, re.M | re.S)
    if not m:
        return None
    docs = re.split(r'(?m)^(?=TAP version )', m.group(1).replace('\r', ''))
    return [d for d in docs if d.strip()]


def kunit_parse(ksrc, text):
    """kunit.py parse of text, by the tree's own kunit.py: its summary line and its results."""
    kunit = os.path.join(ksrc, 'tools/testing/kunit/kunit.py')
    with tempfile.TemporaryDirectory() as tmp:
        out, js = os.path.join(tmp, 'kselftest.txt'), os.path.join(tmp, 'kunit.json')
        with open(out, 'w', encoding='utf-8') as f:
            f.write(text)
        p = subprocess.run([sys.executable, kunit, 'parse', out, '--json=' + js],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        summary = [line for line in p.stdout.splitlines() if 'Testing complete.' in line]
        try:
            with open(js, encoding='utf-8') as f:
                cases = json.load(f).get('test_cases', [])
        except (OSError, ValueError):
            cases = None
    return (summary[-1].split('] ', 1)[-1] if summary else p.stdout.strip()[-200:]), cases


def verdict(p):
    """The lab's verdict on p in kselftest's terms: a program skips by its exit status (KSFT_SKIP,
    which the judge accepts only when every case skipped), so a harness program whose every case
    skipped but which exits 0, as the tree's harness does, passes there."""
    if p.failed():
        return 'FAIL'
    if p.status == 4:
        return 'SKIP'
    return 'PASS'


def check(name, data, programs, ksrc):
    """The check as one program, name, of two cases. The knobs each program left changed are in
    its frame, which the judge reads (tests/ktap.py), as for the lab's own loop."""
    docs = handed_over(data)
    if not docs:
        return ktap.Program.failure(name, 'the guest handed over no run_kselftest.sh output')
    summaries, cases = [], []
    for doc in docs:
        summary, got = kunit_parse(ksrc, doc)
        summaries.append(summary)
        cases = None if got is None or cases is None else cases + got
    lab = {p.name: verdict(p) for p in programs}
    lines = ['TAP version 13', '1..2', '# kunit.py parse, %d documents: %s'
             % (len(docs), '; '.join(sorted(set(summaries))))]
    parsed = cases is not None and len(cases) > 0
    if not parsed:
        lines.append('# kunit.py parse gave no results')
    lines.append('%s 1 kunit.py parse reads the runner\'s output' % ('ok' if parsed else 'not ok'))
    got = {}
    for c in cases or []:
        n = c.get('name', '')
        m = PREFIX.match(n)
        got[n[m.end():] if m else n] = c.get('status')
    differ = ['%s: kunit.py %s, the lab %s' % (n, got.get(n, 'none'), lab.get(n, 'none'))
              for n in sorted(set(got) | set(lab)) if got.get(n) != lab.get(n)]
    count = {v: sum(1 for x in lab.values() if x == v) for v in ('PASS', 'FAIL', 'SKIP')}
    lines.append('# the lab: %d programs: passed: %d, failed: %d, skipped: %d'
                 % (len(lab), count['PASS'], count['FAIL'], count['SKIP']))
    lines += ['# ' + d for d in differ]
    lines.append('%s 2 every program\'s kselftest result is the lab\'s verdict'
                 % ('ok' if parsed and not differ else 'not ok'))
    return ktap.Program(name, '\n'.join(lines) + '\n')


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.split('\n\n')[-1].strip(), file=sys.stderr)
        return 2
    with open(argv[0], encoding='utf-8', errors='replace') as f:
        data = f.read()
    programs = [ktap.program_of(frame) for frame in ktap.frames(data)]
    budget = ktap.Budget(argv[2] if len(argv) == 3 else None, False)
    for p in programs:
        budget.judge(p)
    p = check('kselftest', data, programs, argv[1])
    for line in ktap.render([p]):
        print(line)
    return 1 if p.failed() else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
