#!/usr/bin/python3
"""vm/boot's wait for its guest vCPU slots (VM_SLOTS), in one process.

    slots.py PID WANT RUN_DIR MARK QUIET FD...

FD... are vm/boot's open descriptors of RUN_DIR/slot.1 to slot.N. Locks WANT of them (flock, on
vm/boot's own open files, so that they stay held once this exits, for as long as vm/boot and its
QEMU keep them open), or none, and prints the descriptors it locked. MARK is this run's
RUN_DIR/first.PID when it goes first (VM_SLOT_FIRST), else empty: a run without one takes no slot
while another run's mark is locked; a mark nobody locks (its run was killed) is stale and goes.
QUIET (VM_QUIET) non-empty: no word about waiting. PID is vm/boot's: once it is gone (killed), this
stops waiting. Every other descriptor it inherits (vm/boot's disk locks, its mark) is closed first.

The same loop in vm/boot's shell ran flock(1) once per slot and sleep(1) at each turn, spending CPU
all the time make test's boots waited.
"""
import fcntl
import glob
import os
import random
import sys
import time


def others_first(run):
    """Whether a run's mark is locked (it goes first); stale marks are removed."""
    for f in glob.glob(os.path.join(run, 'first.*')):
        try:
            fd = os.open(f, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass
    return False


def started(pid):
    """PID's start time (in clock ticks since boot), or None once it is gone or a zombie."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None if fields[0] == 'Z' else fields[19]


def main():
    pid, want, run, mine, quiet = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], \
        sys.argv[5]
    fds = [int(fd) for fd in sys.argv[6:]]
    for fd in os.listdir('/proc/self/fd'):
        if int(fd) > 2 and int(fd) not in fds:
            try:
                os.close(int(fd))
            except OSError:
                pass
    said, since = False, started(pid)
    while True:
        # Gone, a zombie not yet reaped, or its PID another process's now.
        if since is None or started(pid) != since:
            return 1
        # A run marked first looks at no mark: its own is locked.
        if mine or not others_first(run):
            held = []
            for fd in fds:
                if len(held) == want:
                    break
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    held.append(fd)
                except BlockingIOError:
                    pass
            if len(held) == want:
                print(' '.join(str(fd) for fd in held))
                return 0
            # Not all of them: none, so that two guests never hold half each.
            for fd in held:
                fcntl.flock(fd, fcntl.LOCK_UN)
        if not said and not quiet:
            print('vm/boot: waiting for %d of %d guest vCPU slots (VM_SLOTS)' % (want, len(fds)),
                  file=sys.stderr)
            said = True
        time.sleep(random.choice((0.1, 0.2, 0.3)))


if __name__ == '__main__':
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
