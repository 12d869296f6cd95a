# dontfork-lab. Start here:
#   make test [T=FILE[:TEST]]   build what is stale, boot the lab kernel in QEMU, run the tests
#   make plants                 the suite's guards seen red: every planted fault of
#                               tests/host/plants.sh turns its test red (CI runs it after make test)
#   make demo                   the same, running the fork/write demo
#   make shell                  an interactive shell in the guest (Ctrl-a x quits)
#   make fuzz [FUZZ_OPS=N] [FUZZ_SEED=S]   the long pindma fuzz run
#   make bench                  benchmarks in the VM: report and plots in build/bench
#   make gdb                    the demo on a kernel with debug info, waiting for gdb (prints the command)
#   make docs                   put real output into README.md and docs/*.md (docs/generate)
#   make kselftest-install DESTDIR=DIR   the in-guest programs as a kselftest collection, with
#                               the tree's run_kselftest.sh (vm/kselftest-install.sh; docs/tests.md)
#   make lava [LAVA_URL=BASE]   LAVA job definitions running the suite, per kernel and flavour
#                               (vm/lava.py; build/lava/; docs/tests.md)
#   make bisect KERNEL_SRC=DIR GOOD=REV BAD=REV ROW=NAME   the first commit of your tree where the
#                               row's verdict changed (vm/bisect_row.py; docs/lab.md)
# Each installs missing Debian packages first (vm/deps.sh). FLAVOUR=debug selects the debug kernel,
# KERNEL=6.12 Debian's linux-source-6.12 with kernel-patches/6.12/ (6.1 is the default), KERNEL_SRC=DIR
# your own tree (>= 6.1; built out of tree into the cache, not patched).
SHELL := /bin/bash
# make gdb's kernel is its own flavour (vm/kernel-gdb.config: debug info, the lx-* helpers).
FLAVOUR ?= $(if $(filter gdb,$(MAKECMDGOALS)),gdb,normal)
# KERNEL_SRC=DIR: a user's own tree instead, built out of tree.
KERNEL_SRC ?=
$(if $(KERNEL_SRC),$(if $(realpath $(KERNEL_SRC)),,$(error KERNEL_SRC=$(KERNEL_SRC): no such directory)))
# The build folder of this kernel and flavour, the cache of kernel trees, and the kernel registry
# (kernel-patches/<version>/, oldest first; the default kernel is the oldest), as vm/lib.sh, their
# one home, names them.
LAB_SH := $(shell FLAVOUR='$(FLAVOUR)' KERNEL='$(KERNEL)' KERNEL_SRC='$(KERNEL_SRC)' BUILD='$(BUILD)' \
	bash -c '. vm/lib.sh && echo "$$LAB_BUILD" "$$LAB_CACHE" $$LAB_KERNELS')
$(if $(word 3,$(LAB_SH)),,$(error vm/lib.sh gave no build folder, cache or kernels))
BUILD := $(word 1,$(LAB_SH))
LAB_CACHE := $(word 2,$(LAB_SH))
LAB_KERNELS := $(wordlist 3,99,$(LAB_SH))
KERNEL ?= $(firstword $(LAB_KERNELS))
export FLAVOUR KERNEL KERNEL_SRC BUILD LAB_KERNELS LAB_CACHE
# The lab's Python (vm/lib.sh): Debian's, whose packages vm/deps.sh installs.
LAB_PYTHON ?= /usr/bin/python3
export LAB_PYTHON

# The suite's own plants, apart from make test: they boot the planted kernels and drivers, more CPU
# than the suite itself, and prove the tests rather than the kernel. Their results (KTAP, JUnit,
# KCIDB) go to build/results/plants/, beside make test's.
.PHONY: test plants demo gdb shell fuzz bench docs bisect lava kselftest-install guest kernel deps clean distclean
test: guest
	T="$(T)" $(LAB_PYTHON) tests/run-all

plants: guest
	T=plants LAB_RESULTS=$(BUILD)/results/plants $(LAB_PYTHON) tests/run-all

# The demo's lines on the screen; the kernel's console in build/logs/demo.log (a splat shown, named).
# Then each demo whose rows need a machine of their own (the registry's: the guest's /lab/machines,
# "FAMILY DEMO OPTION..."; the VFIO rows' has an IOMMU) in a guest booted so; the worst status.
demo: guest
	@s=0; VM_SCREEN=program vm/boot --name demo --demo-disks -- /lab/guest/demo || s=$$?; \
	while read -r fam prog opts <&3; do \
		v=0; VM_SCREEN=program vm/boot $$opts --name demo-$$fam -- /lab/guest/demo $$prog </dev/null || v=$$?; \
		[ $$v -le $$s ] || s=$$v; \
	done 3<$(BUILD)/guest/lab/machines; \
	exit $$s

# The demo under QEMU's gdb stub: the guest waits for gdb, attached with the command vm/boot prints.
gdb: guest
	vm/boot --gdb --name gdb --demo-disks -- /lab/guest/demo

# The long fuzz run: FUZZ_OPS operations (default a million), FUZZ_SEED to replay a seed.
FUZZ_OPS ?= 1000000
fuzz: guest
	vm/boot --name fuzz -- /lab/bin/pindma_fuzz --ops $(FUZZ_OPS) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))

# Benchmarks, separate from the tests: a report and plots in $(BUILD)/bench.
bench: guest
	bench/report

# The output blocks of the pages, from one real run in the guest (and the last make bench).
docs: guest
	docs/generate

# git bisect run over your tree's history, each commit built and played in the lab's own worktree
# of it (the cache's bisect/ folder): your tree's files, HEAD and bisect state are not touched.
bisect: deps
	$(LAB_PYTHON) vm/bisect_row.py --tree "$(KERNEL_SRC)" --good "$(GOOD)" --bad "$(BAD)" --row "$(ROW)"

# The guest's kselftest install (vm/guest.mk), copied to DESTDIR.
$(if $(filter kselftest-install,$(MAKECMDGOALS)),$(if $(DESTDIR),,$(error make kselftest-install needs DESTDIR=DIR)))
kselftest-install: guest
	vm/kselftest-install.sh "$(DESTDIR)"

# LAVA job definitions and their rendered QEMU device, one per kernel and flavour; nothing is built:
# a job names its build folder's kernel, initramfs and disks (file:// unless LAVA_URL).
LAVA_URL ?=
lava:
	@vm/deps.sh lava
	$(LAB_PYTHON) vm/lava.py $(if $(LAVA_URL),--url "$(LAVA_URL)")

shell: guest
	vm/boot --name shell --disk $(BUILD)/disk.img --shell

guest: kernel
	@$(MAKE) --no-print-directory -f vm/guest.mk

kernel: deps
	@vm/build-kernel.sh

deps:
	@vm/deps.sh

# The kernel trees stay in the cache (see README); distclean removes them too.
clean:
	rm -rf $(CURDIR)/build

distclean: clean
	rm -rf "$(LAB_CACHE)"
