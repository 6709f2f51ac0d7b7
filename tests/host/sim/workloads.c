// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the crash simulator runs: the geometries (and what each saw), the
 * alphabet of ops and the start states the exhaustive search combines, and
 * the random op generator. The ops are built around keys that collide in
 * one slot, so that the Figure 3 cases all occur.
 */
#include <stdlib.h>
#include "crashsim.h"

/* What each geometry saw (states, next_seq range): shown after a run. */
struct cfg_stats cfg_seen[MAX_CFGS];

/* At the end of an op: the range of next_seq the geometry went through. */
void cfg_seen_seq(void)
{
	u64 seq = (u64)atomic64_read(&S.c.next_seq);
	u32 ci = cfg_index();

	if (!cfg_seen[ci].used || seq < cfg_seen[ci].seq_lo)
		cfg_seen[ci].seq_lo = seq;
	if (!cfg_seen[ci].used || seq > cfg_seen[ci].seq_hi)
		cfg_seen[ci].seq_hi = seq;
	cfg_seen[ci].used = true;
}

/* ---------------------------------------------------------------------- */
/* Workloads                                                              */

#define SEQ_2_32 (1ULL << 32)
#define SEQ_2_63 (1ULL << 63)
#define SEQ_2_64 0ULL		/* (2^64, as a u64) */

const struct cfg cfgs[] = {
	/* 4 slots, regions of 2, default stride 3; origin 4x, short last chunk */
	{ "p8-r2", 8, 2, 0, 16 * 8 - 3, 8, 0, 0, 0, 2 },
	/* 8 slots, regions of 4, default stride 5 */
	{ "p16-r4", 16, 4, 0, 40 * 8 - 1, 8, 0, 0, 0, 2 },
	/* 2 slots, single-chunk regions */
	{ "p4-r1", 4, 1, 1, 10 * 8, 8, 0, 0, 0, 2 },
	/* 8 slots, stride = region: regions tile the slots */
	{ "p16-r2-s2", 16, 2, 2, 48 * 8, 8, 0, 0, 0, 2 },
	/*
	 * The other chunk sizes, each with seqs from just below a power of
	 * two that a truncating or sign-extending bug would trip on: 64
	 * sectors (a full chunk's mask is all 64 bits), from 2^32; 16 sectors,
	 * through 2^63; 32 sectors, up to 2^64 - 2^16 + a few hundred.
	 */
	{ "p8-r2-c64-seq2^32", 8, 2, 0, 16 * 64 - 3, 64, SEQ_2_32 - 4, 0, 0, 2 },
	{ "p8-r2-c16-seq2^63", 8, 2, 0, 16 * 16 - 5, 16, SEQ_2_63 - 4, 0, 0, 2 },
	{ "p8-r4-c32-seq2^64", 8, 4, 0, 16 * 32 - 1, 32, SEQ_2_64 - (1ULL << 16), 0, 0, 2 },
	/*
	 * 20 slots: the tags fill recovery's first bulk page (32 tags) and
	 * part of a second, so both the bulk copy and its short last page run.
	 */
	{ "p40-r4", 40, 4, 0, 100 * 8, 8, 0, 0, 0, 2 },
	/*
	 * Bad PM: slot 0's second chunk, where every key of the alphabet
	 * collides, so each write there goes through the one usable chunk.
	 */
	{ "p8-r2-bad1", 8, 2, 0, 16 * 8 - 3, 8, 0, 1U << 1, 0, 2 },
	/*
	 * Resize: formatted for 10 chunks less 3 sectors (key 9 short) of an
	 * origin of 16; OP_RESIZE grows to 16 chunks and shrinks back.
	 */
	{ "p8-r2-resize", 8, 2, 0, 16 * 8, 8, 0, 0, 10 * 8 - 3, 2 },
	/*
	 * Sets (FR_INCOMPAT_SETS): 4 slots of 4 chunks, regions of 2, an
	 * origin of 8 keys a slot; 2 slots of 8 chunks (stride 1: the default
	 * does not fit), 5 keys a slot; and a set with bad chunks: slot 0
	 * keeps two good ones (chunks 1 and 3 bad), so it still writes out of
	 * place, and slot 1 keeps one (chunks 4, 5 and 6 bad).
	 */
	{ "s16-w4-r2", 16, 2, 0, 32 * 8 - 3, 8, 0, 0, 0, 4 },
	{ "s16-w8-r2", 16, 2, 0, 10 * 8 - 1, 8, SEQ_2_32 - 4, 0, 0, 8 },
	{ "s16-w4-r2-bad", 16, 2, 0, 24 * 8, 8, 0,
	  (1U << 1) | (1U << 3) | (1U << 4) | (1U << 5) | (1U << 6), 0, 4 },
};

_Static_assert(ARRAY_LEN(cfgs) <= MAX_CFGS, "raise MAX_CFGS");
const u32 nr_cfgs = ARRAY_LEN(cfgs);

u32 cfg_index(void)
{
	return (u32)(S.cfg - cfgs);
}

static struct op mk_write(u64 sector, u32 nr)
{
	return (struct op){ .type = OP_WRITE, .sector = sector, .nr = nr };
}

/* Keys that collide with key 0 in its slot, and the alphabet around them. */
void build_workload(struct workload *w)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 cs = g->chunk_sectors, R = g->region_chunks, k, K = 0, L = 0, M = 0, X;
	u64 lastk = g->origin_chunks - 1;
	struct op o;

	u64 more[FR_MAX_WAYS];
	u32 nmore = 0, i;

	memset(w, 0, sizeof(*w));
	for (k = 1; k < g->origin_chunks; k++)
		if (from_slot(fr_slot_of(g, to_ochunk(k))) ==
		    from_slot(fr_slot_of(g, to_ochunk(K)))) {
			if (!L) {
				L = k;
			} else if (!M) {
				M = k;
			} else if (nmore + 3 < g->ways + 1) {
				/* A set fills (and collides) only past ways keys. */
				more[nmore++] = k;
			} else {
				break;
			}
		}
#define A(x) (w->alpha[w->nalpha++] = (x))
	A(mk_write(K * cs, (u32)cs));			/* K full */
	for (i = 0; i < nmore; i++)
		A(mk_write(more[i] * cs, (u32)cs));	/* a set's further keys */
	A(mk_write(K * cs + 2, 3));			/* K partial */
	A(mk_write(L * cs, (u32)cs));			/* L full (collides) */
	A(mk_write(M * cs + cs - 1, 1));		/* M one sector */
	if (R >= 2) {
		/* multi-chunk, partial at both ends, region of K */
		A(mk_write(K * cs + cs / 2, (u32)cs));
		/* multi-chunk over L's region, whole chunks */
		u64 base = L & ~(R - 1);
		A(mk_write(base * cs, (u32)(2 * cs)));
	}
	o = (struct op){ .type = OP_FILL, .key = K };
	A(o);
	o.key = M;
	A(o);
	o = (struct op){ .type = OP_DISCARD, .sector = K * cs, .nr = (u32)cs };
	A(o);
	o = (struct op){ .type = OP_DISCARD, .sector = L * cs + 2, .nr = (u32)cs };
	A(o);
	/*
	 * Larger than the cache (the slot walk), from inside K's chunk to
	 * inside the last one: every chunk but the first and last whole.
	 */
	if (g->origin_sectors - K * cs - 2 > (g->nr_slots + 1) * cs) {
		o = (struct op){ .type = OP_DISCARD, .sector = K * cs + 1,
				 .nr = (u32)(g->origin_sectors - K * cs - 2) };
		A(o);
	}
	o = (struct op){ .type = OP_WB, .max = (u32)g->nr_chunks };
	A(o);
	o.max = 1;
	A(o);
	/* The worker's first batches under pressure: full slots only. */
	o = (struct op){ .type = OP_WB, .max = (u32)g->nr_chunks,
			 .full_slots = 1 };
	A(o);
	o = (struct op){ .type = OP_WB, .max = 1 };
	/*
	 * A flush's batch (fr_writeback_sweep): no wrap, so from a cursor
	 * past a dirty chunk it must leave that one alone; and one with a
	 * colliding write between its stage and submit.
	 */
	o.sweep = 1;
	A(o);
	o = (struct op){ .type = OP_WB, .max = 2, .sweep = 1,
			 .inj_at = INJ_STAGED, .ninj = 1 };
	o.inj[0].sector = L * cs;
	o.inj[0].nr = (u32)cs;
	A(o);
	/*
	 * A read fill inside a batch's window: the staged copy of K
	 * superseded (its chunk now invalid, and pinned: the origin write
	 * reads it), then a miss of M, which collides in the slot: the fill
	 * must not install into the pinned chunk.
	 */
	o = (struct op){ .type = OP_WB, .max = (u32)g->nr_chunks,
			 .inj_at = INJ_STAGED, .ninj = 2 };
	o.inj[0] = (typeof(o.inj[0])){ K * cs, (u32)cs };
	o.inj[1] = (typeof(o.inj[0])){ M, INJ_FILL_NR };
	A(o);
	/* a rewrite of a staged chunk, between stage and submit */
	o = (struct op){ .type = OP_WB, .max = (u32)g->nr_chunks,
			 .inj_at = INJ_STAGED, .ninj = 1 };
	o.inj[0].sector = K * cs + 5;
	o.inj[0].nr = 2;
	A(o);
	/*
	 * The staged chunk's key written again before the batch stages the
	 * next chunk: the new copy lands in the buddy, which the batch may
	 * reach next (one version of a key per batch).
	 */
	o = (struct op){ .type = OP_WB, .max = (u32)g->nr_chunks,
			 .inj_at = INJ_BETWEEN, .ninj = 1 };
	o.inj[0].sector = K * cs;
	o.inj[0].nr = (u32)(cs > 5 ? 5 : cs - 1);
	A(o);
	/*
	 * A batch stages a span in key order (1.19), from candidates read
	 * before it stages: the buddy a write of K takes after K's stage is
	 * not one of them, but in a set L's chunk is. A rewrite of L frees it
	 * and the write of K may take it: the span read it dirty with L,
	 * and it now holds K's new version.
	 */
	if (g->ways > FR_PAIR_WAYS) {
		struct op b = { .type = OP_WB, .max = (u32)g->nr_chunks,
				.inj_at = INJ_BETWEEN, .ninj = 2 };

		b.inj[0] = (typeof(b.inj[0])){ L * cs, (u32)cs };
		b.inj[1] = (typeof(b.inj[0])){ K * cs, (u32)cs };
		A(b);
	}
	/* a colliding write between submit and flush */
	o.inj_at = INJ_SUBMITTED;
	o.inj[0].sector = L * cs;
	o.inj[0].nr = (u32)cs;
	A(o);
	/*
	 * The staged chunk rewritten whole between stage and submit, once
	 * and twice: twice brings the copy back to the staged chunk with the
	 * same commit word, so only its seq tells that it changed.
	 */
	o = (struct op){ .type = OP_WB, .max = (u32)g->nr_chunks,
			 .inj_at = INJ_STAGED, .ninj = 1 };
	o.inj[0] = (typeof(o.inj[0])){ K * cs, (u32)cs };
	A(o);
	o.ninj = 2;
	o.inj[1] = o.inj[0];
	A(o);
	/*
	 * Between stage and submit: rewrite the staged chunk, then make two
	 * more colliding writes, so that the rewritten copy is cleaned
	 * (FR_WRITE_NEED_CLEAN) and displaced before the batch submits the stale
	 * data it staged.
	 */
	o = (struct op){ .type = OP_WB, .max = 1, .inj_at = INJ_STAGED,
			 .ninj = 3 };
	o.inj[0].sector = K * cs;
	o.inj[0].nr = (u32)cs;
	o.inj[1].sector = M * cs + cs - 1;
	o.inj[1].nr = 1;
	o.inj[2].sector = L * cs;
	o.inj[2].nr = (u32)cs;
	A(o);
	/*
	 * A write whose dirty victim is written back alone, with batches, a
	 * rewrite of the slot's key K and writes of X, in another slot, in
	 * the victim's window: the batches must skip the victim's slot, or
	 * the second writes the rewritten copy to the origin before the
	 * victim's older data lands over it. Each batch starts at X's slot
	 * and wraps round to K's, so it has a pin of its own (X's) when it
	 * meets the victim's.
	 */
	for (X = 1; X < g->origin_chunks; X++)
		if (fr_slot_of(g, to_ochunk(X)) != fr_slot_of(g, to_ochunk(K)))
			break;
	o = mk_write(M * cs + cs - 1, 1);
	o.inj_at = INJ_VICTIM;
	o.ninj = 5;
	o.inj[0] = (typeof(o.inj[0])){ X * cs, 1 };
	o.inj[1].sector = from_slot(fr_slot_of(g, to_ochunk(X))) << g->ways_shift;
	o.inj[2] = (typeof(o.inj[0])){ K * cs, (u32)cs };
	o.inj[3] = o.inj[0];
	o.inj[4] = o.inj[1];
	A(o);
	/*
	 * The same around a write of several chunks, whose victims are
	 * written back as a range of slots beside the batches: they must
	 * skip the range's slots.
	 */
	if (R >= 2 && ((M + 1) % R || M % R)) {
		/* M and a neighbour in its region */
		k = (M + 1) % R && M + 1 < g->origin_chunks ? M : M - 1;
		o.sector = k * cs + cs / 2;
		o.nr = (u32)cs;
		A(o);
	}
	if (R >= 2 && g->origin_chunks > R) {
		o = (struct op){ .type = OP_XREGION, .sector = (R - 1) * cs + 4,
				 .nr = (u32)cs };
		A(o);
	}
	/* error paths: the cached copy unreadable; the origin flush failing */
	o = mk_write(K * cs + 5, 2);
	o.fail = FAIL_PM_READ;
	A(o);
	o = (struct op){ .type = OP_WB, .max = (u32)g->nr_chunks,
			 .fail = FAIL_FLUSH };
	A(o);
	/* a media error in one dirty chunk: writeback skips it, goes on */
	o = (struct op){ .type = OP_WB, .max = (u32)g->nr_chunks,
			 .fail = FAIL_STAGE_POISON };
	A(o);
	/* the stage fails after a chunk was staged: nothing made clean */
	o = (struct op){ .type = OP_WB, .max = (u32)g->nr_chunks,
			 .fail = FAIL_STAGE_LATE };
	A(o);
	/*
	 * Writes sent around PM (admission): K whole and in part, which may
	 * find a clean copy to drop or a dirty one to write in front of; a
	 * write of L's region; and K with, in its window before the origin
	 * write, a write of K stored on PM and a batch from K's slot (which
	 * must skip it: the write around lands after it), or a read miss of
	 * K (whose fill must not install what it read before the write).
	 */
	o = mk_write(K * cs, (u32)cs);
	o.around = 1;
	A(o);
	o = mk_write(K * cs + 2, 3);
	o.around = 1;
	A(o);
	if (R >= 2) {
		o = mk_write((L & ~(R - 1)) * cs, (u32)(2 * cs));
		o.around = 1;
		A(o);
	}
	o = mk_write(K * cs, (u32)cs);
	o.around = 1;
	o.inj_at = INJ_AROUND;
	o.ninj = 2;
	o.inj[0] = (typeof(o.inj[0])){ K * cs + 1, 2 };
	o.inj[1].sector = from_slot(fr_slot_of(g, to_ochunk(K))) << g->ways_shift;
	A(o);
	o.ninj = 1;
	o.inj[0] = (typeof(o.inj[0])){ K, INJ_FILL_NR };
	A(o);
	/*
	 * In K's window, a write around of X, another key of K's slot: it
	 * must wait (the model stores it on PM), for if it went, its end
	 * would unpin the slot under K's write around, and a batch would
	 * then write back a newer copy of K that K's origin write, landing
	 * after it, makes older than the origin.
	 */
	for (X = 0; X < g->origin_chunks; X++)
		if (X != K &&
		    fr_slot_of(g, to_ochunk(X)) == fr_slot_of(g, to_ochunk(K)))
			break;
	if (X < g->origin_chunks) {
		o = mk_write(K * cs, (u32)cs);
		o.around = 1;
		o.inj_at = INJ_AROUND;
		o.ninj = 3;
		o.inj[0] = (typeof(o.inj[0])){ X * cs, (u32)cs };
		o.inj_around = 1;
		o.inj[1] = (typeof(o.inj[0])){ K * cs + 1, 2 };
		o.inj[2].sector = from_slot(fr_slot_of(g, to_ochunk(K))) <<
				  g->ways_shift;
		A(o);
	}
	/* the short last chunk, whole */
	A(mk_write(lastk * cs, (u32)(g->origin_sectors - lastk * cs)));
	if (S.cfg->format_sectors) {
		u64 fs = S.cfg->format_sectors, os = S.cfg->origin_sectors;

		/* grow and shrink back; what only the grown cache maps */
		o = (struct op){ .type = OP_RESIZE, .sector = os };
		A(o);
		o.sector = fs;
		A(o);
		A(mk_write(lastk * cs, (u32)cs));	/* the short chunk grown */
		A(mk_write(fs + cs, (u32)cs));		/* a key past the end */
		o = (struct op){ .type = OP_DISCARD, .sector = fs,
				 .nr = (u32)(os - fs) };
		A(o);
	}
	o = (struct op){ .type = OP_RECOVER };
	A(o);
#undef A
	if (w->nalpha > MAX_ALPHA)
		abort();	/* overran alpha[]: raise MAX_ALPHA */

#define SC(nm, ...) do { \
	struct op t_[] = { __VA_ARGS__ }; \
	w->scen[w->nscen].name = nm; \
	w->scen[w->nscen].n = ARRAY_LEN(t_); \
	memcpy(w->scen[w->nscen].ops, t_, sizeof(t_)); \
	w->nscen++; \
} while (0)
	{
		struct op wk = mk_write(K * cs, (u32)cs), wl = mk_write(L * cs, (u32)cs);
		struct op wb = { .type = OP_WB, .max = (u32)g->nr_chunks };
		struct op fl = { .type = OP_FILL, .key = L };
		struct op wkp = mk_write(K * cs + 2, 3);

		w->scen[w->nscen++].name = "empty";
		SC("K dirty", wk);
		SC("K older dirty, L newer dirty", wk, wl);
		SC("K older clean, L newer dirty", wk, wb, wl);
		SC("K and L clean", wk, wl, wb);
		SC("K partial dirty, L filled clean", wkp, fl);
		/*
		 * With K + 1, whose slot is K's span neighbour, between K
		 * and L in key order: a batch in key order stages it between
		 * them (one version of a key per batch, 1.19).
		 */
		if (g->ways > FR_PAIR_WAYS)
			SC("K, K + 1 and L dirty", wk,
			   mk_write((K + 1) * cs, (u32)cs), wl);
		if (g->ways > FR_PAIR_WAYS && M)
			SC("K, M, K + 1 and L dirty", wk, mk_write(M * cs, (u32)cs),
			   mk_write((K + 1) * cs, (u32)cs), wl);
		if (R >= 2) {
			u64 base = L & ~(R - 1);
			struct op wm = mk_write(base * cs, (u32)(2 * cs));

			SC("group over L's region, K partial", wm, wkp);
		}
		if (S.cfg->format_sectors) {
			u64 fs = S.cfg->format_sectors;
			struct op grow = { .type = OP_RESIZE,
					   .sector = S.cfg->origin_sectors };

			SC("grown, clean copies past the old end",
			   grow, mk_write(fs + cs, (u32)cs), wb);
		}
	}
#undef SC
}

struct op random_op(u64 *rng)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 cs = g->chunk_sectors, R = g->region_chunks, oc = g->origin_chunks;
	u64 r = gen_rand(rng) % 100, k, k2, s, e;
	struct op o;

	memset(&o, 0, sizeof(o));
	/* (A draw of its own only where it can happen: the seeds stay.) */
	if (S.cfg->format_sectors && gen_rand(rng) % 12 == 0) {
		o.type = OP_RESIZE;
		o.sector = gen_rand(rng) & 1 ? S.cfg->origin_sectors :
			   S.cfg->format_sectors;
		if (gen_rand(rng) % 3 == 0)
			o.crash_sel = gen_rand(rng) | 1;
		return o;
	}
	/* Half of the keys come from a hot set colliding in two slots. */
	if (gen_rand(rng) & 1) {
		u64 want = gen_rand(rng) & 1, t;

		k = gen_rand(rng) % oc;
		for (t = 0; t < oc; t++) {
			u64 kk = (k + t) % oc;

			if (from_slot(fr_slot_of(g, to_ochunk(kk))) == want)
				break;
		}
		k = (k + t) % oc;
	} else {
		k = gen_rand(rng) % oc;
	}
	if (r < 42) {
		u64 mask = fr_chunk_mask(g, to_ochunk(k));
		u32 n = (u32)hweight64(mask), a, b;

		o.type = OP_WRITE;
		/*
		 * One write in five sent around PM (admission), with no draw
		 * of its own; every other one of them with a write of its key
		 * and a batch, or a fill, in its window.
		 */
		o.around = r % 5 == 0;
		if (r < 14) {
			o.sector = k * cs;
			o.nr = n;
		} else if (r < 30 || R == 1) {
			a = (u32)(gen_rand(rng) % n);
			b = (u32)(gen_rand(rng) % n);
			if (a > b) {
				u32 t = a;

				a = b;
				b = t;
			}
			o.sector = k * cs + a;
			o.nr = b - a + 1;
		} else {
			/* multi-chunk within k's region */
			u64 base = k & ~(R - 1), end = base + R;

			if (end > oc)
				end = oc;
			k2 = k + 1 + gen_rand(rng) % R;
			if (k2 >= end)
				k2 = end - 1;
			if (k2 <= k) {
				k = base;
				k2 = end - 1;
			}
			s = k * cs + gen_rand(rng) % cs;
			e = k2 * cs + gen_rand(rng) % cs;
			if (e >= g->origin_sectors)
				e = g->origin_sectors - 1;
			o.sector = s;
			o.nr = (u32)(e - s + 1);
		}
		if (o.around && r % 10 == 0) {
			u64 k0 = o.sector >> g->chunk_shift;

			o.inj_at = INJ_AROUND;
			o.ninj = 2;
			o.inj[0] = (typeof(o.inj[0])){ o.sector, 1 };
			o.inj[1].sector = from_slot(fr_slot_of(g, to_ochunk(k0))) <<
					  g->ways_shift;
		} else if (o.around && (r == 15 || r == 35)) {
			o.inj_at = INJ_AROUND;
			o.ninj = 1;
			o.inj[0] = (typeof(o.inj[0])){ o.sector >> g->chunk_shift,
						       INJ_FILL_NR };
		}
	} else if (r < 52) {
		o.type = OP_FILL;
		o.key = k;
	} else if (r < 59) {
		o.type = OP_DISCARD;
		o.sector = k * cs + (gen_rand(rng) & 1 ? 0 : gen_rand(rng) % cs);
		if (o.sector >= g->origin_sectors)
			o.sector = g->origin_sectors - 1;
		o.nr = (u32)(1 + gen_rand(rng) % (3 * cs));
		/* One in eight larger than the cache: the slot walk. */
		if (gen_rand(rng) % 8 == 0)
			o.nr = (u32)((g->nr_slots + 1 + gen_rand(rng) % 4) * cs +
				     gen_rand(rng) % cs);
		if (o.sector + o.nr > g->origin_sectors)
			o.nr = (u32)(g->origin_sectors - o.sector);
	} else if (r < 80) {
		o.type = OP_WB;
		o.max = (u32)(gen_rand(rng) & 1 ? g->nr_chunks :
			      1 + gen_rand(rng) % 3);
		/* No rng draw of their own: the seeds' op streams stay. */
		o.sweep = o.max == 2;
		o.full_slots = o.max == 3;
		if (gen_rand(rng) % 3 == 0) {
			u32 i;

			o.inj_at = (u8)(INJ_STAGED + gen_rand(rng) % 3);
			o.ninj = (u8)(1 + gen_rand(rng) % MAX_INJ);
			for (i = 0; i < o.ninj; i++) {
				struct op x = random_op(rng);

				if (x.type == OP_FILL) {
					/* a read miss inside the window */
					o.inj[i].sector = x.key;
					o.inj[i].nr = INJ_FILL_NR;
					continue;
				}
				if (x.type != OP_WRITE)
					x = (struct op){ .type = OP_WRITE,
							 .sector = k * cs,
							 .nr = (u32)hweight64(fr_chunk_mask(g, to_ochunk(k))) };
				o.inj[i].sector = x.sector;
				o.inj[i].nr = x.nr;
			}
		}
	} else if (r < 83 && R >= 2 && oc > R) {
		o.type = OP_XREGION;
		k = (gen_rand(rng) % (oc / R - (oc % R == 0))) * R + R - 1;
		o.sector = k * cs + cs - 1;
		o.nr = 2;
	} else if (r < 88) {
		o.type = OP_RECOVER;
	} else {
		o = random_op(rng);
		o.crash_sel = gen_rand(rng) | 1;
	}
	if (r < 88 && gen_rand(rng) % 10 == 0)
		o.crash_sel = gen_rand(rng) | 1;
	if (o.type == OP_WB && gen_rand(rng) % 8 == 0)
		o.fail = (u8)(FAIL_STAGE + gen_rand(rng) % 5);
	if (o.type == OP_WRITE && gen_rand(rng) % 8 == 0)
		o.fail = FAIL_PM_READ;
	return o;
}
