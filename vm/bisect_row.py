#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bisect: the first commit of a kernel tree where a row's verdict changed.

  vm/bisect_row.py --tree DIR --good REV --bad REV --row NAME
  vm/bisect_row.py step                 what git bisect run calls, in the lab's worktree

The user's tree is only read: its commits are checked out into the lab's own worktree of it
(git worktree, in the cache: bisect/NAME-HASH/NAME), where git bisect runs, so the tree's work
files, HEAD and bisect state stay as they were. Each commit is built out of tree (vm/build-kernel.sh
with KERNEL_SRC= the worktree), always into the same object folder, so a step rebuilds what its
checkout changed since the step before; then one guest plays the row once (guest/play-row) and its
record decides. In git bisect's terms a step answers 0 when the observed verdict is GOOD's, 1 when
it is BAD's, 125 (skip) when the commit does not build, the row could not run or gave neither
verdict; a kernel that panicked, printed a splat or hung is a third answer: the step answers 255,
which stops git bisect run, and that commit is reported as such. GOOD and BAD are played first:
their verdicts are the two answers, and must differ.

Every step's outcome is kept (bisect/NAME-HASH/steps/ROW/COMMIT.json) once it is complete, so an
interrupted run (Ctrl-C) started again plays only the commits it had not finished.
"""
import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import traceback

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The cache of kernel trees, as vm/lib.sh names it (the Makefile passes it on).
cache = os.environ.get('LAB_CACHE') or sys.exit(
    'bisect_row.py: LAB_CACHE is unset: run it as make bisect')
# The lab supports trees from this version on (vm/build-kernel.sh refuses older ones too).
OLDEST = (6, 1)
# git bisect run's answers; 255 stops it (any status from 128 on does).
ANSWER = {'good': 0, 'bad': 1, 'skip': 125, 'kernel': 255}


class Error(Exception):
    """Bad input or a state the lab cannot bisect from: said before anything is built."""


def say(*lines):
    for line in lines:
        print('bisect: ' + line)
    sys.stdout.flush()


# git in the C locale: its words in the bisect's output and logs are the same on every machine
# (nothing reads them: what git bisect found is read from its refs).
GIT_ENV = dict(os.environ, LC_ALL='C', LANGUAGE='')


def git(tree, *args, check=True):
    p = subprocess.run(['git', '-C', tree] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=GIT_ENV)
    if check and p.returncode:
        raise Error('git %s in %s failed: %s' % (' '.join(args), tree, p.stderr.strip()))
    return p


def finish(p):
    """p's status once it has ended. On Ctrl-C it got the same SIGINT (one process group) and
    ends by itself, cleaning up after it (vm/boot stops its QEMU): waited for, not killed."""
    try:
        return p.wait()
    except KeyboardInterrupt:
        p.wait()
        raise


def lines_of(p, stream=None):
    """p's output lines (stdout, or stream) as they come; p waited for even when the reader is
    interrupted."""
    try:
        yield from stream or p.stdout
    except KeyboardInterrupt:
        p.wait()
        raise


def subject(tree, commit):
    return git(tree, 'log', '-1', '--format=%h %s', commit).stdout.strip()


def row_names():
    """The rows of rows/rows.c, from a host build of the table itself (vm/row-names.c)."""
    out = os.path.join(top, 'build', 'host', 'row-names')
    srcs = [os.path.join(top, f) for f in ('vm/row-names.c', 'rows/rows.c', 'rows/row.h',
                                           'drivers/pindma/uapi/pindma.h')]
    if not os.path.exists(out) or any(os.path.getmtime(s) > os.path.getmtime(out) for s in srcs):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.run(['cc', '-O2', '-Wall', '-Wextra', '-Werror', '-I', os.path.join(top, 'rows'),
                        '-I', os.path.join(top, 'drivers/pindma/uapi'), '-o', out] + srcs[:2],
                       check=True)
    return subprocess.run([out], check=True, stdout=subprocess.PIPE, text=True).stdout.split()


def version_at(tree, rev):
    """VERSION and PATCHLEVEL of the tree's Makefile at rev."""
    make = git(tree, 'show', '%s:Makefile' % rev, check=False)
    v = dict(re.findall(r'^(VERSION|PATCHLEVEL)\s*=\s*(\d+)\s*$', make.stdout, re.M))
    if make.returncode or len(v) != 2:
        raise Error('%s has no kernel Makefile at %s: is it a kernel tree?' % (tree, rev))
    return int(v['VERSION']), int(v['PATCHLEVEL'])


def check_input(args):
    """Every check that needs no build; returns the tree, the row and the two commits."""
    if not (args.tree and args.good and args.bad and args.row):
        raise Error('make bisect needs KERNEL_SRC=DIR GOOD=REV BAD=REV ROW=NAME')
    tree = os.path.realpath(args.tree)
    if not os.path.isdir(tree):
        raise Error('KERNEL_SRC=%s: no such directory' % args.tree)
    top_of = git(tree, 'rev-parse', '--show-toplevel', check=False)
    if top_of.returncode or os.path.realpath(top_of.stdout.strip()) != tree:
        raise Error('KERNEL_SRC=%s is not the top of a git work tree: git bisect needs its '
                    'history' % args.tree)
    names = row_names()
    if args.row not in names:
        raise Error('ROW=%s: no such row; the rows (rows/rows.c) are: %s'
                    % (args.row, ' '.join(names)))
    commits = []
    for what, rev in (('GOOD', args.good), ('BAD', args.bad)):
        c = git(tree, 'rev-parse', '--verify', '--quiet', rev + '^{commit}', check=False)
        if c.returncode:
            raise Error('%s=%s is no commit of %s' % (what, rev, tree))
        commits.append(c.stdout.strip())
    good, bad = commits
    if good == bad:
        raise Error('GOOD and BAD are the same commit, %s' % subject(tree, good))
    if git(tree, 'merge-base', '--is-ancestor', good, bad, check=False).returncode:
        raise Error('GOOD=%s is not an ancestor of BAD=%s: git bisect looks for the first bad '
                    'commit after a good one' % (args.good, args.bad))
    for what, rev, c in (('GOOD', args.good, good), ('BAD', args.bad, bad)):
        v = version_at(tree, c)
        if v < OLDEST:
            raise Error('%s=%s is Linux %d.%d; the lab supports %d.%d and later'
                        % ((what, rev) + v + OLDEST))
    start = git(tree, 'rev-parse', '--git-path', 'BISECT_START').stdout.strip()
    if os.path.exists(os.path.join(tree, start)):
        raise Error('a git bisect is in progress in %s (git bisect log shows it): finish it '
                    'or git bisect reset first; the lab leaves it alone' % tree)
    return tree, args.row, good, bad


def worktree(tree, state, good):
    """The lab's worktree of the tree, made once: a checkout the lab owns, bisected there."""
    wt = os.path.join(state, os.path.basename(tree))
    common = os.path.realpath(os.path.join(tree, git(tree, 'rev-parse', '--git-common-dir')
                                           .stdout.strip()))
    mine = git(wt, 'rev-parse', '--git-common-dir', check=False) if os.path.isdir(wt) else None
    if mine is None or mine.returncode or \
            os.path.realpath(os.path.join(wt, mine.stdout.strip())) != common:
        shutil.rmtree(wt, ignore_errors=True)
        say('checking the tree out into the lab\'s worktree %s (once)' % wt)
        git(tree, 'worktree', 'add', '-f', '--detach', wt, good)
    # A run stopped in the middle left its own bisect there: this run starts afresh, from the
    # outcomes kept so far.
    git(wt, 'bisect', 'reset', check=False)
    return wt


class Steps:
    """The outcomes of the row on the commits played, kept per row and commit."""

    def __init__(self, state, wt, row):
        self.state, self.wt, self.row = state, wt, row
        self.dir = os.path.join(state, 'steps', row)
        self.logs = os.path.join(state, 'logs')
        os.makedirs(self.dir, exist_ok=True)
        os.makedirs(self.logs, exist_ok=True)
        tag = os.path.basename(state)
        self.build = os.path.join(top, 'build', 'bisect-' + tag)

    def path(self, commit):
        return os.path.join(self.dir, commit + '.json')

    def kept(self, commit):
        try:
            with open(self.path(commit), encoding='utf-8') as f:
                return json.load(f)
        except OSError:
            return None

    def env(self):
        env = dict(os.environ, KERNEL_SRC=self.wt, BUILD=self.build)
        env.pop('MAKEFLAGS', None)
        env.pop('MAKELEVEL', None)
        return env

    def play(self, commit):
        """The outcome of the row on commit, checked out in the worktree: kept, or built and
        played now."""
        out = self.kept(commit)
        if out:
            say('%s: %s (kept from an earlier run)' % (subject(self.wt, commit), describe(out)))
            return out
        say('%s: building' % subject(self.wt, commit))
        out = {'commit': commit, 'subject': subject(self.wt, commit), 'row': self.row}
        log = os.path.join(self.logs, commit + '.build.log')
        with open(log, 'w', encoding='utf-8') as f:
            p = subprocess.Popen(['make', '-C', top, '--no-print-directory', 'guest'],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 env=self.env())
            for line in lines_of(p):
                f.write(line)
                # Kbuild's progress and the build's own summary; the rest stays in the log.
                if line.startswith('kernel: '):
                    print('  ' + line.rstrip())
                    sys.stdout.flush()
            rc = finish(p)
        with open(log, encoding='utf-8', errors='replace') as f:
            lines = f.read().splitlines()
        # What this step's build compiled, as vm/build-kernel.sh wrote it in the tree it built
        # (none: it built nothing).
        out['compiled'] = None
        try:
            with open(os.path.join(self.build, 'linux', '.lab-compiled'), encoding='utf-8') as f:
                out['compiled'] = int(f.read())
        except (OSError, ValueError):
            pass
        if rc:
            errors = [line for line in lines if re.search(r'\berror\b', line)]
            out.update(kind='nobuild', why='does not build: %s (log: %s)'
                       % ((errors or lines or ['make failed'])[0].strip(), log))
        else:
            out.update(self.boot(commit))
        tmp = self.path(commit) + '.tmp'
        with open(tmp, 'w', encoding='utf-8') as f:
            json.dump(out, f, indent=1)
        os.replace(tmp, self.path(commit))
        say('%s: %s' % (out['subject'], describe(out)))
        return out

    def boot(self, commit):
        """One guest plays the row; what the kernel and the row's record say."""
        data = os.path.join(self.logs, commit + '.data')
        cmd = [os.path.join(top, 'vm/boot'), '--name', 'bisect-' + commit[:12], '--out', data,
               '--fails', data + '.fails']
        if not os.environ.get('VM_TIMEOUT'):
            cmd += ['--timeout', '600']
        # The disks make demo gives its guest (the step's build's, BUILD in its environment):
        # the rows that need one find it.
        cmd += ['--demo-disks', '--', '/lab/guest/play-row', self.row]
        p = subprocess.Popen(cmd, env=dict(self.env(), VM_QUIET='1'), stderr=subprocess.PIPE,
                             text=True)
        err = list(lines_of(p, p.stderr))
        finish(p)
        # vm/boot's failures (--fails: each reason, with the lines it quotes, NUL-ended).
        try:
            with open(data + '.fails', encoding='utf-8', errors='replace') as f:
                fails = [w.rstrip() for w in f.read().split('\0') if w.strip()]
        except OSError:
            fails = []
        if fails:
            return {'kind': 'kernel', 'why': '\n'.join(fails)}
        records = []
        try:
            with open(data, encoding='utf-8', errors='replace') as f:
                for line in f:
                    if line.startswith('{'):
                        records.append(json.loads(line))
        except (OSError, ValueError) as e:
            return {'kind': 'norun', 'why': 'its record could not be read: %s' % e}
        rec = [r for r in records if r.get('row') == self.row]
        if len(rec) != 1:
            return {'kind': 'norun', 'why': 'the guest gave %d records of the row (status %d): %s'
                    % (len(rec), p.returncode, ' '.join(''.join(err).split())[-300:])}
        rec = rec[0]
        if rec.get('status') in ('could-not-run', 'skipped') or not rec.get('observed'):
            return {'kind': 'norun', 'record': rec,
                    'why': 'the row %s: %s' % (rec.get('status'), rec.get('reason'))}
        return {'kind': 'verdict', 'verdict': rec['observed'], 'record': rec}


def describe(out):
    return {'verdict': lambda: out['verdict'],
            'nobuild': lambda: 'skip: ' + out['why'],
            'norun': lambda: 'skip: ' + out['why'],
            'kernel': lambda: 'the kernel failed (neither good nor bad): '
            + out['why'].splitlines()[0]}[out['kind']]()


def answer(out, good, bad):
    if out['kind'] == 'kernel':
        return 'kernel'
    if out['kind'] != 'verdict':
        return 'skip'
    return {good: 'good', bad: 'bad'}.get(out['verdict'], 'skip')


def show_record(out):
    rec = out.get('record')
    if not rec:
        return ['    (no record: %s)' % describe(out)]
    lines = ['    %s: observed %s, expected %s on %s (%s table), %s%s' % (
        rec.get('row'), rec.get('observed'), rec.get('expected'), rec.get('kernel'),
        rec.get('table'), rec.get('status'), ': ' + rec['reason'] if rec.get('reason') else '')]
    lines.append('    observations: ' + json.dumps(rec.get('observations'), sort_keys=True))
    return lines


def step():
    """One step of git bisect run, in the worktree: the answer for its HEAD."""
    state = os.environ['LAB_BISECT_STATE']
    row = os.environ['LAB_BISECT_ROW']
    wt = os.getcwd()
    commit = git(wt, 'rev-parse', 'HEAD').stdout.strip()
    out = Steps(state, wt, row).play(commit)
    a = answer(out, os.environ['LAB_BISECT_GOOD'], os.environ['LAB_BISECT_BAD'])
    say('%s: %s' % (commit[:12], a))
    return ANSWER[a]


def bisect_left(wt):
    """What git bisect has left in worktree wt, from its refs (not from what it printed): the bad
    commit, and the commits that may be the first bad one. The bad one alone: it is; with others,
    every one of them skipped: any of them may be; [] when some were never tested. (It mirrors
    git's own candidates: a bisect started with other terms, --first-parent or paths would need
    the same here.)"""
    goods = git(wt, 'for-each-ref', '--format=%(objectname)', 'refs/bisect/good-*').stdout.split()
    skips = set(git(wt, 'for-each-ref', '--format=%(objectname)',
                    'refs/bisect/skip-*').stdout.split())
    first = git(wt, 'rev-parse', 'refs/bisect/bad').stdout.strip()
    left = git(wt, 'rev-list', first, '--not', *goods).stdout.split()
    if len(left) > 1 and not (set(left) - {first}).issubset(skips):
        left = []
    return first, left


def drive(args):
    tree, row, good, bad = check_input(args)
    state = os.path.join(cache, 'bisect', '%s-%s' % (
        os.path.basename(tree), hashlib.sha1(tree.encode()).hexdigest()[:8]))
    os.makedirs(state, exist_ok=True)
    lock = open(os.path.join(state, '.lock'), 'w')
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise Error('another make bisect of %s is running (%s)' % (tree, state))
    wt = worktree(tree, state, good)
    steps = Steps(state, wt, row)
    say('row %s, GOOD %s, BAD %s' % (row, subject(tree, good), subject(tree, bad)))
    ends = []
    for what, c in (('GOOD', good), ('BAD', bad)):
        git(wt, 'checkout', '-q', '-f', '--detach', c)
        out = steps.play(c)
        if out['kind'] != 'verdict':
            raise Error('%s %s gives no verdict to bisect from: %s'
                        % (what, subject(tree, c), describe(out)))
        ends.append(out)
    if ends[0]['verdict'] == ends[1]['verdict']:
        raise Error('GOOD and BAD both give %s: no commit between them changed the verdict of %s'
                    % (ends[0]['verdict'], row))
    goodv, badv = ends[0]['verdict'], ends[1]['verdict']
    say('good is %s, bad is %s' % (goodv, badv))
    git(wt, 'bisect', 'start', bad, good)
    env = dict(GIT_ENV, LAB_BISECT_STATE=state, LAB_BISECT_ROW=row, LAB_BISECT_GOOD=goodv,
               LAB_BISECT_BAD=badv)
    p = subprocess.Popen(['git', 'bisect', 'run', sys.executable, os.path.abspath(__file__),
                          'step'], cwd=wt, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    said = []
    for line in lines_of(p):
        said.append(line)
        sys.stdout.write(line)
        sys.stdout.flush()
    rc = finish(p)
    text = ''.join(said)
    if text and not text.endswith('\n'):
        print()
    head = git(wt, 'rev-parse', 'HEAD').stdout.strip()
    status = 0
    first, left = bisect_left(wt)
    if rc == 0 and left == [first]:
        kept = steps.kept(first)
        if not kept or answer(kept, goodv, badv) != 'bad':
            raise Error('git bisect run named %s, but no step of the row answered bad there: '
                        'something else answered git bisect' % subject(tree, first))
        report = ['first commit where %s is %s, not %s: %s'
                  % (row, badv, goodv, subject(tree, first)),
                  '  %s (%s):' % (first, describe(kept))] + show_record(kept)
        for parent in git(tree, 'rev-list', '--parents', '-n', '1', first).stdout.split()[1:]:
            kept = steps.kept(parent)
            said = describe(kept) if kept else 'not played: an ancestor of a good commit'
            report.append('  its parent %s (%s):' % (parent, said))
            if kept:
                report += show_record(kept)
    elif steps.kept(head) and steps.kept(head)['kind'] == 'kernel':
        out = steps.kept(head)
        report = ['stopped at %s: the kernel failed there, neither %s nor %s (a third answer '
                  'git bisect cannot take):' % (subject(tree, head), goodv, badv)]
        report += ['    ' + line for line in out['why'].splitlines()]
        status = 3
    else:
        left = left if len(left) > 1 else []
        report = ['no single first commit: %s' % (
            'the commits that did not build or could not play the row hide it; it is one of:'
            if left else 'git bisect run ended with status %d' % rc)]
        report += ['  ' + subject(tree, c) for c in left]
        status = 4
    skipped = sorted(f[:-5] for f in os.listdir(steps.dir) if f.endswith('.json')
                     and answer(steps.kept(f[:-5]), goodv, badv) == 'skip'
                     and git(tree, 'merge-base', '--is-ancestor', good, f[:-5],
                             check=False).returncode == 0
                     and git(tree, 'merge-base', '--is-ancestor', f[:-5], bad,
                             check=False).returncode == 0)
    for c in skipped:
        report.append('skipped %s: %s' % (subject(tree, c), describe(steps.kept(c))))
    git(wt, 'bisect', 'reset', check=False)
    say(*report)
    return status


def main():
    if sys.argv[1:] == ['step']:
        # Any status from 1 to 127 but 125 is "bad" to git bisect: a step that breaks must stop
        # the bisect (255), not answer.
        try:
            return step()
        except KeyboardInterrupt:
            return 130
        except Exception:
            traceback.print_exc()
            return ANSWER['kernel']
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    for opt in ('tree', 'good', 'bad', 'row'):
        ap.add_argument('--' + opt, default='')
    try:
        return drive(ap.parse_args())
    except Error as e:
        print('bisect: %s' % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print('bisect: stopped; the steps finished so far are kept: the same command resumes '
              'from them', file=sys.stderr)
        return 130


if __name__ == '__main__':
    sys.exit(main())
