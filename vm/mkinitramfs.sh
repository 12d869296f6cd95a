#!/usr/bin/env bash
# Build the base initramfs: busybox, guest/init, everything staged under $LAB_BUILD/guest (the lab's
# module, test and demo binaries), the kernel's modules ($LAB_BUILD/kmod), plus the shared libraries of any dynamic program staged there.
# The archive is written by the kernel's own usr/gen_init_cpio from a spec, so no root is needed for
# device nodes. Rebuilt only when the spec or a file it names changed.
set -euo pipefail
# shellcheck source=vm/lib.sh
. "$(dirname "$0")/lib.sh"

out=$LAB_BUILD/initramfs.cpio
stage=$LAB_BUILD/guest
busybox=${BUSYBOX:-/bin/busybox}
is_dynamic() { ldd "$1" >/dev/null 2>&1; }
gen=$LAB_BUILD/gen_init_cpio
[[ -x $busybox ]] || die "$busybox missing (package busybox-static)"
! is_dynamic "$busybox" || die "$busybox is not static (install busybox-static)"
# The tree's sources (for a user's tree built out of tree, the folder Kbuild links as source).
ksrc=$LAB_KTREE
[[ ! -f $LAB_KTREE/source/Makefile ]] || ksrc=$LAB_KTREE/source
[[ -f $ksrc/usr/gen_init_cpio.c ]] || die "no kernel tree at $LAB_KTREE; run vm/build-kernel.sh"
mkdir -p "$stage"
if [[ ! -x $gen || $gen -ot $ksrc/usr/gen_init_cpio.c ]]; then
	gcc -O2 -o "$gen" "$ksrc/usr/gen_init_cpio.c"
fi

spec=$(mktemp)
trap 'rm -f "$spec"' EXIT
declare -A dirs=()
adddir() {
	local d=$1
	while [[ $d != / && -z ${dirs[$d]:-} ]]; do
		dirs[$d]=1
		d=$(dirname "$d")
	done
}
addfile() { # guest-path host-path mode
	adddir "$(dirname "$1")"
	echo "file $1 $2 $3 0 0" >>"$spec"
}
declare -A libs=()
addlibs() { # host binary: copy the loader and libraries it needs, at their host paths
	local l
	while read -r l; do
		[[ -n $l && -z ${libs[$l]:-} ]] || continue
		libs[$l]=1
		addfile "$l" "$(readlink -f "$l")" 755
	done < <(ldd "$1" 2>/dev/null | grep -oE '/[^ ]+' || true)
}

for d in /dev /proc /sys /tmp /root /etc /lab/bin /lab/modules; do adddir "$d"; done
echo "nod /dev/console 600 0 0 c 5 1" >>"$spec"
echo "nod /dev/null 666 0 0 c 1 3" >>"$spec"
addfile /bin/busybox "$busybox" 755
addfile /init "$LAB_TOP/guest/init" 755
addfile /etc/passwd "$LAB_TOP/vm/passwd" 644
addfile /etc/group "$LAB_TOP/vm/group" 644
while IFS= read -r -d '' f; do
	rel=/${f#"$stage"/}
	mode=644
	[[ -x $f ]] && mode=755
	addfile "$rel" "$f" "$mode"
	if [[ $mode == 755 ]] && is_dynamic "$f"; then
		addlibs "$f"
	fi
done < <(find "$stage" -type f -print0 | sort -z)
# The kernel tree's modules, as modules_install laid them out (vm/guest.mk).
kmod=$LAB_BUILD/kmod
if [[ -d $kmod/lib/modules ]]; then
	while IFS= read -r -d '' f; do
		addfile "/${f#"$kmod"/}" "$f" 644
	done < <(find "$kmod/lib/modules" -type f -print0 | sort -z)
fi
# Extra host files that the guest needs at their host paths (e.g. rdma-core's provider drivers).
if [[ -f $stage.extra ]]; then
	while read -r f; do
		[[ -n $f ]] || continue
		[[ -e $f ]] || die "$f (listed in $stage.extra) missing"
		mode=644
		[[ -x $f ]] && mode=755
		addfile "$f" "$(readlink -f "$f")" "$mode"
		if is_dynamic "$f"; then addlibs "$f"; fi
	done <"$stage.extra"
fi
for d in "${!dirs[@]}"; do echo "dir $d 755 0 0"; done | sort >"$spec.dirs"
cat "$spec" >>"$spec.dirs"
mv "$spec.dirs" "$spec"

stale=0
if [[ ! -f $out || ! -f $out.spec ]] || ! cmp -s "$spec" "$out.spec"; then
	stale=1
else
	while read -r kind _ host _; do
		[[ $kind == file && $host -nt $out ]] && { stale=1; break; }
	done <"$spec"
fi
[[ $stale == 1 ]] || exit 0
"$gen" "$spec" >"$out.tmp"
mv "$out.tmp" "$out"
cp "$spec" "$out.spec"
echo "initramfs: $out ($(($(stat -c %s "$out") / 1024)) KiB)"
