#!/usr/bin/env bash
# Build the lab kernel from Debian's linux-source-$KERNEL tarball plus kernel-patches/$KERNEL/series.
#
# The tree lives in $LAB_CACHE/linux-<package version>-<hash>, where the hash covers the patch series and
# the config fragment(s): changing either gives a fresh tree, so a stale tree is never used. A tree that
# finished building is final; a second call only relinks $LAB_BUILD/linux and returns.
set -euo pipefail
# shellcheck source=vm/lib.sh
. "$(dirname "$0")/lib.sh"

fragments=("$LAB_TOP/vm/kernel.config")
[[ $LAB_FLAVOUR == normal ]] || fragments+=("$LAB_TOP/vm/kernel-$LAB_FLAVOUR.config")
for f in "${fragments[@]}"; do
	[[ -f $f ]] || die "no config fragment $f for flavour '$LAB_FLAVOUR'"
done
[[ -f $LAB_TARBALL ]] || die "$LAB_TARBALL missing (package linux-source-$LAB_KERNEL; run vm/deps.sh)"

patchdir=$LAB_TOP/kernel-patches/$LAB_KERNEL
series=$patchdir/series
[[ -f $series ]] || die "no $series: the lab has a series for $(cd "$LAB_TOP/kernel-patches" && echo */ | tr -d /)"
patches=()
if [[ -f $series ]]; then
	while read -r p; do
		p=${p%%#*}
		p=${p//[[:space:]]/}
		[[ -n $p ]] && patches+=("$patchdir/$p")
	done <"$series"
fi

version=$(dpkg-query -W -f='${Version}' "linux-source-$LAB_KERNEL" 2>/dev/null ||
	stat -c '%s-%Y' "$LAB_TARBALL")
hash=$( (echo "$LAB_FLAVOUR"; cat "${fragments[@]}"; for p in "${patches[@]}"; do
	[[ -f $p ]] || die "kernel-patches/$LAB_KERNEL/series names ${p##*/}, which does not exist"
	echo "== ${p##*/}"; cat "$p"; done) | sha256sum | cut -c1-12)
cachedir=$LAB_CACHE
[[ $LAB_KERNEL == 6.1 ]] || cachedir+=/$LAB_KERNEL
[[ $LAB_FLAVOUR == normal ]] || cachedir+=/$LAB_FLAVOUR
tree=$cachedir/linux-$version-$hash

mkdir -p "$cachedir" "$LAB_BUILD"
# The link to the tree, and what the guest learns about its kernel (/lab/kernel.env): the tests skip
# what needs a patch this kernel's series lacks, naming it.
link() {
	ln -sfn "$tree" "$LAB_KTREE"
	printf 'LAB_KERNEL=%s\nLAB_SERIES=kernel-patches/%s\nLAB_SERIES_PATCHES="%s"\n' \
		"$LAB_KERNEL" "$LAB_KERNEL" "$(for p in "${patches[@]}"; do printf '%s ' "${p##*/}"; done)" \
		>"$LAB_BUILD/kernel.env.tmp"
	if cmp -s "$LAB_BUILD/kernel.env.tmp" "$LAB_BUILD/kernel.env"; then
		rm "$LAB_BUILD/kernel.env.tmp"
	else
		mv "$LAB_BUILD/kernel.env.tmp" "$LAB_BUILD/kernel.env"
	fi
}
if [[ -f $tree/.lab-built ]]; then
	link
	exit 0
fi

# One builder per tree at a time; a second caller waits, then finds it built.
exec 9>"$cachedir/.lock"
flock 9
if [[ -f $tree/.lab-built ]]; then
	link
	exit 0
fi

start=$SECONDS
# Step timings of this tree's build, for make bench (figure 4).
times=()
step() { times+=("$1 $((SECONDS - step_start))"); step_start=$SECONDS; }
step_start=$SECONDS
if [[ ! -f $tree/.lab-patched ]]; then
	echo "kernel: extracting ${LAB_TARBALL##*/} ($version) into $tree"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xf "$LAB_TARBALL" -C "$tree.tmp" --strip-components=1
	step extract
	for p in "${patches[@]}"; do
		echo "kernel: applying ${p##*/}"
		if ! patch -d "$tree.tmp" -p1 --batch --forward --silent <"$p"; then
			rm -rf "$tree.tmp"
			die "patch ${p##*/} (kernel-patches/$LAB_KERNEL/series) does not apply to linux-source $version"
		fi
	done
	touch "$tree.tmp/.lab-patched"
	mv "$tree.tmp" "$tree"
	step patch
fi

kmake() { make -C "$tree" ARCH=x86_64 -j"$(nproc)" "$@"; }

if [[ ! -f $tree/.lab-configured ]]; then
	kmake -s tinyconfig
	(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "${fragments[@]}") >"$tree/.lab-merge.log"
	kmake -s olddefconfig
	# merge_config.sh only warns; a dropped option must stop the build, naming the option. An
	# option under a "# kernel-patches/NNNN" comment comes from that patch: a series without it
	# (e.g. 6.12's, before 0002 is ported) builds without the option instead.
	dropped=() needs=""
	while read -r line; do
		case $line in
		"# kernel-patches/"[0-9][0-9][0-9][0-9]*)
			needs=${line#\# kernel-patches/}
			needs=${needs:0:4}
			continue
			;;
		CONFIG_*=*)
			if [[ -n $needs ]] && ! printf '%s\n' "${patches[@]##*/}" | grep -q "^$needs-"; then
				echo "kernel: $line needs kernel-patches/$LAB_KERNEL/$needs, not in this series"
			else
				grep -qxF "$line" "$tree/.config" || dropped+=("$line")
			fi
			;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			! grep -q "^$opt=" "$tree/.config" || dropped+=("$line")
			;;
		esac
		needs=""
	done < <(cat "${fragments[@]}")
	if [[ ${#dropped[@]} -gt 0 ]]; then
		printf 'kernel: option dropped by olddefconfig (unmet dependency?): %s\n' "${dropped[@]}" >&2
		die "config fragment did not survive; see $tree/.config"
	fi
	touch "$tree/.lab-configured"
	step configure
fi

echo "kernel: building bzImage, Module.symvers and headers in $tree"
kmake bzImage modules headers >"$tree/.lab-build.log" 2>&1 ||
	{ tail -30 "$tree/.lab-build.log" >&2; die "kernel build failed; full log: $tree/.lab-build.log"; }
step compile
printf '%s\n' "${times[@]}" >"$tree/.lab-times"
touch "$tree/.lab-built"
link
echo "kernel: built in $((SECONDS - start)) s"

# Keep the tree just built and the one before it; older ones are regenerable and large.
# shellcheck disable=SC2012 # names are ours: linux-<version>-<hash>
mapfile -t old < <(ls -1dt "$cachedir"/linux-*/ 2>/dev/null | tail -n +3)
for d in "${old[@]}"; do
	echo "kernel: removing old tree $d"
	rm -rf "$d"
done
