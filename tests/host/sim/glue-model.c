// SPDX-License-Identifier: GPL-2.0-only
/*
 * The crash simulator's model of the kernel glue: what dm-fr's bio path,
 * writeback worker and table load do around the protocol core, run on the
 * simulated PM and origin.
 *
 * Writes retry on FR_WRITE_NEED_CLEAN after writing the victim back alone
 * (fr_writeback_chunk), or a multi-chunk write its victims' range of slots
 * (fr_writeback_range), beside a writeback batch between its stage and
 * flush unless the batch has the victim's slot pinned (the core's pin rule:
 * then they wait for the batch); a victim's own window can hold writes and
 * batches (INJ_VICTIM), which skip its slots; fills read a miss
 * from the origin; discards drop PM's copies and go on to the origin;
 * writeback goes through struct fr_wb_ops on the simulated origin, with
 * writes injected after the stage, between stages and after the submit, and
 * I/O errors injected where the op asks; restart runs recovery. Every PM
 * store is checked for its slot's lock (invariant 6). run_op() runs one op,
 * with its crash points, and a real crash in it when the op asks for one.
 * world_setup() formats a geometry's world: PM, origin, reference model.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "crashsim.h"

/* ---------------------------------------------------------------------- */
/* Origin I/O for writeback: struct fr_wb_ops on the simulated origin    */

/*
 * With --copy-stage (the main run) a stage copies the data into buf, as
 * the kernel does (fr-stage.c, target 1.8 and 1.13 on), and writes may store
 * into the chunks the core pinned (c->stage_copies). Without it, a stage
 * records where on PM each extent's data is (target 1.9 to 1.12): the
 * origin write reads PM when it is submitted, after the writes injected
 * after the stage, so a chunk reused while in flight sends its new data to
 * the old key's sectors (wb_submit checks).
 */
struct wbctx {
	struct { u64 sector; u32 nr; const u8 *src; } st[1024];
	u32 nst, used;
	u8 *buf;
	u32 cap_sectors;
	const struct op *inj;		/* writes to run inside the batch */
	bool staged_in_lock;		/* a stage since the last ops->lock */
	bool inj_done;			/* INJ_BETWEEN: the writes have run */
	u64 chunk;			/* the chunk being staged */
	u32 nchunks;			/* chunks this batch began to stage */
};

/*
 * The worker's batch, and a write's victims written back beside it: one
 * chunk alone, or a multi-chunk write's range of slots, at most
 * VICTIM_CHUNKS chunks a time (the kernel's victim stage size, scaled down).
 */
#define VICTIM_CHUNKS	4
static struct wbctx wb_batch, wb_victim;
static struct fr_wb_snap *wb_snaps, *victim_snaps;

/*
 * The core pins what a stage takes (S.c.pinned) until the stage's origin
 * writes are done: a batch skips a slot a victim has pinned; a victim
 * meeting a batch's pin gets -EBUSY and its write waits for the batch.
 * crashsim-mut --wb-race runs a core whose stages ignore each other's pins
 * on a buddy (and must fail).
 */
static bool in_victim;		/* a victim's writeback is between stage and clear */
/* A write around PM is between fr_around_begin() and its origin write. */
static bool in_around;
static u64 around_first, around_last;	/* its chunks */

static void exec_write(u64 sector, u32 nr, const struct op *vinj,
		       const struct op *around);
static void run_deferred(void);

/*
 * Slot locks. S.locked[slot] is LOCK_OPS while writeback holds it through
 * ops->lock, LOCK_CALLER while the simulator holds it around a core call
 * (as the kernel's bio path holds its stripes); S.exclusive while the
 * simulator has the whole cache (recovery).
 */
enum { LOCK_NONE, LOCK_OPS, LOCK_CALLER };

/*
 * Invariant 7, for pins: one changes only under its slot's lock. The core
 * reads a slot's pins more than once under the lock (a write picks the free
 * chunk when it places its data and again when it commits): a pin cleared
 * between two reads (a write around PM completing with no lock) makes it
 * commit a chunk it never wrote. Checked whenever a lock is taken or
 * released: a pin that differs from when its slot was last locked changed
 * while it was not.
 */
static void check_pin_locks(void)
{
	u64 p;

	if (S.exclusive)
		return;
	for (p = 0; p < S.c.geo.nr_chunks; p++) {
		bool now = test_bit(p, S.pinned);

		if (now == test_bit(p, S.pins_seen))
			continue;
		if (!S.locked[p >> S.c.geo.ways_shift])
			violation("chunk %llu %s without the lock of slot %llu",
				  (unsigned long long)p,
				  now ? "pinned" : "unpinned",
				  (unsigned long long)(p >> S.c.geo.ways_shift));
		if (now)
			set_bit(p, S.pins_seen);
		else
			clear_bit(p, S.pins_seen);
	}
}

/* The caller's locks for [sector, sector + nr): every slot it maps to. */
static void lock_range(u64 sector, u64 nr)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 k, end = sector + nr;

	check_pin_locks();

	if (end > g->origin_sectors)
		end = g->origin_sectors;
	for (k = sector >> g->chunk_shift; k << g->chunk_shift < end; k++) {
		u64 s = from_slot(fr_slot_of(g, to_ochunk(k)));

		if (S.locked[s] == LOCK_OPS)
			violation("slot %llu locked by the caller while writeback holds it",
				  (unsigned long long)s);
		S.locked[s] = LOCK_CALLER;
	}
}

static void unlock_range(u64 sector, u64 nr)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 k, end = sector + nr;

	check_pin_locks();

	if (end > g->origin_sectors)
		end = g->origin_sectors;
	for (k = sector >> g->chunk_shift; k << g->chunk_shift < end; k++)
		S.locked[from_slot(fr_slot_of(g, to_ochunk(k)))] = LOCK_NONE;
}

/* Invariant 7: a store to a slot's tags or data needs that slot's lock. */
static void live_store_hook(struct simpm *pm, u64 off, size_t len, void *arg)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 cb = (u64)g->chunk_sectors * SECT, p, first, last;

	(void)pm;
	(void)arg;
	if (S.exclusive)
		return;
	S.lock_checks++;
	if (off < g->tags_offset) {
		violation("PM store to the superblock (+%llu) outside format and recovery",
			  (unsigned long long)off);
		return;
	}
	if (off < g->data_offset) {
		first = (off - g->tags_offset) / sizeof(struct fr_tag_disk);
		last = (off + len - 1 - g->tags_offset) /
		       sizeof(struct fr_tag_disk);
	} else {
		first = (off - g->data_offset) / cb;
		last = (off + len - 1 - g->data_offset) / cb;
	}
	for (p = first; p <= last && p < g->nr_chunks; p++) {
		if (!S.locked[p >> g->ways_shift]) {
			violation("PM store to %s of chunk %llu without the lock of slot %llu",
				  off < g->data_offset ? "the tag" : "the data",
				  (unsigned long long)p,
				  (unsigned long long)(p >> g->ways_shift));
			return;
		}
	}
}

static void wb_lock(void *ctx, fr_slot_t slot)
{
	((struct wbctx *)ctx)->staged_in_lock = false;
	check_pin_locks();
	if (S.locked[from_slot(slot)]) {
		violation("slot %llu locked twice", (unsigned long long)from_slot(slot));
		return;
	}
	S.locked[from_slot(slot)] = LOCK_OPS;
}

static void run_injected(struct wbctx *w, u8 at);

static void wb_unlock(void *ctx, fr_slot_t slot)
{
	struct wbctx *w = ctx;

	check_pin_locks();
	if (S.locked[from_slot(slot)] != LOCK_OPS)
		violation("slot %llu unlocked but not locked",
			  (unsigned long long)from_slot(slot));
	S.locked[from_slot(slot)] = LOCK_NONE;
	/*
	 * INJ_BETWEEN: the writes run as soon as the batch has staged a
	 * chunk of the first injected write's slot, before it stages the
	 * next chunk (the slot's other chunk, often).
	 */
	if (w->inj && w->inj->inj_at == INJ_BETWEEN && !w->inj_done &&
	    w->staged_in_lock &&
	    from_slot(slot) == from_slot(fr_slot_of(&S.c.geo,
				fr_chunk_of_sector(&S.c.geo, w->inj->inj[0].sector)))) {
		w->inj_done = true;
		run_injected(w, INJ_BETWEEN);
	}
}

/* A chunk's first stage call: count it (FAIL_STAGE_LATE fails the second). */
static void wb_count_chunk(struct wbctx *w, const u8 *src)
{
	u64 chunk = (u64)(src - S.pm_view - S.c.geo.data_offset) /
		    ((u64)S.c.geo.chunk_sectors * SECT);

	if (chunk == w->chunk)
		return;
	w->chunk = chunk;
	w->nchunks++;
	if (!S.c.pinned || !test_bit(chunk, S.c.pinned))
		violation("chunk %llu staged, not pinned",
			  (unsigned long long)chunk);
}

/*
 * Before a write or a fill plans: in a slot with a bad chunk, a pinned
 * chunk is dirty. Its one usable chunk cannot be superseded or dropped
 * while in flight (no second chunk; discards exclude writeback), and the
 * core unpins as it clears, so the pin check on that chunk (plan_slot_bad)
 * is never what stops a store: a dirty victim is cleaned first. That is
 * why a core without that check is no mutant the simulator could catch;
 * this checks the reason on every state explored.
 */
static bool around_pinned(u64 p)
{
	u64 k;

	if (!in_around)
		return false;
	for (k = around_first; k <= around_last; k++)
		if (from_slot(fr_slot_of(&S.c.geo, to_ochunk(k))) ==
		    p >> S.c.geo.ways_shift)
			return true;
	return false;
}

/* Whether chunk p is the one chunk of its slot that is not bad. */
static bool only_good(u64 p)
{
	u64 base = p & ~(u64)(S.c.geo.ways - 1), q;

	if (test_bit(p, S.bad))
		return false;
	for (q = base; q < base + S.c.geo.ways; q++)
		if (q != p && !test_bit(q, S.bad))
			return false;
	return true;
}

/* The last chunk of slot s that is not bad (its first if all are). */
static u64 slot_good_chunk(fr_slot_t s)
{
	u64 base = from_slot(s) << S.c.geo.ways_shift, p, good = base;

	for (p = base; p < base + S.c.geo.ways; p++)
		if (!test_bit(p, S.bad))
			good = p;
	return good;
}

static void check_bad_slot_pins(void)
{
	u64 p;

	if (!S.bad)
		return;
	/* (A write around PM pins its slots whole, clean or not.) */
	for (p = 0; p < S.c.geo.nr_chunks; p++)
		if (only_good(p) && test_bit(p, S.c.pinned) &&
		    !test_bit(p, S.c.dirty_bits) && !around_pinned(p))
			violation("chunk %llu, the usable one of a slot with bad chunks, is pinned but not dirty",
				  (unsigned long long)p);
}

/* Between operations no origin write is in flight: nothing is pinned. */
static void check_unpinned(void)
{
	u64 p = find_next_bit(S.c.pinned, S.c.geo.nr_chunks, 0);

	if (p < S.c.geo.nr_chunks)
		violation("chunk %llu still pinned with no writeback in flight",
			  (unsigned long long)p);
}

static int wb_stage(void *vctx, u64 sector, const void *pm_src, u32 nr)
{
	struct wbctx *w = vctx;
	const u8 *src = pm_src;

	if (src >= S.pm_view && src < S.pm_view + S.pm_bytes)
		wb_count_chunk(w, src);

	if (S.fail == FAIL_STAGE && w == &wb_batch && !S.fail_done) {
		S.fail_done = true;
		return -EIO;
	}
	/*
	 * The second chunk's stage fails, the first staged before it (and
	 * maybe sent): the batch must end with both dirty, nothing cleaned.
	 */
	if (S.fail == FAIL_STAGE_LATE && w == &wb_batch && !S.fail_done &&
	    w->nchunks == 2) {
		S.fail_done = true;
		return -EIO;
	}
	/*
	 * A media error on the first chunk staged (its first run: nothing of
	 * it is staged yet, so there is nothing to drop): the core must skip
	 * that chunk and leave it dirty.
	 */
	if (S.fail == FAIL_STAGE_POISON && w == &wb_batch && !S.fail_done) {
		S.fail_done = true;
		S.poisoned_chunk = (u64)(src - S.pm_view - S.c.geo.data_offset) /
				   ((u64)S.c.geo.chunk_sectors * SECT);
		S.poisoned_seq = le64_to_cpu(S.c.tags[S.poisoned_chunk].seq);
		return -EHWPOISON;
	}
	if (src < S.pm_view || src + (size_t)nr * SECT > S.pm_view + S.pm_bytes ||
	    sector + nr > S.c.geo.origin_sectors || w->nst == ARRAY_LEN(w->st) ||
	    (S.copy_stage && w->used + nr > w->cap_sectors)) {
		violation("bad stage: sector %llu + %u", (unsigned long long)sector, nr);
		return -EINVAL;
	}
	if (S.copy_stage) {
		memcpy(w->buf + (size_t)w->used * SECT, src, (size_t)nr * SECT);
		src = w->buf + (size_t)w->used * SECT;
		w->used += nr;
	}
	w->staged_in_lock = true;
	w->st[w->nst].sector = sector;
	w->st[w->nst].nr = nr;
	w->st[w->nst].src = src;
	w->nst++;
	touch_range(sector, nr);
	return 0;
}

static void nested_batch(u64 from);
static void exec_fill(u64 key);

/* What an injected write around is (inj[i].around): no injections of its own. */
static const struct op inj_around_op = { .type = OP_WRITE, .around = 1 };

static void run_injected(struct wbctx *w, u8 at)
{
	u32 i;

	if (!w->inj || w->inj->inj_at != at)
		return;
	for (i = 0; i < S.c.geo.nr_slots; i++)
		if (S.locked[i])
			violation("writeback ran ops with slot %u locked", i);
	w->inj_done = true;
	for (i = 0; i < w->inj->ninj; i++) {
		if (!w->inj->inj[i].nr)
			nested_batch(w->inj->inj[i].sector); /* INJ_VICTIM */
		else if (w->inj->inj[i].nr == INJ_FILL_NR)
			exec_fill(w->inj->inj[i].sector);
		else
			exec_write(w->inj->inj[i].sector, w->inj->inj[i].nr,
				   NULL, NULL);
	}
}

/*
 * Two staged extents that overlap: the kernel submits them as separate bios,
 * in flight together, and the device may apply them in either order.
 */
static void check_overlap(const struct wbctx *w)
{
	u32 i, j;

	for (i = 0; i < w->nst; i++)
		for (j = i + 1; j < w->nst; j++)
			if (w->st[i].sector < w->st[j].sector + w->st[j].nr &&
			    w->st[j].sector < w->st[i].sector + w->st[i].nr) {
				violation("one submit writes sectors %llu+%u and %llu+%u, which overlap: their order on the origin is undefined",
					  (unsigned long long)w->st[i].sector, w->st[i].nr,
					  (unsigned long long)w->st[j].sector, w->st[j].nr);
				return;
			}
}

/*
 * What writeback sends to origin sector lba must be a version of lba: data
 * some write of lba left there (or the image's). A chunk reused while its
 * origin write was in flight sends another key's data (REUSE_PINNED).
 */
static void check_origin_write(u64 sector, const u8 *src, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++) {
		if (sector_op(src + (size_t)i * SECT, sector + i))
			continue;
		violation("writeback sends to origin sector %llu data that is no version of it (its chunk reused while the write was in flight?)",
			  (unsigned long long)(sector + i));
		return;
	}
}

static int wb_submit(void *vctx)
{
	struct wbctx *w = vctx;
	u32 i;

	run_injected(w, w == &wb_victim ? INJ_VICTIM : INJ_STAGED);
	check_overlap(w);
	if (S.fail == FAIL_SUBMIT && w == &wb_batch && !S.fail_done) {
		S.fail_done = true;
		w->nst = 0;
		w->used = 0;
		return -EIO;
	}
	for (i = 0; i < w->nst; i++) {
		check_origin_write(w->st[i].sector, w->st[i].src, w->st[i].nr);
		so_write(&S.org, w->st[i].sector, w->st[i].src, w->st[i].nr);
	}
	w->nst = 0;
	w->used = 0;
	run_injected(w, INJ_SUBMITTED);
	return 0;
}

static int wb_flush(void *vctx)
{
	crash_point("origin written, not yet flushed");
	if (S.fail == FAIL_FLUSH && vctx == &wb_batch && !S.fail_done) {
		/* The writes stay in the origin's cache, not durable. */
		S.fail_done = true;
		S.origin_unflushed_ok = true;
		return -EIO;
	}
	so_flush(&S.org);
	S.origin_unflushed_ok = false;
	return 0;
}

/*
 * The kernel sends full groups of staged chunks early (stage_send_ready);
 * the model sends nothing before submit, whose origin writes read PM then:
 * the later read is the harder case for the pins, and the data sent is the
 * same either way (the chunks are pinned).
 */
static void wb_send(void *vctx)
{
	(void)vctx;
}

/* Nothing was sent before submit: nothing to wait for. */
static void wb_wait(void *vctx)
{
	(void)vctx;
}

static const struct fr_wb_ops wb_ops = {
	.lock = wb_lock,
	.unlock = wb_unlock,
	.send = wb_send,
	.wait = wb_wait,
	.stage = wb_stage,
	.submit = wb_submit,
	.flush = wb_flush,
};

/* ---------------------------------------------------------------------- */
/* Operations                                                             */

struct payload_ctx {
	u32 id;
	u64 lba;
	u8 *buf;
};

static void payload_write(void *arg, void *pm_dst, u32 nr)
{
	struct payload_ctx *pc = arg;

	fill_pattern(pc->buf, pc->id, pc->lba, nr);
	fr_pm_copy(pm_dst, pc->buf, (size_t)nr * SECT);
	pc->lba += nr;
}

static void payload_copy(void *arg, void *pm_dst, u32 nr)
{
	struct payload_ctx *pc = arg;

	fr_pm_copy(pm_dst, pc->buf, (size_t)nr * SECT);
}

static u8 *payload_buf;

/* Which Figure 3 case each chunk of the write meets (coverage only). */
static void classify_write(u64 sector, u32 nr)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 first = sector >> g->chunk_shift, last = (sector + nr - 1) >> g->chunk_shift, k;

	if (first != last)
		S.fig3[F_MULTI]++;
	if ((sector | nr) & (g->chunk_sectors - 1))
		S.fig3[F_PARTIAL]++;
	for (k = first; k <= last; k++) {
		u64 base = from_slot(fr_slot_of(g, to_ochunk(k))) << g->ways_shift;
		u32 i, nv = 0, others_dirty = 0;
		u64 mine = 0;
		bool held = false;

		/* In a set, "the other chunk" is every other chunk. */
		for (i = 0; i < g->ways; i++) {
			u64 cw = le64_to_cpu(S.c.tags[base + i].commit);

			if (!(cw & FR_TAG_VALID))
				continue;
			nv++;
			if (fr_commit_key(cw) == k && !held) {
				held = true;
				mine = cw;
			} else if (cw & FR_TAG_DIRTY) {
				others_dirty++;
			}
		}
		if (!nv) {
			S.fig3[F_1]++;
		} else if (nv < g->ways) {
			S.fig3[held ? F_2_1 : F_2_2]++;
		} else if (held) {
			bool dirty = others_dirty == g->ways - 1;

			if (mine & FR_TAG_NEW)
				S.fig3[dirty ? F_3_2_DIRTY : F_3_2_CLEAN]++;
			else
				S.fig3[dirty ? F_3_1_DIRTY : F_3_1_CLEAN]++;
		} else {
			bool dirty = others_dirty == g->ways;

			S.fig3[dirty ? F_3_3_DIRTY : F_3_3_CLEAN]++;
		}
	}
}

/*
 * Writes that must wait: one that met FR_WRITE_NEED_CLEAN while a writeback
 * batch had its victim's slot in flight (between the batch's stage of the
 * slot and its clear), and, as a simplification, one that met it inside a
 * victim's window. Cleaning then could let the batch submit stale data it
 * staged after the newer copy was cleaned and displaced, so, as the kernel's
 * writers do (fr_writeback_victim: -EBUSY), they wait for the batch (here:
 * they run when fr_writeback() returns). crashsim-mut --wb-race runs a core
 * that ignores the pins on a buddy, to show what goes wrong without them.
 */
static struct { u32 id; u64 sector; u32 nr; } deferred[MAX_INJ];
static u32 ndeferred;
static bool in_batch;

/*
 * As the kernel does (fr_writeback_victim): the victim alone, with no slot
 * lock held; with vinj, the writes and batches it holds run in its window.
 */
static int victim_writeback(fr_pchunk_t victim, const struct op *vinj)
{
	struct fr_wb_snap snap;
	int r;

	wb_victim.inj = vinj;
	wb_victim.chunk = UINT64_MAX;
	in_victim = true;
	r = fr_writeback_chunk(&S.c, victim, &snap, &wb_ops, &wb_victim);
	in_victim = false;
	wb_victim.inj = NULL;
	wb_victim.nst = wb_victim.used = 0;
	return r;
}

/*
 * As the kernel does for a write of several chunks (fr_writeback_from): the
 * range of slots from the victim's to last, the write's last, beside any
 * batch (which skips its slots, as it skips a victim's; with vinj, writes
 * and batches run in its window), then the victim alone if the range left
 * it dirty (its slot in a batch's flight: -EBUSY, the write waits).
 */
static int victim_range(fr_pchunk_t victim, u64 last, const struct op *vinj)
{
	fr_pchunk_t first;
	u32 nr = fr_victim_range(&S.c.geo, victim, to_slot(last),
				 VICTIM_CHUNKS, &first);
	int r;

	wb_victim.inj = vinj;
	wb_victim.inj_done = false;
	wb_victim.chunk = UINT64_MAX;
	in_victim = true;
	r = fr_writeback_range(&S.c, first, nr, victim_snaps, &wb_ops,
			       &wb_victim);
	in_victim = false;
	if (wb_victim.inj_done)
		vinj = NULL;		/* its window held them */
	wb_victim.inj = NULL;
	wb_victim.nst = wb_victim.used = 0;
	if (r < 0 || !test_bit(from_pchunk(victim), S.c.dirty_bits))
		return r < 0 ? r : 0;
	return victim_writeback(victim, vinj);
}

/* Returns false if the write was deferred. */
static bool write_loop(u32 id, u64 sector, u32 nr, const struct op *vinj)
{
	struct fr_write_result res;
	enum fr_write_outcome out;
	u32 tries = 0;
	int r;

	for (;;) {
		struct payload_ctx pc = { id, sector, payload_buf };

		if ((in_batch || in_victim || in_around) && ndeferred &&
		    !S.wb_race)
			return false;	/* keep the writes in order */
		check_bad_slot_pins();
		lock_range(sector, nr);
		out = fr_write(&S.c, sector, nr, payload_write, &pc, &res);
		unlock_range(sector, nr);
		if (out == FR_WRITE_PINNED) {
			/* As the kernel's writer: wait for the write in flight. */
			if (!test_bit(from_pchunk(res.victim), S.c.pinned))
				violation("FR_WRITE_PINNED names chunk %llu, which is not pinned",
					  (unsigned long long)from_pchunk(res.victim));
			else if (in_batch || in_victim || in_around)
				return false;
			else
				violation("FR_WRITE_PINNED with no writeback in flight");
			break;
		}
		if (out != FR_WRITE_NEED_CLEAN)
			break;
		S.fig3[F_NEED_CLEAN]++;
		if (!test_bit(from_pchunk(res.victim), S.c.dirty_bits))
			violation("FR_WRITE_NEED_CLEAN names a victim that is not dirty (chunk %llu)",
				  (unsigned long long)from_pchunk(res.victim));
		if (in_victim)
			return false;
		if ((sector >> S.c.geo.chunk_shift) !=
		    ((sector + nr - 1) >> S.c.geo.chunk_shift)) {
			r = victim_range(res.victim,
					 from_slot(fr_slot_of(&S.c.geo,
						fr_chunk_of_sector(&S.c.geo,
							sector + nr - 1))),
					 vinj);
		} else {
			r = victim_writeback(res.victim, vinj);
		}
		vinj = NULL;
		if (r == -EBUSY) {
			if (!in_batch && !in_around)
				violation("victim %llu refused as in flight with no batch in flight",
					  (unsigned long long)from_pchunk(res.victim));
			return false;
		}
		if (r < 0) {
			violation("writeback of victim %llu failed: %d",
				  (unsigned long long)from_pchunk(res.victim), r);
			break;
		}
		if (++tries > 2 * S.c.geo.chunk_sectors + 4) {
			violation("fr_write keeps asking for cleaning (livelock)");
			break;
		}
	}
	if (out != FR_WRITE_DONE)
		violation("fr_write(%llu, %u) did not write: outcome %d, error %d",
			  (unsigned long long)sector, nr, out, res.error);
	return true;
}

/*
 * FAIL_PM_READ: make the first held sector of the cached copy of the first
 * chunk that the write does not cover unreadable, so that fr_write() fails
 * copying it. Returns false if the write reads nothing from PM.
 */
static bool poison_cached_copy(u64 sector, u32 nr)
{
	const struct fr_geometry *g = &S.c.geo;
	u64 key = sector >> g->chunk_shift, first = key << g->chunk_shift;
	u64 end = sector + nr, i;
	struct fr_hit hit;

	if (!fr_lookup(&S.c, to_ochunk(key), &hit))
		return false;
	for (i = 0; i < g->chunk_sectors; i++) {
		u64 lba = first + i;

		if ((hit.sectors >> i & 1) && (lba < sector || lba >= end)) {
			S.pm.poison_off = (u64)((const u8 *)hit.data - S.pm_view) +
					  i * SECT;
			S.pm.poison_len = SECT;
			return true;
		}
	}
	return false;
}

/*
 * I/O past the device's end never reaches the target: device-mapper refuses
 * it. (The cache's end moves with OP_RESIZE, and back with a crash.)
 */
static bool past_end(u64 sector, u32 nr)
{
	if (sector + nr <= S.c.geo.origin_sectors)
		return false;
	log_op("  (past the end, %llu sectors: refused)",
	       (unsigned long long)S.c.geo.origin_sectors);
	return true;
}

/*
 * As the kernel's admission does (fr-io.c): a write sent around PM goes to
 * the origin, durably, once fr_around_begin() has dropped the range's clean
 * copies and pinned its slots, and fr_around_end() unpins them once it is
 * there. The writes, batches and fills the op injects (INJ_AROUND) run in
 * its window, before the origin write. False if it may not go around: the
 * write goes to PM. (Refused or busy alike: where a slot is pinned the
 * kernel waits and asks again, and stores the write on PM if the pins
 * outlast its wait; the model, one thread, has no one to wait for.)
 */
static bool write_around(u32 id, u64 sector, u32 nr, const struct op *op)
{
	u8 *buf;
	bool ok;
	u32 i;

	lock_range(sector, nr);
	ok = fr_around_begin(&S.c, sector, nr) == FR_AROUND_GO;
	unlock_range(sector, nr);
	if (!ok) {
		S.fig3[F_AROUND_REFUSED]++;
		return false;
	}
	S.fig3[F_AROUND]++;
	if (op->ninj && op->inj_at == INJ_AROUND) {
		in_around = true;
		around_first = sector >> S.c.geo.chunk_shift;
		around_last = (sector + nr - 1) >> S.c.geo.chunk_shift;
		for (i = 0; i < op->ninj; i++) {
			if (!op->inj[i].nr)
				nested_batch(op->inj[i].sector);
			else if (op->inj[i].nr == INJ_FILL_NR)
				exec_fill(op->inj[i].sector);
			else
				exec_write(op->inj[i].sector, op->inj[i].nr,
					   NULL, (op->inj_around & 1u << i) ?
					   &inj_around_op : NULL);
		}
		in_around = false;
	}
	buf = xmalloc((size_t)nr * SECT);
	fill_pattern(buf, id, sector, nr);
	so_write(&S.org, sector, buf, nr);
	so_flush(&S.org);
	free(buf);
	/* Under the locks, as the kernel's worker does (fr-admit.c). */
	lock_range(sector, nr);
	fr_around_end(&S.c, sector, nr);
	unlock_range(sector, nr);
	return true;
}

static void exec_write(u64 sector, u32 nr, const struct op *vinj,
		       const struct op *around)
{
	u32 id, prev = S.inflight;
	bool poisoned = false;

	if (past_end(sector, nr))
		return;
	id = new_op(OP_WRITE, sector, nr);

	classify_write(sector, nr);
	touch_range(sector, nr);
	S.inflight = id;
	if (S.fail == FAIL_PM_READ && !S.fail_done)
		poisoned = poison_cached_copy(sector, nr);
	if (poisoned) {
		struct fr_write_result res;
		struct payload_ctx pc = { id, sector, payload_buf };
		enum fr_write_outcome out;
		u64 hits = S.pm.poison_hits;
		fr_slot_t slot = fr_slot_of(&S.c.geo, fr_chunk_of_sector(&S.c.geo, sector));

		lock_range(sector, nr);
		out = fr_write(&S.c, sector, nr, payload_write, &pc, &res);
		unlock_range(sector, nr);
		S.pm.poison_len = 0;
		S.fail_done = true;
		if (out == FR_WRITE_FAILED && res.error == -EIO) {
			/* Not acknowledged: it must read as never written. */
			S.ops[id].status = ST_LOST;
			S.fig3[F_ERRORS]++;
		} else if (out == FR_WRITE_NEED_CLEAN || out == FR_WRITE_PINNED) {
			S.ops[id].status = ST_LOST;	/* not attempted */
		} else if (out == FR_WRITE_DONE && S.pm.poison_hits == hits &&
			   S.bad && only_good(slot_good_chunk(slot))) {
			/*
			 * A slot whose chunks are bad but one cannot keep the
			 * old copy beside the new: a clean one is dropped, not
			 * read (the origin holds its data), and the write goes
			 * on.
			 */
			ack_write(id);
		} else {
			violation("fr_write with an unreadable cached copy: outcome %d, error %d, not failed with -EIO",
				  out, res.error);
			ack_write(id);
		}
	} else if (around && write_around(id, sector, nr, around)) {
		ack_write_around(id);
	} else if (write_loop(id, sector, nr, vinj)) {
		ack_write(id);
	} else {
		S.fig3[F_WAITED]++;
		deferred[ndeferred].id = id;
		deferred[ndeferred].sector = sector;
		deferred[ndeferred].nr = nr;
		ndeferred++;
	}
	S.inflight = prev;
	/* Writes that waited inside this write's victim window: now. */
	if (!in_batch && !in_victim && !in_around && ndeferred)
		run_deferred();
}

/* The writes that waited for the batch, in order. */
static void run_deferred(void)
{
	u32 i;

	for (i = 0; i < ndeferred; i++) {
		S.inflight = deferred[i].id;
		if (!write_loop(deferred[i].id, deferred[i].sector,
				deferred[i].nr, NULL))
			violation("a write that waited was deferred again");
		ack_write(deferred[i].id);
		S.inflight = 0;
	}
	ndeferred = 0;
}

static void exec_fill(u64 key)
{
	const struct fr_geometry *g = &S.c.geo;
	struct payload_ctx pc = { 0, 0, payload_buf };
	struct fr_hit hit;
	u64 first = key << g->chunk_shift, mask;
	u32 i;
	int r;

	if (key >= g->origin_chunks)
		return;
	touch_key(key);
	check_bad_slot_pins();
	if (fr_lookup(&S.c, to_ochunk(key), &hit)) {
		S.fig3[F_FILL_SKIPPED]++;	/* a read hit: nothing to fill */
		return;
	}
	/*
	 * Clean data must be durable on the origin: after a failed flush the
	 * origin's cache may hold sectors of this chunk, so no fill then.
	 */
	for (i = 0; i < S.org.ncache; i++)
		if (S.org.cache[i].sector >> g->chunk_shift == key) {
			S.fig3[F_FILL_SKIPPED]++;
			return;
		}
	/* A read miss: read the chunk from the origin, install it clean. */
	mask = fr_chunk_mask(g, to_ochunk(key));
	memcpy(payload_buf, S.org.view + first * SECT,
	       (size_t)hweight64(mask) * SECT);
	lock_range(first, 1);
	r = fr_fill(&S.c, to_ochunk(key), payload_copy, &pc);
	unlock_range(first, 1);
	if (r < 0)
		violation("fr_fill(%llu) failed: %d", (unsigned long long)key, r);
	S.fig3[r == 1 ? F_FILL : F_FILL_SKIPPED]++;
}

/*
 * The target passes a discard on to the origin once PM's copies are
 * dropped, and the discarded sectors may then read as anything: modelled as
 * the image's data (which a discarded sector may hold). It is flushed at
 * once, as every op leaves the origin (the kernel's discard is not ordered
 * with a flush, but nothing PM holds depends on it). A clean copy on PM
 * that still holds other data for those sectors breaks invariant 5.
 */
static void discard_origin(u64 sector, u32 nr)
{
	u8 buf[SECT];
	u64 s;

	for (s = sector; s < sector + nr && s < S.cfg->origin_sectors; s++) {
		fill_pattern(buf, 1, s, 1);
		so_write(&S.org, s, buf, 1);
	}
	so_flush(&S.org);
}

static void exec_discard(u64 sector, u32 nr)
{
	const struct fr_geometry *g = &S.c.geo;
	u32 id;
	u64 s;

	if (past_end(sector, nr))
		return;
	id = new_op(OP_DISCARD, sector, nr);
	touch_range(sector, nr);
	S.inflight = id;
	if ((nr >> g->chunk_shift) > g->nr_slots) {
		/* As the kernel: larger than the cache, walk the slots. */
		for (s = 0; s < g->nr_slots; s++) {
			S.locked[s] = LOCK_CALLER;
			S.fig3[F_DISCARD_DROP] +=
				fr_discard_slots(&S.c, to_slot(s), 1, sector, nr);
			S.locked[s] = LOCK_NONE;
		}
	} else {
		lock_range(sector, nr);
		S.fig3[F_DISCARD_DROP] += fr_discard(&S.c, sector, nr);
		unlock_range(sector, nr);
	}
	ack_discard(id);
	S.inflight = 0;
	discard_origin(sector, nr);
}

static void exec_wb(const struct op *op)
{
	int r;

	u64 dirty = fr_count_dirty(&S.c);

	wb_batch.inj = op->ninj ? op : NULL;
	wb_batch.inj_done = false;
	wb_batch.chunk = UINT64_MAX;
	wb_batch.nchunks = 0;
	in_batch = true;
	if (op->sweep) {
		u64 before = S.cursor;

		r = fr_writeback_sweep(&S.c, &S.cursor, op->max, wb_snaps,
				       &wb_ops, &wb_batch);
		/* The flush's loop ends only because every call moves it on. */
		if (r >= 0 && S.cursor <= before &&
		    S.cursor != S.c.geo.nr_chunks)
			violation("a sweep batch left the cursor at %llu (from %llu)",
				  (unsigned long long)S.cursor,
				  (unsigned long long)before);
		if (S.cursor >= S.c.geo.nr_chunks)
			S.cursor = 0;	/* the next flush starts again */
	} else if (op->full_slots) {
		r = fr_writeback_full_slots(&S.c, &S.cursor, op->max, wb_snaps,
					    &wb_ops, &wb_batch);
	} else {
		r = fr_writeback(&S.c, &S.cursor, op->max, wb_snaps, &wb_ops,
				 &wb_batch);
	}
	in_batch = false;
	wb_batch.inj = NULL;
	wb_batch.nst = wb_batch.used = 0;
	if (S.fail_done && S.fail == FAIL_STAGE_POISON) {
		/* that chunk skipped and left dirty; the rest as usual */
		S.fig3[F_ERRORS]++;
		if (r < 0)
			violation("fr_writeback failed (%d) on an unreadable chunk instead of skipping it", r);
		/*
		 * Still the copy that could not be read, yet clean? (A write
		 * injected after the stage may have replaced it, legitimately.)
		 */
		else if (!test_bit(S.poisoned_chunk, S.db) &&
			 test_bit(S.poisoned_chunk, S.vb) &&
			 le64_to_cpu(S.c.tags[S.poisoned_chunk].seq) == S.poisoned_seq)
			violation("chunk %llu, whose PM data could not be read, was made clean",
				  (unsigned long long)S.poisoned_chunk);
		else if (!op->ninj && fr_count_dirty(&S.c) != dirty - (u64)r)
			violation("fr_writeback cleaned %d chunks but dirty went from %llu to %llu",
				  r, (unsigned long long)dirty,
				  (unsigned long long)fr_count_dirty(&S.c));
		else
			S.fig3[F_WB_CLEANED] += (u64)r;
	} else if (S.fail_done) {
		/* an origin or PM error: reported, and nothing made clean */
		S.fig3[F_ERRORS]++;
		if (r != -EIO)
			violation("fr_writeback returned %d after an I/O error, not -EIO", r);
		if (!op->ninj && fr_count_dirty(&S.c) != dirty)
			violation("fr_writeback cleaned chunks despite an I/O error");
	} else if (r < 0) {
		violation("fr_writeback failed: %d", r);
	} else {
		S.fig3[F_WB_CLEANED] += (u64)r;
	}
	run_deferred();
	S.fig3[F_WB_KEPT_DIRTY] += fr_count_dirty(&S.c);
}

/*
 * The worker's batch of every dirty chunk, run inside a victim's window
 * (INJ_VICTIM), from its cursor or from PM chunk from: it must skip the
 * victim's slot.
 */
static void nested_batch(u64 from)
{
	int r;

	if (in_batch) {
		violation("a batch inside a batch");
		return;
	}
	wb_batch.inj = NULL;
	wb_batch.chunk = UINT64_MAX;
	wb_batch.nchunks = 0;
	in_batch = true;
	if (from)
		S.cursor = from;
	r = fr_writeback(&S.c, &S.cursor, (u32)S.c.geo.nr_chunks, wb_snaps,
			 &wb_ops, &wb_batch);
	in_batch = false;
	wb_batch.nst = wb_batch.used = 0;
	if (r < 0)
		violation("a batch inside a victim's window failed: %d", r);
	else
		S.fig3[F_WB_CLEANED] += (u64)r;
}

static void exec_recover(void)
{
	struct fr_recovery_report rep;
	const char *why = NULL;
	u64 h;
	u32 i;
	int r;

	/*
	 * A restart. If a failed operation left stores unfenced, a clean
	 * shutdown writes them back first (crashes before that were checked
	 * at the end of the operations since).
	 */
	if (S.pm.ep.nunits) {
		S.pm.on_fence = NULL;
		fr_pm_fence();
		S.pm.on_fence = live_fence_hook;
	}
	S.collect_rec_hashes = true;
	S.nrec_hashes = 0;
	memset(S.vb, 0, S.nlongs * sizeof(long));
	memset(S.db, 0, S.nlongs * sizeof(long));
	S.exclusive = true;
	r = fr_cache_attach(&S.c, S.pm_view, S.pm_bytes, S.vb, S.db, &why);
	S.c.pinned = S.pinned;
	S.c.stage_copies = S.copy_stage;
	if (!r)
		r = fr_recover(&S.c, FR_RECOVER_APPLY, S.groups,
			       ARRAY_LEN(S.groups), &rep, &why);
	S.exclusive = false;
	S.collect_rec_hashes = false;
	if (r) {
		violation("recovery failed: %d (%s)", r, why ? why : "");
		return;
	}
	h = fnv(S.pm_view + S.c.geo.tags_offset, S.tags_bytes,
		0xcbf29ce484222325ULL);
	for (i = 0; i < S.nrec_hashes; i++)
		if (S.rec_hashes[i] != h) {
			violation("a crash inside recovery, then recovery, gives other tags than the uninterrupted recovery");
			break;
		}
}

/*
 * A table reload with another length: the target's preresume, after
 * recovery, with no I/O (fr-load.c). A shrink over a dirty copy past the
 * new end is refused with nothing stored.
 */
static void exec_resize(u64 new_sectors)
{
	struct fr_resize_report rep;
	u64 stores = S.pm.stores, old = S.c.geo.origin_sectors, dirty_past = 0;
	const char *why = NULL;
	u64 p;
	int r;

	for (p = 0; p < S.c.geo.nr_chunks; p++) {
		u64 cw = le64_to_cpu(S.c.tags[p].commit);
		u64 sec = le64_to_cpu(S.c.tags[p].sectors);
		u64 first = fr_commit_key(cw) << S.c.geo.chunk_shift;

		if (test_bit(p, S.db) && sec &&
		    first + 64 - __builtin_clzll(sec) > new_sectors)
			dirty_past++;
	}
	S.exclusive = true;
	r = fr_resize(&S.c, new_sectors, &rep, &why);
	S.exclusive = false;
	if (r == -EBUSY) {
		if (!dirty_past || new_sectors >= old)
			violation("resize %llu -> %llu refused (%s) with %llu dirty copies past the end",
				  (unsigned long long)old,
				  (unsigned long long)new_sectors, why,
				  (unsigned long long)dirty_past);
		if (S.pm.stores != stores)
			violation("a refused resize stored to PM");
		log_op("  (refused: %s)", why);
		S.fig3[F_RESIZE_REFUSED]++;
		return;
	}
	if (!r && new_sectors != old)
		S.fig3[F_RESIZED]++;
	if (r)
		violation("resize %llu -> %llu failed: %d (%s)",
			  (unsigned long long)old,
			  (unsigned long long)new_sectors, r, why);
	else if (dirty_past && new_sectors < old)
		violation("resize %llu -> %llu done over %llu dirty copies past the end",
			  (unsigned long long)old,
			  (unsigned long long)new_sectors,
			  (unsigned long long)dirty_past);
	else if (S.c.geo.origin_sectors != new_sectors)
		violation("resize to %llu left the cache at %llu sectors",
			  (unsigned long long)new_sectors,
			  (unsigned long long)S.c.geo.origin_sectors);
}

static void exec_xregion(u64 sector, u32 nr)
{
	struct fr_write_result res;
	struct payload_ctx pc = { 0, sector, payload_buf };
	u64 stores = S.pm.stores;
	enum fr_write_outcome out = fr_write(&S.c, sector, nr, payload_write,
					     &pc, &res);

	if (out != FR_WRITE_FAILED || res.error != -EINVAL)
		violation("a write crossing a region: outcome %d, error %d, not failed with -EINVAL",
			  out, res.error);
	if (S.pm.stores != stores)
		violation("a refused write crossing a region stored to PM");
	S.fig3[F_XREGION]++;
}

static void describe_op(const struct op *op, char *b, size_t len)
{
	size_t o = 0;
	u32 i;

	switch (op->type) {
	case OP_WRITE:
		o = snprintf(b, len, "%s %llu+%u",
			     op->around ? "write around" : "write",
			     (unsigned long long)op->sector, op->nr);
		if (op->ninj)
			o += snprintf(b + o, len - o, " {%s:",
				      op->inj_at == INJ_AROUND ?
				      "before its origin write" :
				      "victim staged");
		for (i = 0; i < op->ninj && o < len; i++)
			o += op->inj[i].nr == INJ_FILL_NR ?
			     snprintf(b + o, len - o, " fill key %llu",
				      (unsigned long long)op->inj[i].sector) :
			     op->inj[i].nr ?
			     snprintf(b + o, len - o, " %s %llu+%u",
				      (op->inj_around & 1u << i) ? "write around" :
				      "write",
				      (unsigned long long)op->inj[i].sector,
				      op->inj[i].nr) :
			     op->inj[i].sector ?
			     snprintf(b + o, len - o, " batch from %llu",
				      (unsigned long long)op->inj[i].sector) :
			     snprintf(b + o, len - o, " batch");
		if (op->ninj && o < len)
			o += snprintf(b + o, len - o, "}");
		break;
	case OP_FILL:
		o = snprintf(b, len, "fill key %llu", (unsigned long long)op->key);
		break;
	case OP_DISCARD:
		o = snprintf(b, len, "discard %llu+%u", (unsigned long long)op->sector, op->nr);
		break;
	case OP_WB:
		o = snprintf(b, len, "%s max %u",
			     op->sweep ? "sweep" : op->full_slots ?
			     "writeback full slots" : "writeback", op->max);
		if (op->ninj)
			o += snprintf(b + o, len - o, " {%s:",
				      op->inj_at == INJ_STAGED ? "after stage" :
				      op->inj_at == INJ_BETWEEN ? "between stages" :
				      "after submit");
		for (i = 0; i < op->ninj && o < len; i++)
			o += op->inj[i].nr == INJ_FILL_NR ?
			     snprintf(b + o, len - o, " fill key %llu",
				      (unsigned long long)op->inj[i].sector) :
			     snprintf(b + o, len - o, " write %llu+%u",
				      (unsigned long long)op->inj[i].sector,
				      op->inj[i].nr);
		if (op->ninj && o < len)
			o += snprintf(b + o, len - o, "}");
		break;
	case OP_RECOVER:
		o = snprintf(b, len, "restart+recover");
		break;
	case OP_XREGION:
		o = snprintf(b, len, "write %llu+%u across regions (refused)",
			     (unsigned long long)op->sector, op->nr);
		break;
	case OP_RESIZE:
		o = snprintf(b, len, "resize to %llu sectors",
			     (unsigned long long)op->sector);
		break;
	default:
		o = snprintf(b, len, "?");
	}
	if (op->fail && o < len)
		o += snprintf(b + o, len - o, " [%s fails]",
			      op->fail == FAIL_PM_READ ? "PM read" :
			      op->fail == FAIL_STAGE ? "stage" :
			      op->fail == FAIL_STAGE_LATE ? "second chunk's stage" :
			      op->fail == FAIL_STAGE_POISON ? "PM read in stage" :
			      op->fail == FAIL_SUBMIT ? "origin write" :
			      "origin flush");
	if (op->crash_sel && o < len)
		snprintf(b + o, len - o, " [crash at point %llu]",
			 (unsigned long long)(1 + op->crash_sel % 6));
}

/* Resolve the op that was in flight at a real crash, by reading it. */
static void resolve_inflight(void)
{
	struct oprec *r;
	u64 s, nw = 0, no = 0;

	if (!S.inflight)
		return;
	r = &S.ops[S.inflight];
	if (r->type == OP_DISCARD) {
		ack_discard(S.inflight);
	} else {
		for (s = r->sector; s < r->sector + r->nr; s++) {
			struct fr_hit hit;
			u64 key = s >> S.c.geo.chunk_shift;
			u32 i = (u32)(s - (key << S.c.geo.chunk_shift));
			const u8 *src;

			if (fr_lookup(&S.c, to_ochunk(key), &hit) &&
			    (hit.sectors >> i & 1))
				src = (const u8 *)hit.data + (size_t)i * SECT;
			else
				src = S.org.media + s * SECT;
			if (sector_op(src, s) == S.inflight)
				nw++;
			else
				no++;
		}
		if (nw && no)
			violation("write in flight at the crash is torn after recovery");
		if (nw)
			ack_write(S.inflight);
		else
			r->status = ST_LOST;
	}
	S.inflight = 0;
}

static void live_check(void)
{
	bool was = S.state_bad;

	S.state_bad = false;
	if (S.org.ncache && !S.origin_unflushed_ok)
		violation("an operation left %u origin writes unflushed", S.org.ncache);
	check_cache(&S.c, true);
	S.state_bad = was;
}

static void end_of_op(const char *what)
{
	bool was = S.state_bad;

	S.state_bad = false;
	check_pin_locks();
	check_unpinned();
	/*
	 * (An operation that failed owes no durability; stores left unfenced
	 * by a failed one stay pending until some later fence.)
	 */
	if (S.pm.ep.nunits && !S.fail_done && !S.pending_at_start)
		violation("%s returned with %u PM units not fenced", what,
			  S.pm.ep.nunits);
	S.state_bad = was;
	S.quiescent = true;
	crash_point(what);
	S.quiescent = false;
	live_check();
	cfg_seen_seq();
}

static void exec_op(const struct op *op)
{
	switch (op->type) {
	case OP_WRITE:
		exec_write(op->sector, op->nr,
			   op->ninj && op->inj_at == INJ_VICTIM ? op : NULL,
			   op->around ? op : NULL);
		break;
	case OP_FILL:
		exec_fill(op->key);
		break;
	case OP_DISCARD:
		exec_discard(op->sector, op->nr);
		break;
	case OP_WB:
		exec_wb(op);
		break;
	case OP_RECOVER:
		exec_recover();
		break;
	case OP_XREGION:
		exec_xregion(op->sector, op->nr);
		break;
	case OP_RESIZE:
		exec_resize(op->sector);
		break;
	}
}

void run_op(const struct op *op)
{
	char d[LOG_LEN];
	u32 i;

	describe_op(op, d, sizeof(d));
	log_op("%s", d);
	if (S.verbose > 1)
		printf("  op: %s\n", d);
	opkeys_reset();
	if (op->type == OP_FILL)
		touch_key(op->key);
	else if (op->type == OP_RESIZE)
		touch_range(0, S.cfg->origin_sectors);
	else if (op->type != OP_WB && op->type != OP_RECOVER)
		touch_range(op->sector, op->nr);
	for (i = 0; i < op->ninj; i++) {
		if (op->inj[i].nr == INJ_FILL_NR)
			touch_key(op->inj[i].sector);
		else
			touch_range(op->inj[i].sector, op->inj[i].nr);
	}
	S.op_points = 0;
	S.pending_at_start = S.pm.ep.nunits != 0;
	S.fail = op->fail;
	S.fail_done = false;
	S.crash_target = op->crash_sel ? 1 + op->crash_sel % 6 : 0;
	S.crash_seed = op->crash_sel;
	if (!setjmp(S.crash_jb)) {
		exec_op(op);
		if (S.crash_target > S.op_points)
			S.crash_target = S.op_points + 1;	/* at the end */
		end_of_op("the end of the operation");
		S.crash_target = 0;
		S.fail = FAIL_NONE;
		return;
	}
	S.fail = FAIL_NONE;
	S.pm.poison_len = 0;
	/* A real crash happened at crash_target: restart and recover. */
	S.crash_target = 0;
	memset(S.locked, 0, S.c.geo.nr_slots);
	S.exclusive = false;
	wb_batch.nst = wb_batch.used = 0;
	wb_victim.nst = wb_victim.used = 0;
	wb_batch.inj = NULL;
	wb_victim.inj = NULL;
	in_batch = false;
	in_victim = false;
	in_around = false;
	memset(S.pinned, 0, S.nlongs * sizeof(long));
	memset(S.pins_seen, 0, S.nlongs * sizeof(long));
	ndeferred = 0;	/* they never started: absent */
	log_op("CRASH; restart+recover");
	opkeys_reset();
	if (S.inflight)
		touch_range(S.ops[S.inflight].sector, S.ops[S.inflight].nr);
	S.op_points = 0;
	exec_recover();
	resolve_inflight();
	end_of_op("the end of recovery");
}

/* ---------------------------------------------------------------------- */
/* Worlds                                                                 */

/*
 * The simulator's state: the world built here, the options main() sets, the
 * reference model and the checkers' bookkeeping.
 */
struct sim S;

void world_free(void)
{
	if (!S.cfg)
		return;
	simpm_free(&S.pm);
	simpm_free(&S.spm);
	so_free(&S.org);
	free(S.pm_view);
	free(S.pm_media);
	free(S.scratch);
	free(S.vb);
	free(S.db);
	free(S.cvb);
	free(S.cdb);
	free(S.cur);
	free(S.freed);
	free(S.keystamp);
	free(S.opkeys);
	free(S.locked);
	free(S.tags_ref);
	free(wb_batch.buf);
	free(wb_victim.buf);
	free(wb_snaps);
	free(victim_snaps);
	free(S.pinned);
	free(S.pins_seen);
	free(S.bad);
	S.bad = NULL;
	S.c.bad.chunks = NULL;
	free(payload_buf);
	S.cfg = NULL;
}

void world_setup(const struct cfg *cfg)
{
	struct fr_format_params p;
	struct fr_geometry g;
	const char *why = NULL;
	u64 pm, s;
	int r;

	world_free();
	S.cfg = cfg;
	/* Nothing of the last run carries over (it may have stopped anywhere). */
	S.exclusive = false;
	S.fail = FAIL_NONE;
	S.state_bad = false;
	memset(&p, 0, sizeof(p));
	p.chunk_sectors = cfg->chunk_sectors;
	p.ways = cfg->ways;
	p.region_chunks = cfg->region;
	p.stride_slots = cfg->stride;
	p.origin_sectors = cfg->format_sectors ? cfg->format_sectors :
			   cfg->origin_sectors;
	p.format_time = 1;
	memcpy(p.uuid, "crashsim-uuid-01", 16);
	strcpy(p.origin_id, "crashsim-origin");
	/* The smallest PM size whose layout has exactly cfg->chunks chunks. */
	for (pm = fr_layout_bytes(cfg->chunk_sectors, cfg->chunks);;
	     pm += 4096) {
		r = fr_geometry_layout(&g, pm, &p, &why);
		if (!r && g.nr_chunks == cfg->chunks)
			break;
		if ((!r && g.nr_chunks > cfg->chunks) ||
		    pm > fr_layout_bytes(cfg->chunk_sectors, cfg->chunks) +
			 (1 << 20)) {
			fprintf(stderr, "crashsim: no PM size gives %u chunks (%s)\n",
				cfg->chunks, r ? why : "");
			exit(2);
		}
	}
	S.pm_bytes = pm;
	S.pm_view = xcalloc(pm, 1);
	S.pm_media = xcalloc(pm, 1);
	S.scratch = xcalloc(pm, 1);
	simpm_init(&S.pm, S.pm_view, S.pm_media, pm, g.data_offset);
	S.pm.mirror = S.scratch;
	S.pm.record = true;
	simpm_init(&S.spm, S.scratch, NULL, pm, g.data_offset);
	S.nlongs = BITS_TO_LONGS(cfg->chunks);
	S.vb = xcalloc(S.nlongs, sizeof(long));
	S.db = xcalloc(S.nlongs, sizeof(long));
	S.cvb = xcalloc(2 * S.nlongs, sizeof(long));
	S.cdb = xcalloc(2 * S.nlongs, sizeof(long));
	simpm_cur = &S.pm;
	S.pm.on_fence = NULL;
	r = fr_format(&S.c, S.pm_view, pm, &p, S.vb, S.db, &why);
	if (r) {
		fprintf(stderr, "crashsim: fr_format: %s\n", why);
		exit(2);
	}
	memcpy(S.pm_media, S.pm_view, pm);
	memcpy(S.scratch, S.pm_view, pm);
	simpm_reset_pending(&S.pm);
	S.pm.on_fence = live_fence_hook;
	S.pm.on_store = live_store_hook;
	/* The first write's seq is seq_base + 1 (fr_write increments first). */
	atomic64_set(&S.c.next_seq, (s64)cfg->seq_base);

	so_init(&S.org, cfg->origin_sectors);
	for (s = 0; s < cfg->origin_sectors; s++)
		fill_pattern(S.org.media + s * SECT, 1, s, 1);
	memcpy(S.org.view, S.org.media, cfg->origin_sectors * SECT);

	S.cur = xmalloc(cfg->origin_sectors * sizeof(*S.cur));
	for (s = 0; s < cfg->origin_sectors; s++)
		S.cur[s] = 1;
	S.freed = xcalloc(cfg->origin_sectors, 1);
	S.nops = 0;
	new_op(OP_WRITE, 0, (u32)cfg->origin_sectors);
	S.ops[1].status = ST_ACKED;
	S.org_chunks = (cfg->origin_sectors + S.c.geo.chunk_sectors - 1) >>
		       S.c.geo.chunk_shift;
	S.keystamp = xcalloc(S.org_chunks, sizeof(u32));
	S.opkeys = xcalloc(S.org_chunks + 1, sizeof(u64));
	S.locked = xcalloc(S.c.geo.nr_slots, 1);
	S.tags_bytes = S.c.geo.nr_chunks * sizeof(struct fr_tag_disk);
	S.tags_ref = xmalloc(S.tags_bytes);
	S.pinned = xcalloc(S.nlongs, sizeof(long));
	S.pins_seen = xcalloc(S.nlongs, sizeof(long));
	S.c.pinned = S.pinned;
	S.c.stage_copies = S.copy_stage;
	/*
	 * Bad PM, as the kernel finds it at load (fr-badpm.c): chunks the
	 * core never loads or stores, in a slot whose other chunk then takes
	 * every key (plan_slot_bad) and writeback skips (ops->skip).
	 */
	if (cfg->bad_chunks) {
		S.bad = xcalloc(S.nlongs, sizeof(long));
		S.bad[0] = cfg->bad_chunks;
		S.c.bad.chunks = S.bad;
	}
	wb_batch.cap_sectors = (u32)(S.c.geo.nr_chunks * S.c.geo.chunk_sectors);
	wb_batch.buf = xmalloc((size_t)wb_batch.cap_sectors * SECT);
	wb_victim.cap_sectors = VICTIM_CHUNKS * S.c.geo.chunk_sectors;
	wb_victim.buf = xmalloc((size_t)wb_victim.cap_sectors * SECT);
	wb_snaps = xcalloc(S.c.geo.nr_chunks + 1, sizeof(*wb_snaps));
	victim_snaps = xcalloc(VICTIM_CHUNKS, sizeof(*victim_snaps));
	in_batch = in_victim = false;
	ndeferred = 0;
	payload_buf = xmalloc((size_t)S.c.geo.chunk_sectors * SECT *
			      (S.c.geo.region_chunks + 1));
	S.cursor = 0;
	S.inflight = 0;
	S.nlog = 0;
}
