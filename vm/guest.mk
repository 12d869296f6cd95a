# Everything that goes into the guest, built against the lab kernel tree ($(BUILD)/linux):
# the pindma module (Kbuild), static test and demo programs, and the initramfs.
# Called by the top Makefile after vm/build-kernel.sh, so the tree is in place.
KTREE := $(BUILD)/linux
GUEST := $(BUILD)/guest
STAMP := $(KTREE)/.lab-built

CFLAGS := -O2 -g -Wall -Wextra -Werror -static -isystem $(KTREE)/usr/include \
	-I$(KTREE)/tools/testing/selftests -Itests/lib -Idemo -Idrivers/pindma/uapi
LIB := tests/lib/lab.c demo/scenario.c
LIBDEPS := $(LIB) $(wildcard tests/lib/*.h demo/*.h) drivers/pindma/uapi/pindma.h $(STAMP)

TESTS := $(patsubst tests/%.c,$(GUEST)/lab/tests/%,$(wildcard tests/*_test.c)) $(GUEST)/lab/tests/run
HELPERS := $(patsubst tests/helpers/%.c,$(GUEST)/lab/bin/%,$(wildcard tests/helpers/*.c))
DEMOS := $(patsubst demo/%.c,$(GUEST)/lab/demo/%,$(wildcard demo/*_demo.c)) \
	$(if $(wildcard demo/run),$(GUEST)/lab/demo/run)
BENCH := $(patsubst bench/%.c,$(GUEST)/lab/bench/%,$(wildcard bench/*.c))
MODULES := $(if $(wildcard drivers/pindma/Kbuild),$(GUEST)/lib/modules/lab/pindma.ko)
# Programs whose source is gone must leave the guest too.
STALE := $(filter-out $(TESTS) $(HELPERS) $(DEMOS) $(BENCH) $(MODULES),$(shell find $(GUEST) -type f 2>/dev/null))

# Host files the guest gets at their host paths, with their libraries: rdma-core's rxe provider
# and its driver file for libibverbs, and iproute2's rdma tool.
EXTRA := /usr/bin/rdma /etc/libibverbs.d/rxe.driver \
	$(wildcard /usr/lib/x86_64-linux-gnu/libibverbs/librxe-*.so)

.PHONY: all FORCE
all: $(TESTS) $(HELPERS) $(DEMOS) $(BENCH) $(MODULES) $(BUILD)/disk.img
	@printf '%s\n' $(EXTRA) >$(GUEST).extra.tmp
	@cmp -s $(GUEST).extra.tmp $(GUEST).extra || mv $(GUEST).extra.tmp $(GUEST).extra
	@rm -f $(GUEST).extra.tmp
	$(if $(STALE),rm -f $(STALE))
	@vm/mkinitramfs.sh

# The guest's scratch disk (virtio-blk, ext4), made again when missing. Lazy init is off so that no
# background zeroing adds to the written-sector counts the fadvise tests read.
$(BUILD)/disk.img:
	truncate -s 256M $@.tmp
	/sbin/mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $@.tmp
	mv $@.tmp $@

$(GUEST)/lab/tests/%: tests/%.c $(LIBDEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LIB)

$(GUEST)/lab/bench/%: bench/%.c $(LIBDEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< tests/lib/lab.c

$(GUEST)/lab/bin/%: tests/helpers/%.c $(LIBDEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -pthread -o $@ $< tests/lib/lab.c

# The verbs demo is the one dynamic program: libibverbs loads its providers with dlopen().
$(GUEST)/lab/demo/verbs_demo: demo/verbs_demo.c $(LIBDEPS)
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror -isystem $(KTREE)/usr/include -Itests/lib -o $@ $< \
		tests/lib/lab.c -libverbs

$(GUEST)/lab/demo/%_demo: demo/%_demo.c $(LIBDEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LIB)

$(GUEST)/lab/%: %
	install -D -m 755 $< $@

# The module is built in a copy under $(BUILD), one per kernel tree: Kbuild's dependency files name
# absolute paths into the tree it last built against, so a stale object would look up to date after
# the tree changed. Kbuild decides what is stale; the .ko is copied only when it changed.
MODSRC := $(BUILD)/module/pindma
$(GUEST)/lib/modules/lab/pindma.ko: FORCE
	@tree=$$(readlink -f $(KTREE)); \
	if [ "$$(cat $(MODSRC)/.lab-ktree 2>/dev/null)" != "$$tree" ]; then \
		rm -rf $(MODSRC) && mkdir -p $(MODSRC) && echo "$$tree" >$(MODSRC)/.lab-ktree; \
	fi
	@cd drivers/pindma && find . -name '*.[ch]' -o -name Kbuild | cpio -pdmu --quiet $(MODSRC)
	@$(MAKE) --no-print-directory -C $(KTREE) M=$(MODSRC) modules
	@cmp -s $(MODSRC)/pindma.ko $@ || install -D -m 644 $(MODSRC)/pindma.ko $@
FORCE:
