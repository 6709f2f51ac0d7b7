// SPDX-License-Identifier: GPL-2.0-only
/*
 * How copies enter and leave a slot: the chunk-pair protocol of First
 * Responder (USENIX ATC'21, section 4) applied to block I/O (the write, the
 * lookup, the fill, the discard). See fr-core.h for the contracts and docs/protocol.md
 * for every state transition, its persist points and what recovery makes of
 * each intermediate state.
 *
 * A write to origin chunk k goes to the free chunk F of k's slot; the other
 * chunk O (if valid) keeps its data. In fence-separated steps:
 *   0. displace a clean chunk if the slot is full (it is on the origin);
 *   1. clear N on O, place the data (old sectors of k copied from O when the
 *      write is partial) and F's seq and sector words;
 *   2. commit F: key k, V N D (and INCOMPLETE for a multi-chunk write);
 *   3. multi-chunk only: clear INCOMPLETE on every member;
 *   4. drop the superseded copy of k in O, if there was one.
 * Only step 2 (or 3) changes what a reader sees, in one atomic word per chunk.
 * fr_write() runs them as write_evict(), write_prepare(), write_commit(),
 * write_complete() and write_drop_old(); writeback (fr-wb.c) and recovery
 * (fr-recover.c) are split the same way, one function per step (wb_finish(),
 * wb_clear()) or pass.
 */
#include "fr-tags.h"

/* Sectors [first, first + count) of a chunk; count >= 1. */
static u64 sector_mask(u32 first, u32 count)
{
	return GENMASK_ULL(first + count - 1, first);
}

enum plan {
	PLAN_ROOM,		/* a free chunk is there */
	PLAN_EVICT,		/* *victim is clean: drop it to make room */
	PLAN_NEED_CLEAN,	/* *victim is dirty: write it back first */
	PLAN_BYPASS,		/* no chunk of the slot can be written */
	PLAN_PINNED,		/* the chunk to write is pinned: wait */
};

/*
 * The free chunk a write into slot s uses: the first that is neither bad
 * nor valid and not pinned, else the last that is neither bad nor valid.
 * (Pinned and invalid: a copy a write superseded or a discard dropped while
 * writeback reads it.) With none free, the last chunk that is not bad: a
 * write plans first and never asks then.
 */
static fr_pchunk_t free_chunk(const struct fr_cache *c, fr_slot_t s)
{
	fr_pchunk_t p, pick = slot_chunk(c, s, c->geo.ways - 1);
	bool picked_free = false;
	u32 i;

	for (i = 0; i < c->geo.ways; i++) {
		p = slot_chunk(c, s, i);
		if (fr_chunk_bad(c, p))
			continue;
		if (tag_commit(c, p) & FR_TAG_VALID) {
			if (!picked_free)
				pick = p;
			continue;
		}
		if (!fr_chunk_pinned(c, p))
			return p;
		pick = p;
		picked_free = true;
	}
	return pick;
}

/*
 * Whether chunk p, which a write or fill would store into, is pinned: its
 * data is the source of an origin write in flight, which would carry
 * whatever the store left there to the origin sectors of the key it held
 * (unless the stage copied it).
 */
static bool plan_pinned(const struct fr_cache *c, fr_pchunk_t p)
{
	return !c->stage_copies && fr_chunk_pinned(c, p);
}

/* How many chunks of slot s are not bad; *last is the last of them. */
static u32 slot_good(const struct fr_cache *c, fr_slot_t s, fr_pchunk_t *last)
{
	u32 i, n = 0;

	if (!c->bad.chunks) {
		*last = slot_chunk(c, s, c->geo.ways - 1);
		return c->geo.ways;
	}
	for (i = 0; i < c->geo.ways; i++) {
		fr_pchunk_t p = slot_chunk(c, s, i);

		if (!fr_chunk_bad(c, p)) {
			*last = p;
			n++;
		}
	}
	return n;
}

/* Whether slot s has no PM chunk a write or a fill could use. */
static bool slot_bypass(const struct fr_cache *c, fr_slot_t s)
{
	fr_pchunk_t u;

	return fr_slot_tags_bad(c, s) || !slot_good(c, s, &u);
}

/*
 * A slot whose chunks are bad but one, u, cannot keep the old copy beside
 * the new one: whatever u holds leaves first (a clean copy is on the
 * origin; a dirty one is written back), and the new copy goes into u. After
 * a crash before its commit, u reads as free and the origin as the old
 * data, so the write stays atomic.
 */
static enum plan plan_slot_bad(const struct fr_cache *c, fr_pchunk_t u,
			       fr_pchunk_t *victim)
{
	u64 cu = tag_commit(c, u);

	*victim = u;
	if ((cu & FR_TAG_VALID) && (cu & FR_TAG_DIRTY))
		return PLAN_NEED_CLEAN;
	if (FR_STEP(plan_pinned, c, u))
		return PLAN_PINNED;
	return (cu & FR_TAG_VALID) ? PLAN_EVICT : PLAN_ROOM;
}

/*
 * Whether chunk p (commit cp) makes a better victim than chunk v (commit
 * cv): clean before dirty, then without N (N: the newest copy written into
 * the slot), then the older by seq. In a pair, two valid chunks of which
 * neither is the key's differ in N, so seq is read only in a set.
 */
static bool better_victim(const struct fr_cache *c, fr_pchunk_t p, u64 cp,
			  fr_pchunk_t v, u64 cv)
{
	if ((cp & FR_TAG_DIRTY) != (cv & FR_TAG_DIRTY))
		return !(cp & FR_TAG_DIRTY);
	if ((cp & FR_TAG_NEW) != (cv & FR_TAG_NEW))
		return !(cp & FR_TAG_NEW);
	return tag_seq(c, p) < tag_seq(c, v);
}

/*
 * Which chunk, if any, must leave key's slot so that key can be written,
 * every chunk that is not bad being valid. With two copies of key (only
 * between a crash and recovery), the one without N goes, even if dirty: the
 * newer holds its data. Else one that does not hold key (case 3-1/3-2, and
 * 3-3 with foreign chunks only): better_victim()'s choice.
 */
static enum plan plan_victim(const struct fr_cache *c, fr_ochunk_t key,
			     fr_slot_t s, fr_pchunk_t *victim)
{
	fr_pchunk_t p, v = slot_chunk(c, s, 0), old = v;
	u64 cp, cv = 0;
	u32 i, copies = 0;
	bool have = false;

	for (i = 0; i < c->geo.ways; i++) {
		p = slot_chunk(c, s, i);
		if (fr_chunk_bad(c, p))
			continue;
		cp = tag_commit(c, p);
		if (commit_holds(cp, key)) {
			/* The first copy without N, else the last. */
			if (!copies++ || (tag_commit(c, old) & FR_TAG_NEW))
				old = p;
			continue;
		}
		if (!have || better_victim(c, p, cp, v, cv)) {
			v = p;
			cv = cp;
			have = true;
		}
	}
	if (copies >= 2) {
		*victim = old;	/* superseded copy */
		return FR_STEP(plan_pinned, c, old) ? PLAN_PINNED : PLAN_EVICT;
	}
	*victim = v;
	if (cv & FR_TAG_DIRTY)
		return PLAN_NEED_CLEAN;
	return FR_STEP(plan_pinned, c, v) ? PLAN_PINNED : PLAN_EVICT;
}

/*
 * Which chunk, if any, must leave key's slot so that key can be written:
 * none while a chunk is free (the free chunk is where the write goes).
 */
static enum plan plan_slot(const struct fr_cache *c, fr_ochunk_t key,
			   fr_slot_t s, fr_pchunk_t *victim)
{
	fr_pchunk_t u;

	if (fr_slot_tags_bad(c, s))
		return PLAN_BYPASS;
	switch (slot_good(c, s, &u)) {
	case 0:
		return PLAN_BYPASS;
	case 1:
		return plan_slot_bad(c, u, victim);
	}
	/* A free chunk if there is one (free_chunk() falls back to a valid). */
	u = free_chunk(c, s);
	if (!fr_chunk_bad(c, u) && !(tag_commit(c, u) & FR_TAG_VALID)) {
		*victim = u;
		return FR_STEP(plan_pinned, c, u) ? PLAN_PINNED : PLAN_ROOM;
	}
	return plan_victim(c, key, s, victim);
}

/* The chunk of slot s holding key with sequence seq (the new copy). */
static fr_pchunk_t chunk_with_seq(const struct fr_cache *c, fr_slot_t s,
				  fr_ochunk_t key, u64 seq)
{
	fr_pchunk_t p;
	u32 i;

	for (i = 0; i < c->geo.ways - 1; i++) {
		p = slot_chunk(c, s, i);
		if (commit_holds(tag_commit(c, p), key) &&
		    tag_seq(c, p) == seq)
			return p;
	}
	return slot_chunk(c, s, c->geo.ways - 1);
}

/* Copy the sectors in mask from one PM chunk to another, MC-safely. */
static int copy_sectors(void *dst, const void *src, u64 mask)
{
	u8 bounce[FR_SECTOR_SIZE];
	u32 pos = 0, end, i;

	while (next_run(mask, &pos, &end)) {
		for (i = pos; i < end; i++) {
			size_t off = (size_t)i << FR_SECTOR_SHIFT;

			if (fr_pm_read(bounce, (const u8 *)src + off,
				       FR_SECTOR_SIZE))
				return -EIO;
			fr_pm_copy((u8 *)dst + off, bounce, FR_SECTOR_SIZE);
		}
		pos = end;
	}
	return 0;
}

/* Clear N on chunk p, if it is valid and has it: p is no longer the newer. */
static void drop_new_flag(struct fr_cache *c, fr_pchunk_t p)
{
	u64 commit = tag_commit(c, p);

	if ((commit & FR_TAG_VALID) && (commit & FR_TAG_NEW))
		set_commit(c, p, commit & ~(u64)FR_TAG_NEW);
}

/* One write, as planned and then carried out step by step. */
struct write_op {
	struct fr_cache *c;
	u64 sector, end;		/* the sectors [sector, end) */
	u64 first, last;		/* the origin chunks they cover */
	u64 slot0;			/* first's slot; the others follow it */
	u64 seq;
	u8 flags;			/* of the new copies' commit words */
	bool group;			/* a multi-chunk write */
	bool evict;			/* a clean chunk must make room */
	bool superseded;		/* an older copy must be dropped */
	fr_payload_fn payload;
	void *arg;
	struct fr_write_result *res;
};

/*
 * Chunk k's slot. A write lies within one region, whose chunks are placed in
 * consecutive slots (mod nr_slots): computed once per write, not per use.
 */
static fr_slot_t write_slot(const struct write_op *w, u64 k)
{
	u64 s = w->slot0 + (k - w->first);

	return to_slot(s >= w->c->geo.nr_slots ? s - w->c->geo.nr_slots : s);
}

/* The sectors of chunk k that w writes: cnt of them from off on. */
static void write_span(const struct write_op *w, u64 k, u32 *off, u32 *cnt)
{
	const struct fr_geometry *g = &w->c->geo;
	u64 first = fr_first_sector(g, to_ochunk(k));
	u64 from = max(w->sector, first);
	u64 to = min(w->end, first + g->chunk_sectors);

	*off = from - first;
	*cnt = to - from;
}

/*
 * Whether chunk k's slot is lost, or holds a copy of k on a bad chunk of
 * which w leaves sectors that would have to be merged into the new copy:
 * either way w cannot be carried out.
 */
static bool write_unreadable(const struct write_op *w, u64 k)
{
	const struct fr_cache *c = w->c;
	fr_slot_t s = write_slot(w, k);
	u32 off, cnt, i;
	u64 mask;

	if (fr_slot_lost(c, s))
		return true;
	if (fr_slot_tags_bad(c, s))
		return false;
	write_span(w, k, &off, &cnt);
	mask = sector_mask(off, cnt);
	for (i = 0; i < c->geo.ways; i++) {
		fr_pchunk_t p = slot_chunk(c, s, i);

		if (fr_chunk_bad(c, p) &&
		    commit_holds(tag_commit(c, p), to_ochunk(k)) &&
		    (tag_sectors(c, p) & ~mask))
			return true;
	}
	return false;
}

/*
 * Plan every slot before changing anything: FR_WRITE_FAILED (-EIO) if a
 * slot's unreadable PM is in the way, FR_WRITE_BYPASS (naming the chunk) if
 * a slot can hold nothing, FR_WRITE_NEED_CLEAN (naming the victim) if a
 * dirty chunk is in the way, FR_WRITE_PINNED (naming it) if the chunk to
 * store into is pinned, else FR_WRITE_DONE: it can be written.
 */
static enum fr_write_outcome write_plan(struct write_op *w)
{
	fr_pchunk_t victim;
	u64 k;

	w->group = w->first != w->last;
	w->flags = FR_TAG_VALID | FR_TAG_NEW | FR_TAG_DIRTY |
		   (w->group ? FR_TAG_INCOMPLETE : 0);
	/* Before any cleaning: what cannot be written here at all. */
	for (k = w->first; k <= w->last; k++) {
		if (write_unreadable(w, k)) {
			w->res->error = -EIO;
			return FR_WRITE_FAILED;
		}
		if (slot_bypass(w->c, write_slot(w, k))) {
			w->res->bypass = k;
			return FR_WRITE_BYPASS;
		}
	}
	for (k = w->first; k <= w->last; k++) {
		enum plan p = plan_slot(w->c, to_ochunk(k), write_slot(w, k),
					&victim);

		if (p == PLAN_NEED_CLEAN) {
			w->res->victim = victim;
			return FR_WRITE_NEED_CLEAN;
		}
		if (p == PLAN_PINNED) {
			w->res->victim = victim;
			return FR_WRITE_PINNED;
		}
		w->evict |= p == PLAN_EVICT;
	}
	return FR_WRITE_DONE;
}

/* Step 0: displace the clean chunks in the way; durable before reuse. */
static void write_evict(struct write_op *w)
{
	fr_pchunk_t victim;
	u64 k;

	for (k = w->first; k <= w->last; k++) {
		if (plan_slot(w->c, to_ochunk(k), write_slot(w, k),
			      &victim) == PLAN_EVICT) {
			set_commit(w->c, victim, 0);
			w->res->evictions++;
		}
	}
	fr_pm_fence();
}

/*
 * Clear N on the chunks of slot s but f: f's copy will be the slot's
 * newest. (One store: at most one chunk of a slot has N.)
 */
static void drop_new_flags(struct fr_cache *c, fr_slot_t s, fr_pchunk_t f)
{
	u32 i;

	for (i = 0; i < c->geo.ways; i++) {
		fr_pchunk_t p = slot_chunk(c, s, i);

		if (from_pchunk(p) != from_pchunk(f))
			FR_STEP(drop_new_flag, c, p);
	}
}

/* The chunk of slot s but f that holds key, if one does (else false). */
static bool other_copy(const struct fr_cache *c, fr_slot_t s, fr_pchunk_t f,
		       fr_ochunk_t key, fr_pchunk_t *o)
{
	u32 i;

	for (i = 0; i < c->geo.ways; i++) {
		fr_pchunk_t p = slot_chunk(c, s, i);

		if (from_pchunk(p) != from_pchunk(f) &&
		    commit_holds(tag_commit(c, p), key)) {
			*o = p;
			return true;
		}
	}
	return false;
}

/*
 * Step 1 for chunk k, into its slot's free chunk f: N off the slot's other
 * chunks; the old copy's sectors that the write does not cover, the
 * payload, and f's seq and sector words.
 */
static int prepare_chunk(struct write_op *w, u64 k, fr_pchunk_t f)
{
	struct fr_cache *c = w->c;
	fr_slot_t s = write_slot(w, k);
	u8 *dst = fr_chunk_data(c, f);
	u64 held = 0, mask;
	fr_pchunk_t o = f;
	u32 off, cnt;
	int r;

	write_span(w, k, &off, &cnt);
	mask = FR_STEP(sector_mask, off, cnt);
	if (other_copy(c, s, f, to_ochunk(k), &o)) {
		held = tag_sectors(c, o);
		w->res->hits++;
		w->superseded = true;
	}
	drop_new_flags(c, s, f);
	if (held & ~mask) {
		r = copy_sectors(dst, fr_chunk_data(c, o), held & ~mask);
		if (r)
			return r;
	}
	w->payload(w->arg, dst + ((size_t)off << FR_SECTOR_SHIFT), cnt);
	fr_pm_store8(&c->tags[from_pchunk(f)].seq, w->seq);
	fr_pm_store8(&c->tags[from_pchunk(f)].sectors, held | mask);
	w->res->chunks++;
	return 0;
}

/* Step 1: every chunk's new copy placed, durable before any commit. */
static int write_prepare(struct write_op *w)
{
	u64 k;
	int r;

	w->seq = (u64)atomic64_inc_return(&w->c->next_seq);
	for (k = w->first; k <= w->last; k++) {
		r = prepare_chunk(w, k, free_chunk(w->c, write_slot(w, k)));
		if (r)
			return r;
	}
	fr_pm_fence();
	return 0;
}

/* Step 2: commit. From here on each chunk reads as the new data. */
static void write_commit(struct write_op *w)
{
	u64 k;

	for (k = w->first; k <= w->last; k++)
		set_commit(w->c, free_chunk(w->c, write_slot(w, k)),
			   fr_commit_word(k, w->flags));
	fr_pm_fence();
}

/* The chunk holding k's copy written by w (its slot's other may too). */
static fr_pchunk_t written_chunk(const struct write_op *w, u64 k)
{
	return chunk_with_seq(w->c, write_slot(w, k), to_ochunk(k), w->seq);
}

/* Step 3, multi-chunk only: the group is complete once every member is. */
static void write_complete(struct write_op *w)
{
	u64 k;

	for (k = w->first; k <= w->last; k++) {
		fr_pchunk_t f = written_chunk(w, k);

		set_commit(w->c, f, tag_commit(w->c, f) &
				    ~(u64)FR_TAG_INCOMPLETE);
	}
	fr_pm_fence();
}

/* Step 4: drop the superseded copies. */
static void write_drop_old(struct write_op *w)
{
	fr_pchunk_t o;
	u64 k;

	for (k = w->first; k <= w->last; k++)
		if (other_copy(w->c, write_slot(w, k), written_chunk(w, k),
			       to_ochunk(k), &o))
			set_commit(w->c, o, 0);
	fr_pm_fence();
}

enum fr_write_outcome fr_write(struct fr_cache *c, u64 sector, u32 nr_sectors,
			       fr_payload_fn payload, void *arg,
			       struct fr_write_result *res)
{
	const struct fr_geometry *g = &c->geo;
	struct write_op w = {
		.c = c, .sector = sector, .end = sector + nr_sectors,
		.payload = payload, .arg = arg, .res = res,
	};
	enum fr_write_outcome out;

	memset(res, 0, sizeof(*res));
	res->error = -EINVAL;
	if (!nr_sectors || sector >= g->origin_sectors ||
	    nr_sectors > g->origin_sectors - sector)
		return FR_WRITE_FAILED;
	w.first = sector >> g->chunk_shift;
	w.last = (w.end - 1) >> g->chunk_shift;
	if (w.first >> g->region_shift != w.last >> g->region_shift)
		return FR_WRITE_FAILED;
	w.slot0 = from_slot(fr_slot_of(g, to_ochunk(w.first)));
	res->error = 0;

	out = FR_STEP(write_plan, &w);
	if (out != FR_WRITE_DONE)
		return out;
	if (w.evict)
		FR_STEP(write_evict, &w);
	res->error = FR_STEP(write_prepare, &w);
	if (res->error)
		return FR_WRITE_FAILED;
	FR_STEP(write_commit, &w);
	if (w.group)
		FR_STEP(write_complete, &w);
	if (w.superseded)
		FR_STEP(write_drop_old, &w);
	return FR_WRITE_DONE;
}

static bool lookup_in_slot(const struct fr_cache *c, fr_ochunk_t key,
			   fr_slot_t s, struct fr_hit *hit)
{
	unsigned int i;

	if (fr_slot_tags_bad(c, s)) {
		if (!fr_slot_lost(c, s))
			return false;
		/* It may hold any of the chunk's sectors: all unreadable. */
		hit->pchunk = slot_chunk(c, s, 0);
		hit->sectors = fr_chunk_mask(&c->geo, key);
		hit->data = NULL;
		hit->unreadable = true;
		return true;
	}
	for (i = 0; i < c->geo.ways; i++) {
		fr_pchunk_t p = slot_chunk(c, s, i);

		if (commit_holds(tag_commit(c, p), key)) {
			hit->pchunk = p;
			hit->sectors = tag_sectors(c, p);
			hit->data = fr_chunk_data(c, p);
			hit->unreadable = fr_chunk_bad(c, p);
			return true;
		}
	}
	return false;
}

bool fr_lookup(const struct fr_cache *c, fr_ochunk_t key, struct fr_hit *hit)
{
	return lookup_in_slot(c, key, fr_slot_of(&c->geo, key), hit);
}

/*
 * Where a fill goes: the write's plan (a step of its own for the simulator),
 * except that a fill never stores into a pinned chunk, even where a write
 * may (c->stage_copies): a write sent around PM pins its slot so that no
 * fill installs what it read from the origin before that write landed
 * (fr-around.c).
 */
static enum plan fill_plan(const struct fr_cache *c, fr_ochunk_t key,
			   fr_slot_t s, fr_pchunk_t *victim)
{
	enum plan p = plan_slot(c, key, s, victim);

	/* (Evicted, *victim is where the fill goes.) */
	if ((p == PLAN_ROOM || p == PLAN_EVICT) && fr_chunk_pinned(c, *victim))
		return PLAN_PINNED;
	return p;
}

int fr_fill(struct fr_cache *c, fr_ochunk_t key, fr_payload_fn payload,
	    void *arg)
{
	const struct fr_geometry *g = &c->geo;
	fr_slot_t s = fr_slot_of(g, key);
	fr_pchunk_t f, victim;
	struct fr_hit hit;
	u64 mask, seq;

	if (from_ochunk(key) >= g->origin_chunks ||
	    lookup_in_slot(c, key, s, &hit))
		return 0;
	switch (FR_STEP(fill_plan, c, key, s, &victim)) {
	case PLAN_NEED_CLEAN:
	case PLAN_BYPASS:
	case PLAN_PINNED:
		return 0;	/* never write back to make room for clean data */
	case PLAN_EVICT:
		set_commit(c, victim, 0);
		fr_pm_fence();
		break;
	case PLAN_ROOM:
		break;
	}
	f = free_chunk(c, s);
	drop_new_flags(c, s, f);
	mask = fr_chunk_mask(g, key);
	seq = (u64)atomic64_inc_return(&c->next_seq);
	payload(arg, fr_chunk_data(c, f), hweight64(mask));
	fr_pm_store8(&c->tags[from_pchunk(f)].seq, seq);
	fr_pm_store8(&c->tags[from_pchunk(f)].sectors, mask);
	fr_pm_fence();
	set_commit(c, f, fr_commit_word(from_ochunk(key),
					FR_TAG_VALID | FR_TAG_NEW));
	fr_pm_fence();
	return 1;
}

bool fr_can_fill(const struct fr_cache *c, fr_ochunk_t key)
{
	fr_slot_t s = fr_slot_of(&c->geo, key);
	struct fr_hit hit;
	fr_pchunk_t victim;
	enum plan p;

	if (from_ochunk(key) >= c->geo.origin_chunks ||
	    lookup_in_slot(c, key, s, &hit))
		return false;
	p = fill_plan(c, key, s, &victim);
	return p == PLAN_ROOM || p == PLAN_EVICT;
}

/*
 * Whether a discard of [sector, end) drops the copy of key committed as
 * commit: every copy the range covers whole, and a clean copy it covers in
 * part, because the origin's copy of the discarded sectors is about to
 * change and a clean copy must equal the origin. A dirty copy covered in
 * part stays: its other sectors are on PM only.
 */
static bool discard_drops(const struct fr_geometry *g, fr_ochunk_t key,
			  u64 commit, u64 sector, u64 end)
{
	u64 first = fr_first_sector(g, key);
	u64 chunk_end = min(first + g->chunk_sectors, g->origin_sectors);

	if (first >= end || chunk_end <= sector)
		return false;
	return (first >= sector && chunk_end <= end) ||
	       !(commit & FR_TAG_DIRTY);
}

/*
 * Whether a discard's slot walk drops a valid copy: the same rule as the
 * range's (a step of its own: the walk meets every key, not only those of
 * the range).
 */
static bool walk_drops(const struct fr_geometry *g, u64 commit, u64 sector,
		       u64 end)
{
	return FR_STEP(discard_drops, g, to_ochunk(fr_commit_key(commit)),
		       commit, sector, end);
}

u64 fr_discard_slots(struct fr_cache *c, fr_slot_t first, u64 nr,
		     u64 sector, u64 nr_sectors)
{
	const struct fr_geometry *g = &c->geo;
	u64 end, s, dropped = 0;
	unsigned int i;

	if (sector >= g->origin_sectors)
		return 0;
	end = nr_sectors > g->origin_sectors - sector ? g->origin_sectors :
	      sector + nr_sectors;
	for (s = from_slot(first); s < from_slot(first) + nr &&
	     s < g->nr_slots; s++) {
		if (fr_slot_tags_bad(c, to_slot(s)))
			continue;
		for (i = 0; i < c->geo.ways; i++) {
			fr_pchunk_t p = slot_chunk(c, to_slot(s), i);
			u64 commit = tag_commit(c, p);

			if ((commit & FR_TAG_VALID) &&
			    FR_STEP(walk_drops, g, commit, sector, end)) {
				set_commit(c, p, 0);
				dropped++;
			}
		}
	}
	if (dropped)
		fr_pm_fence();
	return dropped;
}

u64 fr_discard(struct fr_cache *c, u64 sector, u64 nr_sectors)
{
	const struct fr_geometry *g = &c->geo;
	u64 end, k, dropped = 0;
	unsigned int i;

	if (!nr_sectors || sector >= g->origin_sectors)
		return 0;
	end = nr_sectors > g->origin_sectors - sector ? g->origin_sectors :
	      sector + nr_sectors;
	for (k = sector >> g->chunk_shift; k <= (end - 1) >> g->chunk_shift;
	     k++) {
		fr_ochunk_t key = to_ochunk(k);
		fr_slot_t s = fr_slot_of(g, key);

		if (fr_slot_tags_bad(c, s))
			continue;
		for (i = 0; i < c->geo.ways; i++) {
			fr_pchunk_t p = slot_chunk(c, s, i);
			u64 commit = tag_commit(c, p);

			if (commit_holds(commit, key) &&
			    FR_STEP(discard_drops, g, key, commit, sector,
				    end)) {
				set_commit(c, p, 0);
				dropped++;
			}
		}
	}
	if (dropped)
		fr_pm_fence();
	return dropped;
}

u64 fr_forget_unreadable(struct fr_cache *c, fr_slot_t first, u64 nr)
{
	u64 s, n = 0;
	u32 i;

	for (s = from_slot(first); s < from_slot(first) + nr &&
	     s < c->geo.nr_slots; s++) {
		if (fr_slot_lost(c, to_slot(s))) {
			clear_bit(s, c->bad.lost);
			n++;
			continue;
		}
		if (fr_slot_tags_bad(c, to_slot(s)))
			continue;
		for (i = 0; i < c->geo.ways; i++) {
			fr_pchunk_t p = slot_chunk(c, to_slot(s), i);

			if (fr_chunk_bad(c, p) &&
			    (tag_commit(c, p) & FR_TAG_VALID)) {
				set_commit(c, p, 0);
				n++;
			}
		}
	}
	fr_pm_fence();
	return n;
}

u64 fr_count_valid(const struct fr_cache *c)
{
	return atomic64_read(&c->nr_valid);
}

u64 fr_count_dirty(const struct fr_cache *c)
{
	return atomic64_read(&c->nr_dirty);
}
