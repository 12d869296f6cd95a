# Everything that goes into the guest, built against the lab kernel tree ($(BUILD)/linux):
# the pindma module (Kbuild), static test and demo programs, and the initramfs.
# Called by the top Makefile after vm/build-kernel.sh, so the tree is in place.
KTREE := $(BUILD)/linux
GUEST := $(BUILD)/guest
STAMP := $(KTREE)/.lab-built

CFLAGS := -O2 -g -Wall -Wextra -Werror -static -isystem $(KTREE)/usr/include \
	-I$(KTREE)/tools/testing/selftests -Itests/lib -Idrivers/pindma/uapi
LIB := tests/lib/lab.c
LIBDEPS := $(LIB) $(wildcard tests/lib/*.h) drivers/pindma/uapi/pindma.h $(STAMP)

TESTS := $(patsubst tests/%.c,$(GUEST)/lab/tests/%,$(wildcard tests/*_test.c)) $(GUEST)/lab/tests/run
DEMOS := $(patsubst demo/%.c,$(GUEST)/lab/demo/%,$(wildcard demo/*.c)) \
	$(if $(wildcard demo/run),$(GUEST)/lab/demo/run)
MODULES := $(if $(wildcard drivers/pindma/Kbuild),$(GUEST)/lib/modules/lab/pindma.ko)
# Programs whose source is gone must leave the guest too.
STALE := $(filter-out $(TESTS) $(DEMOS) $(MODULES),$(shell find $(GUEST) -type f 2>/dev/null))

.PHONY: all module FORCE
all: $(TESTS) $(DEMOS) $(MODULES)
	$(if $(STALE),rm -f $(STALE))
	@vm/mkinitramfs.sh

$(GUEST)/lab/tests/%: tests/%.c $(LIBDEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LIB)

$(GUEST)/lab/demo/%: demo/%.c $(LIBDEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LIB)

$(GUEST)/lab/%: %
	install -D -m 755 $< $@

# Kbuild decides what is stale in the module; the copy only happens when the .ko changed.
$(GUEST)/lib/modules/lab/pindma.ko: FORCE
	@$(MAKE) --no-print-directory -C $(KTREE) M=$(CURDIR)/drivers/pindma modules
	@cmp -s drivers/pindma/pindma.ko $@ || install -D -m 644 drivers/pindma/pindma.ko $@
FORCE:
