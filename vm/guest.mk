# Everything that goes into the guest, built against the lab kernel tree ($(BUILD)/linux): the pindma
# module (Kbuild), the static programs of demo/, bench/ and tests/, and the initramfs.
# Called by the top Makefile after vm/build-kernel.sh, so the tree is in place.
#
# The programs share one library, liblab/ (a static archive: each program links only the objects it
# calls). The row layer, rows/, is a second one: its table, its records and every family's
# description; the demo of a family also links that family's *_play.o, which plays it.
.DEFAULT_GOAL := all
KTREE := $(BUILD)/linux
# The tree's sources: the tree itself, or, for a user's tree built out of tree (KERNEL_SRC), the
# source folder Kbuild links from the object folder.
KSRC := $(if $(wildcard $(KTREE)/source/Makefile),$(KTREE)/source,$(KTREE))
GUEST := $(BUILD)/guest
OBJ := $(BUILD)/obj
STAMP := $(KTREE)/.lab-built

# The uapi headers of the tree under test and pindma's ABI header, for every program.
CPPFLAGS := -isystem $(KTREE)/usr/include -Iliblab -Irows -Idrivers/pindma/uapi
# A function per section, and the linker drops those no program calls: each program carries only the
# parts of the library it uses.
# -fno-strict-aliasing, as the kernel builds: a record's observations are bytes that each family
# reads as its own struct (rows/row.h's ROW_OBS), the pattern of the kernel's skb->cb.
CFLAGS := -O2 -g -Wall -Wextra -Werror -fno-strict-aliasing -ffunction-sections -fdata-sections
# -s: the guest programs go into every boot's initramfs without their symbols and debug information
# (a smaller initramfs, which each boot unpacks under TCG); the objects in $(OBJ) keep theirs.
LDFLAGS := -static -s -Wl,--gc-sections

LIBLAB := $(OBJ)/liblab.a
LIBLAB_OBJS := $(patsubst liblab/%.c,$(OBJ)/liblab/%.o,$(wildcard liblab/*.c))
LIBROWS := $(OBJ)/librows.a
# The plays (rows/*_play.c) stay objects of their own, each linked by the programs that play it: the
# row layer refers to them weakly, and a weak reference pulls no member out of an archive.
LIBROWS_OBJS := $(patsubst rows/%.c,$(OBJ)/rows/%.o,$(filter-out %_play.c,$(wildcard rows/*.c)))
# The flags are a prerequisite too: changing them rebuilds every program.
FLAGS := $(OBJ)/.flags
HEADERS := $(wildcard liblab/*.h rows/*.h) drivers/pindma/uapi/pindma.h $(STAMP) $(FLAGS)
PLAY = $(OBJ)/rows/$(1)_play.o

# What the family registry (rows/row.h's ROW_FAMILIES) says, as vm/registry.c prints it for make:
# REGISTRY_DEMOS, the demos (each built from demo/demo.c), and REGISTRY_MACHINE_TESTS, the test
# programs of the families whose rows need a machine of their own. make writes it, then reads it.
REGISTRY_MK := $(BUILD)/host/registry.mk
include $(REGISTRY_MK)

# The programs, by where they go in the guest.
TESTS := $(patsubst tests/%.c,$(GUEST)/lab/tests/%,$(wildcard tests/*_test.c)) \
	$(patsubst tests/%.sh,$(GUEST)/lab/tests/%,$(wildcard tests/*_test.sh)) \
	$(patsubst %,$(GUEST)/lab/tests/%,$(REGISTRY_MACHINE_TESTS)) \
	$(GUEST)/lab/tests/manifest
HELPERS := $(patsubst tests/helpers/%.c,$(GUEST)/lab/bin/%,$(wildcard tests/helpers/*.c))
DEMOS := $(patsubst %,$(GUEST)/lab/demo/%,$(REGISTRY_DEMOS))
# The scripts that run in the guest (guest/init is the initramfs's /init, vm/mkinitramfs.sh).
GUEST_SCRIPTS := $(patsubst guest/%,$(GUEST)/lab/guest/%,$(filter-out guest/init,$(wildcard guest/*)))
# The names the guest's shell scripts share with the C programs, made from liblab/lab.h, their one
# home: sourced by the scripts (. /lab/guest/lab.sh).
GUEST_LIB_SH := $(GUEST)/lab/guest/lab.sh
# The families whose rows need a machine of their own, from the registry (vm/registry.c): a line
# each, "NAME DEMO OPTION...". make demo, make test, docs/kernels and guest/demo read it. And the
# demos in the registry's order, which guest/demo shows in that order.
MACHINES := $(GUEST)/lab/machines
DEMO_LIST := $(GUEST)/lab/demos
BENCH := $(patsubst bench/%.c,$(GUEST)/lab/bench/%,$(wildcard bench/*.c))
# The one-file reproducer (repro/repro.c), which tests/repro_test.c plays.
REPRO := $(GUEST)/lab/repro/repro
# What the guest knows of its kernel's series (vm/build-kernel.sh writes it).
KERNEL_ENV := $(GUEST)/lab/kernel.env
# cow.c, the mm maintainers' COW suite (first in 6.2), run by tests/cow_test.sh. A tree under test that
# has it builds it from itself; otherwise (6.1) it comes from COW_TARBALL, the registry's newest
# kernel's source (LAB_KERNELS, from the Makefile): only the files it needs, extracted into
# $(BUILD)/cow-src, with the uapi headers it was written for (headers_install).
COW_TARBALL ?= /usr/src/linux-source-$(lastword $(LAB_KERNELS)).tar.xz
COW_TREE ?= $(if $(wildcard $(KSRC)/tools/testing/selftests/mm/cow.c),$(KSRC),$(BUILD)/cow-src)
COW_MM := $(COW_TREE)/tools/testing/selftests/mm
COW_HDR := $(if $(filter $(BUILD)/cow-src,$(COW_TREE)),$(COW_TREE),$(KTREE))/usr/include
COW := $(if $(wildcard tests/cow_test.sh),$(GUEST)/lab/bin/cow $(GUEST)/lab/tests/cow-known.txt)
# The pages whose output blocks make docs writes and rows_test checks, and their capture.
DOCS := $(GUEST)/lab/README.md $(patsubst %,$(GUEST)/lab/%,$(wildcard docs/*.md))
MODULES := $(if $(wildcard drivers/pindma/Kbuild),$(GUEST)/lab/modules/pindma.ko)
# The tree's own modules (InfiniBand and rxe are modules, as distros build them), as modules_install
# lays them out with depmod's index; vm/mkinitramfs.sh puts them into the initramfs.
KMOD := $(BUILD)/kmod/.lab-installed
# The guest holds a kselftest install in /kselftest, as the tree's kselftest_install.sh lays one
# out (make kselftest-install copies it to DESTDIR): the tree's own runner, run_kselftest.sh and
# kselftest/, the list of the lab's collection, lab/tests, and the collection's settings. The
# collection is the guest's /lab itself (guest/init links /kselftest/lab to it): the programs in
# /lab/tests, their helpers, demos and module beside them.
KSFT := $(KSRC)/tools/testing/selftests
# A program with a timeout of its own (timeout_PROGRAM= in tests/settings) is a collection of its
# own, lab/tests/NAME, since the runner reads one timeout per folder (vm/kselftest-list.sh).
KS_OWN := $(shell sed -n 's/^timeout_\([a-z0-9_]*_test\)=.*/\1/p' tests/settings)
KS_LIST := $(GUEST)/kselftest/kselftest-list.txt $(GUEST)/lab/tests/settings \
	$(foreach p,$(KS_OWN),$(GUEST)/lab/tests/$(p:_test=)/settings $(GUEST)/lab/tests/$(p:_test=)/$(p))
KSELFTEST := $(GUEST)/kselftest/run_kselftest.sh $(KS_LIST) \
	$(patsubst $(KSFT)/kselftest/%,$(GUEST)/kselftest/kselftest/%,$(wildcard $(KSFT)/kselftest/*))
# Programs whose source is gone must leave the guest too.
STALE := $(filter-out $(TESTS) $(HELPERS) $(DEMOS) $(GUEST_SCRIPTS) $(GUEST_LIB_SH) $(MACHINES) $(DEMO_LIST) $(BENCH) $(REPRO) $(DOCS) $(MODULES) $(KERNEL_ENV) $(COW) $(KSELFTEST),$(shell find $(GUEST) -type f 2>/dev/null))

# What each program needs beyond its own source and liblab: the row layer (records are JSON,
# written and read with Debian's json-c), and the families a demo plays: a play of its own file,
# rows/<file>_play.c, and the libraries it needs, named here per demo. Each demo named here must be
# one of the registry's (checked once make has read the registry's list).
DEMO_LINKS := dontfork_demo consumers_demo odirect_demo fadvise_demo verbs_demo
$(if $(wildcard $(REGISTRY_MK)),$(foreach d,$(DEMO_LINKS),$(if $(filter $(d),$(REGISTRY_DEMOS)),,\
	$(error vm/guest.mk links $(d), which no line of ROW_FAMILIES (rows/row.h) names))))
ROWS_PROGRAMS := $(DEMOS) $(GUEST)/lab/tests/rows_test
$(ROWS_PROGRAMS): $(LIBROWS)
$(ROWS_PROGRAMS): private LDLIBS += -ljson-c
$(GUEST)/lab/demo/dontfork_demo: $(call PLAY,pindma)
$(GUEST)/lab/demo/consumers_demo: $(call PLAY,consumers)
$(GUEST)/lab/demo/consumers_demo: private LDLIBS += -luring
$(GUEST)/lab/demo/odirect_demo: $(call PLAY,odirect)
$(GUEST)/lab/demo/odirect_demo: private LDLIBS += -pthread
$(GUEST)/lab/demo/fadvise_demo: $(call PLAY,fadvise)
$(GUEST)/lab/demo/fadvise_demo: private LDLIBS += -pthread
$(GUEST)/lab/demo/verbs_demo: $(call PLAY,verbs)
$(GUEST)/lab/tests/%: private CPPFLAGS += -I$(KSRC)/tools/testing/selftests -Itests/lib
# repro_test takes its stages and expectations from the row table (no records: no json-c).
$(GUEST)/lab/tests/repro_test: $(LIBROWS)
$(GUEST)/lab/bin/%: private LDLIBS += -pthread
$(GUEST)/lab/tests/pindma_race_test $(GUEST)/lab/tests/fadvise_test: private LDLIBS += -pthread
# The verbs programs are the dynamic ones: libibverbs loads its providers with dlopen().
VERBS := $(GUEST)/lab/demo/verbs_demo $(GUEST)/lab/bench/reg_bench
$(VERBS): private LDFLAGS := -s -Wl,--gc-sections
$(VERBS): private LDLIBS += -libverbs

# Host files the guest gets at their host paths, with their libraries: rdma-core's rxe provider
# and its driver file for libibverbs, iproute2's rdma tool, and coreutils' timeout, with which the
# tree's kselftest runner times each program (timeout --foreground, which busybox's lacks; guest/init's
# busybox --install leaves a file already there as it is).
EXTRA := /usr/bin/rdma /etc/libibverbs.d/rxe.driver /usr/bin/timeout \
	$(wildcard /usr/lib/x86_64-linux-gnu/libibverbs/librxe-*.so)

.PHONY: all FORCE
# The guests' scratch disks: one per guest that make test runs at once (tests/run-all): the
# suite's, the rows', the fadvise tests', the crash test's, the plants' (and their planted kernels',
# the planted crash test's beside them), and on the debug kernel the fork switch's two boots.
DISKS := $(addprefix $(BUILD)/,disk.img disk-rows.img disk-io.img disk-crash.img disk-plants.img \
	disk-plants-kernel.img disk-plants-crash.img disk-plants-driver.img disk-switch1.img disk-switch2.img)
all: $(TESTS) $(HELPERS) $(DEMOS) $(GUEST_SCRIPTS) $(GUEST_LIB_SH) $(MACHINES) $(DEMO_LIST) $(BENCH) $(REPRO) $(DOCS) $(MODULES) $(KMOD) $(KERNEL_ENV) $(COW) $(KSELFTEST) $(DISKS) $(BUILD)/eio.img $(BUILD)/odirect.img
	@printf '%s\n' $(EXTRA) >$(GUEST).extra.tmp
	@cmp -s $(GUEST).extra.tmp $(GUEST).extra || mv $(GUEST).extra.tmp $(GUEST).extra
	@rm -f $(GUEST).extra.tmp
	$(if $(STALE),rm -f $(STALE))
	@vm/mkinitramfs.sh

# The guest's scratch disk (virtio-blk, ext4), made again when missing (DISKS). Lazy init is off so
# that no background zeroing adds to the written-sector counts the fadvise tests read.
$(DISKS):
	truncate -s 256M $@.tmp
	/sbin/mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $@.tmp
	mv $@.tmp $@

# The O_DIRECT rows' disk, attached read-only (LAB_ODIRECT_DISK): a 16 MiB ext4 file system holding
# /data, 8 MiB of 'D' (each play mounts it through its own gate), then 8 MiB of 'D' that the
# raw-device rows read (RAW_OFFSET in rows/odirect_play.c).
$(BUILD)/odirect.img: vm/guest.mk
	rm -rf $@.d $@.tmp
	mkdir $@.d
	tr '\0' D </dev/zero | head -c 8M >$@.d/data
	truncate -s 16M $@.tmp
	/sbin/mke2fs -q -F -t ext4 -d $@.d -E lazy_itable_init=0,lazy_journal_init=0 $@.tmp
	tr '\0' D </dev/zero | head -c 8M >>$@.tmp
	rm -rf $@.d
	mv $@.tmp $@

# A raw disk whose every write fails (vm/blkdebug-fail-writes.conf): the fadvise error path.
$(BUILD)/eio.img:
	truncate -s 16M $@

$(FLAGS): FORCE
	@mkdir -p $(@D)
	@echo '$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS)' >$@.tmp
	@cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

$(OBJ)/%.o: %.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIBLAB): $(LIBLAB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBROWS): $(LIBROWS_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# One rule for every program: its source, the objects it names above, then the libraries.
define program
$(GUEST)/lab/$(1)/%: $(2)/%.c $$(LIBLAB) $$(HEADERS)
	@mkdir -p $$(@D)
	$$(CC) $$(CPPFLAGS) $$(CFLAGS) $$(LDFLAGS) -o $$@ $$< $$(filter %.o,$$^) \
		$$(filter $$(LIBROWS),$$^) $$(LIBLAB) $$(LDLIBS)
endef
$(eval $(call program,tests,tests))
$(eval $(call program,bin,tests/helpers))
# Every demo is demo/demo.c, built with its name.
$(GUEST)/lab/demo/%: demo/demo.c $(LIBLAB) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DLAB_DEMO='"$*"' $(CFLAGS) $(LDFLAGS) -o $@ $< $(filter %.o,$^) \
		$(filter $(LIBROWS),$^) $(LIBLAB) $(LDLIBS)
$(eval $(call program,bench,bench))

# The programs the guest runner must find: one missing from the guest fails the run.
$(GUEST)/lab/tests/manifest: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' $(filter-out manifest,$(notdir $(TESTS))) >$@.tmp
	@cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

# The kselftest install (KSELFTEST above): the runner's files as the tree's selftests Makefile
# installs them, the list from the manifest, and the settings: the collection's, and a program's
# own where it has a timeout of its own.
$(GUEST)/kselftest/run_kselftest.sh: $(KSFT)/run_kselftest.sh $(STAMP)
	install -D -m 744 $< $@

$(GUEST)/kselftest/kselftest/%: $(KSFT)/kselftest/% $(STAMP)
	install -D -m 744 $< $@

$(KS_LIST) &: $(GUEST)/lab/tests/manifest tests/settings vm/kselftest-list.sh
	vm/kselftest-list.sh tests/settings $(GUEST)/lab/tests/manifest $(GUEST)

# The extracted subset: Kbuild's headers_install needs its Makefiles, scripts and the x86 tools.
COW_TOP := $(notdir $(basename $(basename $(COW_TARBALL))))
COW_FILES := Makefile Kbuild Kconfig scripts include/uapi arch/x86 usr tools/include \
	tools/testing/selftests/mm tools/testing/selftests/kselftest.h mm/gup_test.h
$(BUILD)/cow-src/.lab-extracted: $(COW_TARBALL)
	rm -rf $(@D) && mkdir -p $(@D)
	tar -xJf $< -C $(@D) --strip-components=1 $(addprefix $(COW_TOP)/,$(COW_FILES))
	$(MAKE) -s -C $(@D) ARCH=x86_64 headers_install INSTALL_HDR_PATH=$(@D)/usr
	touch $@

# Upstream's code, built as upstream builds it: -Wall without -Werror (a newer file meets an older gcc),
# liburing's static library for the io_uring cases when Debian's liburing-dev is there.
COW_URING := $(wildcard /usr/lib/x86_64-linux-gnu/liburing.a)
$(GUEST)/lab/bin/cow: $(if $(filter $(BUILD)/cow-src,$(COW_TREE)),$(BUILD)/cow-src/.lab-extracted,$(STAMP))
	@mkdir -p $(@D) $(OBJ)/cow
	@echo '$(if $(COW_URING),#define LOCAL_CONFIG_HAVE_LIBURING 1)' >$(OBJ)/cow/local_config.h
	$(CC) -O2 -g -Wall -I$(OBJ)/cow -isystem $(COW_HDR) $(LDFLAGS) -o $@ \
		$(wildcard $(addprefix $(COW_MM)/,cow.c vm_util.c thp_settings.c)) $(if $(COW_URING),-luring)

# Built as its header tells a user to build it, outside the lab: no lab header or library, no
# lab flags, dynamically linked against rdma-core's libibverbs (tests/host/repro_build.sh builds
# it the same way from a folder holding nothing else).
$(REPRO): repro/repro.c
	@mkdir -p $(@D)
	cc $< -libverbs -Wall -Wextra -Werror -o $@

$(GUEST)/lab/tests/cow-known.txt: tests/cow-known.txt
	install -D -m 644 $< $@

$(KERNEL_ENV): $(BUILD)/kernel.env
	install -D -m 644 $< $@

$(GUEST)/lab/tests/%: tests/%.sh
	install -D -m 755 $< $@

$(GUEST)/lab/%.md: %.md
	install -D -m 644 $< $@

$(GUEST)/lab/guest/%: guest/%
	install -D -m 755 $< $@

# Built and run on the host: it prints what rows/row.h's registry says, nothing more.
$(BUILD)/host/registry: vm/registry.c rows/row.h
	@mkdir -p $(@D)
	$(CC) -Wall -Wextra -Werror -Irows -o $@ $<

# Each rewritten only when what the registry says changed (an edit of a comment in rows/row.h
# rebuilds the tool, not what depends on its lists).
$(REGISTRY_MK): $(BUILD)/host/registry
	$< mk >$@.tmp
	cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

$(MACHINES): $(BUILD)/host/registry
	@mkdir -p $(@D)
	$< machines >$@.tmp
	cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

$(DEMO_LIST): $(BUILD)/host/registry
	@mkdir -p $(@D)
	$< demos >$@.tmp
	cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

# A family's test program in a machine of its own: rows_test --machine NAME, beside it.
$(GUEST)/lab/tests/%_rows_test: $(REGISTRY_MK) vm/guest.mk
	@mkdir -p $(@D)
	printf '#!/bin/sh\n# The %s rows in their own machine (rows/row.h, vm/guest.mk)\nexec "$$(dirname "$$0")/rows_test" --machine %s\n' \
		'$*' '$*' >$@
	chmod 755 $@

# LAB_SWITCH, the fork switch's file: a build that finds none in lab.h fails.
$(GUEST_LIB_SH): liblab/lab.h
	@mkdir -p $(@D)
	sed -n 's/^#define \(LAB_SWITCH\) "\(.*\)"$$/\1=\2/p' $< >$@.tmp
	grep -q '^LAB_SWITCH=/' $@.tmp && mv $@.tmp $@

$(GUEST)/lab/%: %
	install -D -m 755 $< $@

# The module is built in a copy under $(BUILD), one per kernel tree: Kbuild's dependency files name
# absolute paths into the tree it last built against, so a stale object would look up to date after
# the tree changed (a new path, or the same path built for another series). Kbuild decides what is stale; the .ko is copied only when it changed.
MODSRC := $(BUILD)/module/pindma
$(GUEST)/lab/modules/pindma.ko: FORCE
	@tree=$$(readlink -f $(KTREE))@$$(cat $(STAMP)); \
	if [ "$$(cat $(MODSRC)/.lab-ktree 2>/dev/null)" != "$$tree" ]; then \
		rm -rf $(MODSRC) && mkdir -p $(MODSRC) && echo "$$tree" >$(MODSRC)/.lab-ktree; \
	fi
	@cd drivers/pindma && find . -name '*.[ch]' -o -name Kbuild | cpio -pdmu --quiet $(MODSRC)
	@$(MAKE) --no-print-directory -C $(KTREE) M=$(MODSRC) modules
	@cmp -s $(MODSRC)/pindma.ko $@ || install -D -m 644 $(MODSRC)/pindma.ko $@

$(KMOD): $(STAMP)
	rm -rf $(@D)
	$(MAKE) -s -C $(KTREE) modules_install INSTALL_MOD_PATH=$(@D) INSTALL_MOD_STRIP=1
	touch $@
FORCE:
