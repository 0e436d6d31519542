// SPDX-License-Identifier: GPL-2.0
/* Byte patterns written and checked. */
#include "suite.h"

uint8_t su_pat(unsigned int seed, size_t i)
{
	uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u;

	return (uint8_t)(x ^ (x >> 11) ^ (x >> 19));
}

void su_fill(void *b, size_t len, unsigned int seed)
{
	uint8_t *p = b;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = su_pat(seed, i);
}

long su_check(const void *b, size_t len, unsigned int seed)
{
	const uint8_t *p = b;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != su_pat(seed, i))
			return (long)i;
	return -1;
}

long su_check_byte(const void *b, size_t len, uint8_t v)
{
	const uint8_t *p = b;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}
