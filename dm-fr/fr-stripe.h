/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stripe locks and the epoch rule (fr-stripe.c): the only code that
 * takes a slot lock, moves an epoch or a fill count, or opens a bypass of
 * the cache. Every other file goes through the calls below.
 *
 * Slot locks are striped: 2^FR_STRIPE_SHIFT consecutive slots share a
 * mutex, and the stripes repeat every FR_NR_STRIPES. A bio stays inside one
 * region, whose slots are consecutive, so it needs only a few stripes (at
 * most 65, for a region of 1024 chunks), taken in ascending index order.
 *
 * The stripe mutexes share one lockdep class. Holding several is safe
 * because fr_lock_range and fr_lock_slot_span are the only places that do,
 * and they take them in ascending index order, so two holders cannot wait
 * on each other. lockdep cannot see that rule; it is told with
 * mutex_lock_nest_lock() under the stripes' range map, as ww_mutexes nest
 * under their acquire context, which also counts a whole range as one held
 * lock (a range may be longer than lockdep's 48-lock stack). The range map
 * excludes nothing and costs nothing without lockdep.
 *
 * The epoch rule. What is read from the origin without the stripe locks (a
 * fill's chunk, a mixed read's origin part) is used only if no change that
 * makes it stale happened meanwhile:
 *
 *   - a stripe's epoch is bumped, under its lock, by every write that may
 *     have changed PM (all but FR_WRITE_NEED_CLEAN, which changes nothing)
 *     and every discard or forgotten copy: what puts on PM data the origin
 *     does not hold, or drops any copy (FR_STRIPE_CHANGED);
 *   - a stripe's fill count is bumped, under its lock, by every fill
 *     installed (FR_STRIPE_FILLED): a fill may evict a clean copy. Fills
 *     themselves do not check it (a clean copy equals the origin, so its
 *     loss makes no fill in flight stale); a mixed read does;
 *   - neither moves for writeback's clear_dirty (FR_STRIPE_KEPT): PM keeps
 *     the copy, the origin now holds it too;
 *   - the bypass sequence is odd while the origin is written around the
 *     cache (a discard, a cleaner write-through, a bad-PM bypass write:
 *     fr_bypass_begin/end); it changes only under wb.lock.
 *
 * A fill is installed only if its stamp, taken at map, is still current
 * (fr_stamp_current: the same epoch, the same even bypass sequence). A
 * mixed read's overlay is trusted only if neither epoch nor fills moved in
 * its range across its unlocked origin read (fr_range_epoch): then every
 * chunk PM held is still there to overlay what the origin returned,
 * however old (writeback may have written the origin during the read).
 */
#ifndef FR_STRIPE_H
#define FR_STRIPE_H

#include <linux/mutex.h>
#include <linux/lockdep.h>

#include "fr-core.h"

#define FR_NR_STRIPES		1024
#define FR_STRIPE_SHIFT		4

struct dm_fr;

struct fr_stripe {
	struct mutex lock;
	u32 epoch;		/* see "The epoch rule" above */
	u32 installs;	/* fills installed: the epoch rule */
} ____cacheline_aligned_in_smp;

/* A target's stripes: its slot locks and the epoch rule's counters. */
struct fr_stripes {
	struct fr_stripe *s;		/* FR_NR_STRIPES of them */
	struct {
		struct lockdep_map dep_map;
	} range;			/* lockdep only: several stripes held */
	unsigned int bypass_seq;	/* odd: the origin is being bypassed */
};

/* The stripes of a bio's slots (one, most of the time). */
struct fr_lockset {
	int single;		/* the only stripe, or -1: see stripes */
	DECLARE_BITMAP(stripes, FR_NR_STRIPES);
};

/* What the holder did under a stripe's lock (the epoch rule, above). */
enum fr_stripe_change {
	FR_STRIPE_KEPT,		/* nothing a reader of the origin must know */
	FR_STRIPE_CHANGED,	/* PM data the origin lacks, or a copy dropped */
	FR_STRIPE_FILLED,	/* a fill installed: a clean copy may be gone */
};

/* What a fill saw at map; installed only if still current at install. */
struct fr_stamp {
	u32 epoch;
	unsigned int bypass_seq;
};

int fr_stripes_create(struct fr_stripes *ss);
void fr_stripes_destroy(struct fr_stripes *ss);

/* Chunks first..last of one region (a bio): their stripes, ascending. */
void fr_lock_range(struct dm_fr *fr, u64 first, u64 last,
		   struct fr_lockset *ls);
void fr_unlock_range(struct dm_fr *fr, struct fr_lockset *ls,
		     enum fr_stripe_change change);
/* Of a locked range: moves iff an epoch or fill count in it moved. */
u64 fr_range_epoch(struct dm_fr *fr, struct fr_lockset *ls);

/* One slot's stripe (nothing else held of the stripes). */
void fr_lock_slot(struct dm_fr *fr, fr_slot_t s);
void fr_unlock_slot(struct dm_fr *fr, fr_slot_t s,
		    enum fr_stripe_change change);
/* Slots first..last, whose stripes are consecutive (a page of tags). */
void fr_lock_slot_span(struct dm_fr *fr, u64 first, u64 last);
void fr_unlock_slot_span(struct dm_fr *fr, u64 first, u64 last);

/* The fill's stamp of slot s (its stripe locked), and whether it holds. */
void fr_stamp_take(struct dm_fr *fr, fr_slot_t s, struct fr_stamp *stamp);
bool fr_stamp_current(struct dm_fr *fr, fr_slot_t s,
		      const struct fr_stamp *stamp);

/* Around an origin write or discard that goes around PM (under wb.lock). */
void fr_bypass_begin(struct dm_fr *fr);
void fr_bypass_end(struct dm_fr *fr);

#ifdef CONFIG_LOCKDEP
void fr_assert_range_locked(struct dm_fr *fr, u64 first, u64 last);
void fr_assert_slot_locked(struct dm_fr *fr, fr_slot_t s);
#else
static inline void fr_assert_range_locked(struct dm_fr *fr, u64 first,
					  u64 last)
{
}

static inline void fr_assert_slot_locked(struct dm_fr *fr, fr_slot_t s)
{
}
#endif

#endif /* FR_STRIPE_H */
