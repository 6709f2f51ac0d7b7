// SPDX-License-Identifier: GPL-2.0-only
/*
 * Admission: which writes go around PM, straight to the origin
 * (docs/design.md, "What deserves PM").
 *
 * PM pays most for small synchronous writes (SPFS). A long sequential
 * stream (a copy, a backup, a bulk load) fills it, forces writebacks and
 * evicts the chunks that synchronous writers keep rewriting, while the
 * origin takes a stream at its best rate anyway. Two rules, each off by
 * default:
 *
 *  - stream: an asynchronous write (no REQ_SYNC, FUA or PREFLUSH: the page
 *    cache's writeback, not an fsync's, a journal's or O_DIRECT's) that
 *    continues a sequential stream past admit_stream_kib KiB (bcache's
 *    sequential cutoff, which bcache's writeback mode also applies to
 *    asynchronous writes only). A stream is found by where it ends, in a
 *    table of the FR_STREAMS most recent ones (a write that continues none
 *    takes the least recent entry), read and written without a lock. A race
 *    only misjudges a write, and either path stores it correctly.
 *  - background: page-cache writeback (REQ_BACKGROUND without REQ_SYNC)
 *    once admit_background % of the PM is dirty.
 *
 * Such a write goes around only if the core agrees (fr_around_begin(): no
 * dirty copy in its range, no slot of it in flight; one in flight makes it
 * wait, fr_admit_defer()). It is then remapped to
 * the origin with FUA, durable before it is acknowledged, and its slots stay
 * pinned until it completes. The pins are the core's, which reads them
 * more than once under a slot lock (a write picks its slot's free chunk
 * when it places the data and again when it commits), so they change only
 * under the slot locks: the completion, in interrupt context, cannot take
 * them, and hands the write to a worker (fr_admit_end_io()), which unpins
 * under the locks and then completes it, as dm-mpath completes a bio it
 * took back from end_io. A flush's sweep must not skip a dirty chunk in
 * such a slot, so it pauses admission and waits for the writes around in
 * flight (fr_admit_pause()).
 */
#include <linux/blkdev.h>

#include "dm-fr.h"

/* No write for this long ends a stream. */
#define FR_STREAM_GAP	(2 * HZ)
/* The longest a write around waits for its slots' pins, and how often it looks. */
#define FR_AROUND_WAIT	HZ
#define FR_AROUND_POLL	max(1, HZ / 100)

/*
 * Count a write that may go around in flight, unless a flush's sweep paused
 * admission (false: it goes to PM).
 */
static bool fr_admit_enter(struct dm_fr *fr)
{
	atomic_inc(&fr->admit.in_flight);
	/* Counted before the pause is read; pairs with fr_admit_pause(). */
	smp_mb__after_atomic();
	if (READ_ONCE(fr->admit.paused)) {
		fr_admit_done(fr);
		return false;
	}
	return true;
}

/* Which rule sends the write around, if any (not yet asked of the core). */
static enum fr_admit_reason admit_reason(struct dm_fr *fr, struct bio *bio)
{
	unsigned int kib = fr_tunable(fr, admit_stream_kib);
	unsigned int bg = fr_tunable(fr, admit_background);
	u64 sector = bio->bi_iter.bi_sector, end = bio_end_sector(bio);
	u64 bytes = 0;

	/*
	 * Synchronous writes stay on PM, as in bcache's writeback mode: a
	 * journal is a sequential stream too, and each of its commits waits.
	 */
	if (kib && !op_is_sync(bio->bi_opf)) {
		struct fr_stream *st, *lru = &fr->admit.streams[0];
		unsigned long now = jiffies;
		u32 i;

		/* The stream this write continues, else the least recent. */
		for (i = 0; i < FR_STREAMS; i++) {
			st = &fr->admit.streams[i];
			if (READ_ONCE(st->end) == sector &&
			    time_before(now, READ_ONCE(st->seen) + FR_STREAM_GAP))
				break;
			if (time_before(READ_ONCE(st->seen), READ_ONCE(lru->seen)))
				lru = st;
		}
		if (i < FR_STREAMS)
			bytes = READ_ONCE(st->bytes);
		else
			st = lru;
		bytes += bio->bi_iter.bi_size;
		WRITE_ONCE(st->end, end);
		WRITE_ONCE(st->bytes, bytes);
		WRITE_ONCE(st->seen, now);
		/* The stream's first admit_stream_kib go to PM, as any write. */
		if (bytes > (u64)kib << 10)
			return FR_ADMIT_STREAM;
	}
	if (bg && (bio->bi_opf & REQ_BACKGROUND) &&
	    !(bio->bi_opf & REQ_SYNC) &&
	    div64_u64(fr_count_dirty(&fr->cache) * 100,
		      fr->cache.geo.nr_chunks) >= bg)
		return FR_ADMIT_BACKGROUND;
	return FR_ADMIT_PM;
}

/*
 * Called by fr_map_write() for a write, before it takes the slot locks:
 * whether admission wants it around PM. If so the caller has counted it in
 * flight, and must call fr_admit_map() under the locks next.
 */
enum fr_admit_reason fr_admit(struct dm_fr *fr, struct bio *bio)
{
	enum fr_admit_reason r;

	if (likely(!fr_tunable(fr, admit_stream_kib) &&
		   !fr_tunable(fr, admit_background)))
		return FR_ADMIT_PM;
	r = admit_reason(fr, bio);
	if (r == FR_ADMIT_PM || !fr_admit_enter(fr))
		return FR_ADMIT_PM;
	return r;
}

/* A write fr_admit() counted in flight that does not go around after all. */
void fr_admit_done(struct dm_fr *fr)
{
	if (atomic_dec_and_test(&fr->admit.in_flight))
		wake_up_all(&fr->wb.pin_wait);
}

/*
 * Under the range's slot locks: the core's say. FR_AROUND_GO: the write goes
 * around (the caller unlocks with FR_STRIPE_CHANGED, so that no fill
 * stamped before it installs, and remaps it with fr_admit_remap()); it
 * stays counted in flight until it completes. Otherwise it is no longer
 * counted: FR_AROUND_REFUSED, it goes to PM; FR_AROUND_BUSY, an origin
 * write of a slot of its range is in flight, and the caller lets it wait
 * (fr_admit_defer()).
 */
enum fr_around fr_admit_map(struct dm_fr *fr, struct bio *bio,
			    struct fr_io *io, enum fr_admit_reason r)
{
	u64 sector = bio->bi_iter.bi_sector;
	u32 nr = bio_sectors(bio);
	enum fr_around v = fr_around_begin(&fr->cache, sector, nr);

	if (v != FR_AROUND_GO) {
		if (v == FR_AROUND_REFUSED)
			fr_stat_add(fr, around_refused, 1);
		fr_admit_done(fr);
		return v;
	}
	io->kind = FR_IO_AROUND;
	io->around_sector = sector;
	io->around_sectors = nr;
	if (r == FR_ADMIT_STREAM)
		fr_stat_add(fr, around_stream, 1);
	else
		fr_stat_add(fr, around_background, 1);
	return FR_AROUND_GO;
}

/* Whether a slot of chunks first..last is pinned (read without the locks). */
static bool fr_range_pinned(struct dm_fr *fr, u64 first, u64 last)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 k;

	for (k = first; k <= last; k++)
		if (fr_slot_pinned(&fr->cache, fr_slot_of(g, to_ochunk(k))))
			return true;
	return false;
}

/*
 * A write around whose range has a slot pinned: the origin write of a
 * batch, a victim or another write around is in flight (a stream of several
 * MiB in flight covers a small PM's every slot). Rather than fill the PM
 * that admission keeps it off, it waits on a list, which fr_admit_retry()
 * goes through whenever an origin write of PM data or a write around
 * completes, and every FR_AROUND_POLL. It holds no pin and no worker
 * meanwhile, and is not counted in flight, so a flush's pause does not wait
 * for it.
 */
void fr_admit_defer(struct dm_fr *fr, struct fr_io *io, struct bio *bio,
		    enum fr_admit_reason r)
{
	unsigned long flags;

	io->kind = FR_IO_AROUND_WAIT;
	io->admit = r;
	io->around_until = jiffies + FR_AROUND_WAIT;
	fr_stat_add(fr, around_waited, 1);
	spin_lock_irqsave(&fr->admit.wait_lock, flags);
	bio_list_add(&fr->admit.waiting, bio);
	/* Written under the lock, read without it (fr_admit_kick()). */
	WRITE_ONCE(fr->admit.nr_waiting, fr->admit.nr_waiting + 1);
	spin_unlock_irqrestore(&fr->admit.wait_lock, flags);
	queue_delayed_work(fr->admit.wq, &fr->admit.retry, FR_AROUND_POLL);
}

/* Pins were cleared: the waiting writes may go (any context). */
void fr_admit_kick(struct dm_fr *fr)
{
	if (READ_ONCE(fr->admit.nr_waiting))
		mod_delayed_work(fr->admit.wq, &fr->admit.retry, 0);
}

/*
 * One waiting write, asked again: true if it still waits. It goes to PM
 * after all (fr_queue_write()) if the core refuses it now (a write stored a
 * dirty copy meanwhile), a flush paused admission, or the pins outlasted
 * FR_AROUND_WAIT (a slow or failing origin).
 */
static bool fr_admit_retry_one(struct dm_fr *fr, struct fr_io *io,
			       struct bio *bio)
{
	struct fr_lockset ls;
	enum fr_around v;
	u64 first, last;

	if (READ_ONCE(fr->admit.paused) ||
	    time_after_eq(jiffies, io->around_until))
		goto to_pm;
	fr_bio_chunks(fr, bio, &first, &last);
	if (fr_range_pinned(fr, first, last))
		return true;
	if (!fr_admit_enter(fr))
		goto to_pm;
	fr_lock_range(fr, first, last, &ls);
	v = fr_admit_map(fr, bio, io, io->admit);
	fr_unlock_range(fr, &ls, v == FR_AROUND_GO ?
				 FR_STRIPE_CHANGED : FR_STRIPE_KEPT);
	if (v == FR_AROUND_BUSY)
		return true;
	if (v == FR_AROUND_GO) {
		fr_admit_remap(fr, bio);
		dm_submit_bio_remap(bio, NULL);
	} else {
		fr_queue_write(fr, io);
	}
	return false;
to_pm:
	fr_stat_add(fr, around_refused, 1);
	fr_queue_write(fr, io);
	return false;
}

/* The waiting writes, each asked again; those still waiting wait on. */
static void fr_admit_retry(struct work_struct *work)
{
	struct dm_fr *fr = container_of(to_delayed_work(work), struct dm_fr,
					admit.retry);
	struct bio_list list, again;
	unsigned int n = 0;
	struct bio *bio;

	bio_list_init(&again);
	spin_lock_irq(&fr->admit.wait_lock);
	list = fr->admit.waiting;
	bio_list_init(&fr->admit.waiting);
	spin_unlock_irq(&fr->admit.wait_lock);
	while ((bio = bio_list_pop(&list))) {
		struct fr_io *io = dm_per_bio_data(bio, sizeof(*io));

		if (fr_admit_retry_one(fr, io, bio))
			bio_list_add(&again, bio);
		else
			n++;
	}
	spin_lock_irq(&fr->admit.wait_lock);
	bio_list_merge_head(&fr->admit.waiting, &again);
	WRITE_ONCE(fr->admit.nr_waiting, fr->admit.nr_waiting - n);
	if (fr->admit.nr_waiting)
		queue_delayed_work(fr->admit.wq, &fr->admit.retry,
				   FR_AROUND_POLL);
	spin_unlock_irq(&fr->admit.wait_lock);
}

/* The write around, to the origin: durable there before it completes. */
int fr_admit_remap(struct dm_fr *fr, struct bio *bio)
{
	bio->bi_opf |= REQ_FUA;
	return fr_origin_remap(fr, bio);
}

/*
 * The target's end_io for a write around, done on the origin well or not:
 * to the worker, which unpins it under its slot locks; end_io returns
 * DM_ENDIO_INCOMPLETE, and the worker completes the bio.
 */
void fr_admit_end_io(struct dm_fr *fr, struct fr_io *io)
{
	if (llist_add(&io->around_done, &fr->admit.done))
		queue_work(fr->admit.wq, &fr->admit.work);
}

/* Unpin the writes around that are done, and complete them. */
static void fr_admit_work(struct work_struct *work)
{
	struct dm_fr *fr = container_of(work, struct dm_fr, admit.work);
	const struct fr_geometry *g = &fr->cache.geo;
	struct llist_node *list = llist_del_all(&fr->admit.done);
	struct fr_io *io, *tmp;

	list = llist_reverse_order(list);
	llist_for_each_entry_safe(io, tmp, list, around_done) {
		struct bio *bio = dm_bio_from_per_bio_data(io, sizeof(*io));
		u64 first = io->around_sector >> g->chunk_shift;
		u64 last = (io->around_sector + io->around_sectors - 1) >>
			   g->chunk_shift;
		struct fr_lockset ls;

		fr_lock_range(fr, first, last, &ls);
		fr_around_end(&fr->cache, io->around_sector,
			      io->around_sectors);
		fr_unlock_range(fr, &ls, FR_STRIPE_KEPT);
		if (bio->bi_status)
			fr_stat_add(fr, origin_errors, 1);
		atomic_dec(&fr->admit.in_flight);
		/* The pins and the count cleared before the waiters look. */
		smp_mb__after_atomic();
		/* Writes waiting for the slots (fr_writeback_victim), a pause. */
		wake_up_all(&fr->wb.pin_wait);
		fr_admit_kick(fr);
		/* end_io, called again, lets it complete. */
		io->kind = FR_IO_NONE;
		bio_endio(bio);
	}
}

int fr_admit_create(struct dm_fr *fr)
{
	init_llist_head(&fr->admit.done);
	INIT_WORK(&fr->admit.work, fr_admit_work);
	spin_lock_init(&fr->admit.wait_lock);
	bio_list_init(&fr->admit.waiting);
	INIT_DELAYED_WORK(&fr->admit.retry, fr_admit_retry);
	/*
	 * Not fr->io_wq: a deferred write there may wait for the pins this
	 * work clears (fr_writeback_victim), with no other worker to be had.
	 */
	fr->admit.wq = alloc_workqueue("dm-fr-around",
				       WQ_MEM_RECLAIM | WQ_UNBOUND, 1);
	return fr->admit.wq ? 0 : -ENOMEM;
}

/* No write around is left to complete (suspended: none is mapped). */
void fr_admit_wait(struct dm_fr *fr)
{
	flush_workqueue(fr->admit.wq);
}

void fr_admit_destroy(struct dm_fr *fr)
{
	if (fr->admit.wq) {
		/* Suspended first: no write is left waiting to re-arm it. */
		cancel_delayed_work_sync(&fr->admit.retry);
		destroy_workqueue(fr->admit.wq);
	}
	fr->admit.wq = NULL;
}

/*
 * A flush's sweep (under wb.victim_lock for writing, so no victim write
 * either): no write goes around until fr_admit_resume(), and none is in
 * flight when this returns, so no dirty chunk is skipped as in flight.
 */
void fr_admit_pause(struct dm_fr *fr)
{
	WRITE_ONCE(fr->admit.paused, true);
	/* Paused before the count is read; pairs with fr_admit_enter(). */
	smp_mb();
	/* The writes around waiting for pins go to PM (fr_admit_retry_one). */
	fr_admit_kick(fr);
	wait_event(fr->wb.pin_wait, !atomic_read(&fr->admit.in_flight));
}

void fr_admit_resume(struct dm_fr *fr)
{
	WRITE_ONCE(fr->admit.paused, false);
}
