// SPDX-License-Identifier: GPL-2.0-only
/*
 * Resize (fr-resize.c): the length in resized_sectors, outside the checksum;
 * grow, shrink over clean and dirty copies, refusals that change nothing,
 * and what a reload decodes. (Crashes inside a resize: the crash simulator's
 * p8-r2-resize and its mutants.)
 */
#include "harness.h"
#include "util.h"

static void pattern(void *arg, void *dst, u32 nr)
{
	memset(dst, *(const int *)arg, (size_t)nr * 512);
}

static u64 write_sectors(struct img *im, u64 sector, u32 nr, int byte)
{
	struct fr_write_result res;

	return fr_write(&im->c, sector, nr, pattern, &byte, &res);
}

/* A fresh attach of the image, as a reload reads it. */
static int reload(struct img *im, struct fr_cache *c2, unsigned long *vb,
		  unsigned long *db)
{
	const char *why = NULL;

	return fr_cache_attach(c2, im->pm, im->bytes, vb, db, &why);
}

TEST(resize_grow_commits_one_word)
{
	struct img im;
	struct fr_resize_report rep;
	struct fr_cache c2 = { 0 };
	unsigned long vb[4], db[4];
	const char *why = NULL;
	u8 before[FR_SB_BYTES];
	u64 fences;

	REQUIRE(!img_format(&im, 8, 2, 0, 10 * 8 - 3));
	CHECK_EQ(im.c.geo.origin_chunks, 10);
	/* Past the end: refused before the grow. */
	CHECK_EQ(write_sectors(&im, 12 * 8, 8, 0x11), FR_WRITE_FAILED);
	memcpy(before, im.pm, sizeof(before));
	fences = im.spm.fences;
	REQUIRE(!fr_resize(&im.c, 16 * 8, &rep, &why));
	CHECK_EQ(im.c.geo.origin_sectors, 16 * 8);
	CHECK_EQ(im.c.geo.origin_chunks, 16);
	CHECK_EQ(rep.clean_past_end, 0);
	CHECK_EQ(im.spm.fences, fences + 1);
	/* Only resized_sectors changed: the checksummed bytes are as they were. */
	CHECK(!memcmp(before, im.pm, offsetof(struct fr_sb_disk, resized_sectors)));
	CHECK(!memcmp(before + 184, im.pm + 184, FR_SB_BYTES - 184));
	CHECK_EQ(le64_to_cpu(im.c.sb->resized_sectors), 16 * 8);
	CHECK_EQ(le64_to_cpu(im.c.sb->origin_sectors), 10 * 8 - 3);
	CHECK_EQ(write_sectors(&im, 12 * 8, 8, 0x11), FR_WRITE_DONE);
	REQUIRE(!reload(&im, &c2, vb, db));
	CHECK_EQ(c2.geo.origin_sectors, 16 * 8);
	/* The same length again: nothing stored. */
	fences = im.spm.fences;
	REQUIRE(!fr_resize(&im.c, 16 * 8, &rep, &why));
	CHECK_EQ(im.spm.fences, fences);
	/* Keys past 56 bits, or no length: refused. */
	CHECK_EQ(fr_resize(&im.c, 0, &rep, &why), -EINVAL);
	CHECK_EQ(fr_resize(&im.c, (FR_MAX_KEY + 2) << 3, &rep, &why), -EINVAL);
	CHECK_STR(why, "56-bit");
	CHECK_EQ(im.c.geo.origin_sectors, 16 * 8);
	img_free(&im);
}

TEST(resize_shrink_refused_over_dirty_drops_clean)
{
	struct img im;
	struct fr_resize_report rep;
	struct fr_cache c2 = { 0 };
	unsigned long vb[4], db[4];
	const char *why = NULL;
	u8 before[4096 + 8 * 32];
	u64 p, valid;

	REQUIRE(!img_format(&im, 8, 2, 0, 16 * 8));
	/* Key 1 below the new end, key 12 past it, both dirty. */
	CHECK_EQ(write_sectors(&im, 1 * 8, 8, 0x21), FR_WRITE_DONE);
	CHECK_EQ(write_sectors(&im, 12 * 8 + 2, 3, 0x22), FR_WRITE_DONE);
	memcpy(before, im.pm, sizeof(before));
	CHECK_EQ(fr_resize_check(&im.c, 10 * 8, &rep, &why), -EBUSY);
	CHECK_EQ(rep.dirty_past_end, 1);
	CHECK_EQ(rep.first_dirty_key, 12);
	CHECK_EQ(fr_resize(&im.c, 10 * 8, &rep, &why), -EBUSY);
	CHECK_STR(why, "dirty chunks lie past the new end");
	CHECK(!memcmp(before, im.pm, sizeof(before)));
	CHECK_EQ(im.c.geo.origin_sectors, 16 * 8);
	/* Made clean (as writeback would): the shrink drops that copy. */
	for (p = 0; p < 8; p++) {
		u64 cw = le64_to_cpu(im.c.tags[p].commit);

		if ((cw & FR_TAG_VALID) && fr_commit_key(cw) == 12) {
			im.c.tags[p].commit = cpu_to_le64(cw & ~(u64)FR_TAG_DIRTY);
			clear_bit(p, im.db);
			atomic64_dec(&im.c.nr_dirty);
		}
	}
	CHECK_EQ(fr_resize_check(&im.c, 10 * 8, &rep, &why), 0);
	CHECK_EQ(rep.clean_past_end, 1);
	valid = fr_count_valid(&im.c);
	REQUIRE(!fr_resize(&im.c, 10 * 8, &rep, &why));
	CHECK_EQ(rep.clean_past_end, 1);
	CHECK_EQ(fr_count_valid(&im.c), valid - 1);
	CHECK_EQ(im.c.geo.origin_chunks, 10);
	/* A reload recovers the shorter cache, with key 1 and nothing past. */
	{
		struct fr_group_scratch gs[8];
		struct fr_recovery_report rr;

		REQUIRE(!reload(&im, &c2, vb, db));
		CHECK_EQ(c2.geo.origin_sectors, 10 * 8);
		CHECK_EQ(fr_recover(&c2, FR_RECOVER_APPLY, gs, 8, &rr, &why), 0);
		CHECK_EQ(rr.valid, 1);
		CHECK_EQ(rr.corrupt_tags, 0);
	}
	/* A short last chunk: a copy of its sectors below the end stays. */
	CHECK_EQ(write_sectors(&im, 9 * 8, 4, 0x23), FR_WRITE_DONE);
	CHECK_EQ(fr_resize(&im.c, 9 * 8 + 4, &rep, &why), 0);
	CHECK_EQ(fr_resize(&im.c, 9 * 8 + 3, &rep, &why), -EBUSY);
	img_free(&im);
}

TEST(resize_word_outside_checksum_is_validated)
{
	struct img im;
	struct fr_geometry g;
	struct fr_sb_disk sb;
	const char *why = NULL;

	REQUIRE(!img_format(&im, 8, 2, 0, 16 * 8));
	memcpy(&sb, im.pm, sizeof(sb));
	/* Any value passes the checksum; the geometry rules still apply. */
	sb.resized_sectors = cpu_to_le64(~0ULL);
	CHECK_EQ(fr_sb_decode(&sb, im.bytes, &g, &why), -EINVAL);
	CHECK_STR(why, "56-bit");
	sb.resized_sectors = cpu_to_le64(5);
	CHECK_EQ(fr_sb_decode(&sb, im.bytes, &g, &why), 0);
	CHECK_EQ(g.origin_sectors, 5);
	CHECK_EQ(g.origin_chunks, 1);
	sb.resized_sectors = 0;
	CHECK_EQ(fr_sb_decode(&sb, im.bytes, &g, &why), 0);
	CHECK_EQ(g.origin_sectors, 16 * 8);
	img_free(&im);
}
