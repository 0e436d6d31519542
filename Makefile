# vrnic entry points. Each one runs `make setup` first so that it works alone
# on a fresh Debian 12 machine.
SHELL := /bin/bash
.DEFAULT_GOAL := all

KVER ?= $(shell scripts/guest-kernel 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
CMAKE_BUILD := build/cmake
JOBS ?= $(shell nproc)
# Guest test runs are bounded so that a hung guest fails instead of stalling.
VM_TIMEOUT ?= 1200

FUZZ_RUNS ?= 20000

.PHONY: setup all user kernel kselftest install check check-style check-unit check-fuzz check-guest check-faults \
	demo bench clean

setup:
	@scripts/setup

all: setup
	@$(MAKE) --no-print-directory user kernel kselftest

user:
	cmake -S . -B $(CMAKE_BUILD) -Wno-dev >/dev/null
	cmake --build $(CMAKE_BUILD) -j $(JOBS)

kernel:
	@if [ -f kernel/Kbuild ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel modules; \
	fi

# The provider into libibverbs' directory plus /etc/libibverbs.d/vrnic.driver
# (scripts/vm does this inside the guest's overlay only).
install: all
	cmake --install $(CMAKE_BUILD)

kselftest:
	$(MAKE) -C tests/kselftest OUT=$(CURDIR)/build/kselftest
	$(MAKE) -C tests/faults OUT=$(CURDIR)/build/faults

check: all
	@$(MAKE) --no-print-directory check-style check-unit check-fuzz check-guest check-faults

# Kernel code and the shared headers follow the kernel's style, strictly.
KERNEL_STYLE_FILES = $(filter-out %.mod.c,$(wildcard kernel/*.c)) $(wildcard kernel/*.h) \
	include/vrnic_dev.h include/uapi/rdma/vrnic-abi.h
check-style:
	$$(scripts/ksrc)/scripts/checkpatch.pl --no-tree --strict --quiet --terse -f $(KERNEL_STYLE_FILES)

check-unit:
	ctest --test-dir $(CMAKE_BUILD) --output-on-failure -j $(JOBS)

# The device model under libFuzzer with ASan and UBSan, bounded by a run
# count; the seed corpus is copied so that CI never writes into the tree.
check-fuzz:
	CXX=clang++ CC=clang cmake -S . -B build/fuzz -DVRNIC_FUZZ=ON -Wno-dev >/dev/null
	cmake --build build/fuzz -j $(JOBS) --target vrnic_model_fuzz
	mkdir -p build/fuzz/corpus
	if [ -d tests/fuzz/corpus ]; then cp -r tests/fuzz/corpus/. build/fuzz/corpus/; fi
	build/fuzz/tests/unit/vrnic_model_fuzz -runs=$(FUZZ_RUNS) -max_len=4096 build/fuzz/corpus

check-guest:
	scripts/vm --timeout $(VM_TIMEOUT) -- tests/run-guest

# The device model and QEMU killed under load (host side), then rmmod under
# load, killed registrations, a soak and leak checks in a guest.
check-faults:
	tests/faults/run

demo: all
	scripts/demo

bench: all
	scripts/bench/bench

clean:
	rm -rf build
	@if [ -f kernel/Kbuild ] && [ -d $(KDIR) ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel clean; \
	fi
