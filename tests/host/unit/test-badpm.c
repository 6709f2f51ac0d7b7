// SPDX-License-Identifier: GPL-2.0-only
/*
 * Known bad PM (struct fr_bad): the core never stores to a bad range, never
 * chooses a bad chunk as a destination, keeps dirty copies on bad chunks
 * dirty and unreadable, and fails what lost slots would have to answer.
 */
#include "harness.h"
#include "util.h"

/*
 * p8-r2: 4 slots, regions of 2 chunks, stride 3, 16 origin chunks. Keys per
 * slot: 0:{0,3,8,11} 1:{1,6,9,14} 2:{4,7,12,15} 3:{2,5,10,13}.
 */
#define ORIGIN (16 * 8)
#define VD (FR_TAG_VALID | FR_TAG_DIRTY)
#define VND (FR_TAG_VALID | FR_TAG_NEW | FR_TAG_DIRTY)

struct bad_img {
	struct img im;
	unsigned long chunks[1], tag_slots[1], lost[1];
	u64 bad_stores;		/* stores that hit a bad range */
};

/* Every store must miss the bad tags and the bad chunks' data. */
static void check_store(struct simpm *pm, u64 off, size_t len, void *arg)
{
	struct bad_img *b = arg;
	const struct fr_geometry *g = &b->im.c.geo;
	u64 i;

	(void)pm;
	for (i = 0; i < g->nr_slots; i++) {
		u64 t = g->tags_offset + i * 2 * sizeof(struct fr_tag_disk);

		if ((b->tag_slots[0] >> i & 1) && off < t + 64 && off + len > t)
			b->bad_stores++;
	}
	for (i = 0; i < g->nr_chunks; i++) {
		u64 d = g->data_offset + i * 4096;

		if ((b->chunks[0] >> i & 1) && off < d + 4096 && off + len > d)
			b->bad_stores++;
	}
}

static int bad_setup(struct bad_img *b)
{
	memset(b, 0, sizeof(*b));
	if (img_format(&b->im, 8, 2, 3, ORIGIN))
		return -1;
	b->im.spm.on_store = check_store;
	b->im.spm.on_store_arg = b;
	return 0;
}

static int bad_recover(struct bad_img *b, struct fr_recovery_report *rep)
{
	struct fr_group_scratch gs[8];
	const char *why = NULL;
	int r;

	img_use(&b->im);
	r = fr_cache_attach(&b->im.c, b->im.pm, b->im.bytes, b->im.vb,
			    b->im.db, &why);
	if (r)
		return r;
	b->im.c.bad.chunks = b->chunks;
	b->im.c.bad.tag_slots = b->tag_slots;
	b->im.c.bad.lost = b->lost;
	return fr_recover(&b->im.c, FR_RECOVER_APPLY, gs, 8, rep, &why);
}

static void fill_byte(void *arg, void *dst, u32 nr)
{
	u8 buf[64 * 512];

	memset(buf, *(u8 *)arg, nr * 512);
	fr_pm_copy(dst, buf, nr * 512);
}

/* Writeback: a fake origin, and which chunks were skipped or staged. */
static u8 bo_mem[ORIGIN * 512];
static u32 bo_skips, bo_stages;

static void bo_nolock(void *ctx, fr_slot_t s) { (void)ctx; (void)s; }

static int bo_stage(void *ctx, u64 sector, const void *src, u32 nr)
{
	(void)ctx;
	memcpy(bo_mem + sector * 512, src, nr * 512);
	bo_stages++;
	return 0;
}

static int bo_ok(void *ctx) { (void)ctx; return 0; }

static void bo_skip(void *ctx, fr_pchunk_t p)
{
	(void)ctx;
	(void)p;
	bo_skips++;
}

static const struct fr_wb_ops bo_ops = {
	.lock = bo_nolock, .unlock = bo_nolock, .stage = bo_stage,
	.submit = bo_ok, .flush = bo_ok, .skip = bo_skip,
};

/*
 * Recovery with bad PM: slot 2's tags are bad and hold garbage that would
 * be corrupt (so APPLY would refuse it) if it were read; a clean copy on a
 * bad chunk is dropped, a dirty one kept and reported unreadable.
 */
TEST(bad_recovery_skips_lost_tags_and_sorts_bad_chunks)
{
	struct fr_recovery_report rep;
	struct bad_img b;
	struct fr_hit hit;

	REQUIRE(!bad_setup(&b));
	set_tag(&b.im, pch(0, 0), 0, VND, 5, 0xff);	/* dirty, good chunk */
	set_tag(&b.im, pch(0, 1), 3, FR_TAG_VALID, 4, 0xff); /* clean, bad */
	set_tag(&b.im, pch(1, 0), 1, VND, 6, 0xff);	/* dirty, bad */
	set_tag(&b.im, pch(2, 0), 9, FR_TAG_VALID | 0x70, 1, 0);	/* garbage */
	set_tag(&b.im, pch(2, 1), 4, VND, 7, 0xff);
	b.chunks[0] = 1UL << pch(0, 1) | 1UL << pch(1, 0);
	b.tag_slots[0] = b.lost[0] = 1UL << 2;
	REQUIRE(!bad_recover(&b, &rep));
	CHECK_EQ(rep.lost_slots, 1);
	CHECK_EQ(rep.corrupt_tags, 0);
	CHECK_EQ(rep.bad_clean_dropped, 1);
	CHECK_EQ(rep.bad_dirty, 1);
	CHECK_EQ(rep.valid, 2);
	CHECK_EQ(rep.dirty, 2);
	CHECK_EQ(tag_commit_of(&b.im, pch(0, 1)), 0);
	/* the lost slot's tags are as they were: never written */
	CHECK_EQ(tag_commit_of(&b.im, pch(2, 0)),
		 fr_commit_word(9, FR_TAG_VALID | 0x70));
	CHECK_EQ(b.bad_stores, 0);

	REQUIRE(fr_lookup(&b.im.c, to_ochunk(0), &hit));
	CHECK(!hit.unreadable);
	REQUIRE(fr_lookup(&b.im.c, to_ochunk(1), &hit));
	CHECK(hit.unreadable);
	CHECK_EQ(hit.sectors, 0xff);
	CHECK(!fr_lookup(&b.im.c, to_ochunk(3), &hit));
	/* every key of the lost slot "hits", unreadably, whole */
	REQUIRE(fr_lookup(&b.im.c, to_ochunk(7), &hit));
	CHECK(hit.unreadable && !hit.data && hit.sectors == 0xff);
	CHECK(!fr_can_fill(&b.im.c, to_ochunk(7)));
	img_free(&b.im);
}

/* What a write cannot do with unreadable PM, it refuses unchanged. */
TEST(bad_writes_refused_unchanged)
{
	struct fr_recovery_report rep;
	struct fr_write_result res;
	struct bad_img b;
	struct fr_hit hit;
	u64 stores;
	u8 v = 0x77;

	REQUIRE(!bad_setup(&b));
	set_tag(&b.im, pch(1, 0), 1, VND, 6, 0xff);	/* dirty, bad */
	b.chunks[0] = 1UL << pch(1, 0);
	b.tag_slots[0] = b.lost[0] = 1UL << 2;
	REQUIRE(!bad_recover(&b, &rep));
	stores = b.im.spm.stores;
	/* into a lost slot (key 4), alone or with a good neighbour (5) */
	CHECK_EQ(fr_write(&b.im.c, 4 * 8, 8, fill_byte, &v, &res), FR_WRITE_FAILED);
	CHECK_EQ(res.error, -EIO);
	CHECK_EQ(fr_write(&b.im.c, 4 * 8, 16, fill_byte, &v, &res), FR_WRITE_FAILED);
	CHECK_EQ(res.error, -EIO);
	/* a partial write of key 1 would merge the unreadable copy */
	CHECK_EQ(fr_write(&b.im.c, 1 * 8 + 2, 1, fill_byte, &v, &res), FR_WRITE_FAILED);
	CHECK_EQ(res.error, -EIO);
	CHECK_EQ(b.im.spm.stores, stores);
	CHECK_EQ(fr_fill(&b.im.c, to_ochunk(12), fill_byte, &v), 0);
	CHECK_EQ(b.im.spm.stores, stores);
	/* a whole write of key 1 replaces it, in the slot's good chunk */
	REQUIRE(!fr_write(&b.im.c, 1 * 8, 8, fill_byte, &v, &res));
	REQUIRE(fr_lookup(&b.im.c, to_ochunk(1), &hit));
	CHECK_EQ(from_pchunk(hit.pchunk), pch(1, 1));
	CHECK(!hit.unreadable);
	CHECK_EQ(tag_commit_of(&b.im, pch(1, 0)), 0);
	CHECK_EQ(((const u8 *)hit.data)[4095], 0x77);
	CHECK_EQ(b.bad_stores, 0);
	img_free(&b.im);
}

/*
 * A slot with one bad chunk: its good chunk takes each write, the copy
 * there leaving first (cleaned if dirty); with both bad, writes bypass.
 */
TEST(bad_single_chunk_slot_and_bypass)
{
	struct fr_recovery_report rep;
	struct fr_write_result res;
	struct fr_wb_snap snaps[8];
	struct bad_img b;
	struct fr_hit hit;
	u64 cursor = 0;
	u8 v1 = 0x11, v2 = 0x22;

	REQUIRE(!bad_setup(&b));
	b.chunks[0] = 1UL << pch(0, 0) | 1UL << pch(3, 0) | 1UL << pch(3, 1);
	REQUIRE(!bad_recover(&b, &rep));
	memset(bo_mem, 0, sizeof(bo_mem));
	REQUIRE(!fr_write(&b.im.c, 0, 8, fill_byte, &v1, &res));
	REQUIRE(fr_lookup(&b.im.c, to_ochunk(0), &hit));
	CHECK_EQ(from_pchunk(hit.pchunk), pch(0, 1));
	/* key 0 again: its own dirty copy is in the only chunk */
	CHECK_EQ(fr_write(&b.im.c, 0, 8, fill_byte, &v2, &res), FR_WRITE_NEED_CLEAN);
	CHECK_EQ(from_pchunk(res.victim), pch(0, 1));
	CHECK_EQ(fr_writeback(&b.im.c, &cursor, 8, snaps, &bo_ops, NULL), 1);
	CHECK_EQ(bo_mem[0], 0x11);
	REQUIRE(!fr_write(&b.im.c, 4, 4, fill_byte, &v2, &res));
	CHECK_EQ(res.evictions, 1);
	REQUIRE(fr_lookup(&b.im.c, to_ochunk(0), &hit));
	CHECK_EQ(from_pchunk(hit.pchunk), pch(0, 1));
	/* partial over an evicted clean copy: the rest is the origin's */
	CHECK_EQ(hit.sectors, 0xf0);
	/* another key of slot 0 (3, clean fill): displaces nothing dirty */
	CHECK_EQ(fr_fill(&b.im.c, to_ochunk(3), fill_byte, &v1), 0);
	/* slot 3 has no good chunk: keys 2, 5, 10, 13 go to the origin */
	CHECK_EQ(fr_write(&b.im.c, 2 * 8, 8, fill_byte, &v1, &res), FR_WRITE_BYPASS);
	CHECK_EQ(res.bypass, 2);
	/*
	 * A range over key 4 (slot 2, full of dirty 7 and 12) then 5 (slot 3)
	 * names 5 before asking for a clean: nothing to clean in vain.
	 */
	REQUIRE(!fr_write(&b.im.c, 7 * 8, 8, fill_byte, &v1, &res));
	REQUIRE(!fr_write(&b.im.c, 12 * 8, 8, fill_byte, &v1, &res));
	CHECK_EQ(fr_write(&b.im.c, 4 * 8, 8, fill_byte, &v1, &res),
		 FR_WRITE_NEED_CLEAN);
	CHECK_EQ(fr_write(&b.im.c, 4 * 8, 16, fill_byte, &v1, &res), FR_WRITE_BYPASS);
	CHECK_EQ(res.bypass, 5);
	CHECK(!fr_can_fill(&b.im.c, to_ochunk(10)));
	CHECK_EQ(fr_fill(&b.im.c, to_ochunk(10), fill_byte, &v1), 0);
	CHECK_EQ(b.bad_stores, 0);
	img_free(&b.im);
}

/* Writeback never reads a bad chunk: it tells the caller and goes on. */
TEST(bad_writeback_skips_and_forget_drops)
{
	struct fr_recovery_report rep;
	struct fr_write_result res;
	struct fr_wb_snap snaps[8];
	struct bad_img b;
	struct fr_hit hit;
	u64 cursor = 0;
	u8 v = 0x33;

	REQUIRE(!bad_setup(&b));
	set_tag(&b.im, pch(1, 0), 1, VND, 6, 0xff);	/* dirty, bad */
	b.chunks[0] = 1UL << pch(1, 0);
	b.tag_slots[0] = b.lost[0] = 1UL << 2;
	REQUIRE(!bad_recover(&b, &rep));
	REQUIRE(!fr_write(&b.im.c, 0, 8, fill_byte, &v, &res));
	bo_skips = bo_stages = 0;
	memset(bo_mem, 0, sizeof(bo_mem));
	CHECK_EQ(fr_writeback(&b.im.c, &cursor, 8, snaps, &bo_ops, NULL), 1);
	CHECK_EQ(bo_skips, 1);
	CHECK_EQ(bo_stages, 1);
	CHECK_EQ(bo_mem[8 * 512], 0);	/* key 1 never staged */
	CHECK_EQ(fr_count_dirty(&b.im.c), 1);

	/* Declared lost: one dirty copy and one slot. */
	CHECK_EQ(fr_forget_unreadable(&b.im.c, to_slot(0), 4), 2);
	CHECK_EQ(fr_count_dirty(&b.im.c), 0);
	CHECK(!fr_lookup(&b.im.c, to_ochunk(1), &hit));
	CHECK(!fr_lookup(&b.im.c, to_ochunk(4), &hit));
	/* the forgotten slot still has bad tags: writes bypass it */
	CHECK_EQ(fr_write(&b.im.c, 4 * 8, 8, fill_byte, &v, &res), FR_WRITE_BYPASS);
	CHECK_EQ(fr_discard(&b.im.c, 4 * 8, 8), 0);
	CHECK_EQ(fr_forget_unreadable(&b.im.c, to_slot(0), 4), 0);
	CHECK_EQ(b.bad_stores, 0);
	img_free(&b.im);
}

/* A format leaves retired slots' tags alone and hands over the bad set. */
TEST(bad_format_skips_retired_tags)
{
	struct bad_img b;
	struct fr_hit hit;
	const char *why = NULL;

	REQUIRE(!bad_setup(&b));
	set_tag(&b.im, pch(2, 0), 9, FR_TAG_VALID | 0x70, 1, 0);
	b.tag_slots[0] = 1UL << 2;
	REQUIRE(!fr_format_bad(&b.im.c, b.im.pm, b.im.bytes, &b.im.p, b.im.vb,
			       b.im.db, &(struct fr_bad){ .chunks = b.chunks,
			       .tag_slots = b.tag_slots, .lost = b.lost }, &why));
	CHECK_EQ(b.bad_stores, 0);
	CHECK_EQ(tag_commit_of(&b.im, pch(2, 0)),
		 fr_commit_word(9, FR_TAG_VALID | 0x70));
	CHECK(b.im.c.bad.tag_slots == b.tag_slots);
	CHECK(!fr_lookup(&b.im.c, to_ochunk(4), &hit));
	img_free(&b.im);
}
