// SPDX-License-Identifier: GPL-2.0-only
/*
 * The crash simulator's search. Exhaustive: every sequence of ops of the
 * alphabet (workloads.c) up to a depth, after each start state, depth first,
 * restoring a snapshot of the world between branches. Random: sequences of
 * random ops from a seed, across the geometries in turn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "crashsim.h"

/* ---------------------------------------------------------------------- */
/* Snapshots of the world, for the exhaustive search                     */

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
	sn->geo = S.c.geo;
	sn->next_seq = atomic64_read(&S.c.next_seq);
	sn->nr_valid = atomic64_read(&S.c.nr_valid);
	sn->nr_dirty = atomic64_read(&S.c.nr_dirty);
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
	S.c.geo = sn->geo;	/* (OP_RESIZE changes the length) */
	atomic64_set(&S.c.next_seq, sn->next_seq);
	atomic64_set(&S.c.nr_valid, sn->nr_valid);
	atomic64_set(&S.c.nr_dirty, sn->nr_dirty);
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
/* Exhaustive search                                                      */

static struct snap snaps[NR_SNAPS];
u64 dfs_ops;

/* Enough violations: a mutant run stops after the op that was caught. */
bool stop_now(void)
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

void run_exhaustive(u32 depth, u32 shallow, u32 cfgmask, u32 deepmask)
{
	struct workload w;
	u32 ci, si, i;
	char phase[128];

	for (ci = 0; ci < nr_cfgs && !stop_now(); ci++) {
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

/* ---------------------------------------------------------------------- */
/* Random runs                                                            */

void run_random(u64 seed, u32 iterations, u32 nops, u32 cfgmask)
{
	char phase[128];
	u32 it, i, ci = nr_cfgs - 1;

	for (it = 0; it < iterations && !stop_now(); it++) {
		u64 rng = seed + it * 0x9e3779b97f4a7c15ULL;

		do
			ci = (ci + 1) % nr_cfgs;
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
