// SPDX-License-Identifier: GPL-2.0-only
/*
 * The broken variants of the protocol core (crashsim-mut only).
 *
 * This file compiles dm-fr/core/fr-slot.c, fr-wb.c and fr-recover.c itself,
 * with an FR_STEP() that sends
 * every protocol step through mut_<step>() below: the step as written, or,
 * when fr_mutation names a variant of it, a broken one. fr_write() is
 * wrapped the same way for FR_MUT_IN_PLACE, which skips every step.
 */
#include "fr-core.h"
#include "mutants.h"

struct write_op;
struct recovery;

static u64 mut_sector_mask(u32 first, u32 count);
static void mut_drop_new_flag(struct fr_cache *c, fr_pchunk_t p);
static enum fr_write_outcome mut_write_plan(struct write_op *w);
static void mut_write_evict(struct write_op *w);
static int mut_write_prepare(struct write_op *w);
static void mut_write_commit(struct write_op *w);
static void mut_write_complete(struct write_op *w);
static void mut_write_drop_old(struct write_op *w);
static bool mut_clear_dirty(struct fr_cache *c, const struct fr_wb_snap *snap);
struct wb_batch;
static bool mut_staged_copy(const struct fr_cache *c,
			    const struct wb_batch *b, fr_pchunk_t p,
			    u64 commit);
static bool mut_plan_pinned(const struct fr_cache *c, fr_pchunk_t p);
static bool mut_pin_chunk(struct fr_cache *c, fr_pchunk_t p,
			  const struct wb_batch *b);
static bool mut_batch_wraps(const struct fr_cache *c, enum fr_wb_scan scan,
			    u64 end);
static bool mut_discard_drops(const struct fr_geometry *g, fr_ochunk_t key,
			      u64 commit, u64 sector, u64 end);
/* An int: enum stage_result is fr-wb.c's, defined below. */
static int mut_stage_chunk(struct fr_cache *c, fr_pchunk_t p,
			   const struct wb_batch *b,
			   const struct fr_wb_ops *ops, void *ctx, int *error);
static int mut_wb_clear(struct fr_cache *c, const struct fr_wb_snap *snaps,
			u32 n, const struct fr_wb_ops *ops, void *ctx);
static int mut_wb_finish(struct fr_cache *c, const struct fr_wb_snap *snaps,
			 u32 n, const struct fr_wb_ops *ops, void *ctx);
static struct fr_group_scratch *mut_add_group(struct recovery *rv, u64 seq);
static int mut_recover_scan(struct recovery *rv, const char **why);
static void mut_recover_judge_groups(struct recovery *rv);
static void mut_recover_settle_groups(struct recovery *rv);
static void mut_recover_slots(struct recovery *rv);
struct fr_tag_read;
static bool mut_slot_needs_resolving(const struct fr_tag_read *t, u32 ways);
static void mut_recover_superseded(struct recovery *rv, u64 base, u64 *rc);
static bool mut_walk_drops(const struct fr_geometry *g, u64 commit,
			   u64 sector, u64 end);
static int mut_batch_failed(struct fr_cache *c,
			    const struct fr_wb_snap *snaps, u32 n,
			    const struct fr_wb_ops *ops, void *ctx, int error);
/* An int: enum plan is fr-slot.c's, defined below. */
static int mut_fill_plan(const struct fr_cache *c, fr_ochunk_t key,
			 fr_slot_t s, fr_pchunk_t *victim);
struct tag_batch;
static const struct fr_tag_disk *mut_batch_tag(const struct tag_batch *b,
					       u64 p);
struct fr_resize_report;
static void mut_resize_drop_past_end(struct fr_cache *c, u64 new_sectors,
				     struct fr_resize_report *rep);
static void mut_resize_commit(struct fr_cache *c, u64 new_sectors);
static bool mut_around_drop(struct fr_cache *c, fr_slot_t s, fr_ochunk_t key);
static void mut_around_pin(struct fr_cache *c, fr_slot_t s);
static void mut_around_unpin(struct fr_cache *c, fr_slot_t s);
static bool mut_around_busy(const struct fr_cache *c, fr_slot_t s);
static void around_unpin_early(struct fr_cache *c);

#define FR_STEP(step, ...) mut_##step(__VA_ARGS__)
#define fr_write fr_write_steps
#include "fr-slot.c"
#include "fr-wb.c"
#undef fr_write
#include "fr-recover.c"
#include "fr-resize.c"
#include "fr-around.c"

enum fr_mutation fr_mutation;
const int crashsim_core_mutable = 1;

#define MUT(m) (fr_mutation == FR_MUT_##m)

/* AROUND_UNPIN_RACES: the slot + 1 a write around has pinned, or 0. */
static u64 around_pinned_slot;

/*
 * MASK_64: the mask written as (1 << count) - 1 with no case for a whole
 * 64-sector chunk. The shift by 64 is undefined in C; x86 masks the count
 * to 0, so the mask is 0, as the kernel would compute it.
 */
static u64 mut_sector_mask(u32 first, u32 count)
{
	if (MUT(MASK_64))
		return ((1ULL << (count & 63)) - 1) << first;
	return sector_mask(first, count);
}

/* KEEP_NEW_FLAG: the chunk being superseded keeps N. */
static void mut_drop_new_flag(struct fr_cache *c, fr_pchunk_t p)
{
	if (!MUT(KEEP_NEW_FLAG))
		drop_new_flag(c, p);
}

/* NO_GROUP_FLAG: a multi-chunk write is committed as single writes. */
static enum fr_write_outcome mut_write_plan(struct write_op *w)
{
	enum fr_write_outcome r = write_plan(w);

	if (MUT(NO_GROUP_FLAG)) {
		w->group = false;
		w->flags &= ~FR_TAG_INCOMPLETE;
	}
	return r;
}

/* EVICT_NO_FENCE: the displaced chunk is reused before its drop is durable. */
static void mut_write_evict(struct write_op *w)
{
	fr_pchunk_t victim;
	u64 k;

	if (!MUT(EVICT_NO_FENCE)) {
		write_evict(w);
		return;
	}
	for (k = w->first; k <= w->last; k++) {
		if (plan_slot(w->c, to_ochunk(k), write_slot(w, k),
			      &victim) == PLAN_EVICT) {
			set_commit(w->c, victim, 0);
			w->res->evictions++;
		}
	}
}

/*
 * NO_DATA_FENCE: no fence between the data and the commit.
 * COMMIT_BEFORE_DATA: each chunk's commit word is stored before its data.
 */
static int mut_write_prepare(struct write_op *w)
{
	u64 k;
	int r;

	if (!MUT(NO_DATA_FENCE) && !MUT(COMMIT_BEFORE_DATA))
		return write_prepare(w);
	w->seq = (u64)atomic64_inc_return(&w->c->next_seq);
	for (k = w->first; k <= w->last; k++) {
		fr_pchunk_t f = free_chunk(w->c, write_slot(w, k));

		if (MUT(COMMIT_BEFORE_DATA))
			set_commit(w->c, f, fr_commit_word(k, w->flags));
		r = prepare_chunk(w, k, f);
		if (r)
			return r;
	}
	if (MUT(COMMIT_BEFORE_DATA))
		fr_pm_fence();
	return 0;
}

/* INVALIDATE_OLD_FIRST: the old copy is dropped before the new commit. */
static void mut_write_commit(struct write_op *w)
{
	u64 k;

	if (MUT(AROUND_UNPIN_RACES))
		around_unpin_early(w->c);
	if (MUT(COMMIT_BEFORE_DATA)) {
		fr_pm_fence();		/* committed already */
		return;
	}
	if (!MUT(INVALIDATE_OLD_FIRST)) {
		write_commit(w);
		return;
	}
	for (k = w->first; k <= w->last; k++) {
		fr_pchunk_t f = free_chunk(w->c, write_slot(w, k)), o;

		if (other_copy(w->c, write_slot(w, k), f, to_ochunk(k), &o))
			set_commit(w->c, o, 0);
		set_commit(w->c, f, fr_commit_word(k, w->flags));
	}
	fr_pm_fence();
}

static void mut_write_complete(struct write_op *w)
{
	write_complete(w);
}

static void mut_write_drop_old(struct write_op *w)
{
	write_drop_old(w);
}

/* IN_PLACE: a single-chunk write to a cached chunk overwrites that copy. */
static int write_in_place(struct fr_cache *c, u64 sector, u32 nr_sectors,
			  fr_payload_fn payload, void *arg,
			  struct fr_write_result *res)
{
	const struct fr_geometry *g = &c->geo;
	u64 k = sector >> g->chunk_shift;
	struct fr_hit hit;
	fr_pchunk_t p;
	u32 off;

	if (!nr_sectors || sector >= g->origin_sectors ||
	    nr_sectors > g->origin_sectors - sector ||
	    (sector + nr_sectors - 1) >> g->chunk_shift != k ||
	    !fr_lookup(c, to_ochunk(k), &hit))
		return 1;		/* not such a write: do it right */
	memset(res, 0, sizeof(*res));
	p = hit.pchunk;
	off = sector - fr_first_sector(g, to_ochunk(k));
	payload(arg, (u8 *)fr_chunk_data(c, p) +
		     ((size_t)off << FR_SECTOR_SHIFT), nr_sectors);
	fr_pm_store8(&c->tags[from_pchunk(p)].sectors,
		     tag_sectors(c, p) | sector_mask(off, nr_sectors));
	set_commit(c, p, tag_commit(c, p) | FR_TAG_DIRTY);
	fr_pm_fence();
	res->chunks = 1;
	res->hits = 1;
	return 0;
}

enum fr_write_outcome fr_write(struct fr_cache *c, u64 sector, u32 nr_sectors,
			       fr_payload_fn payload, void *arg,
			       struct fr_write_result *res)
{
	if (MUT(IN_PLACE) &&
	    !write_in_place(c, sector, nr_sectors, payload, arg, res))
		return FR_WRITE_DONE;
	return fr_write_steps(c, sector, nr_sectors, payload, arg, res);
}

/*
 * SWEEP_WRAPS: a flush's batch is the periodic one, which goes round from
 * chunk 0 when it reaches the end (bc6d9cc): a flush under a steady writer
 * may then never reach the end of its sweep.
 */
static bool mut_batch_wraps(const struct fr_cache *c, enum fr_wb_scan scan,
			    u64 end)
{
	if (MUT(SWEEP_WRAPS) && scan == FR_WB_TO_END && end >= c->geo.nr_chunks)
		return true;
	return batch_wraps(c, scan, end);
}

/* CLEAR_IGNORES_SEQ: a chunk rewritten twice since staging looks unchanged. */
static bool mut_clear_dirty(struct fr_cache *c, const struct fr_wb_snap *snap)
{
	u64 commit = tag_commit(c, snap->pchunk);

	if (!MUT(CLEAR_IGNORES_SEQ))
		return clear_dirty(c, snap);
	if (commit != snap->commit)
		return false;
	set_commit(c, snap->pchunk, commit & ~(u64)FR_TAG_DIRTY);
	return true;
}

/*
 * POISON_CLEANS: a chunk whose PM data stage could not read is counted as
 * staged, so writeback cleans it although the origin never got its data.
 */
static int mut_stage_chunk(struct fr_cache *c, fr_pchunk_t p,
			   const struct wb_batch *b,
			   const struct fr_wb_ops *ops, void *ctx, int *error)
{
	struct fr_wb_snap *snap = &b->snaps[b->n];
	enum stage_result res = stage_chunk(c, p, b, ops, ctx, error);

	if (res == STAGE_UNREADABLE && MUT(POISON_CLEANS)) {
		snap->pchunk = p;
		snap->commit = tag_commit(c, p);
		snap->seq = tag_seq(c, p);
		return STAGED;
	}
	/*
	 * UNPIN_AT_STAGE: the pin released once the chunk is staged, before
	 * its origin write (which reads PM) has completed.
	 */
	if (res == STAGED && MUT(UNPIN_AT_STAGE))
		unpin_chunk(c, p);
	return res;
}

/*
 * STAGE_BOTH_COPIES: a batch that staged a key's old copy goes on to stage
 * the new one a write put in another chunk of the slot, so both versions go
 * to the origin in one submit.
 * STAGED_BUDDY_ONLY: the pair's rule left in a set: only p's buddy in a
 * pair (p ^ 1) is looked at, so in a set a key's old copy two chunks away
 * is staged beside the new one. The same as the real rule in a pair.
 */
static bool mut_staged_copy(const struct fr_cache *c,
			    const struct wb_batch *b, fr_pchunk_t p,
			    u64 commit)
{
	u64 key = fr_commit_key(commit);
	const struct fr_wb_snap *snap;
	u32 i;

	if (MUT(STAGED_BUDDY_ONLY)) {
		snap = staged(b, to_pchunk(from_pchunk(p) ^ 1));
		return snap && fr_commit_key(snap->commit) == key;
	}
	/*
	 * STAGED_IN_A_ROW: the rule of a batch staged in PM order (before
	 * 1.19), left under origin order: another copy is looked for only
	 * among the snaps just before, while they are of p's slot. In origin
	 * order a slot's chunks are not staged in a row, so a key's old copy
	 * staged earlier in the span is missed.
	 */
	if (MUT(STAGED_IN_A_ROW)) {
		for (i = b->n; i-- > 0 &&
		     slot_of(c, b->snaps[i].pchunk) == slot_of(c, p);)
			if (fr_commit_key(b->snaps[i].commit) == key)
				return true;
		return false;
	}
	return !MUT(STAGE_BOTH_COPIES) && staged_copy(c, b, p, commit);
}

/*
 * REUSE_PINNED: a write or fill stores into a chunk whose data an origin
 * write in flight reads (writeback from PM without a copy): that write
 * carries the new data to the sectors of the key the chunk held.
 */
static bool mut_plan_pinned(const struct fr_cache *c, fr_pchunk_t p)
{
	return !MUT(REUSE_PINNED) && plan_pinned(c, p);
}

/*
 * PIN_ANY_OWN: a stage that holds any pin takes a pinned buddy for its own,
 * though another stage (a victim write beside the batch) may have pinned
 * it: two origin writes of the slot's data in flight at once.
 * PIN_IGNORES_BUDDY: a pin on the other chunk of the slot is ignored
 * altogether (a chunk pinned itself is still refused, so no stage clears
 * another's pin and writes keep out of the chunks in flight).
 */
static bool mut_pin_chunk(struct fr_cache *c, fr_pchunk_t p,
			  const struct wb_batch *b)
{
	if (c->pinned && !test_bit(from_pchunk(p), c->pinned) &&
	    (MUT(PIN_IGNORES_BUDDY) || (MUT(PIN_ANY_OWN) && b->n))) {
		set_bit(from_pchunk(p), c->pinned);
		return true;
	}
	return pin_chunk(c, p, b);
}

/*
 * DISCARD_KEEPS_CLEAN: a discard drops only the copies it covers whole, so
 * a clean copy covered in part keeps data the origin no longer has.
 */
static bool mut_discard_drops(const struct fr_geometry *g, fr_ochunk_t key,
			      u64 commit, u64 sector, u64 end)
{
	u64 first = fr_first_sector(g, key);

	if (MUT(DISCARD_KEEPS_CLEAN))
		return first >= sector &&
		       min(first + g->chunk_sectors, g->origin_sectors) <= end;
	return discard_drops(g, key, commit, sector, end);
}

/* CLEAR_UNLOCKED: the compare-then-store races the slot's writers. */
static int mut_wb_clear(struct fr_cache *c, const struct fr_wb_snap *snaps,
			u32 n, const struct fr_wb_ops *ops, void *ctx)
{
	int cleaned = 0;
	u32 i;

	if (!MUT(CLEAR_UNLOCKED))
		return wb_clear(c, snaps, n, ops, ctx);
	for (i = 0; i < n; i++)
		cleaned += mut_clear_dirty(c, &snaps[i]);
	fr_pm_fence();
	return cleaned;
}

/* CLEAN_BEFORE_FLUSH: dirty flags cleared before the origin has the data. */
static int mut_wb_finish(struct fr_cache *c, const struct fr_wb_snap *snaps,
			 u32 n, const struct fr_wb_ops *ops, void *ctx)
{
	if (MUT(CLEAN_BEFORE_FLUSH))
		mut_wb_clear(c, snaps, n, ops, ctx);
	return wb_finish(c, snaps, n, ops, ctx);
}

/* GROUP_SEQ_U32: from 2^32 on, a group's members no longer find it. */
static struct fr_group_scratch *mut_add_group(struct recovery *rv, u64 seq)
{
	struct fr_group_scratch *grp = add_group(rv, seq);

	if (grp && MUT(GROUP_SEQ_U32))
		grp->seq = (u32)seq;
	return grp;
}

static int mut_recover_scan(struct recovery *rv, const char **why)
{
	return recover_scan(rv, why);
}

/* RECOVER_FORWARD: every interrupted group is completed, none rolled back. */
static void mut_recover_judge_groups(struct recovery *rv)
{
	u32 i;

	recover_judge_groups(rv);
	if (!MUT(RECOVER_FORWARD))
		return;
	for (i = 0; i < rv->ngroups; i++) {
		if (!rv->groups[i].committed) {
			rv->groups[i].committed = 1;
			rv->rep->groups_rolled_back--;
			rv->rep->groups_rolled_forward++;
		}
	}
}

static void mut_recover_settle_groups(struct recovery *rv)
{
	recover_settle_groups(rv);
}

static void mut_recover_slots(struct recovery *rv)
{
	recover_slots(rv);
}

/*
 * SCAN_ONLY_PAIRS: recovery's scan decides a slot needs nothing more when
 * two of its tags hold one key (a crash before step 4 dropped the old
 * copy): phase 4 is skipped, both copies stay and the bitmaps show both.
 */
static bool mut_slot_needs_resolving(const struct fr_tag_read *t, u32 ways)
{
	u32 i;

	if (!MUT(SCAN_ONLY_PAIRS))
		return slot_needs_resolving(t, ways);
	for (i = 0; i < ways; i++)
		if (t[i].problem ||
		    (t[i].valid && (t[i].commit & FR_TAG_INCOMPLETE)))
			return true;
	return false;
}

/*
 * SUPERSEDED_ADJACENT: recovery's phase 4 looks for two copies of one key
 * in neighbouring chunks only, as a pair's rule would: in a set, a copy two
 * chunks from its newer one stays, and the slot holds its key twice.
 */
static void mut_recover_superseded(struct recovery *rv, u64 base, u64 *rc)
{
	struct fr_cache *c = rv->c;
	u32 i, drop;

	if (!MUT(SUPERSEDED_ADJACENT)) {
		recover_superseded(rv, base, rc);
		return;
	}
	for (i = 0; i + 1 < c->geo.ways; i++) {
		if (!(rc[i] & FR_TAG_VALID) || !(rc[i + 1] & FR_TAG_VALID) ||
		    fr_commit_key(rc[i]) != fr_commit_key(rc[i + 1]))
			continue;
		drop = (rc[i] & FR_TAG_NEW) ? i + 1 : i;
		rc[drop] = 0;
		rv->rep->superseded_dropped++;
		if (rv->store)
			fr_pm_store8(&c->tags[base + drop].commit, 0);
	}
}

/*
 * BULK_TAG_SHIFT: recovery's bulk read takes a slot's second tag from the
 * first tag's bytes (an index off by one), so the slot seems to hold its
 * first chunk's copy twice. Caught only where the bulk read runs: every
 * page of tags, the first included, and both pages of p40-r4.
 */
static const struct fr_tag_disk *mut_batch_tag(const struct tag_batch *b,
					       u64 p)
{
	if (MUT(BULK_TAG_SHIFT) && (p & 1))
		return batch_tag(b, p - 1);
	return batch_tag(b, p);
}

/*
 * WALK_DROPS_PARTIAL: a discard larger than the cache (the slot walk) drops
 * every copy whose chunk it touches, a dirty one it covers only in part
 * too: the sectors outside the discard lose their newest data.
 */
static bool mut_walk_drops(const struct fr_geometry *g, u64 commit,
			   u64 sector, u64 end)
{
	u64 first = fr_first_sector(g, to_ochunk(fr_commit_key(commit)));

	if (MUT(WALK_DROPS_PARTIAL))
		return first < end && first + g->chunk_sectors > sector;
	return walk_drops(g, commit, sector, end);
}

/*
 * FAILED_STAGE_CLEARS: a batch whose stage failed after some chunks were
 * staged clears their dirty flags, though nothing was flushed to the
 * origin (nor maybe even written): the origin keeps older data for them.
 */
static int mut_batch_failed(struct fr_cache *c,
			    const struct fr_wb_snap *snaps, u32 n,
			    const struct fr_wb_ops *ops, void *ctx, int error)
{
	if (MUT(FAILED_STAGE_CLEARS) && n)
		wb_clear(c, snaps, n, ops, ctx);
	return batch_failed(c, snaps, n, ops, ctx, error);
}

/*
 * FILL_INTO_PINNED: a read fill takes a pinned chunk for free room (the
 * write's plan says "wait", which a fill turns into "skip"): its clean
 * data lands in a chunk whose old data an origin write in flight reads.
 */
static int mut_fill_plan(const struct fr_cache *c, fr_ochunk_t key,
			 fr_slot_t s, fr_pchunk_t *victim)
{
	enum plan p = fill_plan(c, key, s, victim);

	if (MUT(FILL_INTO_PINNED) && p == PLAN_PINNED)
		return PLAN_ROOM;
	return p;
}

/*
 * RESIZE_IN_PLACE: the obvious resize, origin_sectors rewritten in the
 * superblock and its checksum stored after it. 512 bytes are not one
 * failure-atomic store: a crash between the two leaves a superblock whose
 * checksum is wrong, and the cache cannot be loaded at all.
 */
static void mut_resize_commit(struct fr_cache *c, u64 new_sectors)
{
	struct fr_sb_disk sb;
	u64 word;

	if (!MUT(RESIZE_IN_PLACE)) {
		resize_commit(c, new_sectors);
		return;
	}
	memcpy(&sb, c->sb, sizeof(sb));
	sb.origin_sectors = cpu_to_le64(new_sectors);
	sb.csum = cpu_to_le32(fr_sb_csum(&sb));
	fr_pm_store8(&c->sb->origin_sectors, new_sectors);
	/* csum and version share a word: store both as they are now. */
	memcpy(&word, &sb.csum, sizeof(word));
	fr_pm_store8((__le64 *)&c->sb->csum, le64_to_cpu((__le64)word));
	fr_pm_fence();
}

/*
 * SHRINK_COMMIT_FIRST: the new length committed before the clean copies
 * past it are dropped: a crash between leaves tags recovery must call
 * corrupt (their keys lie past the end).
 */
static void mut_resize_drop_past_end(struct fr_cache *c, u64 new_sectors,
				     struct fr_resize_report *rep)
{
	if (MUT(SHRINK_COMMIT_FIRST))
		resize_commit(c, new_sectors);
	resize_drop_past_end(c, new_sectors, rep);
}

/*
 * AROUND_KEEPS_COPY: a write sent around PM leaves the key's clean copy on
 * PM: it still holds the old data, which reads then return, and which no
 * longer equals the origin.
 */
static bool mut_around_drop(struct fr_cache *c, fr_slot_t s, fr_ochunk_t key)
{
	if (MUT(AROUND_KEEPS_COPY))
		return false;
	return around_drop(c, s, key);
}

/*
 * AROUND_NO_PIN: a write sent around PM does not pin its slot: a write of
 * the key stored on PM meanwhile is written back by a batch before the
 * write around lands, which then leaves the origin older than the clean
 * copy; or a fill installs what it read before the write landed.
 */
static void mut_around_pin(struct fr_cache *c, fr_slot_t s)
{
	if (!MUT(AROUND_NO_PIN))
		around_pin(c, s);
	if (MUT(AROUND_UNPIN_RACES) && c->pinned)
		around_pinned_slot = from_slot(s) + 1;
}

/*
 * AROUND_IGNORES_PINS: a write around PM goes while a slot of its range is
 * pinned (1.20 waits instead; before, it went to PM): a batch's origin
 * write of the key's older copy may still be in flight, and land after it.
 */
static bool mut_around_busy(const struct fr_cache *c, fr_slot_t s)
{
	if (MUT(AROUND_IGNORES_PINS))
		return false;
	return around_busy(c, s);
}

/*
 * AROUND_UNPIN_RACES: a write around PM is unpinned when its origin write
 * completes, in interrupt context without the slot locks (dm-fr before
 * 1.17): the completion lands between a write's placement of its data and
 * its commit, in the slot the write around pinned. The write placed its
 * data in the chunk that was free with the other pinned and commits the
 * one that is free now: a chunk it never wrote, with the stale data and
 * sector mask of whatever that chunk held last.
 */
static void around_unpin_early(struct fr_cache *c)
{
	if (!around_pinned_slot || !c->pinned)
		return;
	around_unpin(c, to_slot(around_pinned_slot - 1));
	around_pinned_slot = 0;
}

static void mut_around_unpin(struct fr_cache *c, fr_slot_t s)
{
	if (around_pinned_slot == from_slot(s) + 1)
		around_pinned_slot = 0;
	around_unpin(c, s);
}
