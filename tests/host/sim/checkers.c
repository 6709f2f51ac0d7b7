// SPDX-License-Identifier: GPL-2.0-only
/*
 * The crash simulator's reference model and its checks (see crashsim.c for
 * the invariants).
 *
 * Every sector written carries a pattern that names the op that wrote it and
 * its LBA, so that what a read returns tells whose data it is. The reference
 * model records every op (acknowledged, lost, in flight), which op each
 * sector last acknowledged, and which sectors were discarded since; the
 * checks read a cache (recovered from a crash state, or live at the end of
 * an op) as the kernel would and compare every sector against it, with the
 * structure recovery must leave and clean == origin media. violation()
 * reports what failed, with the crash state that led there.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "crashsim.h"

/* ---------------------------------------------------------------------- */
/* Data patterns: word i of sector lba written by op x.                   */

static inline u64 pattern(u32 x, u64 lba, u32 i)
{
	return (u64)x << 40 | lba << 8 | i;
}

void fill_pattern(u8 *buf, u32 x, u64 lba, u32 nsect)
{
	u32 s, i;

	for (s = 0; s < nsect; s++) {
		u64 *w = (u64 *)(buf + (size_t)s * SECT);

		for (i = 0; i < SECT / 8; i++)
			w[i] = cpu_to_le64(pattern(x, lba + s, i));
	}
}

/* The op whose data a sector holds, or 0 if it is nobody's whole sector. */
u32 sector_op(const u8 *p, u64 lba)
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

u32 new_op(u8 type, u64 sector, u32 nr)
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

void ack_write(u32 id)
{
	struct oprec *r = &S.ops[id];
	u64 s;

	r->status = ST_ACKED;
	for (s = r->sector; s < r->sector + r->nr; s++) {
		S.cur[s] = id;
		S.freed[s] = 0;
	}
}

/*
 * A write around PM, acknowledged once its origin write is done: the writes
 * that began in its window and were acknowledged before it ran beside it,
 * and where they overlap the later-begun one wins (its copy on PM is newer
 * than the origin), which is one order two concurrent writes may take.
 */
void ack_write_around(u32 id)
{
	struct oprec *r = &S.ops[id];
	u64 s;

	r->status = ST_ACKED;
	for (s = r->sector; s < r->sector + r->nr; s++) {
		if (S.cur[s] > id)
			continue;
		S.cur[s] = id;
		S.freed[s] = 0;
	}
}

void ack_discard(u32 id)
{
	struct oprec *r = &S.ops[id];
	u64 s;

	r->status = ST_ACKED;
	for (s = r->sector; s < r->sector + r->nr && s < S.cfg->origin_sectors;
	     s++)
		S.freed[s] = 1;
}

void touch_key(u64 k)
{
	if (k >= S.org_chunks)
		return;
	if (S.keystamp[k] != S.stamp) {
		S.keystamp[k] = S.stamp;
		S.opkeys[S.nopkeys++] = k;
	}
}

void touch_range(u64 sector, u64 nr)
{
	u64 k;

	for (k = sector >> S.c.geo.chunk_shift;
	     nr && k <= (sector + nr - 1) >> S.c.geo.chunk_shift; k++)
		touch_key(k);
}

/* Keys a crash inside the coming op may affect: those on PM now, its own. */
void opkeys_reset(void)
{
	u64 p;

	S.stamp++;
	S.nopkeys = 0;
	for (p = 0; p < S.c.geo.nr_chunks; p++) {
		u64 cw = le64_to_cpu(S.c.tags[p].commit);

		if (cw & FR_TAG_VALID)
			touch_key(fr_commit_key(cw));
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

/*
 * Read every sector of key as the kernel will, and check it. A key past the
 * cache's end (a resize pending, or undone by a crash) reads from the
 * origin: what the cache no longer maps must be there.
 */
static void check_key(struct fr_cache *cc, u64 key, struct readtally *t)
{
	const struct fr_geometry *g = &cc->geo;
	u64 first = key << g->chunk_shift;
	struct fr_hit hit;
	bool h = key < g->origin_chunks && fr_lookup(cc, to_ochunk(key), &hit);
	u32 i;

	for (i = 0; i < g->chunk_sectors && first + i < S.cfg->origin_sectors;
	     i++) {
		bool pm;
		const u8 *src;

		pm = h && (hit.sectors >> i & 1);
		src = pm ? (const u8 *)hit.data + (size_t)i * SECT :
		      so_crash_sector(&S.org, first + i);
		check_sector(key, first + i, src, pm,
			     h ? from_pchunk(hit.pchunk) : 0, t);
	}
}

/*
 * Check a cache (freshly recovered, or live at the end of an op): the
 * structure recovery must leave, the reads, and clean == origin media.
 */
void check_cache(struct fr_cache *cc, bool all_keys)
{
	const struct fr_geometry *g = &cc->geo;
	struct readtally t = { 0, 0 };
	u64 p, o, k, nv = 0, nd = 0;
	u32 i, n;

	for (p = 0; p < g->nr_chunks; p++) {
		u64 cw = le64_to_cpu(cc->tags[p].commit);
		bool v = cw & FR_TAG_VALID, d = v && (cw & FR_TAG_DIRTY);

		if (v != test_bit(p, cc->valid_bits) ||
		    d != test_bit(p, cc->dirty_bits))
			violation("DRAM bitmaps disagree with tag %llu (%#llx)",
				  (unsigned long long)p, (unsigned long long)cw);
		nv += test_bit(p, cc->valid_bits);
		nd += test_bit(p, cc->dirty_bits);
		if (!v)
			continue;
		if (cw & FR_TAG_INCOMPLETE)
			violation("tag %llu still INCOMPLETE after recovery (%#llx)",
				  (unsigned long long)p, (unsigned long long)cw);
		for (o = p & ~(u64)(g->ways - 1); o < p; o++) {
			u64 ow = le64_to_cpu(cc->tags[o].commit);

			if ((ow & FR_TAG_VALID) &&
			    fr_commit_key(ow) == fr_commit_key(cw))
				violation("slot %llu holds key %llu twice",
					  (unsigned long long)(p >> g->ways_shift),
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
	if (fr_count_valid(cc) != nv || fr_count_dirty(cc) != nd)
		violation("counts disagree with the bitmaps: %llu valid (bits: %llu), %llu dirty (bits: %llu)",
			  (unsigned long long)fr_count_valid(cc),
			  (unsigned long long)nv,
			  (unsigned long long)fr_count_dirty(cc),
			  (unsigned long long)nd);

	/* Reads: the keys the op could touch, and every key now on PM. */
	if (all_keys) {
		for (k = 0; k < S.org_chunks; k++)
			check_key(cc, k, &t);
	} else {
		u32 base = S.nopkeys;

		for (p = 0; p < g->nr_chunks; p++) {
			u64 cw = le64_to_cpu(cc->tags[p].commit);

			if (cw & FR_TAG_VALID)
				touch_key(fr_commit_key(cw));
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
