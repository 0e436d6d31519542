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

.PHONY: setup all user kernel kselftest check check-unit check-guest demo bench clean

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

kselftest:
	$(MAKE) -C tests/kselftest OUT=$(CURDIR)/build/kselftest

check: all
	@$(MAKE) --no-print-directory check-unit check-guest

check-unit:
	ctest --test-dir $(CMAKE_BUILD) --output-on-failure -j $(JOBS)

check-guest:
	scripts/vm --timeout $(VM_TIMEOUT) -- tests/kselftest/run build/kselftest

demo: setup
	@echo "make demo: not available yet: it arrives with the vrnic data path" >&2
	@exit 1

bench: all
	scripts/bench/bench

clean:
	rm -rf build
	@if [ -f kernel/Kbuild ] && [ -d $(KDIR) ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel clean; \
	fi
