// SPDX-License-Identifier: GPL-2.0-only
/*
 * coreprof: the dm-fr protocol core (dm-fr/fr-core.c, fr-format.c) in
 * userspace on a PM image in plain memory, driven like the target drives it,
 * to count its instructions per operation deterministically under callgrind:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=OUT coreprof [N]
 *   callgrind_annotate --inclusive=yes OUT
 *
 * Phases (separate functions, so that callgrind attributes them):
 *   phase_write_miss   N 4 KiB writes to chunks not cached (fresh slots)
 *   phase_write_hit    N 4 KiB overwrites of cached chunks
 *   phase_read_hit     N lookups + 4 KiB copies out of PM
 *   phase_writeback    fr_writeback() of everything dirty, in batches of 64
 *   phase_recover      fr_recover() of the whole image
 *   phase_raw_copy     N bare 4 KiB copies: what raw PM does per write
 * The fr_pm_* primitives are plain memory operations here (the kernel's are
 * memcpy_flushcache and sfence), so the counts are the core's own work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr-core.h"
#include "fr-format.h"
#include "fr-pm.h"

void fr_pm_store8(__le64 *dst, u64 val) { *dst = cpu_to_le64(val); }
void fr_pm_copy(void *dst, const void *src, size_t len) { memcpy(dst, src, len); }
void fr_pm_fence(void) { __asm__ __volatile__("" ::: "memory"); }
int fr_pm_load8(const __le64 *src, u64 *val) { *val = le64_to_cpu(*src); return 0; }
int fr_pm_read(void *dst, const void *src, size_t len) { memcpy(dst, src, len); return 0; }

#define PM_BYTES (64ull << 20)
#define ORIGIN_SECTORS (1ull << 21)	/* 1 GiB */

static u8 payload_buf[4096], out_buf[4096];
static u8 stage_buf[64 * 4096];
static u64 sink;

static void payload(void *arg, void *pm_dst, u32 nr_sectors)
{
	fr_pm_copy(pm_dst, arg, (size_t)nr_sectors << 9);
}

static u64 rng = 88172645463325252ull;
static u64 xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void wb_lock(void *ctx, fr_slot_t s) { (void)ctx; (void)s; }
static int wb_stage(void *ctx, u64 sector, const void *src, u32 n)
{
	size_t *used = ctx;

	if (*used + ((size_t)n << 9) > sizeof(stage_buf))
		*used = 0;
	memcpy(stage_buf + *used, src, (size_t)n << 9);
	*used += (size_t)n << 9;
	sink += sector;
	return 0;
}
static int wb_submit(void *ctx) { *(size_t *)ctx = 0; return 0; }
static int wb_flush(void *ctx) { (void)ctx; return 0; }
static const struct fr_wb_ops ops = {
	.lock = wb_lock, .unlock = wb_lock, .stage = wb_stage,
	.submit = wb_submit, .flush = wb_flush,
};

/* Chunks 0..n-1 (of 4 KiB): a range of half the PM never collides. */
static void __attribute__((noinline)) phase_write_miss(struct fr_cache *c, u64 n)
{
	struct fr_write_result res;

	for (u64 i = 0; i < n; i++)
		if (fr_write(c, i * 8, 8, payload, payload_buf, &res))
			abort();
}

static void __attribute__((noinline)) phase_write_hit(struct fr_cache *c, u64 n, u64 range)
{
	struct fr_write_result res;

	for (u64 i = 0; i < n; i++)
		if (fr_write(c, (xorshift() % range) * 8, 8, payload, payload_buf, &res))
			abort();
}

static void __attribute__((noinline)) phase_read_hit(struct fr_cache *c, u64 n, u64 range)
{
	struct fr_hit hit;

	for (u64 i = 0; i < n; i++) {
		if (!fr_lookup(c, to_ochunk(xorshift() % range), &hit))
			abort();
		fr_pm_read(out_buf, hit.data, 4096);
		sink += out_buf[0];
	}
}

static u64 __attribute__((noinline)) phase_writeback(struct fr_cache *c)
{
	static struct fr_wb_snap snaps[64];
	u64 cursor = 0, total = 0;
	size_t used = 0;
	int r;

	while ((r = fr_writeback(c, &cursor, 64, snaps, &ops, &used)) > 0)
		total += r;
	return total;
}

static void __attribute__((noinline)) phase_recover(struct fr_cache *c)
{
	static struct fr_group_scratch scratch[16384];
	struct fr_recovery_report rep;
	const char *why = NULL;

	if (fr_recover(c, FR_RECOVER_APPLY, scratch, 16384, &rep, &why)) {
		fprintf(stderr, "recover: %s\n", why);
		abort();
	}
	sink += rep.valid;
}

static void __attribute__((noinline)) phase_raw_copy(u8 *pm, u64 n, u64 range)
{
	for (u64 i = 0; i < n; i++)
		fr_pm_copy(pm + (xorshift() % range) * 4096, payload_buf, 4096);
}

int main(int argc, char **argv)
{
	u64 n = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000, range;
	struct fr_format_params p = { .chunk_sectors = 8,
				      .origin_sectors = ORIGIN_SECTORS };
	static struct fr_cache c;
	unsigned long *valid, *dirty;
	const char *why = NULL;
	u8 *pm = aligned_alloc(4096, PM_BYTES);

	memset(pm, 0, PM_BYTES);
	memset(payload_buf, 0xa5, sizeof(payload_buf));
	strcpy(p.origin_id, "coreprof");
	if (fr_geometry_layout(&c.geo, PM_BYTES, &p, &why)) {
		fprintf(stderr, "layout: %s\n", why);
		return 1;
	}
	valid = calloc(fr_bitmap_longs(&c.geo), sizeof(long));
	dirty = calloc(fr_bitmap_longs(&c.geo), sizeof(long));
	if (fr_format(&c, pm, PM_BYTES, &p, valid, dirty, &why)) {
		fprintf(stderr, "format: %s\n", why);
		return 1;
	}
	range = c.geo.nr_chunks / 2 - c.geo.region_chunks;	/* half the PM */
	if (n > range)
		n = range;
	phase_write_miss(&c, n);
	phase_write_hit(&c, n, n);
	phase_read_hit(&c, n, n);
	printf("chunks %llu, ops per phase %llu, written back %llu\n",
	       (unsigned long long)c.geo.nr_chunks, (unsigned long long)n,
	       (unsigned long long)phase_writeback(&c));
	phase_write_hit(&c, n, n);	/* dirty again, for recovery */
	phase_recover(&c);
	phase_raw_copy(pm, n, n);
	printf("sink %llu\n", (unsigned long long)sink);
	return 0;
}
