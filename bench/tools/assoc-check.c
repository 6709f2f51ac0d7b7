// SPDX-License-Identifier: GPL-2.0-only
/*
 * assoc-check: the real protocol core (dm-fr/core/fr-slot.c) replays a trace of
 * 4 KiB writes, one origin chunk number per line on stdin, and counts the
 * writes that had to wait for a forced writeback (FR_WRITE_NEED_CLEAN);
 * each is served as the target serves it, by writing back from the victim
 * on, one chunk here (the victim), and writing again. With no writeback
 * worker, bench/tools/assoc-model.py's 2-way cache in its check mode must
 * count the same waits on the same trace: the model's placement and write
 * rule are the core's (tests/host/run-tests compares them).
 *
 *   assoc-check --geometry PM_MIB   print: nr_slots region_chunks stride
 *   assoc-check PM_MIB < TRACE      print: writes N forced F
 *
 * Linked with tests/host/fuzz/pm-direct.c: PM is plain memory here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr-core.h"
#include "fr-format.h"

#define ORIGIN_SECTORS (1ull << 24)	/* 8 GiB */

static u8 payload_buf[4096];

static void payload(void *arg, void *pm_dst, u32 nr_sectors)
{
	fr_pm_copy(pm_dst, arg, (size_t)nr_sectors << 9);
}

static void wb_lock(void *ctx, fr_slot_t s) { (void)ctx; (void)s; }
static int wb_stage(void *ctx, u64 sector, const void *src, u32 n)
{
	(void)ctx; (void)sector; (void)src; (void)n;
	return 0;
}
static int wb_done(void *ctx) { (void)ctx; return 0; }
static const struct fr_wb_ops ops = {
	.lock = wb_lock, .unlock = wb_lock, .stage = wb_stage,
	.submit = wb_done, .flush = wb_done,
};

int main(int argc, char **argv)
{
	int geometry = argc > 1 && !strcmp(argv[1], "--geometry");
	struct fr_format_params p = { .chunk_sectors = 8,
				      .origin_sectors = ORIGIN_SECTORS };
	static struct fr_cache c;
	struct fr_wb_snap snap;
	unsigned long *valid, *dirty;
	unsigned long long key, writes = 0, forced = 0;
	const char *why = NULL;
	u64 pm_bytes;
	u8 *pm;

	if (argc != 2 + geometry || !strtoull(argv[1 + geometry], NULL, 0)) {
		fprintf(stderr, "usage: assoc-check [--geometry] PM_MIB [< TRACE]\n");
		return 2;
	}
	pm_bytes = strtoull(argv[1 + geometry], NULL, 0) << 20;
	strcpy(p.origin_id, "assoc-check");
	if (fr_geometry_layout(&c.geo, pm_bytes, &p, &why)) {
		fprintf(stderr, "layout: %s\n", why);
		return 1;
	}
	if (geometry) {
		printf("%llu %u %llu\n", (unsigned long long)c.geo.nr_slots,
		       c.geo.region_chunks,
		       (unsigned long long)c.geo.stride_slots);
		return 0;
	}
	pm = aligned_alloc(4096, pm_bytes);
	valid = calloc(fr_bitmap_longs(&c.geo), sizeof(long));
	dirty = calloc(fr_bitmap_longs(&c.geo), sizeof(long));
	if (!pm || !valid || !dirty) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	memset(pm, 0, pm_bytes);
	if (fr_format(&c, pm, pm_bytes, &p, valid, dirty, &why)) {
		fprintf(stderr, "format: %s\n", why);
		return 1;
	}
	while (scanf("%llu", &key) == 1) {
		struct fr_write_result res;
		enum fr_write_outcome out;
		u64 cursor;

		if (key >= c.geo.origin_chunks) {
			fprintf(stderr, "key %llu beyond the origin\n", key);
			return 1;
		}
		writes++;
		for (;;) {
			memset(&res, 0, sizeof(res));
			out = fr_write(&c, key * 8, 8, payload, payload_buf, &res);
			if (out != FR_WRITE_NEED_CLEAN)
				break;
			forced++;
			cursor = from_pchunk(res.victim);
			if (fr_writeback(&c, &cursor, 1, &snap, &ops, NULL) != 1) {
				fprintf(stderr, "the victim was not written back\n");
				return 1;
			}
		}
		if (out != FR_WRITE_DONE) {
			fprintf(stderr, "write of %llu: outcome %d\n", key, out);
			return 1;
		}
	}
	printf("writes %llu forced %llu\n", writes, forced);
	return 0;
}
