#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""lava-run's output for one of make lava's jobs, held to the suite's own KTAP from the same run.

lava-run prints JSON lines. The guest's console is in its "target" lines: guest/run-tests' frames
(every program's whole output and exit status), which tests/ktap.py reads as make test reads the
data channel. LAVA's verdicts are in its "results" lines: one per "lab-case RESULT NAME" line that
guest/lava-suite printed and the job's monitor matched. A job's result.yaml says pass whenever the
infrastructure worked, whatever the cases said: so every KTAP case of every program must be a LAVA
case of the same name (program.case) with the same status (pass, fail, skip; an XFAIL is a fail),
and no LAVA case may be more; then the programs are judged as make test judges them (tests/ktap.py,
the skip budget), and the suite must have passed, with no kernel splat on the console (which
guest/lava-suite gives the whole kernel log too): vm/splat-classes, as vm/boot judges its guests.

  lava.py LAVA_RUN_OUTPUT BUDGET [MANIFEST]   exit 1 if any of that failed
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ktap  # noqa: E402

# The monitor's name in the job (vm/lava.py), LAVA's "definition" of its cases.
DEFINITION = 'dontfork-lab'
LAVA_STATUS = {'pass': 'pass', 'fail': 'fail', 'skip': 'skip', 'xfail': 'fail'}
SPLATS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      'vm/splat-classes')


def splats(console):
    """The classes of vm/splat-classes found on the console, and their lines."""
    found = []
    with open(SPLATS, encoding='utf-8') as f:
        for line in f:
            if line.startswith('#') or '|' not in line:
                continue
            name, regex = line.rstrip('\n').split('|', 1)
            hits = [c for c in console if re.search(regex, c)]
            if hits:
                found.append('%s (%s)' % (name, hits[0].strip()[:120]))
    return found


def read(path):
    """The console's lines and the suite's LAVA results, from lava-run's JSON lines."""
    console, results, other = [], [], []
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            msg = entry.get('msg')
            if entry.get('lvl') == 'target' and isinstance(msg, str):
                console.append(msg)
            elif entry.get('lvl') == 'results' and isinstance(msg, dict):
                (results if msg.get('definition') == DEFINITION else other).append(msg)
    return console, results, other


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.split('\n\n')[-1].strip(), file=sys.stderr)
        return 2
    console, results, other = read(argv[0])
    programs = [ktap.program_of(frame) for frame in ktap.frames('\n'.join(console))]
    budget = ktap.Budget(argv[1], False)
    for p in programs:
        budget.judge(p)
    if len(argv) == 3:
        programs += ktap.vanished(programs, argv[2])
    want = {'%s.%s' % (p.name, c.name): LAVA_STATUS[c.status] for p in programs for c in p.cases}
    got, twice = {}, []
    for r in results:
        name = r.get('extra', {}).get('test_case_id', r.get('case'))
        if name in got:
            twice.append(name)
        got[name] = r.get('result')
    problems = ['%s: KTAP %s, LAVA %s' % (n, want.get(n, 'none'), got.get(n, 'none'))
                for n in sorted(set(want) | set(got)) if want.get(n) != got.get(n)]
    problems += ['%s: two LAVA cases' % n for n in twice]
    if not want:
        problems.append('no KTAP case came on the console')
    t = ktap.totals(programs)
    run = ktap.run_problems(programs, budget, len(argv) == 3)
    failed = [p.name for p in programs if p.failed()]
    kernel = splats(console)
    for s in kernel:
        print('lava: kernel splat on the console: ' + s)
    tally = ', '.join('%s %d' % (s, sum(1 for v in got.values() if v == s))
                      for s in ('pass', 'fail', 'skip'))
    print('lava: %d KTAP cases of %d programs, %d LAVA cases of %s (%s)'
          % (len(want), len(programs), len(got), DEFINITION, tally))
    for prob in problems:
        print('lava: case differs: ' + prob)
    jobs = [r for r in other if r.get('case') == 'job']
    print('lava: the job: %s (LAVA\'s own word, which says nothing of the cases)'
          % (jobs[-1].get('result') if jobs else 'no result'))
    print('lava: the suite judged as make test judges it: %d passed, %d failed, %d skipped%s'
          % (t['pass'], t['fail'] + len(run), t['skip'],
             ''.join('; ' + x for x in failed + [r.text for r in run])))
    return 1 if problems or failed or run or kernel else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
