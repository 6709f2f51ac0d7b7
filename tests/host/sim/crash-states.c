// SPDX-License-Identifier: GPL-2.0-only
/*
 * The crash simulator's crash points and the crash states each can leave.
 *
 * At a crash point of the live run (a PM fence, an origin submit before its
 * flush, the end of an op) the pending PM units and unflushed origin sectors
 * may or may not have reached the media: gen.c enumerates which did. Each
 * crash state is recovered on a scratch copy (fr_recover(APPLY) after a
 * fresh attach) and checked against the reference model (checkers.c); then
 * recovery itself is crashed at each of its fences, recovered again and
 * compared (invariant 4). A random run's crash is a real one: one state is
 * kept and the run goes on from it (adopt_crash).
 */
#include <setjmp.h>
#include <stdlib.h>
#include "crashsim.h"

/* ---------------------------------------------------------------------- */
/* Crash states                                                           */

u64 fnv(const void *p, size_t n, u64 h)
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
	struct fr_cache cc = { 0 };
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
	struct fr_cache cc = { 0 };
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

void live_fence_hook(struct simpm *pm, void *arg)
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
