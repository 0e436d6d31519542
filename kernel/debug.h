/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Checks of the driver's own invariants, compiled in by `make kernel
 * VRNIC_DEBUG=1`. They hold whatever the device or user space does: what a
 * device writes is validated and handled as an error elsewhere, never
 * checked here.
 */
#ifndef VRNIC_DEBUG_H
#define VRNIC_DEBUG_H

#include <linux/bug.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/poison.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#ifdef VRNIC_DEBUG
#define VRNIC_DEBUG_CHECKS true
#else
#define VRNIC_DEBUG_CHECKS false
#endif

/*
 * An invariant of the driver's own state; a normal build compiles the
 * condition but never evaluates it.
 */
#define vrnic_check(cond) do {					\
	if (VRNIC_DEBUG_CHECKS)					\
		WARN_ON_ONCE(!(cond));				\
} while (0)

/*
 * lockdep_assert_held() is empty without CONFIG_LOCKDEP, as on the
 * distribution kernels the driver runs on: also look at the lock itself.
 * That it is held, not by whom; enough to catch a path that forgot it.
 */
#define vrnic_assert_spin_held(lock) do {			\
	spinlock_t *l_ = (lock);				\
								\
	lockdep_assert_held(l_);				\
	vrnic_check(spin_is_locked(l_));			\
} while (0)

#define vrnic_assert_mutex_held(lock) do {			\
	struct mutex *m_ = (lock);				\
								\
	lockdep_assert_held(m_);				\
	vrnic_check(mutex_is_locked(m_));			\
} while (0)

/* Fill memory about to be freed, so that a late user reads garbage. */
static inline void vrnic_poison(void *p, size_t len)
{
	if (VRNIC_DEBUG_CHECKS && p)
		memset(p, POISON_FREE, len);
}

#endif /* VRNIC_DEBUG_H */
