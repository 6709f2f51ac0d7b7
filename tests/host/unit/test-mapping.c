// SPDX-License-Identifier: GPL-2.0-only
/* The block-level mapping: region/stride arithmetic, wrap-around, masks. */
#include <stdlib.h>
#include "harness.h"
#include "util.h"

static struct fr_geometry geo(u64 nr_slots, u32 region, u64 stride,
			      u64 origin_sectors)
{
	struct fr_geometry g;

	memset(&g, 0, sizeof(g));
	g.chunk_sectors = 8;
	g.chunk_shift = 3;
	g.region_chunks = region;
	g.region_shift = (u32)__builtin_ctz(region);
	g.stride_slots = stride;
	g.nr_slots = nr_slots;
	g.nr_chunks = 2 * nr_slots;
	g.origin_sectors = origin_sectors;
	g.origin_chunks = (origin_sectors + 7) >> 3;
	fr_geometry_set_recip(&g);
	return g;
}

/* slot = (region * stride + offset) mod slots, computed without overflow. */
static u64 ref_slot(const struct fr_geometry *g, u64 k)
{
	unsigned __int128 r = k / g->region_chunks;

	return (u64)((r * g->stride_slots + k % g->region_chunks) % g->nr_slots);
}

TEST(slot_of_region_stride_arithmetic)
{
	static const struct { u64 slots; u32 region; u64 stride; } cases[] = {
		{ 4, 2, 3 }, { 8, 4, 5 }, { 8, 2, 2 }, { 2, 1, 1 },
		{ 1000, 256, 257 }, { 1 << 20, 256, 257 }, { 12345, 64, 65 },
		{ 7, 4, 6 },
	};
	unsigned int i;
	u64 k;

	for (i = 0; i < ARRAY_LEN(cases); i++) {
		struct fr_geometry g = geo(cases[i].slots, cases[i].region,
					   cases[i].stride, 1ULL << 40);

		for (k = 0; k < 5000; k++)
			CHECK_EQ(from_slot(fr_slot_of(&g, to_ochunk(k))),
				 ref_slot(&g, k));
	}
	/* The worked example of the default layout: 4 slots, R 2, stride 3. */
	{
		struct fr_geometry g = geo(4, 2, 3, 1 << 20);
		static const u64 want[8] = { 0, 1, 3, 0, 2, 3, 1, 2 };

		for (k = 0; k < 8; k++)
			CHECK_EQ(from_slot(fr_slot_of(&g, to_ochunk(k))), want[k]);
	}
}

/* fr_mod_slots() is x % nr_slots for every x, at the edges and at random. */
TEST(mod_slots_matches_division)
{
	static const u64 ns[] = {
		1, 2, 3, 5, 7, 1000, 4063, 65537, 0x7fffffffULL, 0xfffffffbULL,
		0xffffffffULL, 1ULL << 32,
	};
	static const u64 xs[] = {
		0, 1, 2, 0xffffffffULL, 1ULL << 32, (1ULL << 32) + 1,
		0x7fffffffffffffffULL, 0xfffffffffffffffeULL, ~0ULL,
	};
	u64 rng = 0x9e3779b97f4a7c15ULL;
	unsigned int i, j;

	for (i = 0; i < ARRAY_LEN(ns) + 200; i++) {
		struct fr_geometry g;
		u64 n;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		n = i < ARRAY_LEN(ns) ? ns[i] : (rng >> 32) + 1;
		memset(&g, 0, sizeof(g));
		g.nr_slots = n;
		fr_geometry_set_recip(&g);
		for (j = 0; j < ARRAY_LEN(xs); j++) {
			CHECK_EQ(fr_mod_slots(&g, xs[j]), xs[j] % n);
			CHECK_EQ(fr_mod_slots(&g, xs[j] % n), xs[j] % n);
			CHECK_EQ(fr_mod_slots(&g, n * 0xfffffffULL - 1 + j),
				 (n * 0xfffffffULL - 1 + j) % n);
		}
		for (j = 0; j < 2000; j++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			CHECK_EQ(fr_mod_slots(&g, rng), rng % n);
			CHECK_EQ(fr_mod_slots(&g, rng >> (j % 64)),
				 (rng >> (j % 64)) % n);
		}
	}
}

/* fr_slot_of() against the plain formula, over random geometries and keys. */
TEST(slot_of_random_geometries)
{
	u64 rng = 0x2545f4914f6cdd1dULL;
	unsigned int i, j;

	for (i = 0; i < 300; i++) {
		struct fr_geometry g;
		u64 slots;
		u32 region;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		slots = (rng >> 32) % (FR_MAX_SLOTS - 1) + 1;
		region = 1U << (rng % 11);
		if (region > slots)
			region = 1;
		g = geo(slots, region, slots > 1 ? (rng >> 8) % (slots - 1) + 1 : 1,
			(FR_MAX_KEY + 1) << 3);
		for (j = 0; j < 500; j++) {
			u64 k;

			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			k = rng & FR_MAX_KEY;
			CHECK_EQ(from_slot(fr_slot_of(&g, to_ochunk(k))),
				 ref_slot(&g, k));
		}
	}
}

TEST(slot_of_wraps_around_without_overflow)
{
	struct fr_geometry g = geo(FR_MAX_SLOTS - 1, 1024, FR_MAX_SLOTS - 2,
				   (FR_MAX_KEY + 1) << 3);
	static const u64 keys[] = {
		0, 1, 1023, 1024, 1ULL << 32, (1ULL << 40) + 5, FR_MAX_KEY - 1,
		FR_MAX_KEY,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(keys); i++) {
		u64 s = from_slot(fr_slot_of(&g, to_ochunk(keys[i])));

		CHECK(s < g.nr_slots);
		CHECK_EQ(s, ref_slot(&g, keys[i]));
	}
	/* Wrap-around: region nr_slots (mod) lands where region 0 did. */
	{
		struct fr_geometry h = geo(6, 2, 3, 1 << 20);

		CHECK_EQ(from_slot(fr_slot_of(&h, to_ochunk(0))),
			 from_slot(fr_slot_of(&h, to_ochunk(6 * 2))));
		CHECK_EQ(from_slot(fr_slot_of(&h, to_ochunk(2 * 2 + 1))),
			 (2 * 3 + 1) % 6);
	}
}

TEST(slots_distinct_within_a_region)
{
	static const struct { u64 slots; u32 region; u64 stride; } cases[] = {
		{ 4, 4, 1 }, { 8, 4, 5 }, { 1000, 256, 257 }, { 300, 256, 299 },
		{ 256, 256, 1 }, { 1 << 16, 1024, 1025 },
	};
	unsigned int i;
	u64 r, o;

	for (i = 0; i < ARRAY_LEN(cases); i++) {
		struct fr_geometry g = geo(cases[i].slots, cases[i].region,
					   cases[i].stride, 1ULL << 40);
		u8 *seen = calloc(g.nr_slots, 1);

		for (r = 0; r < 50; r++) {
			u64 base = (r * 7919) << g.region_shift;

			memset(seen, 0, g.nr_slots);
			for (o = 0; o < g.region_chunks; o++) {
				u64 s = from_slot(fr_slot_of(&g, to_ochunk(base + o)));

				CHECK(!seen[s]);
				seen[s] = 1;
			}
		}
		free(seen);
	}
}

/*
 * Regularly spaced structures (ext4 block groups every 128 MiB, Btrfs chunks
 * every 1 GiB, XFS allocation groups) on a PM with a power-of-two slot
 * count: how many land on one slot. The default stride (region + 1) must
 * spread them; stride = region (plain tiling) puts them on a few slots.
 */
static u64 max_load(const struct fr_geometry *g, u64 spacing_chunks, u64 n,
		    u64 *distinct)
{
	u32 *load = calloc(g->nr_slots, sizeof(u32));
	u64 i, m = 0, d = 0;

	for (i = 0; i < n; i++) {
		u64 s = from_slot(fr_slot_of(g, to_ochunk(i * spacing_chunks)));

		if (!load[s]++)
			d++;
		if (load[s] > m)
			m = load[s];
	}
	free(load);
	*distinct = d;
	return m;
}

TEST(default_stride_spreads_regular_structures)
{
	/* 8 GiB of PM: 2^20 slots of two 4 KiB chunks; 1 MiB regions. */
	struct fr_geometry def = geo(1 << 20, 256, 257, 1ULL << 43);
	struct fr_geometry tile = geo(1 << 20, 256, 256, 1ULL << 43);
	static const struct { const char *what; u64 spacing; u64 n; } s[] = {
		{ "ext4 block groups (128 MiB)", 32768, 32768 },	/* 4 TiB */
		{ "btrfs chunks (1 GiB)", 262144, 4096 },
		{ "xfs AGs (16 GiB)", 4194304, 256 },
		{ "ext4 flex groups (2 GiB)", 524288, 2048 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(s); i++) {
		u64 dd, dt, md = max_load(&def, s[i].spacing, s[i].n, &dd);
		u64 mt = max_load(&tile, s[i].spacing, s[i].n, &dt);

		printf("  %-28s x%-5llu default stride: %6llu slots, max %4llu per slot;"
		       " stride = region: %6llu slots, max %4llu\n", s[i].what,
		       (unsigned long long)s[i].n, (unsigned long long)dd,
		       (unsigned long long)md, (unsigned long long)dt,
		       (unsigned long long)mt);
		/* at most 8 structures share a slot with the default... */
		CHECK(md <= 8);
		/* ...and the default is far better than plain tiling */
		CHECK(md * 16 <= mt);
	}
	/* The default the layout picks is region + 1 slots. */
	{
		struct fr_format_params p = { .origin_sectors = 1ULL << 30 };
		struct fr_geometry g;
		const char *why;

		REQUIRE(!fr_geometry_layout(&g, 1ULL << 30, &p, &why));
		CHECK_EQ(g.region_chunks, 256);
		CHECK_EQ(g.stride_slots, 257);
	}
}

TEST(chunk_mask_short_last_chunk)
{
	struct fr_geometry g = geo(4, 2, 3, 10 * 8 - 3);

	CHECK_EQ(g.origin_chunks, 10);
	CHECK_EQ(fr_chunk_mask(&g, to_ochunk(0)), 0xff);
	CHECK_EQ(fr_chunk_mask(&g, to_ochunk(8)), 0xff);
	CHECK_EQ(fr_chunk_mask(&g, to_ochunk(9)), 0x1f);
	g.origin_sectors = 10 * 8 - 7;
	CHECK_EQ(fr_chunk_mask(&g, to_ochunk(9)), 0x1);
	/* 64-sector chunks: a whole chunk is every bit */
	g.chunk_sectors = 64;
	g.chunk_shift = 6;
	g.origin_sectors = 64 * 3;
	CHECK_EQ(fr_chunk_mask(&g, to_ochunk(2)), ~0ULL);
	g.origin_sectors = 64 * 3 - 1;
	CHECK_EQ(fr_chunk_mask(&g, to_ochunk(2)), ~0ULL >> 1);
	CHECK_EQ(fr_chunk_of_sector(&g, 130), 2);
	CHECK_EQ(fr_first_sector(&g, to_ochunk(2)), 128);
}
