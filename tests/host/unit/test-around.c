// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes sent around PM (fr-around.c): refused over a dirty copy, busy
 * while a slot is pinned, a clean copy dropped and fenced, both chunks of each slot
 * pinned until the end, and what a fill and a batch do meanwhile.
 * (Crashes and interleavings: the crash simulator, with its mutants
 * AROUND_KEEPS_COPY and AROUND_NO_PIN.)
 */
#include "harness.h"
#include "util.h"

static void pattern(void *arg, void *dst, u32 nr)
{
	memset(dst, *(const int *)arg, (size_t)nr * 512);
}

static enum fr_write_outcome write_sectors(struct img *im, u64 sector,
					   u32 nr, int byte)
{
	struct fr_write_result res;

	return fr_write(&im->c, sector, nr, pattern, &byte, &res);
}

/* Writeback to nowhere: what matters here is which chunks a batch takes. */
static void a_nolock(void *ctx, fr_slot_t s)
{
	(void)ctx;
	(void)s;
}

static int a_stage(void *ctx, u64 sector, const void *src, u32 nr)
{
	(void)ctx;
	(void)sector;
	(void)src;
	(void)nr;
	return 0;
}

static int a_done(void *ctx)
{
	(void)ctx;
	return 0;
}

static const struct fr_wb_ops a_ops = {
	.lock = a_nolock, .unlock = a_nolock, .stage = a_stage,
	.submit = a_done, .flush = a_done,
};

/* The two chunks of key k's slot. */
static u64 slot_first(struct img *im, u64 k)
{
	return 2 * from_slot(fr_slot_of(&im->c.geo, to_ochunk(k)));
}

TEST(around_refused_over_dirty_copy)
{
	struct img im;
	unsigned long pins[4] = { 0 };
	struct fr_hit hit;
	u64 fences;

	REQUIRE(!img_format(&im, 8, 2, 0, 16 * 8));
	im.c.pinned = pins;
	CHECK_EQ(write_sectors(&im, 8, 8, 0x11), FR_WRITE_DONE);
	fences = im.spm.fences;
	/* Key 1 dirty: the write goes to PM, in front of it; nothing changes. */
	CHECK_EQ(fr_around_begin(&im.c, 8, 8), FR_AROUND_REFUSED);
	CHECK_EQ(fr_around_begin(&im.c, 12, 1), FR_AROUND_REFUSED);
	CHECK_EQ(im.spm.fences, fences);
	CHECK(fr_lookup(&im.c, to_ochunk(1), &hit));
	CHECK_EQ(pins[0], 0);
	/* Key 0 (same region, no copy): it may go. */
	CHECK_EQ(fr_around_begin(&im.c, 0, 8), FR_AROUND_GO);
	CHECK_EQ(im.spm.fences, fences);	/* nothing dropped, no fence */
	fr_around_end(&im.c, 0, 8);
	CHECK_EQ(pins[0], 0);
	/* Past the end, or empty: refused. */
	CHECK_EQ(fr_around_begin(&im.c, 16 * 8 - 4, 8), FR_AROUND_REFUSED);
	CHECK_EQ(fr_around_begin(&im.c, 0, 0), FR_AROUND_REFUSED);
	img_free(&im);
}

TEST(around_drops_clean_copy_fenced_and_pins_slot)
{
	struct img im;
	unsigned long pins[4] = { 0 };
	struct fr_wb_snap snaps[8];
	struct fr_hit hit;
	u64 fences, s0, cursor = 0;
	int byte = 0x22;

	REQUIRE(!img_format(&im, 8, 2, 0, 16 * 8));
	im.c.pinned = pins;
	/* Key 3 filled clean. */
	CHECK_EQ(fr_fill(&im.c, to_ochunk(3), pattern, &byte), 1);
	CHECK(fr_lookup(&im.c, to_ochunk(3), &hit));
	CHECK_EQ(fr_count_valid(&im.c), 1);
	fences = im.spm.fences;
	/* A write around of part of key 3: the clean copy goes, fenced. */
	CHECK_EQ(fr_around_begin(&im.c, 3 * 8 + 2, 3), FR_AROUND_GO);
	CHECK_EQ(im.spm.fences, fences + 1);
	CHECK(!fr_lookup(&im.c, to_ochunk(3), &hit));
	CHECK_EQ(fr_count_valid(&im.c), 0);
	s0 = slot_first(&im, 3);
	CHECK(test_bit(s0, pins) && test_bit(s0 + 1, pins));
	/* Meanwhile: no second write around yet, no fill into the slot. */
	CHECK_EQ(fr_around_begin(&im.c, 3 * 8, 8), FR_AROUND_BUSY);
	CHECK(!fr_can_fill(&im.c, to_ochunk(3)));
	CHECK_EQ(fr_fill(&im.c, to_ochunk(3), pattern, &byte), 0);
	/*
	 * A write of key 3 stored on PM meanwhile (the target's stage copies,
	 * so it may store into a pinned chunk) is dirty, and a batch leaves
	 * it: the write around must land first.
	 */
	im.c.stage_copies = true;
	CHECK_EQ(write_sectors(&im, 3 * 8, 8, 0x33), FR_WRITE_DONE);
	CHECK_EQ(fr_count_dirty(&im.c), 1);
	fr_around_end(&im.c, 3 * 8 + 2, 3);
	CHECK(!test_bit(s0, pins) && !test_bit(s0 + 1, pins));
	/* Now the batch takes it. */
	CHECK_EQ(fr_writeback(&im.c, &cursor, 8, snaps, &a_ops, NULL), 1);
	CHECK_EQ(fr_count_dirty(&im.c), 0);
	img_free(&im);
}

TEST(around_busy_while_slot_in_flight)
{
	struct img im;
	unsigned long pins[4] = { 0 };
	u64 s0, fences;

	REQUIRE(!img_format(&im, 8, 2, 0, 16 * 8));
	im.c.pinned = pins;
	/* A stage has a chunk of key 5's slot pinned (its old copy in flight). */
	s0 = slot_first(&im, 5);
	set_bit(s0 + 1, pins);
	fences = im.spm.fences;
	/* Busy, not refused: it may go once the slot is unpinned. */
	CHECK_EQ(fr_around_begin(&im.c, 5 * 8, 8), FR_AROUND_BUSY);
	CHECK_EQ(fr_around_begin(&im.c, 4 * 8, 16), FR_AROUND_BUSY);
	CHECK_EQ(im.spm.fences, fences);
	CHECK(!test_bit(s0, pins));	/* nothing pinned meanwhile */
	clear_bit(s0 + 1, pins);
	CHECK_EQ(fr_around_begin(&im.c, 5 * 8, 8), FR_AROUND_GO);
	fr_around_end(&im.c, 5 * 8, 8);
	CHECK_EQ(pins[0], 0);
	img_free(&im);
}

/* A dirty copy refuses the write even where another slot is only busy. */
TEST(around_refused_over_dirty_copy_beside_busy_slot)
{
	struct img im;
	unsigned long pins[4] = { 0 };

	REQUIRE(!img_format(&im, 8, 2, 0, 16 * 8));
	im.c.pinned = pins;
	/* Regions of 2 chunks: keys 4 and 5 are one, 6 and 7 the next. */
	CHECK_EQ(write_sectors(&im, 4 * 8, 8, 0x44), FR_WRITE_DONE);
	CHECK_EQ(write_sectors(&im, 7 * 8, 8, 0x77), FR_WRITE_DONE);
	/* Dirty first, then busy; busy first, then dirty. */
	set_bit(slot_first(&im, 5), pins);
	CHECK_EQ(fr_around_begin(&im.c, 4 * 8, 16), FR_AROUND_REFUSED);
	set_bit(slot_first(&im, 6), pins);
	CHECK_EQ(fr_around_begin(&im.c, 6 * 8, 16), FR_AROUND_REFUSED);
	img_free(&im);
}
