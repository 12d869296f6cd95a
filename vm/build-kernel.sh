#!/usr/bin/env bash
# Build the lab kernel from Debian's linux-source-$KERNEL tarball plus kernel-patches/$KERNEL/series.
#
# The tree lives in $LAB_CACHE[/KERNEL][/FLAVOUR]/linux-<package version>, the work tree of the git
# repository linux-<package version>.git beside it: the tarball on branch pristine, the series applied
# on branch lab. A hash of the series, the config fragment(s) and the
# flavour names what the tree was last built for: when it changes, the series is applied again to the
# pristine source and checked out over the tree, and Kbuild rebuilds only what the changed files and
# options touch (a one-line patch edit takes minutes, not a cold build). A call whose hash was built
# already only relinks $LAB_BUILD/linux and returns. Local edits in the cached tree are discarded.
set -euo pipefail
# shellcheck source=vm/lib.sh
. "$(dirname "$0")/lib.sh"

fragments=("$LAB_TOP/vm/kernel.config")
[[ $LAB_FLAVOUR == normal ]] || fragments+=("$LAB_TOP/vm/kernel-$LAB_FLAVOUR.config")
for f in "${fragments[@]}"; do
	[[ -f $f ]] || die "no config fragment $f for flavour '$LAB_FLAVOUR'"
done
patches=()
if [[ -n $LAB_KSRC ]]; then
	# A user's tree: built out of tree, in an object folder of the cache; the lab's series is not
	# applied to a tree the lab does not own, so what needs a lab patch is skipped, naming it.
	[[ -f $LAB_KSRC/Makefile && -f $LAB_KSRC/scripts/kconfig/merge_config.sh ]] ||
		die "KERNEL_SRC=$LAB_KSRC is not a kernel source tree"
	version=$(make -s -C "$LAB_KSRC" kernelversion 2>/dev/null) ||
		die "KERNEL_SRC=$LAB_KSRC: 'make kernelversion' failed"
	IFS=. read -r major minor _ <<<"$version"
	((major > 6 || (major == 6 && minor >= 1))) || die "KERNEL_SRC=$LAB_KSRC is Linux $version; the lab needs 6.1 or later"
	src=$LAB_KSRC
	cachedir=$LAB_CACHE/src/${LAB_KSRC##*/}-$(printf '%s' "$LAB_KSRC" | sha1sum | cut -c1-8)
	[[ $LAB_FLAVOUR == normal ]] || cachedir+=/$LAB_FLAVOUR
	tree=$cachedir/obj
else
	[[ -f $LAB_TARBALL ]] || die "$LAB_TARBALL missing (package linux-source-$LAB_KERNEL; run vm/deps.sh)"
	patchdir=$LAB_TOP/kernel-patches/$LAB_KERNEL
	series=$patchdir/series
	[[ -f $series ]] || die "no $series: the lab has a series for $(cd "$LAB_TOP/kernel-patches" && echo */ | tr -d /)"
	while read -r p; do
		p=${p%%#*}
		p=${p//[[:space:]]/}
		[[ -n $p ]] && patches+=("$patchdir/$p")
	done <"$series"
	version=$(dpkg-query -W -f='${Version}' "linux-source-$LAB_KERNEL" 2>/dev/null ||
		stat -c '%s-%Y' "$LAB_TARBALL")
	cachedir=$LAB_CACHE
	[[ $LAB_KERNEL == "$LAB_DEFAULT_KERNEL" ]] || cachedir+=/$LAB_KERNEL
	[[ $LAB_FLAVOUR == normal ]] || cachedir+=/$LAB_FLAVOUR
	# One tree per kernel x flavour, a git repository: branch pristine holds the tarball, branch lab
	# the series applied to it. A new series or fragment moves lab with `git checkout`, which
	# rewrites only the files that differ, so Kbuild rebuilds what they touch instead of the tree.
	tree=$cachedir/linux-$version
	src=$tree
fi
# The fragments' settings only ("# CONFIG_X is not set" is one): a comment edited rebuilds nothing.
hash=$( (echo "$LAB_FLAVOUR $LAB_KSRC"
	awk '/^# CONFIG_[A-Za-z0-9_]+ is not set$/ || !/^[[:space:]]*(#|$)/' "${fragments[@]}"
	for p in "${patches[@]}"; do
	[[ -f $p ]] || die "kernel-patches/$LAB_KERNEL/series names ${p##*/}, which does not exist"
	echo "== ${p##*/}"; cat "$p"; done) | sha256sum | cut -c1-12)

mkdir -p "$cachedir" "$LAB_BUILD"
# The link to the tree, and what the guest learns about its kernel (/lab/kernel.env): the tests skip
# what needs a patch this kernel's series lacks, naming it.
link() {
	ln -sfn "$tree" "$LAB_KTREE"
	printf 'LAB_KERNEL=%s\nLAB_VERSION=%s\nLAB_REGISTRY="%s"\nLAB_SERIES=kernel-patches/%s\nLAB_SERIES_PATCHES="%s"\n' \
		"$LAB_KERNEL" "$(make -s -C "$src" kernelversion)" "$(lab_kernels | tr '\n' ' ')" \
		"$([[ -n $LAB_KSRC ]] && echo none || echo "$LAB_KERNEL")" \
		"$(for p in "${patches[@]}"; do printf '%s ' "${p##*/}"; done)" \
		>"$LAB_BUILD/kernel.env.tmp"
	if cmp -s "$LAB_BUILD/kernel.env.tmp" "$LAB_BUILD/kernel.env"; then
		rm "$LAB_BUILD/kernel.env.tmp"
	else
		mv "$LAB_BUILD/kernel.env.tmp" "$LAB_BUILD/kernel.env"
	fi
}
# .lab-built holds the hash (series, fragments, flavour) of the last build that finished. A user's
# tree changes behind the lab's back: Kbuild is asked every time, and decides what is stale.
built() { [[ -z $LAB_KSRC && -f $tree/.lab-built && $(<"$tree/.lab-built") == "$hash" ]]; }
if built; then
	rm -f "$tree/.lab-compiled"
	link
	exit 0
fi

# One builder per tree at a time; a second caller waits, then finds it built.
exec 9>"$cachedir/.lock"
flock 9
if built; then
	rm -f "$tree/.lab-compiled"
	link
	exit 0
fi

start=$SECONDS
# Step timings of this tree's build, for make bench (figure 4).
times=()
step() { times+=("$1 $((SECONDS - step_start))"); step_start=$SECONDS; }
step_start=$SECONDS
# The repository sits beside the tree, not in it: in a git work tree, Kbuild's setlocalversion would
# append "+" to the kernel's release.
repo=$tree.git
git_in() { # repository work-tree git-args...
	git --git-dir="$1" --work-tree="$2" -c core.bare=false -c user.name=dontfork-lab \
		-c user.email=lab@dontfork.invalid "${@:3}"
}
g() { git_in "$repo" "$tree" "$@"; }
[[ -z $LAB_KSRC && -d $tree/.git && ! -d $repo ]] && mv "$tree/.git" "$repo"
if [[ -z $LAB_KSRC && ! -d $repo ]]; then
	echo "kernel: extracting ${LAB_TARBALL##*/} ($version) into $tree (git repository $repo)"
	rm -rf "$tree" "$tree.tmp" "$repo.tmp"
	mkdir -p "$tree.tmp"
	tar -xf "$LAB_TARBALL" -C "$tree.tmp" --strip-components=1
	git init -q --bare "$repo.tmp"
	# Everything the tarball holds, even what the tree's .gitignore names; the lab's own files not.
	printf '/.lab-*\n' >>"$repo.tmp/info/exclude"
	git_in "$repo.tmp" "$tree.tmp" add -f -A
	git_in "$repo.tmp" "$tree.tmp" commit -q -m "linux-source-$LAB_KERNEL $version"
	git_in "$repo.tmp" "$tree.tmp" branch pristine
	mv "$tree.tmp" "$tree"
	mv "$repo.tmp" "$repo"
	step extract
fi
# The series on pristine, built in a scratch index so that the working tree is untouched until the
# checkout, which then writes only the files whose content changes.
if [[ -z $LAB_KSRC ]]; then
	rm -f "$tree/.lab-built"
	index=$repo/lab-index
	GIT_INDEX_FILE=$index g read-tree pristine
	for p in "${patches[@]}"; do
		echo "kernel: applying ${p##*/}"
		GIT_INDEX_FILE=$index g apply --cached "$p" ||
			die "patch ${p##*/} (kernel-patches/$LAB_KERNEL/series) does not apply to linux-source $version"
	done
	patched=$(GIT_INDEX_FILE=$index g write-tree)
	commit=$(g commit-tree "$patched" -p pristine -m "kernel-patches/$LAB_KERNEL $hash")
	rm -f "$index"
	g checkout -q -f -B lab "$commit"
	step patch
else
	mkdir -p "$tree"
	echo "kernel: Linux $version from $LAB_KSRC, built out of tree in $tree (the lab's series not applied)"
fi

# Out of tree (O=) for a user's tree: Kbuild writes only into $tree.
kmake() { make -C "$src" ${LAB_KSRC:+O="$tree"} ARCH=x86_64 -j"$(nproc)" "$@"; }

# Configured afresh whenever the hash changed: the same fragments give the same .config, and Kbuild
# rebuilds only what a changed option touches.
if [[ -z $LAB_KSRC || ! -f $tree/.lab-configured || $(<"$tree/.lab-configured") != "$hash" ]]; then
	kmake -s tinyconfig
	(cd "$tree" && "$src/scripts/kconfig/merge_config.sh" -m .config "${fragments[@]}") >"$tree/.lab-merge.log"
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
			if [[ -n $needs ]] && ! grep -q "^$needs-" <<<"$(printf '%s\n' "${patches[@]##*/}")"; then
				echo "kernel: $line needs kernel-patches/${LAB_KSRC:+*}${LAB_KSRC:-$LAB_KERNEL}/$needs, not in this series"
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
	echo "$hash" >"$tree/.lab-configured"
fi
step configure

# One progress line while Kbuild works: files compiled (of how many the tree's last build from
# scratch compiled, when known) and the time so far; live on a terminal, once a minute into a log.
progress() { # pid log
	local n total="" every=60 last=-60 line
	[[ -f $tree/.lab-cold-files ]] && total=" of ~$(<"$tree/.lab-cold-files")"
	[[ -t 1 ]] && every=1
	while kill -0 "$1" 2>/dev/null; do
		if ((SECONDS - last >= every)); then
			n=$(grep -cE '^  (CC|AS)' "$2" || true)
			line=$(printf 'kernel: compiling: %s files%s, %dm%02ds' "$n" "$total" \
				$(((SECONDS - step_start) / 60)) $(((SECONDS - step_start) % 60)))
			if [[ -t 1 ]]; then printf '\r%s' "$line"; else echo "$line"; fi
			last=$SECONDS
		fi
		sleep 1
	done
	[[ ! -t 1 ]] || echo
}
echo "kernel: building bzImage, Module.symvers and headers in $tree (log: $tree/.lab-build.log)"
cold=1
[[ ! -f $tree/vmlinux ]] || cold=0
targets=(bzImage modules headers)
# make gdb's flavour: the tree's gdb helpers (vmlinux-gdb.py), which only `make all` would link.
! grep -q '^CONFIG_GDB_SCRIPTS=y' "$tree/.config" || targets+=(scripts_gdb)
# The log exists before the progress line first reads it (the background job opens it itself).
: >"$tree/.lab-build.log"
kmake "${targets[@]}" >>"$tree/.lab-build.log" 2>&1 &
kpid=$!
progress "$kpid" "$tree/.lab-build.log"
wait "$kpid" ||
	{ tail -30 "$tree/.lab-build.log" >&2; die "kernel build failed; full log: $tree/.lab-build.log"; }
compiled=$(grep -cE '^  (CC|AS)' "$tree/.lab-build.log" || true)
[[ $cold == 0 ]] || echo "$compiled" >"$tree/.lab-cold-files"
# How many this build compiled, as data (make bisect records it per step; a call that finds the
# tree built removes it).
echo "$compiled" >"$tree/.lab-compiled"
echo "kernel: compiled $compiled files"
step compile
printf '%s\n' "${times[@]}" >"$tree/.lab-times"
# make bench's cold-build figure: the steps of the tree's last build from nothing.
[[ $cold == 0 ]] || printf '%s\n' "${times[@]}" >"$tree/.lab-times-cold"
# What the guest's programs are built against: rewritten only when it changes (a user's tree: when
# the kernel image does), since its time stamp makes them stale.
built_id=$hash
[[ -z $LAB_KSRC ]] || built_id+=" $(sha256sum "$tree/arch/x86/boot/bzImage" | cut -c1-12)"
[[ -f $tree/.lab-built && $(<"$tree/.lab-built") == "$built_id" ]] || echo "$built_id" >"$tree/.lab-built"
link
echo "kernel: built in $((SECONDS - start)) s"
[[ -z $LAB_KSRC ]] || exit 0

# Other trees in this folder (another Debian version, the lab's older one-tree-per-hash layout) are
# regenerable and large.
for d in "$cachedir"/linux-*/; do
	[[ ${d%/} == "$tree" || ${d%/} == "$repo" ]] && continue
	echo "kernel: removing old tree ${d%/}"
	rm -rf "${d%/}"
done
