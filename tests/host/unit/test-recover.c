// SPDX-License-Identifier: GPL-2.0-only
/* fr_recover() modes on crafted tag states, and the core's refusals. */
#include <stdlib.h>
#include "harness.h"
#include "util.h"

/*
 * p8-r2: 4 slots, regions of 2 chunks, stride 3, 16 origin chunks, the last
 * one short (5 sectors). Keys per slot: 0:{0,3,8,11} 1:{1,6,9,14}
 * 2:{4,7,12,15} 3:{2,5,10,13}.
 */
#define ORIGIN (16 * 8 - 3)
#define VND (FR_TAG_VALID | FR_TAG_NEW | FR_TAG_DIRTY)

static int recover(struct img *im, enum fr_recover_mode m, u32 ngroups,
		   struct fr_recovery_report *rep, const char **why)
{
	struct fr_group_scratch gs[8];
	struct fr_cache c = { 0 };
	int r;

	img_use(im);
	memset(im->vb, 0xa5, sizeof(im->vb));
	memset(im->db, 0xa5, sizeof(im->db));
	r = fr_cache_attach(&c, im->pm, im->bytes, im->vb, im->db, why);
	if (r)
		return r;
	r = fr_recover(&c, m, gs, ngroups, rep, why);
	im->c = c;
	return r;
}

/* An interrupted group (keys 0, 1) over an older copy of key 0, and a
 * superseded copy of key 4. */
static void messy(struct img *im)
{
	set_tag(im, pch(0, 1), 0, FR_TAG_VALID | FR_TAG_DIRTY, 3, 0xff);
	set_tag(im, pch(0, 0), 0, VND | FR_TAG_INCOMPLETE, 9, 0xff);
	set_tag(im, pch(1, 0), 1, VND | FR_TAG_INCOMPLETE, 9, 0x0f);
	set_tag(im, pch(2, 0), 4, FR_TAG_VALID | FR_TAG_DIRTY, 7, 0xff);
	set_tag(im, pch(2, 1), 4, VND, 8, 0x01);
	set_tag(im, pch(3, 1), 2, FR_TAG_VALID | FR_TAG_NEW, 2, 0xff);
}

TEST(recover_check_changes_nothing)
{
	struct img im;
	struct fr_recovery_report rep;
	const char *why = NULL;
	u8 *before;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	messy(&im);
	before = malloc(im.bytes);
	memcpy(before, im.pm, im.bytes);
	REQUIRE(!recover(&im, FR_RECOVER_CHECK, 8, &rep, &why));
	CHECK(!memcmp(before, im.pm, im.bytes));
	CHECK_EQ(rep.stores, 0);
	CHECK_EQ(rep.groups_rolled_back, 1);
	CHECK_EQ(rep.groups_rolled_forward, 0);
	CHECK_EQ(rep.members_rolled_back, 2);
	CHECK_EQ(rep.superseded_dropped, 1);
	CHECK_EQ(rep.valid, 3);		/* old key 0, new key 4, key 2 */
	CHECK_EQ(rep.dirty, 2);
	CHECK_EQ(rep.corrupt_tags, 0);
	CHECK_EQ(rep.max_seq, 9);
	/* CHECK still rebuilds the DRAM state it reports */
	CHECK_EQ(fr_count_valid(&im.c), 3);
	CHECK_EQ(fr_count_dirty(&im.c), 2);
	free(before);
	img_free(&im);
}

TEST(recover_apply_resolves_and_is_idempotent)
{
	struct img im;
	struct fr_recovery_report rep;
	struct fr_hit hit;
	const char *why = NULL;
	u8 *after;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	messy(&im);
	REQUIRE(!recover(&im, FR_RECOVER_APPLY, 8, &rep, &why));
	CHECK_EQ(rep.groups_rolled_back, 1);
	CHECK_EQ(rep.superseded_dropped, 1);
	CHECK(rep.stores >= 3);
	CHECK_EQ(tag_commit_of(&im, pch(0, 0)), 0);
	CHECK_EQ(tag_commit_of(&im, pch(1, 0)), 0);
	CHECK_EQ(tag_commit_of(&im, pch(2, 0)), 0);
	CHECK_EQ(tag_commit_of(&im, pch(0, 1)),
		 fr_commit_word(0, FR_TAG_VALID | FR_TAG_DIRTY));
	REQUIRE(fr_lookup(&im.c, to_ochunk(0), &hit));
	CHECK_EQ(from_pchunk(hit.pchunk), pch(0, 1));
	CHECK(!fr_lookup(&im.c, to_ochunk(1), &hit));
	REQUIRE(fr_lookup(&im.c, to_ochunk(4), &hit));
	CHECK_EQ(hit.sectors, 0x01);
	CHECK_EQ(fr_count_valid(&im.c), 3);
	CHECK_EQ(atomic64_read(&im.c.next_seq), 9);
	after = malloc(im.bytes);
	memcpy(after, im.pm, im.bytes);
	REQUIRE(!recover(&im, FR_RECOVER_APPLY, 8, &rep, &why));
	CHECK_EQ(rep.stores, 0);
	CHECK(!memcmp(after, im.pm, im.bytes));
	free(after);
	img_free(&im);
}

TEST(recover_rolls_forward_a_committed_group)
{
	struct img im;
	struct fr_recovery_report rep;
	const char *why = NULL;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	/* member of key 1 completed (INCOMPLETE clear): the group committed */
	set_tag(&im, pch(0, 1), 0, FR_TAG_VALID | FR_TAG_DIRTY, 3, 0xff);
	set_tag(&im, pch(0, 0), 0, VND | FR_TAG_INCOMPLETE, 9, 0xf0);
	set_tag(&im, pch(1, 0), 1, VND, 9, 0x0f);
	REQUIRE(!recover(&im, FR_RECOVER_APPLY, 8, &rep, &why));
	CHECK_EQ(rep.groups_rolled_forward, 1);
	CHECK_EQ(rep.groups_rolled_back, 0);
	CHECK_EQ(rep.superseded_dropped, 1);
	CHECK_EQ(tag_commit_of(&im, pch(0, 0)), fr_commit_word(0, VND));
	CHECK_EQ(tag_commit_of(&im, pch(0, 1)), 0);
	CHECK_EQ(tag_commit_of(&im, pch(1, 0)), fr_commit_word(1, VND));
	img_free(&im);
}

TEST(recover_apply_refuses_corrupt_tags_unchanged)
{
	struct img im;
	struct fr_recovery_report rep;
	const char *why = NULL;
	u8 *before;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	messy(&im);
	set_tag(&im, pch(3, 0), 5, FR_TAG_VALID | 0x10, 1, 0xff);
	before = malloc(im.bytes);
	memcpy(before, im.pm, im.bytes);
	CHECK_EQ(recover(&im, FR_RECOVER_APPLY, 8, &rep, &why), -EUCLEAN);
	CHECK_STR(why, "corrupt tags");
	CHECK(!memcmp(before, im.pm, im.bytes));
	CHECK_EQ(rep.corrupt_tags, 1);
	CHECK_EQ(rep.first_corrupt, pch(3, 0));
	CHECK_EQ(rep.stores, 0);

	/* REPAIR clears the corrupt tag and resolves the rest */
	REQUIRE(!recover(&im, FR_RECOVER_REPAIR, 8, &rep, &why));
	CHECK_EQ(rep.corrupt_tags, 1);
	CHECK_EQ(tag_commit_of(&im, pch(3, 0)), 0);
	CHECK_EQ(tag_commit_of(&im, pch(0, 0)), 0);
	CHECK_EQ(rep.groups_rolled_back, 1);
	REQUIRE(!recover(&im, FR_RECOVER_APPLY, 8, &rep, &why));
	CHECK_EQ(rep.corrupt_tags, 0);
	CHECK_EQ(rep.stores, 0);
	CHECK_EQ(rep.valid, 3);
	free(before);
	img_free(&im);
}

TEST(recover_e2big_when_scratch_too_small)
{
	struct img im;
	struct fr_recovery_report rep;
	const char *why = NULL;
	u8 *before;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	/* three interrupted groups: seqs 4, 5, 6 */
	set_tag(&im, pch(0, 0), 0, VND | FR_TAG_INCOMPLETE, 4, 0xff);
	set_tag(&im, pch(1, 0), 1, VND | FR_TAG_INCOMPLETE, 4, 0xff);
	set_tag(&im, pch(3, 0), 2, VND | FR_TAG_INCOMPLETE, 5, 0xff);
	set_tag(&im, pch(0, 1), 3, VND | FR_TAG_INCOMPLETE, 5, 0xff);
	set_tag(&im, pch(2, 0), 4, VND | FR_TAG_INCOMPLETE, 6, 0xff);
	set_tag(&im, pch(3, 1), 5, VND | FR_TAG_INCOMPLETE, 6, 0xff);
	before = malloc(im.bytes);
	memcpy(before, im.pm, im.bytes);
	CHECK_EQ(recover(&im, FR_RECOVER_APPLY, 2, &rep, &why), -E2BIG);
	CHECK_STR(why, "too many interrupted");
	CHECK(!memcmp(before, im.pm, im.bytes));
	CHECK_EQ(recover(&im, FR_RECOVER_REPAIR, 2, &rep, &why), -E2BIG);
	CHECK(!memcmp(before, im.pm, im.bytes));
	REQUIRE(!recover(&im, FR_RECOVER_APPLY, 3, &rep, &why));
	CHECK_EQ(rep.groups_rolled_back, 3);
	CHECK_EQ(rep.members_rolled_back, 6);
	CHECK_EQ(fr_count_valid(&im.c), 0);
	free(before);
	img_free(&im);
}

TEST(recover_detects_every_kind_of_corrupt_tag)
{
	const struct {
		const char *what;
		u64 p, key;
		u8 flags;
		u64 sectors;
	} cases[] = {
		{ "unknown flag", pch(0, 0), 0, FR_TAG_VALID | 0x80, 0xff },
		{ "key beyond the origin", pch(0, 0), 16, FR_TAG_VALID, 0xff },
		{ "key of another slot", pch(0, 0), 1, FR_TAG_VALID, 0xff },
		{ "no sectors held", pch(0, 0), 3, FR_TAG_VALID, 0 },
		{ "sectors past the chunk", pch(0, 0), 0, FR_TAG_VALID, 0x100 },
		{ "sectors past the short last chunk", pch(2, 1), 15,
		  FR_TAG_VALID, 0x3f },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(cases); i++) {
		struct img im;
		struct fr_recovery_report rep;
		const char *why = NULL;

		REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
		set_tag(&im, cases[i].p, cases[i].key, cases[i].flags, 1,
			cases[i].sectors);
		CHECK_EQ(recover(&im, FR_RECOVER_CHECK, 8, &rep, &why), 0);
		if (rep.corrupt_tags != 1 || rep.first_corrupt != cases[i].p)
			printf("  not detected: %s\n", cases[i].what);
		CHECK_EQ(rep.corrupt_tags, 1);
		CHECK_EQ(rep.first_corrupt, cases[i].p);
		CHECK_EQ(recover(&im, FR_RECOVER_APPLY, 8, &rep, &why), -EUCLEAN);
		img_free(&im);
	}
	/* the short last chunk's own mask is fine */
	{
		struct img im;
		struct fr_recovery_report rep;
		const char *why = NULL;

		REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
		set_tag(&im, pch(2, 1), 15, FR_TAG_VALID, 1, 0x1f);
		CHECK_EQ(recover(&im, FR_RECOVER_APPLY, 8, &rep, &why), 0);
		CHECK_EQ(rep.corrupt_tags, 0);
		CHECK_EQ(rep.valid, 1);
		img_free(&im);
	}
	/* two copies of one key, both N: the older (by seq) is the corrupt one */
	{
		struct img im;
		struct fr_recovery_report rep;
		const char *why = NULL;

		REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
		set_tag(&im, pch(0, 0), 3, VND, 7, 0xff);
		set_tag(&im, pch(0, 1), 3, VND, 6, 0xff);
		CHECK_EQ(recover(&im, FR_RECOVER_CHECK, 8, &rep, &why), 0);
		CHECK_EQ(rep.corrupt_tags, 1);
		CHECK_EQ(rep.first_corrupt, pch(0, 1));
		REQUIRE(!recover(&im, FR_RECOVER_REPAIR, 8, &rep, &why));
		CHECK_EQ(tag_commit_of(&im, pch(0, 1)), 0);
		CHECK_EQ(tag_commit_of(&im, pch(0, 0)), fr_commit_word(3, VND));
		img_free(&im);
	}
	/* an unreadable tag (machine check) is counted and repaired */
	{
		struct img im;
		struct fr_recovery_report rep;
		const char *why = NULL;

		REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
		set_tag(&im, pch(1, 1), 6, VND, 7, 0xff);
		/* In the same batch of tags: read one by one, still valid. */
		set_tag(&im, pch(0, 0), 3, VND, 5, 0xff);
		im.spm.poison_off = (u64)((u8 *)&im.c.tags[pch(1, 1)].seq - im.pm);
		im.spm.poison_len = 8;
		CHECK_EQ(recover(&im, FR_RECOVER_APPLY, 8, &rep, &why), -EUCLEAN);
		CHECK_EQ(rep.unreadable_tags, 1);
		CHECK_EQ(rep.corrupt_tags, 1);
		REQUIRE(!recover(&im, FR_RECOVER_REPAIR, 8, &rep, &why));
		CHECK_EQ(tag_commit_of(&im, pch(1, 1)), 0);
		CHECK_EQ(rep.valid, 1);
		CHECK_EQ(rep.dirty, 1);
		CHECK(test_bit(pch(0, 0), im.c.valid_bits));
		CHECK(test_bit(pch(0, 0), im.c.dirty_bits));
		CHECK(!test_bit(pch(1, 1), im.c.valid_bits));
		img_free(&im);
	}
}

/*
 * The scan builds the bitmaps a word at a time when nothing needs resolving,
 * and phase 4 bit by bit otherwise: over several words and a partial last
 * one, both must give what the tags say, and the same counts.
 */
TEST(recover_bitmaps_scan_only_and_full)
{
	enum { CHUNKS = 300, SLOTS = CHUNKS / 2 };
	static struct img im;
	struct fr_recovery_report rep;
	const char *why = NULL;
	u64 keys[SLOTS][2], s, k, nv = 0, nd = 0, rnd = 12345;
	u32 nk[SLOTS] = { 0 }, i, pass;
	bool want_v[CHUNKS] = { false }, want_d[CHUNKS] = { false };

	REQUIRE(!img_format(&im, CHUNKS, 2, 1, CHUNKS * 8 * 3));
	for (k = 0; k < im.c.geo.origin_chunks; k++) {
		s = from_slot(fr_slot_of(&im.c.geo, to_ochunk(k)));
		if (nk[s] < 2)
			keys[s][nk[s]++] = k;
	}
	for (s = 0; s < SLOTS; s++) {
		REQUIRE(nk[s] == 2);
		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		for (i = 0; i < 2; i++) {
			u32 what = (rnd >> (33 + 3 * i)) % 4;	/* free, clean, dirty, dirty */

			if (!what)
				continue;
			set_tag(&im, s * 2 + i, keys[s][i],
				FR_TAG_VALID | (i ? FR_TAG_NEW : 0) |
				(what >= 2 ? FR_TAG_DIRTY : 0), s * 2 + i + 1, 0xff);
			want_v[s * 2 + i] = true;
			want_d[s * 2 + i] = what >= 2;
		}
	}
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			/* Last slot: a superseded copy, so phase 4 must run. */
			set_tag(&im, CHUNKS - 2, keys[SLOTS - 1][0], FR_TAG_VALID, 1, 0xff);
			set_tag(&im, CHUNKS - 1, keys[SLOTS - 1][0], VND, 2, 0xff);
			want_v[CHUNKS - 2] = false;
			want_d[CHUNKS - 2] = false;
			want_v[CHUNKS - 1] = true;
			want_d[CHUNKS - 1] = true;
		}
		REQUIRE(!recover(&im, FR_RECOVER_APPLY, 8, &rep, &why));
		CHECK_EQ(rep.superseded_dropped, pass);
		nv = nd = 0;
		for (k = 0; k < CHUNKS; k++) {
			CHECK_EQ(test_bit(k, im.c.valid_bits), want_v[k]);
			CHECK_EQ(test_bit(k, im.c.dirty_bits), want_d[k]);
			nv += want_v[k];
			nd += want_d[k];
		}
		CHECK_EQ(rep.valid, nv);
		CHECK_EQ(rep.dirty, nd);
		CHECK_EQ(fr_count_valid(&im.c), nv);
		CHECK_EQ(fr_count_dirty(&im.c), nd);
	}
	img_free(&im);
}

/* ---- the write path's refusals and the writeback handshake ---- */

static u8 origin_mem[ORIGIN * 512];
static u8 stage_buf[64 * 512];
static struct { u64 sector; u32 nr, at; } staged[64];
static u32 nstaged, stage_used, flushes;

static void nolock(void *ctx, fr_slot_t s) { (void)ctx; (void)s; }

/* Origin sector whose PM data t_stage reports unreadable (none: ~0). */
static u64 poisoned_sector = ~0ULL;

/* Origin sector whose slot t_stage reports in flight elsewhere (none: ~0). */

static u64 failing_sector = ~0ULL;

static int t_stage(void *ctx, u64 sector, const void *src, u32 nr)
{
	(void)ctx;
	if (poisoned_sector >= sector && poisoned_sector < sector + nr)
		return -EHWPOISON;
	if (failing_sector >= sector && failing_sector < sector + nr)
		return -EIO;
	memcpy(stage_buf + stage_used * 512, src, nr * 512);
	staged[nstaged].sector = sector;
	staged[nstaged].nr = nr;
	staged[nstaged++].at = stage_used;
	stage_used += nr;
	return 0;
}

static int t_submit(void *ctx)
{
	u32 i;

	(void)ctx;
	for (i = 0; i < nstaged; i++)
		memcpy(origin_mem + staged[i].sector * 512,
		       stage_buf + staged[i].at * 512, staged[i].nr * 512);
	nstaged = stage_used = 0;
	return 0;
}

static int t_flush(void *ctx)
{
	(void)ctx;
	flushes++;
	return 0;
}

static const struct fr_wb_ops t_ops = {
	.lock = nolock, .unlock = nolock, .stage = t_stage,
	.submit = t_submit, .flush = t_flush,
};

static void fill_byte(void *arg, void *dst, u32 nr)
{
	u8 buf[64 * 512];

	memset(buf, *(u8 *)arg, nr * 512);
	fr_pm_copy(dst, buf, nr * 512);
}

TEST(write_refusals_change_nothing)
{
	struct img im;
	struct fr_write_result res;
	u8 v = 0x11;
	u64 stores;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	stores = im.spm.stores;
	/* across a region boundary (chunk 1 | chunk 2) */
	CHECK_EQ(fr_write(&im.c, 12, 8, fill_byte, &v, &res), FR_WRITE_FAILED);
	CHECK_EQ(res.error, -EINVAL);
	CHECK_EQ(fr_write(&im.c, 0, 0, fill_byte, &v, &res), FR_WRITE_FAILED);
	CHECK_EQ(res.error, -EINVAL);
	CHECK_EQ(fr_write(&im.c, ORIGIN, 1, fill_byte, &v, &res), FR_WRITE_FAILED);
	CHECK_EQ(res.error, -EINVAL);
	CHECK_EQ(fr_write(&im.c, ORIGIN - 2, 3, fill_byte, &v, &res), FR_WRITE_FAILED);
	CHECK_EQ(res.error, -EINVAL);
	CHECK_EQ(im.spm.stores, stores);
	CHECK_EQ(fr_discard(&im.c, ORIGIN, 8), 0);
	CHECK_EQ(fr_fill(&im.c, to_ochunk(16), fill_byte, &v), 0);
	CHECK_EQ(im.spm.stores, stores);
	/* within one region, two chunks: fine */
	CHECK_EQ(fr_write(&im.c, 4, 8, fill_byte, &v, &res), 0);
	CHECK_EQ(res.chunks, 2);
	img_free(&im);
}

/*
 * A chunk whose PM data cannot be staged is skipped: it stays dirty, the
 * rest of the batch is written back and cleaned, and a batch that finds
 * nothing else stageable returns 0 instead of an error.
 */
TEST(writeback_skips_unreadable_chunk)
{
	struct fr_write_result res;
	struct fr_wb_snap snaps[8];
	struct img im;
	u8 a = 0x5a, b = 0xa5;
	u64 cursor = 0;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	memset(origin_mem, 0, sizeof(origin_mem));
	nstaged = stage_used = 0;
	REQUIRE(!fr_write(&im.c, 0, 8, fill_byte, &a, &res));
	REQUIRE(!fr_write(&im.c, 8, 8, fill_byte, &b, &res));
	CHECK_EQ(fr_count_dirty(&im.c), 2);
	poisoned_sector = 3;
	CHECK_EQ(fr_writeback(&im.c, &cursor, 8, snaps, &t_ops, NULL), 1);
	CHECK_EQ(fr_count_dirty(&im.c), 1);
	CHECK_EQ(origin_mem[8 * 512], 0xa5);
	CHECK_EQ(origin_mem[0], 0);
	/* Only the unreadable chunk is left: nothing to do, no error. */
	cursor = 0;
	CHECK_EQ(fr_writeback(&im.c, &cursor, 8, snaps, &t_ops, NULL), 0);
	CHECK_EQ(fr_count_dirty(&im.c), 1);
	/* Readable again (say the media error was cleared): it drains. */
	poisoned_sector = ~0ULL;
	CHECK_EQ(fr_writeback(&im.c, &cursor, 8, snaps, &t_ops, NULL), 1);
	CHECK_EQ(fr_count_dirty(&im.c), 0);
	CHECK_EQ(origin_mem[7 * 512 + 511], 0x5a);
	/* Leave the fake origin as the other tests expect it. */
	memset(origin_mem, 0, sizeof(origin_mem));
	flushes = 0;
	img_free(&im);
}

/* The pinned chunks of a cache with c->pinned set, from bit 0 (-1: none). */
static int first_pin(const struct img *im, unsigned long *pinned)
{
	u64 p = find_next_bit(pinned, im->c.geo.nr_chunks, 0);

	return p < im->c.geo.nr_chunks ? (int)p : -1;
}

/*
 * A write's victim written back alone (fr_writeback_chunk): only that chunk,
 * with one submit and one flush; 0 for a clean one; and a chunk whose slot
 * another stage has pinned (the pin rule: an origin write of the slot's data
 * in flight) is refused with -EBUSY and left dirty, with nothing staged or
 * written, by it and by a batch, which goes on with the rest. Each unpins
 * what it pinned, and only that.
 */
TEST(writeback_chunk_alone_and_busy)
{
	unsigned long pinned[1] = { 0 };
	struct fr_write_result res;
	struct fr_wb_snap snaps[8];
	struct fr_hit hit;
	struct img im;
	u8 a = 0x11, b = 0x22;
	u64 cursor = 0, other;
	u32 f;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	im.c.pinned = pinned;
	memset(origin_mem, 0, sizeof(origin_mem));
	nstaged = stage_used = 0;
	REQUIRE(!fr_write(&im.c, 0, 8, fill_byte, &a, &res));
	REQUIRE(!fr_write(&im.c, 8, 8, fill_byte, &b, &res));
	CHECK_EQ(fr_count_dirty(&im.c), 2);
	REQUIRE(fr_lookup(&im.c, to_ochunk(1), &hit));

	/* Its buddy pinned by another stage: refused, nothing staged. */
	other = from_pchunk(hit.pchunk) ^ 1;
	set_bit(other, pinned);
	f = flushes;
	CHECK_EQ(fr_writeback_chunk(&im.c, hit.pchunk, snaps, &t_ops, NULL),
		 -EBUSY);
	CHECK_EQ(flushes, f);
	CHECK_EQ(nstaged, 0);
	CHECK(fr_chunk_dirty(&im.c, hit.pchunk));
	CHECK_EQ(first_pin(&im, pinned), (int)other);
	/* Itself pinned by another stage: the same. */
	clear_bit(other, pinned);
	set_bit(from_pchunk(hit.pchunk), pinned);
	CHECK_EQ(fr_writeback_chunk(&im.c, hit.pchunk, snaps, &t_ops, NULL),
		 -EBUSY);
	CHECK_EQ(nstaged, 0);
	CHECK(fr_chunk_dirty(&im.c, hit.pchunk));
	clear_bit(from_pchunk(hit.pchunk), pinned);
	set_bit(other, pinned);
	/* A batch skips it, cleans the other, and unpins its own only. */
	CHECK_EQ(fr_writeback(&im.c, &cursor, 8, snaps, &t_ops, NULL), 1);
	CHECK_EQ(fr_count_dirty(&im.c), 1);
	CHECK_EQ(origin_mem[0], 0x11);
	CHECK_EQ(origin_mem[8 * 512], 0);
	CHECK_EQ(first_pin(&im, pinned), (int)other);
	CHECK_EQ(find_next_bit(pinned, 8, other + 1), 8);
	clear_bit(other, pinned);

	/* Alone: that chunk only, one flush, then clean. */
	f = flushes;
	CHECK_EQ(fr_writeback_chunk(&im.c, hit.pchunk, snaps, &t_ops, NULL), 1);
	CHECK_EQ(flushes, f + 1);
	CHECK_EQ(fr_count_dirty(&im.c), 0);
	CHECK_EQ(origin_mem[15 * 512 + 511], 0x22);
	CHECK_EQ(first_pin(&im, pinned), -1);
	/* Clean already: nothing to do. */
	CHECK_EQ(fr_writeback_chunk(&im.c, hit.pchunk, snaps, &t_ops, NULL), 0);
	CHECK_EQ(flushes, f + 1);
	/* Out of range: refused. */
	CHECK_EQ(fr_writeback_chunk(&im.c, to_pchunk(im.c.geo.nr_chunks),
				    snaps, &t_ops, NULL), -EINVAL);
	memset(origin_mem, 0, sizeof(origin_mem));
	flushes = 0;
	img_free(&im);
}

/*
 * fr_writeback_sweep (the flush message) never wraps: from a cursor past
 * some dirty chunks it leaves them, ends with the cursor at nr_chunks, and
 * from 0, batch after batch, every call moves the cursor on until it gets
 * there with everything written back.
 */
TEST(writeback_sweep_does_not_wrap)
{
	struct fr_write_result res;
	struct fr_wb_snap snaps[8];
	struct fr_hit h0, h2;
	struct img im;
	u8 a = 0x11, b = 0x22, c = 0x33;
	u64 cursor, prev, nr;
	int calls = 0;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	nr = im.c.geo.nr_chunks;
	REQUIRE(!fr_write(&im.c, 0, 8, fill_byte, &a, &res));
	REQUIRE(!fr_write(&im.c, 8, 8, fill_byte, &b, &res));
	REQUIRE(!fr_write(&im.c, 16, 8, fill_byte, &c, &res));
	REQUIRE(fr_lookup(&im.c, to_ochunk(0), &h0));
	REQUIRE(fr_lookup(&im.c, to_ochunk(2), &h2));
	REQUIRE(from_pchunk(h0.pchunk) < from_pchunk(h2.pchunk));
	CHECK_EQ(fr_count_dirty(&im.c), 3);

	/* From key 2's chunk on: key 2 only; fr_writeback would wrap. */
	cursor = from_pchunk(h2.pchunk);
	CHECK_EQ(fr_writeback_sweep(&im.c, &cursor, 8, snaps, &t_ops, NULL), 1);
	CHECK_EQ(cursor, nr);
	CHECK_EQ(fr_count_dirty(&im.c), 2);
	CHECK(test_bit(from_pchunk(h0.pchunk), im.c.dirty_bits));
	CHECK_EQ(fr_writeback_sweep(&im.c, &cursor, 8, snaps, &t_ops, NULL), 0);
	CHECK_EQ(cursor, nr);
	CHECK_EQ(fr_count_dirty(&im.c), 2);

	/* From 0, one chunk a batch: the cursor moves on every call. */
	cursor = 0;
	while (cursor < nr) {
		prev = cursor;
		REQUIRE(fr_writeback_sweep(&im.c, &cursor, 1, snaps, &t_ops,
					   NULL) >= 0);
		CHECK(cursor > prev);
		REQUIRE(++calls <= 3);
	}
	CHECK_EQ(fr_count_dirty(&im.c), 0);
	CHECK_EQ(origin_mem[0], 0x11);
	CHECK_EQ(origin_mem[8 * 512], 0x22);
	memset(origin_mem, 0, sizeof(origin_mem));
	flushes = 0;
	img_free(&im);
}

/*
 * The pin rule's own buddy: a batch may stage both chunks of a slot (keys 0
 * and 3 share slot 0), and unpins both. One that starts at the second and
 * wraps round stops at the slot it began in (1.19: a slot's chunks are
 * staged in one span), so the first is the next batch's. A batch whose
 * stage fails after a chunk was staged cleans nothing and leaves nothing
 * pinned.
 */
TEST(writeback_pins_own_buddy_and_unpins)
{
	unsigned long pinned[1] = { 0 };
	struct fr_write_result res;
	struct fr_wb_snap snaps[8];
	struct img im;
	u8 a = 0x11, b = 0x22;
	u64 cursor;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	im.c.pinned = pinned;
	REQUIRE(from_slot(fr_slot_of(&im.c.geo, to_ochunk(3))) == 0);
	memset(origin_mem, 0, sizeof(origin_mem));
	nstaged = stage_used = 0;
	REQUIRE(!fr_write(&im.c, 0, 8, fill_byte, &a, &res));
	REQUIRE(!fr_write(&im.c, 24, 8, fill_byte, &b, &res));
	CHECK(fr_chunk_dirty(&im.c, to_pchunk(0)) &&
	      fr_chunk_dirty(&im.c, to_pchunk(1)));
	/* From chunk 1: chunk 1 alone, then chunk 0 from the cursor 0. */
	cursor = 1;
	CHECK_EQ(fr_writeback(&im.c, &cursor, 8, snaps, &t_ops, NULL), 1);
	CHECK_EQ(cursor, 0);
	CHECK_EQ(pinned[0], 0UL);
	CHECK_EQ(origin_mem[24 * 512], 0x22);
	CHECK_EQ(fr_writeback(&im.c, &cursor, 8, snaps, &t_ops, NULL), 1);
	CHECK_EQ(pinned[0], 0UL);
	CHECK_EQ(origin_mem[0], 0x11);
	/* Rewritten, then from chunk 0: both, the buddy staged by this batch. */
	REQUIRE(!fr_write(&im.c, 0, 8, fill_byte, &b, &res));
	REQUIRE(!fr_write(&im.c, 24, 8, fill_byte, &a, &res));
	CHECK_EQ(fr_count_dirty(&im.c), 2);
	cursor = 0;
	CHECK_EQ(fr_writeback(&im.c, &cursor, 8, snaps, &t_ops, NULL), 2);
	CHECK_EQ(pinned[0], 0UL);
	CHECK_EQ(origin_mem[0], 0x22);
	/* The second chunk's stage fails: nothing cleaned, nothing pinned. */
	REQUIRE(!fr_write(&im.c, 0, 8, fill_byte, &a, &res));
	REQUIRE(!fr_write(&im.c, 24, 8, fill_byte, &b, &res));
	failing_sector = 24;
	cursor = 0;
	CHECK_EQ(fr_writeback(&im.c, &cursor, 8, snaps, &t_ops, NULL), -EIO);
	failing_sector = ~0ULL;
	CHECK_EQ(fr_count_dirty(&im.c), 2);
	CHECK_EQ(pinned[0], 0UL);
	nstaged = stage_used = 0;
	memset(origin_mem, 0, sizeof(origin_mem));
	flushes = 0;
	img_free(&im);
}

/*
 * fr_writeback_range (a multi-chunk write's victims) writes back the dirty
 * chunks of its range only, with one flush: keys 0 and 3 share slot 0,
 * keys 1 and 4 have slots 1 and 2 (of 4). A chunk whose slot another stage
 * has pinned is left dirty while the rest of the range goes; a range past
 * the end is cut there.
 */
TEST(writeback_range_stays_in_range)
{
	unsigned long pinned[1] = { 0 };
	struct fr_write_result res;
	struct fr_wb_snap snaps[8];
	struct img im;
	u8 a = 0x11, b = 0x22, c = 0x33, d = 0x44;
	u64 nr;
	u32 f;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	im.c.pinned = pinned;
	nr = im.c.geo.nr_chunks;
	REQUIRE(nr == 8);
	REQUIRE(from_slot(fr_slot_of(&im.c.geo, to_ochunk(1))) == 1 &&
		from_slot(fr_slot_of(&im.c.geo, to_ochunk(4))) == 2 &&
		from_slot(fr_slot_of(&im.c.geo, to_ochunk(3))) == 0);
	memset(origin_mem, 0, sizeof(origin_mem));
	REQUIRE(!fr_write(&im.c, 0, 8, fill_byte, &a, &res));
	REQUIRE(!fr_write(&im.c, 8, 8, fill_byte, &b, &res));
	REQUIRE(!fr_write(&im.c, 32, 8, fill_byte, &c, &res));
	REQUIRE(!fr_write(&im.c, 24, 8, fill_byte, &d, &res));
	CHECK_EQ(fr_count_dirty(&im.c), 4);

	/* Slots 1 and 2, key 4's slot pinned elsewhere: key 1 only, one flush. */
	set_bit(5, pinned);
	f = flushes;
	CHECK_EQ(fr_writeback_range(&im.c, to_pchunk(2), 4, snaps, &t_ops,
				    NULL), 1);
	CHECK_EQ(flushes, f + 1);
	CHECK_EQ(fr_count_dirty(&im.c), 3);
	CHECK_EQ(origin_mem[8 * 512], 0x22);
	CHECK_EQ(origin_mem[32 * 512], 0);
	CHECK_EQ(pinned[0], 1UL << 5);
	pinned[0] = 0;

	/* Slot 2 on, 8 chunks asked: cut at the end, slot 0 not reached. */
	CHECK_EQ(fr_writeback_range(&im.c, to_pchunk(4), 8, snaps, &t_ops,
				    NULL), 1);
	CHECK_EQ(flushes, f + 2);
	CHECK_EQ(origin_mem[32 * 512 + 511], 0x33);
	CHECK_EQ(origin_mem[0], 0);
	CHECK_EQ(origin_mem[24 * 512], 0);
	CHECK_EQ(fr_count_dirty(&im.c), 2);
	/* Nothing dirty in range: no flush. */
	CHECK_EQ(fr_writeback_range(&im.c, to_pchunk(2), 4, snaps, &t_ops,
				    NULL), 0);
	CHECK_EQ(flushes, f + 2);
	/* Slot 0: both keys. Empty or outside ranges are refused. */
	CHECK_EQ(fr_writeback_range(&im.c, to_pchunk(0), 2, snaps, &t_ops,
				    NULL), 2);
	CHECK_EQ(fr_count_dirty(&im.c), 0);
	CHECK_EQ(origin_mem[0], 0x11);
	CHECK_EQ(origin_mem[24 * 512 + 511], 0x44);
	CHECK_EQ(fr_writeback_range(&im.c, to_pchunk(0), 0, snaps, &t_ops,
				    NULL), -EINVAL);
	CHECK_EQ(fr_writeback_range(&im.c, to_pchunk(nr), 2, snaps, &t_ops,
				    NULL), -EINVAL);
	memset(origin_mem, 0, sizeof(origin_mem));
	flushes = 0;
	img_free(&im);
}

/*
 * fr_writeback_full_slots takes only the chunks of slots whose two chunks
 * are dirty: keys 0 and 3 share slot 0, keys 1 and 4 have a slot each.
 */
TEST(writeback_full_slots_first)
{
	struct fr_write_result res;
	struct fr_wb_snap snaps[8];
	struct img im;
	u8 a = 0x11, b = 0x22, c = 0x33, d = 0x44;
	u64 cursor;
	u32 f;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	REQUIRE(from_slot(fr_slot_of(&im.c.geo, to_ochunk(0))) == 0 &&
		from_slot(fr_slot_of(&im.c.geo, to_ochunk(3))) == 0);
	REQUIRE(!fr_write(&im.c, 0, 8, fill_byte, &a, &res));
	REQUIRE(!fr_write(&im.c, 8, 8, fill_byte, &b, &res));
	REQUIRE(!fr_write(&im.c, 24, 8, fill_byte, &c, &res));
	REQUIRE(!fr_write(&im.c, 32, 8, fill_byte, &d, &res));
	CHECK_EQ(fr_count_dirty(&im.c), 4);

	/* From slot 1 on: it wraps to slot 0, and writes back that slot only. */
	cursor = 2;
	f = flushes;
	CHECK_EQ(fr_writeback_full_slots(&im.c, &cursor, 8, snaps, &t_ops, NULL),
		 2);
	CHECK_EQ(flushes, f + 1);
	CHECK_EQ(fr_count_dirty(&im.c), 2);
	CHECK_EQ(origin_mem[0], 0x11);
	CHECK_EQ(origin_mem[24 * 512 + 511], 0x33);
	CHECK_EQ(origin_mem[8 * 512], 0);
	CHECK_EQ(origin_mem[32 * 512], 0);
	/* No slot has both dirty now: nothing staged, no flush. */
	CHECK_EQ(fr_writeback_full_slots(&im.c, &cursor, 8, snaps, &t_ops, NULL),
		 0);
	CHECK_EQ(flushes, f + 1);
	CHECK_EQ(fr_count_dirty(&im.c), 2);
	memset(origin_mem, 0, sizeof(origin_mem));
	flushes = 0;
	img_free(&im);
}

/*
 * The same in a set of 4: only a slot whose four chunks are all dirty is
 * taken, and a slot with three dirty is not. Keys 0, 4, 8 and 12 share
 * slot 0 (4 slots, single-chunk regions, stride 1).
 */
TEST(writeback_full_slots_of_a_set)
{
	struct fr_write_result res;
	struct fr_wb_snap snaps[16];
	struct img im;
	u8 v = 0x51;
	u64 cursor, k;
	u32 f;

	REQUIRE(!img_format_ways(&im, 8, 4, 16, 1, 1, ORIGIN));
	REQUIRE(im.c.geo.ways == 4 && im.c.geo.nr_slots == 4);
	for (k = 0; k < 16; k += 4)
		REQUIRE(from_slot(fr_slot_of(&im.c.geo, to_ochunk(k))) == 0);
	REQUIRE(from_slot(fr_slot_of(&im.c.geo, to_ochunk(1))) == 1);
	/* slot 0 full of dirty data, slot 1 three dirty chunks of four */
	for (k = 0; k < 16; k += 4)
		REQUIRE(!fr_write(&im.c, k * 8, 8, fill_byte, &v, &res));
	for (k = 1; k < 12; k += 4)
		REQUIRE(!fr_write(&im.c, k * 8, 8, fill_byte, &v, &res));
	CHECK_EQ(fr_count_dirty(&im.c), 7);

	cursor = 5;	/* inside slot 1: it wraps round to slot 0 */
	f = flushes;
	CHECK_EQ(fr_writeback_full_slots(&im.c, &cursor, 16, snaps, &t_ops,
					 NULL), 4);
	CHECK_EQ(flushes, f + 1);
	CHECK_EQ(fr_count_dirty(&im.c), 3);
	for (k = 0; k < 16; k += 4)
		CHECK_EQ(origin_mem[k * 8 * 512], 0x51);
	CHECK_EQ(origin_mem[1 * 8 * 512], 0);
	CHECK_EQ(fr_writeback_full_slots(&im.c, &cursor, 16, snaps, &t_ops,
					 NULL), 0);
	memset(origin_mem, 0, sizeof(origin_mem));
	flushes = 0;
	img_free(&im);
}

static u64 counted[8];
static u32 nr_counted;

static int count_stage(void *ctx, u64 sector, const void *src, u32 nr)
{
	(void)ctx;
	(void)src;
	(void)nr;
	if (nr_counted < 8)
		counted[nr_counted] = sector;
	nr_counted++;
	return 0;
}

static int count_submit(void *ctx)
{
	(void)ctx;
	return 0;
}

static const struct fr_wb_ops count_ops = {
	.lock = nolock, .unlock = nolock, .stage = count_stage,
	.submit = count_submit, .flush = t_flush,
};

/* Two keys placed in slot s, from key 0 on: false if there are not two. */
static bool keys_in_slot(const struct fr_geometry *g, u64 s, u64 keys[2])
{
	u64 k;
	int n = 0;

	for (k = 0; k < g->origin_chunks && n < 2; k++)
		if (from_slot(fr_slot_of(g, to_ochunk(k))) == s)
			keys[n++] = k;
	return n == 2;
}

/*
 * The same across bitmap words: a full slot at the top of a word and
 * one inside another, a cursor on a slot's second chunk, and a slot with one
 * dirty chunk between them that must be left alone.
 */
TEST(writeback_full_slots_word_edges)
{
	struct fr_write_result res;
	struct fr_wb_snap snaps[8];
	u64 lo[2], hi[2], one[2], cursor, want[4];
	struct img im;
	u8 v = 0x5a;
	u32 i, j;

	REQUIRE(!img_format(&im, 256, 2, 0, 1024 * 8));
	/* Slot 33: chunks 66, 67 (word 1); slot 95: 190, 191 (top of word 2). */
	REQUIRE(keys_in_slot(&im.c.geo, 33, lo));
	REQUIRE(keys_in_slot(&im.c.geo, 95, hi));
	REQUIRE(keys_in_slot(&im.c.geo, 40, one));
	for (i = 0; i < 2; i++) {
		REQUIRE(!fr_write(&im.c, lo[i] * 8, 8, fill_byte, &v, &res));
		REQUIRE(!fr_write(&im.c, hi[i] * 8, 8, fill_byte, &v, &res));
	}
	REQUIRE(!fr_write(&im.c, one[0] * 8, 8, fill_byte, &v, &res));
	CHECK_EQ(fr_count_dirty(&im.c), 5);

	/*
	 * From chunk 67: 67, 190, 191; wrapped round, the batch stops at the
	 * slot it began in (1.19), so 66 is left, in a slot no longer full.
	 */
	cursor = 67;
	nr_counted = 0;
	CHECK_EQ(fr_writeback_full_slots(&im.c, &cursor, 8, snaps, &count_ops,
					 NULL), 3);
	CHECK_EQ(nr_counted, 3);
	CHECK_EQ(cursor, 66);
	CHECK_EQ(fr_count_dirty(&im.c), 2);
	want[0] = lo[1] * 8;
	want[1] = hi[0] * 8;
	want[2] = hi[1] * 8;
	for (i = 0; i < 3; i++) {
		bool seen = false;

		for (j = 0; j < 3 && j < nr_counted; j++)
			seen |= counted[j] == want[i];
		CHECK(seen);
	}
	nr_counted = 0;
	CHECK_EQ(fr_writeback_full_slots(&im.c, &cursor, 8, snaps, &count_ops,
					 NULL), 0);
	CHECK_EQ(nr_counted, 0);
	/* 66 and the lone dirty chunk are the ordinary batch's. */
	CHECK_EQ(fr_writeback(&im.c, &cursor, 8, snaps, &count_ops, NULL), 2);
	CHECK_EQ(counted[0], lo[0] * 8);
	CHECK_EQ(counted[1], one[0] * 8);
	flushes = 0;
	img_free(&im);
}

/*
 * A batch stages a span in the order of the keys its chunks hold (1.19),
 * so that neighbours on the origin reach the stage side by side: keys
 * written into two sets of 4 in descending order are staged ascending.
 * (The host tests' spans are 8 chunks: FR_WB_SPAN.)
 */
TEST(writeback_stages_a_span_in_key_order)
{
	static const u64 keys[] = { 11, 8, 3, 0, 9, 6, 1 };
	static const u64 sorted[] = { 0, 1, 3, 6, 8, 9, 11 };
	struct fr_write_result res;
	struct fr_wb_snap snaps[16];
	struct img im;
	u64 cursor = 0;
	u8 v = 0x3c;
	u32 i;

	REQUIRE(FR_WB_SPAN == 8);
	/* 4 sets of 4, regions of 2, stride 3: slot 0 holds 0, 3, 8, 11. */
	REQUIRE(!img_format_ways(&im, 8, 4, 16, 2, 0, 1024 * 8));
	for (i = 0; i < ARRAY_LEN(keys); i++) {
		REQUIRE(from_slot(fr_slot_of(&im.c.geo, to_ochunk(keys[i]))) ==
			(i < 4 ? 0 : 1));
		REQUIRE(!fr_write(&im.c, keys[i] * 8, 8, fill_byte, &v, &res));
	}
	nr_counted = 0;
	CHECK_EQ(fr_writeback(&im.c, &cursor, 16, snaps, &count_ops, NULL),
		 (int)ARRAY_LEN(keys));
	CHECK_EQ(nr_counted, (u32)ARRAY_LEN(keys));
	for (i = 0; i < ARRAY_LEN(sorted) && i < nr_counted; i++)
		CHECK_EQ(counted[i], sorted[i] * 8);
	CHECK_EQ(fr_count_dirty(&im.c), 0);
	flushes = 0;
	img_free(&im);
}

TEST(write_need_clean_writeback_and_fill)
{
	struct img im;
	struct fr_write_result res;
	struct fr_wb_snap snaps[8];
	struct fr_hit hit;
	u8 a = 0xaa, b = 0xbb, c = 0xcc;
	u64 cursor = 0;
	u8 *before;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	before = malloc(im.bytes);
	/* key 0 partial, then key 3 in the same slot (both dirty) */
	REQUIRE(!fr_write(&im.c, 2, 3, fill_byte, &a, &res));
	REQUIRE(fr_lookup(&im.c, to_ochunk(0), &hit));
	CHECK_EQ(hit.sectors, 0x1c);
	REQUIRE(!fr_write(&im.c, 24, 8, fill_byte, &b, &res));
	CHECK_EQ(fr_count_dirty(&im.c), 2);
	/* key 8 collides with two dirty chunks: the older must be cleaned */
	memcpy(before, im.pm, im.bytes);
	CHECK_EQ(fr_write(&im.c, 64, 8, fill_byte, &c, &res), FR_WRITE_NEED_CLEAN);
	CHECK(!memcmp(before, im.pm, im.bytes));
	CHECK_EQ(from_pchunk(res.victim), hit.pchunk);
	/* The forced writeback, as the kernel runs it: a batch from the victim. */
	cursor = from_pchunk(res.victim);
	REQUIRE(fr_writeback(&im.c, &cursor, 1, snaps, &t_ops, NULL) == 1);
	CHECK_EQ(flushes, 1);
	CHECK_EQ(origin_mem[2 * 512], 0xaa);
	CHECK_EQ(origin_mem[0], 0);		/* only held sectors written */
	CHECK_EQ(origin_mem[5 * 512], 0);
	CHECK_EQ(fr_count_dirty(&im.c), 1);
	REQUIRE(!fr_write(&im.c, 64, 8, fill_byte, &c, &res));
	CHECK_EQ(res.evictions, 1);
	CHECK(!fr_lookup(&im.c, to_ochunk(0), &hit));
	/* writeback of everything: flushed before any dirty flag clears */
	cursor = 0;
	CHECK_EQ(fr_writeback(&im.c, &cursor, 8, snaps, &t_ops, NULL), 2);
	CHECK_EQ(flushes, 2);
	CHECK_EQ(fr_count_dirty(&im.c), 0);
	CHECK_EQ(origin_mem[24 * 512], 0xbb);
	CHECK_EQ(origin_mem[64 * 512 + 511], 0xcc);
	CHECK_EQ(fr_writeback(&im.c, &cursor, 8, snaps, &t_ops, NULL), 0);
	/* a fill into a full slot of clean chunks displaces one; a hit is skipped */
	CHECK_EQ(fr_fill(&im.c, to_ochunk(8), fill_byte, &a), 0);
	CHECK_EQ(fr_fill(&im.c, to_ochunk(11), fill_byte, &a), 1);
	REQUIRE(fr_lookup(&im.c, to_ochunk(11), &hit));
	CHECK_EQ(hit.sectors, 0xff);
	CHECK(!test_bit(from_pchunk(hit.pchunk), im.c.dirty_bits));
	/* a discard drops a clean copy it covers in part: the origin changes */
	CHECK_EQ(fr_discard(&im.c, 88, 7), 1);
	CHECK(!fr_lookup(&im.c, to_ochunk(11), &hit));
	/* a dirty copy covered in part stays, one covered whole goes */
	REQUIRE(!fr_write(&im.c, 88, 8, fill_byte, &c, &res));
	CHECK_EQ(fr_discard(&im.c, 89, 7), 0);
	REQUIRE(fr_lookup(&im.c, to_ochunk(11), &hit));
	CHECK_EQ(hit.sectors, 0xff);
	CHECK_EQ(fr_discard(&im.c, 87, 9), 1);
	CHECK(!fr_lookup(&im.c, to_ochunk(11), &hit));
	free(before);
	img_free(&im);
}

/*
 * A pinned chunk (an origin write in flight reads it) is never stored into:
 * a write that would store there answers FR_WRITE_PINNED and changes
 * nothing, a fill skips, and of two free chunks the unpinned one is used.
 */
TEST(write_and_fill_skip_pinned_chunks)
{
	unsigned long pinned[1] = { 0 };
	struct fr_write_result res;
	struct fr_hit hit;
	struct img im;
	u8 a = 0xaa, b = 0xbb, c = 0xcc;
	u8 *before;

	REQUIRE(!img_format(&im, 8, 2, 0, ORIGIN));
	im.c.pinned = pinned;
	before = malloc(im.bytes);
	/* key 0 into chunk 0, pinned as writeback stages it */
	REQUIRE(!fr_write(&im.c, 0, 8, fill_byte, &a, &res));
	REQUIRE(fr_lookup(&im.c, to_ochunk(0), &hit));
	CHECK_EQ(from_pchunk(hit.pchunk), 0);
	set_bit(0, pinned);
	/* a rewrite goes to the buddy and drops chunk 0: free, still pinned */
	REQUIRE(!fr_write(&im.c, 0, 8, fill_byte, &b, &res));
	REQUIRE(fr_lookup(&im.c, to_ochunk(0), &hit));
	CHECK_EQ(from_pchunk(hit.pchunk), 1);
	/* the next rewrite would store into chunk 0: it must wait */
	memcpy(before, im.pm, im.bytes);
	CHECK_EQ(fr_write(&im.c, 0, 8, fill_byte, &c, &res), FR_WRITE_PINNED);
	CHECK_EQ(from_pchunk(res.victim), 0);
	CHECK(!memcmp(before, im.pm, im.bytes));
	/* key 3 shares slot 0: no fill into the pinned chunk either */
	CHECK(!fr_can_fill(&im.c, to_ochunk(3)));
	CHECK_EQ(fr_fill(&im.c, to_ochunk(3), fill_byte, &c), 0);
	CHECK(!memcmp(before, im.pm, im.bytes));
	/* once the origin write is done: the rewrite goes ahead */
	clear_bit(0, pinned);
	CHECK_EQ(fr_write(&im.c, 0, 8, fill_byte, &c, &res), FR_WRITE_DONE);
	REQUIRE(fr_lookup(&im.c, to_ochunk(0), &hit));
	CHECK_EQ(from_pchunk(hit.pchunk), 0);
	CHECK_EQ(((const u8 *)hit.data)[0], 0xcc);
	/* slot 1 empty with chunk 2 pinned: key 1 goes to chunk 3 */
	set_bit(2, pinned);
	CHECK_EQ(fr_write(&im.c, 8, 8, fill_byte, &a, &res), FR_WRITE_DONE);
	REQUIRE(fr_lookup(&im.c, to_ochunk(1), &hit));
	CHECK_EQ(from_pchunk(hit.pchunk), 3);
	free(before);
	img_free(&im);
}

/*
 * The sector mask a write leaves in its chunk's tag, at the edges of every
 * chunk size: one sector at either end, all but one, and the whole chunk
 * (for 64 sectors, all 64 bits: a shift by 64 would make it 0).
 */
TEST(write_sector_mask_edges)
{
	static const u32 sizes[] = { 8, 16, 32, 64 };
	unsigned int i, j;

	for (i = 0; i < ARRAY_LEN(sizes); i++) {
		u32 cs = sizes[i];
		const struct { u32 off, cnt; } w[] = {
			{ 0, 1 }, { cs - 1, 1 }, { 0, cs - 1 }, { 1, cs - 1 },
			{ 0, cs },
		};

		for (j = 0; j < ARRAY_LEN(w); j++) {
			struct fr_write_result res;
			struct fr_hit hit;
			struct img im;
			u64 want = (~0ULL >> (64 - w[j].cnt)) << w[j].off;
			u8 v = 0x5a;

			REQUIRE(!img_format_cs(&im, cs, 4, 1, 1, 8 * cs));
			CHECK_EQ(fr_write(&im.c, cs + w[j].off, w[j].cnt,
					  fill_byte, &v, &res), 0);
			REQUIRE(fr_lookup(&im.c, to_ochunk(1), &hit));
			CHECK_EQ(hit.sectors, want);
			CHECK_EQ(le64_to_cpu(im.c.tags[from_pchunk(hit.pchunk)]
					     .sectors), want);
			img_free(&im);
		}
	}
}
