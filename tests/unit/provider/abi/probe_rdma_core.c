// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Sizes and offsets from rdma-core's own (uninstalled) headers.
#include <stddef.h>
#include <stdio.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>

#define S(t) printf("sizeof(%s) = %zu\n", #t, sizeof(t));
#define O(t, m) printf("offsetof(%s, %s) = %zu\n", #t, #m, offsetof(t, m));

int main(void)
{
#include "probe_list.h"
	return 0;
}
