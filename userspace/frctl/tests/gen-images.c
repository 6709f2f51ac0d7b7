// SPDX-License-Identifier: GPL-2.0-only
/*
 * gen-images: deterministic dm-fr PM images for frctl's tests.
 *
 *   gen-images DIR           the test images (1 MiB PM, 8 MiB origin)
 *   gen-images --seeds DIR   small images (48 KiB) for the fuzz corpus
 *
 * Every image is written by the protocol core itself (fr_format, fr_write,
 * fr_fill, fr_writeback) through an in-memory PM, with a fixed uuid and
 * format time, so the same core gives the same bytes. Crash images stop the
 * core's stores at a chosen point of one write (after the k-th fence plus a
 * few stores); damaged images edit a tag or the superblock afterwards.
 * tests/images/README describes each image and what frctl must say about it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fr-core.h"

/* ---- the in-memory PM, with a store budget to model a crash ----------- */

static long budget = -1;	/* stores that still land; -1: all */
static long nstores;
#define MAX_FENCES 64
static long fence_at[MAX_FENCES];
static int nfences;

void fr_pm_store8(__le64 *dst, u64 val)
{
	__le64 v = cpu_to_le64(val);

	if (budget < 0 || nstores < budget)
		memcpy(dst, &v, sizeof(v));
	nstores++;
}

void fr_pm_copy(void *dst, const void *src, size_t len)
{
	if (budget < 0 || nstores < budget)
		memmove(dst, src, len);
	nstores++;
}

void fr_pm_fence(void)
{
	if (nfences < MAX_FENCES)
		fence_at[nfences++] = nstores;
}

int fr_pm_load8(const __le64 *src, u64 *val)
{
	__le64 v;

	memcpy(&v, src, sizeof(v));
	*val = le64_to_cpu(v);
	return 0;
}

int fr_pm_read(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return 0;
}

/* ---- a cache on a buffer ---------------------------------------------- */

struct img {
	u8 *pm;
	size_t len;
	struct fr_cache c;
	unsigned long *vb, *db;
	u8 *origin;		/* what writeback wrote, unused otherwise */
};

static void die(const char *what)
{
	fprintf(stderr, "gen-images: %s\n", what);
	exit(1);
}

static void *zalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p)
		die("out of memory");
	return p;
}

static void img_format(struct img *im, size_t pm_len, u64 origin_sectors,
		       u32 region_chunks)
{
	struct fr_format_params p;
	struct fr_geometry g;
	const char *why;
	static const u8 uuid[16] = {
		0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x49, 0x78,
		0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0,
	};

	memset(im, 0, sizeof(*im));
	memset(&p, 0, sizeof(p));
	p.chunk_sectors = 8;
	p.region_chunks = region_chunks;
	p.origin_sectors = origin_sectors;
	p.format_time = 1700000000;
	memcpy(p.uuid, uuid, sizeof(uuid));
	snprintf(p.origin_id, sizeof(p.origin_id), "/srv/frctl-test/origin.img");
	im->len = pm_len;
	im->pm = zalloc(pm_len);
	im->origin = zalloc(origin_sectors << FR_SECTOR_SHIFT);
	if (fr_geometry_layout(&g, pm_len, &p, &why))
		die(why);
	im->vb = zalloc(fr_bitmap_longs(&g) * sizeof(long));
	im->db = zalloc(fr_bitmap_longs(&g) * sizeof(long));
	if (fr_format(&im->c, im->pm, pm_len, &p, im->vb, im->db, &why))
		die(why);
}

static void img_free(struct img *im)
{
	free(im->pm);
	free(im->vb);
	free(im->db);
	free(im->origin);
}

/* Payload: each sector filled with its origin sector number and a generation. */
struct pay {
	u64 sector;
	u8 gen;
};

static void payload(void *arg, void *dst, u32 nr)
{
	struct pay *p = arg;
	u32 i;

	for (i = 0; i < nr; i++, p->sector++) {
		u8 *s = (u8 *)dst + ((size_t)i << FR_SECTOR_SHIFT);
		u8 buf[FR_SECTOR_SIZE];

		memset(buf, p->gen, sizeof(buf));
		memcpy(buf, &p->sector, sizeof(p->sector));
		fr_pm_copy(s, buf, sizeof(buf));
	}
}

static void wb_lock(void *ctx, fr_slot_t s) { (void)ctx; (void)s; }

static int wb_stage(void *ctx, u64 sector, const void *src, u32 nr)
{
	struct img *im = ctx;

	memcpy(im->origin + (sector << FR_SECTOR_SHIFT), src,
	       (size_t)nr << FR_SECTOR_SHIFT);
	return 0;
}

static int wb_ok(void *ctx) { (void)ctx; return 0; }

static const struct fr_wb_ops wb_ops = {
	.lock = wb_lock, .unlock = wb_lock, .stage = wb_stage,
	.submit = wb_ok, .flush = wb_ok,
};

static void img_write(struct img *im, u64 sector, u32 nr, u8 gen)
{
	struct fr_write_result res;
	struct fr_wb_snap snap;
	enum fr_write_outcome out;
	struct pay p;
	int tries = 0;
	u64 cursor;

	for (;;) {
		p.sector = sector;
		p.gen = gen;
		out = fr_write(&im->c, sector, nr, payload, &p, &res);
		if (out != FR_WRITE_NEED_CLEAN)
			break;
		/* Write the victim alone back, as the kernel's forced writeback starts. */
		cursor = from_pchunk(res.victim);
		if (++tries > 8 || fr_writeback(&im->c, &cursor, 1, &snap, &wb_ops, im) != 1)
			die("cannot clean a victim");
	}
	if (out != FR_WRITE_DONE)
		die("fr_write failed");
}

static void img_fill(struct img *im, u64 chunk)
{
	struct pay p = { chunk << im->c.geo.chunk_shift, 0xcc };

	if (fr_fill(&im->c, to_ochunk(chunk), payload, &p) < 0)
		die("fr_fill failed");
}

static void img_writeback(struct img *im, u32 max)
{
	struct fr_wb_snap snaps[16];
	u64 cursor = 0;

	if (fr_writeback(&im->c, &cursor, max, snaps, &wb_ops, im) < 0)
		die("fr_writeback failed");
}

/*
 * Run a write that "crashes": only the stores up to the k-th fence of the
 * write plus extra more land. Finds the fences with a dry run on a copy.
 */
static void img_crash_write(struct img *im, u64 sector, u32 nr, u8 gen, int k,
			    long extra)
{
	u8 *save = zalloc(im->len);
	size_t longs = fr_bitmap_longs(&im->c.geo) * sizeof(long);
	unsigned long *vb = zalloc(longs), *db = zalloc(longs);
	s64 seq = atomic64_read(&im->c.next_seq);
	long start;

	memcpy(save, im->pm, im->len);
	memcpy(vb, im->vb, longs);
	memcpy(db, im->db, longs);
	nfences = 0;
	start = nstores;
	img_write(im, sector, nr, gen);
	if (k > nfences)
		die("crash point past the write's last fence");
	budget = k ? fence_at[k - 1] + extra : start + extra;

	memcpy(im->pm, save, im->len);
	memcpy(im->vb, vb, longs);
	memcpy(im->db, db, longs);
	atomic64_set(&im->c.next_seq, seq);
	nstores = start;
	budget += 0;
	img_write(im, sector, nr, gen);
	budget = -1;
	free(save);
	free(vb);
	free(db);
}

static void img_save(const struct img *im, const char *dir, const char *name,
		     size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(im->pm, 1, len, f) != len || fclose(f))
		die(path);
}

/* ---- damage ----------------------------------------------------------- */

static struct fr_tag_disk *tag(struct img *im, u64 p)
{
	return &im->c.tags[p];
}

/* The first PM chunk whose tag is valid and dirty (and single in its slot). */
static u64 find_tag(struct img *im, bool want_single)
{
	u64 p;

	for (p = 0; p < im->c.geo.nr_chunks; p++) {
		u64 c = le64_to_cpu(tag(im, p)->commit);
		u64 b = le64_to_cpu(tag(im, p ^ 1)->commit);

		if ((c & FR_TAG_VALID) && (c & FR_TAG_DIRTY) &&
		    (!want_single || !(b & FR_TAG_VALID)))
			return p;
	}
	die("no valid tag to damage");
	return 0;
}

static void resum(struct img *im)
{
	struct fr_sb_disk *sb = (struct fr_sb_disk *)im->pm;

	sb->csum = cpu_to_le32(fr_sb_csum(sb));
}

/* ---- the scenarios ---------------------------------------------------- */

/*
 * Base state: dirty single- and multi-chunk writes, a partial overwrite
 * (a hit), two clean fills, and one writeback batch that cleans some.
 * R is the region size in chunks; group writes use G = min(4, R) chunks.
 */
static void base(struct img *im, u32 R)
{
	u32 G = R < 4 ? R : 4;

	img_write(im, 0, 8, 1);				/* chunk 0, whole */
	img_write(im, 8 + 1, 2, 1);			/* chunk 1, 2 sectors */
	img_write(im, (u64)R * 8, G * 8, 2);		/* region 1: a group */
	img_write(im, 4, 4, 3);				/* chunk 0 again: hit */
	img_fill(im, 3ULL * R);				/* clean copies */
	img_fill(im, 3ULL * R + 1);
	img_writeback(im, 1);
}

static void gen_full(const char *dir)
{
	const size_t L = 1 << 20;
	const u64 OS = 16384;
	const u32 R = 16;
	struct img im;
	u64 p;

	img_format(&im, L, OS, R);
	img_save(&im, dir, "clean.img", L);
	base(&im, R);
	img_save(&im, dir, "dirty.img", L);
	img_save(&im, dir, "truncated.img", L / 2);
	img_save(&im, dir, "tiny.img", 100);
	img_free(&im);

	/* A 4-chunk group into region 2, cut in step 2: roll back. */
	img_format(&im, L, OS, R);
	base(&im, R);
	img_crash_write(&im, 2ULL * R * 8, 32, 4, 1, 2);
	img_save(&im, dir, "rollback.img", L);
	img_free(&im);

	/* Cut in step 3, one member completed: roll forward. */
	img_format(&im, L, OS, R);
	base(&im, R);
	img_crash_write(&im, 2ULL * R * 8, 32, 4, 2, 1);
	img_save(&im, dir, "rollforward.img", L);
	img_free(&im);

	/* Rewrite of the region-1 group cut before step 4: old copies left. */
	img_format(&im, L, OS, R);
	base(&im, R);
	img_crash_write(&im, (u64)R * 8, 32, 5, 3, 0);
	img_save(&im, dir, "superseded.img", L);
	img_free(&im);

	/* A single-chunk write cut before its commit: nothing visible. */
	img_format(&im, L, OS, R);
	base(&im, R);
	img_crash_write(&im, 5ULL * R * 8, 8, 6, 1, 0);
	img_save(&im, dir, "uncommitted.img", L);
	img_free(&im);

	/* Damaged tags. */
	img_format(&im, L, OS, R);
	base(&im, R);
	p = find_tag(&im, false);
	tag(&im, p)->commit = cpu_to_le64(le64_to_cpu(tag(&im, p)->commit) | 0x40);
	img_save(&im, dir, "bad-flags.img", L);
	img_free(&im);

	img_format(&im, L, OS, R);
	base(&im, R);
	p = find_tag(&im, true);
	tag(&im, p)->commit = cpu_to_le64(le64_to_cpu(tag(&im, p)->commit) +
					  (1ULL << FR_TAG_FLAG_BITS));
	img_save(&im, dir, "wrong-slot.img", L);
	img_free(&im);

	img_format(&im, L, OS, R);
	base(&im, R);
	p = find_tag(&im, true);
	tag(&im, p)->commit = cpu_to_le64(fr_commit_word(OS / 8 + 5,
				fr_commit_flags(le64_to_cpu(tag(&im, p)->commit))));
	img_save(&im, dir, "key-beyond.img", L);
	img_free(&im);

	img_format(&im, L, OS, R);
	base(&im, R);
	p = find_tag(&im, true);
	tag(&im, p)->sectors = 0;
	img_save(&im, dir, "no-sectors.img", L);
	img_free(&im);

	img_format(&im, L, OS, R);
	base(&im, R);
	p = find_tag(&im, true);
	memcpy(tag(&im, p ^ 1), tag(&im, p), sizeof(struct fr_tag_disk));
	img_save(&im, dir, "ambiguous.img", L);
	img_free(&im);

	/* Damaged or foreign superblocks. */
	img_format(&im, L, OS, R);
	base(&im, R);
	im.pm[offsetof(struct fr_sb_disk, origin_id) + 3] ^= 0x10;
	img_save(&im, dir, "bad-csum.img", L);
	img_free(&im);

	img_format(&im, L, OS, R);
	((struct fr_sb_disk *)im.pm)->version = cpu_to_le32(FR_FORMAT_VERSION + 1);
	resum(&im);
	img_save(&im, dir, "future-version.img", L);
	img_free(&im);

	img_format(&im, L, OS, R);
	((struct fr_sb_disk *)im.pm)->incompat_features = cpu_to_le64(1ULL << 63);
	resum(&im);
	img_save(&im, dir, "future-feature.img", L);
	img_free(&im);

	img_format(&im, L, OS, R);
	((struct fr_sb_disk *)im.pm)->region_chunks = cpu_to_le32(3);
	resum(&im);
	img_save(&im, dir, "bad-geometry.img", L);
	img_free(&im);

	img_format(&im, L, OS, R);
	memset(im.pm, 0, L);
	memcpy(im.pm + 1024, "\x53\xef", 2);	/* an ext4-like magic */
	img_save(&im, dir, "not-fr.img", 65536);
	img_free(&im);
}

static void gen_seeds(const char *dir)
{
	const size_t L = 48 << 10;
	const u64 OS = 256;
	const u32 R = 2;
	struct img im;
	u64 p;

	img_format(&im, L, OS, R);
	img_save(&im, dir, "seed-clean", L);
	base(&im, R);
	img_save(&im, dir, "seed-dirty", L);
	img_save(&im, dir, "seed-truncated", L / 3);
	img_free(&im);

	img_format(&im, L, OS, R);
	base(&im, R);
	img_crash_write(&im, 2ULL * R * 8, 16, 4, 1, 1);
	img_save(&im, dir, "seed-rollback", L);
	img_free(&im);

	img_format(&im, L, OS, R);
	base(&im, R);
	img_crash_write(&im, 2ULL * R * 8, 16, 4, 2, 1);
	img_save(&im, dir, "seed-rollforward", L);
	img_free(&im);

	img_format(&im, L, OS, R);
	base(&im, R);
	p = find_tag(&im, false);
	tag(&im, p)->commit = cpu_to_le64(le64_to_cpu(tag(&im, p)->commit) | 0x80);
	img_save(&im, dir, "seed-bad-flags", L);
	img_free(&im);
}

int main(int argc, char **argv)
{
	bool seeds = argc == 3 && !strcmp(argv[1], "--seeds");
	const char *dir = seeds ? argv[2] : argv[1];

	if (!(argc == 2 && argv[1][0] != '-') && !seeds) {
		fprintf(stderr, "usage: gen-images DIR | gen-images --seeds DIR\n");
		return 16;
	}
	if (mkdir(dir, 0755) && errno != EEXIST)
		die(dir);
	if (seeds)
		gen_seeds(dir);
	else
		gen_full(dir);
	return 0;
}
