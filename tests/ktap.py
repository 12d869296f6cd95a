#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read test programs' KTAP as a parser does, and judge them: the one place make test counts.

A program's output is a KTAP document (TAP 13 is read the same way): a version line, exactly one
plan, results numbered 1..N in order, each exactly once, diagnostics ("# ..."), and nested
subtests, parsed by indentation. Anything else is a failure of that program, with the reason. On
top of the document, the program's exit status (a signal, or a status no failed case explains), and
two quirks of the kernel's kselftest_harness.h, as its source shows them (tests/lib/harness.h):
  - a test's child that exits with the harness's skip code is recorded as a skip, with the reason
    "unknown" (6.1: exit 255; 6.12: KSFT_SKIP), and
  - SKIP() after a failed EXPECT erases the failure (it sets passed/exit_code afresh);
so a skip needs a reason, and a case whose block shows an expectation failing must not pass or
skip. Skips are then held to the skip budget, tests/skips/<kernel>[-<flavour>].txt (Budget).

  ktap.py check NAME FILE [STATUS]   judge one program's output; exit 1 if it failed
  ktap.py data FILE [--budget B]     judge every program in a data channel (vm/run --out), a line
                                     each (with the skip budget B)
"""
import os
import re
import sys

VERSION = re.compile(r'^(K?TAP) version \d+\s*$')
PLAN = re.compile(r'^1\.\.(\d+)(?:\s*#\s*(.*))?\s*$')
RESULT = re.compile(r'^(not ok|ok)\s+(\d+)\b\s*(?:-\s+)?(.*?)\s*$')
DIRECTIVE = re.compile(r'^(.*?)\s*#\s*(SKIP|TODO|XFAIL|XPASS)\b\s*(.*)$', re.I)
# The harness's "#  RUN           fixture.variant.name ..." line.
RUN = re.compile(r'^#\s+RUN\s+(\S+)\s+\.\.\.\s*$')
# __EXPECT()'s diagnostic: "# file.c:LINE:test:Expected ..." (TH_LOG_STREAM is stdout for the lab).
EXPECT_FAILED = re.compile(r'^#\s*\S+:\d+:[^:]*:Expected ')
INDENT = '    '


class Case:
    """One result line: name, status (pass, fail, skip, xfail), reason, and what it said."""

    def __init__(self, number, name, status, reason, block):
        self.number, self.name, self.status, self.reason = number, name, status, reason
        self.block = block      # the diagnostics and other lines since the previous result
        self.problems = []      # why a case that says ok is not
        self.seconds = None


class Doc:
    def __init__(self):
        self.plans, self.cases, self.problems, self.bailed = [], [], [], False


def _name_from_block(block):
    for line in reversed(block):
        m = RUN.match(line)
        if m:
            return m.group(1)
    return ''


def parse(lines):
    """Parse one KTAP document whose lines are already de-indented to its own level."""
    doc, block, nested = Doc(), [], None
    i = 0
    while i < len(lines):
        line = lines[i].rstrip('\r\n')
        if line.startswith(INDENT) or line.startswith('\t'):
            sub = []
            while i < len(lines) and (lines[i].startswith(INDENT) or lines[i].startswith('\t')
                                      or not lines[i].strip()):
                sub.append(lines[i][4:] if lines[i].startswith(INDENT) else lines[i][1:])
                i += 1
            nested = parse(sub)
            continue
        i += 1
        m = PLAN.match(line)
        if m:
            doc.plans.append((int(m.group(1)), m.group(2) or ''))
            continue
        m = RESULT.match(line)
        if m:
            ok, number, rest = m.group(1) == 'ok', int(m.group(2)), m.group(3)
            d = DIRECTIVE.match(rest)
            name, directive, reason = rest, '', ''
            if d:
                name, directive, reason = d.group(1), d.group(2).upper(), d.group(3)
            if name.startswith('#'):
                name = ''
            name = name.strip() or _name_from_block(block) or 'case %d' % number
            if not ok:
                status = 'fail'
            elif directive == 'SKIP':
                status = 'skip'
            elif directive == 'XFAIL':
                status = 'xfail'
            else:
                status = 'pass'
            case = Case(number, name, status, reason.strip(), block)
            if nested is not None:
                for p in judge_doc(nested):
                    case.problems.append('subtest: ' + p)
            if status == 'skip' and case.reason in ('', 'unknown'):
                case.problems.append('skipped without a reason: the harness records a test '
                                     "child's exit with its skip code as a skip")
            if status in ('pass', 'skip', 'xfail'):
                for b in block:
                    if EXPECT_FAILED.match(b):
                        case.problems.append('an expectation failed (%s), yet the case says %s: '
                                             "the harness's SKIP() after a failed EXPECT erases "
                                             'the failure' % (b.strip('# ')[:120], status))
                        break
            doc.cases.append(case)
            block, nested = [], None
            continue
        if line.startswith('Bail out!'):
            doc.bailed = True
            doc.problems.append('bailed out: ' + line)
            continue
        if VERSION.match(line):
            continue
        block.append(line)
    return doc


def judge_doc(doc):
    """The document's own problems: its plan against its results."""
    problems = list(doc.problems)
    numbers = [c.number for c in doc.cases]
    if not doc.plans:
        problems.append('no plan line (1..N)')
    elif len(doc.plans) > 1:
        problems.append('%d plan lines: %s' % (len(doc.plans),
                                               ', '.join('1..%d' % p for p, _ in doc.plans)))
    seen = {}
    for n in numbers:
        seen[n] = seen.get(n, 0) + 1
    for n, count in sorted(seen.items()):
        if count > 1:
            problems.append('test %d reported %d times' % (n, count))
    if doc.plans:
        planned = doc.plans[0][0]
        if len(numbers) != planned:
            problems.append('planned %d cases, reported %d' % (planned, len(numbers)))
        if numbers != list(range(1, len(numbers) + 1)):
            problems.append('test numbers are not 1..%d in order: %s' %
                            (len(numbers), ' '.join(map(str, numbers[:20]))))
    return problems


class Program:
    """A program's (or host test's) whole verdict: its cases and its own problems."""

    def __init__(self, name, text, status=0, seconds=None, host=False):
        self.name, self.status, self.seconds, self.host = name, status, seconds, host
        self.lines = text.splitlines()
        doc = parse(self.lines)
        self.cases = doc.cases
        self.problems = judge_doc(doc)
        whole_skip = doc.plans and doc.plans[0][0] == 0 and not doc.cases
        if whole_skip:
            reason = doc.plans[0][1]
            reason = re.sub(r'^SKIP\s*', '', reason, flags=re.I)
            self.cases = [Case(1, '*', 'skip', reason, [])]
            self.problems = [p for p in self.problems if not p.startswith('planned')]
            if not reason:
                self.problems.append('1..0 without a reason')
        failed = any(c.status == 'fail' for c in self.cases)
        skipped_all = self.cases and all(c.status == 'skip' for c in self.cases)
        if status is None:
            self.problems.append('never finished: no exit status')
        elif status > 128:
            self.problems.append('killed by signal %d' % (status - 128))
        elif status not in (0, 4) and not failed:
            self.problems.append('exited with status %d without reporting a failed case' % status)
        elif status == 4 and not skipped_all and not failed:
            self.problems.append('exited with the skip status 4, yet not every case skipped')
        if not self.cases and not whole_skip:
            self.problems.append('reported no test case')

    def failed(self):
        return bool(self.problems) or any(c.status == 'fail' or c.problems for c in self.cases)

    @classmethod
    def failure(cls, name, problem, text=''):
        """A program that did not even run right: one problem, no cases."""
        p = cls(name, text, 0)
        p.cases, p.problems = [], [problem]
        return p


class Budget:
    """The skip budget, tests/skips/<kernel>[-<flavour>].txt: "program | case | why" lines, "*"
    for every case of a program. A skip it does not list fails; on the lab's own kernels a listed
    case that passes fails too, so the list can only shrink (a user's tree only reports it)."""

    def __init__(self, path, user_tree):
        self.path, self.user_tree = path, user_tree
        self.entries, self.seen, self.listed, self.unlisted = {}, set(), 0, 0
        if not os.path.exists(path):
            return
        with open(path, encoding='utf-8') as f:
            for n, line in enumerate(f, 1):
                line = line.rstrip('\n')
                if not line.strip() or line.startswith('#'):
                    continue
                parts = [part.strip() for part in line.split(' | ')]
                if len(parts) != 3 or not all(parts):
                    raise SystemExit('%s:%d: not "program | case | why": %s' % (path, n, line))
                self.entries[(parts[0], parts[1])] = parts[2]

    def judge(self, p):
        """Hold program p's cases to the budget, as its problems say."""
        for c in p.cases:
            key = (p.name, c.name)
            entry = key if key in self.entries else \
                (p.name, '*') if (p.name, '*') in self.entries else None
            if entry:
                self.seen.add(entry)
            if c.status == 'skip':
                if entry:
                    self.listed += 1
                else:
                    self.unlisted += 1
                    c.problems.append('skipped (%s), and the skip budget %s does not list it'
                                      % (c.reason or 'no reason', os.path.basename(self.path)))
            elif entry == key and c.status == 'pass':
                if self.user_tree:
                    c.block.append('# listed in the skip budget, but passed')
                else:
                    c.problems.append('listed in the skip budget %s, but passed: take it off '
                                      'the list' % os.path.basename(self.path))

    def stale(self):
        """Entries no case of a whole run matched: the list must shrink with the suite."""
        return ['%s: %s is listed in the skip budget but did not run' % e
                for e in self.entries if e not in self.seen]


def render_one(i, p):
    """Program p, number i of the run, nested under its own result line."""
    out = [INDENT + '# Subtest: ' + p.name]
    out.extend(INDENT + line for line in p.lines)
    for prob in p.problems:
        out.append(INDENT + '# %s: %s' % (p.name, prob))
    for c in p.cases:
        for prob in c.problems:
            out.append(INDENT + '# %s: %s: %s' % (p.name, c.name, prob))
    if p.failed():
        out.append('not ok %d %s' % (i, p.name))
    elif p.cases and all(c.status == 'skip' for c in p.cases):
        out.append('ok %d %s # SKIP all %d cases skipped' % (i, p.name, len(p.cases)))
    else:
        out.append('ok %d %s' % (i, p.name))
    return out


def render(programs):
    """The programs as one KTAP document."""
    out = ['KTAP version 1']
    for i, p in enumerate(programs, 1):
        out.extend(render_one(i, p))
    out.append('1..%d' % len(programs))
    return out


def totals(programs):
    t = {'pass': 0, 'fail': 0, 'skip': 0, 'xfail': 0}
    for p in programs:
        for c in p.cases:
            t['fail' if c.problems else c.status] += 1
        t['fail'] += len(p.problems)
    return t


def frames(data):
    """The complete frames of the data channel so far: (kind, name, text, status, seconds)."""
    out, cur, buf = [], None, []
    for raw in data.split('\n'):
        line = raw.rstrip('\r')
        if cur is None:
            if line.startswith('@@lab-prog-begin '):
                cur, buf = line.split()[1], []
            elif line.startswith('@@lab-missing '):
                out.append(('missing', line.split()[1], '', 0, None))
            elif line.startswith('@@lab-kmemleak-begin'):
                cur, buf = '@kmemleak', []
            continue
        if cur == '@kmemleak' and line.startswith('@@lab-kmemleak-end'):
            out.append(('kmemleak', 'kmemleak_after_suite', '\n'.join(buf), line.split()[-1], None))
            cur = None
        elif line.startswith('@@lab-prog-end ' + cur + ' '):
            _, _, status, secs = line.split()
            out.append(('prog', cur, '\n'.join(buf), int(status), float(secs)))
            cur = None
        else:
            buf.append(line)
    return out


def program_of(frame):
    """A data channel's frame judged: a program, a program that is missing, or kmemleak's report."""
    kind, name, text, status, secs = frame
    if kind == 'prog':
        return Program(name, text, status, secs)
    if kind == 'missing':
        return Program.failure(name, 'the build lists it, but /lab/tests/%s is missing' % name)
    bad = 'unreferenced' in text or status != 'OK'
    p = Program('kmemleak_after_suite', '1..1\n%s 1 no unreferenced object\n'
                % ('not ok' if bad else 'ok'))
    p.lines = ['# ' + line for line in text.splitlines()] + p.lines
    if status != 'OK':
        p.problems.append('a clear, scan or read of kmemleak failed')
    return p


def main(argv):
    if len(argv) >= 3 and argv[0] == 'check':
        name, path = argv[1], argv[2]
        status = int(argv[3]) if len(argv) > 3 else 0
        with open(path, encoding='utf-8', errors='replace') as f:
            p = Program(name, f.read(), status)
        for line in render([p]):
            print(line)
        return 1 if p.failed() else 0
    if len(argv) in (2, 4) and argv[0] == 'data':
        # Every program of a data channel, one line each: its name, then ok or its failures.
        budget = Budget(argv[3], False) if len(argv) == 4 and argv[2] == '--budget' else None
        with open(argv[1], encoding='utf-8', errors='replace') as f:
            for frame in frames(f.read()):
                p = program_of(frame)
                if budget:
                    budget.judge(p)
                why = p.problems + ['%s: %s' % (c.name, prob) for c in p.cases
                                    for prob in c.problems]
                why += ['%s: not ok' % c.name for c in p.cases if c.status == 'fail']
                print('%s %s' % (p.name, 'failed: ' + '; '.join(why) if p.failed() else 'ok'))
        return 0
    print(__doc__.split('\n\n')[-1].strip(), file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
