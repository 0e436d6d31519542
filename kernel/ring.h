/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vrnic rings: every ring has 2^log_depth entries and is indexed by a
 * free-running 32-bit counter (device interface section 6).
 */
#ifndef VRNIC_RING_H
#define VRNIC_RING_H

#include <linux/types.h>

#include <vrnic_dev.h>

/* The slot of free-running index @idx. */
static inline u32 vrnic_ring_slot(u32 idx, u32 log_depth)
{
	return idx & ((1U << log_depth) - 1);
}

/* The entry of @idx in a ring of @entry_size-byte entries at @ring. */
static inline void *vrnic_ring_entry(void *ring, u32 idx, u32 log_depth,
				     size_t entry_size)
{
	return ring + (size_t)vrnic_ring_slot(idx, log_depth) * entry_size;
}

/*
 * Has the device written the entry of @idx on this pass? Its owner byte
 * carries the pass's phase (section 6).
 */
static inline bool vrnic_ring_owned(u8 owner, u32 idx, u32 log_depth)
{
	return (owner & VRNIC_OWNER_PHASE) == VRNIC_PHASE(idx, log_depth);
}

#endif /* VRNIC_RING_H */
