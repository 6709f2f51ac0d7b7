// SPDX-License-Identifier: GPL-2.0-only
/* The on-PM format: layout, superblock encode/decode, refusals, fr_format. */
#include <stdlib.h>
#include "harness.h"
#include "util.h"

static void resum(struct fr_sb_disk *sb)
{
	sb->csum = cpu_to_le32(fr_sb_csum(sb));
}

TEST(crc32c_known_answer)
{
	struct fr_sb_disk sb;

	/* The standard CRC-32C check value, from the kernel's raw crc32c(). */
	CHECK_EQ(~crc32c(~0U, "123456789", 9), 0xe3069283);
	CHECK_EQ(~crc32c(~0U, "", 0), 0);
	/* The superblock's: over its bytes with csum and resized_sectors 0. */
	memset(&sb, 0xa5, sizeof(sb));
	sb.csum = 0;
	sb.resized_sectors = 0;
	CHECK_EQ(fr_sb_csum(&sb), ~crc32c(~0U, &sb, sizeof(sb)));
	sb.csum = cpu_to_le32(0x12345678);
	sb.resized_sectors = cpu_to_le64(0x1122334455667788ULL);
	CHECK_EQ(fr_sb_csum(&sb), ~crc32c(~0U, (memset(&sb.csum, 0, 4),
						memset(&sb.resized_sectors, 0, 8),
						&sb), sizeof(sb)));
}

TEST(layout_many_pm_sizes)
{
	static const u32 cs[] = { 8, 16, 32, 64 };
	u64 pm, n = 0, slack_max = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(cs); i++) {
		for (pm = 4096; pm < (64ULL << 30); pm = pm * 9 / 8 + 4093) {
			struct fr_format_params p = {
				.chunk_sectors = cs[i],
				.origin_sectors = 1ULL << 32,
			};
			struct fr_geometry g;
			const char *why = NULL;
			u64 cb = (u64)cs[i] << 9;
			int r = fr_geometry_layout(&g, pm, &p, &why);

			if (r) {
				/*
				 * Refused only when too small: for two slots
				 * (one slot leaves no valid stride), or for the
				 * default 1 MiB region.
				 */
				CHECK(why != NULL);
				p.region_chunks = 1;
				r = fr_geometry_layout(&g, pm, &p, &why);
				if (r)
					CHECK(pm < 8192 + 4 * cb + 4 * 32);
				else
					CHECK(pm < 8192 + 2 * (1 << 20) + 512 * 32 + cb * 2);
				continue;
			}
			n++;
			CHECK(g.nr_chunks >= 2 && !(g.nr_chunks & 1));
			CHECK_EQ(g.nr_slots, g.nr_chunks / 2);
			CHECK_EQ(g.tags_offset, FR_SB_RESERVED);
			CHECK(g.data_offset % 4096 == 0);
			CHECK(g.data_offset >= g.tags_offset +
			      g.nr_chunks * sizeof(struct fr_tag_disk));
			CHECK(g.data_offset + g.nr_chunks * cb <= pm);
			CHECK(fr_layout_bytes(cs[i], g.nr_chunks) <= pm);
			CHECK(g.region_chunks <= g.nr_slots);
			CHECK(g.stride_slots >= 1 && g.stride_slots < g.nr_slots);
			CHECK_EQ(g.pm_bytes, pm);
			/* how much room is left unused (at most one slot + a page) */
			{
				u64 nr = g.nr_chunks;

				while (fr_layout_bytes(cs[i], nr + 2) <= pm)
					nr += 2;
				if (nr - g.nr_chunks > slack_max)
					slack_max = nr - g.nr_chunks;
				CHECK(nr - g.nr_chunks <= 2);
			}
			/* the encoded superblock decodes to the same geometry */
			{
				struct fr_sb_disk sb;
				struct fr_geometry d;

				fr_sb_encode(&sb, &g, &p);
				CHECK(!fr_sb_decode(&sb, pm, &d, &why));
				CHECK(!memcmp(&d, &g, sizeof(d)));
			}
		}
	}
	CHECK(n > 300);
	printf("  %llu layouts checked; at most %llu more chunks would have fit\n",
	       (unsigned long long)n, (unsigned long long)slack_max);
}

TEST(layout_refusals)
{
	struct fr_format_params p = { .origin_sectors = 1 << 20 };
	struct fr_geometry g;
	const char *why = NULL;

	CHECK_EQ(fr_geometry_layout(&g, 8192, &p, &why), -EINVAL);
	CHECK_STR(why, "PM too small");
	p.chunk_sectors = 12;
	CHECK_EQ(fr_geometry_layout(&g, 1 << 24, &p, &why), -EINVAL);
	CHECK_STR(why, "chunk size");
	p.chunk_sectors = 128;
	CHECK_EQ(fr_geometry_layout(&g, 1 << 24, &p, &why), -EINVAL);
	p.chunk_sectors = 0;
	p.region_chunks = 3;
	CHECK_EQ(fr_geometry_layout(&g, 1 << 24, &p, &why), -EINVAL);
	CHECK_STR(why, "region size");
	p.region_chunks = 2048;
	CHECK_EQ(fr_geometry_layout(&g, 1 << 24, &p, &why), -EINVAL);
	p.region_chunks = 1024;
	CHECK_EQ(fr_geometry_layout(&g, 1 << 20, &p, &why), -EINVAL);
	CHECK_STR(why, "region larger");
	p.region_chunks = 0;
	p.stride_slots = 1 << 20;
	CHECK_EQ(fr_geometry_layout(&g, 1 << 24, &p, &why), -EINVAL);
	CHECK_STR(why, "stride");
	p.stride_slots = 0;
	p.origin_sectors = 0;
	CHECK_EQ(fr_geometry_layout(&g, 1 << 24, &p, &why), -EINVAL);
	CHECK_STR(why, "origin length is zero");
	p.origin_sectors = (FR_MAX_KEY + 2) << 3;
	CHECK_EQ(fr_geometry_layout(&g, 1 << 24, &p, &why), -EINVAL);
	CHECK_STR(why, "56-bit");
	/* a small PM falls back to stride 1 when region + 1 does not fit */
	p.origin_sectors = 1 << 20;
	p.region_chunks = 2;
	CHECK_EQ(fr_geometry_layout(&g, fr_layout_bytes(8, 6) + 4096, &p, &why), 0);
	CHECK(g.stride_slots < g.nr_slots);
}

static void good_sb(struct fr_sb_disk *sb, struct fr_geometry *g, u64 *pm)
{
	struct fr_format_params p = {
		.chunk_sectors = 16, .region_chunks = 64, .stride_slots = 65,
		.origin_sectors = 123456789, .format_time = 42,
		.uuid = "ABCDEFGHIJKLMNOP", .origin_id = "wwn-0x5000c500a1b2c3d4",
	};
	const char *why;

	*pm = 256ULL << 20;
	if (fr_geometry_layout(g, *pm, &p, &why))
		abort();
	fr_sb_encode(sb, g, &p);
}

TEST(superblock_round_trip)
{
	struct fr_sb_disk sb;
	struct fr_geometry g, d;
	const char *why = NULL;
	u64 pm;

	good_sb(&sb, &g, &pm);
	CHECK_EQ(le64_to_cpu(sb.magic), FR_SB_MAGIC);
	CHECK(!memcmp(&sb.magic, "DMFR-SB1", 8));
	CHECK_EQ(le32_to_cpu(sb.version), FR_FORMAT_VERSION);
	CHECK_EQ(le64_to_cpu(sb.format_time), 42);
	CHECK(!memcmp(sb.uuid, "ABCDEFGHIJKLMNOP", 16));
	CHECK(!strcmp((char *)sb.origin_id, "wwn-0x5000c500a1b2c3d4"));
	REQUIRE(!fr_sb_decode(&sb, pm, &d, &why));
	CHECK(!memcmp(&d, &g, sizeof(d)));
	CHECK_EQ(d.chunk_sectors, 16);
	CHECK_EQ(d.region_chunks, 64);
	CHECK_EQ(d.stride_slots, 65);
	CHECK_EQ(d.origin_sectors, 123456789);
	/* a bigger PM device than formatted is fine, a smaller one is not */
	CHECK(!fr_sb_decode(&sb, pm * 2, &d, &why));
	CHECK_EQ(fr_sb_decode(&sb, pm - 4096, &d, &why), -EINVAL);
	CHECK_STR(why, "smaller than the formatted cache");
}

TEST(superblock_checksum_mismatch)
{
	struct fr_sb_disk sb;
	struct fr_geometry g, d;
	const char *why = NULL;
	unsigned int off;
	u64 pm;

	good_sb(&sb, &g, &pm);
	for (off = 8; off < sizeof(sb); off += 37) {
		struct fr_sb_disk bad = sb;

		if (off >= 8 && off < 12)
			continue;	/* the checksum itself: flip below */
		((u8 *)&bad)[off] ^= 0x40;
		CHECK_EQ(fr_sb_decode(&bad, pm, &d, &why), -EUCLEAN);
		CHECK_STR(why, "checksum mismatch");
	}
	sb.csum ^= cpu_to_le32(1);
	CHECK_EQ(fr_sb_decode(&sb, pm, &d, &why), -EUCLEAN);
}

TEST(superblock_refuses_magic_version_features)
{
	struct fr_sb_disk sb, bad;
	struct fr_geometry g, d;
	const char *why = NULL;
	u64 pm;

	good_sb(&sb, &g, &pm);
	bad = sb;
	bad.magic ^= cpu_to_le64(1);
	CHECK_EQ(fr_sb_decode(&bad, pm, &d, &why), -EINVAL);
	CHECK_STR(why, "bad magic");
	memset(&bad, 0, sizeof(bad));
	CHECK_EQ(fr_sb_decode(&bad, pm, &d, &why), -EINVAL);
	CHECK_STR(why, "bad magic");

	bad = sb;
	bad.version = cpu_to_le32(FR_FORMAT_VERSION + 1);
	resum(&bad);
	CHECK_EQ(fr_sb_decode(&bad, pm, &d, &why), -EINVAL);
	CHECK_STR(why, "format version");
	bad.version = cpu_to_le32(0);
	resum(&bad);
	CHECK_EQ(fr_sb_decode(&bad, pm, &d, &why), -EINVAL);

	bad = sb;
	bad.incompat_features = cpu_to_le64(1ULL << 17);
	resum(&bad);
	CHECK_EQ(fr_sb_decode(&bad, pm, &d, &why), -EINVAL);
	CHECK_STR(why, "incompatible features");
	/* unknown compat features are, by definition, fine */
	bad = sb;
	bad.compat_features = cpu_to_le64(1ULL << 5);
	resum(&bad);
	CHECK_EQ(fr_sb_decode(&bad, pm, &d, &why), 0);
}

/*
 * Sets (FR_INCOMPAT_SETS): a layout of 4 or 8 chunks a slot records the
 * bit and set_ways and decodes to the same geometry; a pair never carries
 * the bit; the bit with a pair's width, set_ways without the bit, or a
 * width that is not a power of two from 2 to 8 are refused.
 */
TEST(superblock_sets)
{
	struct fr_format_params p;
	struct fr_sb_disk sb, bad;
	struct fr_geometry g, d;
	const char *why = NULL;
	u64 pm = 64ULL << 20;
	u32 w;

	for (w = 2; w <= FR_MAX_WAYS; w <<= 1) {
		memset(&p, 0, sizeof(p));
		p.ways = w;
		p.origin_sectors = 1 << 20;
		REQUIRE(!fr_geometry_layout(&g, pm, &p, &why));
		CHECK_EQ(g.ways, w);
		CHECK_EQ(g.nr_chunks % w, 0);
		CHECK_EQ(g.nr_slots, g.nr_chunks / w);
		CHECK(g.stride_slots < g.nr_slots);
		fr_sb_encode(&sb, &g, &p);
		CHECK_EQ(le64_to_cpu(sb.incompat_features),
			 w == 2 ? 0 : FR_INCOMPAT_SETS);
		CHECK_EQ(le32_to_cpu(sb.set_ways), w == 2 ? 0 : w);
		REQUIRE(!fr_sb_decode(&sb, pm, &d, &why));
		CHECK(!memcmp(&d, &g, sizeof(d)));
	}
	/* the last, 8 a slot: its fields broken one at a time */
	bad = sb;
	bad.set_ways = cpu_to_le32(2);
	resum(&bad);
	CHECK_EQ(fr_sb_decode(&bad, pm, &d, &why), -EUCLEAN);
	CHECK_STR(why, "a pair is version 1");
	bad = sb;
	bad.set_ways = cpu_to_le32(6);
	resum(&bad);
	CHECK_EQ(fr_sb_decode(&bad, pm, &d, &why), -EINVAL);
	CHECK_STR(why, "power of two from 2 to 8");
	bad.set_ways = cpu_to_le32(16);
	resum(&bad);
	CHECK_EQ(fr_sb_decode(&bad, pm, &d, &why), -EINVAL);
	bad = sb;
	bad.incompat_features = 0;
	resum(&bad);
	CHECK_EQ(fr_sb_decode(&bad, pm, &d, &why), -EUCLEAN);
	CHECK_STR(why, "set_ways without the sets feature");
	/* a width the layout cannot take */
	p.ways = 3;
	CHECK_EQ(fr_geometry_layout(&g, pm, &p, &why), -EINVAL);
	CHECK_STR(why, "power of two from 2 to 8");
	p.ways = 16;
	CHECK_EQ(fr_geometry_layout(&g, pm, &p, &why), -EINVAL);
}

/*
 * A PM of fewer slots than the default region has chunks (8 MiB of sets of
 * 8: 253 slots) takes the largest power of two that fits, with the default
 * stride; a region named by the caller is not shrunk but refused.
 */
TEST(default_region_fits_small_pm)
{
	struct fr_format_params p;
	struct fr_geometry g;
	const char *why = NULL;
	u64 pm = 8ULL << 20;

	memset(&p, 0, sizeof(p));
	p.ways = 8;
	p.origin_sectors = 1 << 17;
	REQUIRE(!fr_geometry_layout(&g, pm, &p, &why));
	CHECK_EQ(g.nr_slots, 253);
	CHECK_EQ(g.region_chunks, 128);
	CHECK_EQ(g.stride_slots, 129);
	/* pairs on the same PM: the default region, as before */
	p.ways = 2;
	REQUIRE(!fr_geometry_layout(&g, pm, &p, &why));
	CHECK_EQ(g.region_chunks, 256);
	/* named, it must fit */
	p.ways = 8;
	p.region_chunks = 256;
	CHECK_EQ(fr_geometry_layout(&g, pm, &p, &why), -EINVAL);
	CHECK_STR(why, "region larger than the PM's slot count");
}

TEST(superblock_refuses_corrupt_geometry)
{
	struct fr_sb_disk sb, bad;
	struct fr_geometry g, d;
	const char *why = NULL;
	u64 pm;

	good_sb(&sb, &g, &pm);
#define BAD(field, val, err, msg) do { \
	bad = sb; \
	bad.field = (val); \
	resum(&bad); \
	why = NULL; \
	CHECK_EQ(fr_sb_decode(&bad, pm, &d, &why), (u64)(s64)(err)); \
	CHECK_STR(why, msg); \
} while (0)
	BAD(chunk_sectors, cpu_to_le32(12), -EINVAL, "chunk size");
	BAD(chunk_sectors, cpu_to_le32(4), -EINVAL, "chunk size");
	BAD(chunk_sectors, cpu_to_le32(0), -EINVAL, "chunk size");
	BAD(region_chunks, cpu_to_le32(3), -EINVAL, "region size");
	BAD(region_chunks, cpu_to_le32(0), -EINVAL, "region size");
	BAD(region_chunks, cpu_to_le32(4096), -EINVAL, "region size");
	BAD(stride_slots, cpu_to_le64(0), -EINVAL, "stride");
	BAD(stride_slots, cpu_to_le64(g.nr_slots), -EINVAL, "stride");
	BAD(origin_sectors, cpu_to_le64(0), -EINVAL, "origin length is zero");
	BAD(origin_sectors, cpu_to_le64(~0ULL), -EINVAL, "56-bit");
	BAD(nr_chunks, cpu_to_le64(0), -EINVAL, "chunks");
	BAD(nr_chunks, cpu_to_le64(g.nr_chunks + 100), -EUCLEAN, "layout does not fit");
	BAD(nr_chunks, cpu_to_le64(1ULL << 33), -EUCLEAN, "layout does not fit");
	BAD(nr_chunks, cpu_to_le64(1ULL << 40), -EINVAL, "more than 2^32 slots");
	BAD(tags_offset, cpu_to_le64(8192), -EUCLEAN, "layout does not fit");
	BAD(data_offset, cpu_to_le64(g.data_offset + 4096), -EUCLEAN, "layout does not fit");
	BAD(data_offset, cpu_to_le64(0), -EUCLEAN, "layout does not fit");
	BAD(pm_bytes, cpu_to_le64(pm + 4096), -EINVAL, "smaller than the formatted cache");
	BAD(pm_bytes, cpu_to_le64(4095), -EUCLEAN, "layout does not fit");
	BAD(pm_bytes, cpu_to_le64(g.data_offset), -EUCLEAN, "layout does not fit");
#undef BAD
	/* an odd chunk count is refused (the message speaks of a small PM) */
	bad = sb;
	bad.nr_chunks = cpu_to_le64(g.nr_chunks - 1);
	resum(&bad);
	CHECK(fr_sb_decode(&bad, pm, &d, &why) < 0);
}

TEST(format_attach_and_refusals)
{
	struct img im;
	struct fr_cache c2 = { 0 };
	unsigned long vb[4], db[4];
	const char *why = NULL;
	u64 p;

	REQUIRE(!img_format(&im, 8, 2, 0, 16 * 8));
	/* every tag zero, bitmaps clear */
	for (p = 0; p < 8; p++) {
		CHECK_EQ(tag_commit_of(&im, p), 0);
		CHECK_EQ(im.c.tags[p].seq, 0);
		CHECK_EQ(im.c.tags[p].sectors, 0);
	}
	CHECK_EQ(fr_count_valid(&im.c), 0);
	REQUIRE(!fr_cache_attach(&c2, im.pm, im.bytes, vb, db, &why));
	CHECK_EQ(c2.geo.nr_chunks, 8);
	CHECK(c2.tags == im.c.tags);
	CHECK_EQ(fr_cache_attach(&c2, im.pm, 100, vb, db, &why), -EINVAL);
	CHECK_STR(why, "PM too small");
	CHECK_EQ(fr_cache_attach(&c2, im.pm, im.bytes - 4096, vb, db, &why), -EINVAL);
	/* unreadable superblock */
	im.spm.poison_off = 16;
	im.spm.poison_len = 8;
	CHECK_EQ(fr_cache_attach(&c2, im.pm, im.bytes, vb, db, &why), -EIO);
	CHECK_STR(why, "machine check");
	im.spm.poison_len = 0;
	/* fr_format refuses a PM that is too small and leaves it alone */
	{
		struct fr_format_params p2 = im.p;
		u8 before[64];

		memcpy(before, im.pm, sizeof(before));
		CHECK_EQ(fr_format(&c2, im.pm, 8192, &p2, vb, db, &why), -EINVAL);
		CHECK(!memcmp(before, im.pm, sizeof(before)));
	}
	img_free(&im);
}

/*
 * A crash at any point of fr_format, over a cache holding data: the image
 * must either be refused (no magic) or be the new, empty cache; never the
 * old superblock over half-cleared tags.
 */
struct fmt_crash {
	struct img *im;
	u8 *media, *old;
	u64 points, refused, empty, old_intact;
	int bad;
};

static void fmt_fence(struct simpm *pm, void *arg)
{
	struct fmt_crash *fc = arg;
	u8 *img = malloc(pm->size);
	u32 sub, i, n = pm->ep.nunits;

	for (sub = 0; sub < 4; sub++) {
		struct fr_cache c = { 0 };
		unsigned long vb[4], db[4];
		struct fr_group_scratch gs[4];
		struct fr_recovery_report rep;
		struct simpm tmp;
		const char *why = NULL;
		int r;

		memcpy(img, fc->media, pm->size);
		/* none, all, every other one, the first half */
		for (i = 0; i < n; i++) {
			bool on = sub == 1 || (sub == 2 && (i & 1)) ||
				  (sub == 3 && i < n / 2);

			if (on)
				simpm_apply_unit(img, &pm->ep, &pm->ep.units[i],
						 pm->ep.units[i].nver - 1U, NULL);
		}
		fc->points++;
		simpm_init(&tmp, img, NULL, pm->size, pm->data_off);
		simpm_cur = &tmp;
		r = fr_cache_attach(&c, img, pm->size, vb, db, &why);
		if (r) {
			fc->refused++;
			if (r != -EINVAL || !strstr(why, "bad magic"))
				fc->bad++;
		} else {
			r = fr_recover(&c, FR_RECOVER_CHECK, gs, 4, &rep, &why);
			if (!memcmp(img, fc->old, pm->size))
				fc->old_intact++;	/* format not begun */
			else if (r || rep.valid || rep.corrupt_tags)
				fc->bad++;
			else
				fc->empty++;
		}
		simpm_free(&tmp);
		simpm_cur = pm;
	}
	/* the fence makes the pending units durable */
	for (i = 0; i < n; i++)
		simpm_apply_unit(fc->media, &pm->ep, &pm->ep.units[i],
				 pm->ep.units[i].nver - 1U, NULL);
	free(img);
}

TEST(format_crash_is_refused_or_empty)
{
	struct img im;
	struct fmt_crash fc = { 0 };
	struct fr_cache c = { 0 };
	unsigned long vb[4], db[4];
	const char *why = NULL;
	u64 p;

	REQUIRE(!img_format(&im, 8, 2, 0, 16 * 8));
	/* an old cache full of valid dirty tags */
	for (p = 0; p < 8; p++) {
		u64 s = p / 2, k = key_in_slot(&im.c.geo, s, NULL, 0);

		if (p & 1)
			k = key_in_slot(&im.c.geo, s, &k, 1);
		set_tag(&im, p, k, FR_TAG_VALID | FR_TAG_DIRTY |
			(p & 1 ? FR_TAG_NEW : 0), p + 1, 0xff);
	}
	fc.im = &im;
	fc.media = malloc(im.bytes);
	memcpy(fc.media, im.pm, im.bytes);
	fc.old = malloc(im.bytes);
	memcpy(fc.old, im.pm, im.bytes);
	im.spm.record = true;
	im.spm.on_fence = fmt_fence;
	im.spm.on_fence_arg = &fc;
	REQUIRE(!fr_format(&c, im.pm, im.bytes, &im.p, vb, db, &why));
	im.spm.on_fence = NULL;
	CHECK_EQ(fc.bad, 0);
	CHECK(fc.refused > 0);
	CHECK(fc.empty > 0);
	printf("  %llu crash states in fr_format: %llu refused (no magic), %llu empty caches, %llu untouched\n",
	       (unsigned long long)fc.points, (unsigned long long)fc.refused,
	       (unsigned long long)fc.empty, (unsigned long long)fc.old_intact);
	free(fc.media);
	free(fc.old);
	img_free(&im);
}
