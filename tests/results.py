#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""What CI systems read of a make test, in build/results/ (docs/tests.md, Results for CI systems):
  results.ktap  the KTAP as make test printed it, line by line as it ran (start());
  junit.xml     JUnit XML: a <testsuite> per program, a <testcase> per case; a program's own
                failure (a crash, bad KTAP), a stale skip budget entry, a run that judged nothing
                and a failed check of these files are failed testcases too, so that the counts
                are the closing line's: tests, failures, and skipped (skips and xfails);
  kcidb.json    a KCIDB I/O submission (schema 5.x): the checkout, the build, a test per program
                (dontfork_lab.<program>) and one per case (dontfork_lab.<program>.<case>).
Both documents are checked once written, from the files (check()): a failed check fails the run.

  results.py write DATA DIR [STALE...]   judge the programs of a data channel (vm/boot --out) as
                                         make test does and write the documents into DIR
  results.py check DIR "CLOSING LINE"    check DIR's documents against a closing line
                                         ("N passed, N failed[, N skipped][, N xfail]"); exit 1
                                         with the reasons when they do not hold
"""
import datetime
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ET

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(top, 'tests'))
import ktap  # noqa: E402

ORIGIN = 'dontfork_lab'
SCHEMA = os.path.join(top, 'tests', 'kcidb.schema.json')
# The oldest 5.x schema that has every field the lab sends, so that any 5.x instance takes it.
KCIDB_VERSION = {'major': 5, 'minor': 0}
# KCIDB's summary order: a program's test takes the first of these its cases have.
PRIORITY = ['FAIL', 'ERROR', 'MISS', 'PASS', 'DONE', 'SKIP']
# KCIDB has no xfail. An xfail here is a fault of the kernel under test that the lab knows (cow.c's
# vmsplice() leak on hugetlb, tests/cow-known.txt): the test ran and found the code faulty, which is
# KCIDB's FAIL; misc.lab_status says "xfail", for triage with KCIDB's issues. JUnit, which CI jobs
# gate on, marks it skipped (type "xfail"), as make test does not fail on it.
KCIDB_STATUS = {'pass': 'PASS', 'fail': 'FAIL', 'skip': 'SKIP', 'xfail': 'FAIL'}
EXCERPT = 16384
# What XML 1.0 cannot hold (and JSON strings for KCIDB must not: NUL): a program may print anything.
NOT_XML = re.compile('[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]')
NOT_PATH = re.compile(r'[^A-Za-z0-9_-]+')
CLOSING = re.compile(r'^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?(?:, (\d+) xfail)?$')


def start(outdir):
    """make test's hook as it starts: the last run's documents go (a run that dies before it writes
    its own must leave none for CI to take as this run's), and everything printed from here on also
    goes to results.ktap, a line at a time."""
    for name in ('junit.xml', 'kcidb.json'):
        if os.path.exists(os.path.join(outdir, name)):
            os.unlink(os.path.join(outdir, name))
    sys.stdout = _Tee(sys.stdout, open(os.path.join(outdir, 'results.ktap'), 'w',
                                       encoding='utf-8', buffering=1))


class _Tee:
    def __init__(self, out, copy):
        self.out, self.copy = out, copy

    def write(self, s):
        self.copy.write(s)
        return self.out.write(s)

    def flush(self):
        self.copy.flush()
        self.out.flush()

    def __getattr__(self, name):
        return getattr(self.out, name)


def clean(text):
    return NOT_XML.sub('\ufffd', text)


class Outcome:
    """One line of the closing count: a case, or a failure that is not a case."""

    def __init__(self, program, name, status, message, lines, seconds=None):
        self.program, self.name, self.status = program, clean(name), status
        self.message, self.lines, self.seconds = clean(message), [clean(x) for x in lines], seconds


def outcomes(programs, failures):
    """Per program (name, seconds, host or not) its outcomes, in the run's order. failures:
    (pseudo program, name, why) for what the closing line counts failed besides programs."""
    out = []
    for p in programs:
        mine = []
        for c in p.cases:
            status = 'fail' if c.problems else c.status
            if status == 'fail':
                # Why, as the judge or the program said it: a failed expectation, else its last
                # diagnostic line.
                said = [x.lstrip('# ') for x in c.block if ktap.EXPECT_FAILED.match(x)] or \
                    [x.lstrip('# ') for x in c.block if x.startswith('#') and x.strip('# ')][-1:]
                message = '; '.join(c.problems) or (said[0] if said else 'not ok')
            else:
                message = c.reason
            mine.append(Outcome(p.name, c.name, status, message,
                                c.block + ['# ' + x for x in c.problems], c.seconds))
        for i, problem in enumerate(p.problems):
            # The program's own failure, with its whole output: the diagnostics of what went wrong.
            mine.append(Outcome(p.name, 'program' if i == 0 else 'program %d' % (i + 1), 'fail',
                                problem, p.lines + ['# ' + problem]))
        out.append((p.name, p.seconds, p.host, mine))
    extra = {}
    for program, name, why in failures:
        extra.setdefault(program, []).append(Outcome(program, name, 'fail', why, ['# ' + why]))
    out.extend((program, None, True, mine) for program, mine in extra.items())
    return out


def component(name):
    """A program's name as one KCIDB path component (its dots too: "cow_test.sh" is one program)."""
    return NOT_PATH.sub('_', name).strip('_') or 'unnamed'


def case_path(name, number):
    """A case's name as KCIDB path components: the harness's fixture.variant.name keeps its dots
    (a level each); any other name is flattened into one component; "*" (every case of a program
    that skipped as a whole) is all_cases."""
    if name == '*':
        return 'all_cases'
    parts = name.split('.')
    if all(p and not NOT_PATH.search(p) for p in parts):
        return name
    return NOT_PATH.sub('_', name).strip('_') or 'case_%d' % number


def unique(path, taken):
    """path, or path-2, path-3...: names that differ only in what the path drops stay apart."""
    n, candidate = 1, path
    while candidate in taken:
        n += 1
        candidate = '%s-%d' % (path, n)
    taken.add(candidate)
    return candidate


def _git(tree, *args):
    try:
        return subprocess.run(['git', '-C', tree] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ''


def _read(path):
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return f.read()
    except OSError:
        return ''


def _sha256(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def facts(build, env, flavour, run):
    """What the documents say of the kernel: its checkout and its build, as far as known."""
    kernel = env.get('LAB_KERNEL', '?')
    version = env.get('LAB_VERSION', '')
    tree = os.path.join(build, 'linux')
    compile_h = _read(os.path.join(tree, 'include', 'generated', 'compile.h'))
    m = re.search(r'#define LINUX_COMPILER\s+"(.*)"', compile_h)
    compiler = m.group(1) if m else ''
    m = re.search(r'#define UTS_MACHINE\s+"(.*)"', compile_h)
    arch = m.group(1) if m else 'x86_64'
    fragments = ['tinyconfig', 'kernel.config'] + ([] if flavour == 'normal' else
                                                   ['kernel-%s.config' % flavour])
    checkout = {'misc': {'kernel_version': version}}
    if kernel == 'src':
        ksrc = os.path.realpath(os.environ.get('KERNEL_SRC', ''))
        checkout['tree_name'] = os.path.basename(ksrc)
        checkout['comment'] = 'Linux %s, a tree of its own (KERNEL_SRC=%s), not patched' % (
            version, ksrc)
        checkout['misc']['kernel_src'] = ksrc
        # Its commit only when the tree is the top of a git work tree: inside some other
        # repository, rev-parse would answer that repository's commit.
        if ksrc and os.path.realpath(_git(ksrc, 'rev-parse', '--show-toplevel') or '/') == ksrc:
            commit = _git(ksrc, 'rev-parse', 'HEAD')
            if re.match(r'^[0-9a-f]{40}$', commit):
                checkout['git_commit_hash'] = commit
                name = _git(ksrc, 'describe', '--tags', 'HEAD')
                if name:
                    checkout['git_commit_name'] = name
                checkout['misc']['git_dirty'] = bool(_git(ksrc, 'status', '--porcelain',
                                                          '--untracked-files=no'))
        key = checkout.get('git_commit_hash') or hashlib.sha256(ksrc.encode()).hexdigest()[:16]
        if checkout['misc'].get('git_dirty', True):
            # What the tree holds is no commit: a checkout of this run alone, since KCIDB merges
            # the objects of one id.
            key += '-' + run
        checkout['id'] = '%s:src-%s' % (ORIGIN, key)
    else:
        package = 'linux-source-%s' % kernel
        pkg_version = ''
        try:
            pkg_version = subprocess.run(['dpkg-query', '-W', '-f=${Version}', package],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True).stdout.strip()
        except OSError:
            pass
        patches = env.get('LAB_SERIES_PATCHES', '').split()
        series = os.path.join(top, env.get('LAB_SERIES', 'kernel-patches/%s' % kernel))
        # KCIDB's patchset hash: sha256 over the newline-terminated sha256 of each patch, in order.
        sums = ''.join(_sha256(os.path.join(series, p)) + '\n' for p in patches)
        patchset = hashlib.sha256(sums.encode()).hexdigest() if patches else ''
        checkout['tree_name'] = 'debian-%s' % package
        checkout['patchset_hash'] = patchset
        checkout['comment'] = 'Linux %s from Debian\'s %s %s with %s' % (
            version, package, pkg_version, ', '.join(patches) or 'no patch')
        checkout['misc'].update({'source_package': package, 'package_version': pkg_version,
                                 'patches': patches})
        checkout['id'] = '%s:%s-%s-%s' % (ORIGIN, package, pkg_version or version,
                                          patchset[:16] or 'unpatched')
    checkout['origin'] = ORIGIN
    # The same checkout built by the same compiler from the same fragments is the same build (the
    # tree's own .lab-built cannot say: plants.sh rebuilds the tree with a planted file in the run).
    config = hashlib.sha256(('%s %s %s\n' % (checkout['id'], flavour, compiler) + ''.join(
        _read(os.path.join(top, 'vm', f)) for f in fragments[1:])).encode()).hexdigest()[:16]
    build = {
        'checkout_id': checkout['id'],
        'id': '%s:%s-%s-%s' % (ORIGIN, kernel, flavour, config),
        'origin': ORIGIN,
        'architecture': arch,
        'config_name': '+'.join(fragments),
        'command': 'make test%s%s' % ('' if kernel in (default_kernel(), 'src') else
                                      ' KERNEL=' + kernel,
                                      '' if flavour == 'normal' else ' FLAVOUR=' + flavour),
        'status': 'PASS',
        'misc': {'flavour': flavour, 'kernel': kernel,
                 'config_fragments': ['vm/' + f for f in fragments[1:]]},
    }
    if kernel == 'src':
        build['command'] += ' KERNEL_SRC=' + checkout['misc']['kernel_src']
    if compiler:
        build['compiler'] = compiler
    return checkout, build


def junit(groups, kernel):
    """The JUnit XML document of the outcomes."""
    root = ET.Element('testsuites', name=ORIGIN)
    total = {'tests': 0, 'failures': 0, 'skipped': 0, 'time': 0.0}
    for program, seconds, host, mine in groups:
        suite = ET.SubElement(root, 'testsuite', name=program)
        props = ET.SubElement(suite, 'properties')
        ET.SubElement(props, 'property', name='kernel', value=kernel)
        ET.SubElement(props, 'property', name='side', value='host' if host else 'guest')
        count = {'tests': 0, 'failures': 0, 'skipped': 0}
        for o in mine:
            case = ET.SubElement(suite, 'testcase', name=o.name,
                                 classname='%s.%s' % (ORIGIN, component(program)))
            if o.seconds is not None:
                case.set('time', '%.3f' % o.seconds)
            count['tests'] += 1
            if o.status == 'fail':
                count['failures'] += 1
                failure = ET.SubElement(case, 'failure', message=o.message)
                failure.text = '\n'.join(o.lines)
            elif o.status in ('skip', 'xfail'):
                count['skipped'] += 1
                ET.SubElement(case, 'skipped', message=o.message, type=o.status)
        for k, v in count.items():
            suite.set(k, str(v))
            total[k] += v
        suite.set('errors', '0')
        if seconds is not None:
            suite.set('time', '%.3f' % seconds)
            total['time'] += seconds
    for k in ('tests', 'failures', 'skipped'):
        root.set(k, str(total[k]))
    root.set('errors', '0')
    root.set('time', '%.3f' % total['time'])
    ET.indent(root)
    return ET.ElementTree(root)


def kcidb(groups, checkout, build, run):
    """The KCIDB submission of the outcomes: a test per program, one per outcome below it."""
    tests, taken = [], set()

    def test(path, status, comment, lines, seconds, misc):
        t = {'build_id': build['id'], 'id': '%s:%s:%s' % (ORIGIN, run, path), 'origin': ORIGIN,
             'path': path, 'status': status, 'comment': clean(comment), 'misc': misc}
        if seconds is not None:
            t['duration'] = round(seconds, 3)
        excerpt = '\n'.join(lines)
        if excerpt:
            # The end of the output tells most: keep its last characters.
            t['log_excerpt'] = excerpt[-EXCERPT:]
        tests.append(t)
        return t

    for program, seconds, host, mine in groups:
        base = unique('%s.%s' % (ORIGIN, component(program)), taken)
        summary = test(base, 'SKIP', program, [], seconds,
                       {'program': program, 'side': 'host' if host else 'guest'})
        statuses = []
        for i, o in enumerate(mine, 1):
            status = KCIDB_STATUS[o.status]
            statuses.append(status)
            lines = o.lines if o.status == 'fail' else [o.message] if o.message else []
            test(unique('%s.%s' % (base, case_path(o.name, i)), taken), status, o.name, lines,
                 o.seconds, {'program': program, 'case': o.name, 'lab_status': o.status,
                             'reason': o.message})
        summary['status'] = min(statuses, key=PRIORITY.index) if statuses else 'MISS'
    return {'version': dict(KCIDB_VERSION), 'checkouts': [checkout], 'builds': [build],
            'tests': tests}


def write(outdir, programs, failures, env, flavour, build_dir):
    """Write junit.xml and kcidb.json of the programs and failures into outdir."""
    groups = outcomes(programs, failures)
    run = '%s-%s' % (datetime.datetime.now(datetime.timezone.utc).strftime('%Y%m%dT%H%M%SZ'),
                     uuid.uuid4().hex[:8])
    checkout, build = facts(build_dir, env, flavour, run)
    build['misc']['host'] = socket.gethostname()
    doc = junit(groups, env.get('LAB_VERSION', env.get('LAB_KERNEL', '?')))
    tmp = os.path.join(outdir, 'junit.xml.tmp')
    doc.write(tmp, encoding='utf-8', xml_declaration=True)
    os.replace(tmp, os.path.join(outdir, 'junit.xml'))
    tmp = os.path.join(outdir, 'kcidb.json.tmp')
    with open(tmp, 'w', encoding='utf-8') as f:
        json.dump(kcidb(groups, checkout, build, run), f, indent=1, ensure_ascii=False)
        f.write('\n')
    os.replace(tmp, os.path.join(outdir, 'kcidb.json'))


def check_junit(path, closing):
    """junit.xml, read back: it parses, and its counts, as its attributes state them and as its
    testcases are, are the closing line's."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        return ['junit.xml does not parse: %s' % e]
    if root.tag != 'testsuites':
        return ['junit.xml: the root is <%s>, not <testsuites>' % root.tag]
    want = {'tests': sum(closing.values()), 'failures': closing['fail'],
            'skipped': closing['skip'] + closing['xfail'], 'errors': 0}
    problems = []

    def counted(elements):
        cases = [c for s in elements for c in s.iter('testcase')]
        return {'tests': len(cases),
                'failures': sum(1 for c in cases if c.find('failure') is not None),
                'skipped': sum(1 for c in cases if c.find('skipped') is not None),
                'errors': sum(1 for c in cases if c.find('error') is not None)}

    def stated(e, what):
        try:
            return {k: int(e.get(k)) for k in want}
        except (TypeError, ValueError):
            problems.append('junit.xml: %s lacks a count of %s' % (what, ', '.join(want)))
            return None

    have = counted([root])
    for k, v in want.items():
        if have[k] != v:
            problems.append('junit.xml holds %d testcases of %s, the closing line says %d'
                            % (have[k], k, v))
    claims = [(root, 'the <testsuites>', have)]
    claims += [(s, 'testsuite %s' % s.get('name'), counted([s])) for s in root.iter('testsuite')]
    for e, what, real in claims:
        says = stated(e, what)
        for k in want:
            if says is not None and says[k] != real[k]:
                problems.append('junit.xml: %s says %s="%d", its testcases are %d'
                                % (what, k, says[k], real[k]))
    for s in root.iter('testsuite'):
        for c in s.iter('testcase'):
            if not c.get('name') or not (c.get('classname') or '').startswith(ORIGIN + '.'):
                problems.append('junit.xml: a testcase of %s without its name or classname %s.*'
                                % (s.get('name'), ORIGIN))
                break
    return problems


def check_kcidb(path, closing, schema_path=SCHEMA):
    """kcidb.json, read back: valid by the lab's KCIDB schema, one checkout and one build that the
    tests name, every test with a unique path and a status, and one test per case, their statuses
    the closing line's."""
    try:
        with open(path, encoding='utf-8') as f:
            doc = json.load(f)
        with open(schema_path, encoding='utf-8') as f:
            schema = json.load(f)
    except (OSError, ValueError) as e:
        return ['kcidb.json: cannot read it or the schema: %s' % e]
    try:
        import jsonschema
    except ImportError:
        return ['kcidb.json: python3-jsonschema is missing (vm/deps.sh installs it)']
    validator = jsonschema.validators.validator_for(schema)
    try:
        validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        return ['%s is no valid JSON schema: %s' % (os.path.relpath(schema_path, top), e.message)]
    errors = sorted(validator(schema).iter_errors(doc), key=lambda e: list(e.absolute_path))
    problems = ['kcidb.json: %s: %s' % ('/'.join(map(str, e.absolute_path)) or '(top)', e.message)
                for e in errors[:10]]
    if len(errors) > 10:
        problems.append('kcidb.json: %d more schema errors' % (len(errors) - 10))
    if problems or not isinstance(doc, dict):
        return problems
    checkouts, builds = doc.get('checkouts', []), doc.get('builds', [])
    tests = doc.get('tests', [])
    if len(checkouts) != 1 or len(builds) != 1:
        return ['kcidb.json: %d checkouts and %d builds, not one each'
                % (len(checkouts), len(builds))]
    if builds[0].get('checkout_id') != checkouts[0].get('id'):
        problems.append('kcidb.json: the build names checkout %s, not the checkout %s'
                        % (builds[0].get('checkout_id'), checkouts[0].get('id')))
    paths = [t.get('path') for t in tests]
    if any(t.get('build_id') != builds[0].get('id') for t in tests):
        problems.append('kcidb.json: a test names a build other than %s' % builds[0].get('id'))
    if any(p is None or 'status' not in t for p, t in zip(paths, tests)):
        problems.append('kcidb.json: a test without a path or a status')
        return problems
    if len(set(paths)) != len(paths) or len({t['id'] for t in tests}) != len(tests):
        problems.append('kcidb.json: two tests share a path or an id')
    # dontfork_lab.<program> is a program; below it, each case (a program's name is one component).
    cases = [t for t in tests if t['path'].count('.') >= 2]
    if any(not t['path'].startswith(ORIGIN + '.') for t in tests):
        problems.append('kcidb.json: a test outside %s.*' % ORIGIN)
    want = {'PASS': closing['pass'], 'FAIL': closing['fail'] + closing['xfail'],
            'SKIP': closing['skip']}
    if len(cases) != sum(closing.values()):
        problems.append('kcidb.json holds %d case tests, the closing line counts %d'
                        % (len(cases), sum(closing.values())))
    for status, n in want.items():
        have = sum(1 for t in cases if t['status'] == status)
        if have != n:
            problems.append('kcidb.json holds %d case tests %s, the closing line says %d'
                            % (have, status, n))
    xfail = sum(1 for t in cases if t.get('misc', {}).get('lab_status') == 'xfail')
    if xfail != closing['xfail']:
        problems.append('kcidb.json holds %d xfail cases, the closing line says %d'
                        % (xfail, closing['xfail']))
    return problems


def check(outdir, closing):
    """Both documents in outdir against the closing line's counts (pass, fail, skip, xfail)."""
    return (check_junit(os.path.join(outdir, 'junit.xml'), closing)
            + check_kcidb(os.path.join(outdir, 'kcidb.json'), closing))


def default_kernel():
    """The kernel make test plays without KERNEL=: the registry's oldest, as vm/lib.sh reads the
    registry (the Makefile passes its list on as LAB_KERNELS)."""
    kernels = os.environ.get('LAB_KERNELS') or subprocess.run(
        ['bash', '-c', '. "$0" && echo "$LAB_KERNELS"', os.path.join(top, 'vm/lib.sh')],
        stdout=subprocess.PIPE, text=True, check=True).stdout
    return kernels.split()[0]


def failures_of(run):
    """The run's own failures (ktap.run_problems), as the documents' cases of the run."""
    return [('run', p.code, p.text) for p in run]


def publish(build_dir, programs, run, totals, env, flavour):
    """make test's hook, once its totals are known: write the documents into build/results/ and
    check them from the files. Returns the failed checks, each one more failure of the run (and
    written into the documents, so that they count what the closing line will)."""
    outdir = os.path.join(build_dir, 'results')
    failures = failures_of(run)
    try:
        write(outdir, programs, failures, env, flavour, build_dir)
        problems = check(outdir, totals)
    except Exception as e:  # a writer's bug fails the run; the run still closes
        problems = ['writing build/results/ failed: %s: %s' % (type(e).__name__, e)]
    if problems:
        try:
            write(outdir, programs, failures + [('results', 'check', p) for p in problems],
                  env, flavour, build_dir)
        except Exception:  # already counted as failed
            pass
    return problems


def parse_closing(line):
    m = CLOSING.match(line.strip())
    if not m:
        raise SystemExit('not a closing line: %r' % line)
    return dict(zip(('pass', 'fail', 'skip', 'xfail'), (int(g or 0) for g in m.groups())))


def main(argv):
    if len(argv) >= 3 and argv[0] == 'write':
        build_dir = os.environ.get('BUILD') or os.path.join(top, 'build')
        env = {}
        for line in _read(os.path.join(build_dir, 'kernel.env')).splitlines():
            k, _, v = line.partition('=')
            env[k] = v.strip('"')
        with open(argv[1], encoding='utf-8', errors='replace') as f:
            programs = [ktap.program_of(frame) for frame in ktap.frames(f.read())]
        os.makedirs(argv[2], exist_ok=True)
        stale = [ktap.RunProblem('skip_budget_stale', 'skip budget: ' + s) for s in argv[3:]]
        write(argv[2], programs, failures_of(stale), env,
              os.environ.get('FLAVOUR', 'normal'), build_dir)
        return 0
    if len(argv) == 3 and argv[0] == 'check':
        problems = check(argv[1], parse_closing(argv[2]))
        for p in problems:
            print(p)
        return 1 if problems else 0
    print(__doc__.split('\n\n')[-1].rstrip(), file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
