#!/usr/bin/env bash
# Build the lab kernel from Debian's linux-source-6.1 tarball plus kernel-patches/6.1/series.
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
[[ -f $LAB_TARBALL ]] || die "$LAB_TARBALL missing (package linux-source-6.1; run vm/deps.sh)"

series=$LAB_TOP/kernel-patches/6.1/series
patches=()
if [[ -f $series ]]; then
	while read -r p; do
		p=${p%%#*}
		p=${p//[[:space:]]/}
		[[ -n $p ]] && patches+=("$LAB_TOP/kernel-patches/6.1/$p")
	done <"$series"
fi

version=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null ||
	stat -c '%s-%Y' "$LAB_TARBALL")
hash=$( (echo "$LAB_FLAVOUR"; cat "${fragments[@]}"; for p in "${patches[@]}"; do
	[[ -f $p ]] || die "kernel-patches/6.1/series names ${p##*/}, which does not exist"
	echo "== ${p##*/}"; cat "$p"; done) | sha256sum | cut -c1-12)
cachedir=$LAB_CACHE
[[ $LAB_FLAVOUR == normal ]] || cachedir=$LAB_CACHE/$LAB_FLAVOUR
tree=$cachedir/linux-$version-$hash

mkdir -p "$cachedir" "$LAB_BUILD"
link() { ln -sfn "$tree" "$LAB_KTREE"; }
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
			die "patch ${p##*/} (kernel-patches/6.1/series) does not apply to linux-source $version"
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
	# merge_config.sh only warns; a dropped option must stop the build, naming the option.
	dropped=()
	while read -r line; do
		case $line in
		CONFIG_*=*) grep -qxF "$line" "$tree/.config" || dropped+=("$line") ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			! grep -q "^$opt=" "$tree/.config" || dropped+=("$line")
			;;
		esac
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
