// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dm-fr crash simulator.
 *
 * Runs the protocol core (dm-fr/fr-core.c, unchanged) against simulated PM
 * (simpm.c) and a simulated origin with a volatile write cache
 * (simorigin.c). At every crash point of every operation (each fr_pm_fence,
 * each origin submit before its flush, the end of the operation) it
 * enumerates which pending PM units and unflushed origin sectors reached the
 * media (gen.c), recovers each crash state with fr_recover(APPLY) on a fresh
 * fr_cache, and checks the invariants against a reference model:
 *
 *  1. every acknowledged write is readable with its exact data;
 *  2. the write in flight is entirely there or entirely absent (per bio);
 *  3. no read returns data never written to that LBA (sector patterns encode
 *     the op id and the LBA, so stale, foreign and torn data all show);
 *  4. recovery is idempotent: at every fence of that recovery, with every
 *     subset of its pending stores, recovering again gives the same tags;
 *  5. a clean chunk's held sectors equal the origin's media;
 *  6. every PM store of the live run is made under the lock of the slot it
 *     touches: the caller's around fr_write/fr_fill/fr_discard (the whole
 *     cache around fr_recover), or the one writeback takes through ops->lock;
 * and that recovery never fails on a reachable state, leaves no INCOMPLETE
 * member and no duplicate key, and rebuilds bitmaps that match the tags.
 *
 * The geometries cover every chunk size (8 to 64 sectors) and start the
 * sequence counter at 0, just below 2^32, 2^63 and 2^64 - 2^16.
 *
 * Reads after recovery go as the kernel's will: fr_lookup(), held sectors
 * from PM, the rest from the origin.
 *
 * Usage: crashsim [--quick|--full] [--seed N] [--ops N] [--iterations N]
 *                 [--depth N] [--mutant N|all] [--no-exhaustive] [-v]
 */
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "crashsim.h"
#include "mutants.h"

struct sim S;

/* What each geometry saw (states, next_seq range): shown after a run. */
#define MAX_CFGS 8
static struct {
	u64 states, seq_lo, seq_hi;
	bool used;
} cfg_seen[MAX_CFGS];

static u32 cfg_index(void);

static void cfg_seen_seq(void)
{
	u64 seq = (u64)atomic64_read(&S.c.next_seq);
	u32 ci = cfg_index();

	if (!cfg_seen[ci].used || seq < cfg_seen[ci].seq_lo)
		cfg_seen[ci].seq_lo = seq;
	if (!cfg_seen[ci].used || seq > cfg_seen[ci].seq_hi)
		cfg_seen[ci].seq_hi = seq;
	cfg_seen[ci].used = true;
}

/*
 * crashsim.c is compiled once and linked twice: with the real core
 * (crashsim) and with the core's broken variants (crashsim-mut, which links
 * sim/mutants.c). With the real core these weak definitions stand in, and
 * --mutant is refused.
 */
enum fr_mutation fr_mutation __attribute__((weak));
const int crashsim_core_mutable __attribute__((weak));

/* ---------------------------------------------------------------------- */
/* Data patterns: word i of sector lba written by op x.                   */

static inline u64 pattern(u32 x, u64 lba, u32 i)
{
	return (u64)x << 40 | lba << 8 | i;
}

static void fill_pattern(u8 *buf, u32 x, u64 lba, u32 nsect)
{
	u32 s, i;

	for (s = 0; s < nsect; s++) {
		u64 *w = (u64 *)(buf + (size_t)s * SECT);

		for (i = 0; i < SECT / 8; i++)
			w[i] = cpu_to_le64(pattern(x, lba + s, i));
	}
}

/* The op whose data a sector holds, or 0 if it is nobody's whole sector. */
static u32 sector_op(const u8 *p, u64 lba)
{
	const u64 *w = (const u64 *)p;
	u64 w0 = le64_to_cpu(w[0]);
	u32 x = (u32)(w0 >> 40), i;

	if (!x || x > S.nops || (w0 & ((1ULL << 40) - 1)) != lba << 8)
		return 0;
	for (i = 1; i < SECT / 8; i++)
		if (le64_to_cpu(w[i]) != pattern(x, lba, i))
			return 0;
	return x;
}

/* ---------------------------------------------------------------------- */
/* Reports                                                                */

void log_op(const char *fmt, ...)
{
	va_list ap;

	if (S.nlog >= LOG_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(S.log[S.nlog++], LOG_LEN, fmt, ap);
	va_end(ap);
}

static size_t describe_units(char *b, size_t len, const struct simpm_epoch *ep,
			     const u8 *a)
{
	const struct fr_geometry *g = &S.c.geo;
	size_t o = 0;
	u32 i, j;

	if (!ep || !a)
		return 0;
	for (i = 0; i < ep->nunits && o + 96 < len; i++) {
		const struct simpm_unit *u = &ep->units[i];
		u64 off = simpm_unit_off(u);

		if (!a[i])
			continue;
		if (u->kind == SIMPM_WORD && off >= g->tags_offset) {
			static const char *const f[] = {
				"commit", "seq", "sectors", "reserved"
			};
			u64 t = (off - g->tags_offset) / 32;
			u64 v;

			memcpy(&v, &ep->vals[u->ver[a[i] - 1]], 8);
			o += snprintf(b + o, len - o, " tag[%llu].%s=%#llx",
				      (unsigned long long)t,
				      f[(off - g->tags_offset) % 32 / 8],
				      (unsigned long long)le64_to_cpu(v));
		} else if (u->kind == SIMPM_WORD) {
			o += snprintf(b + o, len - o, " sb+%llu",
				      (unsigned long long)off);
		} else {
			u64 rel = off - g->data_offset;
			u64 cb = (u64)g->chunk_sectors * SECT;

			/* coalesce runs of lines of one chunk */
			j = i;
			while (j + 1 < ep->nunits && a[j + 1] &&
			       ep->units[j + 1].kind == SIMPM_LINE_UNIT &&
			       ep->units[j + 1].idx == ep->units[j].idx + 1 &&
			       (simpm_unit_off(&ep->units[j + 1]) -
				g->data_offset) / cb == rel / cb)
				j++;
			o += snprintf(b + o, len - o,
				      " chunk%llu[lines %llu-%llu]",
				      (unsigned long long)(rel / cb),
				      (unsigned long long)(rel % cb / 64),
				      (unsigned long long)((simpm_unit_off(
					&ep->units[j]) - g->data_offset) %
					cb / 64));
			i = j;
		}
		if (u->nver > 1)
			o += snprintf(b + o, len - o, "(v%u/%u)", a[i], u->nver);
	}
	return o;
}

static void describe_state(char *b, size_t len)
{
	size_t o = 0;
	u32 i, n = 0;

	o += snprintf(b + o, len - o, "  config %s, %s\n  ops:", S.cfg->name,
		      S.phase ? S.phase : "");
	for (i = 0; i < S.nlog && o + LOG_LEN + 8 < len; i++)
		o += snprintf(b + o, len - o, "%s %s", i ? ";" : "", S.log[i]);
	o += snprintf(b + o, len - o, "\n  crash at: %s (crash point %llu of the last op)\n",
		      S.point_kind ? S.point_kind : "-",
		      (unsigned long long)S.op_points);
	if (o + 64 < len && S.cs_ep) {
		for (i = 0; i < S.cs_ep->nunits; i++)
			n += !!S.cs_assign[i];
		o += snprintf(b + o, len - o,
			      "  pending PM units: %u, reached media: %u:", S.cs_ep->nunits, n);
		o += describe_units(b + o, len - o, S.cs_ep, S.cs_assign);
		o += snprintf(b + o, len - o, "\n");
	}
	if (o + 64 < len && S.cs_norg) {
		o += snprintf(b + o, len - o, "  unflushed origin sectors that survived:");
		for (i = 0; i < S.cs_norg && o + 32 < len; i++)
			if (S.cs_org_assign[i])
				o += snprintf(b + o, len - o, " %u(v%u)",
					      S.cs_org_sector[i],
					      S.cs_org_assign[i]);
		o += snprintf(b + o, len - o, "\n");
	}
	if (o + 64 < len && S.cs_rec_epoch >= 0) {
		o += snprintf(b + o, len - o,
			      "  then crashed inside recovery at its fence %d; reached media:",
			      S.cs_rec_epoch + 1);
		o += describe_units(b + o, len - o, S.cs_rec_ep, S.cs_rec_assign);
		o += snprintf(b + o, len - o, "\n");
	}
}

void violation(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	S.violations++;
	if (S.state_bad)
		return;		/* one report per crash state */
	S.state_bad = true;
	S.violating_states++;
	if (S.violating_states == 1 || (int)S.violating_states <= S.print_violations) {
		char st[3000];

		describe_state(st, sizeof(st));
		if (S.violating_states == 1)
			snprintf(S.first_violation, sizeof(S.first_violation),
				 "%s\n%s", msg, st);
		if ((int)S.violating_states <= S.print_violations)
			printf("VIOLATION: %s\n%s", msg, st);
	}
}

/* ---------------------------------------------------------------------- */
/* Reference model                                                        */

static u32 new_op(u8 type, u64 sector, u32 nr)
{
	if (S.nops + 1 >= S.cap_ops) {
		S.cap_ops = S.cap_ops ? S.cap_ops * 2 : 256;
		S.ops = xrealloc(S.ops, S.cap_ops * sizeof(*S.ops));
	}
	S.nops++;
	S.ops[S.nops] = (struct oprec){ type, ST_INFLIGHT, sector, nr };
	if (S.nops >= (1U << 24)) {
		fprintf(stderr, "crashsim: too many ops\n");
		exit(2);
	}
	return S.nops;
}

static bool covers(const struct oprec *r, u64 lba)
{
	return lba >= r->sector && lba < r->sector + r->nr;
}

/* May sector lba read as op x's data, outside any op in flight? */
static bool allowed_old(u64 lba, u32 x)
{
	if (!S.freed[lba])
		return x == S.cur[lba];
	/* discarded: any acknowledged data of this LBA, or the image */
	if (x == 1)
		return true;
	return x <= S.nops && S.ops[x].type == OP_WRITE &&
	       S.ops[x].status == ST_ACKED && covers(&S.ops[x], lba);
}

static void ack_write(u32 id)
{
	struct oprec *r = &S.ops[id];
	u64 s;

	r->status = ST_ACKED;
	for (s = r->sector; s < r->sector + r->nr; s++) {
		S.cur[s] = id;
		S.freed[s] = 0;
	}
}

static void ack_discard(u32 id)
{
	struct oprec *r = &S.ops[id];
	u64 s;

	r->status = ST_ACKED;
	for (s = r->sector; s < r->sector + r->nr && s < S.cfg->origin_sectors;
	     s++)
		S.freed[s] = 1;
}

static void mark_key(u64 k)
{
	if (k >= S.c.geo.origin_chunks)
		return;
	if (S.keystamp[k] != S.stamp) {
		S.keystamp[k] = S.stamp;
		S.opkeys[S.nopkeys++] = k;
	}
}

static void mark_range(u64 sector, u64 nr)
{
	u64 k;

	for (k = sector >> S.c.geo.chunk_shift;
	     nr && k <= (sector + nr - 1) >> S.c.geo.chunk_shift; k++)
		mark_key(k);
}

/* Keys a crash inside the coming op may affect: those on PM now, its own. */
static void opkeys_reset(void)
{
	u64 p;

	S.stamp++;
	S.nopkeys = 0;
	for (p = 0; p < S.c.geo.nr_chunks; p++) {
		u64 cw = le64_to_cpu(S.c.tags[p].commit);

		if (cw & FR_TAG_VALID)
			mark_key(fr_commit_key(cw));
	}
}

/* ---------------------------------------------------------------------- */
/* Checking a (recovered) cache against the reference                    */

struct readtally {
	u32 saw_new, saw_old;
};

static void check_sector(u64 key, u64 lba, const u8 *src, bool from_pm,
			 u64 pchunk, struct readtally *t)
{
	u32 x = sector_op(src, lba);
	const struct oprec *in = S.inflight ? &S.ops[S.inflight] : NULL;
	char where[48];

	if (from_pm)
		snprintf(where, sizeof(where), "PM chunk %llu",
			 (unsigned long long)pchunk);
	else
		snprintf(where, sizeof(where), "the origin");
	if (!x) {
		const u64 *w = (const u64 *)src;

		violation("sector %llu (key %llu) read from %s is not data written to that LBA (word0 %#llx): torn, stale-foreign or garbage",
			  (unsigned long long)lba, (unsigned long long)key,
			  where, (unsigned long long)le64_to_cpu(w[0]));
		return;
	}
	if (in && covers(in, lba) && in->type == OP_WRITE) {
		if (x == S.inflight) {
			t->saw_new++;
			return;
		}
		t->saw_old++;
	} else if (in && covers(in, lba) && in->type == OP_DISCARD) {
		if (x == 1 || (S.ops[x].type == OP_WRITE &&
			       S.ops[x].status == ST_ACKED &&
			       covers(&S.ops[x], lba)))
			return;
	}
	if (!allowed_old(lba, x))
		violation("sector %llu (key %llu) read from %s holds op %u's data; expected op %u%s",
			  (unsigned long long)lba, (unsigned long long)key,
			  where, x, S.cur[lba],
			  S.freed[lba] ? " or older (discarded)" : "");
}

/* Read every sector of key as the kernel will, and check it. */
static void check_key(struct fr_cache *cc, u64 key, struct readtally *t)
{
	const struct fr_geometry *g = &cc->geo;
	u64 mask = fr_chunk_mask(g, to_ochunk(key)), first = key << g->chunk_shift;
	struct fr_hit hit;
	bool h = fr_lookup(cc, to_ochunk(key), &hit);
	u32 i;

	for (i = 0; i < g->chunk_sectors; i++) {
		bool pm;
		const u8 *src;

		if (!(mask >> i & 1))
			break;
		pm = h && (hit.sectors >> i & 1);
		src = pm ? (const u8 *)hit.data + (size_t)i * SECT :
		      so_crash_sector(&S.org, first + i);
		check_sector(key, first + i, src, pm, from_pchunk(hit.pchunk), t);
	}
}

/*
 * Check a cache (freshly recovered, or live at the end of an op): the
 * structure recovery must leave, the reads, and clean == origin media.
 */
static void check_cache(struct fr_cache *cc, bool all_keys)
{
	const struct fr_geometry *g = &cc->geo;
	struct readtally t = { 0, 0 };
	u64 p, k;
	u32 i, n;

	for (p = 0; p < g->nr_chunks; p++) {
		u64 cw = le64_to_cpu(cc->tags[p].commit);
		bool v = cw & FR_TAG_VALID, d = v && (cw & FR_TAG_DIRTY);

		if (v != test_bit(p, cc->valid_bits) ||
		    d != test_bit(p, cc->dirty_bits))
			violation("DRAM bitmaps disagree with tag %llu (%#llx)",
				  (unsigned long long)p, (unsigned long long)cw);
		if (!v)
			continue;
		if (cw & FR_TAG_INCOMPLETE)
			violation("tag %llu still INCOMPLETE after recovery (%#llx)",
				  (unsigned long long)p, (unsigned long long)cw);
		if ((p & 1)) {
			u64 ow = le64_to_cpu(cc->tags[p ^ 1].commit);

			if ((ow & FR_TAG_VALID) &&
			    fr_commit_key(ow) == fr_commit_key(cw))
				violation("slot %llu holds key %llu twice",
					  (unsigned long long)(p / 2),
					  (unsigned long long)fr_commit_key(cw));
		}
		/* Invariant 5: clean means the origin media holds it. */
		if (!(cw & FR_TAG_DIRTY)) {
			u64 key = fr_commit_key(cw);
			u64 held = le64_to_cpu(cc->tags[p].sectors) &
				   fr_chunk_mask(g, to_ochunk(key));
			const u8 *data = fr_chunk_data(cc, to_pchunk(p));

			for (i = 0; i < g->chunk_sectors; i++) {
				u64 lba = (key << g->chunk_shift) + i;

				if ((held >> i & 1) &&
				    memcmp(data + (size_t)i * SECT,
					   so_crash_sector(&S.org, lba), SECT))
					violation("clean chunk %llu (key %llu) sector %llu differs from the origin's media: dirty data marked clean too early",
						  (unsigned long long)p,
						  (unsigned long long)key,
						  (unsigned long long)lba);
			}
		}
	}

	/* Reads: the keys the op could touch, and every key now on PM. */
	if (all_keys) {
		for (k = 0; k < g->origin_chunks; k++)
			check_key(cc, k, &t);
	} else {
		u32 base = S.nopkeys;

		for (p = 0; p < g->nr_chunks; p++) {
			u64 cw = le64_to_cpu(cc->tags[p].commit);

			if (cw & FR_TAG_VALID)
				mark_key(fr_commit_key(cw));
		}
		n = S.nopkeys;
		for (i = 0; i < n; i++)
			check_key(cc, S.opkeys[i], &t);
		/* forget the keys added for this state only */
		for (i = base; i < n; i++)
			S.keystamp[S.opkeys[i]] = S.stamp - 1;
		S.nopkeys = base;
	}
	if (t.saw_new && t.saw_old)
		violation("write in flight (op %u, sectors %llu+%u) is torn: %u sectors new, %u old",
			  S.inflight,
			  (unsigned long long)S.ops[S.inflight].sector,
			  S.ops[S.inflight].nr, t.saw_new, t.saw_old);
}

/* ---------------------------------------------------------------------- */
/* Crash states                                                           */

static u64 fnv(const void *p, size_t n, u64 h)
{
	const u8 *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

/* Has this crash state (hash) been checked at this crash point already? */
static bool seen_state(struct seen *t, u64 h)
{
	u32 i = (u32)(h ^ (h >> 32)) & (SEEN_CAP - 1);

	if (t->n * 2 >= SEEN_CAP)
		return false;	/* table full: no dedupe beyond this */
	while (t->g[i] == t->gen) {
		if (t->h[i] == h)
			return true;
		i = (i + 1) & (SEEN_CAP - 1);
	}
	t->g[i] = t->gen;
	t->h[i] = h;
	t->n++;
	return false;
}

static void seen_reset(struct seen *t)
{
	t->gen++;
	t->n = 0;
}

static void rec_fence_record(struct simpm *pm, void *arg)
{
	(void)arg;
	if (S.nrec_eps == S.cap_rec_eps) {
		S.cap_rec_eps = S.cap_rec_eps ? S.cap_rec_eps * 2 : 8;
		S.rec_eps = xrealloc(S.rec_eps, S.cap_rec_eps * sizeof(*S.rec_eps));
		memset(S.rec_eps + S.nrec_eps, 0,
		       (S.cap_rec_eps - S.nrec_eps) * sizeof(*S.rec_eps));
	}
	simpm_epoch_copy(&S.rec_eps[S.nrec_eps++], &pm->ep);
}

static int recover_scratch(struct fr_cache *cc, struct fr_recovery_report *rep,
			   const char **why)
{
	int r;

	memset(S.cvb, 0, S.nlongs * sizeof(long));
	memset(S.cdb, 0, S.nlongs * sizeof(long));
	/*
	 * A fresh attach. fr_cache_attach() is a pure function of the
	 * superblock bytes; its bitwise CRC-32C would dominate the run time,
	 * so while the superblock is the one decoded last it is called only
	 * once per crash point, and the other states take a copy of its
	 * result (with fresh DRAM state, as attach leaves it).
	 */
	if (S.attach_fresh || memcmp(S.scratch, S.sb_ref, FR_SB_BYTES)) {
		r = fr_cache_attach(cc, S.scratch, S.pm_bytes, S.cvb, S.cdb, why);
		if (r)
			return r;
		memcpy(S.sb_ref, S.scratch, FR_SB_BYTES);
		S.cache_ref = *cc;
		S.attach_fresh = false;
	} else {
		*cc = S.cache_ref;
		atomic64_set(&cc->next_seq, 0);
	}
	return fr_recover(cc, FR_RECOVER_APPLY, S.groups,
			  ARRAY_LEN(S.groups), rep, why);
}

struct rec_ctx {
	u32 epoch;
	u32 undo_base;
	u64 states;
};

/* A crash inside the recovery of a crash state: recover again, compare. */
static void rec_crash_cb(const u8 *a, void *arg)
{
	struct rec_ctx *rc = arg;
	const struct simpm_epoch *ep = &S.rec_eps[rc->epoch];
	struct fr_recovery_report rep;
	struct fr_cache cc;
	const char *why = NULL;
	u32 e, i;
	int r;

	if (seen_state(&S.seen_rec, fnv(a, ep->nunits, 0xcbf29ce484222325ULL ^ rc->epoch)))
		return;
	simpm_undo_to(&S.undo, S.scratch, rc->undo_base);
	for (e = 0; e < rc->epoch; e++)
		for (i = 0; i < S.rec_eps[e].nunits; i++)
			simpm_apply_unit(S.scratch, &S.rec_eps[e],
					 &S.rec_eps[e].units[i],
					 S.rec_eps[e].units[i].nver - 1U, &S.undo);
	for (i = 0; i < ep->nunits; i++)
		if (a[i])
			simpm_apply_unit(S.scratch, ep, &ep->units[i], a[i] - 1U,
					 &S.undo);
	S.cs_rec_epoch = (int)rc->epoch;
	S.cs_rec_ep = ep;
	S.cs_rec_assign = a;
	S.states++;
	rc->states++;
	S.spm.record = false;
	S.spm.on_fence = NULL;
	r = recover_scratch(&cc, &rep, &why);
	if (r) {
		violation("recovery after a crash inside recovery failed: %d (%s)",
			  r, why ? why : "");
	} else if (memcmp(S.scratch + cc.geo.tags_offset, S.tags_ref,
			  S.tags_bytes)) {
		violation("recovery is not idempotent: recovering again after a crash inside recovery gave different tags");
	} else if (memcmp(S.cvb, S.cvb + S.nlongs, S.nlongs * sizeof(long)) ||
		   memcmp(S.cdb, S.cdb + S.nlongs, S.nlongs * sizeof(long))) {
		violation("recovery is not idempotent: DRAM bitmaps differ");
	}
	S.cs_rec_epoch = -1;
}

struct state_ctx {
	const struct simpm_epoch *ep;
	u32 norg;
	const u32 *org_sector;
};

/*
 * One crash state: the live media, plus the PM units and origin sectors that
 * a[] / ao[] say reached the media. Recover it and check everything.
 */
static void check_state(const struct simpm_epoch *ep, const u8 *a, u32 norg,
			const u32 *org_sector, const u8 *ao)
{
	struct fr_recovery_report rep;
	struct fr_cache cc;
	const char *why = NULL;
	u32 i, base;
	bool was_bad = S.state_bad;
	int r;

	S.state_bad = false;
	S.states++;
	cfg_seen[cfg_index()].states++;
	S.cs_ep = ep;
	S.cs_assign = a;
	S.cs_norg = norg;
	S.cs_org_sector = org_sector;
	S.cs_org_assign = ao;
	S.cs_rec_epoch = -1;

	if (ep)
		for (i = 0; i < ep->nunits; i++)
			if (a[i])
				simpm_apply_unit(S.scratch, ep, &ep->units[i],
						 a[i] - 1U, &S.undo);
	for (i = 0; i < norg; i++)
		if (ao[i])
			so_crash_pick(&S.org, org_sector[i],
				      so_version_entry(&S.org, org_sector[i],
						       ao[i] - 1U));
	base = S.undo.n;

	simpm_cur = &S.spm;
	S.spm.record = true;
	S.spm.undo = &S.undo;
	S.spm.on_fence = rec_fence_record;
	S.nrec_eps = 0;
	r = recover_scratch(&cc, &rep, &why);
	S.spm.on_fence = NULL;
	simpm_reset_pending(&S.spm);
	if (r) {
		violation("recovery of a reachable crash state failed: %d (%s)",
			  r, why ? why : "");
	} else {
		S.fig3[F_RECOVERY_STORES] += !!rep.stores;
		/* After a completed operation there is nothing to resolve. */
		if (S.quiescent && rep.stores && !(ep && ep->nunits) && !norg)
			violation("recovery had %llu stores to make after a completed operation (a step left undone)",
				  (unsigned long long)rep.stores);
		S.fig3[F_GROUP_BACK] += rep.groups_rolled_back;
		S.fig3[F_GROUP_FWD] += rep.groups_rolled_forward;
		check_cache(&cc, false);
		if (S.collect_rec_hashes) {
			if (S.nrec_hashes == S.cap_rec_hashes) {
				S.cap_rec_hashes = S.cap_rec_hashes ?
						   S.cap_rec_hashes * 2 : 1024;
				S.rec_hashes = xrealloc(S.rec_hashes,
					S.cap_rec_hashes * sizeof(u64));
			}
			S.rec_hashes[S.nrec_hashes++] =
				fnv(S.scratch + cc.geo.tags_offset, S.tags_bytes,
				    0xcbf29ce484222325ULL);
		}
		/* Invariant 4: crash inside this recovery, recover again. */
		for (i = 0; i < S.nrec_eps; i++)
			if (S.rec_eps[i].nunits)
				break;
		if (i < S.nrec_eps) {
			struct rec_ctx rc = { .undo_base = base };
			u32 e;

			memcpy(S.tags_ref, S.scratch + cc.geo.tags_offset,
			       S.tags_bytes);
			memcpy(S.cvb + S.nlongs, S.cvb, S.nlongs * sizeof(long));
			memcpy(S.cdb + S.nlongs, S.cdb, S.nlongs * sizeof(long));
			seen_reset(&S.seen_rec);
			for (e = 0; e < S.nrec_eps; e++) {
				struct gen_unit gu[256];
				struct simpm_epoch *rep_ep = &S.rec_eps[e];
				u32 n = rep_ep->nunits < 256 ? rep_ep->nunits : 256;
				struct gen_params gp = S.rgp;
				u32 k;

				if (!n)
					continue;
				rep_ep->nunits = n;
				for (k = 0; k < n; k++) {
					gu[k].nver = rep_ep->units[k].nver;
					gu[k].group = -1;
				}
				gp.seed ^= S.states * 0x9e3779b97f4a7c15ULL;
				rc.epoch = e;
				gen_run(gu, n, &gp, rec_crash_cb, &rc);
			}
		}
	}
	simpm_undo_to(&S.undo, S.scratch, 0);
	so_crash_reset(&S.org);
	simpm_cur = &S.pm;
	S.cs_ep = NULL;
	S.cs_norg = 0;
	S.state_bad = was_bad;
}

/* ---------------------------------------------------------------------- */
/* Crash points                                                           */

struct point_ctx {
	const struct simpm_epoch *ep;
	u32 n;
	struct gen_unit *gu;
	u32 norg;
	struct gen_unit ou[256];
	u32 osec[256];
	const u8 *fixed_pm;	/* while enumerating origin subsets */
	const u8 *fixed_org;	/* while enumerating PM subsets */
	u8 *pm_all, *org_none, *org_all;
};

static void pm_cb(const u8 *a, void *arg)
{
	struct point_ctx *pc = arg;
	u64 h = fnv(a, pc->n, 0xcbf29ce484222325ULL);

	if (pc->norg)
		h = fnv(pc->fixed_org, pc->norg, h);
	if (seen_state(&S.seen_op, h))
		return;
	check_state(pc->ep, a, pc->norg, pc->osec, pc->fixed_org);
}

static void org_cb(const u8 *ao, void *arg)
{
	struct point_ctx *pc = arg;
	u64 h = fnv(pc->fixed_pm, pc->n, 0xcbf29ce484222325ULL);

	h = fnv(ao, pc->norg, h);
	if (seen_state(&S.seen_op, h))
		return;
	check_state(pc->ep, pc->fixed_pm, pc->norg, pc->osec, ao);
}

static void adopt_crash(const struct simpm_epoch *ep, u32 norg,
			const u32 *osec, const struct gen_unit *ou);

/*
 * A crash point of the live run: the live media (fenced) and origin media,
 * plus pending PM units and unflushed origin writes.
 */
void crash_point(const char *kind)
{
	struct point_ctx pc;
	const struct fr_geometry *g = &S.c.geo;
	struct gen_params gp = S.gp;
	u32 i;

	S.points++;
	S.op_points++;
	S.point_kind = kind;
	memset(&pc, 0, sizeof(pc));
	pc.ep = &S.pm.ep;
	pc.n = S.pm.ep.nunits;
	pc.norg = so_units(&S.org, pc.ou, pc.osec, 256);

	if (S.crash_target && S.op_points == S.crash_target) {
		adopt_crash(pc.ep, pc.norg, pc.osec, pc.ou);
		return;	/* not reached */
	}

	pc.gu = xmalloc((pc.n + 1) * sizeof(*pc.gu));
	for (i = 0; i < pc.n; i++) {
		const struct simpm_unit *u = &pc.ep->units[i];

		pc.gu[i].nver = u->nver;
		pc.gu[i].group = u->kind == SIMPM_WORD ? -1 :
			(int32_t)((simpm_unit_off(u) - g->data_offset) / SECT);
	}
	pc.pm_all = xcalloc(pc.n + 1, 1);
	pc.org_none = xcalloc(pc.norg + 1, 1);
	pc.org_all = xcalloc(pc.norg + 1, 1);
	for (i = 0; i < pc.n; i++)
		pc.pm_all[i] = pc.gu[i].nver;
	for (i = 0; i < pc.norg; i++)
		pc.org_all[i] = pc.ou[i].nver;

	seen_reset(&S.seen_op);
	S.attach_fresh = true;
	gp.seed ^= S.points * 0x9e3779b97f4a7c15ULL;
	/* PM subsets, with the unflushed origin writes all lost / all kept */
	pc.fixed_org = pc.org_none;
	gen_run(pc.gu, pc.n, &gp, pm_cb, &pc);
	if (pc.norg) {
		pc.fixed_org = pc.org_all;
		gen_run(pc.gu, pc.n, &gp, pm_cb, &pc);
		/* origin subsets, with PM as fenced / with everything pending */
		pc.fixed_pm = pc.pm_all;
		gen_run(pc.ou, pc.norg, &gp, org_cb, &pc);
		if (pc.n) {
			memset(pc.pm_all, 0, pc.n);
			gen_run(pc.ou, pc.norg, &gp, org_cb, &pc);
		}
	}
	free(pc.gu);
	free(pc.pm_all);
	free(pc.org_none);
	free(pc.org_all);
}

static void live_fence_hook(struct simpm *pm, void *arg)
{
	(void)pm;
	(void)arg;
	crash_point(S.collect_rec_hashes ? "a fence inside recovery" :
		    "a PM fence");
}

/* Crash for real (random runs): keep one crash state and go on from it. */
static void adopt_crash(const struct simpm_epoch *ep, u32 norg,
			const u32 *osec, const struct gen_unit *ou)
{
	u64 rng = S.crash_seed;
	u32 i;

	for (i = 0; i < ep->nunits; i++)
		if (gen_rand(&rng) & 1)
			simpm_apply_unit(S.scratch, ep, &ep->units[i],
					 (u32)(gen_rand(&rng) % ep->units[i].nver),
					 NULL);
	for (i = 0; i < norg; i++)
		if (gen_rand(&rng) & 1)
			so_crash_pick(&S.org, osec[i],
				      so_version_entry(&S.org, osec[i],
					(u32)(gen_rand(&rng) % ou[i].nver)));
	so_crash_adopt(&S.org);
	memcpy(S.pm_media, S.scratch, S.pm_bytes);
	memcpy(S.pm_view, S.scratch, S.pm_bytes);
	simpm_reset_pending(&S.pm);
	longjmp(S.crash_jb, 1);
}

/* ---------------------------------------------------------------------- */
/* Origin I/O for writeback: struct fr_wb_ops on the simulated origin    */

struct wbctx {
	struct { u64 sector; u32 nr; u32 at; } st[1024];
	u32 nst, used;
	u8 *buf;
	u32 cap_sectors;
	const struct op *inj;		/* writes to run inside the batch */
	bool staged_in_lock;		/* a stage since the last ops->lock */
	bool inj_done;			/* INJ_BETWEEN: the writes have run */
};

static struct wbctx wb_batch, wb_clean;
static struct fr_wb_snap *wb_snaps;
/* A forced writeback's own snapshots: with --wb-race it runs inside a batch. */
static struct fr_wb_snap *wb_clean_snaps;
#define CLEAN_BATCH	4

static void exec_write(u64 sector, u32 nr);

/*
 * Slot locks. S.locked[slot] is LOCK_OPS while writeback holds it through
 * ops->lock, LOCK_CALLER while the simulator holds it around a core call
 * (as the kernel's bio path holds its stripes); S.exclusive while the
 * simulator has the whole cache (recovery).
 */
enum { LOCK_NONE, LOCK_OPS, LOCK_CALLER };

/* The caller's locks for [sector, sector + nr): every slot it maps to. */
static void lock_range(u64 sector, u64 nr)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 k, end = sector + nr;

	if (end > g->origin_sectors)
		end = g->origin_sectors;
	for (k = sector >> g->chunk_shift; k << g->chunk_shift < end; k++) {
		u64 s = from_slot(fr_slot_of(g, to_ochunk(k)));

		if (S.locked[s] == LOCK_OPS)
			violation("slot %llu locked by the caller while writeback holds it",
				  (unsigned long long)s);
		S.locked[s] = LOCK_CALLER;
	}
}

static void unlock_range(u64 sector, u64 nr)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 k, end = sector + nr;

	if (end > g->origin_sectors)
		end = g->origin_sectors;
	for (k = sector >> g->chunk_shift; k << g->chunk_shift < end; k++)
		S.locked[from_slot(fr_slot_of(g, to_ochunk(k)))] = LOCK_NONE;
}

/* Invariant 6: a store to a slot's tags or data needs that slot's lock. */
static void live_store_hook(struct simpm *pm, u64 off, size_t len, void *arg)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 cb = (u64)g->chunk_sectors * SECT, p, first, last;

	(void)pm;
	(void)arg;
	if (S.exclusive)
		return;
	S.lock_checks++;
	if (off < g->tags_offset) {
		violation("PM store to the superblock (+%llu) outside format and recovery",
			  (unsigned long long)off);
		return;
	}
	if (off < g->data_offset) {
		first = (off - g->tags_offset) / sizeof(struct fr_tag_disk);
		last = (off + len - 1 - g->tags_offset) /
		       sizeof(struct fr_tag_disk);
	} else {
		first = (off - g->data_offset) / cb;
		last = (off + len - 1 - g->data_offset) / cb;
	}
	for (p = first; p <= last && p < g->nr_chunks; p++) {
		if (!S.locked[p / 2]) {
			violation("PM store to %s of chunk %llu without the lock of slot %llu",
				  off < g->data_offset ? "the tag" : "the data",
				  (unsigned long long)p,
				  (unsigned long long)(p / 2));
			return;
		}
	}
}

static void wb_lock(void *ctx, fr_slot_t slot)
{
	((struct wbctx *)ctx)->staged_in_lock = false;
	if (S.locked[from_slot(slot)]) {
		violation("slot %llu locked twice", (unsigned long long)from_slot(slot));
		return;
	}
	S.locked[from_slot(slot)] = LOCK_OPS;
}

static void run_injected(struct wbctx *w, u8 at);

static void wb_unlock(void *ctx, fr_slot_t slot)
{
	struct wbctx *w = ctx;

	if (S.locked[from_slot(slot)] != LOCK_OPS)
		violation("slot %llu unlocked but not locked",
			  (unsigned long long)from_slot(slot));
	S.locked[from_slot(slot)] = LOCK_NONE;
	/*
	 * INJ_BETWEEN: the writes run as soon as the batch has staged a
	 * chunk of the first injected write's slot, before it stages the
	 * next chunk (the slot's other chunk, often).
	 */
	if (w->inj && w->inj->inj_at == INJ_BETWEEN && !w->inj_done &&
	    w->staged_in_lock &&
	    from_slot(slot) == from_slot(fr_slot_of(&S.c.geo,
				fr_chunk_of_sector(&S.c.geo, w->inj->inj[0].sector)))) {
		w->inj_done = true;
		run_injected(w, INJ_BETWEEN);
	}
}

static int wb_stage(void *vctx, u64 sector, const void *pm_src, u32 nr)
{
	struct wbctx *w = vctx;
	const u8 *src = pm_src;

	if (S.fail == FAIL_STAGE && w == &wb_batch && !S.fail_done) {
		S.fail_done = true;
		return -EIO;
	}
	/*
	 * A media error on the first chunk staged (its first run: nothing of
	 * it is staged yet, so there is nothing to drop): the core must skip
	 * that chunk and leave it dirty.
	 */
	if (S.fail == FAIL_STAGE_POISON && w == &wb_batch && !S.fail_done) {
		S.fail_done = true;
		S.poisoned_chunk = (u64)(src - S.pm_view - S.c.geo.data_offset) /
				   ((u64)S.c.geo.chunk_sectors * SECT);
		S.poisoned_seq = le64_to_cpu(S.c.tags[S.poisoned_chunk].seq);
		return -EHWPOISON;
	}
	if (src < S.pm_view || src + (size_t)nr * SECT > S.pm_view + S.pm_bytes ||
	    sector + nr > S.c.geo.origin_sectors || w->nst == ARRAY_LEN(w->st) ||
	    w->used + nr > w->cap_sectors) {
		violation("bad stage: sector %llu + %u", (unsigned long long)sector, nr);
		return -EINVAL;
	}
	memcpy(w->buf + (size_t)w->used * SECT, src, (size_t)nr * SECT);
	w->staged_in_lock = true;
	w->st[w->nst].sector = sector;
	w->st[w->nst].nr = nr;
	w->st[w->nst].at = w->used;
	w->nst++;
	w->used += nr;
	mark_range(sector, nr);
	return 0;
}

static void run_injected(struct wbctx *w, u8 at)
{
	u32 i;

	if (!w->inj || w->inj->inj_at != at)
		return;
	for (i = 0; i < S.c.geo.nr_slots; i++)
		if (S.locked[i])
			violation("writeback ran ops with slot %u locked", i);
	for (i = 0; i < w->inj->ninj; i++)
		exec_write(w->inj->inj[i].sector, w->inj->inj[i].nr);
}

/*
 * Two staged extents that overlap: the kernel submits them as separate bios,
 * in flight together, and the device may apply them in either order.
 */
static void check_overlap(const struct wbctx *w)
{
	u32 i, j;

	for (i = 0; i < w->nst; i++)
		for (j = i + 1; j < w->nst; j++)
			if (w->st[i].sector < w->st[j].sector + w->st[j].nr &&
			    w->st[j].sector < w->st[i].sector + w->st[i].nr) {
				violation("one submit writes sectors %llu+%u and %llu+%u, which overlap: their order on the origin is undefined",
					  (unsigned long long)w->st[i].sector, w->st[i].nr,
					  (unsigned long long)w->st[j].sector, w->st[j].nr);
				return;
			}
}

static int wb_submit(void *vctx)
{
	struct wbctx *w = vctx;
	u32 i;

	run_injected(w, INJ_STAGED);
	check_overlap(w);
	if (S.fail == FAIL_SUBMIT && w == &wb_batch && !S.fail_done) {
		S.fail_done = true;
		w->nst = 0;
		w->used = 0;
		return -EIO;
	}
	for (i = 0; i < w->nst; i++)
		so_write(&S.org, w->st[i].sector, w->buf + (size_t)w->st[i].at * SECT,
			 w->st[i].nr);
	w->nst = 0;
	w->used = 0;
	run_injected(w, INJ_SUBMITTED);
	return 0;
}

static int wb_flush(void *vctx)
{
	crash_point("origin written, not yet flushed");
	if (S.fail == FAIL_FLUSH && vctx == &wb_batch && !S.fail_done) {
		/* The writes stay in the origin's cache, not durable. */
		S.fail_done = true;
		S.origin_unflushed_ok = true;
		return -EIO;
	}
	so_flush(&S.org);
	S.origin_unflushed_ok = false;
	return 0;
}

static const struct fr_wb_ops wb_ops = {
	.lock = wb_lock,
	.unlock = wb_unlock,
	.stage = wb_stage,
	.submit = wb_submit,
	.flush = wb_flush,
};

/* ---------------------------------------------------------------------- */
/* Operations                                                             */

struct payload_ctx {
	u32 id;
	u64 lba;
	u8 *buf;
};

static void payload_write(void *arg, void *pm_dst, u32 nr)
{
	struct payload_ctx *pc = arg;

	fill_pattern(pc->buf, pc->id, pc->lba, nr);
	fr_pm_copy(pm_dst, pc->buf, (size_t)nr * SECT);
	pc->lba += nr;
}

static void payload_copy(void *arg, void *pm_dst, u32 nr)
{
	struct payload_ctx *pc = arg;

	fr_pm_copy(pm_dst, pc->buf, (size_t)nr * SECT);
}

static u8 *payload_buf;

/* Which Figure 3 case each chunk of the write meets (coverage only). */
static void classify_write(u64 sector, u32 nr)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 first = sector >> g->chunk_shift, last = (sector + nr - 1) >> g->chunk_shift, k;

	if (first != last)
		S.fig3[F_MULTI]++;
	if ((sector | nr) & (g->chunk_sectors - 1))
		S.fig3[F_PARTIAL]++;
	for (k = first; k <= last; k++) {
		u64 s = from_slot(fr_slot_of(g, to_ochunk(k)));
		u64 c0 = le64_to_cpu(S.c.tags[2 * s].commit);
		u64 c1 = le64_to_cpu(S.c.tags[2 * s + 1].commit);
		bool v0 = c0 & FR_TAG_VALID, v1 = c1 & FR_TAG_VALID;
		bool h0 = v0 && fr_commit_key(c0) == k, h1 = v1 && fr_commit_key(c1) == k;

		if (!v0 && !v1) {
			S.fig3[F_1]++;
		} else if (!v0 || !v1) {
			S.fig3[(h0 || h1) ? F_2_1 : F_2_2]++;
		} else if (h0 || h1) {
			u64 mine = h0 ? c0 : c1, other = h0 ? c1 : c0;
			bool dirty = other & FR_TAG_DIRTY;

			if (mine & FR_TAG_NEW)
				S.fig3[dirty ? F_3_2_DIRTY : F_3_2_CLEAN]++;
			else
				S.fig3[dirty ? F_3_1_DIRTY : F_3_1_CLEAN]++;
		} else {
			bool dirty = (c0 & FR_TAG_DIRTY) && (c1 & FR_TAG_DIRTY);

			S.fig3[dirty ? F_3_3_DIRTY : F_3_3_CLEAN]++;
		}
	}
}

/*
 * Writes that met FR_NEED_CLEAN while a writeback batch was between staging
 * and flushing. The caller must not clean (write a chunk to the origin) then:
 * the batch could submit stale data it staged after the newer copy was
 * cleaned and displaced. So, as the kernel's writers must, they wait for the
 * batch (here: they run when fr_writeback() returns). --wb-race lifts that
 * rule to show what goes wrong without it.
 */
static struct { u32 id; u64 sector; u32 nr; } deferred[MAX_INJ];
static u32 ndeferred;
static bool in_batch;

/* Returns false if the write was deferred. */
static bool write_loop(u32 id, u64 sector, u32 nr)
{
	struct fr_write_result res;
	u32 tries = 0;
	u64 cursor;
	int r;

	for (;;) {
		struct payload_ctx pc = { id, sector, payload_buf };

		if (in_batch && ndeferred && !S.wb_race)
			return false;	/* keep the writes in order */
		lock_range(sector, nr);
		r = fr_write(&S.c, sector, nr, payload_write, &pc, &res);
		unlock_range(sector, nr);
		if (r != FR_NEED_CLEAN)
			break;
		S.fig3[F_NEED_CLEAN]++;
		if (!test_bit(from_pchunk(res.victim), S.c.dirty_bits))
			violation("FR_NEED_CLEAN names a victim that is not dirty (chunk %llu)",
				  (unsigned long long)from_pchunk(res.victim));
		if (in_batch && !S.wb_race)
			return false;
		/*
		 * As the kernel does (fr_writeback_from): a batch of up to
		 * CLEAN_BATCH dirty chunks starting at the victim, with no
		 * slot lock held, then fr_write again.
		 */
		cursor = from_pchunk(res.victim);
		r = fr_writeback(&S.c, &cursor, CLEAN_BATCH, wb_clean_snaps,
				 &wb_ops, &wb_clean);
		if (r <= 0) {
			violation("writeback from victim %llu cleaned nothing: %d",
				  (unsigned long long)from_pchunk(res.victim), r);
			break;
		}
		if (++tries > 2 * S.c.geo.chunk_sectors + 4) {
			violation("fr_write keeps asking for cleaning (livelock)");
			break;
		}
	}
	if (r)
		violation("fr_write(%llu, %u) failed: %d", (unsigned long long)sector,
			  nr, r);
	return true;
}

/*
 * FAIL_PM_READ: make the first held sector of the cached copy of the first
 * chunk that the write does not cover unreadable, so that fr_write() fails
 * copying it. Returns false if the write reads nothing from PM.
 */
static bool poison_cached_copy(u64 sector, u32 nr)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 key = sector >> g->chunk_shift, first = key << g->chunk_shift;
	u64 end = sector + nr, i;
	struct fr_hit hit;

	if (!fr_lookup(&S.c, to_ochunk(key), &hit))
		return false;
	for (i = 0; i < g->chunk_sectors; i++) {
		u64 lba = first + i;

		if ((hit.sectors >> i & 1) && (lba < sector || lba >= end)) {
			S.pm.poison_off = (u64)((const u8 *)hit.data - S.pm_view) +
					  i * SECT;
			S.pm.poison_len = SECT;
			return true;
		}
	}
	return false;
}

static void exec_write(u64 sector, u32 nr)
{
	u32 id = new_op(OP_WRITE, sector, nr), prev = S.inflight;
	bool poisoned = false;

	classify_write(sector, nr);
	mark_range(sector, nr);
	S.inflight = id;
	if (S.fail == FAIL_PM_READ && !S.fail_done)
		poisoned = poison_cached_copy(sector, nr);
	if (poisoned) {
		struct fr_write_result res;
		struct payload_ctx pc = { id, sector, payload_buf };
		int r;

		lock_range(sector, nr);
		r = fr_write(&S.c, sector, nr, payload_write, &pc, &res);
		unlock_range(sector, nr);
		S.pm.poison_len = 0;
		S.fail_done = true;
		if (r == -EIO) {
			/* Not acknowledged: it must read as never written. */
			S.ops[id].status = ST_LOST;
			S.fig3[F_ERRORS]++;
		} else if (r == FR_NEED_CLEAN) {
			S.ops[id].status = ST_LOST;	/* not attempted */
		} else {
			violation("fr_write with an unreadable cached copy returned %d, not -EIO", r);
			ack_write(id);
		}
	} else if (write_loop(id, sector, nr)) {
		ack_write(id);
	} else {
		S.fig3[F_WAITED]++;
		deferred[ndeferred].id = id;
		deferred[ndeferred].sector = sector;
		deferred[ndeferred].nr = nr;
		ndeferred++;
	}
	S.inflight = prev;
}

/* The writes that waited for the batch, in order. */
static void run_deferred(void)
{
	u32 i;

	for (i = 0; i < ndeferred; i++) {
		S.inflight = deferred[i].id;
		write_loop(deferred[i].id, deferred[i].sector, deferred[i].nr);
		ack_write(deferred[i].id);
		S.inflight = 0;
	}
	ndeferred = 0;
}

static void exec_fill(u64 key)
{
	const struct fr_geometry *g = &S.c.geo;
	struct payload_ctx pc = { 0, 0, payload_buf };
	struct fr_hit hit;
	u64 first = key << g->chunk_shift, mask;
	u32 i;
	int r;

	if (key >= g->origin_chunks)
		return;
	mark_key(key);
	if (fr_lookup(&S.c, to_ochunk(key), &hit)) {
		S.fig3[F_FILL_SKIPPED]++;	/* a read hit: nothing to fill */
		return;
	}
	/*
	 * Clean data must be durable on the origin: after a failed flush the
	 * origin's cache may hold sectors of this chunk, so no fill then.
	 */
	for (i = 0; i < S.org.ncache; i++)
		if (S.org.cache[i].sector >> g->chunk_shift == key) {
			S.fig3[F_FILL_SKIPPED]++;
			return;
		}
	/* A read miss: read the chunk from the origin, install it clean. */
	mask = fr_chunk_mask(g, to_ochunk(key));
	memcpy(payload_buf, S.org.view + first * SECT,
	       (size_t)hweight64(mask) * SECT);
	lock_range(first, 1);
	r = fr_fill(&S.c, to_ochunk(key), payload_copy, &pc);
	unlock_range(first, 1);
	if (r < 0)
		violation("fr_fill(%llu) failed: %d", (unsigned long long)key, r);
	S.fig3[r == 1 ? F_FILL : F_FILL_SKIPPED]++;
}

/*
 * The target passes a discard on to the origin once PM's copies are
 * dropped, and the discarded sectors may then read as anything: modelled as
 * the image's data (which a discarded sector may hold). It is flushed at
 * once, as every op leaves the origin (the kernel's discard is not ordered
 * with a flush, but nothing PM holds depends on it). A clean copy on PM
 * that still holds other data for those sectors breaks invariant 5.
 */
static void discard_origin(u64 sector, u32 nr)
{
	u8 buf[SECT];
	u64 s;

	for (s = sector; s < sector + nr && s < S.cfg->origin_sectors; s++) {
		fill_pattern(buf, 1, s, 1);
		so_write(&S.org, s, buf, 1);
	}
	so_flush(&S.org);
}

static void exec_discard(u64 sector, u32 nr)
{
	u32 id = new_op(OP_DISCARD, sector, nr);

	mark_range(sector, nr);
	S.inflight = id;
	lock_range(sector, nr);
	S.fig3[F_DISCARD_DROP] += fr_discard(&S.c, sector, nr);
	unlock_range(sector, nr);
	ack_discard(id);
	S.inflight = 0;
	discard_origin(sector, nr);
}

static void exec_wb(const struct op *op)
{
	int r;

	u64 dirty = fr_count_dirty(&S.c);

	wb_batch.inj = op->ninj ? op : NULL;
	wb_batch.inj_done = false;
	in_batch = true;
	if (op->sweep) {
		u64 before = S.cursor;

		r = fr_writeback_sweep(&S.c, &S.cursor, op->max, wb_snaps,
				       &wb_ops, &wb_batch);
		/* The flush's loop ends only because every call moves it on. */
		if (r >= 0 && S.cursor <= before &&
		    S.cursor != S.c.geo.nr_chunks)
			violation("a sweep batch left the cursor at %llu (from %llu)",
				  (unsigned long long)S.cursor,
				  (unsigned long long)before);
		if (S.cursor >= S.c.geo.nr_chunks)
			S.cursor = 0;	/* the next flush starts again */
	} else {
		r = fr_writeback(&S.c, &S.cursor, op->max, wb_snaps, &wb_ops,
				 &wb_batch);
	}
	in_batch = false;
	wb_batch.inj = NULL;
	wb_batch.nst = wb_batch.used = 0;
	if (S.fail_done && S.fail == FAIL_STAGE_POISON) {
		/* that chunk skipped and left dirty; the rest as usual */
		S.fig3[F_ERRORS]++;
		if (r < 0)
			violation("fr_writeback failed (%d) on an unreadable chunk instead of skipping it", r);
		/*
		 * Still the copy that could not be read, yet clean? (A write
		 * injected after the stage may have replaced it, legitimately.)
		 */
		else if (!test_bit(S.poisoned_chunk, S.db) &&
			 test_bit(S.poisoned_chunk, S.vb) &&
			 le64_to_cpu(S.c.tags[S.poisoned_chunk].seq) == S.poisoned_seq)
			violation("chunk %llu, whose PM data could not be read, was made clean",
				  (unsigned long long)S.poisoned_chunk);
		else if (!op->ninj && fr_count_dirty(&S.c) != dirty - (u64)r)
			violation("fr_writeback cleaned %d chunks but dirty went from %llu to %llu",
				  r, (unsigned long long)dirty,
				  (unsigned long long)fr_count_dirty(&S.c));
		else
			S.fig3[F_WB_CLEANED] += (u64)r;
	} else if (S.fail_done) {
		/* an origin or PM error: reported, and nothing made clean */
		S.fig3[F_ERRORS]++;
		if (r != -EIO)
			violation("fr_writeback returned %d after an I/O error, not -EIO", r);
		if (!op->ninj && fr_count_dirty(&S.c) != dirty)
			violation("fr_writeback cleaned chunks despite an I/O error");
	} else if (r < 0) {
		violation("fr_writeback failed: %d", r);
	} else {
		S.fig3[F_WB_CLEANED] += (u64)r;
	}
	run_deferred();
	S.fig3[F_WB_KEPT_DIRTY] += fr_count_dirty(&S.c);
}

static void exec_recover(void)
{
	struct fr_recovery_report rep;
	const char *why = NULL;
	u64 h;
	u32 i;
	int r;

	/*
	 * A restart. If a failed operation left stores unfenced, a clean
	 * shutdown writes them back first (crashes before that were checked
	 * at the end of the operations since).
	 */
	if (S.pm.ep.nunits) {
		S.pm.on_fence = NULL;
		fr_pm_fence();
		S.pm.on_fence = live_fence_hook;
	}
	S.collect_rec_hashes = true;
	S.nrec_hashes = 0;
	memset(S.vb, 0, S.nlongs * sizeof(long));
	memset(S.db, 0, S.nlongs * sizeof(long));
	S.exclusive = true;
	r = fr_cache_attach(&S.c, S.pm_view, S.pm_bytes, S.vb, S.db, &why);
	if (!r)
		r = fr_recover(&S.c, FR_RECOVER_APPLY, S.groups,
			       ARRAY_LEN(S.groups), &rep, &why);
	S.exclusive = false;
	S.collect_rec_hashes = false;
	if (r) {
		violation("recovery failed: %d (%s)", r, why ? why : "");
		return;
	}
	h = fnv(S.pm_view + S.c.geo.tags_offset, S.tags_bytes,
		0xcbf29ce484222325ULL);
	for (i = 0; i < S.nrec_hashes; i++)
		if (S.rec_hashes[i] != h) {
			violation("a crash inside recovery, then recovery, gives other tags than the uninterrupted recovery");
			break;
		}
}

static void exec_xregion(u64 sector, u32 nr)
{
	struct fr_write_result res;
	struct payload_ctx pc = { 0, sector, payload_buf };
	u64 stores = S.pm.stores;
	int r = fr_write(&S.c, sector, nr, payload_write, &pc, &res);

	if (r != -EINVAL)
		violation("a write crossing a region returned %d, not -EINVAL", r);
	if (S.pm.stores != stores)
		violation("a refused write crossing a region stored to PM");
	S.fig3[F_XREGION]++;
}

static void describe_op(const struct op *op, char *b, size_t len)
{
	size_t o = 0;
	u32 i;

	switch (op->type) {
	case OP_WRITE:
		o = snprintf(b, len, "write %llu+%u", (unsigned long long)op->sector, op->nr);
		break;
	case OP_FILL:
		o = snprintf(b, len, "fill key %llu", (unsigned long long)op->key);
		break;
	case OP_DISCARD:
		o = snprintf(b, len, "discard %llu+%u", (unsigned long long)op->sector, op->nr);
		break;
	case OP_WB:
		o = snprintf(b, len, "%s max %u",
			     op->sweep ? "sweep" : "writeback", op->max);
		if (op->ninj)
			o += snprintf(b + o, len - o, " {%s:",
				      op->inj_at == INJ_STAGED ? "after stage" :
				      op->inj_at == INJ_BETWEEN ? "between stages" :
				      "after submit");
		for (i = 0; i < op->ninj && o < len; i++)
			o += snprintf(b + o, len - o, " write %llu+%u",
				      (unsigned long long)op->inj[i].sector,
				      op->inj[i].nr);
		if (op->ninj && o < len)
			o += snprintf(b + o, len - o, "}");
		break;
	case OP_RECOVER:
		o = snprintf(b, len, "restart+recover");
		break;
	case OP_XREGION:
		o = snprintf(b, len, "write %llu+%u across regions (refused)",
			     (unsigned long long)op->sector, op->nr);
		break;
	default:
		o = snprintf(b, len, "?");
	}
	if (op->fail && o < len)
		o += snprintf(b + o, len - o, " [%s fails]",
			      op->fail == FAIL_PM_READ ? "PM read" :
			      op->fail == FAIL_STAGE ? "stage" :
			      op->fail == FAIL_STAGE_POISON ? "PM read in stage" :
			      op->fail == FAIL_SUBMIT ? "origin write" :
			      "origin flush");
	if (op->crash_sel && o < len)
		snprintf(b + o, len - o, " [crash at point %llu]",
			 (unsigned long long)(1 + op->crash_sel % 6));
}

/* Resolve the op that was in flight at a real crash, by reading it. */
static void resolve_inflight(void)
{
	struct oprec *r;
	u64 s, nw = 0, no = 0;

	if (!S.inflight)
		return;
	r = &S.ops[S.inflight];
	if (r->type == OP_DISCARD) {
		ack_discard(S.inflight);
	} else {
		for (s = r->sector; s < r->sector + r->nr; s++) {
			struct fr_hit hit;
			u64 key = s >> S.c.geo.chunk_shift;
			u32 i = (u32)(s - (key << S.c.geo.chunk_shift));
			const u8 *src;

			if (fr_lookup(&S.c, to_ochunk(key), &hit) &&
			    (hit.sectors >> i & 1))
				src = (const u8 *)hit.data + (size_t)i * SECT;
			else
				src = S.org.media + s * SECT;
			if (sector_op(src, s) == S.inflight)
				nw++;
			else
				no++;
		}
		if (nw && no)
			violation("write in flight at the crash is torn after recovery");
		if (nw)
			ack_write(S.inflight);
		else
			r->status = ST_LOST;
	}
	S.inflight = 0;
}

static void live_check(void)
{
	bool was = S.state_bad;

	S.state_bad = false;
	if (S.org.ncache && !S.origin_unflushed_ok)
		violation("an operation left %u origin writes unflushed", S.org.ncache);
	check_cache(&S.c, true);
	S.state_bad = was;
}

static void end_of_op(const char *what)
{
	bool was = S.state_bad;

	S.state_bad = false;
	/*
	 * (An operation that failed owes no durability; stores left unfenced
	 * by a failed one stay pending until some later fence.)
	 */
	if (S.pm.ep.nunits && !S.fail_done && !S.pending_at_start)
		violation("%s returned with %u PM units not fenced", what,
			  S.pm.ep.nunits);
	S.state_bad = was;
	S.quiescent = true;
	crash_point(what);
	S.quiescent = false;
	live_check();
	cfg_seen_seq();
}

static void exec_op(const struct op *op)
{
	switch (op->type) {
	case OP_WRITE:
		exec_write(op->sector, op->nr);
		break;
	case OP_FILL:
		exec_fill(op->key);
		break;
	case OP_DISCARD:
		exec_discard(op->sector, op->nr);
		break;
	case OP_WB:
		exec_wb(op);
		break;
	case OP_RECOVER:
		exec_recover();
		break;
	case OP_XREGION:
		exec_xregion(op->sector, op->nr);
		break;
	}
}

static void run_op(const struct op *op)
{
	char d[LOG_LEN];
	u32 i;

	describe_op(op, d, sizeof(d));
	log_op("%s", d);
	if (S.verbose > 1)
		printf("  op: %s\n", d);
	opkeys_reset();
	if (op->type == OP_FILL)
		mark_key(op->key);
	else if (op->type != OP_WB && op->type != OP_RECOVER)
		mark_range(op->sector, op->nr);
	for (i = 0; i < op->ninj; i++)
		mark_range(op->inj[i].sector, op->inj[i].nr);
	S.op_points = 0;
	S.pending_at_start = S.pm.ep.nunits != 0;
	S.fail = op->fail;
	S.fail_done = false;
	S.crash_target = op->crash_sel ? 1 + op->crash_sel % 6 : 0;
	S.crash_seed = op->crash_sel;
	if (!setjmp(S.crash_jb)) {
		exec_op(op);
		if (S.crash_target > S.op_points)
			S.crash_target = S.op_points + 1;	/* at the end */
		end_of_op("the end of the operation");
		S.crash_target = 0;
		S.fail = FAIL_NONE;
		return;
	}
	S.fail = FAIL_NONE;
	S.pm.poison_len = 0;
	/* A real crash happened at crash_target: restart and recover. */
	S.crash_target = 0;
	memset(S.locked, 0, S.c.geo.nr_slots);
	S.exclusive = false;
	wb_batch.nst = wb_batch.used = 0;
	wb_clean.nst = wb_clean.used = 0;
	wb_batch.inj = NULL;
	in_batch = false;
	ndeferred = 0;	/* they never started: absent */
	log_op("CRASH; restart+recover");
	opkeys_reset();
	if (S.inflight)
		mark_range(S.ops[S.inflight].sector, S.ops[S.inflight].nr);
	S.op_points = 0;
	exec_recover();
	resolve_inflight();
	end_of_op("the end of recovery");
}

/* ---------------------------------------------------------------------- */
/* Worlds                                                                 */

static void world_free(void)
{
	if (!S.cfg)
		return;
	simpm_free(&S.pm);
	simpm_free(&S.spm);
	so_free(&S.org);
	free(S.pm_view);
	free(S.pm_media);
	free(S.scratch);
	free(S.vb);
	free(S.db);
	free(S.cvb);
	free(S.cdb);
	free(S.cur);
	free(S.freed);
	free(S.keystamp);
	free(S.opkeys);
	free(S.locked);
	free(S.tags_ref);
	free(wb_batch.buf);
	free(wb_clean.buf);
	free(wb_snaps);
	free(wb_clean_snaps);
	free(payload_buf);
	S.cfg = NULL;
}

static void world_setup(const struct cfg *cfg)
{
	struct fr_format_params p;
	struct fr_geometry g;
	const char *why = NULL;
	u64 pm, s;
	int r;

	world_free();
	S.cfg = cfg;
	/* Nothing of the last run carries over (it may have stopped anywhere). */
	S.exclusive = false;
	S.fail = FAIL_NONE;
	S.state_bad = false;
	memset(&p, 0, sizeof(p));
	p.chunk_sectors = cfg->chunk_sectors;
	p.region_chunks = cfg->region;
	p.stride_slots = cfg->stride;
	p.origin_sectors = cfg->origin_sectors;
	p.format_time = 1;
	memcpy(p.uuid, "crashsim-uuid-01", 16);
	strcpy(p.origin_id, "crashsim-origin");
	/* The smallest PM size whose layout has exactly cfg->chunks chunks. */
	for (pm = fr_layout_bytes(cfg->chunk_sectors, cfg->chunks);;
	     pm += 4096) {
		r = fr_geometry_layout(&g, pm, &p, &why);
		if (!r && g.nr_chunks == cfg->chunks)
			break;
		if ((!r && g.nr_chunks > cfg->chunks) ||
		    pm > fr_layout_bytes(cfg->chunk_sectors, cfg->chunks) +
			 (1 << 20)) {
			fprintf(stderr, "crashsim: no PM size gives %u chunks (%s)\n",
				cfg->chunks, r ? why : "");
			exit(2);
		}
	}
	S.pm_bytes = pm;
	S.pm_view = xcalloc(pm, 1);
	S.pm_media = xcalloc(pm, 1);
	S.scratch = xcalloc(pm, 1);
	simpm_init(&S.pm, S.pm_view, S.pm_media, pm, g.data_offset);
	S.pm.mirror = S.scratch;
	S.pm.record = true;
	simpm_init(&S.spm, S.scratch, NULL, pm, g.data_offset);
	S.nlongs = BITS_TO_LONGS(cfg->chunks);
	S.vb = xcalloc(S.nlongs, sizeof(long));
	S.db = xcalloc(S.nlongs, sizeof(long));
	S.cvb = xcalloc(2 * S.nlongs, sizeof(long));
	S.cdb = xcalloc(2 * S.nlongs, sizeof(long));
	simpm_cur = &S.pm;
	S.pm.on_fence = NULL;
	r = fr_format(&S.c, S.pm_view, pm, &p, S.vb, S.db, &why);
	if (r) {
		fprintf(stderr, "crashsim: fr_format: %s\n", why);
		exit(2);
	}
	memcpy(S.pm_media, S.pm_view, pm);
	memcpy(S.scratch, S.pm_view, pm);
	simpm_reset_pending(&S.pm);
	S.pm.on_fence = live_fence_hook;
	S.pm.on_store = live_store_hook;
	/* The first write's seq is seq_base + 1 (fr_write increments first). */
	atomic64_set(&S.c.next_seq, (s64)cfg->seq_base);

	so_init(&S.org, cfg->origin_sectors);
	for (s = 0; s < cfg->origin_sectors; s++)
		fill_pattern(S.org.media + s * SECT, 1, s, 1);
	memcpy(S.org.view, S.org.media, cfg->origin_sectors * SECT);

	S.cur = xmalloc(cfg->origin_sectors * sizeof(*S.cur));
	for (s = 0; s < cfg->origin_sectors; s++)
		S.cur[s] = 1;
	S.freed = xcalloc(cfg->origin_sectors, 1);
	S.nops = 0;
	new_op(OP_WRITE, 0, (u32)cfg->origin_sectors);
	S.ops[1].status = ST_ACKED;
	S.keystamp = xcalloc(S.c.geo.origin_chunks, sizeof(u32));
	S.opkeys = xcalloc(S.c.geo.origin_chunks + 1, sizeof(u64));
	S.locked = xcalloc(S.c.geo.nr_slots, 1);
	S.tags_bytes = S.c.geo.nr_chunks * sizeof(struct fr_tag_disk);
	S.tags_ref = xmalloc(S.tags_bytes);
	wb_batch.cap_sectors = (u32)(S.c.geo.nr_chunks * S.c.geo.chunk_sectors);
	wb_batch.buf = xmalloc((size_t)wb_batch.cap_sectors * SECT);
	wb_clean.cap_sectors = wb_batch.cap_sectors;
	wb_clean.buf = xmalloc((size_t)wb_clean.cap_sectors * SECT);
	wb_snaps = xcalloc(S.c.geo.nr_chunks + 1, sizeof(*wb_snaps));
	wb_clean_snaps = xcalloc(CLEAN_BATCH, sizeof(*wb_clean_snaps));
	payload_buf = xmalloc((size_t)S.c.geo.chunk_sectors * SECT *
			      (S.c.geo.region_chunks + 1));
	S.cursor = 0;
	S.inflight = 0;
	S.nlog = 0;
}

static void snap_take(struct snap *sn)
{
	u64 os = S.cfg->origin_sectors;

	if (!sn->pm_view) {
		sn->pm_view = xmalloc(S.pm_bytes);
		sn->pm_media = xmalloc(S.pm_bytes);
		sn->org_media = xmalloc(os * SECT);
		sn->cur = xmalloc(os * sizeof(u32));
		sn->freed = xmalloc(os);
		sn->vb = xmalloc(S.nlongs * sizeof(long));
		sn->db = xmalloc(S.nlongs * sizeof(long));
		sn->log = xmalloc(sizeof(*sn->log) * LOG_MAX);
	}
	memcpy(sn->pm_view, S.pm_view, S.pm_bytes);
	memcpy(sn->pm_media, S.pm_media, S.pm_bytes);
	memcpy(sn->org_media, S.org.media, os * SECT);
	memcpy(sn->cur, S.cur, os * sizeof(u32));
	memcpy(sn->freed, S.freed, os);
	memcpy(sn->vb, S.vb, S.nlongs * sizeof(long));
	memcpy(sn->db, S.db, S.nlongs * sizeof(long));
	free(sn->ops);
	sn->ops = xmalloc((S.nops + 1) * sizeof(*sn->ops));
	memcpy(sn->ops, S.ops, (S.nops + 1) * sizeof(*sn->ops));
	sn->nops = S.nops;
	sn->nlog = S.nlog;
	memcpy(sn->log, S.log, sizeof(*sn->log) * S.nlog);
	sn->cursor = S.cursor;
	sn->next_seq = atomic64_read(&S.c.next_seq);
	simpm_epoch_copy(&sn->pending, &S.pm.ep);
	free(sn->ocache);
	sn->ocache = xmalloc((S.org.ncache + 1) * sizeof(*sn->ocache));
	if (S.org.ncache)
		memcpy(sn->ocache, S.org.cache,
		       S.org.ncache * sizeof(*sn->ocache));
	sn->nocache = S.org.ncache;
	sn->origin_unflushed_ok = S.origin_unflushed_ok;
}

static void snap_restore(const struct snap *sn)
{
	u64 os = S.cfg->origin_sectors;
	u32 u;

	memcpy(S.pm_view, sn->pm_view, S.pm_bytes);
	memcpy(S.pm_media, sn->pm_media, S.pm_bytes);
	memcpy(S.scratch, sn->pm_media, S.pm_bytes);
	memcpy(S.org.media, sn->org_media, os * SECT);
	memcpy(S.org.view, sn->org_media, os * SECT);
	S.org.ncache = 0;
	for (u = 0; u < sn->nocache; u++)	/* replay the unflushed writes */
		so_write(&S.org, sn->ocache[u].sector, sn->ocache[u].data, 1);
	S.origin_unflushed_ok = sn->origin_unflushed_ok;
	memcpy(S.cur, sn->cur, os * sizeof(u32));
	memcpy(S.freed, sn->freed, os);
	memcpy(S.vb, sn->vb, S.nlongs * sizeof(long));
	memcpy(S.db, sn->db, S.nlongs * sizeof(long));
	memcpy(S.ops, sn->ops, (sn->nops + 1) * sizeof(*sn->ops));
	S.nops = sn->nops;
	S.nlog = sn->nlog;
	memcpy(S.log, sn->log, sizeof(*sn->log) * sn->nlog);
	S.cursor = sn->cursor;
	atomic64_set(&S.c.next_seq, sn->next_seq);
	simpm_set_pending(&S.pm, &sn->pending);
	S.inflight = 0;
}

static void snap_free(struct snap *sn)
{
	free(sn->pm_view);
	free(sn->pm_media);
	free(sn->org_media);
	free(sn->cur);
	free(sn->freed);
	free(sn->vb);
	free(sn->db);
	free(sn->ops);
	free(sn->log);
	free(sn->ocache);
	simpm_epoch_free(&sn->pending);
	memset(sn, 0, sizeof(*sn));
}

/* ---------------------------------------------------------------------- */
/* Workloads                                                              */

#define SEQ_2_32 (1ULL << 32)
#define SEQ_2_63 (1ULL << 63)
#define SEQ_2_64 0ULL		/* (2^64, as a u64) */

static const struct cfg cfgs[] = {
	/* 4 slots, regions of 2, default stride 3; origin 4x, short last chunk */
	{ "p8-r2", 8, 2, 0, 16 * 8 - 3, 8, 0 },
	/* 8 slots, regions of 4, default stride 5 */
	{ "p16-r4", 16, 4, 0, 40 * 8 - 1, 8, 0 },
	/* 2 slots, single-chunk regions */
	{ "p4-r1", 4, 1, 1, 10 * 8, 8, 0 },
	/* 8 slots, stride = region: regions tile the slots */
	{ "p16-r2-s2", 16, 2, 2, 48 * 8, 8, 0 },
	/*
	 * The other chunk sizes, each with seqs from just below a power of
	 * two that a truncating or sign-extending bug would trip on: 64
	 * sectors (a full chunk's mask is all 64 bits), from 2^32; 16 sectors,
	 * through 2^63; 32 sectors, up to 2^64 - 2^16 + a few hundred.
	 */
	{ "p8-r2-c64-seq2^32", 8, 2, 0, 16 * 64 - 3, 64, SEQ_2_32 - 4 },
	{ "p8-r2-c16-seq2^63", 8, 2, 0, 16 * 16 - 5, 16, SEQ_2_63 - 4 },
	{ "p8-r4-c32-seq2^64", 8, 4, 0, 16 * 32 - 1, 32, SEQ_2_64 - (1ULL << 16) },
};

_Static_assert(ARRAY_LEN(cfgs) <= MAX_CFGS, "raise MAX_CFGS");

static u32 cfg_index(void)
{
	return (u32)(S.cfg - cfgs);
}

#define MAX_ALPHA 28
#define MAX_SCEN 8

struct workload {
	struct op alpha[MAX_ALPHA];
	u32 nalpha;
	struct { const char *name; struct op ops[4]; u32 n; } scen[MAX_SCEN];
	u32 nscen;
};

static struct op mk_write(u64 sector, u32 nr)
{
	return (struct op){ .type = OP_WRITE, .sector = sector, .nr = nr };
}

/* Keys that collide with key 0 in its slot, and the alphabet around them. */
static void build_workload(struct workload *w)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 cs = g->chunk_sectors, R = g->region_chunks, k, K = 0, L = 0, M = 0;
	u64 lastk = g->origin_chunks - 1;
	struct op o;

	memset(w, 0, sizeof(*w));
	for (k = 1; k < g->origin_chunks; k++)
		if (from_slot(fr_slot_of(g, to_ochunk(k))) ==
		    from_slot(fr_slot_of(g, to_ochunk(K)))) {
			if (!L)
				L = k;
			else if (!M) {
				M = k;
				break;
			}
		}
#define A(x) (w->alpha[w->nalpha++] = (x))
	A(mk_write(K * cs, (u32)cs));			/* K full */
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
	o = (struct op){ .type = OP_WB, .max = (u32)g->nr_chunks };
	A(o);
	o.max = 1;
	A(o);
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
	 * (FR_NEED_CLEAN) and displaced before the batch submits the stale
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
	/* the short last chunk, whole */
	A(mk_write(lastk * cs, (u32)(g->origin_sectors - lastk * cs)));
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
		if (R >= 2) {
			u64 base = L & ~(R - 1);
			struct op wm = mk_write(base * cs, (u32)(2 * cs));

			SC("group over L's region, K partial", wm, wkp);
		}
	}
#undef SC
}

static struct snap snaps[8];
static u64 dfs_ops;

/* Enough violations: a mutant run stops after the op that was caught. */
static bool stop_now(void)
{
	return S.max_violations && S.violating_states >= S.max_violations;
}

static void dfs(const struct workload *w, u32 depth, u32 maxdepth)
{
	u32 i;

	snap_take(&snaps[depth]);
	for (i = 0; i < w->nalpha && !stop_now(); i++) {
		snap_restore(&snaps[depth]);
		run_op(&w->alpha[i]);
		dfs_ops++;
		if (depth + 1 < maxdepth)
			dfs(w, depth + 1, maxdepth);
	}
}

static void run_exhaustive(u32 depth, u32 shallow, u32 cfgmask, u32 deepmask)
{
	struct workload w;
	u32 ci, si, i;
	char phase[128];

	for (ci = 0; ci < ARRAY_LEN(cfgs) && !stop_now(); ci++) {
		if (!(cfgmask >> ci & 1))
			continue;
		for (i = 0; i < ARRAY_LEN(snaps); i++)
			snap_free(&snaps[i]);
		world_setup(&cfgs[ci]);
		build_workload(&w);
		for (si = 0; si < w.nscen && !stop_now(); si++) {
			u64 st0 = S.states, v0 = S.violating_states, op0 = dfs_ops;
			clock_t t0 = clock();

			world_setup(&cfgs[ci]);
			snprintf(phase, sizeof(phase), "exhaustive, start state \"%s\"",
				 w.scen[si].name);
			S.phase = phase;
			for (i = 0; i < w.scen[si].n; i++)
				run_op(&w.scen[si].ops[i]);
			dfs(&w, 0, deepmask >> ci & 1 ? depth : shallow);
			if (S.verbose)
				printf("exhaustive %-10s %-34s depth %u: %6llu op runs, %8llu crash states, %llu violations (%.1fs)\n",
				       cfgs[ci].name, w.scen[si].name,
				       deepmask >> ci & 1 ? depth : shallow,
				       (unsigned long long)(dfs_ops - op0),
				       (unsigned long long)(S.states - st0),
				       (unsigned long long)(S.violating_states - v0),
				       (double)(clock() - t0) / CLOCKS_PER_SEC);
			fflush(stdout);
		}
	}
	for (i = 0; i < ARRAY_LEN(snaps); i++)
		snap_free(&snaps[i]);
}

static struct op random_op(u64 *rng)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 cs = g->chunk_sectors, R = g->region_chunks, oc = g->origin_chunks;
	u64 r = gen_rand(rng) % 100, k, k2, s, e;
	struct op o;

	memset(&o, 0, sizeof(o));
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
	} else if (r < 52) {
		o.type = OP_FILL;
		o.key = k;
	} else if (r < 59) {
		o.type = OP_DISCARD;
		o.sector = k * cs + (gen_rand(rng) & 1 ? 0 : gen_rand(rng) % cs);
		if (o.sector >= g->origin_sectors)
			o.sector = g->origin_sectors - 1;
		o.nr = (u32)(1 + gen_rand(rng) % (3 * cs));
		if (o.sector + o.nr > g->origin_sectors)
			o.nr = (u32)(g->origin_sectors - o.sector);
	} else if (r < 80) {
		o.type = OP_WB;
		o.max = (u32)(gen_rand(rng) & 1 ? g->nr_chunks :
			      1 + gen_rand(rng) % 3);
		/* No rng draw of its own: the seeds' op streams stay. */
		o.sweep = o.max == 2;
		if (gen_rand(rng) % 3 == 0) {
			u32 i;

			o.inj_at = (u8)(INJ_STAGED + gen_rand(rng) % 3);
			o.ninj = (u8)(1 + gen_rand(rng) % MAX_INJ);
			for (i = 0; i < o.ninj; i++) {
				struct op x = random_op(rng);

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
		o.fail = (u8)(FAIL_STAGE + gen_rand(rng) % 4);
	if (o.type == OP_WRITE && gen_rand(rng) % 8 == 0)
		o.fail = FAIL_PM_READ;
	return o;
}

static void run_random(u64 seed, u32 iterations, u32 nops, u32 cfgmask)
{
	char phase[128];
	u32 it, i, ci = ARRAY_LEN(cfgs) - 1;

	for (it = 0; it < iterations && !stop_now(); it++) {
		u64 rng = seed + it * 0x9e3779b97f4a7c15ULL;

		do
			ci = (ci + 1) % ARRAY_LEN(cfgs);
		while (!(cfgmask >> ci & 1));
		world_setup(&cfgs[ci]);
		snprintf(phase, sizeof(phase),
			 "random: --seed %llu iteration %u (--ops %u)",
			 (unsigned long long)seed, it, nops);
		S.phase = phase;
		for (i = 0; i < nops && !stop_now(); i++) {
			struct op o = random_op(&rng);

			run_op(&o);
		}
	}
}

/* ---------------------------------------------------------------------- */
/* Main                                                                   */

static const char *const fig3_names[F_NR] = {
	[F_1] = "case1", [F_2_1] = "2-1", [F_2_2] = "2-2",
	[F_3_1_CLEAN] = "3-1/clean", [F_3_1_DIRTY] = "3-1/dirty",
	[F_3_2_CLEAN] = "3-2/clean", [F_3_2_DIRTY] = "3-2/dirty",
	[F_3_3_CLEAN] = "3-3/clean", [F_3_3_DIRTY] = "3-3/dirty",
	[F_MULTI] = "multi-chunk", [F_PARTIAL] = "partial",
	[F_NEED_CLEAN] = "need-clean", [F_FILL] = "fill",
	[F_FILL_SKIPPED] = "fill-skipped", [F_DISCARD_DROP] = "discard-drops",
	[F_WB_CLEANED] = "wb-cleaned", [F_WB_KEPT_DIRTY] = "wb-left-dirty",
	[F_XREGION] = "xregion-refused", [F_RECOVERY_STORES] = "recoveries-with-work",
	[F_GROUP_BACK] = "groups-rolled-back", [F_GROUP_FWD] = "groups-rolled-forward",
	[F_WAITED] = "writes-waited-for-batch", [F_ERRORS] = "io-errors",
};

static const char *const mut_names[FR_MUT_COUNT] = {
	[FR_MUT_NONE] = "NONE",
	[FR_MUT_NO_DATA_FENCE] = "NO_DATA_FENCE",
	[FR_MUT_COMMIT_BEFORE_DATA] = "COMMIT_BEFORE_DATA",
	[FR_MUT_INVALIDATE_OLD_FIRST] = "INVALIDATE_OLD_FIRST",
	[FR_MUT_KEEP_NEW_FLAG] = "KEEP_NEW_FLAG",
	[FR_MUT_IN_PLACE] = "IN_PLACE",
	[FR_MUT_CLEAN_BEFORE_FLUSH] = "CLEAN_BEFORE_FLUSH",
	[FR_MUT_NO_GROUP_FLAG] = "NO_GROUP_FLAG",
	[FR_MUT_EVICT_NO_FENCE] = "EVICT_NO_FENCE",
	[FR_MUT_RECOVER_FORWARD] = "RECOVER_FORWARD",
	[FR_MUT_MASK_64] = "MASK_64",
	[FR_MUT_CLEAR_IGNORES_SEQ] = "CLEAR_IGNORES_SEQ",
	[FR_MUT_GROUP_SEQ_U32] = "GROUP_SEQ_U32",
	[FR_MUT_CLEAR_UNLOCKED] = "CLEAR_UNLOCKED",
	[FR_MUT_POISON_CLEANS] = "POISON_CLEANS",
	[FR_MUT_STAGE_BOTH_COPIES] = "STAGE_BOTH_COPIES",
	[FR_MUT_DISCARD_KEEPS_CLEAN] = "DISCARD_KEEPS_CLEAN",
	[FR_MUT_SWEEP_WRAPS] = "SWEEP_WRAPS",
};

static void usage(void)
{
	fprintf(stderr,
		"usage: crashsim [options]\n"
		"  --quick            the check-host budget (default)\n"
		"  --full             deeper: depth 3 in config 0 (--deep 15: all), 2 in\n"
		"                     the others, more random runs, subsets of 2 units\n"
		"  --seed N           seed of the random sequences and subsets (default: time)\n"
		"  --iterations N     random sequences (per configuration round)\n"
		"  --ops N            operations per random sequence\n"
		"  --depth N          exhaustive sequence length after each start state\n"
		"  --no-exhaustive    skip the exhaustive sequences\n"
		"  --no-random        skip the random sequences\n"
		"  --configs MASK     bit i: run configuration i (default: all)\n"
		"  --deep MASK        configurations searched to --depth, others to 1 (default 1)\n"
		"  --mutant N|all     run deliberately broken variants (crashsim-mut only)\n"
		"  --print N          print the first N violations (default 3)\n"
		"  --wb-race          let writers clean chunks while a writeback batch is\n"
		"                     between stage and flush (expected to fail)\n"
		"  -v                 per-phase statistics (-vv: every op)\n");
	exit(16);
}

static void reset_counters(void)
{
	S.states = S.points = S.violations = S.violating_states = 0;
	S.lock_checks = 0;
	memset(cfg_seen, 0, sizeof(cfg_seen));
	S.first_violation[0] = 0;
	memset(S.fig3, 0, sizeof(S.fig3));
	dfs_ops = 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "full", no_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "ops", required_argument, NULL, 'o' },
		{ "depth", required_argument, NULL, 'd' },
		{ "no-exhaustive", no_argument, NULL, 'E' },
		{ "no-random", no_argument, NULL, 'R' },
		{ "configs", required_argument, NULL, 'c' },
		{ "deep", required_argument, NULL, 'D' },
		{ "mutant", required_argument, NULL, 'm' },
		{ "print", required_argument, NULL, 'p' },
		{ "wb-race", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	u64 seed = (u64)time(NULL);
	u32 iterations = 8, nops = 40, depth = 2, shallow = 1, cfgmask = ~0U,
	    deepmask = 1;
	bool exhaustive = true, random_runs = true, full = false;
	int mutant = -1, c;
	clock_t t0 = clock();
	u32 i;

	S.gp = (struct gen_params){ .exh_words = 12, .exh = 9, .ksub = 1, .randn = 4,
				    .line_detail = true };
	S.rgp = (struct gen_params){ .exh_words = 12, .exh = 12, .ksub = 2,
				     .randn = 8 };
	S.print_violations = 3;
	S.seen_op.gen = S.seen_rec.gen = 1;
	while ((c = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
		switch (c) {
		case 'q':
			break;
		case 'f':
			full = true;
			depth = 3;
			shallow = 2;
			deepmask = 1;
			iterations = 48;
			nops = 60;
			S.gp = (struct gen_params){ .exh_words = 12, .exh = 11, .ksub = 2,
						    .randn = 16, .line_detail = true };
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'i':
			iterations = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'o':
			nops = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'd':
			depth = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'E':
			exhaustive = false;
			break;
		case 'R':
			random_runs = false;
			break;
		case 'c':
			cfgmask = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'D':
			deepmask = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			mutant = strcmp(optarg, "all") ? atoi(optarg) : 0;
			break;
		case 'p':
			S.print_violations = atoi(optarg);
			break;
		case 'W':
			S.wb_race = true;
			break;
		case 'v':
			S.verbose++;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || depth > ARRAY_LEN(snaps) - 1)
		usage();
	S.log = xcalloc(LOG_MAX, sizeof(*S.log));
	S.gp.seed = seed;
	S.rgp.seed = seed ^ 0x5eed;

	if (mutant >= 0 && !crashsim_core_mutable) {
		fprintf(stderr, "crashsim: this core has no broken variants; use crashsim-mut\n");
		return 16;
	}
	if (mutant >= 0) {
		/*
		 * Every broken variant must be caught: a short exhaustive run
		 * and a few random sequences each, stopped at the end of the op
		 * that showed the first violation.
		 */
		int m, from = mutant ? mutant : 1, to = mutant ? mutant : FR_MUT_COUNT - 1;
		u32 survived = 0, caught = 0;

		S.print_violations = 0;
		S.max_violations = 1;
		for (m = from; m <= to; m++) {
			clock_t tm = clock();

			fr_mutation = (enum fr_mutation)m;
			reset_counters();
			run_exhaustive(1, 1, cfgmask, 0);
			if (!S.violating_states)
				run_random(seed, 6, 30, cfgmask);
			if (S.violating_states) {
				caught++;
				printf("PASS mutant %s caught: %s%llu violations in %llu crash states (%.1fs); first:\n  %s",
				       mut_names[m] ? mut_names[m] : "?",
				       stop_now() ? ">= " : "",
				       (unsigned long long)S.violating_states,
				       (unsigned long long)S.states,
				       (double)(clock() - tm) / CLOCKS_PER_SEC,
				       S.first_violation);
			} else {
				survived++;
				printf("FAIL mutant %s survived %llu crash states (seed %llu)\n",
				       mut_names[m] ? mut_names[m] : "?",
				       (unsigned long long)S.states,
				       (unsigned long long)seed);
			}
			fflush(stdout);
		}
		fr_mutation = FR_MUT_NONE;
		world_free();
		printf("%u mutants caught, %u survived\n", caught, survived);
		return survived ? 1 : 0;
	}

	reset_counters();
	printf("crashsim: seed %llu (rerun with --seed %llu%s)\n",
	       (unsigned long long)seed, (unsigned long long)seed,
	       full ? " --full" : "");
	if (exhaustive) {
		clock_t te = clock();
		u64 st = S.states;

		run_exhaustive(depth, shallow, cfgmask, deepmask);
		printf("exhaustive: every sequence of <= %u ops (<= %u in configs outside %#x) after each start state: %llu op runs, %llu crash states (%.1fs)\n",
		       depth, shallow, deepmask, (unsigned long long)dfs_ops,
		       (unsigned long long)(S.states - st),
		       (double)(clock() - te) / CLOCKS_PER_SEC);
	}
	if (random_runs) {
		clock_t tr = clock();
		u64 st = S.states;

		run_random(seed, iterations, nops, cfgmask);
		printf("random: %u sequences of %u ops: %llu crash states (%.1fs)\n",
		       iterations, nops, (unsigned long long)(S.states - st),
		       (double)(clock() - tr) / CLOCKS_PER_SEC);
	}
	printf("coverage:");
	for (i = 0; i < F_NR; i++)
		printf(" %s=%llu", fig3_names[i], (unsigned long long)S.fig3[i]);
	printf("\n");
	for (i = 0; i < ARRAY_LEN(cfgs); i++)
		if (cfg_seen[i].used)
			printf("geometry %-18s %2u-sector chunks, %2u slots, regions of %u: %8llu crash states, next_seq %#llx..%#llx\n",
			       cfgs[i].name, cfgs[i].chunk_sectors,
			       cfgs[i].chunks / 2, cfgs[i].region,
			       (unsigned long long)cfg_seen[i].states,
			       (unsigned long long)cfg_seen[i].seq_lo,
			       (unsigned long long)cfg_seen[i].seq_hi);
	printf("lock check: %llu PM stores outside recovery checked for their slot's lock\n",
	       (unsigned long long)S.lock_checks);
	printf("%llu crash points, %.1fs\n", (unsigned long long)S.points,
	       (double)(clock() - t0) / CLOCKS_PER_SEC);
	world_free();
	if (S.violating_states && S.print_violations == 0)
		printf("first violation: %s", S.first_violation);
	printf("%llu crash states explored, %llu violations\n",
	       (unsigned long long)S.states,
	       (unsigned long long)S.violating_states);
	return S.violating_states ? 1 : 0;
}
