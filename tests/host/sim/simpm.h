/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Simulated persistent memory for the host tests.
 *
 * The core reaches PM through fr_pm_store8/fr_pm_copy/fr_pm_fence/fr_pm_load8/
 * fr_pm_read (fr-pm.h); this file implements them on a "view" buffer (what the
 * CPU sees: the core also reads tags and data through plain pointers into it)
 * and records every store not yet fenced as pending. A crash leaves the
 * media (everything fenced) plus any subset of the pending stores.
 *
 * Pending stores are grouped in units, the grain at which they may reach the
 * media independently:
 *   - below data_off (superblock and tags): one 8-byte word per unit, the
 *     failure-atomic grain of fr_pm_store8;
 *   - from data_off on (chunk data): one 64-byte cache line per unit.
 * A unit written several times since the last fence keeps every version
 * (any one of them may be what reached the media).
 *
 * There is no locking: the simulator is single-threaded (on_store lets it
 * check that the core's caller holds the lock of the slot a store touches).
 */
#ifndef SIMPM_H
#define SIMPM_H

#include "fr-core.h"

#define SIMPM_LINE	64
#define SIMPM_LINE_WORDS (SIMPM_LINE / 8)
#define SIMPM_MAXV	6	/* versions kept per unit (first ones + last) */

enum simpm_kind { SIMPM_WORD, SIMPM_LINE_UNIT };

struct simpm_unit {
	u32 idx;		/* word index (SIMPM_WORD) or line index */
	u8 kind;
	u8 nver;
	u32 ver[SIMPM_MAXV];	/* offsets into the epoch's value pool */
};

/* The stores issued since the last fence, in store order. */
struct simpm_epoch {
	struct simpm_unit *units;
	u32 nunits, cap_units;
	u64 *vals;
	u32 nvals, cap_vals;
};

/* Undo log: old word values, to put a buffer back as it was. */
struct simpm_undo {
	struct { u32 word; u64 old; } *e;
	u32 n, cap;
};

struct simpm {
	u8 *view;
	u8 *media;		/* NULL: no separate media (scratch runs) */
	u8 *mirror;		/* optional second copy of the media */
	u64 size;
	u64 data_off;		/* words before it are tag/superblock units */
	bool record;		/* track pending units */
	struct simpm_undo *undo;	/* log every change of view, if set */
	struct simpm_epoch ep;
	int32_t *unit_of;	/* per word (below data_off) / line: unit index */
	/* Called by fr_pm_fence() before the pending stores become durable. */
	void (*on_fence)(struct simpm *pm, void *arg);
	void *on_fence_arg;
	/* Called by every store, with the PM offset and length it wrote. */
	void (*on_store)(struct simpm *pm, u64 off, size_t len, void *arg);
	void *on_store_arg;
	u64 fences, stores;
	/* Machine-check simulation: loads in [poison_off, +poison_len) fail. */
	u64 poison_off, poison_len;
	u64 poison_hits;	/* loads that failed so */
};

/* The PM the fr_pm_* functions act on. */
extern struct simpm *simpm_cur;

void simpm_init(struct simpm *pm, u8 *view, u8 *media, u64 size,
		u64 data_off);
void simpm_free(struct simpm *pm);
void simpm_reset_pending(struct simpm *pm);

/* Words of a unit and a pointer to the value of its version v (0-based). */
static inline u32 simpm_unit_words(const struct simpm_unit *u)
{
	return u->kind == SIMPM_WORD ? 1 : SIMPM_LINE_WORDS;
}

static inline u64 simpm_unit_off(const struct simpm_unit *u)
{
	return u->kind == SIMPM_WORD ? (u64)u->idx * 8 :
	       (u64)u->idx * SIMPM_LINE;
}

/* Write version v of unit u into buf (logging to undo if set). */
void simpm_apply_unit(u8 *buf, const struct simpm_epoch *ep,
		      const struct simpm_unit *u, u32 v,
		      struct simpm_undo *undo);

void simpm_epoch_copy(struct simpm_epoch *dst, const struct simpm_epoch *src);
/* Make ep the pending stores of pm (to restore a snapshot). */
void simpm_set_pending(struct simpm *pm, const struct simpm_epoch *ep);
void simpm_epoch_free(struct simpm_epoch *ep);

void simpm_undo_log(struct simpm_undo *undo, u8 *buf, u32 word);
/* Undo back to n entries. */
void simpm_undo_to(struct simpm_undo *undo, u8 *buf, u32 n);
void simpm_undo_free(struct simpm_undo *undo);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);

#endif /* SIMPM_H */
