// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writeback: dirty chunks go from PM to the origin, and only once the origin
 * has been flushed does the core clear their dirty flags (fr_writeback()).
 *
 * The worker runs every writeback_period ms and writes back everything dirty
 * (First Responder's periodic flush), except that while writes keep coming
 * and none collides it defers that, up to writeback_defer ms (wb_pass_due);
 * with a period of 0 it polls the dirty watermarks instead. Origin errors
 * leave the data dirty on PM, mark the target degraded and back the worker
 * off exponentially.
 *
 * Data is copied off PM (machine-check safe) into a staging buffer under the
 * slot lock, so the origin gets exactly the version whose tag is cleaned.
 * The buffer holds a whole batch, so no origin I/O happens under a slot
 * lock. A chunk whose PM data cannot be read is skipped and stays dirty
 * (pm_errors, and the status field unreadable); the batch goes on.
 *
 * A write whose slot must displace a dirty chunk writes that victim back
 * alone (fr_writeback_victim), beside the worker's batch rather than after
 * it: one origin write and one flush. Two origin writes of one slot's data
 * must never be in flight at once (they land in any order, and the older
 * could win: docs/protocol.md, "Required serialization"), so each slot an
 * origin write of cached data is in flight for is marked in wb_busy, under
 * the slot lock, until that data is flushed and its dirty flag cleared: a
 * batch skips a slot a victim write has marked, and a victim write waits
 * for a batch that has marked its slot. The writers that go around PM
 * (cleaner write-through, discards, bypass) and the flush message hold
 * wb_victims for writing, so no victim write runs beside them.
 */
#include <linux/blkdev.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "dm-fr.h"

#define FR_WB_POLL_MS		100	/* the tick with a period of 0 */
#define FR_WB_IDLE_MS		100	/* no write this long: idle */
#define FR_WB_COLLIDED_MS	250	/* no deferral this long after a collision */
#define FR_WB_BACKOFF_MIN_MS	100
#define FR_WB_BACKOFF_MAX_MS	10000
#define FR_WB_VICTIM_STAGES	4	/* victim writes in flight at once */

/* Data staged for the origin: a run of sectors in the staging buffer. */
struct fr_extent {
	u64 sector;
	u32 nr_sectors;
	u32 buf_off;		/* bytes into the staging buffer */
};

/*
 * The fr_wb_ops context: a staging buffer and its extents, sized so that a
 * batch always fits (no origin I/O under a slot lock).
 */
struct fr_stage {
	struct dm_fr *fr;
	u8 *buf;
	size_t buf_size, buf_used;
	struct fr_extent *ext;
	u32 nr_ext, max_ext;
	int error;
	/* Where the chunk being staged began, to drop it if PM fails. */
	u64 chunk;
	size_t chunk_used;
	u32 chunk_ext, chunk_last_sectors;
	/* Chunks whose PM data could not be read. */
	u32 unreadable;
	/* Slots this stage marked in fr->wb_busy, cleared by stage_release. */
	u64 *marked;
	u32 nr_marked, max_marked;
	bool chunk_marked;	/* the chunk being staged made the last mark */
	bool for_victim;	/* a victim write's: no wb_lock */
};

/* A victim write's stage: a fixed few, taken under a semaphore. */
struct fr_victims {
	struct semaphore free;
	unsigned long busy;
	struct fr_stage *stage[FR_WB_VICTIM_STAGES];
};

static void stage_assert_held(struct fr_stage *st)
{
	if (!st->for_victim)
		lockdep_assert_held(&st->fr->wb_lock);
}

/*
 * Mark the slot of a chunk about to be staged as having an origin write in
 * flight, unless another writer marked it: false then. A batch may stage
 * both chunks of a slot: they are next to each other in its ascending scan,
 * or the first and the last when it wrapped, so its own mark is the last
 * or the first it made.
 */
static bool stage_mark(struct fr_stage *st, u64 slot)
{
	struct dm_fr *fr = st->fr;

	fr_assert_slot_locked(fr, to_slot(slot));
	st->chunk_marked = false;
	if (test_bit(slot, fr->wb_busy))
		return st->nr_marked && (st->marked[st->nr_marked - 1] == slot ||
					 st->marked[0] == slot);
	/* One mark per chunk staged: the stage holds at most max_marked. */
	if (WARN_ON_ONCE(st->nr_marked == st->max_marked))
		return false;
	set_bit(slot, fr->wb_busy);
	st->marked[st->nr_marked++] = slot;
	st->chunk_marked = true;
	return true;
}

/* The chunk being staged is skipped: take back the mark it made. */
static void stage_unmark_chunk(struct fr_stage *st)
{
	if (!st->chunk_marked)
		return;
	st->chunk_marked = false;
	clear_bit(st->marked[--st->nr_marked], st->fr->wb_busy);
	wake_up_all(&st->fr->wb_busy_wait);
}

/*
 * Once what the stage wrote is flushed and its dirty flags cleared (or left,
 * on an error): its slots may be written to the origin by others again.
 */
static void stage_release(struct fr_stage *st)
{
	struct dm_fr *fr = st->fr;
	u32 i;

	if (!st->nr_marked)
		return;
	for (i = 0; i < st->nr_marked; i++)
		clear_bit(st->marked[i], fr->wb_busy);
	st->nr_marked = 0;
	/* wake_up_all's lock orders the clears before the waiters' test. */
	wake_up_all(&fr->wb_busy_wait);
}

static void stage_lock(void *ctx, fr_slot_t slot)
{
	struct fr_stage *st = ctx;

	fr_lock_slot(st->fr, slot);
}

static void stage_unlock(void *ctx, fr_slot_t slot)
{
	struct fr_stage *st = ctx;

	/* Clearing dirty flags moves no epoch (fr-stripe.h). */
	fr_unlock_slot(st->fr, slot, FR_STRIPE_KEPT);
}

struct fr_submit {
	atomic_t pending;
	struct completion done;
	blk_status_t status;
};

static void stage_endio(struct bio *bio)
{
	struct fr_submit *sub = bio->bi_private;

	if (bio->bi_status)
		sub->status = bio->bi_status;
	bio_put(bio);
	if (atomic_dec_and_test(&sub->pending))
		complete(&sub->done);
}

static struct page *stage_page(const void *p)
{
	return is_vmalloc_addr(p) ? vmalloc_to_page(p) : virt_to_page(p);
}

static int extent_cmp(const void *a, const void *b)
{
	const struct fr_extent *x = a, *y = b;

	return x->sector < y->sector ? -1 : x->sector > y->sector;
}

/* Write every staged extent to the origin, sorted and merged; wait. */
static int stage_write(struct fr_stage *st)
{
	struct fr_submit sub;
	struct bio *bio = NULL;
	struct blk_plug plug;
	u32 i;

	if (!st->nr_ext)
		return 0;
	sort(st->ext, st->nr_ext, sizeof(*st->ext), extent_cmp, NULL);
	atomic_set(&sub.pending, 1);
	init_completion(&sub.done);
	sub.status = BLK_STS_OK;

	blk_start_plug(&plug);
	for (i = 0; i < st->nr_ext; i++) {
		const struct fr_extent *e = &st->ext[i];
		const u8 *p = st->buf + e->buf_off;
		size_t left = (size_t)e->nr_sectors << SECTOR_SHIFT;
		u64 sector = e->sector;

		while (left) {
			size_t n = min_t(size_t, left,
					 PAGE_SIZE - offset_in_page(p));

			if (bio && (bio_end_sector(bio) != sector ||
				    bio_add_page(bio, stage_page(p), n,
						 offset_in_page(p)) != n)) {
				fr_origin_submit(bio);
				bio = NULL;
			}
			if (!bio) {
				bio = fr_origin_bio(st->fr, REQ_OP_WRITE, sector,
						    BIO_MAX_VECS, stage_endio,
						    &sub);
				atomic_inc(&sub.pending);
				__bio_add_page(bio, stage_page(p), n,
					       offset_in_page(p));
			}
			p += n;
			left -= n;
			sector += n >> SECTOR_SHIFT;
		}
	}
	if (bio)
		fr_origin_submit(bio);
	blk_finish_plug(&plug);
	if (!atomic_dec_and_test(&sub.pending))
		wait_for_completion_io(&sub.done);

	st->buf_used = 0;
	st->nr_ext = 0;
	return sub.status ? -EIO : 0;
}

/* Forget what was staged of the current chunk (its PM data failed). */
static void stage_drop_chunk(struct fr_stage *st)
{
	st->buf_used = st->chunk_used;
	st->nr_ext = st->chunk_ext;
	if (st->nr_ext)
		st->ext[st->nr_ext - 1].nr_sectors = st->chunk_last_sectors;
}

static int stage_data(void *ctx, u64 sector, const void *pm_src,
		      u32 nr_sectors)
{
	struct fr_stage *st = ctx;
	struct dm_fr *fr = st->fr;
	const struct fr_geometry *g = &fr->cache.geo;
	size_t bytes = (size_t)nr_sectors << SECTOR_SHIFT;
	u64 chunk = ((const u8 *)pm_src - fr->cache.data) >>
		    (g->chunk_shift + SECTOR_SHIFT);
	struct fr_extent *last;

	stage_assert_held(st);
	fr_assert_slot_locked(fr, fr_slot_of_pchunk(to_pchunk(chunk)));
	if (st->error)
		return st->error;
	if (chunk != st->chunk) {
		/* A chunk's first call: nothing of it is staged yet. */
		if (!stage_mark(st, chunk >> 1))
			return -EBUSY;
		st->chunk = chunk;
		st->chunk_used = st->buf_used;
		st->chunk_ext = st->nr_ext;
		st->chunk_last_sectors = st->nr_ext ?
					 st->ext[st->nr_ext - 1].nr_sectors : 0;
	}
	/* Sized for a whole batch (fr_writeback_set_jobs): cannot fill. */
	if (WARN_ON_ONCE(st->buf_used + bytes > st->buf_size ||
			 st->nr_ext == st->max_ext)) {
		st->error = -EOVERFLOW;
		return st->error;
	}
	if (fr_pm_read(st->buf + st->buf_used, pm_src, bytes)) {
		/* The chunk stays dirty on PM; the batch goes on. */
		stage_drop_chunk(st);
		stage_unmark_chunk(st);
		st->unreadable++;
		fr_stat_add(fr, pm_errors, 1);
		return -EHWPOISON;
	}
	last = st->nr_ext ? &st->ext[st->nr_ext - 1] : NULL;
	if (last && last->sector + last->nr_sectors == sector &&
	    last->buf_off + ((size_t)last->nr_sectors << SECTOR_SHIFT) ==
	    st->buf_used) {
		last->nr_sectors += nr_sectors;
	} else {
		st->ext[st->nr_ext].sector = sector;
		st->ext[st->nr_ext].nr_sectors = nr_sectors;
		st->ext[st->nr_ext].buf_off = st->buf_used;
		st->nr_ext++;
	}
	st->buf_used += bytes;
	return 0;
}

/* A dirty chunk on known bad PM (struct fr_bad): unreadable, not tried. */
static void stage_skip(void *ctx, fr_pchunk_t p)
{
	struct fr_stage *st = ctx;

	stage_assert_held(st);
	fr_assert_slot_locked(st->fr, fr_slot_of_pchunk(p));
	st->unreadable++;
}

static int stage_submit(void *ctx)
{
	struct fr_stage *st = ctx;

	stage_assert_held(st);
	if (st->error)
		return st->error;
	st->error = stage_write(st);
	return st->error;
}

static int stage_flush(void *ctx)
{
	struct fr_stage *st = ctx;

	stage_assert_held(st);
	return fr_origin_flush(st->fr);
}

static const struct fr_wb_ops fr_wb_ops = {
	.lock = stage_lock,
	.unlock = stage_unlock,
	.stage = stage_data,
	.submit = stage_submit,
	.flush = stage_flush,
	.skip = stage_skip,
};

static void stage_reset(struct fr_stage *st)
{
	st->buf_used = 0;
	st->nr_ext = 0;
	st->error = 0;
	st->chunk = U64_MAX;
	st->unreadable = 0;
	WARN_ON_ONCE(st->nr_marked);
}

static void fr_stage_free(struct fr_stage *st)
{
	if (!st)
		return;
	vfree(st->buf);
	kvfree(st->ext);
	kvfree(st->marked);
	kfree(st);
}

/* A stage for up to chunks chunks: their data, extents and slot marks. */
static struct fr_stage *fr_stage_alloc(struct dm_fr *fr, u32 chunks)
{
	u32 chunk_sectors = fr->cache.geo.chunk_sectors;
	struct fr_stage *st = kzalloc(sizeof(*st), GFP_KERNEL);

	if (!st)
		return NULL;
	st->fr = fr;
	st->buf_size = (size_t)chunks * chunk_sectors << SECTOR_SHIFT;
	/* A chunk stages at most one extent per two sectors. */
	st->max_ext = chunks * DIV_ROUND_UP(chunk_sectors, 2);
	st->max_marked = chunks;
	st->buf = vmalloc(st->buf_size);
	st->ext = kvmalloc_array(st->max_ext, sizeof(*st->ext), GFP_KERNEL);
	st->marked = kvmalloc_array(chunks, sizeof(*st->marked), GFP_KERNEL);
	if (!st->buf || !st->ext || !st->marked) {
		fr_stage_free(st);
		return NULL;
	}
	return st;
}

/*
 * One batch under wb_lock, from *cursor on (sweep: one that does not wrap,
 * fr_writeback_sweep()): the chunks written back, or an origin error
 * (counted; the target is degraded until a pass succeeds). unreadable
 * counts the chunks skipped because their PM data cannot be read.
 */
static int wb_batch(struct dm_fr *fr, u64 *cursor, bool sweep, u32 *unreadable)
{
	int r;

	mutex_lock(&fr->wb_lock);
	stage_reset(fr->wb_stage);
	if (sweep)
		r = fr_writeback_sweep(&fr->cache, cursor, fr->writeback_jobs,
				       fr->wb_snaps, &fr_wb_ops, fr->wb_stage);
	else
		r = fr_writeback(&fr->cache, cursor, fr->writeback_jobs,
				 fr->wb_snaps, &fr_wb_ops, fr->wb_stage);
	*unreadable = fr->wb_stage->unreadable;
	stage_release(fr->wb_stage);
	mutex_unlock(&fr->wb_lock);
	if (r < 0) {
		fr_stat_add(fr, origin_errors, 1);
		WRITE_ONCE(fr->degraded, true);
		return r;
	}
	fr_stat_add(fr, chunks_written_back, r);
	return r;
}

static struct fr_stage *victim_stage_get(struct dm_fr *fr)
{
	struct fr_victims *v = fr->wb_victim_stages;
	unsigned int i;

	down(&v->free);
	for (i = 0; i < FR_WB_VICTIM_STAGES; i++)
		if (!test_and_set_bit(i, &v->busy))
			return v->stage[i];
	/* The semaphore counts the free stages: one is free. */
	WARN_ON_ONCE(1);
	up(&v->free);
	return NULL;
}

static void victim_stage_put(struct dm_fr *fr, struct fr_stage *st)
{
	struct fr_victims *v = fr->wb_victim_stages;
	unsigned int i;

	for (i = 0; i < FR_WB_VICTIM_STAGES; i++)
		if (v->stage[i] == st)
			clear_bit(i, &v->busy);
	up(&v->free);
}

/*
 * For a write that must displace the dirty chunk victim: write it back
 * alone, with one origin write and one flush, beside the worker's batch.
 * If a batch has the victim's slot in flight, wait for that batch instead
 * (it may have cleaned the victim). The caller holds no slot lock and tries
 * the write again on 0. -EHWPOISON if the victim's data cannot be read
 * from PM: it cannot be displaced.
 */
int fr_writeback_victim(struct dm_fr *fr, fr_pchunk_t victim)
{
	u64 slot = from_slot(fr_slot_of_pchunk(victim));
	struct fr_wb_snap snap;
	struct fr_stage *st;
	int r;

	down_read(&fr->wb_victims);
	st = victim_stage_get(fr);
	if (!st) {
		up_read(&fr->wb_victims);
		return -ENOMEM;
	}
	stage_reset(st);
	r = fr_writeback_chunk(&fr->cache, victim, &snap, &fr_wb_ops, st);
	stage_release(st);
	victim_stage_put(fr, st);
	up_read(&fr->wb_victims);

	if (r == -EBUSY) {
		wait_event(fr->wb_busy_wait, !test_bit(slot, fr->wb_busy));
		return 0;
	}
	if (r == -EHWPOISON)
		return r;	/* counted in pm_errors by stage_data */
	if (r < 0) {
		fr_stat_add(fr, origin_errors, 1);
		WRITE_ONCE(fr->degraded, true);
		return r;
	}
	fr_stat_add(fr, chunks_written_back, r);
	return 0;
}

/*
 * For a write of several chunks that must displace the dirty chunk victim:
 * the victims of its other chunks lie in the slots after it (a region's
 * chunks are placed in consecutive slots), so one batch from the victim on
 * writes them all back with one origin flush, where one victim write each
 * would cost a flush each (a 128 KiB write meets up to 32). The batch runs
 * after the worker's batch in flight, and not at all if that one cleaned
 * the victim. A victim it did not clean (in flight in a victim write,
 * unreadable, or past the batch's end) is left to fr_writeback_victim.
 */
int fr_writeback_from(struct dm_fr *fr, fr_pchunk_t victim)
{
	u64 cursor = from_pchunk(victim);
	u32 unreadable;
	bool dirty;
	int r;

	mutex_lock(&fr->wb_lock);
	dirty = fr_chunk_dirty(&fr->cache, victim);
	mutex_unlock(&fr->wb_lock);
	if (!dirty)
		return 0;
	r = wb_batch(fr, &cursor, false, &unreadable);
	if (r < 0)
		return r;
	if (!fr_chunk_dirty(&fr->cache, victim))
		return 0;
	return fr_writeback_victim(fr, victim);
}

static unsigned int dirty_percent(struct dm_fr *fr)
{
	return div64_u64(fr_count_dirty(&fr->cache) * 100,
			 fr->cache.geo.nr_chunks);
}

/*
 * One pass: batches until nothing dirty is left, as many chunks as were
 * dirty when it began, at most one cache's worth, or (watermark mode) until
 * dirty falls under the low watermark.
 *
 * wb_lock is held for each batch, from stage to flush, and by every writer
 * that goes around PM (cleaner-mode write-through, discards): an origin
 * write of a staged chunk's sectors between stage and submit could land
 * before the stale staged copy and be overwritten by it (docs/protocol.md,
 * "Required serialization"). Victim writes run beside a batch, on slots it
 * has not marked. Between batches the lock is dropped, so the flush
 * message and the writers around PM are not held up a whole pass.
 */
static int writeback_pass(struct dm_fr *fr, bool to_low_watermark)
{
	u64 max_batches = div64_u64(fr->cache.geo.nr_chunks,
				    READ_ONCE(fr->writeback_jobs)) + 2;
	/* Under steady writes, do not chase what was written after the start. */
	u64 budget = fr_count_dirty(&fr->cache);
	u64 written = 0;
	u32 unreadable;
	int r;

	while (max_batches-- && written < budget &&
	       !READ_ONCE(fr->wb_stopped)) {
		if (to_low_watermark &&
		    dirty_percent(fr) < READ_ONCE(fr->low_watermark))
			break;
		r = wb_batch(fr, &fr->wb_cursor, false, &unreadable);
		if (r < 0)
			return r;
		if (!r) {
			/*
			 * The batch went round every dirty chunk and could
			 * stage none (what it skipped is all that is left), or
			 * what it staged was rewritten meanwhile: either way,
			 * the next tick goes on (a flush does not stop here).
			 */
			WRITE_ONCE(fr->wb_unreadable, unreadable);
			break;
		}
		written += r;
		cond_resched();
	}
	if (!fr_count_dirty(&fr->cache))
		WRITE_ONCE(fr->wb_unreadable, 0);
	if (written)
		fr_stat_add(fr, writeback_rounds, 1);
	WRITE_ONCE(fr->degraded, false);
	return 0;
}

/*
 * Writes and forced writebacks since the last tick, from the per-CPU
 * counters: the I/O path pays nothing for the worker's question.
 */
static void wb_activity(struct dm_fr *fr, bool *busy, bool *collided)
{
	u64 writes = 0, forced = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct fr_stats *s = per_cpu_ptr(fr->stats, cpu);

		writes += READ_ONCE(s->write_hits) + READ_ONCE(s->write_misses);
		forced += READ_ONCE(s->forced_writebacks);
	}
	*busy = writes != fr->wb_seen_writes;
	*collided = forced != fr->wb_seen_forced;
	fr->wb_seen_writes = writes;
	fr->wb_seen_forced = forced;
}

/*
 * Whether this tick of the periodic writeback makes a full pass.
 *
 * Dirty data on PM is already durable, so writing it back is only about
 * keeping slots clean for the data that will land on them. While writes keep
 * arriving and none collides with a dirty chunk, the pass is put off (at
 * most writeback_defer ms after the last one): the origin I/O would compete
 * with the writer and buy nothing yet, and a chunk rewritten meanwhile is
 * written back once. FR_WB_IDLE_MS without a write, a forced writeback in
 * the last FR_WB_COLLIDED_MS (the layout needs clean slots: a tick without
 * one under steady collisions is not the end of them) or the age bound
 * makes it due at once; the high watermark still applies while deferring
 * (writeback_work).
 */
static bool wb_pass_due(struct dm_fr *fr)
{
	unsigned int defer = READ_ONCE(fr->writeback_defer_ms);
	unsigned long now = jiffies;
	bool busy, collided;

	wb_activity(fr, &busy, &collided);
	if (busy)
		fr->wb_busy_at = now;
	if (collided)
		fr->wb_collided_at = now;
	return !defer ||
	       time_before(now, fr->wb_collided_at +
			   msecs_to_jiffies(FR_WB_COLLIDED_MS)) ||
	       time_after_eq(now, fr->wb_busy_at +
			     msecs_to_jiffies(FR_WB_IDLE_MS)) ||
	       time_after_eq(now, fr->wb_passed_at + msecs_to_jiffies(defer));
}

/* Past the high watermark? (The count is kept, not scanned: every tick.) */
static bool wb_over_high_watermark(struct dm_fr *fr)
{
	return dirty_percent(fr) >= READ_ONCE(fr->high_watermark);
}

/* The worker's period, and the delay of its first tick after a wake. */
static unsigned int wb_tick_ms(struct dm_fr *fr)
{
	unsigned int period = READ_ONCE(fr->writeback_period_ms);

	return period ? period : FR_WB_POLL_MS;
}

/*
 * Stop ticking if nothing is dirty and no write came for FR_WB_IDLE_MS: on
 * an idle device a tick buys nothing and costs a timer and a pass over the
 * dirty bitmap (32 MiB for a 1 TiB PM) every period. The first write that
 * dirties a chunk wakes the worker (fr_writeback_note_dirty()). True if
 * asleep; the caller does not queue the work again.
 */
static bool wb_try_sleep(struct dm_fr *fr)
{
	if (READ_ONCE(fr->cleaner) ||
	    time_before(jiffies, READ_ONCE(fr->wb_busy_at) +
			msecs_to_jiffies(FR_WB_IDLE_MS)))
		return false;
	atomic_set(&fr->wb_asleep, 1);
	/* Pairs with fr_writeback_note_dirty(): one of the two sees the other. */
	smp_mb();
	if (!fr_count_dirty(&fr->cache))
		return true;
	/* A wake that took the flag queued the work: running again is harmless. */
	atomic_set(&fr->wb_asleep, 0);
	return false;
}

/*
 * The slow path of fr_writeback_note_dirty(), for the first write to find
 * the worker asleep (the flag's exchange picks one). Nothing was dirty
 * until now, as good as a pass: the deferral's age bound counts from here.
 */
void fr_writeback_wake(struct dm_fr *fr)
{
	if (!atomic_xchg(&fr->wb_asleep, 0))
		return;
	WRITE_ONCE(fr->wb_passed_at, jiffies);
	WRITE_ONCE(fr->wb_busy_at, jiffies);
	if (!READ_ONCE(fr->wb_stopped))
		queue_delayed_work(fr->wb_wq, &fr->wb_work,
				   msecs_to_jiffies(wb_tick_ms(fr)));
}

static void writeback_work(struct work_struct *work)
{
	struct dm_fr *fr = container_of(to_delayed_work(work), struct dm_fr,
					wb_work);
	unsigned int period = READ_ONCE(fr->writeback_period_ms);
	unsigned long start = jiffies;
	unsigned int delay;
	int r = 0;

	if (READ_ONCE(fr->cleaner) || (period && wb_pass_due(fr))) {
		r = writeback_pass(fr, false);
		if (!r)
			fr->wb_passed_at = start;
	} else if (wb_over_high_watermark(fr)) {
		r = writeback_pass(fr, true);
	}

	if (!r && wb_try_sleep(fr))
		return;
	if (r) {
		fr->wb_backoff_ms = clamp(fr->wb_backoff_ms * 2,
					  FR_WB_BACKOFF_MIN_MS,
					  FR_WB_BACKOFF_MAX_MS);
		delay = fr->wb_backoff_ms;
	} else {
		fr->wb_backoff_ms = 0;
		delay = wb_tick_ms(fr);
		if (READ_ONCE(fr->cleaner))
			delay = min(delay, FR_WB_POLL_MS);
	}
	if (!READ_ONCE(fr->wb_stopped))
		queue_delayed_work(fr->wb_wq, &fr->wb_work,
				   msecs_to_jiffies(delay));
}

/*
 * Write back everything now (the flush message); wait for it.
 *
 * One sweep of the whole cache, chunk 0 to the end, with a cursor of its
 * own (fr_writeback_sweep()): every chunk dirty when it began is staged on
 * the way unless a later write replaced it first, so what was acknowledged
 * before the flush and not rewritten since is on the origin when it
 * returns, however many writes arrive meanwhile; and it ends, as each batch
 * moves the cursor on. writeback_pass() does not fit: new dirty chunks
 * ahead of its cursor use up its budget, and a batch whose chunks were all
 * rewritten cleans none and ends it. No victim write runs meanwhile
 * (wb_victims): the sweep would skip a chunk one has in flight, and return
 * before that write is on the origin.
 */
int fr_writeback_all(struct dm_fr *fr)
{
	u64 cursor = 0, written = 0;
	u32 unreadable, skipped = 0;
	int r;

	if (READ_ONCE(fr->wb_stopped))
		return -EBUSY;	/* suspended: the origin is not to be written */
	mutex_lock(&fr->flush_lock);
	down_write(&fr->wb_victims);
	while (cursor < fr->cache.geo.nr_chunks) {
		/* Suspended meanwhile: stop at a batch boundary. */
		if (READ_ONCE(fr->wb_stopped)) {
			r = -EBUSY;
			goto out;
		}
		r = wb_batch(fr, &cursor, true, &unreadable);
		if (r < 0)
			goto out;
		written += r;
		skipped += unreadable;
		cond_resched();
	}

	/* Chunks the sweep skipped stay dirty: their PM cannot be read. */
	WRITE_ONCE(fr->wb_unreadable, skipped);
	WRITE_ONCE(fr->degraded, false);
	if (written)
		fr_stat_add(fr, writeback_rounds, 1);
	r = skipped ? -EHWPOISON : 0;
out:
	up_write(&fr->wb_victims);
	mutex_unlock(&fr->flush_lock);
	return r;
}

int fr_writeback_set_jobs(struct dm_fr *fr, unsigned int jobs)
{
	struct fr_wb_snap *snaps;
	struct fr_stage *st;

	snaps = kvmalloc_array(jobs, sizeof(*snaps), GFP_KERNEL);
	st = fr_stage_alloc(fr, jobs);
	if (!snaps || !st) {
		kvfree(snaps);
		fr_stage_free(st);
		return -ENOMEM;
	}
	mutex_lock(&fr->wb_lock);
	swap(fr->wb_stage, st);
	swap(fr->wb_snaps, snaps);
	fr->writeback_jobs = jobs;
	mutex_unlock(&fr->wb_lock);
	fr_stage_free(st);
	kvfree(snaps);
	return 0;
}

static void victim_stages_free(struct fr_victims *v)
{
	unsigned int i;

	if (!v)
		return;
	for (i = 0; i < FR_WB_VICTIM_STAGES; i++)
		fr_stage_free(v->stage[i]);
	kfree(v);
}

static struct fr_victims *victim_stages_alloc(struct dm_fr *fr)
{
	struct fr_victims *v = kzalloc(sizeof(*v), GFP_KERNEL);
	unsigned int i;

	if (!v)
		return NULL;
	sema_init(&v->free, FR_WB_VICTIM_STAGES);
	for (i = 0; i < FR_WB_VICTIM_STAGES; i++) {
		v->stage[i] = fr_stage_alloc(fr, 1);
		if (!v->stage[i]) {
			victim_stages_free(v);
			return NULL;
		}
		v->stage[i]->for_victim = true;
	}
	return v;
}

int fr_writeback_setup(struct dm_fr *fr)
{
	mutex_init(&fr->wb_lock);
	mutex_init(&fr->flush_lock);
	init_rwsem(&fr->wb_victims);
	init_waitqueue_head(&fr->wb_busy_wait);
	INIT_DELAYED_WORK(&fr->wb_work, writeback_work);
	fr->wb_stopped = true;
	fr->wb_busy = bitmap_zalloc(fr->cache.geo.nr_slots, GFP_KERNEL);
	fr->wb_victim_stages = victim_stages_alloc(fr);
	fr->wb_wq = alloc_workqueue("dm-fr-wb", WQ_MEM_RECLAIM | WQ_UNBOUND, 1);
	if (!fr->wb_busy || !fr->wb_victim_stages || !fr->wb_wq)
		return -ENOMEM;
	return fr_writeback_set_jobs(fr, fr->writeback_jobs);
}

void fr_writeback_teardown(struct dm_fr *fr)
{
	fr_writeback_stop(fr);
	if (fr->wb_wq)
		destroy_workqueue(fr->wb_wq);
	fr_stage_free(fr->wb_stage);
	fr->wb_stage = NULL;
	kvfree(fr->wb_snaps);
	fr->wb_snaps = NULL;
	victim_stages_free(fr->wb_victim_stages);
	fr->wb_victim_stages = NULL;
	bitmap_free(fr->wb_busy);
	fr->wb_busy = NULL;
}

void fr_writeback_start(struct dm_fr *fr)
{
	fr->wb_passed_at = jiffies;
	fr->wb_busy_at = jiffies;
	fr->wb_collided_at = jiffies - msecs_to_jiffies(FR_WB_COLLIDED_MS);
	atomic_set(&fr->wb_asleep, 0);
	WRITE_ONCE(fr->wb_stopped, false);
	queue_delayed_work(fr->wb_wq, &fr->wb_work, 0);
}

/*
 * No origin write of cached data after this returns: the periodic worker is
 * cancelled, and a flush message in progress (which checks wb_stopped
 * between batches) has finished its batch and returned.
 */
void fr_writeback_stop(struct dm_fr *fr)
{
	WRITE_ONCE(fr->wb_stopped, true);
	cancel_delayed_work_sync(&fr->wb_work);
	mutex_lock(&fr->flush_lock);
	mutex_unlock(&fr->flush_lock);
}

void fr_writeback_kick(struct dm_fr *fr)
{
	atomic_set(&fr->wb_asleep, 0);
	if (!READ_ONCE(fr->wb_stopped))
		mod_delayed_work(fr->wb_wq, &fr->wb_work, 0);
}
