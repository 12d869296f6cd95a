#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make lava: a LAVA job definition per kernel and flavour of the registry, running make test's
in-guest suite on a LAVA QEMU device, and that device rendered for lava-run.

  vm/lava.py [--url BASE] [--out DIR]

For each kernel of the registry (kernel-patches/<version>/) and flavour (normal, debug), in
DIR/<kernel>[-<flavour>]/ (DIR: build/lava):
  job.yaml      deploy: the lab's kernel (bzImage) and initramfs, the guest's disks as make test
                attaches them with T= (the scratch disk, the disk whose writes fail under QEMU's
                blkdebug, the O_DIRECT image, read-only), each with the
                QEMU options vm/boot gives it; boot: QEMU with the kernel command line vm/boot gives
                (vm/lib.sh), lab.run=/lab/guest/lava-suite instead of vm/boot's overlay, LAVA
                waiting for /init's first line (loglevel=5 hides "Linux version"); test: a
                monitor reading guest/lava-suite's "lab-case RESULT NAME" lines, one LAVA test
                case per KTAP case, skips as skips.
  device.jinja2 the device dictionary a LAVA lab's admin adds for a QEMU worker without KVM.
  device.yaml   that dictionary rendered with Debian's lava-server qemu.jinja2 (lava-server is
                only downloaded and unpacked into the cache, never installed) and the job's
                context, as the server would render it: what lava-run --device takes.
  artifacts     the local file behind each URL of the job (publish them there for a real lab).
Nothing is built here: a job names its kernel's build folder (make test KERNEL=... FLAVOUR=...
builds it). URLs are file:// paths unless --url BASE (make lava LAVA_URL=BASE) names where the
artifacts are published: BASE/<kernel>[-<flavour>]/<file>.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import jinja2.sandbox
import yaml

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAVOURS = ('normal', 'debug')
# A line guest/init prints once the kernel runs /init: LAVA's kernel-start-message (the kernel's
# own "Linux version" is below the console's level), and the one after it, the boot's prompt.
START = 'dontfork-lab: /init at'
PROMPT = 'dontfork-lab: mounted at'
# guest/lava-suite's markers and result lines. A console line ends in \r\r\n under LAVA: the
# case name stops at the first \r.
SUITE_BEGINS = 'dontfork-lab: suite begins'
SUITE_ENDS = 'dontfork-lab: suite ends'
PATTERN = r'lab-case (?P<result>pass|fail|skip) (?P<test_case_id>[^\r\n]+)\r'
# The edu device at 64 bits, as make test boots it (vm/boot's VM_EDU_DMA_BITS default).
EDU_BITS = 64


def lab(kernel, flavour):
    """What vm/lib.sh says of a kernel and flavour: its build folder, the guest kernel's command
    line, and the QEMU drive options of the lab's disks."""
    env = {k: v for k, v in os.environ.items()
           if k not in ('BUILD', 'KERNEL_SRC', 'KERNEL', 'FLAVOUR')}
    env.update(KERNEL=kernel, FLAVOUR=flavour)
    script = ('. vm/lib.sh; printf "%s\\n" "$LAB_BUILD" "$(lab_kernel_append {})" '
              '"$LAB_ODIRECT_DISK"'.format(EDU_BITS))
    out = subprocess.run(['bash', '-c', script], cwd=top, env=env, check=True,
                         stdout=subprocess.PIPE, text=True).stdout.split('\n')
    return dict(zip(('build', 'append', 'odirect'), out))


def drive(n, image, opts=''):
    """QEMU's options for a disk as vm/boot attaches it: serial= belongs to the device, the rest
    to the drive."""
    dev = 'virtio-blk-pci,drive=disk%d' % n
    drv = []
    for o in filter(None, opts.split(',')):
        if o.startswith('serial='):
            dev += ',' + o
        else:
            drv.append(o)
    return '-drive file=%s,format=raw,if=none,id=disk%d%s -device %s' % (
        image, n, ''.join(',' + o for o in drv), dev)


def lava_server_templates():
    """The device-type templates of Debian's lava-server, of lava-dispatcher's version: unpacked
    from its package into the cache (apt-get download), never installed."""
    version = subprocess.run(['dpkg-query', '-W', '-f=${Version}', 'lava-dispatcher'],
                             stdout=subprocess.PIPE, text=True).stdout.strip()
    if not version:
        sys.exit('lava: lava-dispatcher is not installed (vm/deps.sh lava)')
    # The cache of kernel trees, as vm/lib.sh names it (the Makefile passes it on).
    cache = os.environ.get('LAB_CACHE') or sys.exit(
        'lava.py: LAB_CACHE is unset: run it as make lava')
    root = os.path.join(cache, 'lava-server-' + version)
    types = os.path.join(root, 'usr/share/lava-server/device-types')
    if not os.path.exists(os.path.join(types, 'qemu.jinja2')):
        os.makedirs(cache, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            subprocess.run(['apt-get', 'download', '-q', 'lava-server=' + version], cwd=tmp,
                           check=True)
            deb = glob.glob(os.path.join(tmp, 'lava-server_*.deb'))
            subprocess.run(['dpkg-deb', '-x', deb[0], os.path.join(tmp, 'x')], check=True)
            os.rename(os.path.join(tmp, 'x'), root)
    return types, version


def job(kernel, flavour, url):
    """The job definition of a kernel and flavour, and the local file behind each URL."""
    name = kernel + ('' if flavour == 'normal' else '-' + flavour)
    v = lab(kernel, flavour)
    b = v['build']
    files = {
        'kernel': os.path.join(b, 'linux/arch/x86/boot/bzImage'),
        'initrd': os.path.join(b, 'initramfs.cpio'),
        'disk': os.path.join(b, 'disk.img'),
        'eio': os.path.join(b, 'eio.img'),
        'blkdebug': os.path.join(top, 'vm/blkdebug-fail-writes.conf'),
        'odirect': os.path.join(b, 'odirect.img'),
    }
    append = '%s lab.run=/lab/guest/lava-suite' % v['append'].strip()
    args = {
        'kernel': '-kernel {kernel} -append "%s"' % append,
        'initrd': '-initrd {initrd}',
        # The disks in make test's order (tests/run-all, T=): the scratch disk is /dev/vda.
        'disk': drive(0, '{disk}'),
        'eio': drive(1, 'blkdebug:{blkdebug}:{eio}', 'serial=eio'),
        # Only a file for eio's blkdebug option: LAVA substitutes its path, adds no argument.
        'blkdebug': '',
        'odirect': drive(2, '{odirect}', v['odirect']),
    }

    def where(label):
        if url:
            return '%s/%s/%s' % (url.rstrip('/'), name, os.path.basename(files[label]))
        return 'file://' + files[label]
    slow = flavour != 'normal'
    definition = {
        'device_type': 'qemu',
        'job_name': 'dontfork-lab %s%s: make test\'s in-guest suite' % (
            kernel, '' if flavour == 'normal' else ' (%s)' % flavour),
        'visibility': 'public',
        'priority': 'medium',
        'timeouts': {'job': {'minutes': 240 if slow else 60},
                     'action': {'minutes': 180 if slow else 40},
                     'connection': {'minutes': 5}},
        'context': {
            'arch': 'amd64',
            'memory': 2048,
            # Two vCPUs: the programs whose threads race need them (make test gives them a guest
            # of two). No reboot: /init reboots once the suite is done.
            'extra_options': ['-smp 2', '-no-reboot',
                              '-device edu,dma_mask=%#x' % ((1 << EDU_BITS) - 1)],
        },
        'actions': [
            {'deploy': {'to': 'tmpfs', 'timeout': {'minutes': 10},
                        'images': {label: {'image_arg': args[label], 'url': where(label)}
                                   for label in files}}},
            {'boot': {'method': 'qemu', 'media': 'tmpfs', 'timeout': {'minutes': 15 if slow else 5},
                      'prompts': [PROMPT],
                      'parameters': {'kernel-start-message': START}}},
            {'test': {'timeout': {'minutes': 180 if slow else 40},
                      'monitors': [{'name': 'dontfork-lab', 'start': SUITE_BEGINS,
                                    'end': SUITE_ENDS, 'pattern': PATTERN}]}},
        ],
    }
    return name, definition, {where(label): path for label, path in files.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--url', default='')
    ap.add_argument('--out', default=os.path.join(top, 'build', 'lava'))
    args = ap.parse_args()
    types, version = lava_server_templates()
    kernels = subprocess.run(['bash', '-c', '. vm/lib.sh; lab_kernels'], cwd=top, check=True,
                             stdout=subprocess.PIPE, text=True).stdout.split()
    dictionary = ('{# A QEMU device for dontfork-lab: TCG, as the lab boots (no usable KVM). #}\n'
                  "{% extends 'qemu.jinja2' %}\n{% set no_kvm = True %}\n")
    for kernel in kernels:
        for flavour in FLAVOURS:
            name, definition, artifacts = job(kernel, flavour, args.url)
            out = os.path.join(args.out, name)
            os.makedirs(out, exist_ok=True)
            env = jinja2.sandbox.SandboxedEnvironment(
                loader=jinja2.FileSystemLoader(types), autoescape=False, trim_blocks=True)
            device = env.from_string(dictionary).render(**definition['context'])
            jobyaml = yaml.safe_dump(definition, sort_keys=False, width=1000)
            for f, text in (('job.yaml', jobyaml), ('device.jinja2', dictionary),
                            ('device.yaml', device),
                            ('artifacts', ''.join('%s %s\n' % kv for kv in artifacts.items()))):
                with open(os.path.join(out, f), 'w', encoding='utf-8') as fh:
                    fh.write(text)
            missing = [p for p in artifacts.values() if not os.path.exists(p)]
            print('lava: %s: job.yaml, device.yaml (qemu.jinja2 of lava-server %s)%s' % (
                os.path.relpath(out, top), version,
                '; not built yet: ' + ', '.join(os.path.relpath(p, top) for p in missing)
                if missing else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())
