# vrnic entry points. Each one runs `make setup` first so that it works alone
# on a fresh Debian 12 machine.
SHELL := /bin/bash
.DEFAULT_GOAL := all

KVER ?= $(shell scripts/guest-kernel 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
CMAKE_BUILD := build/cmake
JOBS ?= $(shell nproc)
# Guest test runs are bounded so that a hung guest fails instead of stalling.
VM_TIMEOUT ?= 2400

FUZZ_RUNS ?= 15000
# The packet parser runs a hundred thousand inputs a second: more of them.
ROCE_FUZZ_RUNS ?= 1000000

.PHONY: setup all user kernel kselftest install deb check check-style check-unit check-fuzz check-guest check-guest-6.12 \
	check-faults check-fabric check-packages check-libvirt check-tsan demo bench clean

setup:
	@scripts/setup

all: setup
	@$(MAKE) --no-print-directory user kernel kselftest

user:
	cmake -S . -B $(CMAKE_BUILD) -Wno-dev >/dev/null
	cmake --build $(CMAKE_BUILD) -j $(JOBS)

kernel:
	@$(MAKE) -j $(JOBS) -C $(KDIR) M=$(CURDIR)/kernel modules

# The provider into libibverbs' directory plus /etc/libibverbs.d/vrnic.driver
# (scripts/vm does this inside the guest's overlay only).
install: all
	cmake --install $(CMAKE_BUILD)

# Debian packages into build/deb/: vrnic-dkms, vrnic-provider, vrnic-model
# (packaging/debian/), each checked by lintian.
deb: setup
	scripts/deb

kselftest:
	$(MAKE) -C tests/kselftest OUT=$(CURDIR)/build/kselftest
	$(MAKE) -C tests/faults OUT=$(CURDIR)/build/faults SUITE_LIB_OUT=$(CURDIR)/build/kselftest/lib

# Each part in turn, with the time it took: make check must stay within
# 45 minutes on a 2-core machine.
CHECKS = check-style check-unit check-fuzz check-tsan check-guest check-guest-6.12 \
	check-faults check-fabric check-packages check-libvirt
check: all
	@for t in $(CHECKS); do start=$$(date +%s); \
		$(MAKE) --no-print-directory $$t || exit 1; \
		echo "make check: $$t passed in $$(($$(date +%s) - start)) s"; \
	done

# Kernel code and the shared headers follow the kernel's style, strictly.
KERNEL_STYLE_FILES = $(filter-out %.mod.c,$(wildcard kernel/*.c)) $(filter-out kernel/compat.h,$(wildcard kernel/*.h)) \
	include/vrnic_dev.h include/uapi/rdma/vrnic-abi.h
# kernel/compat.h is the one place that compares kernel versions, which
# checkpatch warns about in code meant for the kernel tree.
# USE_LOCKDEP: kernel/debug.h checks spin_is_locked() on purpose, next to
# lockdep_assert_held(), because the guest kernels have no lockdep. Then the
# driver under sparse (C=2: every file, built or not) and W=1, where any
# warning fails.
check-style:
	$$(scripts/ksrc)/scripts/checkpatch.pl --no-tree --strict --quiet --terse --ignore USE_LOCKDEP -f $(KERNEL_STYLE_FILES)
	$$(scripts/ksrc)/scripts/checkpatch.pl --no-tree --strict --quiet --terse \
		--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f kernel/compat.h
	@out=$$($(MAKE) --no-print-directory -j $(JOBS) -C $(KDIR) M=$(CURDIR)/kernel C=2 W=1 modules 2>&1) || \
		{ echo "$$out"; exit 1; }; \
	if grep -E 'warning:|error:' <<<"$$out"; then echo "check-style: sparse or W=1 warnings"; exit 1; fi

check-unit:
	ctest --test-dir $(CMAKE_BUILD) --output-on-failure -j $(JOBS)

# The device model under libFuzzer with ASan and UBSan: one target per
# surface a guest or the uplink's peer controls, each bounded by a run
# count and started from its seed corpus, copied so that CI never writes
# into the tree. Any crash,
# sanitizer report, leak or hang (-timeout) fails; the input is left in
# build/fuzz/ (tests/fuzz/README.md says how to replay it).
FUZZ_TARGETS := cmdq wqe doorbell eth roce wire
FUZZ_FLAGS := -max_len=4096 -timeout=10 -print_final_stats=1
check-fuzz:
	CXX=clang++ CC=clang cmake -S . -B build/fuzz -DVRNIC_FUZZ=ON -Wno-dev >/dev/null
	cmake --build build/fuzz -j $(JOBS) --target vrnic_fuzz
	@$(MAKE) --no-print-directory -j $(JOBS) $(addprefix fuzz-,$(FUZZ_TARGETS))

# One fuzz target; check-fuzz runs them side by side, each on one core.
fuzz-%:
	@t=$*; rm -rf build/fuzz/corpus/$$t; mkdir -p build/fuzz/corpus/$$t; \
	if [ -d tests/fuzz/corpus/$$t ]; then cp -r tests/fuzz/corpus/$$t/. build/fuzz/corpus/$$t/; fi; \
	runs=$(FUZZ_RUNS); [[ $$t != roce ]] || runs=$(ROCE_FUZZ_RUNS); \
	if ! build/fuzz/tests/fuzz/vrnic_fuzz_$$t -runs=$$runs $(FUZZ_FLAGS) \
		-artifact_prefix=build/fuzz/$$t- build/fuzz/corpus/$$t >build/fuzz/$$t.log 2>&1; then \
		tail -n 60 build/fuzz/$$t.log; echo "check-fuzz: vrnic_fuzz_$$t FAILED"; exit 1; \
	fi; \
	echo "check-fuzz: vrnic_fuzz_$$t, $$runs runs from $$(ls tests/fuzz/corpus/$$t 2>/dev/null | wc -l) seeds:" \
		$$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)' build/fuzz/$$t.log)

# The guest suite runs on the driver built with VRNIC_DEBUG=1, so that its
# invariant checks watch every test (a WARN fails the run as a splat); the
# release build is put back afterwards, whatever the result, so that bench
# and demo after a check never load the debug module.
check-guest:
	$(MAKE) --no-print-directory kernel VRNIC_DEBUG=1
	rc=0; scripts/vm --timeout $(VM_TIMEOUT) -- tests/run-guest --debug-build || rc=$$?; \
		$(MAKE) --no-print-directory kernel; exit $$rc

# The kselftest suite again on the other kernel Debian 12 ships, 6.12, with
# the driver built for it (debug checks on), suite_cm_retries included,
# which check-guest leaves to it; the 6.1 release build is put back
# afterwards.
KVER_6_12 = $(shell scripts/guest-kernel 6.12 2>/dev/null)
check-guest-6.12:
	@[[ -n "$(KVER_6_12)" ]] || scripts/guest-kernel 6.12
	$(MAKE) --no-print-directory kernel KVER=$(KVER_6_12) VRNIC_DEBUG=1
	rc=0; scripts/vm --kernel $(KVER_6_12) --timeout $(VM_TIMEOUT) -- \
		tests/kselftest/run build/kselftest || rc=$$?; \
		$(MAKE) --no-print-directory kernel; exit $$rc

# The device model and QEMU killed under load (host side), then rmmod under
# load, killed registrations, a soak and leak checks in a guest.
check-faults:
	tests/faults/run

# Two, then three guests on one model: ping and 8 MiB over TCP between them
# over the vrnic netdevs; RDMA between two (rdma-core's tools, perftest,
# rping, mckey, a guest stopped, a guest killed and a new one joining) and
# the two-guest kselftest programs of make kselftest (fabric_rdma,
# fabric_rmmod); see tests/integration/fabric/run.
check-fabric:
	tests/integration/fabric/run

# The packages of make deb installed with apt-get into a guest's overlay,
# the module loaded with modprobe, then ibv_devices and traffic through
# them (tests/packages).
check-packages: deb
	tests/packages/run

# README.md's libvirt domain booted by libvirt, with traffic in it
# (tests/libvirt/run).
check-libvirt:
	tests/libvirt/run

# The fabric's threads under ThreadSanitizer (vrnic_threaded_tests): the
# switch, two port threads exchanging frames, cross-VM access racing
# teardown, the FIFO lock and the uplink's thread with its peer; any report
# fails (TSan's exit status 66).
check-tsan:
	cmake -S . -B build/tsan -DVRNIC_TSAN=ON -Wno-dev >/dev/null
	cmake --build build/tsan -j $(JOBS) --target vrnic_threaded_tests
	build/tsan/tests/unit/vrnic_threaded_tests

demo: all
	scripts/demo

bench: all
	scripts/bench/bench

clean:
	rm -rf build
	@if [ -d $(KDIR) ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel clean; \
	fi
