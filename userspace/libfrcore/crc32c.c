// SPDX-License-Identifier: GPL-2.0-only
/*
 * crc32c() as <linux/crc32c.h> has it, for the userspace builds of the core:
 * CRC-32C (Castagnoli), reflected, with no inversion in or out (the caller
 * passes ~0 and inverts the result for the standard check value).
 */
#include "fr-user.h"

u32 crc32c(u32 crc, const void *address, unsigned int length)
{
	const u8 *p = address;
	int k;

	while (length--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78 & (0U - (crc & 1)));
	}
	return crc;
}
