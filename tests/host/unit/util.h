/* SPDX-License-Identifier: GPL-2.0-only */
/* Small PM images for the unit tests, on the simulated PM. */
#ifndef UNIT_UTIL_H
#define UNIT_UTIL_H

#include <stdlib.h>
#include "fr-core.h"
#include "simpm.h"

struct img {
	u8 *pm;
	u64 bytes;
	struct simpm spm;
	struct fr_cache c;
	unsigned long vb[64], db[64];
	struct fr_format_params p;
};

/*
 * Format a PM image of exactly `chunks` chunks of cs sectors, ways a slot
 * (0: a pair); 0 if done.
 */
static inline int img_format_ways(struct img *im, u32 cs, u32 ways,
				  u32 chunks, u32 region, u64 stride,
				  u64 origin_sectors)
{
	struct fr_geometry g;
	const char *why = NULL;
	u64 pm;

	memset(im, 0, sizeof(*im));
	im->p.ways = ways;
	im->p.chunk_sectors = cs;
	im->p.region_chunks = region;
	im->p.stride_slots = stride;
	im->p.origin_sectors = origin_sectors;
	im->p.format_time = 1700000000;
	memcpy(im->p.uuid, "0123456789abcdef", 16);
	strcpy(im->p.origin_id, "unit-origin");
	for (pm = fr_layout_bytes(cs, chunks);; pm += 4096) {
		if (!fr_geometry_layout(&g, pm, &im->p, &why) &&
		    g.nr_chunks == chunks)
			break;
		if (pm > fr_layout_bytes(cs, chunks) + (1 << 20))
			return -1;
	}
	im->bytes = pm;
	im->pm = xcalloc(pm, 1);
	simpm_init(&im->spm, im->pm, NULL, pm, g.data_offset);
	simpm_cur = &im->spm;
	return fr_format(&im->c, im->pm, pm, &im->p, im->vb, im->db, &why);
}

/* Format a PM image of exactly `chunks` chunks of cs sectors; 0 if done. */
static inline int img_format_cs(struct img *im, u32 cs, u32 chunks,
				u32 region, u64 stride, u64 origin_sectors)
{
	return img_format_ways(im, cs, 0, chunks, region, stride,
			       origin_sectors);
}

/* Format with 4 KiB chunks. */
static inline int img_format(struct img *im, u32 chunks, u32 region,
			     u64 stride, u64 origin_sectors)
{
	return img_format_cs(im, 8, chunks, region, stride, origin_sectors);
}

static inline void img_use(struct img *im)
{
	simpm_cur = &im->spm;
}

static inline void img_free(struct img *im)
{
	simpm_free(&im->spm);
	free(im->pm);
	im->pm = NULL;
	if (simpm_cur == &im->spm)
		simpm_cur = NULL;
}

/* Write a tag directly (as a crash could have left it). */
static inline void set_tag(struct img *im, u64 p, u64 key, u8 flags, u64 seq,
			   u64 sectors)
{
	struct fr_tag_disk *t = &im->c.tags[p];

	t->commit = cpu_to_le64(fr_commit_word(key, flags));
	t->seq = cpu_to_le64(seq);
	t->sectors = cpu_to_le64(sectors);
}

static inline u64 tag_commit_of(const struct img *im, u64 p)
{
	return le64_to_cpu(im->c.tags[p].commit);
}

/* The PM chunk index of slot s, chunk i. */
static inline u64 pch(u64 s, unsigned int i)
{
	return s * 2 + i;
}

/* A key that maps to slot s, other than the ones in avoid[0..n). */
static inline u64 key_in_slot(const struct fr_geometry *g, u64 s,
			      const u64 *avoid, unsigned int n)
{
	u64 k;
	unsigned int i;

	for (k = 0; k < g->origin_chunks; k++) {
		if (from_slot(fr_slot_of(g, to_ochunk(k))) != s)
			continue;
		for (i = 0; i < n; i++)
			if (avoid[i] == k)
				break;
		if (i == n)
			return k;
	}
	return ~0ULL;
}

#endif /* UNIT_UTIL_H */
