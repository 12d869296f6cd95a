#!/usr/bin/python3
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
skip. 6.12's harness also records a child exiting 2 or 3 as "# XFAIL" / "# XPASS": an XPASS is
never a pass, and an XFAIL (or TODO) is a claim like a skip. Skips and XFAILs are then held to the
skip budget, tests/skips/<kernel>[-<flavour>].txt (Budget), reason and all. Nested subtests are
judged whole, every indented block before a result (a "not ok" under an "ok" fails it); a result or
plan indented by 1-3 spaces, a result without its number, and an indented block no result closes
fail. The data channel's frames must each end (frames()); a whole run's programs are the build's
manifest (vanished()).

  ktap.py check NAME FILE [STATUS]   judge one program's output; exit 1 if it failed
  ktap.py data FILE [--budget B] [--manifest M] [--debug 1]
                                     judge every program in a data channel (vm/boot --out), a line
                                     each, or one a failure (with the skip budget B; a whole run
                                     of manifest M; a debug kernel's, whose kmemleak and lockdep
                                     reports must come), then
                                     the run's own failures; exit 1 if the run failed
"""
import collections
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
    # Every indented block since the last result: a subtest's output split by a line at this level
    # is two blocks, and each is judged (a "not ok" in the first must not be dropped).
    doc, block, nested = Doc(), [], []
    doc.lines = lines
    i = 0
    while i < len(lines):
        line = lines[i].rstrip('\r\n')
        if line.startswith(INDENT) or line.startswith('\t'):
            sub = []
            while i < len(lines) and (lines[i].startswith(INDENT) or lines[i].startswith('\t')
                                      or not lines[i].strip()):
                sub.append(lines[i][4:] if lines[i].startswith(INDENT) else lines[i][1:])
                i += 1
            nested.append(parse(sub))
            continue
        i += 1
        # A result or plan indented by 1 to 3 spaces belongs to no level: neither this
        # document's nor a subtest's (4 spaces or a tab). It is not read as a diagnostic.
        stripped = line.lstrip(' ')
        if stripped is not line and len(line) - len(stripped) < 4 and \
                (RESULT.match(stripped) or PLAN.match(stripped)):
            doc.problems.append('a line indented by %d spaces, at no level of the document: %s'
                                % (len(line) - len(stripped), stripped[:80]))
            continue
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
            elif directive in ('XFAIL', 'TODO'):
                # Held to the skip budget like a skip (Budget.judge): an expected failure is a
                # claim, and 6.12's harness records a child exiting 2 (KSFT_XFAIL) as one.
                status = 'xfail'
            else:
                status = 'pass'
            case = Case(number, name, status, reason.strip(), block)
            if ok and directive == 'XPASS':
                # 6.12's harness: a child exiting 3 (KSFT_XPASS), or an XFAIL_ADD() case that
                # passed. Neither is a pass the lab asked for.
                case.problems.append('XPASS (%s): passed where a failure was expected, or its '
                                     "child exited with the harness's XPASS code; not a pass"
                                     % (reason.strip() or 'no reason'))
            for k, sub_doc in enumerate(nested, 1):
                where = 'subtest' if len(nested) == 1 else \
                    'subtest (block %d of %d)' % (k, len(nested))
                for p in judge_doc(sub_doc):
                    case.problems.append('%s: %s' % (where, p))
                for sub in sub_doc.cases:
                    if sub.status in ('skip', 'xfail'):
                        # The skip budget names a program's own cases: a claim inside a subtest
                        # would escape it.
                        case.problems.append('%s: %d %s: %s (%s) inside a subtest, where the '
                                             'skip budget cannot hold it' % (
                                                 where, sub.number, sub.name, sub.status,
                                                 sub.reason or 'no reason'))
                    if sub.status == 'fail' or sub.problems:
                        case.problems.append('%s: %d %s: not ok%s'
                                             % (where, sub.number, sub.name, ''.join(
                                                 '; ' + q for q in sub.problems)))
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
            block, nested = [], []
            continue
        if re.match(r'^(not )?ok\b', line):
            # TAP allows a result without its number; the lab's programs always number theirs, and
            # a result that cannot be placed in 1..N must not pass unread.
            doc.problems.append('a result line without a test number: ' + line[:80])
            continue
        if line.startswith('Bail out!'):
            doc.bailed = True
            doc.problems.append('bailed out: ' + line)
            continue
        if VERSION.match(line):
            continue
        block.append(line)
    for sub_doc in nested:
        if any(line.strip() for line in sub_doc.lines):
            doc.problems.append('an indented block after the last result, which no result line '
                                'closes: %s' % next(line for line in sub_doc.lines
                                                    if line.strip()).strip()[:80])
            break
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
        self.notes = []         # diagnostics of the judge that fail nothing
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


def why_matches(why, reason):
    """A skip budget's why against the reason a case gave: the same words, where a "*" of the why
    stands for any text (a version the reason names)."""
    return re.fullmatch('.*'.join(re.escape(part) for part in why.split('*')), reason) is not None


class Budget:
    """The skip budget, tests/skips/<kernel>[-<flavour>].txt: "program | case | why" lines, "*"
    for every case of a program. A skip or an expected failure (XFAIL, TODO) it does not list,
    or a skip it lists for another reason, fails; cow_test's XFAILs may instead be earned by
    tests/cow-known.txt (its list of cow.c's known failures, per kernel). A "*" in a why stands
    for any text. On the lab's own kernels a listed case that passes fails, and so does an entry
    that nothing used (stale), so the list can only shrink; a user's tree only reports them.
    A missing budget file fails: there is no run without one."""

    def __init__(self, path, user_tree):
        self.path, self.user_tree = path, user_tree
        self.entries, self.seen, self.listed, self.unlisted = {}, set(), 0, 0
        self.used = set()       # entries that earned a skip or an xfail
        self.problems = []
        self.kernel = os.path.basename(path or '').split('.txt')[0].split('-')[0]
        self.known = set()      # (case, verdict) of tests/cow-known.txt for this kernel
        if path is None:
            return
        if not os.path.exists(path):
            self.problems.append('the skip budget %s does not exist: create it, one "program | '
                                 'case | why" line for every case that may skip on this kernel '
                                 'and flavour (tests/skips/*.txt show how)' % path)
            return
        with open(path, encoding='utf-8') as f:
            for n, line in enumerate(f, 1):
                line = line.rstrip('\n')
                if not line.strip() or line.startswith('#'):
                    continue
                parts = [part.strip() for part in line.split(' | ')]
                if len(parts) != 3 or not all(parts) or not parts[2].strip('* '):
                    raise SystemExit('%s:%d: not "program | case | why" (a why of words, not only '
                                     '"*"): %s' % (path, n, line))
                self.entries[(parts[0], parts[1])] = parts[2]
        known = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'cow-known.txt')
        if os.path.exists(known):
            with open(known, encoding='utf-8') as f:
                for line in f:
                    parts = [part.strip() for part in line.split(' | ')]
                    if len(parts) == 4 and parts[0] == self.kernel:
                        self.known.add((parts[2], parts[1]))

    def judge(self, p):
        """Hold program p's cases to the budget, as its problems say. A skip is earned by its
        case's entry only with the entry's why as its reason: a case that skips for a new reason
        is a new claim."""
        name = os.path.basename(self.path or 'no budget')
        for c in p.cases:
            key = (p.name, c.name)
            entry = key if key in self.entries else \
                (p.name, '*') if (p.name, '*') in self.entries else None
            if entry:
                self.seen.add(entry)
            if c.status == 'skip' and self.path is None:
                continue        # ktap.py check: no budget to hold a skip to; its reason is read
            if c.status == 'skip' and entry:
                # Used even when the reason differs: the entry is not stale, its why is wrong.
                self.used.add(entry)
                if why_matches(self.entries[entry], c.reason):
                    self.listed += 1
                else:
                    self.unlisted += 1
                    c.problems.append('skipped (%s), but the skip budget %s lists it for another '
                                      'reason: "%s"' % (c.reason or 'no reason', name,
                                                        self.entries[entry]))
            elif c.status == 'skip':
                self.unlisted += 1
                c.problems.append('skipped (%s), and the skip budget %s does not list it'
                                  % (c.reason or 'no reason', name))
            elif c.status == 'xfail':
                if entry:
                    self.used.add(entry)
                elif not (p.name == 'cow_test' and
                          any((c.name, v) in self.known for v in ('xfail', 'fail'))):
                    c.problems.append('an expected failure (XFAIL %s) that %s does not '
                                      'list%s: it must be earned like a skip'
                                      % (c.reason or 'no reason',
                                         'the skip budget ' + name if self.path
                                         else 'no skip budget (none given)',
                                         ' (nor tests/cow-known.txt for %s)' % self.kernel
                                         if p.name == 'cow_test' else ''))
            elif entry == key and c.status == 'pass':
                if self.user_tree:
                    p.notes.append('%s: listed in the skip budget, but passed' % c.name)
                else:
                    c.problems.append('listed in the skip budget %s, but passed: take it off '
                                      'the list' % name)

    def stale(self):
        """Entries no case of a whole run matched, and (on the lab's own kernels) "*" entries of a
        program none of whose cases skipped: the list must shrink with the suite. (code, text)
        pairs."""
        out = [('skip_budget_stale', '%s: %s is listed in the skip budget but did not run' % e)
               for e in self.entries if e not in self.seen]
        if not self.user_tree:
            out += [('skip_budget_star_unused',
                     '%s: * is listed in the skip budget, but none of its cases skipped' % e[0])
                    for e in self.entries if e[1] == '*' and e in self.seen and e not in self.used]
        return out


def render_one(i, p):
    """Program p, number i of the run, nested under its own result line."""
    out = [INDENT + '# Subtest: ' + p.name]
    out.extend(INDENT + line for line in p.lines)
    for note in p.notes:
        out.append(INDENT + '# %s: %s' % (p.name, note))
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


def frames(data, final=True):
    """The frames of the data channel: (kind, name, text, status, seconds). A frame not yet ended
    is left out while the guest may still be writing it (final=False); once the guest has ended
    (final), and whenever another frame begins inside it, it is a broken frame: the program's
    output is cut and its exit status unknown, which fails it."""
    out, cur, buf = [], None, []

    def broken(why):
        out.append(('broken', cur if cur != '@kmemleak' else 'kmemleak_after_suite',
                    '\n'.join(buf), why, None))

    for raw in data.split('\n'):
        line = raw.rstrip('\r')
        if cur is None:
            if line.startswith('@@lab-prog-begin '):
                cur, buf = line.split()[1], []
            elif line.startswith('@@lab-missing '):
                out.append(('missing', line.split()[1], '', 0, None))
            elif line.startswith('@@lab-kmemleak-begin'):
                cur, buf = '@kmemleak', []
            elif line.startswith('@@lab-lockdep'):
                out.append(('lockdep', 'lockdep_after_suite', '', line.split()[1:], None))
            elif line.startswith('@@lab-prog-end '):
                cur, buf = line.split()[1], []
                broken('an end of frame with no beginning: ' + line)
                cur = None
            continue
        if cur == '@kmemleak' and line.startswith('@@lab-kmemleak-end'):
            out.append(('kmemleak', 'kmemleak_after_suite', '\n'.join(buf), line.split()[-1], None))
            cur = None
        elif line.startswith('@@lab-prog-end ' + cur + ' '):
            fields = line.split()
            try:
                status, secs = int(fields[2]), float(fields[3])
            except (IndexError, ValueError):
                broken('a broken end of frame: ' + line)
            else:
                out.append(('prog', cur, '\n'.join(buf), status, secs))
            cur = None
        elif line.startswith(('@@lab-prog-begin ', '@@lab-prog-end ', '@@lab-kmemleak-',
                              '@@lab-missing ', '@@lab-dmesg-begin', '@@lab-lockdep')):
            broken('its frame never ended: "%s" came inside it, so its output is cut and its '
                   'exit status unknown' % line)
            cur = None
            if line.startswith('@@lab-lockdep'):
                out.append(('lockdep', 'lockdep_after_suite', '', line.split()[1:], None))
            if line.startswith(('@@lab-prog-begin ', '@@lab-kmemleak-begin')):
                cur, buf = line.split()[1] if line.startswith('@@lab-prog-begin ') \
                    else '@kmemleak', []
        else:
            buf.append(line)
    if cur is not None and final:
        broken('its frame never ended: the guest stopped while it ran (no exit status)')
    return out


# A blocked task's stack, read from the top, begins in the scheduler: where it waits comes after.
SCHEDULER = re.compile(r'^(__schedule|schedule\w*|preempt_schedule\w*|io_schedule\w*)$')


def timed_out(lines):
    """guest/run-tests' report of a program that outlived its timeout (@@lab-timeout, then the
    tasks blocked in the kernel and the program's own, each with its stack; "runner" when the
    kselftest runner stopped it, the tasks as last read before): the problem, naming where each
    blocked task waits, and the stacks as diagnostics; None when it did not."""
    marks = [line.split()[1:] for line in lines if line.startswith('@@lab-timeout ')]
    if not marks:
        return None
    if marks[-1] == ['none']:
        return ('no timeout: the settings file of its folder (guest/run-tests: timeout=N, or '
                'timeout_PROGRAM=N) gives it none', [])
    tasks, stacks = [], {}
    for line in lines:
        f = line.split()
        if line.startswith('@@lab-task ') and len(f) >= 3:
            tasks.append((f[1], f[2], ' '.join(f[3:])))
        elif line.startswith('@@lab-stack ') and len(f) >= 3:
            fn = re.sub(r'\+0x[0-9a-f]+/0x[0-9a-f]+', '', ' '.join(f[2:]))
            stacks.setdefault(f[1], []).append(re.sub(r'^\[<[0-9a-fx]+>\]\s*', '', fn))

    def where(tid):
        frames = [fn.split()[0] for fn in stacks.get(tid, []) if fn.split()]
        while frames and SCHEDULER.match(frames[0]):
            frames.pop(0)
        return ' < '.join(frames[:5]) or 'no stack read'
    blocked = ['%s %s in %s' % (tid, comm, where(tid)) for tid, state, comm in tasks
               if state == 'D']
    own = ['%s %s (%s)' % (tid, comm, state) for tid, state, comm in tasks if state != 'D']
    seconds = marks[-1][0]
    if 'runner' in marks[-1]:
        how = 'stopped by the kselftest runner'
        last = 'when last read before'
        seen = 'no stacks read before it' if not tasks else \
            'blocked in the kernel (state D) %s: %s' % (last, '; '.join(blocked)) if blocked else \
            'no task blocked in the kernel (state D) %s' % last
    else:
        how = 'would not die of SIGKILL' if 'unkillable' in marks[-1] else \
            'killed with its process group'
        seen = 'blocked in the kernel (state D): ' + '; '.join(blocked) if blocked else \
            'no task blocked in the kernel (state D)'
    problem = ('timed out: still running after %s s, its timeout (the settings of its folder), '
               'and %s; %s' % (seconds, how, seen))
    if own:
        problem += '; its other tasks: ' + ', '.join(own)
    shown = ['# timed out after %s s; the tasks then (TID, state, name) and their stacks:'
             % seconds]
    for tid, state, comm in tasks:
        shown.append('#   %s %s %s' % (tid, state, comm))
        shown += ['#     ' + fn for fn in stacks.get(tid, [])]
    return problem, shown


def program_of(frame):
    """A data channel's frame judged: a program, a program that is missing, or kmemleak's report."""
    kind, name, text, status, secs = frame
    if kind == 'prog':
        # guest/run-tests' words, after the program's output: a knob it left changed, a timeout.
        lines = text.split('\n')
        knobs = [line.split() for line in lines if line.startswith('@@lab-knob ')]
        taint = [line.split()[1] for line in lines if line.startswith('@@lab-taint ')]
        runner = ('@@lab-knob ', '@@lab-taint ', '@@lab-timeout ', '@@lab-task ', '@@lab-stack ')
        p = Program(name, '\n'.join(line for line in lines if not line.startswith(runner)),
                    status, secs)
        p.taint = int(taint[0]) if taint and taint[0].isdigit() else None
        hung = timed_out(lines)
        if hung:
            p.problems.insert(0, hung[0])
            p.lines += hung[1]
        for k in knobs:
            if k[3:] == ['could-not-put-back']:
                p.problems.append('left %s changed, and it could not be put back to %s: the '
                                  'programs after it ran with it' % (k[1], k[2]))
                continue
            p.problems.append('left %s at %s (it was %s before the program; put back for the '
                              'next)' % (k[1], ' '.join(k[3:]) or '?', k[2] if len(k) > 2 else '?'))
        return p
    if kind == 'missing':
        return Program.failure(name, 'the build lists it, but /lab/tests/%s is missing' % name)
    if kind == 'broken':
        p = Program.failure(name, status)
        p.lines = text.splitlines()
        return p
    if kind == 'lockdep':
        # status: the words after @@lab-lockdep; both must be there, and both on.
        on = sorted(status) == ['debug_locks=1', 'prove_locking=1']
        p = Program('lockdep_after_suite', '1..1\n%s 1 lockdep still on after the suite\n'
                    % ('ok' if on else 'not ok'))
        if not on:
            p.lines = ['# lockdep after the suite: %s (want debug_locks=1 prove_locking=1): lock '
                       'debugging was turned off, so lockdep checked nothing from then on. The '
                       'kernel log may say why ("turning off the locking correctness validator", '
                       '"Disabling lock debugging due to kernel taint"); debug_locks_off() and '
                       'prove_locking=0 say nothing' % (' '.join(status) or 'nothing read')] \
                + p.lines
        return p
    bad = 'unreferenced' in text or status != 'OK'
    p = Program('kmemleak_after_suite', '1..1\n%s 1 no unreferenced object\n'
                % ('not ok' if bad else 'ok'))
    p.lines = ['# ' + line for line in text.splitlines()] + p.lines
    if status != 'OK':
        p.problems.append('a clear, scan or read of kmemleak failed')
    return p


def vanished(programs, manifest):
    """The programs the build's manifest (one name a line) lists that no frame judged: a guest
    that stopped early, or a runner that skipped them, must not make them disappear."""
    with open(manifest, encoding='utf-8') as f:
        listed = [line.strip() for line in f if line.strip()]
    judged = {p.name for p in programs}
    return [Program.failure(n, 'the build\'s manifest (%s) lists it, but no guest ran it: no '
                               'frame of it came' % manifest)
            for n in listed if n not in judged]


# The programs that turn vm.fork_share_pinned on (kernel-patches/0002). Once it has been on, 0002
# skips DEBUG_VM's check that pinned pages are exclusive for the rest of the boot (and taints the
# kernel TAINT_USER): on the debug kernel they run in boots of their own (tests/run-all), and every
# other program must start with the taint clear, the check live.
# Every rows_test plays the rows that set it, a family's in its own machine (NAME_rows_test, a name
# vm/guest.mk gives only those programs) too.
SWITCH_SETTERS = ('cow_test', 'fork_pin_race_test', 'fork_switch_test', 'repro_test',
                  'rows_test')
TAINT_USER = 1 << 6


def sets_switch(name):
    """Whether program NAME turns the fork switch on (SWITCH_SETTERS, or a family's rows_test)."""
    return name in SWITCH_SETTERS or name.endswith('_rows_test')


def debug_vm_unchecked(programs):
    """On the debug kernel: a program that does not turn the switch on itself must have run with
    DEBUG_VM's check of pinned pages live, told by the kernel's taint at its start."""
    for p in programs:
        taint = getattr(p, 'taint', 'none')
        if taint == 'none' or sets_switch(p.name):
            continue
        if taint is None:
            p.problems.append('its frame has no taint line: whether DEBUG_VM checked its pinned '
                              'pages is unknown')
        elif taint & TAINT_USER:
            p.problems.append('ran after vm.fork_share_pinned had been on in its boot (taint U), '
                              'so DEBUG_VM never checked its pinned pages: a program that turns '
                              'the switch on must be in ktap.SWITCH_SETTERS')


DETECTORS = ('kmemleak', 'lockdep')


def detectors_unread(programs, guest='suite'):
    """On the debug kernel, a guest must hand over what its detectors found after the suite: a
    guest whose kmemleak or lockdep report never came (debugfs not mounted, a config that lost
    them, a runner that skipped the step) must not pass as a guest with nothing to report."""
    names = {p.name for p in programs}
    return [Program.failure('%s_after_%s' % (d, guest),
                            'the debug kernel\'s %s report after the suite never came' % d)
            for d in DETECTORS if '%s_after_%s' % (d, guest) not in names]


# A failure of the run as a whole: its code (the case name the results documents give it, and
# what a program matches on: skip_budget_missing, skip_budget_stale, skip_budget_star_unused,
# judged_something) and its text (what a reader sees).
RunProblem = collections.namedtuple('RunProblem', 'code text')


def run_problems(programs, budget, whole):
    """What fails a run beyond its programs: the budget's own problems, on a whole run its stale
    entries, and a run that judged nothing."""
    out = [RunProblem('skip_budget_missing', 'skip budget: ' + p) for p in budget.problems]
    if whole:
        out += [RunProblem(code, 'skip budget: ' + text) for code, text in budget.stale()]
    t = totals(programs)
    if not programs or t['pass'] + t['fail'] == 0:
        out.append(RunProblem('judged_something',
                              'the run judged nothing: no case passed or failed'))
    return out


def main(argv):
    if len(argv) >= 3 and argv[0] == 'check':
        name, path = argv[1], argv[2]
        status = int(argv[3]) if len(argv) > 3 else 0
        with open(path, encoding='utf-8', errors='replace') as f:
            p = Program(name, f.read(), status)
        # No budget here: a skip is only read, an expected failure has nothing to earn it.
        Budget(None, False).judge(p)
        for line in render([p]):
            print(line)
        return 1 if p.failed() else 0
    if len(argv) >= 2 and argv[0] == 'data':
        # Every program of a data channel: "NAME ok", or "NAME failed: WHY" for each failure.
        # --budget B: held to the skip budget B; --manifest M: a whole run, whose programs are
        # M's (and whose budget must have no stale entry). Then the run's own failures, a line
        # each ("run failed [CODE]: ..."); exit 1 if there were any.
        opts = dict(zip(argv[2::2], argv[3::2]))
        if len(argv) % 2 or set(opts) - {'--budget', '--manifest', '--debug'}:
            print(__doc__.split('\n\n')[-1].strip(), file=sys.stderr)
            return 2
        budget = Budget(opts['--budget'], False) if '--budget' in opts else None
        with open(argv[1], encoding='utf-8', errors='replace') as f:
            programs = [program_of(frame) for frame in frames(f.read())]
        if '--manifest' in opts:
            programs += vanished(programs, opts['--manifest'])
        if opts.get('--debug') == '1':
            debug_vm_unchecked(programs)
            programs += detectors_unread(programs)
        for p in programs:
            if budget:
                budget.judge(p)
            why = p.problems + ['%s: %s' % (c.name, prob) for c in p.cases
                                for prob in c.problems]
            why += ['%s: not ok' % c.name for c in p.cases if c.status == 'fail']
            # A failure a line, so that a reader can tell the judge's words from a program's.
            for w in why if p.failed() else []:
                print('%s failed: %s' % (p.name, ' '.join(w.split())))
            if not p.failed():
                print('%s ok' % p.name)
        run = run_problems(programs, budget or Budget(None, False), '--manifest' in opts)
        for prob in run:
            print('run failed [%s]: %s' % (prob.code, prob.text))
        return 1 if run else 0
    print(__doc__.split('\n\n')[-1].strip(), file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
