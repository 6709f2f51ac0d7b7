// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes sent around PM (admission: docs/design.md, "What deserves PM").
 *
 * The caller writes the data to the origin instead of PM, durably (FUA)
 * before it acknowledges it. Nothing on PM may then contradict the origin,
 * before or after a crash, and no read may return older data than the
 * write's:
 *
 *  - A dirty copy of a key the write touches is newer than the origin: the
 *    write goes to PM instead, in front of it (fr_around_begin() refuses).
 *    Dropping the dirty copy first would lose it if the origin write then
 *    failed or the machine crashed before it landed.
 *  - A clean copy equals the origin, which the write is about to change: it
 *    is dropped, and the drop fenced, before the origin write is sent. A
 *    crash in between leaves the origin's old data, which the copy held.
 *  - Two origin writes of one slot's data must never be in flight at once
 *    (they land in any order): the write does not go around while a stage
 *    has a chunk of the slot pinned (its key's old copy may be on its way to
 *    the origin), and it pins every chunk of the slot until its origin
 *    write completes, so no stage takes the slot (a write stored on PM
 *    meanwhile is written back after it) and no fill installs there (a
 *    fill may have read the origin before the write landed).
 */
#include "fr-tags.h"

/*
 * Whether an origin write of slot s is in flight: a batch's or a victim's
 * (its key's old copy may be on its way to the origin, even once that copy
 * is gone from PM), or another write around's.
 */
static bool around_busy(const struct fr_cache *c, fr_slot_t s)
{
	return fr_slot_pinned(c, s);
}

/*
 * Whether a write of chunks first..last may go around PM: see fr-core.h. A
 * refusal is final, a pin is not: a slot pinned by a batch or another write
 * around is free again once that origin write is done.
 */
static enum fr_around around_verdict(const struct fr_cache *c, u64 first,
				     u64 last)
{
	const struct fr_geometry *g = &c->geo;
	enum fr_around v = FR_AROUND_GO;
	u64 k;
	u32 i;

	for (k = first; k <= last; k++) {
		fr_ochunk_t key = to_ochunk(k);
		fr_slot_t s = fr_slot_of(g, key);

		if (fr_slot_tags_bad(c, s) || fr_slot_lost(c, s))
			return FR_AROUND_REFUSED;
		for (i = 0; i < c->geo.ways; i++) {
			u64 commit = tag_commit(c, slot_chunk(c, s, i));

			if (commit_holds(commit, key) &&
			    (commit & FR_TAG_DIRTY))
				return FR_AROUND_REFUSED;
		}
		if (FR_STEP(around_busy, c, s))
			v = FR_AROUND_BUSY;
	}
	return v;
}

/* Drop key's clean copy in slot s, if it has one: the origin changes. */
static bool around_drop(struct fr_cache *c, fr_slot_t s, fr_ochunk_t key)
{
	u32 i;

	for (i = 0; i < c->geo.ways; i++) {
		fr_pchunk_t p = slot_chunk(c, s, i);

		if (commit_holds(tag_commit(c, p), key)) {
			set_commit(c, p, 0);
			return true;
		}
	}
	return false;
}

/* Every chunk of slot s, until the origin write is done. */
static void around_pin(struct fr_cache *c, fr_slot_t s)
{
	u32 i;

	if (!c->pinned)
		return;
	for (i = 0; i < c->geo.ways; i++)
		set_bit(from_pchunk(slot_chunk(c, s, i)), c->pinned);
}

/* Every chunk of slot s, once the origin write is done. */
static void around_unpin(struct fr_cache *c, fr_slot_t s)
{
	u32 i;

	for (i = 0; i < c->geo.ways; i++)
		clear_bit(from_pchunk(slot_chunk(c, s, i)), c->pinned);
}

static void chunk_range(const struct fr_geometry *g, u64 sector,
			u32 nr_sectors, u64 *first, u64 *last)
{
	*first = sector >> g->chunk_shift;
	*last = (sector + nr_sectors - 1) >> g->chunk_shift;
}

enum fr_around fr_around_begin(struct fr_cache *c, u64 sector,
			       u32 nr_sectors)
{
	const struct fr_geometry *g = &c->geo;
	u64 first, last, k;
	enum fr_around v;
	bool dropped = false;

	if (!nr_sectors || sector + nr_sectors > g->origin_sectors)
		return FR_AROUND_REFUSED;
	chunk_range(g, sector, nr_sectors, &first, &last);
	v = around_verdict(c, first, last);
	if (v != FR_AROUND_GO)
		return v;
	for (k = first; k <= last; k++) {
		fr_slot_t s = fr_slot_of(g, to_ochunk(k));

		if (FR_STEP(around_drop, c, s, to_ochunk(k)))
			dropped = true;
	}
	if (dropped)
		fr_pm_fence();
	for (k = first; k <= last; k++)
		FR_STEP(around_pin, c, fr_slot_of(g, to_ochunk(k)));
	return FR_AROUND_GO;
}

void fr_around_end(struct fr_cache *c, u64 sector, u32 nr_sectors)
{
	const struct fr_geometry *g = &c->geo;
	u64 first, last, k;

	if (!c->pinned)
		return;
	chunk_range(g, sector, nr_sectors, &first, &last);
	for (k = first; k <= last; k++)
		FR_STEP(around_unpin, c, fr_slot_of(g, to_ochunk(k)));
}
