# dontfork-lab. Start here:
#   make test [T=FILE[:TEST]]   build what is stale, boot the lab kernel in QEMU, run the tests
#   make demo                   the same, running the fork/write demo
#   make shell                  an interactive shell in the guest (Ctrl-a x quits)
# Each installs missing Debian packages first (vm/deps.sh). FLAVOUR=debug selects the debug kernel.
SHELL := /bin/bash
FLAVOUR ?= normal
BUILD ?= $(CURDIR)/build$(if $(filter normal,$(FLAVOUR)),,/$(FLAVOUR))
export FLAVOUR BUILD

.PHONY: test demo shell guest kernel deps clean distclean
test: guest
	T="$(T)" tests/run-all

demo: guest
	vm/run --name demo --disk $(BUILD)/disk.img -- /lab/demo/run

shell: guest
	vm/run --name shell --disk $(BUILD)/disk.img --shell

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
	rm -rf "$${DONTFORK_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/dontfork-lab}"
