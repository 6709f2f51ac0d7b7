// SPDX-License-Identifier: GPL-2.0-only
/*
 * The stripe locks (the slot locks of the core's locking contract) and the
 * epoch rule that lets origin reads run without them: fr-stripe.h.
 */
#include <linux/slab.h>
#include <linux/bitmap.h>

#include "dm-fr.h"

static struct fr_stripe *stripe_of(struct fr_stripes *ss, fr_slot_t s)
{
	return &ss->s[(from_slot(s) >> FR_STRIPE_SHIFT) & (FR_NR_STRIPES - 1)];
}

static struct fr_stripe *chunk_stripe(struct dm_fr *fr, u64 k)
{
	return stripe_of(&fr->stripes, fr_slot_of(&fr->cache.geo,
						  to_ochunk(k)));
}

int fr_stripes_create(struct fr_stripes *ss)
{
	static struct lock_class_key range_key;
	unsigned int i;

	ss->s = kvcalloc(FR_NR_STRIPES, sizeof(*ss->s), GFP_KERNEL);
	if (!ss->s)
		return -ENOMEM;
	for (i = 0; i < FR_NR_STRIPES; i++)
		mutex_init(&ss->s[i].lock);
	lockdep_init_map(&ss->range.dep_map, "fr_stripe_range", &range_key, 0);
	ss->bypass_seq = 0;
	return 0;
}

void fr_stripes_destroy(struct fr_stripes *ss)
{
	kvfree(ss->s);
	ss->s = NULL;
}

static void stripe_unlock(struct fr_stripe *st, enum fr_stripe_change change)
{
	if (change == FR_STRIPE_CHANGED)
		st->epoch++;
	else if (change == FR_STRIPE_FILLED)
		st->installs++;
	mutex_unlock(&st->lock);
}

void fr_lock_range(struct dm_fr *fr, u64 first, u64 last,
		   struct fr_lockset *ls)
{
	struct fr_stripes *ss = &fr->stripes;
	unsigned int i;
	u64 k;

	if (first == last) {
		ls->single = chunk_stripe(fr, first) - ss->s;
		mutex_lock(&ss->s[ls->single].lock);
		return;
	}
	ls->single = -1;
	bitmap_zero(ls->stripes, FR_NR_STRIPES);
	for (k = first; k <= last; k++)
		__set_bit(chunk_stripe(fr, k) - ss->s, ls->stripes);
	lock_map_acquire(&ss->range.dep_map);
	for_each_set_bit(i, ls->stripes, FR_NR_STRIPES)
		mutex_lock_nest_lock(&ss->s[i].lock, &ss->range);
}

void fr_unlock_range(struct dm_fr *fr, struct fr_lockset *ls,
		     enum fr_stripe_change change)
{
	struct fr_stripes *ss = &fr->stripes;
	unsigned int i;

	if (ls->single >= 0) {
		stripe_unlock(&ss->s[ls->single], change);
		return;
	}
	for_each_set_bit(i, ls->stripes, FR_NR_STRIPES)
		stripe_unlock(&ss->s[i], change);
	lock_map_release(&ss->range.dep_map);
}

/*
 * The sum of the range's epochs and fill counts, which only grow, so the
 * sum moves iff any of them moved.
 */
u64 fr_range_epoch(struct dm_fr *fr, struct fr_lockset *ls)
{
	struct fr_stripes *ss = &fr->stripes;
	unsigned int i;
	u64 sum = 0;

	if (ls->single >= 0) {
		lockdep_assert_held(&ss->s[ls->single].lock);
		return (u64)ss->s[ls->single].epoch + ss->s[ls->single].installs;
	}
	for_each_set_bit(i, ls->stripes, FR_NR_STRIPES) {
		lockdep_assert_held(&ss->s[i].lock);
		sum += (u64)ss->s[i].epoch + ss->s[i].installs;
	}
	return sum;
}

void fr_lock_slot(struct dm_fr *fr, fr_slot_t s)
{
	mutex_lock(&stripe_of(&fr->stripes, s)->lock);
}

void fr_unlock_slot(struct dm_fr *fr, fr_slot_t s,
		    enum fr_stripe_change change)
{
	stripe_unlock(stripe_of(&fr->stripes, s), change);
}

/*
 * A page of tags covers consecutive slots from a multiple of their number
 * (64 pairs, or 16 sets of 8): their stripes are consecutive and
 * ascending, taken as fr_lock_range takes them.
 */
void fr_lock_slot_span(struct dm_fr *fr, u64 first, u64 last)
{
	struct fr_stripes *ss = &fr->stripes;
	u64 s;

	lock_map_acquire(&ss->range.dep_map);
	for (s = first & ~(u64)((1 << FR_STRIPE_SHIFT) - 1); s <= last;
	     s += 1 << FR_STRIPE_SHIFT)
		mutex_lock_nest_lock(&stripe_of(ss, to_slot(s))->lock,
				     &ss->range);
}

void fr_unlock_slot_span(struct dm_fr *fr, u64 first, u64 last)
{
	struct fr_stripes *ss = &fr->stripes;
	u64 s;

	for (s = first & ~(u64)((1 << FR_STRIPE_SHIFT) - 1); s <= last;
	     s += 1 << FR_STRIPE_SHIFT)
		mutex_unlock(&stripe_of(ss, to_slot(s))->lock);
	lock_map_release(&ss->range.dep_map);
}

void fr_stamp_take(struct dm_fr *fr, fr_slot_t s, struct fr_stamp *stamp)
{
	struct fr_stripe *st = stripe_of(&fr->stripes, s);

	lockdep_assert_held(&st->lock);
	stamp->epoch = st->epoch;
	stamp->bypass_seq = READ_ONCE(fr->stripes.bypass_seq);
}

/*
 * Nothing that makes a fill stale happened since its stamp: no write or
 * discard in its stripe, no bypass of the cache begun or in flight.
 */
bool fr_stamp_current(struct dm_fr *fr, fr_slot_t s,
		      const struct fr_stamp *stamp)
{
	struct fr_stripe *st = stripe_of(&fr->stripes, s);

	lockdep_assert_held(&st->lock);
	return st->epoch == stamp->epoch && !(stamp->bypass_seq & 1) &&
	       stamp->bypass_seq == READ_ONCE(fr->stripes.bypass_seq);
}

void fr_bypass_begin(struct dm_fr *fr)
{
	lockdep_assert_held(&fr->wb.lock);
	WARN_ON_ONCE(fr->stripes.bypass_seq & 1);
	WRITE_ONCE(fr->stripes.bypass_seq, fr->stripes.bypass_seq + 1);
}

void fr_bypass_end(struct dm_fr *fr)
{
	lockdep_assert_held(&fr->wb.lock);
	WARN_ON_ONCE(!(fr->stripes.bypass_seq & 1));
	WRITE_ONCE(fr->stripes.bypass_seq, fr->stripes.bypass_seq + 1);
}

#ifdef CONFIG_LOCKDEP
void fr_assert_range_locked(struct dm_fr *fr, u64 first, u64 last)
{
	u64 k;

	for (k = first; k <= last; k++)
		lockdep_assert_held(&chunk_stripe(fr, k)->lock);
}

void fr_assert_slot_locked(struct dm_fr *fr, fr_slot_t s)
{
	lockdep_assert_held(&stripe_of(&fr->stripes, s)->lock);
}
#endif
