// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-fr's bio path: map, copies between bios and PM, and the worker for the
 * bios that must wait for origin I/O. The stripe locks and the epoch rule
 * are fr-stripe.c's.
 *
 * Writes are placed on PM by the protocol core (core/fr-slot.c) in the submitter's
 * context and acknowledged once durable there, so REQ_PREFLUSH and REQ_FUA
 * cost nothing. Reads are served from PM, or go to the origin; a read miss
 * of whole chunks goes through the read fill (fr-fill.c), so the reader
 * never waits for PM. Only bios that must wait for origin I/O (a write whose
 * slot holds dirty data to displace, a read that mixes PM and origin data, a
 * cleaner write-through, a discard) go to a worker.
 */
#include <linux/blkdev.h>

#include "dm-fr.h"

#define FR_CLEAN_RETRIES	5
/* Mixed reads: origin reads without the stripe locks before one with them. */
#define FR_MIXED_READ_TRIES	3

/* A position in a bio's data, for the core's payload callback. */
struct fr_bio_cursor {
	struct bio *bio;
	struct bvec_iter iter;
};

/*
 * Copy bytes between PM and the bio at *iter, advancing it: into PM with
 * fr_pm_copy (durable once the core fences), out of PM with
 * fr_pm_read (copy_mc_to_kernel), which returns -EIO on a machine check.
 */
static int fr_bio_copy(struct bio *bio, struct bvec_iter *iter, u8 *pm,
		       size_t bytes, bool to_pm)
{
	while (bytes) {
		struct bio_vec bv = bio_iter_iovec(bio, *iter);
		size_t n = min_t(size_t, bv.bv_len, bytes);
		void *p = bvec_kmap_local(&bv);
		int r = 0;

		if (to_pm)
			fr_pm_copy(pm, p, n);
		else
			r = fr_pm_read(p, pm, n);
		kunmap_local(p);
		if (r)
			return r;
		pm += n;
		bytes -= n;
		bio_advance_iter_single(bio, iter, n);
	}
	return 0;
}

static void fr_bio_payload(void *arg, void *pm_dst, u32 nr_sectors)
{
	struct fr_bio_cursor *cur = arg;

	fr_bio_copy(cur->bio, &cur->iter, pm_dst,
		    (size_t)nr_sectors << SECTOR_SHIFT, true);
}

/*
 * Copy sectors off..stop - 1 of one chunk into the bio at *iter, advancing
 * it: those PM holds (held, from hit) from PM, the others skipped. Returns
 * -EIO on a PM machine check, or if a held sector lies on known bad PM
 * (never read: emulated PM would not even fail).
 */
static int fr_copy_chunk(struct bio *bio, struct bvec_iter *iter,
			 const struct fr_hit *hit, u64 held, u32 off, u32 stop)
{
	u32 i = off, j;

	if (held && hit->unreadable && (held & GENMASK_ULL(stop - 1, off)))
		return -EIO;
	while (i < stop) {
		bool in_pm = held >> i & 1;

		for (j = i + 1; j < stop && (held >> j & 1) == in_pm; j++)
			;
		if (!in_pm)
			bio_advance_iter(bio, iter, (j - i) << SECTOR_SHIFT);
		else if (fr_bio_copy(bio, iter, (u8 *)hit->data +
				     ((size_t)i << SECTOR_SHIFT),
				     (size_t)(j - i) << SECTOR_SHIFT, false))
			return -EIO;
		i = j;
	}
	return 0;
}

/*
 * Overlay every sector of the bio that PM holds (all of them for a hit).
 * Returns -EIO on a PM machine check. Caller holds the range locks.
 */
static int fr_read_from_pm(struct dm_fr *fr, struct bio *bio)
{
	const struct fr_geometry *g = &fr->cache.geo;
	struct bvec_iter iter = bio->bi_iter;
	u64 sector = bio->bi_iter.bi_sector, end = bio_end_sector(bio);
	u64 first, last;

	fr_bio_chunks(fr, bio, &first, &last);
	fr_assert_range_locked(fr, first, last);

	while (sector < end) {
		fr_ochunk_t key = fr_chunk_of_sector(g, sector);
		u32 off = sector - fr_first_sector(g, key);
		u32 stop = off + min_t(u64, g->chunk_sectors - off, end - sector);
		struct fr_hit hit;
		u64 held = fr_lookup(&fr->cache, key, &hit) ? hit.sectors : 0;

		if (fr_copy_chunk(bio, &iter, &hit, held, off, stop))
			return -EIO;
		sector += stop - off;
	}
	return 0;
}

static void fr_io_work(struct work_struct *work);

static void fr_queue_io(struct dm_fr *fr, struct fr_io *io,
			enum fr_io_kind kind)
{
	io->kind = kind;
	/* Initialised here, not in fr_map: most bios are never queued. */
	INIT_DELAYED_WORK(&io->work, fr_io_work);
	queue_delayed_work(fr->io_wq, &io->work, 0);
}

/* A write that goes to PM after all, from a worker (fr-admit.c). */
void fr_queue_write(struct dm_fr *fr, struct fr_io *io)
{
	fr_queue_io(fr, io, FR_IO_WRITE);
}

/* Does PM hold any of these chunks? Caller holds their stripe locks. */
static bool fr_range_cached(struct dm_fr *fr, u64 first, u64 last)
{
	struct fr_hit hit;
	u64 k;

	fr_assert_range_locked(fr, first, last);
	for (k = first; k <= last; k++)
		if (fr_lookup(&fr->cache, to_ochunk(k), &hit))
			return true;
	return false;
}

static void fr_fail_pm(struct dm_fr *fr, struct bio *bio)
{
	fr_stat_add(fr, pm_errors, 1);
	bio->bi_status = BLK_STS_IOERR;
}

static int fr_map_write(struct dm_fr *fr, struct bio *bio, struct fr_io *io);

/*
 * A write that reaches origin chunk k, whose slot has no PM chunk it can
 * write (bad PM): the chunks before k go to PM as usual, k alone to the
 * origin (fr_deferred_bypass); dm core resubmits the rest.
 */
static int fr_map_bypass(struct dm_fr *fr, struct bio *bio, struct fr_io *io,
			 u64 k)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 sector = bio->bi_iter.bi_sector;
	u64 start = fr_first_sector(g, to_ochunk(k));

	if (start > sector) {
		dm_accept_partial_bio(bio, start - sector);
		return fr_map_write(fr, bio, io);
	}
	if (bio_end_sector(bio) > start + g->chunk_sectors)
		dm_accept_partial_bio(bio, start + g->chunk_sectors - sector);
	fr_queue_io(fr, io, FR_IO_BYPASS);
	return DM_MAPIO_SUBMITTED;
}

static int fr_map_write(struct dm_fr *fr, struct bio *bio, struct fr_io *io)
{
	struct fr_bio_cursor cur = { .bio = bio, .iter = bio->bi_iter };
	struct fr_write_result res;
	enum fr_admit_reason admit;
	struct fr_lockset ls;
	enum fr_write_outcome out;
	u64 first, last;

	fr_bio_chunks(fr, bio, &first, &last);
	admit = fr_admit(fr, bio);
	fr_lock_range(fr, first, last, &ls);

	/* Cleaner: what PM does not hold is written through; dirty drains. */
	if (unlikely(READ_ONCE(fr->cleaner)) &&
	    !fr_range_cached(fr, first, last)) {
		fr_unlock_range(fr, &ls, FR_STRIPE_KEPT);
		if (admit != FR_ADMIT_PM)
			fr_admit_done(fr);
		fr_queue_io(fr, io, FR_IO_WRITETHROUGH);
		return DM_MAPIO_SUBMITTED;
	}
	/* Admission: around PM, if the core agrees (fr-admit.c). */
	if (unlikely(admit != FR_ADMIT_PM)) {
		switch (fr_admit_map(fr, bio, io, admit)) {
		case FR_AROUND_GO:
			fr_unlock_range(fr, &ls, FR_STRIPE_CHANGED);
			return fr_admit_remap(fr, bio);
		case FR_AROUND_BUSY:
			/* A slot's origin write in flight: wait, not PM. */
			fr_unlock_range(fr, &ls, FR_STRIPE_KEPT);
			fr_admit_defer(fr, io, bio, admit);
			return DM_MAPIO_SUBMITTED;
		case FR_AROUND_REFUSED:
			break;
		}
	}

	out = fr_write(&fr->cache, bio->bi_iter.bi_sector, bio_sectors(bio),
		       fr_bio_payload, &cur, &res);
	fr_unlock_range(fr, &ls, out == FR_WRITE_NEED_CLEAN ?
				 FR_STRIPE_KEPT : FR_STRIPE_CHANGED);
	switch (out) {
	case FR_WRITE_NEED_CLEAN:
		fr_queue_io(fr, io, FR_IO_WRITE);
		return DM_MAPIO_SUBMITTED;
	case FR_WRITE_PINNED:
		/* Never: the target's stages copy (c->stage_copies). */
		WARN_ON_ONCE(1);
		bio->bi_status = BLK_STS_IOERR;
		break;
	case FR_WRITE_BYPASS:
		return fr_map_bypass(fr, bio, io, res.bypass);
	case FR_WRITE_FAILED:
		fr_fail_pm(fr, bio);
		break;
	case FR_WRITE_DONE:
		fr_stat_add(fr, write_hits, res.hits);
		fr_stat_add(fr, write_misses, res.chunks - res.hits);
		fr_stat_add(fr, write_bios, 1);
		fr_writeback_note_dirty(fr);
		break;
	}
	bio_endio(bio);
	return DM_MAPIO_SUBMITTED;
}

/*
 * A write of one origin chunk whose slot PM cannot hold (bad PM): to the
 * origin (FUA, so durable when acknowledged), under wb.victim_lock and wb.lock
 * and inside fr_bypass_begin/end as a cleaner write-through. Once the
 * origin holds every sector of the chunk, a copy still on PM (on a bad
 * chunk, unreadable) is out of date and dropped.
 */
static void fr_deferred_bypass(struct dm_fr *fr, struct bio *bio)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 sector = bio->bi_iter.bi_sector, nr = bio_sectors(bio);
	u64 k = from_ochunk(fr_chunk_of_sector(g, sector));
	struct fr_lockset ls;

	down_write(&fr->wb.victim_lock);
	mutex_lock(&fr->wb.lock);
	fr_bypass_begin(fr);
	bio->bi_status = fr_origin_clone_wait(fr, bio, REQ_OP_WRITE | REQ_FUA |
					(bio->bi_opf & REQ_SYNC));
	fr_lock_range(fr, k, k, &ls);
	if (!bio->bi_status)
		fr_discard(&fr->cache, sector, nr);
	fr_unlock_range(fr, &ls, FR_STRIPE_CHANGED);
	fr_bypass_end(fr);
	mutex_unlock(&fr->wb.lock);
	up_write(&fr->wb.victim_lock);
	if (!bio->bi_status)
		fr_stat_add(fr, write_misses, 1);
	bio_endio(bio);
}

/*
 * A write whose slot must displace dirty data: a write of one chunk writes
 * the victim back alone (one origin write and one flush, beside the
 * worker's batch; or, if that batch has the victim's slot in flight, waits
 * for it), a write of several the victims of its slots as one range,
 * also beside the batch (one flush for all of them); then it tries again.
 * No slot lock is held across either: they take the slots' locks
 * themselves. The chunk a write stores into may be in flight: the stages
 * send copies (c->stage_copies), so the core never answers FR_WRITE_PINNED.
 *
 * If the origin refuses the batch, the data stays dirty on PM and the write
 * is tried again later, FR_CLEAN_RETRIES times with growing delays: the
 * work item is re-queued with a delay rather than sleeping, so that the
 * bios queued behind it are not held up.
 */
static void fr_deferred_write(struct dm_fr *fr, struct fr_io *io,
			      struct bio *bio)
{
	struct fr_write_result res;
	enum fr_write_outcome out;
	struct fr_lockset ls;
	u64 first, last;
	int r;

	fr_bio_chunks(fr, bio, &first, &last);
	for (;;) {
		struct fr_bio_cursor cur = { .bio = bio, .iter = bio->bi_iter };

		fr_lock_range(fr, first, last, &ls);
		out = fr_write(&fr->cache, bio->bi_iter.bi_sector,
			       bio_sectors(bio), fr_bio_payload, &cur, &res);
		fr_unlock_range(fr, &ls, out == FR_WRITE_NEED_CLEAN ?
				FR_STRIPE_KEPT : FR_STRIPE_CHANGED);
		if (out == FR_WRITE_BYPASS && first == last) {
			fr_deferred_bypass(fr, bio);
			return;
		}
		/* FR_WRITE_PINNED never comes: the stages copy. */
		WARN_ON_ONCE(out == FR_WRITE_PINNED);
		if (out != FR_WRITE_NEED_CLEAN)
			break;
		fr_stat_add(fr, forced_writebacks, 1);
		r = first == last ? fr_writeback_victim(fr, res.victim) :
				    fr_writeback_from(fr, res.victim,
					fr_slot_of(&fr->cache.geo,
						   to_ochunk(last)));
		if (r == -EHWPOISON)
			break;	/* its data is unreadable: it cannot make room */
		if (r < 0) {
			if (++io->tries > FR_CLEAN_RETRIES)
				break;
			io->kind = FR_IO_WRITE;
			queue_delayed_work(fr->io_wq, &io->work,
					   msecs_to_jiffies(100 << io->tries));
			return;
		}
	}
	/* Still in need of cleaning (the origin refused), or failed. */
	if (out != FR_WRITE_DONE) {
		bio->bi_status = BLK_STS_IOERR;
	} else {
		fr_stat_add(fr, write_hits, res.hits);
		fr_stat_add(fr, write_misses, res.chunks - res.hits);
		fr_stat_add(fr, write_bios, 1);
		fr_writeback_note_dirty(fr);
	}
	bio_endio(bio);
}

/*
 * A read of sectors some of which PM holds: read the origin into the bio,
 * then copy what PM holds over it. The origin read runs without the stripe
 * locks, so writes to these chunks do not wait for it: if the stripes'
 * epochs and fill counts did not move meanwhile, PM lost nothing it held
 * (the epoch rule, fr-stripe.h; writeback only writes to the origin what PM
 * still holds), so the overlay makes the result current. If they moved,
 * read again; the last try holds the locks across the read.
 */
static void fr_deferred_read_mixed(struct dm_fr *fr, struct bio *bio)
{
	struct fr_lockset ls;
	unsigned int tries;
	u64 first, last, epoch;

	fr_bio_chunks(fr, bio, &first, &last);
	for (tries = 1;; tries++) {
		bool hold = tries == FR_MIXED_READ_TRIES;

		fr_lock_range(fr, first, last, &ls);
		epoch = fr_range_epoch(fr, &ls);
		if (!hold)
			fr_unlock_range(fr, &ls, FR_STRIPE_KEPT);
		bio->bi_status = fr_origin_clone_wait(fr, bio, REQ_OP_READ |
						(bio->bi_opf & REQ_SYNC));
		if (!hold)
			fr_lock_range(fr, first, last, &ls);
		if (bio->bi_status || hold || fr_range_epoch(fr, &ls) == epoch)
			break;
		fr_unlock_range(fr, &ls, FR_STRIPE_KEPT);
	}
	if (!bio->bi_status && fr_read_from_pm(fr, bio))
		fr_fail_pm(fr, bio);
	fr_unlock_range(fr, &ls, FR_STRIPE_KEPT);
	bio_endio(bio);
}

/*
 * Cleaner mode: write what PM does not hold straight to the origin (FUA, so
 * still durable when acknowledged). wb.lock keeps writeback batches out and
 * wb.victim_lock victim writes (docs/protocol.md, "Required serialization"):
 * a key staged, discarded and written again must not be written through
 * while its old copy's origin write is in flight. The bypass sequence is odd
 * while the origin write is in flight, so no fill that overlaps it is
 * installed (a fill may have read the data from before it). The stripe locks are held
 * only to check that PM holds none of the range: a write to PM that races
 * with the write-through is as unordered as any two concurrent writes. If
 * PM came to hold part of the range since map, the write goes to PM after
 * all.
 */
static void fr_deferred_writethrough(struct dm_fr *fr, struct fr_io *io,
				     struct bio *bio)
{
	struct fr_lockset ls;
	u64 first, last;

	down_write(&fr->wb.victim_lock);
	mutex_lock(&fr->wb.lock);
	fr_bio_chunks(fr, bio, &first, &last);
	fr_lock_range(fr, first, last, &ls);
	if (fr_range_cached(fr, first, last)) {
		fr_unlock_range(fr, &ls, FR_STRIPE_KEPT);
		mutex_unlock(&fr->wb.lock);
		up_write(&fr->wb.victim_lock);
		fr_deferred_write(fr, io, bio);
		return;
	}
	fr_bypass_begin(fr);
	fr_unlock_range(fr, &ls, FR_STRIPE_KEPT);
	bio->bi_status = fr_origin_clone_wait(fr, bio, REQ_OP_WRITE | REQ_FUA |
					(bio->bi_opf & REQ_SYNC));
	fr_bypass_end(fr);
	mutex_unlock(&fr->wb.lock);
	up_write(&fr->wb.victim_lock);
	if (!bio->bi_status)
		fr_stat_add(fr, write_misses, last - first + 1);
	bio_endio(bio);
}

/*
 * Drop what the discard covers from PM, then pass it to the origin and wait,
 * all under wb.victim_lock and wb.lock: a discard still in flight when a newer
 * write of the same chunk is written back and cleaned could land after it,
 * and so could a dropped copy's origin write.
 *
 * A read while the origin discard is in flight may return the data from
 * before it, and a fill of that would outlive the discard. The bypass
 * sequence is odd from before the PM copies are dropped until the origin
 * completed, and a fill is installed only if its stamp is still current
 * (fr_stamp_current): any fill that overlapped a discard is dropped.
 * The stripe locks order the bump before the drop against the installs.
 * (One sequence for discards and write-through: both hold wb.lock.)
 */
static void fr_deferred_discard(struct dm_fr *fr, struct bio *bio)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 sector = bio->bi_iter.bi_sector, nr = bio_sectors(bio);
	u64 region_sectors = (u64)g->region_chunks << g->chunk_shift;
	struct fr_lockset ls;
	u64 pos, end = sector + nr;

	down_write(&fr->wb.victim_lock);
	mutex_lock(&fr->wb.lock);
	fr_bypass_begin(fr);
	if ((nr >> g->chunk_shift) > g->nr_slots) {
		/* Larger than the cache: walk the slots instead. */
		for (pos = 0; pos < g->nr_slots; pos += 1 << FR_STRIPE_SHIFT) {
			fr_lock_slot(fr, to_slot(pos));
			fr_discard_slots(&fr->cache, to_slot(pos),
					 1 << FR_STRIPE_SHIFT, sector, nr);
			fr_unlock_slot(fr, to_slot(pos), FR_STRIPE_CHANGED);
			cond_resched();
		}
	} else {
		for (pos = sector; pos < end;) {
			u64 next = min(end, (pos | (region_sectors - 1)) + 1);

			fr_lock_range(fr, pos >> g->chunk_shift,
				      (next - 1) >> g->chunk_shift, &ls);
			fr_discard(&fr->cache, pos, next - pos);
			fr_unlock_range(fr, &ls, FR_STRIPE_CHANGED);
			pos = next;
			cond_resched();
		}
	}
	if (fr_origin_discards(fr))
		bio->bi_status = fr_origin_clone_wait(fr, bio, bio->bi_opf);
	fr_bypass_end(fr);
	mutex_unlock(&fr->wb.lock);
	up_write(&fr->wb.victim_lock);
	bio_endio(bio);
}

static void fr_io_work(struct work_struct *work)
{
	struct fr_io *io = container_of(to_delayed_work(work), struct fr_io,
					work);
	struct bio *bio = dm_bio_from_per_bio_data(io, sizeof(*io));

	switch (io->kind) {
	case FR_IO_WRITE:
		fr_deferred_write(io->fr, io, bio);
		break;
	case FR_IO_READ_MIXED:
		fr_deferred_read_mixed(io->fr, bio);
		break;
	case FR_IO_WRITETHROUGH:
		fr_deferred_writethrough(io->fr, io, bio);
		break;
	case FR_IO_DISCARD:
		fr_deferred_discard(io->fr, bio);
		break;
	case FR_IO_BYPASS:
		fr_deferred_bypass(io->fr, bio);
		break;
	default:
		bio_io_error(bio);
		break;
	}
}

static int fr_map_read(struct dm_fr *fr, struct bio *bio, struct fr_io *io)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 sector = bio->bi_iter.bi_sector, end = bio_end_sector(bio);
	u64 first, last, hits = 0, misses = 0;
	bool any_held = false, all_held = true;
	struct bvec_iter iter = bio->bi_iter;
	struct fr_lockset ls;
	int pm_error = 0;
	u32 take;

	fr_bio_chunks(fr, bio, &first, &last);
	fr_lock_range(fr, first, last, &ls);
	while (sector < end) {
		fr_ochunk_t key = fr_chunk_of_sector(g, sector);
		u64 start = fr_first_sector(g, key);
		u32 off = sector - start;
		u32 cnt = min_t(u64, g->chunk_sectors - off, end - sector);
		u64 want = (cnt >= 64 ? ~0ULL : (1ULL << cnt) - 1) << off;
		struct fr_hit hit;

		if (fr_lookup(&fr->cache, key, &hit) && (hit.sectors & want)) {
			any_held = true;
			if ((hit.sectors & want) != want)
				all_held = false;
			hits++;
		} else {
			all_held = false;
			misses++;
		}
		/*
		 * While every chunk so far is held, copy it now: one lookup
		 * per hit. If a later chunk is not, what was copied is
		 * overwritten by the origin read (mixed read, fill or remap).
		 */
		if (all_held && !pm_error)
			pm_error = fr_copy_chunk(bio, &iter, &hit, hit.sectors,
						 off, off + cnt);
		sector += cnt;
	}

	if (all_held) {
		if (pm_error)
			fr_fail_pm(fr, bio);
		fr_unlock_range(fr, &ls, FR_STRIPE_KEPT);
		fr_stat_add(fr, read_hits, hits);
		bio_endio(bio);
		fr_prefetch_hit(fr, first, last);
		return DM_MAPIO_SUBMITTED;
	}
	if (any_held) {
		fr_unlock_range(fr, &ls, FR_STRIPE_KEPT);
		fr_stat_add(fr, read_hits, hits);
		fr_stat_add(fr, read_misses, misses);
		fr_queue_io(fr, io, FR_IO_READ_MIXED);
		return DM_MAPIO_SUBMITTED;
	}
	take = bio_sectors(bio);
	if (fr->read_fill && !READ_ONCE(fr->cleaner))
		take = fr_fill_plan(fr, bio, io);
	fr_unlock_range(fr, &ls, FR_STRIPE_KEPT);
	if (take < bio_sectors(bio)) {
		/* Count only what this part covers: the rest comes back. */
		dm_accept_partial_bio(bio, take);
		fr_bio_chunks(fr, bio, &first, &last);
		misses = last - first + 1;
	}
	fr_stat_add(fr, read_misses, misses);
	if (io->fills) {
		fr_fill_read(fr, bio, io);
		fr_prefetch(fr, first, last);
		return DM_MAPIO_SUBMITTED;
	}
	if (fr->read_fill)
		fr_prefetch(fr, first, last);
	return fr_origin_remap(fr, bio);
}

/* Every bio the target mapped, as it completes. */
int fr_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct fr_io *io = dm_per_bio_data(bio, sizeof(struct fr_io));

	if (io->kind == FR_IO_AROUND) {
		fr_admit_end_io(ti->private, io);
		return DM_ENDIO_INCOMPLETE;
	}
	return DM_ENDIO_DONE;
}

int fr_map(struct dm_target *ti, struct bio *bio)
{
	struct dm_fr *fr = ti->private;
	struct fr_io *io = dm_per_bio_data(bio, sizeof(struct fr_io));

	io->kind = FR_IO_NONE;
	io->fr = fr;
	io->tries = 0;
	io->fills = NULL;
	bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);

	/* Every acknowledged write is already durable: flushes are free. */
	if (bio->bi_opf & REQ_PREFLUSH) {
		if (!bio_sectors(bio)) {
			bio_endio(bio);
			return DM_MAPIO_SUBMITTED;
		}
	}

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return fr_map_read(fr, bio, io);
	case REQ_OP_WRITE:
		return fr_map_write(fr, bio, io);
	case REQ_OP_DISCARD:
		fr_queue_io(fr, io, FR_IO_DISCARD);
		return DM_MAPIO_SUBMITTED;
	default:
		return DM_MAPIO_KILL;
	}
}
