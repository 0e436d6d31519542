#!/bin/bash
# Compare providers/vrnic/verbs_private.h with rdma-core's own private
# headers: check_private_abi.sh RDMA_CORE_SRC
#
# RDMA_CORE_SRC is a checkout of rdma-core at tag v44.0 (for example from
# `git archive v44.0` of github.com/linux-rdma/rdma-core). The script
# configures it just enough to generate its headers (cmake + the kern-abi
# target), compiles the same probe list against both declarations and diffs
# the sizes and offsets. Not part of CTest: it needs the rdma-core source,
# which the build machines do not have.
set -euo pipefail

src=$(realpath "${1:?usage: $0 RDMA_CORE_SRC}")
here=$(dirname "$(realpath "$0")")
top=$(realpath "$here/../../../..")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake -S "$src" -B "$work/rc" -DNO_MAN_PAGES=1 -DNO_PYVERBS=1 -DENABLE_RESOLVE_NEIGH=0 \
	> "$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
make -C "$work/rc" kern-abi > "$work/make.log" 2>&1 || { cat "$work/make.log"; exit 1; }

cc -I"$work/rc/include" -I"$src" -I"$work/rc" -I"$here" \
	-o "$work/probe_rdma_core" "$here/probe_rdma_core.c"
c++ -std=c++20 -I"$top/providers/vrnic" -I"$here" \
	-o "$work/probe_vrnic" "$here/probe_vrnic.cc"

"$work/probe_rdma_core" > "$work/rdma_core.txt"
"$work/probe_vrnic" > "$work/vrnic.txt"
if diff -u "$work/rdma_core.txt" "$work/vrnic.txt"; then
	echo "private ABI: $(wc -l < "$work/vrnic.txt") sizes and offsets match rdma-core at $src"
else
	echo "private ABI MISMATCH" >&2
	exit 1
fi
