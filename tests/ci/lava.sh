#!/usr/bin/env bash
# CI: make lava's job for the oldest kernel of the registry (6.1, built by CI's first make test)
# run by LAVA's own dispatcher, lava-run, on the QEMU device make lava rendered, offline and without
# a server; then its LAVA test cases held to the suite's KTAP read back from the same output
# (tests/lava.py): the same cases, the same statuses, and the suite green as make test judges it.
# LAVA's result.yaml says pass whenever the infrastructure worked, so it is not what is read.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=vm/lib.sh
. "$top/vm/lib.sh"
kernel=$(lab_kernels | head -1)
build=$(lab_build_of "$kernel")
make -C "$top" --no-print-directory lava
out=$build/results/lava
rm -rf "$out"
mkdir -p "$out"
rc=0
lava-run --job-id "dontfork-lab-$kernel" --output-dir "$out/dispatcher" \
	--device "$top/build/lava/$kernel/device.yaml" "$top/build/lava/$kernel/job.yaml" \
	>"$out/lava-run.log" 2>&1 || rc=$?
echo "lava: lava-run exited with status $rc (its log: $out/lava-run.log)"
# The kernel's skip budget and the farm's own (tests/skips/lava.txt: one boot for every program),
# named as the kernel's: the judge takes the kernel from the name (its XFAILs, tests/cow-known.txt).
cat "$top/tests/skips/$kernel.txt" "$top/tests/skips/lava.txt" >"$out/$kernel.txt"
"$LAB_PYTHON" "$top/tests/lava.py" "$out/lava-run.log" "$out/$kernel.txt" \
	"$build/guest/lab/tests/manifest"
# An incomplete job (lava-run's status) fails too, whatever the cases that came said.
exit "$rc"
