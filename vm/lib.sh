# Shared settings for the vm/ scripts; sourced, not run.
# shellcheck shell=bash disable=SC2034 # the variables are used by the scripts that source this file

LAB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The kernel trees are large and regenerable: they live in a cache folder outside the repository.
LAB_CACHE=${DONTFORK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dontfork-lab}
# The kernel: Debian's linux-source-$KERNEL (6.1, the default, or 6.12) with kernel-patches/$KERNEL/.
# Each kernel and flavour (normal, debug, gdb) gets its own tree, and its own build folder: build/ for
# 6.1, build/6.12/ for 6.12, with debug/ or gdb/ below either.
LAB_KERNEL=${KERNEL:-6.1}
LAB_FLAVOUR=${FLAVOUR:-normal}
LAB_BUILD=$LAB_TOP/build
# Or a user's own tree (KERNEL_SRC=DIR, any tree >= 6.1): built out of tree (O=) into the cache, never
# written to, and not patched; its build folder is build/src-NAME-HASH (the same name as the Makefile's).
LAB_KSRC=""
if [[ -n ${KERNEL_SRC:-} ]]; then
	LAB_KSRC=$(cd "$KERNEL_SRC" 2>/dev/null && pwd -P) ||
		{ echo "${0##*/}: KERNEL_SRC=$KERNEL_SRC: no such directory" >&2; exit 1; }
	LAB_KERNEL=src
	LAB_BUILD+=/src-${LAB_KSRC##*/}-$(printf '%s' "$LAB_KSRC" | sha1sum | cut -c1-8)
else
	[[ $LAB_KERNEL == 6.1 ]] || LAB_BUILD+=/$LAB_KERNEL
fi
[[ $LAB_FLAVOUR == normal ]] || LAB_BUILD+=/$LAB_FLAVOUR
LAB_BUILD=${BUILD:-$LAB_BUILD}
LAB_KTREE=$LAB_BUILD/linux
LAB_TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-$LAB_KERNEL.tar.xz}
# The lab's Python: Debian's, whose packages vm/deps.sh installs (python3-jsonschema), named by its
# path, not found on PATH: a version manager's shim first on PATH (pyenv's) cost 80 ms of CPU at
# each start, against 16 ms, and make test starts Python about a hundred times (two per boot).
LAB_PYTHON=${LAB_PYTHON:-/usr/bin/python3}
# The O_DIRECT rows' disk: read-only, found by its serial. The rows hold their reads in flight with
# a gate of their own over it (liblab/gate.c), not with a throttle: no host load outlasts a gate.
LAB_ODIRECT_DISK=serial=odirect,readonly=on

# The kernel registry: a kernel is named by its folder kernel-patches/<version>/ (its series, its
# patches); deps, CI, the docs' kernels table and the guest's expectation table follow from it
# (kernel-patches/README.md: adding a kernel). Oldest first.
lab_kernels() {
	local d
	for d in "$LAB_TOP"/kernel-patches/*/; do
		d=${d%/}
		echo "${d##*/}"
	done | sort -V
}
# The build folder of registry kernel $1 (the default kernel's is build/ itself).
lab_build_of() {
	if [[ $1 == 6.1 ]]; then echo "$LAB_TOP/build"; else echo "$LAB_TOP/build/$1"; fi
}

die() {
	echo "${0##*/}: $*" >&2
	exit 1
}
