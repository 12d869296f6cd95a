# The guest's kernel log, judged: what vm/boot counts as a kernel splat, on the console as it runs and
# in the whole log at its end, and whether that whole log can be trusted. Sourced, not run.
# shellcheck shell=bash

# vm/splat-classes, one NAME|REGEX a line: each is what one of the kernel's detectors prints.
splat_classes() {
	grep -v '^#' "$LAB_TOP/vm/splat-classes"
}

# The console on stdin as VM_SCREEN=program shows it (make demo): the program's lines; of the
# kernel's own (printk's time stamp), only a splat's, named by its class; no lab marker.
screen_filter() {
	awk -v classes="$(splat_classes)" '
		BEGIN { n = split(classes, c, "\n") }
		{ sub(/\r$/, "") }
		/^@@/ { next }
		/^\[ *[0-9]+\.[0-9]+\] / {
			for (i = 1; i <= n; i++) {
				re = c[i]; sub(/^[^|]*\|/, "", re)
				if ($0 ~ re) {
					name = c[i]; sub(/\|.*/, "", name)
					print "kernel splat (" name "): " $0
					fflush()
					break
				}
			}
			next
		}
		{ print; fflush() }'
}

# find_splats FILE...: the classes found in the files, into splat_found (their names) and
# splat_lines (the lines that matched). Fails when it has no class to look for: that would find
# nothing, whatever the log says.
find_splats() {
	local c lines classes
	mapfile -t classes < <(splat_classes)
	splat_found=() splat_lines=""
	if [[ ${#classes[@]} == 0 ]]; then
		echo "vm/boot: no splat classes in $LAB_TOP/vm/splat-classes: the log cannot be judged" >&2
		return 1
	fi
	for c in "${classes[@]}"; do
		lines=$(grep -haE "${c#*|}" "$@" || true)
		[[ -n $lines ]] || continue
		splat_found+=("${c%%|*}")
		splat_lines+=$lines$'\n'
	done
}

# dmesg_problem DMESG: why the whole kernel log the guest handed over (between its frames) cannot
# stand for the run, or nothing. It is checked only if it is whole: from the kernel's first record.
# The ring buffer is 128 KiB (LOG_BUF_SHIFT=17); a run that printed more lost its start, and any
# report in it.
dmesg_problem() {
	local first
	first=$(sed -n '2p' "$1")
	if [[ $(wc -l <"$1") -le 2 || -z ${first//[[:space:]]/} ]]; then
		echo "the guest handed over an empty kernel log (nothing between its frames)"
	elif [[ ! $first =~ ^\[\ *([0-9]+\.[0-9]+)\] ]]; then
		echo "the kernel log the guest handed over does not start with a kernel record: '${first:0:100}'"
	elif [[ ${BASH_REMATCH[1]} != 0.000000 ]]; then
		echo "the kernel log wrapped: its first record is at ${BASH_REMATCH[1]} s, not at boot, so the ring buffer (128 KiB) lost its start and any report in it"
	elif [[ $first != *"] Linux version "* ]]; then
		echo "the kernel log the guest handed over does not start at boot (no 'Linux version' first): '${first:0:100}'"
	fi
}
