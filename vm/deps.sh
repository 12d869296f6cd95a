#!/usr/bin/env bash
# Install the Debian packages the lab needs, only when one is missing.
#   vm/deps.sh [lava]     lava: also what make lava and its check need
# The check is one dpkg-query call, so a machine that has everything pays no apt time.
set -euo pipefail

# The kernel's source, for a kernel of the registry (kernel-patches/<version>/; none for a user's tree,
# KERNEL_SRC), and the registry's newest kernel's, where cow.c comes from for a kernel older than
# 6.2 (vm/guest.mk: COW_TARBALL). rsync: the kernel's headers_install uses it. python3: make docs and the results
# formats read JSON with it, and vm/boot starts QEMU through it (prctl); python3-jsonschema: make test validates build/results/kcidb.json with it
# (tests/results.py). lz4: Kbuild compresses the guest's kernel with it (vm/kernel.config).
# shellcheck source=vm/lib.sh
. "$(dirname "$0")/lib.sh"
if [[ -z ${KERNEL_SRC:-} ]] && ! grep -qxF "$LAB_KERNEL" <<<"$(lab_kernels)"; then
	die "KERNEL=$LAB_KERNEL: the lab has no kernel-patches/$LAB_KERNEL/ (it has: $(lab_kernels | tr '\n' ' '))"
fi
pkgs=("linux-source-$LAB_NEWEST_KERNEL")
[[ -n ${KERNEL_SRC:-} || $LAB_KERNEL == "$LAB_NEWEST_KERNEL" ]] || pkgs+=("linux-source-$LAB_KERNEL")
# make lava (vm/deps.sh lava): LAVA's dispatcher, whose lava-run runs a job on a local QEMU
# device with no server (and python3-jinja2 and python3-yaml, which vm/lava.py uses, with it).
[[ ${1:-} != lava ]] || pkgs+=(lava-dispatcher)
pkgs+=(qemu-system-x86 busybox-static gcc make bc bison flex libelf-dev libssl-dev
      cpio xz-utils lz4 kmod git e2fsprogs rdma-core libibverbs-dev ibverbs-providers ibverbs-utils iproute2
      gnuplot-nox liburing-dev libjson-c-dev gdb rsync python3 python3-jsonschema)

missing=()
for p in "${pkgs[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[[ $status == ii* ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: apt-get not found; install these packages by hand: ${missing[*]}" >&2
	exit 1
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
	command -v sudo >/dev/null 2>&1 || { echo "deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
