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
 * dirty copy in its range, no slot of it in flight). It is then remapped to
 * the origin with FUA, durable before it is acknowledged, and its slots stay
 * pinned until it completes (fr_admit_end_io()). A flush's sweep must not
 * skip a dirty chunk in such a slot, so it pauses admission and waits for
 * the writes around in flight (fr_admit_pause()).
 *
 * Held back: the crash campaign's stream kills lost acknowledged writes
 * with it on, so the tunables stay 0 unless the module is loaded with
 * admission=1 (fr-table.c).
 */
#include <linux/blkdev.h>

#include "dm-fr.h"

/* No write for this long ends a stream. */
#define FR_STREAM_GAP	(2 * HZ)

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
	if (r == FR_ADMIT_PM)
		return r;
	atomic_inc(&fr->admit.in_flight);
	/* Counted before the pause is read; pairs with fr_admit_pause(). */
	smp_mb__after_atomic();
	if (READ_ONCE(fr->admit.paused)) {
		fr_admit_done(fr);
		return FR_ADMIT_PM;
	}
	return r;
}

/* A write fr_admit() counted in flight that does not go around after all. */
void fr_admit_done(struct dm_fr *fr)
{
	if (atomic_dec_and_test(&fr->admit.in_flight))
		wake_up_all(&fr->wb.pin_wait);
}

/*
 * Under the range's slot locks: the core's say. True if the write goes
 * around (the caller unlocks with FR_STRIPE_CHANGED, so that no fill
 * stamped before it installs, and returns fr_admit_remap()).
 */
bool fr_admit_map(struct dm_fr *fr, struct bio *bio, struct fr_io *io,
		  enum fr_admit_reason r)
{
	u64 sector = bio->bi_iter.bi_sector;
	u32 nr = bio_sectors(bio);

	if (!fr_around_begin(&fr->cache, sector, nr)) {
		fr_stat_add(fr, around_refused, 1);
		fr_admit_done(fr);
		return false;
	}
	io->kind = FR_IO_AROUND;
	io->around_sector = sector;
	io->around_sectors = nr;
	if (r == FR_ADMIT_STREAM)
		fr_stat_add(fr, around_stream, 1);
	else
		fr_stat_add(fr, around_background, 1);
	return true;
}

/* The write around, to the origin: durable there before it completes. */
int fr_admit_remap(struct dm_fr *fr, struct bio *bio)
{
	bio->bi_opf |= REQ_FUA;
	return fr_origin_remap(fr, bio);
}

/* The target's end_io: a write around completed, well or not. */
void fr_admit_end_io(struct dm_fr *fr, struct fr_io *io, blk_status_t error)
{
	fr_around_end(&fr->cache, io->around_sector, io->around_sectors);
	if (error)
		fr_stat_add(fr, origin_errors, 1);
	atomic_dec(&fr->admit.in_flight);
	/* The pins and the count cleared before the waiters look. */
	smp_mb__after_atomic();
	/* Writes waiting for the slots (fr_writeback_victim), and a pause. */
	wake_up_all(&fr->wb.pin_wait);
}

/*
 * A flush's sweep (under wb.victim_lock for writing, so no victim write
 * either): no write goes around until fr_admit_resume(), and none is in
 * flight when this returns, so no dirty chunk is skipped as in flight.
 */
void fr_admit_pause(struct dm_fr *fr)
{
	WRITE_ONCE(fr->admit.paused, true);
	/* Paused before the count is read; pairs with fr_admit(). */
	smp_mb();
	wait_event(fr->wb.pin_wait, !atomic_read(&fr->admit.in_flight));
}

void fr_admit_resume(struct dm_fr *fr)
{
	WRITE_ONCE(fr->admit.paused, false);
}
