/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The crash simulator's shared types, state and functions. Its files:
 *
 *   crashsim.c      the command line: options, the mutant runs, the summary
 *   glue-model.c    the kernel glue as a model: the ops (the write path with
 *                   its FR_WRITE_NEED_CLEAN retries, fills, discards, writeback
 *                   batches through struct fr_wb_ops with writes injected
 *                   between stage, submit and flush, restart + recovery),
 *                   the slot locks, and the world each geometry starts from
 *   checkers.c      the reference model (what each sector may read as) and
 *                   the checks of a cache against it; violation reports
 *   crash-states.c  the crash points, the crash states each can leave, their
 *                   recovery (and crashes inside that recovery)
 *   workloads.c     the geometries, the exhaustive alphabet and start
 *                   states, and the random op generator
 *   explore.c       the exhaustive search (with snapshots) and random runs
 */
#ifndef CRASHSIM_H
#define CRASHSIM_H

#include <setjmp.h>
#include <stdio.h>
#include "fr-core.h"
#include "gen.h"
#include "simpm.h"
#include "simorigin.h"

#define SECT 512
#define MAX_INJ 5
/* An injected op whose nr is this is a fill of key .sector (a read miss). */
#define INJ_FILL_NR	UINT32_MAX
#define LOG_MAX 256
#define LOG_LEN 96

enum op_type {
	OP_WRITE,
	OP_FILL,
	OP_DISCARD,
	OP_WB,
	OP_RECOVER,
	OP_XREGION,	/* a write crossing a region: must be refused */
	OP_CRASH,	/* pseudo-op: crash inside the next op, recover */
	OP_RESIZE,	/* fr_resize() to .sector sectors (a table reload) */
};

/*
 * Where writes are injected into a writeback batch (OP_WB), or writes and
 * batches (inj[i].nr == 0) into a write's victim writeback, between its
 * stage and its submit (OP_WRITE, INJ_VICTIM), or writes, batches and fills
 * into a write sent around PM, between fr_around_begin() and its origin
 * write (OP_WRITE with .around, INJ_AROUND).
 */
enum inj_at { INJ_NONE, INJ_STAGED, INJ_SUBMITTED, INJ_BETWEEN, INJ_VICTIM,
	      INJ_AROUND };

/* Error injection for one (top-level) operation. */
enum fail_at {
	FAIL_NONE,
	FAIL_PM_READ,	/* write: the cached copy's other sectors unreadable */
	FAIL_STAGE,	/* writeback: the first stage fails (-EIO) */
	FAIL_SUBMIT,	/* writeback: the origin refuses the writes */
	FAIL_FLUSH,	/* writeback: written, but the origin flush fails */
	FAIL_STAGE_POISON, /* writeback: the first chunk's PM data unreadable */
	FAIL_STAGE_LATE, /* writeback: the second chunk's stage fails (-EIO) */
};

struct op {
	u8 type;
	u8 fail;		/* enum fail_at */
	u8 inj_at;
	u8 ninj;
	u64 sector;
	u32 nr;
	u32 max;		/* OP_WB */
	u8 sweep;		/* OP_WB: a flush's batch, fr_writeback_sweep() */
	u8 full_slots;		/* OP_WB: fr_writeback_full_slots() */
	u8 around;		/* OP_WRITE: sent around PM (fr_around_begin) */
	u64 key;		/* OP_FILL */
	u64 crash_sel;		/* OP_CRASH: which crash point, which state */
	/* nr 0: a batch (INJ_VICTIM), from PM chunk sector if nonzero */
	struct { u64 sector; u32 nr; } inj[MAX_INJ];
	/*
	 * INJ_AROUND, bit i: inj[i] is a write sent around PM too (one of
	 * another key of the slot, which must wait for the first, 1.20).
	 */
	u8 inj_around;
};

enum op_status { ST_INFLIGHT, ST_ACKED, ST_LOST };

/* What the reference model knows of every operation (id 1: the image). */
struct oprec {
	u8 type;
	u8 status;
	u64 sector;
	u32 nr;
};

struct cfg {
	const char *name;
	u32 chunks;
	u32 region;
	u64 stride;		/* 0: default */
	u64 origin_sectors;
	u32 chunk_sectors;
	u64 seq_base;		/* next_seq after format */
	u32 bad_chunks;		/* bit i: PM chunk i is bad (struct fr_bad) */
	/*
	 * Nonzero: the PM is formatted for this many sectors of an origin
	 * of origin_sectors, and OP_RESIZE moves between the two lengths.
	 */
	u64 format_sectors;
	u32 ways;		/* chunks a slot; 0: a pair */
};

/* Everything an exhaustive search restores between branches. */
struct snap {
	u8 *pm_view, *pm_media, *org_media;
	u32 *cur;
	u8 *freed;
	struct oprec *ops;
	u32 nops, nlog;
	u64 cursor;
	struct fr_geometry geo;
	unsigned long *vb, *db;
	s64 next_seq, nr_valid, nr_dirty;
	char (*log)[LOG_LEN];
	struct simpm_epoch pending;	/* PM stores not fenced yet */
	struct so_write *ocache;	/* the origin's unflushed writes */
	u32 nocache;
	bool origin_unflushed_ok;
};

/* Write coverage: the Figure 3 case each chunk of a write met. */
enum fig3 {
	F_1, F_2_1, F_2_2, F_3_1_CLEAN, F_3_1_DIRTY, F_3_2_CLEAN, F_3_2_DIRTY,
	F_3_3_CLEAN, F_3_3_DIRTY, F_MULTI, F_PARTIAL, F_NEED_CLEAN, F_FILL,
	F_FILL_SKIPPED, F_DISCARD_DROP, F_WB_CLEANED, F_WB_KEPT_DIRTY,
	F_XREGION, F_RECOVERY_STORES, F_GROUP_BACK, F_GROUP_FWD, F_WAITED,
	F_ERRORS, F_RESIZED, F_RESIZE_REFUSED, F_AROUND, F_AROUND_REFUSED, F_NR
};

#define SEEN_CAP (1U << 15)
struct seen {
	u64 h[SEEN_CAP];
	u32 g[SEEN_CAP];	/* entry valid if g == gen */
	u32 gen, n;
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

struct sim {
	/* options */
	struct gen_params gp, rgp;	/* op crash points, recovery crash points */
	int verbose;
	u64 max_violations;
	int print_violations;
	bool wb_race;
	bool copy_stage;	/* stage copies, pins nothing (glue-model.c) */

	/* geometry and buffers */
	const struct cfg *cfg;
	u64 pm_bytes;
	u8 *pm_view, *pm_media, *scratch;
	struct simpm pm, spm;		/* the live PM; the crash scratch */
	struct simpm_undo undo;
	struct fr_cache c;
	unsigned long *vb, *db, *cvb, *cdb;
	unsigned long *pinned;		/* S.c.pinned: chunks writeback reads */
	unsigned long *pins_seen;	/* S.pinned when its slots were last locked */
	unsigned long *bad;		/* S.c.bad.chunks (cfg->bad_chunks) */
	u64 nlongs;
	struct simorigin org;
	u8 *locked;			/* per slot: who holds its lock */
	bool exclusive;			/* the whole cache (recovery) */
	u64 poisoned_chunk;		/* FAIL_STAGE_POISON: the chunk skipped */
	u64 poisoned_seq;		/* ... and its tag's seq then */
	u64 lock_checks;		/* PM stores whose slot lock was checked */

	/* reference model */
	u32 *cur;			/* per sector: op id last acknowledged */
	u8 *freed;			/* per sector: discarded since */
	struct oprec *ops;
	u32 nops, cap_ops;
	u32 inflight;			/* write/discard being executed */
	u64 cursor;			/* writeback cursor */

	u64 org_chunks;			/* chunks of the whole origin */

	/* keys to check at crash states of the current op */
	u32 *keystamp, stamp;
	u64 *opkeys;
	u32 nopkeys;

	/* log of operations, for reports */
	char (*log)[LOG_LEN];
	u32 nlog;
	const char *phase;		/* "exhaustive p8-r2 S2", "random #12" */

	/* crash-point bookkeeping */
	u64 op_points;			/* crash points in the current op */
	u64 crash_target;		/* 0: none; else crash at this op point */
	u64 crash_seed;
	jmp_buf crash_jb;
	bool quiescent;		/* crash point at the end of an op */
	u8 fail;		/* enum fail_at of the current op */
	bool pending_at_start;	/* unfenced stores left by a failed op */
	bool fail_done;		/* the injected error happened */
	bool origin_unflushed_ok;	/* a flush failed: the cache may hold data */
	const char *point_kind;
	u64 states, points, violations, violating_states;
	bool state_bad;
	char first_violation[4096];
	u64 fig3[F_NR];

	/* the crash state being checked, for reports */
	const struct simpm_epoch *cs_ep;
	const u8 *cs_assign;
	u32 cs_norg;
	const u32 *cs_org_sector;
	const u8 *cs_org_assign;
	int cs_rec_epoch;
	const struct simpm_epoch *cs_rec_ep;
	const u8 *cs_rec_assign;

	/* recovery crash points recorded while recovering a crash state */
	struct simpm_epoch *rec_eps;
	u32 nrec_eps, cap_rec_eps;
	u8 *tags_ref;
	u8 sb_ref[FR_SB_BYTES];
	struct fr_cache cache_ref;
	bool attach_fresh;
	u64 tags_bytes;
	/* OP_RECOVER: hashes of the states recovered from crashes inside it */
	u64 *rec_hashes;
	u32 nrec_hashes, cap_rec_hashes;
	bool collect_rec_hashes;

	/* scratch group tables for fr_recover */
	struct fr_group_scratch groups[64];

	/* dedupe of crash states at one crash point, and inside recovery */
	struct seen seen_op, seen_rec;

};

/* The simulator's state (glue-model.c); main() sets its options. */
extern struct sim S;

/* The geometries (workloads.c) and what each saw. */
#define MAX_CFGS 16
struct cfg_stats {
	u64 states, seq_lo, seq_hi;
	bool used;
};
extern const struct cfg cfgs[];
extern const u32 nr_cfgs;
extern struct cfg_stats cfg_seen[MAX_CFGS];
u32 cfg_index(void);
void cfg_seen_seq(void);

/* The exhaustive alphabet and start states of a geometry (workloads.c). */
#define MAX_ALPHA 48
#define MAX_SCEN 10

struct workload {
	struct op alpha[MAX_ALPHA];
	u32 nalpha;
	struct { const char *name; struct op ops[4]; u32 n; } scen[MAX_SCEN];
	u32 nscen;
};

void build_workload(struct workload *w);
struct op random_op(u64 *rng);

/* Reference model, checks and reports (checkers.c). */
void fill_pattern(u8 *buf, u32 x, u64 lba, u32 nsect);
u32 sector_op(const u8 *p, u64 lba);
u32 new_op(u8 type, u64 sector, u32 nr);
void ack_write(u32 id);
void ack_write_around(u32 id);
void ack_discard(u32 id);
void touch_key(u64 k);
void touch_range(u64 sector, u64 nr);
void opkeys_reset(void);
void check_cache(struct fr_cache *cc, bool all_keys);
void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_op(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Crash points and crash states (crash-states.c). */
u64 fnv(const void *p, size_t n, u64 h);
void crash_point(const char *kind);
void live_fence_hook(struct simpm *pm, void *arg);

/* The model of the kernel glue (glue-model.c). */
void world_setup(const struct cfg *cfg);
void world_free(void);
void run_op(const struct op *op);

/* The search (explore.c): snapshots, one per depth (--depth < NR_SNAPS). */
#define NR_SNAPS 8
extern u64 dfs_ops;
bool stop_now(void);
void run_exhaustive(u32 depth, u32 shallow, u32 cfgmask, u32 deepmask);
void run_random(u64 seed, u32 iterations, u32 nops, u32 cfgmask);

#endif /* CRASHSIM_H */
