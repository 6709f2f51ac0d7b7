// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the superblock decoder alone. Input: an 8-byte PM size
 * (little-endian) and up to 512 superblock bytes; mode bit 0 of the size's
 * top byte: recompute the checksum. A superblock that decodes must satisfy
 * every layout invariant the core relies on.
 */
#include <stdio.h>
#include <stdlib.h>
#include "fr-core.h"

static void fail(const char *what)
{
	fprintf(stderr, "fuzz-sb: property violated: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fr_sb_disk sb;
	struct fr_geometry g;
	const char *why = NULL;
	u64 pm;
	int r;

	if (size < 8)
		return 0;
	memcpy(&pm, data, 8);
	pm = le64_to_cpu(pm);
	memset(&sb, 0, sizeof(sb));
	memcpy(&sb, data + 8, size - 8 > sizeof(sb) ? sizeof(sb) : size - 8);
	if (pm >> 63) {
		sb.csum = cpu_to_le32(fr_sb_csum(&sb));
	}
	pm &= (1ULL << 56) - 1;
	r = fr_sb_decode(&sb, pm, &g, &why);
	if (r) {
		if (!why || (r != -EINVAL && r != -EUCLEAN))
			fail("refusal without a reason or with an odd error");
		return 0;
	}
	if (g.nr_chunks < 2 || (g.nr_chunks & 1) || g.nr_slots != g.nr_chunks / 2 ||
	    g.stride_slots < 1 || g.stride_slots >= g.nr_slots ||
	    g.region_chunks > g.nr_slots || g.region_chunks > FR_MAX_REGION_CHUNKS ||
	    (g.region_chunks & (g.region_chunks - 1)) ||
	    g.chunk_sectors < FR_MIN_CHUNK_SECTORS ||
	    g.chunk_sectors > FR_MAX_CHUNK_SECTORS ||
	    (g.chunk_sectors & (g.chunk_sectors - 1)) ||
	    (1U << g.chunk_shift) != g.chunk_sectors ||
	    (1U << g.region_shift) != g.region_chunks ||
	    g.pm_bytes > pm || g.tags_offset != FR_SB_RESERVED ||
	    g.data_offset % 4096 ||
	    g.data_offset < g.tags_offset + g.nr_chunks * sizeof(struct fr_tag_disk) ||
	    g.data_offset + g.nr_chunks * ((u64)g.chunk_sectors << 9) > g.pm_bytes ||
	    !g.origin_sectors || g.origin_chunks - 1 > FR_MAX_KEY)
		fail("decoded geometry breaks a layout invariant");
	/* every slot computation stays in range */
	if (from_slot(fr_slot_of(&g, to_ochunk(g.origin_chunks - 1))) >= g.nr_slots)
		fail("slot out of range");
	return 0;
}

#ifdef FUZZ_STANDALONE
int main(int argc, char **argv)
{
	static uint8_t buf[8 + 512];
	int i;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		size_t len;

		if (!f) {
			perror(argv[i]);
			return 1;
		}
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf("%d inputs ran\n", argc - 1);
	return 0;
}
#endif
