// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes the fuzzers' seed corpus: small PM images made by the real core
 * (fr_format and a few writes, groups, writeback), some crafted the way a
 * crash leaves them, and a few corrupt ones, in <dir>/image/ (fuzz-image)
 * and superblocks in <dir>/sb/ (fuzz-sb). Run: mkcorpus <dir>.
 * The output is committed in tests/host/fuzz/corpus/; regenerate with
 * `make -C tests/host corpus`.
 */
#include <stdio.h>
#include <stdlib.h>
#include "fr-core.h"

static char *dir;
static u8 stage[64 * 512];

static void put(const char *name, u8 mode, const void *p, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/image/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(&mode, 1, 1, f) != 1 || fwrite(p, 1, n, f) != n) {
		perror(path);
		exit(1);
	}
	fclose(f);
}

static void put_sb(const char *name, u64 pm, bool fix, const void *sb)
{
	char path[512];
	FILE *f;
	u64 v = cpu_to_le64(pm | (fix ? 1ULL << 63 : 0));

	snprintf(path, sizeof(path), "%s/sb/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(&v, 8, 1, f) != 1 || fwrite(sb, 512, 1, f) != 1) {
		perror(path);
		exit(1);
	}
	fclose(f);
}

static void pay(void *arg, void *dst, u32 nr)
{
	u8 buf[8 * 512];

	memset(buf, *(u8 *)arg, sizeof(buf));
	fr_pm_copy(dst, buf, (size_t)nr * 512);
}

static void nolock(void *ctx, fr_slot_t s) { (void)ctx; (void)s; }
static int st_stage(void *ctx, u64 s, const void *src, u32 nr)
{
	(void)ctx; (void)s;
	memcpy(stage, src, (size_t)nr * 512);
	return 0;
}
static int st_ok(void *ctx) { (void)ctx; return 0; }
static const struct fr_wb_ops ops = {
	.lock = nolock, .unlock = nolock, .stage = st_stage,
	.submit = st_ok, .flush = st_ok,
};

int main(int argc, char **argv)
{
	struct fr_format_params p = {
		.chunk_sectors = 8, .region_chunks = 2, .origin_sectors = 16 * 8 - 3,
		.format_time = 1700000000, .uuid = "fuzz-corpus-0001",
		.origin_id = "corpus-origin",
	};
	struct fr_write_result res;
	struct fr_wb_snap snaps[8];
	struct fr_cache c = { 0 };
	unsigned long vb[1], db[1];
	const char *why;
	u64 pm = 40960 + 4096, cursor = 0;
	u8 *img = aligned_alloc(4096, pm), v = 0x41;
	struct fr_tag_disk *t;

	if (argc != 2)
		return 16;
	dir = argv[1];
	memset(img, 0, pm);
	if (fr_format(&c, img, pm, &p, vb, db, &why)) {
		fprintf(stderr, "mkcorpus: %s\n", why);
		return 1;
	}
	put("empty.img", 0, img, pm);
	put_sb("good", pm, false, img);
	put_sb("good-fixcsum", pm, true, img);
	put_sb("pm-too-small", 8192, false, img);

	fr_write(&c, 2, 3, pay, &v, &res);		/* partial */
	v++;
	fr_write(&c, 4, 8, pay, &v, &res);		/* two chunks, a group */
	v++;
	fr_write(&c, 24, 8, pay, &v, &res);		/* collides with key 0 */
	v++;
	fr_write(&c, 120, 5, pay, &v, &res);		/* the short last chunk */
	fr_writeback(&c, &cursor, 1, snaps, &ops, NULL);
	put("writes.img", 0, img, pm);
	put("writes-fixcsum.img", 1, img, pm);

	/* an interrupted group and a superseded copy, as a crash leaves them */
	t = c.tags;
	t[6].commit = cpu_to_le64(fr_commit_word(4, FR_TAG_VALID | FR_TAG_NEW |
						 FR_TAG_DIRTY | FR_TAG_INCOMPLETE));
	t[6].seq = cpu_to_le64(99);
	t[6].sectors = cpu_to_le64(0xff);
	t[7].commit = cpu_to_le64(fr_commit_word(5, FR_TAG_VALID | FR_TAG_NEW |
						 FR_TAG_DIRTY | FR_TAG_INCOMPLETE));
	t[7].seq = cpu_to_le64(99);
	t[7].sectors = cpu_to_le64(0x0f);
	put("crash-group.img", 0, img, pm);

	/* corrupt: unknown flag, key of another slot */
	t[4].commit = cpu_to_le64(fr_commit_word(7, FR_TAG_VALID | 0x40));
	t[5].commit = cpu_to_le64(fr_commit_word(1, FR_TAG_VALID));
	t[5].sectors = cpu_to_le64(1);
	put("corrupt-tags.img", 0, img, pm);

	/* corrupt superblock: checksum, then geometry with a fixed checksum */
	img[40] ^= 1;
	put("sb-csum.img", 0, img, pm);
	put("sb-geometry-fixcsum.img", 1, img, pm);
	put_sb("bad-csum", pm, false, img);
	put_sb("bad-region-fixcsum", pm, true, img);
	img[40] ^= 1;
	put("truncated.img", 0, img, 6000);
	memset(img, 0, pm);
	put("zeros.img", 0, img, 8192);
	free(img);
	return 0;
}
