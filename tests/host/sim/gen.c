// SPDX-License-Identifier: GPL-2.0-only
/* Crash-state enumeration at one crash point; see gen.h. */
#include <stdlib.h>
#include <string.h>
#include "gen.h"
#include "simpm.h"

/* Phase B tears single cache lines up to this many data lines pending. */
#define GEN_LINE_DETAIL_MAX 256

/* An item: units that reach the media together (a word, a sector, a line). */
struct items {
	u32 n;
	u32 *start;		/* n + 1 offsets into idx */
	u32 *idx;
};

static void items_build(struct items *it, const struct gen_unit *u, u32 n,
			bool words, bool groups, bool lines)
{
	u32 i, j, ni = 0, k = 0;
	int32_t *seen_group;
	u32 *gitem;

	it->start = xmalloc((n + 1) * sizeof(u32));
	it->idx = xmalloc((n ? n : 1) * sizeof(u32));
	/* Map group -> item, in first-appearance order. */
	seen_group = xmalloc((n ? n : 1) * sizeof(*seen_group));
	gitem = xmalloc((n ? n : 1) * sizeof(*gitem));
	for (i = 0; i < n; i++)
		seen_group[i] = -1;
	/* First pass: count members per item. */
	{
		u32 *cnt = xcalloc(n + 1, sizeof(u32));
		u32 *item_of = xmalloc((n ? n : 1) * sizeof(u32));
		u32 ng = 0;

		for (i = 0; i < n; i++) {
			item_of[i] = ~0U;
			if (u[i].group < 0) {
				if (words)
					item_of[i] = ni++;
			} else if (lines) {
				item_of[i] = ni++;
			} else if (groups) {
				for (j = 0; j < ng; j++)
					if (seen_group[j] == u[i].group)
						break;
				if (j == ng) {
					seen_group[ng] = u[i].group;
					gitem[ng++] = ni++;
				}
				item_of[i] = gitem[j];
			}
			if (item_of[i] != ~0U)
				cnt[item_of[i]]++;
		}
		it->start[0] = 0;
		for (j = 0; j < ni; j++)
			it->start[j + 1] = it->start[j] + cnt[j];
		memset(cnt, 0, (n + 1) * sizeof(u32));
		for (i = 0; i < n; i++)
			if (item_of[i] != ~0U) {
				j = item_of[i];
				it->idx[it->start[j] + cnt[j]++] = i;
			}
		k = ni;
		free(cnt);
		free(item_of);
	}
	it->n = k;
	free(seen_group);
	free(gitem);
}

static void items_free(struct items *it)
{
	free(it->start);
	free(it->idx);
}

static void item_set(u8 *a, const struct gen_unit *u, const struct items *it,
		     u32 i, bool on)
{
	u32 j;

	for (j = it->start[i]; j < it->start[i + 1]; j++)
		a[it->idx[j]] = on ? u[it->idx[j]].nver : 0;
}

/* Every subset/complement of size <= ksub, prefixes, suffixes, random. */
static void bounded(const struct gen_unit *u, u32 n, const struct items *it,
		    const u8 *base, const struct gen_params *p, u64 *rng,
		    u32 randn, gen_cb cb, void *ctx, u8 *a)
{
	u32 m = it->n, i, j, k, r;
	int comp;

	if (!m)
		return;
	for (comp = 0; comp < 2; comp++) {
		/* singles: flip one item of the all-off (all-on) set */
		memcpy(a, base, n);
		for (k = 0; k < m; k++)
			item_set(a, u, it, k, comp);
		for (i = 0; i < m; i++) {
			item_set(a, u, it, i, !comp);
			cb(a, ctx);
			item_set(a, u, it, i, comp);
		}
		if (p->ksub < 2 || m > 48)
			continue;
		for (i = 0; i < m; i++)
			for (j = i + 1; j < m; j++) {
				memcpy(a, base, n);
				for (k = 0; k < m; k++)
					item_set(a, u, it, k, comp);
				item_set(a, u, it, i, !comp);
				item_set(a, u, it, j, !comp);
				cb(a, ctx);
			}
		if (p->ksub < 3 || m > 16)
			continue;
		for (i = 0; i < m; i++)
			for (j = i + 1; j < m; j++)
				for (r = j + 1; r < m; r++) {
					memcpy(a, base, n);
					for (k = 0; k < m; k++)
						item_set(a, u, it, k, comp);
					item_set(a, u, it, i, !comp);
					item_set(a, u, it, j, !comp);
					item_set(a, u, it, r, !comp);
					cb(a, ctx);
				}
	}
	/* prefixes and suffixes in store order (grown one item at a time) */
	memcpy(a, base, n);
	for (k = 0; k < m; k++)
		item_set(a, u, it, k, false);
	for (i = 0; i <= m; i++) {
		cb(a, ctx);
		if (i < m)
			item_set(a, u, it, i, true);
	}
	memcpy(a, base, n);
	for (k = 0; k < m; k++)
		item_set(a, u, it, k, true);
	for (i = 0; i <= m; i++) {
		cb(a, ctx);
		if (i < m)
			item_set(a, u, it, i, false);
	}
	/* random subsets, random densities, random versions */
	for (r = 0; r < randn; r++) {
		u64 dens = gen_rand(rng) % 3;	/* 1/4, 1/2, 3/4 present */

		memcpy(a, base, n);
		for (k = 0; k < m; k++) {
			u64 x = gen_rand(rng) & 3;
			bool on = dens == 0 ? x == 0 : dens == 1 ? x < 2 : x < 3;

			for (j = it->start[k]; j < it->start[k + 1]; j++) {
				u32 ui = it->idx[j];

				a[ui] = on ? (u8)(1 + gen_rand(rng) % u[ui].nver) : 0;
			}
		}
		cb(a, ctx);
	}
}

void gen_run(const struct gen_unit *u, u32 n, const struct gen_params *p,
	     gen_cb cb, void *ctx)
{
	struct items w, g, all;
	u64 rng = p->seed, states = 1, limit = 1ULL << p->exh, s, t;
	u64 wlimit = 1ULL << (p->exh_words > p->exh ? p->exh_words : p->exh);
	u8 *a, *base;
	bool lines;
	u32 i, k;

	a = xcalloc(n + 1, 1);
	base = xcalloc(n + 1, 1);
	if (!n) {
		cb(a, ctx);
		goto out;
	}
	items_build(&w, u, n, true, false, false);
	items_build(&g, u, n, false, true, false);

	/*
	 * Phase A: word units exhaustively (with every version), and the data
	 * sectors too while the product stays under 2^exh (else all or none).
	 */
	for (i = 0; i < w.n && states <= wlimit; i++)
		states *= 1 + u[w.idx[w.start[i]]].nver;
	if (states <= wlimit) {
		bool groups_exh = g.n < 63 && states <= limit >> g.n;
		u64 gstates = groups_exh ? 1ULL << g.n : 2;

		for (s = 0; s < states; s++) {
			t = s;
			memset(a, 0, n);
			for (i = 0; i < w.n; i++) {
				u32 ui = w.idx[w.start[i]];

				a[ui] = (u8)(t % (1 + u[ui].nver));
				t /= 1 + u[ui].nver;
			}
			for (t = 0; t < gstates; t++) {
				for (k = 0; k < g.n; k++)
					item_set(a, u, &g, k, groups_exh ?
						 (t >> k) & 1 : t);
				cb(a, ctx);
			}
		}
	} else {
		/* too many words: bounded over words, data none or all */
		for (t = 0; t < 2; t++) {
			memset(base, 0, n);
			for (k = 0; k < g.n; k++)
				item_set(base, u, &g, k, t);
			bounded(u, n, &w, base, p, &rng, p->randn, cb, ctx, a);
		}
	}

	/*
	 * Phase B: tear the whole pending set in store order, at cache-line
	 * grain while there are few lines (a sector's pattern shows a torn
	 * sector whichever of its lines are missing), else at sector grain.
	 */
	for (i = 0, k = 0; i < n; i++)
		k += u[i].group >= 0;
	lines = p->line_detail && k <= GEN_LINE_DETAIL_MAX;
	memset(base, 0, n);
	items_build(&all, u, n, true, !lines, lines);
	bounded(u, n, &all, base, p, &rng, p->randn, cb, ctx, a);
	if (lines && g.n) {
		items_free(&all);
		items_build(&all, u, n, true, true, false);
		bounded(u, n, &all, base, p, &rng, p->randn / 2, cb, ctx, a);
	}
	items_free(&all);
	items_free(&w);
	items_free(&g);
out:
	free(a);
	free(base);
}
