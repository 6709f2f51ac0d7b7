/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which pending units reach the media at a crash: the enumeration of crash
 * states at one crash point.
 *
 * Units are given in store order. Word units (tags, superblock, origin
 * sectors) are enumerated exhaustively while there are few of them; data
 * units (cache lines) are grouped by sector and torn at sector grain, then at
 * cache-line grain. Past the exhaustive limit: every subset of up to ksub
 * items, every complement of one, every prefix and suffix in store order, and
 * seeded random subsets (random versions of multi-version units too).
 */
#ifndef GEN_H
#define GEN_H

#include <stdbool.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;

struct gen_unit {
	u8 nver;		/* versions: 1 .. */
	int32_t group;		/* >= 0: data unit of that sector; -1: word */
};

struct gen_params {
	u32 exh_words;		/* words: exhaustive up to 2^this states (12) */
	u32 exh;		/* words x data sectors: up to 2^this */
	u32 ksub;		/* subsets (and complements) up to this size */
	u32 randn;		/* random subsets per crash point */
	bool line_detail;	/* also tear data at cache-line grain (while
				 * at most 256 lines are pending) */
	u64 seed;
};

/* assign[i]: 0 = unit i did not reach the media, v = its version v - 1 did. */
typedef void (*gen_cb)(const u8 *assign, void *ctx);

void gen_run(const struct gen_unit *u, u32 n, const struct gen_params *p,
	     gen_cb cb, void *ctx);

static inline u64 gen_rand(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#endif /* GEN_H */
