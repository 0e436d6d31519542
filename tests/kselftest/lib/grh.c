// SPDX-License-Identifier: GPL-2.0
/* The GRH area of a UD receive, checked as RoCE v2 fills it for IPv4. */
#include "suite.h"

static uint16_t be16_at(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

int su_grh_ipv4_check(const uint8_t *g, const uint8_t *sgid,
		      const uint8_t *dgid, uint32_t len)
{
	const uint8_t *h = g + 20;
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i++)
		if (g[i])
			return 1;
	if (h[0] != 0x45)
		return 2;
	if (h[1] != 0)			/* traffic_class of the AH */
		return 3;
	/* IP, UDP, BTH, DETH, what follows DETH, ICRC */
	if (be16_at(h + 2) != 20 + 8 + 12 + 8 + len + 4)
		return 4;
	if (be16_at(h + 6) != 0x4000)	/* DF, no fragment offset */
		return 5;
	if (h[8] != SU_HOP_LIMIT)
		return 6;
	if (h[9] != 17)
		return 7;
	for (i = 0; i < 20; i += 2)
		sum += be16_at(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	if (sum != 0xffff)
		return 8;
	if (memcmp(h + 12, sgid + 12, 4))
		return 9;
	if (memcmp(h + 16, dgid + 12, 4))
		return 10;
	return 0;
}
