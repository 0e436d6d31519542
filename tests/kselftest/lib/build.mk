# How the guest test programs are built, shared by tests/kselftest/Makefile
# and tests/faults/Makefile: against the guest kernel's kselftest harness
# (from linux-source, see scripts/ksrc), each program linked with the helper
# library of this folder, compiled into $(SUITE_LIB_OUT)/libsuite.a. The
# including Makefile defines its goal first: this file's rules are no goal.
SUITE_LIB_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
KSRC := $(shell $(SUITE_LIB_DIR)/../../../scripts/ksrc)
CFLAGS += -O2 -g -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE \
	-I$(KSRC)/tools/testing/selftests -I$(SUITE_LIB_DIR)/../../../include \
	-I$(SUITE_LIB_DIR)
LDLIBS += -libverbs -lpthread

SUITE_LIB_OUT ?= $(OUT)/lib
SUITE_LIB := $(SUITE_LIB_OUT)/libsuite.a
SUITE_LIB_OBJS := $(patsubst $(SUITE_LIB_DIR)/%.c,$(SUITE_LIB_OUT)/%.o,$(wildcard $(SUITE_LIB_DIR)/*.c))

$(SUITE_LIB_OUT)/%.o: $(SUITE_LIB_DIR)/%.c $(SUITE_LIB_DIR)/suite.h | $(SUITE_LIB_OUT)
	$(CC) $(CFLAGS) -c -o $@ $<

$(SUITE_LIB): $(SUITE_LIB_OBJS)
	$(AR) rcs $@ $^

$(OUT)/%: %.c $(wildcard *.h) $(SUITE_LIB_DIR)/suite.h $(SUITE_LIB) | $(OUT)
	$(CC) $(CFLAGS) -o $@ $< $(SUITE_LIB) $(LDLIBS)

$(OUT) $(SUITE_LIB_OUT):
	mkdir -p $@
