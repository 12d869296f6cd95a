#!/usr/bin/env bash
# LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT on a DAX file (kernel-patches/0001): they write back
# as sync_file_range() does, where the other fadvise commands ignore DAX files. The guest boots with
# an emulated pmem region (memmap=SIZE!START marks part of its RAM persistent: /dev/pmem0), copies an
# ext4 image onto it, mounts it -o dax and counts, through the fs_dax tracepoints, the pages each call
# writes back (tests/helpers/fadvise_dax.c, whose TAP this prints).
# Prints TAP. Needs the built lab (make guest).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
cases=5
echo "TAP version 13"
echo "1..$cases"
why=""
if ! grep -q '^LAB_SERIES_PATCHES=.*0001-' "$build/kernel.env" 2>/dev/null; then
	why="this kernel lacks kernel-patches/.../0001: LINUX_FADV_ASYNC_WRITE"
elif ! grep -qx 'CONFIG_FS_DAX=y' "$build/linux/.config"; then
	why="this kernel has no CONFIG_FS_DAX (vm/kernel.config sets it; a user's tree may not)"
fi
if [[ -n $why ]]; then
	for i in $(seq "$cases"); do echo "ok $i # SKIP $why"; done
	exit 0
fi
# 32 MiB of ext4 with 4 KiB blocks (DAX needs the page size), copied onto the 128 MiB pmem region at
# 1 GiB of the guest's 2 GiB.
img=$build/dax.img
if [[ ! -f $img ]]; then
	truncate -s 32M "$img.tmp"
	/sbin/mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$img.tmp"
	mv "$img.tmp" "$img"
fi
# Its results on the data channel, which the console's kernel messages never interleave.
log=$build/logs/fadvise-dax.data
rc=0
# Nothing here uses RDMA: the boots load only the lab's modules (vm/boot).
export VM_KMODS=lab
# shellcheck disable=SC2016 # $LAB_OUT is the guest shell's
VM_APPEND="${VM_APPEND:-} memmap=128M!1G" "$top/vm/boot" --name fadvise-dax --timeout "${VM_TIMEOUT:-600}" \
	--out "$log" --disk "$img,serial=dax,readonly=on" -- \
	sh -c '/lab/bin/fadvise_dax >"$LAB_OUT" 2>&1' >/dev/null 2>&1 || rc=$?
tr -d '\r' <"$log" | grep -aE '^(not )?ok [0-9]+ |^# fadvise_dax' || true
if [[ $rc != 0 ]]; then
	echo "# the guest run failed with status $rc ($log, console in $build/logs/fadvise-dax.log)"
	exit 1
fi
