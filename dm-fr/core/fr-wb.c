// SPDX-License-Identifier: GPL-2.0-only
/*
 * The writeback protocol: how a dirty copy on PM reaches the origin and
 * becomes clean. A batch pins each dirty chunk it takes and stages its held
 * sectors (stage op), submits them to the origin (submit op), waits for
 * those writes and flushes the origin (flush op), then clears the dirty
 * flag of every chunk whose commit word is still the one staged and unpins
 * it (wb_clear()), and ends (wb_finish()). Which chunks a batch takes is its
 * scan (enum fr_wb_scan). See fr-core.h for the ops' contracts and
 * docs/protocol.md for the persist points and the pins; the write path is
 * fr-slot.c.
 */
#include "fr-tags.h"

/*
 * A batch in the making: the snaps of the chunks it staged, and the span
 * of chunks it is staging, with the snap of each one staged (wb_span()).
 */
#define FR_WB_NO_SNAP	0xffff

struct wb_batch {
	struct fr_wb_snap *snaps;
	u32 n;				/* staged: snaps[0 .. n) */
	u64 base;			/* the span: chunks base .. + FR_WB_SPAN */
	u16 snap[FR_WB_SPAN];		/* index into snaps, or FR_WB_NO_SNAP */
};

/*
 * The snap of chunk q that the batch holds, or NULL. A batch stages every
 * chunk it takes of a slot within one span (fr_writeback_batch()), so
 * the span's index is all there is to look at.
 */
static const struct fr_wb_snap *staged(const struct wb_batch *b,
				       fr_pchunk_t q)
{
	u64 i = from_pchunk(q) - b->base;

	if (from_pchunk(q) < b->base || i >= FR_WB_SPAN ||
	    b->snap[i] == FR_WB_NO_SNAP)
		return NULL;
	return &b->snaps[b->snap[i]];
}

/*
 * Whether the batch holds another copy of the key that chunk p holds (its
 * commit word). Both copies of a key share a slot.
 */
static bool staged_copy(const struct fr_cache *c, const struct wb_batch *b,
			fr_pchunk_t p, u64 commit)
{
	fr_slot_t s = slot_of(c, p);
	const struct fr_wb_snap *snap;
	u32 i;

	for (i = 0; i < c->geo.ways; i++) {
		fr_pchunk_t q = slot_chunk(c, s, i);

		if (from_pchunk(q) == from_pchunk(p))
			continue;
		snap = staged(b, q);
		if (snap && fr_commit_key(snap->commit) ==
			    fr_commit_key(commit))
			return true;
	}
	return false;
}

/*
 * The pin rule (docs/protocol.md, "Required serialization"). An origin write
 * reads its chunk's data from PM until it completes, so the chunk is pinned
 * from its stage until the batch ends: no write or fill stores into it
 * (plan_pinned()). Two origin writes of one slot's data must never be in
 * flight at once (they land in any order), so a chunk is not pinned while
 * another stage has a chunk of its slot pinned. The batch's own pins on
 * the slot's other chunks are no other's (staged()). Without c->pinned (a
 * caller with no concurrent writers) nothing is pinned. Called under p's
 * slot lock.
 */
static bool pin_chunk(struct fr_cache *c, fr_pchunk_t p,
		      const struct wb_batch *b)
{
	fr_slot_t s = slot_of(c, p);
	u32 i;

	if (!c->pinned)
		return true;
	if (test_bit(from_pchunk(p), c->pinned))
		return false;
	for (i = 0; i < c->geo.ways; i++) {
		fr_pchunk_t q = slot_chunk(c, s, i);

		if (from_pchunk(q) != from_pchunk(p) &&
		    test_bit(from_pchunk(q), c->pinned) && !staged(b, q))
			return false;
	}
	set_bit(from_pchunk(p), c->pinned);
	return true;
}

/* Once no origin write of p's data is in flight any more. */
static void unpin_chunk(struct fr_cache *c, fr_pchunk_t p)
{
	if (c->pinned)
		clear_bit(from_pchunk(p), c->pinned);
}

/* Unpin the n chunks staged, each under its slot's lock. */
static void unpin_batch(struct fr_cache *c, const struct fr_wb_snap *snaps,
			u32 n, const struct fr_wb_ops *ops, void *ctx)
{
	u32 i;

	for (i = 0; i < n; i++) {
		fr_slot_t slot = slot_of(c, snaps[i].pchunk);

		ops->lock(ctx, slot);
		unpin_chunk(c, snaps[i].pchunk);
		ops->unlock(ctx, slot);
	}
}

/* What stage_chunk() did with a dirty chunk. */
enum stage_result {
	STAGED,			/* its held sectors are staged, as snaps[n] */
	STAGE_CLEAN,		/* no longer dirty: nothing to stage */
	STAGE_ENDS_BATCH,	/* the batch must end before it (see below) */
	STAGE_UNREADABLE,	/* its PM data cannot be read: it stays dirty */
	STAGE_BUSY,		/* another stage has its slot pinned */
	STAGE_FAILED,		/* the stage op failed: *error */
};

/* Pin dirty chunk p and stage its held sectors as the batch's next snap. */
static enum stage_result stage_chunk(struct fr_cache *c, fr_pchunk_t p,
				     const struct wb_batch *b,
				     const struct fr_wb_ops *ops, void *ctx,
				     int *error)
{
	const struct fr_geometry *g = &c->geo;
	u64 commit = tag_commit(c, p), first, mask;
	const u8 *data = fr_chunk_data(c, p);
	struct fr_wb_snap *snap = &b->snaps[b->n];
	u32 pos = 0, end;
	int r;

	if (!(commit & FR_TAG_VALID) || !(commit & FR_TAG_DIRTY))
		return STAGE_CLEAN;
	/*
	 * A write moved the key into p after the batch staged the older copy
	 * in another chunk of p's slot. Both versions would go to the same
	 * origin sectors in one submit, and overlapping writes in flight land
	 * in any order: the older could win while p, unchanged, is cleaned.
	 * The next batch, which starts at p, writes p after this one is on
	 * the origin.
	 */
	if (FR_STEP(staged_copy, c, b, p, commit))
		return STAGE_ENDS_BATCH;
	if (fr_chunk_bad(c, p)) {
		/* Known unreadable: not even tried. It stays dirty. */
		if (ops->skip)
			ops->skip(ctx, p);
		return STAGE_UNREADABLE;
	}
	if (!FR_STEP(pin_chunk, c, p, b))
		return STAGE_BUSY;
	first = fr_first_sector(g, to_ochunk(fr_commit_key(commit)));
	mask = tag_sectors(c, p) &
	       fr_chunk_mask(g, to_ochunk(fr_commit_key(commit)));
	while (next_run(mask, &pos, &end)) {
		r = ops->stage(ctx, first + pos,
			       data + ((size_t)pos << FR_SECTOR_SHIFT),
			       end - pos);
		if (r) {
			/* Nothing of p is sent: the stage dropped its runs. */
			unpin_chunk(c, p);
			if (r == -EHWPOISON)
				return STAGE_UNREADABLE;
			*error = r;
			return STAGE_FAILED;
		}
		pos = end;
	}
	snap->pchunk = p;
	snap->commit = commit;
	snap->seq = tag_seq(c, p);
	return STAGED;
}

/* Clear dirty unless the chunk was rewritten since it was staged. */
static bool clear_dirty(struct fr_cache *c, const struct fr_wb_snap *snap)
{
	u64 commit = tag_commit(c, snap->pchunk);

	if (commit != snap->commit || tag_seq(c, snap->pchunk) != snap->seq)
		return false;
	set_commit(c, snap->pchunk, commit & ~(u64)FR_TAG_DIRTY);
	return true;
}

/*
 * Step 4: under each slot's lock, clear dirty where nothing changed, and
 * unpin (the origin writes are done).
 */
static int wb_clear(struct fr_cache *c, const struct fr_wb_snap *snaps, u32 n,
		    const struct fr_wb_ops *ops, void *ctx)
{
	int cleaned = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		fr_slot_t slot = slot_of(c, snaps[i].pchunk);

		ops->lock(ctx, slot);
		cleaned += FR_STEP(clear_dirty, c, &snaps[i]);
		unpin_chunk(c, snaps[i].pchunk);
		ops->unlock(ctx, slot);
	}
	fr_pm_fence();
	return cleaned;
}

/*
 * Steps 2 and 3, then 4: the origin must hold the data durably before PM
 * may forget it. Submit waits for every origin write, failed or not, so on
 * an error the chunks are unpinned and stay dirty.
 */
static int wb_finish(struct fr_cache *c, const struct fr_wb_snap *snaps,
		     u32 n, const struct fr_wb_ops *ops, void *ctx)
{
	int r = ops->submit(ctx);

	if (!r)
		r = ops->flush(ctx);
	if (r) {
		unpin_batch(c, snaps, n, ops, ctx);
		return r;
	}
	return FR_STEP(wb_clear, c, snaps, n, ops, ctx);
}

/*
 * Whether a batch of this scan wraps round to chunk 0 at the end (a step of
 * its own: the mutant SWEEP_WRAPS makes a sweep wrap).
 */
static bool batch_wraps(const struct fr_cache *c, enum fr_wb_scan scan,
			u64 end)
{
	return scan != FR_WB_TO_END;
}

/*
 * The first chunk from pos on whose slot has every chunk dirty. A slot's
 * chunks are ways adjacent bits of one word (ways divides BITS_PER_LONG),
 * so a word's full slots are the AND of its bits shifted down by 0 ..
 * ways - 1, on the bits that start a slot; spread back over the slot.
 */
static u64 find_next_full(const struct fr_cache *c, u64 pos)
{
	const u32 ways = c->geo.ways;
	/* The first bit of each slot: 0x5555... for a pair. */
	const unsigned long starts = ~0UL / ((1UL << ways) - 1);
	u64 nr = c->geo.nr_chunks;
	u32 sh;

	while (pos < nr) {
		u64 base = pos & ~(u64)(BITS_PER_LONG - 1);
		unsigned long w, full;

		w = READ_ONCE(c->dirty_bits[base / BITS_PER_LONG]);
		full = w;
		for (sh = 1; sh < ways; sh <<= 1)
			full &= full >> sh;
		full &= starts;
		for (sh = 1; sh < ways; sh <<= 1)
			full |= full << sh;
		full &= ~0UL << (pos - base);
		if (full)
			return min_t(u64, nr, base + __ffs(full));
		pos = base + BITS_PER_LONG;
	}
	return nr;
}

/*
 * A stage failed with n chunks staged before it: they were never flushed
 * (some may be on their way to the origin), so they stay dirty; the error
 * is the batch's.
 */
static int batch_failed(struct fr_cache *c, const struct fr_wb_snap *snaps,
			u32 n, const struct fr_wb_ops *ops, void *ctx,
			int error)
{
	/* What send started reads PM until it is done. */
	if (n && ops->wait)
		ops->wait(ctx);
	unpin_batch(c, snaps, n, ops, ctx);
	return error;
}

/* The first chunk of the scan from pos on, below end (end if none). */
static u64 next_candidate(const struct fr_cache *c, enum fr_wb_scan scan,
			  u64 pos, u64 end)
{
	u64 p = scan == FR_WB_FULL_SLOTS ? find_next_full(c, pos) :
		find_next_bit(c->dirty_bits, end, pos);

	return p < end ? p : end;
}

/* Whether candidate a goes before b: by key, then by position. */
static bool cand_before(const struct fr_wb_snap *a, const struct fr_wb_snap *b)
{
	if (a->seq != b->seq)
		return a->seq < b->seq;
	return from_pchunk(a->pchunk) < from_pchunk(b->pchunk);
}

static void cand_sift(struct fr_wb_snap *v, u32 i, u32 w)
{
	struct fr_wb_snap t;
	u32 k;

	while ((k = 2 * i + 1) < w) {
		if (k + 1 < w && cand_before(&v[k], &v[k + 1]))
			k++;
		if (!cand_before(&v[i], &v[k]))
			return;
		t = v[i];
		v[i] = v[k];
		v[k] = t;
		i = k;
	}
}

/* Heapsort: no memory beyond the candidates, and no recursion. */
static void cand_sort(struct fr_wb_snap *v, u32 w)
{
	struct fr_wb_snap t;
	u32 i;

	for (i = w / 2; i-- > 0;)
		cand_sift(v, i, w);
	while (w > 1) {
		w--;
		t = v[0];
		v[0] = v[w];
		v[w] = t;
		cand_sift(v, 0, w);
	}
}

/*
 * A span: the candidates of the scan from pos on within FR_WB_SPAN
 * chunks of pos's slot and below stop, at most room of them, into
 * b->snaps[b->n ..], each with its key (in .seq) as read now, without the
 * slot lock: only an order. Returns how many; *next is where the batch
 * goes on after it. A span holds whole slots: when room runs out inside
 * a slot, that slot's candidates are left to the next span, unless they
 * are all it has (then *split, and the batch ends after this span). So
 * every chunk of a slot that a batch stages is staged in one span, which
 * is what staged() reads.
 */
static u32 wb_span(const struct fr_cache *c, enum fr_wb_scan scan,
		     struct wb_batch *b, u64 pos, u64 stop, u32 room,
		     u64 *next, bool *split)
{
	struct fr_wb_snap *v = &b->snaps[b->n];
	u64 limit, p = pos;
	u32 w = 0, keep;

	b->base = pos & ~(u64)(c->geo.ways - 1);
	limit = b->base + FR_WB_SPAN < stop ? b->base + FR_WB_SPAN : stop;
	for (;;) {
		p = next_candidate(c, scan, p, stop);
		if (p >= limit || w == room)
			break;
		v[w].pchunk = to_pchunk(p);
		v[w].seq = fr_commit_key(tag_commit(c, to_pchunk(p)));
		w++;
		p++;
	}
	*next = p;
	if (p >= limit || !w ||
	    slot_of(c, to_pchunk(p)) != slot_of(c, v[w - 1].pchunk))
		return w;
	/* Room ran out inside a slot: leave the slot whole to the next. */
	for (keep = w; keep && slot_of(c, v[keep - 1].pchunk) ==
			       slot_of(c, to_pchunk(p)); keep--)
		;
	if (!keep) {
		*split = true;
		return w;
	}
	*next = from_pchunk(v[keep].pchunk);
	return keep;
}

/* The first position among a span's candidates v[0 .. w). */
static u64 cand_first(const struct fr_wb_snap *v, u32 w)
{
	u64 first = ~0ULL;
	u32 i;

	for (i = 0; i < w; i++)
		if (from_pchunk(v[i].pchunk) < first)
			first = from_pchunk(v[i].pchunk);
	return first;
}

/*
 * A batch stages its chunks a span at a time (wb_span()), each span
 * in the order of the origin chunks its copies hold, so that the stage's
 * buffers fill with runs of neighbouring origin chunks: in PM order a set's
 * chunks hold data of as many regions, and a buffer met a run of only as
 * many slots as it holds chunks of them.
 */
int fr_writeback_batch(struct fr_cache *c, enum fr_wb_scan scan, u64 *cursor,
		       u64 end, u32 max, struct fr_wb_snap *snaps,
		       const struct fr_wb_ops *ops, void *ctx)
{
	u64 nr = c->geo.nr_chunks, start = *cursor < nr ? *cursor : 0;
	bool wrap = FR_STEP(batch_wraps, c, scan, end);
	u64 pos = start, stop, next;
	bool wrapped = false, split = false, ended = false;
	struct wb_batch b = { .snaps = snaps };
	int error = 0;

	if (wrap || end > nr)
		end = nr;	/* a batch that wraps scans everything */
	if (!wrap && *cursor >= end) {
		*cursor = end;
		return 0;
	}
	if (max > FR_WB_NO_SNAP)
		max = FR_WB_NO_SNAP;	/* a span's index holds u16 */
	while (b.n < max && !split && !ended) {
		u32 w, i, n0 = b.n;

		/*
		 * Wrapped round, the batch stops at the slot it began in, so
		 * that no slot is in two of its spans.
		 */
		stop = wrapped ? start & ~(u64)(c->geo.ways - 1) : end;
		if (pos >= stop) {
			if (wrapped || !start || !wrap)
				break;
			wrapped = true;
			pos = 0;
			continue;
		}
		w = wb_span(c, scan, &b, pos, stop, max - b.n, &next, &split);
		memset(b.snap, 0xff, sizeof(b.snap));
		cand_sort(&snaps[n0], w);
		for (i = 0; i < w; i++) {
			fr_pchunk_t p = snaps[n0 + i].pchunk;
			fr_slot_t slot = slot_of(c, p);
			enum stage_result res;

			ops->lock(ctx, slot);
			res = FR_STEP(stage_chunk, c, p, &b, ops, ctx, &error);
			ops->unlock(ctx, slot);
			if (res == STAGED) {
				b.snap[from_pchunk(p) - b.base] = b.n++;
				if (ops->send)
					ops->send(ctx);
				continue;
			}
			if (res != STAGE_ENDS_BATCH && res != STAGE_FAILED)
				continue;
			/* The next batch starts at the first chunk not tried. */
			next = cand_first(&snaps[n0 + i], w - i);
			if (res == STAGE_FAILED) {
				*cursor = next;
				return FR_STEP(batch_failed, c, snaps, b.n, ops,
					       ctx, error);
			}
			ended = true;
			break;
		}
		pos = next;
	}
	*cursor = pos < end ? pos : wrap ? 0 : end;
	if (!b.n)
		return 0;

	return FR_STEP(wb_finish, c, snaps, b.n, ops, ctx);
}

int fr_writeback_chunk(struct fr_cache *c, fr_pchunk_t p,
		       struct fr_wb_snap *snap, const struct fr_wb_ops *ops,
		       void *ctx)
{
	fr_slot_t slot = slot_of(c, p);
	struct wb_batch b = { .snaps = snap };
	enum stage_result res;
	int error = 0;

	if (from_pchunk(p) >= c->geo.nr_chunks)
		return -EINVAL;
	b.base = from_pchunk(p);
	memset(b.snap, 0xff, sizeof(b.snap));
	ops->lock(ctx, slot);
	res = FR_STEP(stage_chunk, c, p, &b, ops, ctx, &error);
	ops->unlock(ctx, slot);
	switch (res) {
	case STAGED:
		return FR_STEP(wb_finish, c, snap, 1, ops, ctx);
	case STAGE_UNREADABLE:
		return -EHWPOISON;
	case STAGE_BUSY:
		return -EBUSY;
	case STAGE_FAILED:
		return error;
	default:
		return 0;	/* clean already (ENDS_BATCH needs a batch) */
	}
}
