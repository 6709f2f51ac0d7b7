// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writeback: dirty chunks go from PM to the origin, and only once the origin
 * has been flushed does the core clear their dirty flags (fr_writeback()).
 *
 * The worker runs every writeback_period ms. Dirty data on PM is durable
 * already, so it is written back by need, not at once: while writes keep
 * coming the full pass is put off, up to writeback_defer ms (wb_pass_due),
 * and a write that collides with a dirty chunk cleans its own victim
 * (fr_writeback_victim); meanwhile the ticks write back the full slots
 * (every chunk dirty), where the next collisions would come from
 * (writeback_full), and only those. The high watermark starts a pass down to the low one.
 * Only when writes collide often enough to say the data outgrow the PM
 * (wb_sample) does the worker drain the cache every tick, as First
 * Responder's periodic flush does always. With a period of 0 it follows the
 * watermarks alone. Origin errors leave the data dirty on PM, mark the
 * target degraded and back the worker off exponentially.
 *
 * Each batch and each victim write runs on a stage (fr-stage.c), which
 * copies the chunks the core pinned from PM into buffers of DRAM, machine-
 * check safe, sends them to the origin and flushes it.
 *
 * A write whose slot must displace a dirty chunk writes that victim back
 * alone (fr_writeback_victim), or, for a write of several chunks, the
 * victims of its slots as one range (fr_writeback_from), beside the
 * worker's batch rather than after it: one origin write and one flush.
 * The core's pins keep the two off each other's slots: a batch skips a
 * slot in which a victim write has pinned a chunk, and a victim write waits
 * for a batch that has pinned a chunk of its slot. The writers that go
 * around PM (cleaner write-through, discards, bypass) and the flush message
 * hold wb.victim_lock for writing, so no victim write runs beside them.
 */
#include <linux/blkdev.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "dm-fr.h"
#include "fr-stage.h"

#define FR_WB_POLL_MS		100	/* the tick with a period of 0 */
#define FR_WB_IDLE_MS		100	/* no write this long: idle */
/*
 * The data outgrow the PM when, over a sample of at least
 * FR_WB_SAMPLE_CHUNKS chunks and FR_WB_SAMPLE_BIOS writes, one write in
 * FR_WB_DRAIN_ENTER or more collided with a dirty chunk; the worker drains
 * until a sample sees fewer than one in FR_WB_DRAIN_LEAVE (wb_sample() says
 * why these).
 */
#define FR_WB_SAMPLE_CHUNKS	4096
/*
 * Bytes of the dirty bitmap a scan for full slots may read per ms:
 * every tick on a PM of up to 20 GiB (of 4 KiB chunks) at the default
 * period, every half second on 1 TiB (writeback_full_due).
 */
#define FR_WB_FULL_SCAN_BYTES_PER_MS	(64 << 10)
#define FR_WB_SAMPLE_BIOS	256
#define FR_WB_DRAIN_ENTER	256
#define FR_WB_DRAIN_LEAVE	1024
#define FR_WB_BACKOFF_MIN_MS	100
#define FR_WB_BACKOFF_MAX_MS	10000
#define FR_WB_VICTIM_STAGES	4	/* victim writes in flight at once */
/* What one victim write may write back: a 128 KiB write's victims, twice. */
#define FR_WB_VICTIM_BYTES	(256 << 10)

/* A victim write's stage and snapshots, for up to max_chunks chunks. */
struct fr_victim_stage {
	struct fr_stage *stage;
	struct fr_wb_snap *snaps;
};

/* The victim writes' stages: a fixed few, taken under a semaphore. */
struct fr_victims {
	struct semaphore free;
	unsigned long in_use;
	u32 max_chunks;		/* whole slots */
	struct fr_victim_stage vs[FR_WB_VICTIM_STAGES];
};

/*
 * Count what a batch or a victim write did: chunks written back, or an
 * origin error (the target is degraded until a pass succeeds). -EHWPOISON
 * (counted in pm_errors by stage_data) and -EBUSY are no origin errors.
 */
static int wb_result(struct dm_fr *fr, int r)
{
	if (r == -EHWPOISON || r == -EBUSY)
		return r;
	if (r < 0) {
		fr_stat_add(fr, origin_errors, 1);
		WRITE_ONCE(fr->degraded, true);
		return r;
	}
	fr_stat_add(fr, chunks_written_back, r);
	return r;
}

/*
 * One batch under wb.lock, from *cursor on: the chunks written back, or an
 * origin error (counted; the target is degraded until a pass succeeds).
 * unreadable counts the chunks skipped because their PM data cannot be read.
 */
static int wb_batch(struct dm_fr *fr, u64 *cursor, enum fr_wb_scan scan,
		    u32 *unreadable)
{
	struct blk_plug plug;
	struct fr_stage *st;
	u32 jobs;
	int r;

	mutex_lock(&fr->wb.lock);
	/* The stage and snaps are sized for it (fr_writeback_set_jobs). */
	jobs = fr_tunable(fr, writeback_jobs);
	st = fr->wb.stage;
	fr_stage_reset(st);
	/*
	 * One plug over the batch: the origin writes of consecutive buffers
	 * merge into larger requests (it is flushed whenever the batch sleeps,
	 * for a slot lock, a buffer or its writes).
	 */
	blk_start_plug(&plug);
	/* (a batch to the end is the sweep's: it ends at the cache's end) */
	r = fr_writeback_batch(&fr->cache, scan, cursor, fr->cache.geo.nr_chunks,
			       jobs, fr->wb.snaps, &fr_stage_ops, st);
	blk_finish_plug(&plug);
	*unreadable = fr_stage_unreadable(st);
	fr_stage_release(st);
	mutex_unlock(&fr->wb.lock);
	return wb_result(fr, r);
}

static struct fr_victim_stage *victim_stage_get(struct dm_fr *fr)
{
	struct fr_victims *v = fr->wb.victim_stages;
	unsigned int i;

	down(&v->free);
	for (i = 0; i < FR_WB_VICTIM_STAGES; i++)
		if (!test_and_set_bit(i, &v->in_use)) {
			fr_stage_reset(v->vs[i].stage);
			return &v->vs[i];
		}
	/* The semaphore counts the free stages: one is free. */
	WARN_ON_ONCE(1);
	up(&v->free);
	return NULL;
}

static void victim_stage_put(struct dm_fr *fr, struct fr_victim_stage *vs)
{
	struct fr_victims *v = fr->wb.victim_stages;

	fr_stage_release(vs->stage);
	clear_bit(vs - v->vs, &v->in_use);
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
	fr_slot_t slot = fr_slot_of_pchunk(&fr->cache.geo, victim);
	struct fr_victim_stage *vs;
	int r;

	down_read(&fr->wb.victim_lock);
	vs = victim_stage_get(fr);
	if (!vs) {
		up_read(&fr->wb.victim_lock);
		return -ENOMEM;
	}
	r = fr_writeback_chunk(&fr->cache, victim, vs->snaps, &fr_stage_ops,
			       vs->stage);
	victim_stage_put(fr, vs);
	up_read(&fr->wb.victim_lock);

	r = wb_result(fr, r);
	if (r == -EBUSY) {
		fr_stat_add(fr, pinned_waits, 1);
		wait_event(fr->wb.pin_wait,
			   !fr_slot_pinned(&fr->cache, slot));
		return 0;
	}
	return r < 0 ? r : 0;
}

/*
 * For a write of several chunks that must displace the dirty chunk victim:
 * the victims of its other chunks lie in the slots after the victim's, up
 * to last, the slot of its last chunk (a region's chunks are placed in
 * consecutive slots, and a bio stays within a region), so one range over
 * those slots writes them all back with one origin flush, where one victim
 * write each would cost a flush each (a 128 KiB write meets up to 32). Like
 * a victim write it runs beside the worker's batch, not after it, so the
 * write waits for its own victims' origin write and one flush. A victim the
 * range did not clean (its slot in flight in another stage, unreadable, or
 * a second version of its key, which ends a batch) is left to
 * fr_writeback_victim.
 */
int fr_writeback_from(struct dm_fr *fr, fr_pchunk_t victim, fr_slot_t last)
{
	struct fr_victim_stage *vs;
	struct blk_plug plug;
	fr_pchunk_t first;
	u32 nr;
	int r;

	nr = fr_victim_range(&fr->cache.geo, victim, last,
			     fr->wb.victim_stages->max_chunks, &first);
	down_read(&fr->wb.victim_lock);
	vs = victim_stage_get(fr);
	if (!vs) {
		up_read(&fr->wb.victim_lock);
		return -ENOMEM;
	}
	blk_start_plug(&plug);
	r = fr_writeback_range(&fr->cache, first, nr, vs->snaps, &fr_stage_ops,
			       vs->stage);
	blk_finish_plug(&plug);
	victim_stage_put(fr, vs);
	up_read(&fr->wb.victim_lock);

	/* A batch skips what it cannot read: only origin errors fail it. */
	r = wb_result(fr, r);
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
 * Full slots (every chunk dirty) go first: the next write placed in
 * one must wait for a writeback of its own, while a slot with a clean chunk
 * takes a write as it is. The pass writes them back in full batches, and
 * from its first batch that comes back short goes on in position order,
 * which keeps the origin's writes in order. Only once per pass: under
 * steady collisions full slots appear a few at a time, and a batch
 * of a few chunks would cost a whole origin flush.
 *
 * wb.lock is held for each batch, from stage to flush, and by every writer
 * that goes around PM (cleaner-mode write-through, discards): an origin
 * write of a staged chunk's sectors between stage and submit could land
 * before the stale staged copy and be overwritten by it (docs/protocol.md,
 * "Required serialization"). Victim writes run beside a batch, on slots it
 * has not pinned. Between batches the lock is dropped, so the flush
 * message and the writers around PM are not held up a whole pass.
 */
static int writeback_pass(struct dm_fr *fr, bool to_low_watermark,
			  bool for_cleaner)
{
	u64 max_batches = div64_u64(fr->cache.geo.nr_chunks,
				    fr_tunable(fr, writeback_jobs)) + 2;
	/* Under steady writes, do not chase what was written after the start. */
	u64 budget = fr_count_dirty(&fr->cache);
	u64 written = 0;
	bool full_first = true;
	u32 unreadable;
	int r;

	while (max_batches-- && written < budget &&
	       !READ_ONCE(fr->wb.stopped)) {
		if (to_low_watermark &&
		    dirty_percent(fr) < fr_tunable(fr, low_watermark))
			break;
		/* cleaner off (frctl detach interrupted): stop here. */
		if (for_cleaner && !READ_ONCE(fr->cleaner))
			break;
		if (full_first) {
			r = wb_batch(fr, &fr->wb.full_cursor, FR_WB_FULL_SLOTS,
				     &unreadable);
			if (r < 0)
				return r;
			written += r;
			full_first = r >= fr_tunable(fr, writeback_jobs);
			if (r) {
				cond_resched();
				continue;
			}
		}
		r = wb_batch(fr, &fr->wb.cursor, FR_WB_WRAP, &unreadable);
		if (r < 0)
			return r;
		if (!r) {
			/*
			 * The batch went round every dirty chunk and could
			 * stage none (what it skipped is all that is left), or
			 * what it staged was rewritten meanwhile: either way,
			 * the next tick goes on (a flush does not stop here).
			 */
			WRITE_ONCE(fr->wb.unreadable, unreadable);
			break;
		}
		written += r;
		cond_resched();
	}
	if (!fr_count_dirty(&fr->cache))
		WRITE_ONCE(fr->wb.unreadable, 0);
	if (written)
		fr_stat_add(fr, writeback_rounds, 1);
	WRITE_ONCE(fr->degraded, false);
	return 0;
}

/*
 * With no pass due, while writes come: write back the full slots (every
 * chunk dirty), and only those. The next write placed in
 * one must displace a dirty chunk and wait for its origin write and flush;
 * a slot with a clean chunk takes a write as it is, so the rest stays on PM,
 * where a rewrite costs the origin nothing. Full batches while there are
 * enough; the batch that comes back short went round every full slot.
 */
static int writeback_full(struct dm_fr *fr)
{
	u64 max_batches = div64_u64(fr->cache.geo.nr_chunks,
				    fr_tunable(fr, writeback_jobs)) + 2;
	u64 written = 0;
	u32 unreadable;
	int r;

	do {
		r = wb_batch(fr, &fr->wb.full_cursor, FR_WB_FULL_SLOTS,
			     &unreadable);
		if (r < 0)
			return r;
		written += r;
		cond_resched();
	} while (r >= fr_tunable(fr, writeback_jobs) && --max_batches &&
		 !READ_ONCE(fr->wb.stopped));
	if (written)
		fr_stat_add(fr, writeback_rounds, 1);
	return 0;
}

/*
 * Chunks written, write bios and forced writebacks since the last tick,
 * from the per-CPU counters: the I/O path pays nothing for the worker's
 * question.
 */
static void wb_activity(struct dm_fr *fr, u64 *chunks, u64 *bios, u64 *forced)
{
	u64 c = 0, b = 0, f = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct fr_stats *s = per_cpu_ptr(fr->stats, cpu);

		c += READ_ONCE(s->write_hits) + READ_ONCE(s->write_misses);
		b += READ_ONCE(s->write_bios);
		f += READ_ONCE(s->forced_writebacks);
	}
	if (c < fr->wb.seen_chunks || b < fr->wb.seen_bios ||
	    f < fr->wb.seen_forced) {
		/* clear_stats zeroed them: this tick counts nothing. */
		*chunks = 0;
		*bios = 0;
		*forced = 0;
	} else {
		*chunks = c - fr->wb.seen_chunks;
		*bios = b - fr->wb.seen_bios;
		*forced = f - fr->wb.seen_forced;
	}
	fr->wb.seen_chunks = c;
	fr->wb.seen_bios = b;
	fr->wb.seen_forced = f;
}

/*
 * Whether the data outgrow the PM, from the share of writes (bios) that
 * collided with a dirty chunk: each waits for an origin write and flush of
 * its own. A sample spans 4096 chunks and 256 writes at least: a few
 * seconds of 128 KiB writes, a fraction of one of 4 KiB writes.
 * Left dirty up to the high watermark, data that outgrow the PM fill half
 * its slots with dirty chunks, and collisions multiply: with only the
 * full slots cleaned, random writes over four times the PM met one in
 * 52 to 60 writes and Btrfs's varmail run for 40 s one in 75 to 134, where a
 * drain every tick kept them at one in 226 to 560; Btrfs's 10 s run, whose
 * writes fit, met one in 1,386 to 2,546 (bench/results/wb-full-slots). So
 * one in 256 starts the drain, and it goes on while a sample still sees one
 * in 1,024: under a drain such data collide less, but not that little.
 * Sequential 128 KiB writes over four times the PM collided once in about
 * 50 writes with only full slots cleaned (one in 1,600 chunks), and
 * sent the origin 15 KiB requests where a drain every tick sent 121 KiB:
 * writes, not chunks, are what the rate counts.
 */
static void wb_sample(struct dm_fr *fr, u64 chunks, u64 bios, u64 forced)
{
	struct fr_writeback *wb = &fr->wb;
	u64 ratio = wb->draining ? FR_WB_DRAIN_LEAVE : FR_WB_DRAIN_ENTER;
	bool drain;

	wb->sample_chunks += chunks;
	wb->sample_bios += bios;
	wb->sample_forced += forced;
	if (wb->sample_chunks < FR_WB_SAMPLE_CHUNKS ||
	    wb->sample_bios < FR_WB_SAMPLE_BIOS)
		return;
	drain = wb->sample_forced * ratio >= wb->sample_bios;
	if (drain && !wb->draining)
		WRITE_ONCE(wb->drains, wb->drains + 1);
	wb->draining = drain;
	wb->sample_chunks = 0;
	wb->sample_bios = 0;
	wb->sample_forced = 0;
}

/*
 * Whether this tick of the periodic writeback makes a full pass.
 *
 * Dirty data on PM is already durable, so writing it back is only about
 * keeping slots clean for the data that will land on them, and about how
 * much a lost PM would take with it. While writes keep arriving the pass is
 * put off, at most writeback_defer ms after the last one: the origin I/O
 * would compete with the writer, and a chunk rewritten meanwhile is written
 * back once, or never if it is rewritten again. writeback_idle ms without
 * a write, the age bound, or a drain (the data outgrow the PM: wb_sample)
 * makes it due; the watermarks and the full slots apply meanwhile
 * (writeback_work).
 */
static bool wb_pass_due(struct dm_fr *fr)
{
	unsigned int defer = fr_tunable(fr, writeback_defer);
	unsigned int idle = fr_tunable(fr, writeback_idle);
	unsigned long now = jiffies;

	/*
	 * A drain writes back everything, not down to the low watermark: with
	 * random writes four times the PM, stopping at the low watermark ran
	 * at 0.70 to 0.76x of the full drain (bench/results/wb-drain).
	 */
	return !defer || fr->wb.draining ||
	       (idle && time_after_eq(now, fr->wb.busy_at +
				      msecs_to_jiffies(idle))) ||
	       time_after_eq(now, fr->wb.passed_at + msecs_to_jiffies(defer));
}

/*
 * Whether to look for full slots this tick: after a collision, and
 * else as often as the scan of the dirty bitmap (one bit per chunk: 16 KiB
 * for a 512 MiB PM, 32 MiB for 1 TiB) stays within its budget. Cleaning
 * them before a write meets one is what keeps a file system whose blocks
 * share slots (ext4's journal beside its data) from waiting on the origin.
 */
static bool writeback_full_due(struct dm_fr *fr, u64 forced)
{
	unsigned long gap = msecs_to_jiffies(div64_u64(fr->cache.geo.nr_chunks / 8,
						FR_WB_FULL_SCAN_BYTES_PER_MS));

	if (forced || time_after_eq(jiffies, fr->wb.full_at + gap)) {
		fr->wb.full_at = jiffies;
		return true;
	}
	return false;
}

/* Past the high watermark? (The count is kept, not scanned: every tick.) */
static bool wb_over_high_watermark(struct dm_fr *fr)
{
	return dirty_percent(fr) >= fr_tunable(fr, high_watermark);
}

/* The worker's period, and the delay of its first tick after a wake. */
static unsigned int wb_tick_ms(struct dm_fr *fr)
{
	unsigned int period = fr_tunable(fr, writeback_period);

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
	    time_before(jiffies, READ_ONCE(fr->wb.busy_at) +
			msecs_to_jiffies(FR_WB_IDLE_MS)))
		return false;
	atomic_set(&fr->wb.asleep, 1);
	/* Pairs with fr_writeback_note_dirty(): one of the two sees the other. */
	smp_mb();
	if (!fr_count_dirty(&fr->cache))
		return true;
	/* A wake that took the flag queued the work: running again is harmless. */
	atomic_set(&fr->wb.asleep, 0);
	return false;
}

/*
 * The slow path of fr_writeback_note_dirty(), for the first write to find
 * the worker asleep (the flag's exchange picks one). Nothing was dirty
 * until now, as good as a pass: the deferral's age bound counts from here.
 */
void fr_writeback_wake(struct dm_fr *fr)
{
	if (!atomic_xchg(&fr->wb.asleep, 0))
		return;
	WRITE_ONCE(fr->wb.passed_at, jiffies);
	WRITE_ONCE(fr->wb.busy_at, jiffies);
	if (!READ_ONCE(fr->wb.stopped))
		queue_delayed_work(fr->wb.wq, &fr->wb.work,
				   msecs_to_jiffies(wb_tick_ms(fr)));
}

static void writeback_work(struct work_struct *work)
{
	struct dm_fr *fr = container_of(to_delayed_work(work), struct dm_fr,
					wb.work);
	unsigned int period = fr_tunable(fr, writeback_period);
	unsigned long start = jiffies;
	u64 chunks, bios, forced;
	unsigned int delay;
	int r = 0;

	wb_activity(fr, &chunks, &bios, &forced);
	if (chunks) {
		fr->wb.busy_at = start;
		wb_sample(fr, chunks, bios, forced);
	} else if (time_after_eq(start, fr->wb.busy_at +
				 msecs_to_jiffies(FR_WB_IDLE_MS))) {
		/* Idle: the next writes start a sample of their own. */
		fr->wb.draining = false;
		fr->wb.sample_chunks = 0;
		fr->wb.sample_bios = 0;
		fr->wb.sample_forced = 0;
	}

	if (period && wb_pass_due(fr)) {
		r = writeback_pass(fr, false, false);
		if (!r)
			fr->wb.passed_at = start;
	} else if (READ_ONCE(fr->cleaner)) {
		r = writeback_pass(fr, false, true);
		if (!r && READ_ONCE(fr->cleaner))
			fr->wb.passed_at = start;
	} else if (wb_over_high_watermark(fr)) {
		r = writeback_pass(fr, true, false);
	} else if (period && chunks && writeback_full_due(fr, forced)) {
		r = writeback_full(fr);
	}

	if (!r && wb_try_sleep(fr))
		return;
	if (r) {
		fr->wb.backoff_ms = clamp(fr->wb.backoff_ms * 2,
					  FR_WB_BACKOFF_MIN_MS,
					  FR_WB_BACKOFF_MAX_MS);
		delay = fr->wb.backoff_ms;
	} else {
		fr->wb.backoff_ms = 0;
		delay = wb_tick_ms(fr);
		if (READ_ONCE(fr->cleaner))
			delay = min(delay, FR_WB_POLL_MS);
	}
	if (!READ_ONCE(fr->wb.stopped))
		queue_delayed_work(fr->wb.wq, &fr->wb.work,
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
 * (wb.victim_lock): the sweep would skip a chunk one has in flight, and return
 * before that write is on the origin; nor a write around PM (admission
 * paused), whose pins would make it skip a dirty chunk of the same slot. A
 * suspend stops it at a batch boundary (-EBUSY, unless it is the suspend's
 * own sweep), and so does a fatal signal to the caller (-EINTR): a flush can
 * be interrupted, and what it wrote back stays written back.
 */
static int writeback_sweep(struct dm_fr *fr, bool suspending)
{
	u64 cursor = 0, written = 0;
	u32 unreadable, skipped = 0;
	int r;

	if (!suspending && READ_ONCE(fr->wb.stopped))
		return -EBUSY;	/* suspended: the origin is not to be written */
	mutex_lock(&fr->flush_lock);
	down_write(&fr->wb.victim_lock);
	/* Nor a write around PM, whose pins would make it skip a chunk. */
	fr_admit_pause(fr);
	while (cursor < fr->cache.geo.nr_chunks) {
		/* Suspended meanwhile: stop at a batch boundary. */
		if (!suspending && READ_ONCE(fr->wb.stopped)) {
			r = -EBUSY;
			goto out;
		}
		/* Its caller was killed (Ctrl-C on frctl or dmsetup). */
		if (fatal_signal_pending(current)) {
			r = -EINTR;
			goto out;
		}
		r = wb_batch(fr, &cursor, FR_WB_TO_END, &unreadable);
		if (r < 0)
			goto out;
		written += r;
		skipped += unreadable;
		cond_resched();
	}

	/* Chunks the sweep skipped stay dirty: their PM cannot be read. */
	WRITE_ONCE(fr->wb.unreadable, skipped);
	WRITE_ONCE(fr->degraded, false);
	if (written)
		fr_stat_add(fr, writeback_rounds, 1);
	r = skipped ? -EHWPOISON : 0;
out:
	fr_admit_resume(fr);
	up_write(&fr->wb.victim_lock);
	mutex_unlock(&fr->flush_lock);
	return r;
}

int fr_writeback_all(struct dm_fr *fr)
{
	return writeback_sweep(fr, false);
}

/*
 * The last sweep of a device in cleaner mode, from postsuspend: no bio is
 * in flight or mapped any more, so the dirty set only shrinks, and the
 * suspend returns with the origin complete unless the origin failed or PM
 * could not be read (chunks_dirty in the status says). This is what lets
 * a table swap after "cleaner on" (frctl detach) leave nothing behind: the
 * worker drains while writes come, and what the last writes dirtied goes
 * here, before the suspend returns and the new table takes over.
 */
void fr_writeback_final(struct dm_fr *fr)
{
	int r;

	if (!fr_count_dirty(&fr->cache))
		return;
	r = writeback_sweep(fr, true);
	if (r)
		DMWARN("%s: suspend in cleaner mode: %llu dirty chunks left on PM (%d)",
		       dm_table_device_name(fr->ti->table),
		       (unsigned long long)fr_count_dirty(&fr->cache), r);
}

int fr_writeback_set_jobs(struct dm_fr *fr, unsigned int jobs)
{
	struct fr_wb_snap *snaps;
	struct fr_stage *st;

	snaps = kvmalloc_array(jobs, sizeof(*snaps), GFP_KERNEL);
	st = fr_stage_create(fr, FR_STAGE_BATCH);
	if (!snaps || !st) {
		kvfree(snaps);
		fr_stage_destroy(st);
		return -ENOMEM;
	}
	mutex_lock(&fr->wb.lock);
	swap(fr->wb.stage, st);
	swap(fr->wb.snaps, snaps);
	WRITE_ONCE(fr->tunables[FR_TUNABLE_writeback_jobs], jobs);
	mutex_unlock(&fr->wb.lock);
	fr_stage_destroy(st);
	kvfree(snaps);
	return 0;
}

static void victim_stages_free(struct fr_victims *v)
{
	unsigned int i;

	if (!v)
		return;
	for (i = 0; i < FR_WB_VICTIM_STAGES; i++) {
		fr_stage_destroy(v->vs[i].stage);
		kvfree(v->vs[i].snaps);
	}
	kfree(v);
}

static struct fr_victims *victim_stages_alloc(struct dm_fr *fr)
{
	const struct fr_geometry *g = &fr->cache.geo;
	struct fr_victims *v = kzalloc(sizeof(*v), GFP_KERNEL);
	u32 chunk_bytes = g->chunk_sectors << SECTOR_SHIFT;
	unsigned int i;

	if (!v)
		return NULL;
	v->max_chunks = max_t(u32, FR_WB_VICTIM_BYTES / chunk_bytes,
			      g->ways) & ~(g->ways - 1);
	sema_init(&v->free, FR_WB_VICTIM_STAGES);
	for (i = 0; i < FR_WB_VICTIM_STAGES; i++) {
		v->vs[i].stage = fr_stage_create(fr, FR_STAGE_VICTIM);
		v->vs[i].snaps = kvmalloc_array(v->max_chunks,
						sizeof(*v->vs[i].snaps),
						GFP_KERNEL);
		if (!v->vs[i].stage || !v->vs[i].snaps) {
			victim_stages_free(v);
			return NULL;
		}
	}
	return v;
}

int fr_writeback_create(struct dm_fr *fr)
{
	mutex_init(&fr->wb.lock);
	mutex_init(&fr->flush_lock);
	init_rwsem(&fr->wb.victim_lock);
	init_waitqueue_head(&fr->wb.pin_wait);
	INIT_DELAYED_WORK(&fr->wb.work, writeback_work);
	fr->wb.stopped = true;
	fr->wb.pinned = bitmap_zalloc(fr->cache.geo.nr_chunks, GFP_KERNEL);
	fr->cache.pinned = fr->wb.pinned;
	/* Origin writes go out from the stages' own copies (fr-stage.c). */
	fr->cache.stage_copies = true;
	fr->wb.bufs[FR_STAGE_BATCH] = fr_stage_pool_create(FR_STAGE_BATCH);
	fr->wb.bufs[FR_STAGE_VICTIM] = fr_stage_pool_create(FR_STAGE_VICTIM);
	fr->wb.victim_stages = victim_stages_alloc(fr);
	fr->wb.wq = alloc_workqueue("dm-fr-wb", WQ_MEM_RECLAIM | WQ_UNBOUND, 1);
	if (!fr->wb.pinned || !fr->wb.bufs[FR_STAGE_BATCH] ||
	    !fr->wb.bufs[FR_STAGE_VICTIM] || !fr->wb.victim_stages ||
	    !fr->wb.wq)
		return -ENOMEM;
	return fr_writeback_set_jobs(fr, fr_tunable(fr, writeback_jobs));
}

void fr_writeback_destroy(struct dm_fr *fr)
{
	fr_writeback_stop(fr);
	if (fr->wb.wq)
		destroy_workqueue(fr->wb.wq);
	fr_stage_destroy(fr->wb.stage);
	fr->wb.stage = NULL;
	kvfree(fr->wb.snaps);
	fr->wb.snaps = NULL;
	victim_stages_free(fr->wb.victim_stages);
	fr->wb.victim_stages = NULL;
	fr_stage_pool_destroy(fr->wb.bufs[FR_STAGE_BATCH]);
	fr_stage_pool_destroy(fr->wb.bufs[FR_STAGE_VICTIM]);
	fr->wb.bufs[FR_STAGE_BATCH] = NULL;
	fr->wb.bufs[FR_STAGE_VICTIM] = NULL;
	fr->cache.pinned = NULL;
	bitmap_free(fr->wb.pinned);
	fr->wb.pinned = NULL;
}

void fr_writeback_start(struct dm_fr *fr)
{
	fr->wb.passed_at = jiffies;
	fr->wb.busy_at = jiffies;
	fr->wb.full_at = jiffies;
	fr->wb.draining = false;
	fr->wb.sample_chunks = 0;
	fr->wb.sample_bios = 0;
	fr->wb.sample_forced = 0;
	atomic_set(&fr->wb.asleep, 0);
	WRITE_ONCE(fr->wb.stopped, false);
	queue_delayed_work(fr->wb.wq, &fr->wb.work, 0);
}

/*
 * No origin write of cached data after this returns: the periodic worker is
 * cancelled, and a flush message in progress (which checks wb_stopped
 * between batches) has finished its batch and returned.
 */
void fr_writeback_stop(struct dm_fr *fr)
{
	WRITE_ONCE(fr->wb.stopped, true);
	cancel_delayed_work_sync(&fr->wb.work);
	mutex_lock(&fr->flush_lock);
	mutex_unlock(&fr->flush_lock);
}

void fr_writeback_kick(struct dm_fr *fr)
{
	atomic_set(&fr->wb.asleep, 0);
	if (!READ_ONCE(fr->wb.stopped))
		mod_delayed_work(fr->wb.wq, &fr->wb.work, 0);
}
