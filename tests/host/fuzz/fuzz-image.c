// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: an arbitrary PM image through everything that reads
 * PM written by someone else: fr_sb_decode(), fr_cache_attach(),
 * fr_recover() in CHECK, REPAIR and APPLY modes, and fr_lookup().
 *
 * Input: one mode byte, then the image. Mode bit 0: recompute the
 * superblock checksum first (so that mutations of the geometry fields get
 * past the checksum and reach the layout checks and the tag decoder).
 *
 * Besides "no crash, no sanitizer report", it checks properties:
 *  - CHECK changes no byte of the image;
 *  - REPAIR leaves an image that APPLY accepts with no corrupt tags and no
 *    stores (idempotent), and whose valid chunks each map to their slot;
 *  - APPLY either succeeds or refuses (-EUCLEAN/-E2BIG) without changing
 *    a byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include "fr-core.h"

#define MAX_IMAGE (1 << 20)
#define NGROUPS 8

static void fail(const char *what)
{
	fprintf(stderr, "fuzz-image: property violated: %s\n", what);
	abort();
}

static void check_lookups(const struct fr_cache *c)
{
	u64 p;

	for (p = 0; p < c->geo.nr_chunks; p++) {
		u64 cw = le64_to_cpu(c->tags[p].commit);
		struct fr_hit hit;

		if (!test_bit(p, c->valid_bits))
			continue;
		if (!(cw & FR_TAG_VALID) ||
		    !fr_lookup(c, to_ochunk(fr_commit_key(cw)), &hit))
			fail("a valid chunk is not found by fr_lookup");
		if (fr_slot_of_pchunk(&c->geo, hit.pchunk) !=
		    fr_slot_of_pchunk(&c->geo, to_pchunk(p)))
			fail("lookup outside the chunk's slot");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fr_group_scratch gs[NGROUPS];
	struct fr_recovery_report rep;
	struct fr_geometry g;
	struct fr_cache c = { 0 };
	unsigned long *vb, *db;
	const char *why = NULL;
	u8 *img, *copy;
	size_t n;
	int r;

	if (size < 1 || size - 1 > MAX_IMAGE)
		return 0;
	n = size - 1;
	/* PM is mapped in whole pages; an aligned buffer also keeps tag
	 * words 8-byte aligned as the core requires. */
	img = aligned_alloc(4096, (n + 4096) & ~(size_t)4095);
	copy = malloc(n + 1);
	memset(img, 0, (n + 4096) & ~(size_t)4095);
	if (n)
		memcpy(img, data + 1, n);
	if ((data[0] & 1) && n >= FR_SB_BYTES) {
		struct fr_sb_disk *sb = (struct fr_sb_disk *)img;

		sb->csum = cpu_to_le32(fr_sb_csum(sb));
	}

	if (n >= FR_SB_BYTES)
		(void)fr_sb_decode((const struct fr_sb_disk *)img, n, &g, &why);
	r = fr_cache_attach(&c, img, n, NULL, NULL, &why);
	if (r) {
		if (!why)
			fail("attach refused without a reason");
		goto out;
	}
	vb = calloc(fr_bitmap_longs(&c.geo), sizeof(long));
	db = calloc(fr_bitmap_longs(&c.geo), sizeof(long));
	c.valid_bits = vb;
	c.dirty_bits = db;

	memcpy(copy, img, n);
	r = fr_recover(&c, FR_RECOVER_CHECK, gs, NGROUPS, &rep, &why);
	if (memcmp(copy, img, n) || rep.stores)
		fail("CHECK changed the image");
	if (!r)
		check_lookups(&c);

	r = fr_recover(&c, FR_RECOVER_APPLY, gs, NGROUPS, &rep, &why);
	if (r && memcmp(copy, img, n))
		fail("APPLY refused but changed the image");
	if (r && r != -EUCLEAN && r != -E2BIG)
		fail("APPLY failed with an unexpected error");

	r = fr_recover(&c, FR_RECOVER_REPAIR, gs, NGROUPS, &rep, &why);
	if (r && r != -E2BIG)
		fail("REPAIR failed with an unexpected error");
	if (!r) {
		check_lookups(&c);
		r = fr_recover(&c, FR_RECOVER_APPLY, gs, NGROUPS, &rep, &why);
		if (r || rep.corrupt_tags || rep.stores)
			fail("APPLY after REPAIR is not clean and idempotent");
		if (rep.valid != fr_count_valid(&c) || rep.dirty != fr_count_dirty(&c))
			fail("report disagrees with the bitmaps");
	}
	free(vb);
	free(db);
out:
	free(img);
	free(copy);
	return 0;
}

#ifdef FUZZ_STANDALONE
/* Without libFuzzer: run each file named on the command line once. */
int main(int argc, char **argv)
{
	static uint8_t buf[MAX_IMAGE + 1];
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
