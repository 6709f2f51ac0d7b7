// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-fr: persistent memory as a first responder for a block device.
 *
 * Table line: <origin dev> <pm dev> [<#opt args> <opt args>...]
 * (docs/admin-guide.md and docs/target-interface.md describe every argument,
 * status field and message).
 *
 * Writes are placed on PM by the protocol core (fr-core.c) in the submitter's
 * context and acknowledged once durable there, so REQ_PREFLUSH and REQ_FUA
 * cost nothing. Reads are served from PM, or go to the origin; a read miss
 * of whole chunks is read by the target into buffers of its own, copied to
 * the reader, and installed on PM by a worker afterwards (read fill), so the
 * reader never waits for PM. Only
 * bios that must wait for origin I/O (a write whose slot holds dirty data to
 * displace, a read that mixes PM and origin data) go to a worker.
 */
#include <linux/module.h>
#include <linux/dax.h>
#include <linux/blkdev.h>
#include <linux/uuid.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/delay.h>
#include <linux/pfn_t.h>

#include "dm-fr.h"

/* The table's mode: fmode_t before 6.5, blk_mode_t since. */
#ifdef BLK_OPEN_WRITE
#define FR_MODE_WRITE		BLK_OPEN_WRITE
#else
#define FR_MODE_WRITE		FMODE_WRITE
#endif

#define FR_DEFAULT_PERIOD_MS	10
#define FR_DEFAULT_DEFER_MS	5000
#define FR_DEFAULT_HIGH_WM	50
#define FR_DEFAULT_LOW_WM	25
#define FR_DEFAULT_JOBS		64
#define FR_MAX_JOBS		1024
#define FR_MAX_PERIOD_MS	3600000
#define FR_RECOVERY_GROUPS	16384
#define FR_CLEAN_RETRIES	5
/* Mixed reads: origin reads without the stripe locks before one with them. */
#define FR_MIXED_READ_TRIES	3
/* Read fill: chunks in flight between a read's completion and their install. */
#define FR_FILL_POOL_BYTES	(128 << 10)
#define FR_FILL_MIN		4
#define FR_FILL_MAX		BITS_PER_LONG
/* What a fill read keeps of the reader's flags. */
#define FR_READ_FLAGS		(REQ_SYNC | REQ_META | REQ_PRIO | REQ_RAHEAD)

/*
 * Every constructed fr target, so that no two targets share PM pages or an
 * origin: device-mapper lets several mapped devices open one block device,
 * a dm-linear or a partition over a PM is another block device on the same
 * pages, and one table may hold several fr targets. Only the targets of a
 * reload (same mapped device, another table) may: the old table is
 * suspended before the new one touches the PM.
 */
static LIST_HEAD(fr_targets);
static DEFINE_MUTEX(fr_targets_lock);

enum fr_io_kind {
	FR_IO_NONE,
	FR_IO_WRITE,		/* needs a dirty chunk cleaned first */
	FR_IO_READ_MIXED,	/* part PM, part origin */
	FR_IO_WRITETHROUGH,	/* cleaner mode: straight to the origin */
	FR_IO_DISCARD,		/* drop from PM, then discard the origin */
};

/*
 * A chunk a read miss brings from the origin into memory of the target's
 * own: taken from the pool in map (with its stripe's epoch), read by
 * fr_fill_read(), copied to the reader, then installed by fr_fill_work
 * unless its stripe changed in between. The reader's pages are never the
 * source of a fill: its buffer may change under the read (O_DIRECT).
 */
struct fr_fill {
	struct llist_node node;
	struct fr_fill *next;		/* the bio's next fill */
	fr_ochunk_t key;
	u32 epoch;
	unsigned int bypass_seq;	/* fr->bypass_seq at map */
	struct page *page;		/* 2^order pages, chunk-sized */
	void *data;
};

/* Per-bio data. */
struct fr_io {
	struct work_struct work;
	struct dm_fr *fr;
	enum fr_io_kind kind;
	struct fr_fill *fills;		/* fill reads only */
	struct bvec_iter fill_iter;	/* the fill read's data */
};

/* The stripes a bio's chunks map to (one, most of the time). */
struct fr_lockset {
	int single;		/* the only stripe, or -1: see map */
	DECLARE_BITMAP(map, FR_NR_STRIPES);
};

/* A position in a bio's data, for the core's payload callback. */
struct fr_bio_cursor {
	struct bio *bio;
	struct bvec_iter iter;
};

static void fr_lock_range(struct dm_fr *fr, u64 first, u64 last,
			  struct fr_lockset *ls)
{
	const struct fr_geometry *g = &fr->cache.geo;
	unsigned int i;
	u64 k;

	if (first == last) {
		ls->single = fr_stripe_of(fr, fr_slot_of(g, to_ochunk(first))) -
			     fr->stripes;
		mutex_lock(&fr->stripes[ls->single].lock);
		return;
	}
	ls->single = -1;
	bitmap_zero(ls->map, FR_NR_STRIPES);
	for (k = first; k <= last; k++) {
		struct fr_stripe *st = fr_stripe_of(fr,
						    fr_slot_of(g, to_ochunk(k)));

		__set_bit(st - fr->stripes, ls->map);
	}
	for_each_set_bit(i, ls->map, FR_NR_STRIPES)
		mutex_lock(&fr->stripes[i].lock);
}

static void fr_unlock_range(struct dm_fr *fr, struct fr_lockset *ls,
			    bool changed)
{
	unsigned int i;

	if (ls->single >= 0) {
		if (changed)
			fr->stripes[ls->single].epoch++;
		mutex_unlock(&fr->stripes[ls->single].lock);
		return;
	}
	for_each_set_bit(i, ls->map, FR_NR_STRIPES) {
		if (changed)
			fr->stripes[i].epoch++;
		mutex_unlock(&fr->stripes[i].lock);
	}
}

static void bio_chunks(struct dm_fr *fr, struct bio *bio, u64 *first,
		       u64 *last)
{
	u32 shift = fr->cache.geo.chunk_shift;

	*first = bio->bi_iter.bi_sector >> shift;
	*last = (bio_end_sector(bio) - 1) >> shift;
}

static void fr_bio_payload(void *arg, void *pm_dst, u32 nr_sectors)
{
	struct fr_bio_cursor *cur = arg;
	size_t left = (size_t)nr_sectors << SECTOR_SHIFT;
	u8 *dst = pm_dst;

	while (left) {
		struct bio_vec bv = bio_iter_iovec(cur->bio, cur->iter);
		size_t n = min_t(size_t, bv.bv_len, left);
		void *src = bvec_kmap_local(&bv);

		memcpy_flushcache(dst, src, n);
		kunmap_local(src);
		dst += n;
		left -= n;
		bio_advance_iter_single(cur->bio, &cur->iter, n);
	}
}

/* Copy bytes from PM into the bio at its current position. */
static int fr_copy_to_bio(struct bio *bio, struct bvec_iter *iter,
			  const u8 *src, size_t bytes)
{
	while (bytes) {
		struct bio_vec bv = bio_iter_iovec(bio, *iter);
		size_t n = min_t(size_t, bv.bv_len, bytes);
		void *dst = bvec_kmap_local(&bv);
		unsigned long left = copy_mc_to_kernel(dst, src, n);

		kunmap_local(dst);
		if (left)
			return -EIO;
		src += n;
		bytes -= n;
		bio_advance_iter_single(bio, iter, n);
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

	while (sector < end) {
		fr_ochunk_t key = fr_chunk_of_sector(g, sector);
		u32 off = sector - fr_first_sector(g, key);
		u32 stop = off + min_t(u64, g->chunk_sectors - off, end - sector);
		struct fr_hit hit;
		u64 held = fr_lookup(&fr->cache, key, &hit) ? hit.sectors : 0;
		u32 i = off, j;

		while (i < stop) {
			bool in_pm = held >> i & 1;

			for (j = i + 1; j < stop && (held >> j & 1) == in_pm; j++)
				;
			if (!in_pm)
				bio_advance_iter(bio, &iter,
						 (j - i) << SECTOR_SHIFT);
			else if (fr_fault_pm_read(from_pchunk(hit.pchunk)) ||
				 fr_copy_to_bio(bio, &iter, (const u8 *)hit.data +
						((size_t)i << SECTOR_SHIFT),
						(size_t)(j - i) << SECTOR_SHIFT))
				return -EIO;
			i = j;
		}
		sector += stop - off;
	}
	return 0;
}

static void fr_queue_io(struct dm_fr *fr, struct fr_io *io,
			enum fr_io_kind kind)
{
	io->kind = kind;
	queue_work(fr->io_wq, &io->work);
}

static void fr_fail_pm(struct dm_fr *fr, struct bio *bio)
{
	fr_stat_add(fr, pm_errors, 1);
	bio->bi_status = BLK_STS_IOERR;
}

static int fr_map_write(struct dm_fr *fr, struct bio *bio, struct fr_io *io)
{
	struct fr_bio_cursor cur = { .bio = bio, .iter = bio->bi_iter };
	struct fr_write_result res;
	struct fr_lockset ls;
	u64 first, last, k;
	struct fr_hit hit;
	int r;

	bio_chunks(fr, bio, &first, &last);
	fr_lock_range(fr, first, last, &ls);

	if (unlikely(READ_ONCE(fr->cleaner))) {
		/* What PM does not hold is written through, so dirty drains. */
		for (k = first; k <= last; k++)
			if (fr_lookup(&fr->cache, to_ochunk(k), &hit))
				break;
		if (k > last) {
			fr_unlock_range(fr, &ls, false);
			fr_queue_io(fr, io, FR_IO_WRITETHROUGH);
			return DM_MAPIO_SUBMITTED;
		}
	}

	r = fr_write(&fr->cache, bio->bi_iter.bi_sector, bio_sectors(bio),
		     fr_bio_payload, &cur, &res);
	fr_unlock_range(fr, &ls, r == 0);
	if (r == FR_NEED_CLEAN) {
		fr_queue_io(fr, io, FR_IO_WRITE);
		return DM_MAPIO_SUBMITTED;
	}
	if (r) {
		fr_fail_pm(fr, bio);
	} else {
		fr_stat_add(fr, write_hits, res.hits);
		fr_stat_add(fr, write_misses, res.chunks - res.hits);
	}
	bio_endio(bio);
	return DM_MAPIO_SUBMITTED;
}

/*
 * A write whose slot must displace dirty data: write back a batch starting
 * at the victim (one origin flush for many chunks, so a burst of collisions
 * costs little), then try again. No slot lock is held across the batch,
 * which takes them itself.
 */
static void fr_deferred_write(struct dm_fr *fr, struct bio *bio)
{
	struct fr_write_result res;
	struct fr_lockset ls;
	unsigned int tries = 0;
	u64 first, last;
	int r;

	bio_chunks(fr, bio, &first, &last);
	for (;;) {
		struct fr_bio_cursor cur = { .bio = bio, .iter = bio->bi_iter };

		fr_lock_range(fr, first, last, &ls);
		r = fr_write(&fr->cache, bio->bi_iter.bi_sector,
			     bio_sectors(bio), fr_bio_payload, &cur, &res);
		fr_unlock_range(fr, &ls, r == 0);
		if (r != FR_NEED_CLEAN)
			break;
		fr_stat_add(fr, forced_writebacks, 1);
		r = fr_writeback_from(fr, res.victim);
		if (r == -EHWPOISON)
			break;	/* its data is unreadable: it cannot make room */
		if (r < 0) {
			/* The origin refuses: the data stays on PM; retry. */
			if (++tries > FR_CLEAN_RETRIES)
				break;
			msleep(100 << tries);
		}
	}
	if (r) {
		bio->bi_status = BLK_STS_IOERR;
	} else {
		fr_stat_add(fr, write_hits, res.hits);
		fr_stat_add(fr, write_misses, res.chunks - res.hits);
	}
	bio_endio(bio);
}

/* Read the bio's range from the origin into its own pages; wait. */
static blk_status_t fr_read_origin(struct dm_fr *fr, struct bio *bio)
{
	struct bio *clone;
	blk_status_t status;

	clone = bio_alloc_clone(fr->origin->bdev, bio, GFP_NOIO, &fr->bs);
	clone->bi_opf = REQ_OP_READ | (bio->bi_opf & REQ_SYNC);
	submit_bio_wait(clone);
	status = clone->bi_status;
	bio_put(clone);
	return status;
}

/* Sum of the epochs of a locked range: it moves iff any of them moved. */
static u64 fr_range_epoch(struct dm_fr *fr, struct fr_lockset *ls)
{
	unsigned int i;
	u64 sum = 0;

	if (ls->single >= 0)
		return fr->stripes[ls->single].epoch;
	for_each_set_bit(i, ls->map, FR_NR_STRIPES)
		sum += fr->stripes[i].epoch;
	return sum;
}

/*
 * A read of sectors some of which PM holds: read the origin into the bio,
 * then copy what PM holds over it. The origin read runs without the stripe
 * locks, so writes to these chunks do not wait for it: if the stripes'
 * epochs did not move meanwhile, PM lost nothing it held (only writes and
 * discards drop copies, and both bump the epoch; writeback only writes to
 * the origin what PM still holds), so the overlay makes the result current.
 * If they moved, read again; the last try holds the locks across the read.
 */
static void fr_deferred_read_mixed(struct dm_fr *fr, struct bio *bio)
{
	struct fr_lockset ls;
	unsigned int tries;
	u64 first, last, epoch;

	bio_chunks(fr, bio, &first, &last);
	for (tries = 1;; tries++) {
		bool hold = tries == FR_MIXED_READ_TRIES;

		fr_lock_range(fr, first, last, &ls);
		epoch = fr_range_epoch(fr, &ls);
		if (!hold)
			fr_unlock_range(fr, &ls, false);
		bio->bi_status = fr_read_origin(fr, bio);
		if (!hold)
			fr_lock_range(fr, first, last, &ls);
		if (bio->bi_status || hold || fr_range_epoch(fr, &ls) == epoch)
			break;
		fr_unlock_range(fr, &ls, false);
	}
	if (!bio->bi_status && fr_read_from_pm(fr, bio))
		fr_fail_pm(fr, bio);
	fr_unlock_range(fr, &ls, false);
	bio_endio(bio);
}

/*
 * Cleaner mode: write what PM does not hold straight to the origin (FUA, so
 * still durable when acknowledged). wb_lock keeps writeback batches out
 * (docs/protocol.md, "Required serialization"); bypass_seq is odd while the
 * origin write is in flight, so no fill that overlaps it is installed (a
 * fill may have read the data from before it). The stripe locks are held
 * only to check that PM holds none of the range: a write to PM that races
 * with the write-through is as unordered as any two concurrent writes. If
 * PM came to hold part of the range since map, the write goes to PM after
 * all.
 */
static void fr_deferred_writethrough(struct dm_fr *fr, struct bio *bio)
{
	struct fr_lockset ls;
	struct fr_hit hit;
	struct bio *clone;
	u64 first, last, k;

	mutex_lock(&fr->wb_lock);
	bio_chunks(fr, bio, &first, &last);
	fr_lock_range(fr, first, last, &ls);
	for (k = first; k <= last; k++)
		if (fr_lookup(&fr->cache, to_ochunk(k), &hit))
			break;
	if (k <= last) {
		fr_unlock_range(fr, &ls, false);
		mutex_unlock(&fr->wb_lock);
		fr_deferred_write(fr, bio);
		return;
	}
	WRITE_ONCE(fr->bypass_seq, fr->bypass_seq + 1);
	fr_unlock_range(fr, &ls, false);
	clone = bio_alloc_clone(fr->origin->bdev, bio, GFP_NOIO, &fr->bs);
	clone->bi_opf = REQ_OP_WRITE | REQ_FUA | (bio->bi_opf & REQ_SYNC);
	submit_bio_wait(clone);
	bio->bi_status = clone->bi_status;
	bio_put(clone);
	WRITE_ONCE(fr->bypass_seq, fr->bypass_seq + 1);
	mutex_unlock(&fr->wb_lock);
	if (!bio->bi_status)
		fr_stat_add(fr, write_misses, last - first + 1);
	bio_endio(bio);
}

/*
 * Drop what the discard covers from PM, then pass it to the origin and wait,
 * all under wb_lock: a discard still in flight when a newer write of the
 * same chunk is written back and cleaned could land after it.
 *
 * A read while the origin discard is in flight may return the data from
 * before it, and a fill of that would outlive the discard. bypass_seq is
 * odd from before the PM copies are dropped until the origin completed, and
 * a fill is installed only if it saw the same even value at map as at
 * install (fr_fill_work): any fill that overlapped a discard is dropped.
 * The stripe locks order the bump before the drop against the installs.
 * (One sequence for discards and write-through: both hold wb_lock.)
 */
static void fr_deferred_discard(struct dm_fr *fr, struct bio *bio)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 sector = bio->bi_iter.bi_sector, nr = bio_sectors(bio);
	u64 region_sectors = (u64)g->region_chunks << g->chunk_shift;
	struct fr_lockset ls;
	struct bio *clone;
	u64 pos, end = sector + nr;

	mutex_lock(&fr->wb_lock);
	WRITE_ONCE(fr->bypass_seq, fr->bypass_seq + 1);
	if ((nr >> g->chunk_shift) > g->nr_slots) {
		/* Larger than the cache: walk the slots instead. */
		for (pos = 0; pos < g->nr_slots; pos += 1 << FR_STRIPE_SHIFT) {
			struct fr_stripe *st = fr_stripe_of(fr, to_slot(pos));

			mutex_lock(&st->lock);
			fr_discard_slots(&fr->cache, to_slot(pos),
					 1 << FR_STRIPE_SHIFT, sector, nr);
			st->epoch++;
			mutex_unlock(&st->lock);
			cond_resched();
		}
	} else {
		for (pos = sector; pos < end;) {
			u64 next = min(end, (pos | (region_sectors - 1)) + 1);

			fr_lock_range(fr, pos >> g->chunk_shift,
				      (next - 1) >> g->chunk_shift, &ls);
			fr_discard(&fr->cache, pos, next - pos);
			fr_unlock_range(fr, &ls, true);
			pos = next;
			cond_resched();
		}
	}
	if (bdev_max_discard_sectors(fr->origin->bdev)) {
		clone = bio_alloc_clone(fr->origin->bdev, bio, GFP_NOIO,
					&fr->bs);
		submit_bio_wait(clone);
		bio->bi_status = clone->bi_status;
		bio_put(clone);
	}
	WRITE_ONCE(fr->bypass_seq, fr->bypass_seq + 1);
	mutex_unlock(&fr->wb_lock);
	bio_endio(bio);
}

static void fr_io_work(struct work_struct *work)
{
	struct fr_io *io = container_of(work, struct fr_io, work);
	struct bio *bio = dm_bio_from_per_bio_data(io, sizeof(*io));

	switch (io->kind) {
	case FR_IO_WRITE:
		fr_deferred_write(io->fr, bio);
		break;
	case FR_IO_READ_MIXED:
		fr_deferred_read_mixed(io->fr, bio);
		break;
	case FR_IO_WRITETHROUGH:
		fr_deferred_writethrough(io->fr, bio);
		break;
	case FR_IO_DISCARD:
		fr_deferred_discard(io->fr, bio);
		break;
	default:
		bio_io_error(bio);
		break;
	}
}

static struct fr_fill *fr_fill_get(struct dm_fr *fr)
{
	unsigned int i;

	do {
		i = find_first_zero_bit(&fr->fill_busy, fr->nr_fills);
		if (i >= fr->nr_fills)
			return NULL;	/* all in flight: skip this fill */
	} while (test_and_set_bit(i, &fr->fill_busy));
	return &fr->fills[i];
}

static void fr_fill_put(struct dm_fr *fr, struct fr_fill *f)
{
	clear_bit(f - fr->fills, &fr->fill_busy);
}

/*
 * Plan a read miss (stripes locked by the caller): the leading run of
 * chunks the bio covers whole and whose slots have clean room is read into
 * fill buffers, each with its stripe's epoch (a change before the install
 * means the data may be stale). Returns how many sectors from the bio's
 * start take that path (io->fills set) or, with no fill, are remapped: the
 * sectors before the first fillable chunk, or all of them. dm core
 * resubmits the rest (dm_accept_partial_bio).
 */
static u32 fr_fill_plan(struct dm_fr *fr, struct bio *bio, struct fr_io *io)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 sector = bio->bi_iter.bi_sector, end = bio_end_sector(bio);
	struct fr_fill **tail = &io->fills;
	u64 first, last, k, run_end = sector;

	bio_chunks(fr, bio, &first, &last);
	for (k = first; k <= last; k++) {
		fr_ochunk_t key = to_ochunk(k);
		u64 start = fr_first_sector(g, key);
		u64 len = hweight64(fr_chunk_mask(g, key));
		struct fr_fill *f;

		if (start < sector || start + len > end ||
		    !fr_can_fill(&fr->cache, key)) {
			if (io->fills)
				break;
			continue;
		}
		if (!io->fills && start > sector)
			return start - sector;
		f = fr_fill_get(fr);
		if (!f)
			break;
		f->key = key;
		f->epoch = fr_stripe_of(fr, fr_slot_of(g, key))->epoch;
		f->bypass_seq = READ_ONCE(fr->bypass_seq);
		f->next = NULL;
		*tail = f;
		tail = &f->next;
		run_end = start + len;
	}
	return io->fills ? run_end - sector : end - sector;
}

static void fr_fill_read_done(struct bio *fbio);

/*
 * Read the planned chunks from the origin into the fills' own pages; the
 * reader gets a copy of them at completion (fr_fill_read_done).
 */
static void fr_fill_read(struct dm_fr *fr, struct bio *bio, struct fr_io *io)
{
	const struct fr_geometry *g = &fr->cache.geo;
	unsigned short nr_vecs = 0;
	struct fr_fill *f;
	struct bio *fbio;

	for (f = io->fills; f; f = f->next)
		nr_vecs += DIV_ROUND_UP(hweight64(fr_chunk_mask(g, f->key)) <<
					SECTOR_SHIFT, PAGE_SIZE);
	fbio = bio_alloc_bioset(fr->origin->bdev, nr_vecs,
				REQ_OP_READ | (bio->bi_opf & FR_READ_FLAGS),
				GFP_NOIO, &fr->bs);
	fbio->bi_iter.bi_sector = bio->bi_iter.bi_sector;
	for (f = io->fills; f; f = f->next) {
		size_t left = hweight64(fr_chunk_mask(g, f->key)) << SECTOR_SHIFT;
		struct page *page = f->page;

		while (left) {
			size_t n = min_t(size_t, left, PAGE_SIZE);

			__bio_add_page(fbio, page++, n, 0);
			left -= n;
		}
	}
	fbio->bi_end_io = fr_fill_read_done;
	fbio->bi_private = io;
	io->fill_iter = fbio->bi_iter;
	submit_bio_noacct(fbio);
}

/*
 * A fill read completed (any context): give the reader its copy, then hand
 * the chunks to the worker for PM, so the reader never waits for PM.
 */
static void fr_fill_read_done(struct bio *fbio)
{
	struct fr_io *io = fbio->bi_private;
	struct bio *bio = dm_bio_from_per_bio_data(io, sizeof(*io));
	struct dm_fr *fr = io->fr;
	struct bvec_iter dst = bio->bi_iter, src = io->fill_iter;
	struct fr_fill *f = io->fills, *next;

	io->fills = NULL;
	bio->bi_status = fbio->bi_status;
	if (!bio->bi_status)
		bio_copy_data_iter(bio, &dst, fbio, &src);
	bio_put(fbio);
	for (; f; f = next) {
		next = f->next;
		if (bio->bi_status)
			fr_fill_put(fr, f);
		else
			llist_add(&f->node, &fr->fills_ready);
	}
	if (!bio->bi_status)
		queue_work(fr->io_wq, &fr->fill_work);
	bio_endio(bio);
}

static int fr_map_read(struct dm_fr *fr, struct bio *bio, struct fr_io *io)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 sector = bio->bi_iter.bi_sector, end = bio_end_sector(bio);
	u64 first, last, hits = 0, misses = 0;
	bool any_held = false, all_held = true;
	struct fr_lockset ls;
	u32 take;

	bio_chunks(fr, bio, &first, &last);
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
		sector += cnt;
	}

	if (all_held) {
		if (fr_read_from_pm(fr, bio))
			fr_fail_pm(fr, bio);
		fr_unlock_range(fr, &ls, false);
		fr_stat_add(fr, read_hits, hits);
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (any_held) {
		fr_unlock_range(fr, &ls, false);
		fr_stat_add(fr, read_hits, hits);
		fr_stat_add(fr, read_misses, misses);
		fr_queue_io(fr, io, FR_IO_READ_MIXED);
		return DM_MAPIO_SUBMITTED;
	}
	take = bio_sectors(bio);
	if (fr->read_fill && !READ_ONCE(fr->cleaner))
		take = fr_fill_plan(fr, bio, io);
	fr_unlock_range(fr, &ls, false);
	if (take < bio_sectors(bio)) {
		/* Count only what this part covers: the rest comes back. */
		dm_accept_partial_bio(bio, take);
		bio_chunks(fr, bio, &first, &last);
		misses = last - first + 1;
	}
	fr_stat_add(fr, read_misses, misses);
	if (io->fills) {
		fr_fill_read(fr, bio, io);
		return DM_MAPIO_SUBMITTED;
	}
	bio_set_dev(bio, fr->origin->bdev);
	return DM_MAPIO_REMAPPED;
}

static void fr_fill_payload(void *arg, void *pm_dst, u32 nr_sectors)
{
	fr_pm_copy(pm_dst, arg, (size_t)nr_sectors << SECTOR_SHIFT);
}

/* Install the completed reads' chunks whose stripes did not change since. */
static void fr_fill_work(struct work_struct *work)
{
	struct dm_fr *fr = container_of(work, struct dm_fr, fill_work);
	struct llist_node *list = llist_del_all(&fr->fills_ready);
	struct fr_fill *f, *tmp;
	u64 filled = 0;

	llist_for_each_entry_safe(f, tmp, list, node) {
		struct fr_stripe *st = fr_stripe_of(fr, fr_slot_of(&fr->cache.geo,
								  f->key));
		int r = 0;

		/*
		 * A fill does not bump the epoch: clean data equal to the
		 * origin's makes no other fill in flight stale.
		 */
		mutex_lock(&st->lock);
		if (st->epoch == f->epoch && !(f->bypass_seq & 1) &&
		    f->bypass_seq == READ_ONCE(fr->bypass_seq) &&
		    !READ_ONCE(fr->cleaner))
			r = fr_fill(&fr->cache, f->key, fr_fill_payload, f->data);
		mutex_unlock(&st->lock);
		if (r < 0)
			fr_stat_add(fr, pm_errors, 1);
		else
			filled += r;
		fr_fill_put(fr, f);
	}
	fr_stat_add(fr, read_fills, filled);
}

static int fr_map(struct dm_target *ti, struct bio *bio)
{
	struct dm_fr *fr = ti->private;
	struct fr_io *io = dm_per_bio_data(bio, sizeof(struct fr_io));

	io->kind = FR_IO_NONE;
	io->fr = fr;
	io->fills = NULL;
	INIT_WORK(&io->work, fr_io_work);
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

/* Table arguments. */

static int parse_u32(const char *s, u32 min, u32 max, u32 *out)
{
	u32 v;

	if (kstrtou32(s, 10, &v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Optional arguments that take a value. */
static const char * const fr_valued_args[] = {
	"chunk_size", "region_size", "stride", "writeback_period",
	"writeback_defer", "high_watermark", "low_watermark", "writeback_jobs",
	"uuid", "origin_id",
};

static bool is_valued_arg(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fr_valued_args); i++)
		if (!strcasecmp(name, fr_valued_args[i]))
			return true;
	return false;
}

/* 32 hex digits, or the 36-character form with dashes. */
static int parse_uuid(const char *s, u8 out[16])
{
	size_t len = strlen(s), i, n = 0;
	char hex[32];

	if (len != 32 && len != 36)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (len == 36 && (i == 8 || i == 13 || i == 18 || i == 23)) {
			if (s[i] != '-')
				return -EINVAL;
			continue;
		}
		hex[n++] = s[i];
	}
	return hex2bin(out, hex, 16);
}

/*
 * An origin id fits the superblock and prints back as one table word
 * (dm_split_args would need a backslash to keep a space).
 */
static int parse_origin_id(const char *s, char *out)
{
	size_t len = strlen(s), i;

	if (!len || len >= FR_ORIGIN_ID_LEN)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '\\')
			return -EINVAL;
	memcpy(out, s, len + 1);
	return 0;
}

static int parse_features(struct dm_fr *fr, struct dm_arg_set *as,
			  char **error)
{
	/* 3 flags and 10 arguments with a value. */
	static const struct dm_arg _args[] = {
		{0, 23, "Invalid number of optional arguments"},
	};
	unsigned int argc;
	u32 v;
	int r;

	if (!as->argc)
		return 0;
	r = dm_read_arg_group(_args, as, &argc, error);
	if (r)
		return r;
	while (argc) {
		const char *name = dm_shift_arg(as);
		const char *val;

		argc--;
		if (!strcasecmp(name, "fresh")) {
			fr->fresh = true;
			continue;
		}
		if (!strcasecmp(name, "cleaner")) {
			fr->cleaner = true;
			continue;
		}
		if (!strcasecmp(name, "no_read_fill")) {
			fr->read_fill = false;
			continue;
		}
		if (!is_valued_arg(name)) {
			*error = "Unrecognised optional argument";
			return -EINVAL;
		}
		if (!argc) {
			*error = "Optional argument is missing its value";
			return -EINVAL;
		}
		val = dm_shift_arg(as);
		argc--;
		if (!strcasecmp(name, "chunk_size")) {
			if (parse_u32(val, FR_MIN_CHUNK_SECTORS << SECTOR_SHIFT,
				      FR_MAX_CHUNK_SECTORS << SECTOR_SHIFT, &v) ||
			    !is_power_of_2(v)) {
				*error = "Invalid chunk_size (power of two, 4096..32768)";
				return -EINVAL;
			}
			fr->arg_chunk_size = v;
		} else if (!strcasecmp(name, "region_size")) {
			if (parse_u32(val, 4096, 1U << 30, &v) ||
			    !is_power_of_2(v)) {
				*error = "Invalid region_size (power of two bytes)";
				return -EINVAL;
			}
			fr->arg_region_size = v;
		} else if (!strcasecmp(name, "stride")) {
			if (kstrtou64(val, 10, &fr->arg_stride) ||
			    !fr->arg_stride) {
				*error = "Invalid stride (slots, > 0)";
				return -EINVAL;
			}
		} else if (!strcasecmp(name, "writeback_period")) {
			if (parse_u32(val, 0, FR_MAX_PERIOD_MS, &v)) {
				*error = "Invalid writeback_period (ms, 0..3600000)";
				return -EINVAL;
			}
			fr->writeback_period_ms = v;
		} else if (!strcasecmp(name, "writeback_defer")) {
			if (parse_u32(val, 0, FR_MAX_PERIOD_MS, &v)) {
				*error = "Invalid writeback_defer (ms, 0..3600000)";
				return -EINVAL;
			}
			fr->writeback_defer_ms = v;
		} else if (!strcasecmp(name, "high_watermark")) {
			if (parse_u32(val, 0, 100, &v)) {
				*error = "Invalid high_watermark (0..100)";
				return -EINVAL;
			}
			fr->high_watermark = v;
		} else if (!strcasecmp(name, "low_watermark")) {
			if (parse_u32(val, 0, 100, &v)) {
				*error = "Invalid low_watermark (0..100)";
				return -EINVAL;
			}
			fr->low_watermark = v;
		} else if (!strcasecmp(name, "writeback_jobs")) {
			if (parse_u32(val, 1, FR_MAX_JOBS, &v)) {
				*error = "Invalid writeback_jobs (1..1024)";
				return -EINVAL;
			}
			fr->writeback_jobs = v;
		} else if (!strcasecmp(name, "uuid")) {
			if (parse_uuid(val, fr->arg_uuid)) {
				*error = "Invalid uuid (32 hex digits, dashes allowed)";
				return -EINVAL;
			}
			fr->has_uuid = true;
		} else if (!strcasecmp(name, "origin_id")) {
			if (parse_origin_id(val, fr->arg_origin_id)) {
				*error = "Invalid origin_id (1..63 printable characters, no space or backslash)";
				return -EINVAL;
			}
		} else {
			*error = "Unrecognised optional argument";
			return -EINVAL;
		}
	}
	if (fr->low_watermark > fr->high_watermark) {
		*error = "low_watermark is above high_watermark";
		return -EINVAL;
	}
	return 0;
}

/* Map the whole PM device with DAX; it must be one contiguous range. */
static int fr_map_pm(struct dm_fr *fr, char **error)
{
	struct block_device *bdev = fr->pm_dev->bdev;
	sector_t start = get_start_sect(bdev);
	long nr_pages, mapped;
	pfn_t pfn;
	int id;

	if (!fr->pm_dev->dax_dev) {
		*error = "PM device does not support DAX";
		return -EOPNOTSUPP;
	}
	if (start & (PAGE_SECTORS - 1)) {
		*error = "PM partition is not page aligned";
		return -EINVAL;
	}
	fr->pm_bytes = (u64)bdev_nr_sectors(bdev) << SECTOR_SHIFT;
	nr_pages = fr->pm_bytes >> PAGE_SHIFT;
	if (!nr_pages) {
		*error = "PM device is too small";
		return -EINVAL;
	}
	fr->pm_bytes = (u64)nr_pages << PAGE_SHIFT;
	id = dax_read_lock();
	mapped = dax_direct_access(fr->pm_dev->dax_dev, start >> PAGE_SECTORS_SHIFT,
				   nr_pages, DAX_ACCESS, &fr->pm_addr, &pfn);
	dax_read_unlock(id);
	if (mapped < 0) {
		*error = "Cannot map the PM device with DAX";
		return mapped;
	}
	if (mapped < nr_pages) {
		*error = "PM device is not contiguously mappable";
		return -EOPNOTSUPP;
	}
	fr->pm_pfn = pfn_t_to_pfn(pfn);
	fr->pm_pages = nr_pages;
	return 0;
}

/*
 * The origin's stable names the kernel can see itself, in order of
 * preference: a partition's PARTUUID (as udev's by-partuuid link names it),
 * a dm device's uuid, and its name (as frctl names dm devices).
 */
enum fr_id_kind { FR_ID_PARTUUID, FR_ID_DM_UUID, FR_ID_DM_NAME, FR_ID_KINDS };

static const char * const fr_id_prefix[FR_ID_KINDS] = {
	"/dev/disk/by-partuuid/", "dm-uuid-", "dm-name-",
};

/* The origin's name of one kind: 0, -ENOENT (none that fits) or -ENOMEM. */
static int fr_origin_id_of(struct dm_fr *fr, enum fr_id_kind kind, char *id)
{
	struct block_device *bdev = fr->origin->bdev;
	struct mapped_device *md;
	const char *val = NULL;
	char *buf = NULL;
	int r = -ENOENT;

	if (kind == FR_ID_PARTUUID) {
		if (bdev_is_partition(bdev) && bdev->bd_meta_info)
			val = bdev->bd_meta_info->uuid;
	} else {
		md = dm_get_md(bdev->bd_dev);
		if (!md)
			return -ENOENT;
		buf = kmalloc(DM_NAME_LEN + DM_UUID_LEN, GFP_KERNEL);
		if (!buf)
			r = -ENOMEM;
		else if (!dm_copy_name_and_uuid(md, buf, buf + DM_NAME_LEN))
			val = kind == FR_ID_DM_UUID ? buf + DM_NAME_LEN : buf;
		dm_put(md);
	}
	if (val && val[0] &&
	    strlen(fr_id_prefix[kind]) + strlen(val) < FR_ORIGIN_ID_LEN) {
		size_t plen = strlen(fr_id_prefix[kind]);

		/* It fits (checked above): no snprintf truncation to fear. */
		memcpy(id, fr_id_prefix[kind], plen);
		strscpy(id + plen, val, FR_ORIGIN_ID_LEN - plen);
		r = 0;
	}
	kfree(buf);
	return r;
}

/*
 * What a format records without origin_id: the first stable name that
 * fits, else dev:MAJ:MIN, which may name another disk after a reboot.
 */
static int fr_origin_stable_id(struct dm_fr *fr, char *id)
{
	enum fr_id_kind k;
	int r;

	for (k = 0; k < FR_ID_KINDS; k++) {
		r = fr_origin_id_of(fr, k, id);
		if (r != -ENOENT)
			return r;
	}
	snprintf(id, FR_ORIGIN_ID_LEN, "dev:%s", fr->origin->name);
	return 0;
}

/*
 * Is the origin the one the PM was formatted for? origin_id in the table
 * must equal the recorded id (whoever wrote the table vouches for the
 * device: frctl resolves the id first). Without it, a recorded name of a
 * kind the kernel can see must be the origin's; dev:MAJ:MIN, /dev/disk/by-id
 * names and paths cannot be checked here.
 */
static int fr_check_origin_id(struct dm_fr *fr, const char *recorded,
			      char **error)
{
	const char *name = dm_table_device_name(fr->ti->table);
	char now[FR_ORIGIN_ID_LEN];
	enum fr_id_kind k;
	int r;

	if (fr->arg_origin_id[0]) {
		if (strcmp(recorded, fr->arg_origin_id)) {
			DMERR("%s: the PM records origin \"%s\", the table's origin_id is \"%s\"",
			      name, recorded, fr->arg_origin_id);
			*error = "PM was formatted for another origin_id than the table's";
			return -EINVAL;
		}
		return 0;
	}
	for (k = 0; k < FR_ID_KINDS; k++) {
		if (strncmp(recorded, fr_id_prefix[k], strlen(fr_id_prefix[k])))
			continue;
		r = fr_origin_id_of(fr, k, now);
		if (r == -ENOMEM) {
			*error = "Cannot allocate memory for the origin's name";
			return r;
		}
		if (r)
			strscpy(now, "(none of that kind)", sizeof(now));
		if (r || strcmp(recorded, now)) {
			DMERR("%s: the PM records origin \"%s\", origin %s is \"%s\"",
			      name, recorded, fr->origin->name, now);
			*error = "Origin is not the device the PM was formatted for";
			return -EINVAL;
		}
		return 0;
	}
	return 0;
}

static int fr_alloc_bitmaps(struct dm_fr *fr, const struct fr_geometry *g)
{
	u64 longs = fr_bitmap_longs(g);

	fr->valid_bits = kvcalloc(longs, sizeof(long), GFP_KERNEL);
	fr->dirty_bits = kvcalloc(longs, sizeof(long), GFP_KERNEL);
	return fr->valid_bits && fr->dirty_bits ? 0 : -ENOMEM;
}

/*
 * The constructor only reads the PM: a table may be loaded while another
 * table of the same device is still live on this PM (dmsetup reload). The
 * PM is formatted or recovered at the first preresume, once the old table
 * has been suspended.
 */
static int fr_prepare_format(struct dm_fr *fr, char **error)
{
	struct dm_target *ti = fr->ti;
	struct fr_format_params *p = &fr->fmt;
	const char *why = NULL;
	int r;

	p->chunk_sectors = fr->arg_chunk_size >> SECTOR_SHIFT;
	if (fr->arg_region_size) {
		u32 chunk = fr->arg_chunk_size ? fr->arg_chunk_size :
			    FR_DEFAULT_CHUNK_SECTORS << SECTOR_SHIFT;

		if (fr->arg_region_size < chunk) {
			*error = "region_size is smaller than chunk_size";
			return -EINVAL;
		}
		p->region_chunks = fr->arg_region_size / chunk;
	}
	p->stride_slots = fr->arg_stride;
	p->origin_sectors = ti->len;
	if (fr->has_uuid)
		memcpy(p->uuid, fr->arg_uuid, sizeof(p->uuid));
	else
		generate_random_uuid(p->uuid);
	if (fr->arg_origin_id[0]) {
		strscpy(p->origin_id, fr->arg_origin_id, sizeof(p->origin_id));
	} else if (fr_origin_stable_id(fr, p->origin_id)) {
		*error = "Cannot allocate memory for the origin's name";
		return -ENOMEM;
	}

	r = fr_geometry_layout(&fr->cache.geo, fr->pm_bytes, p, &why);
	if (r) {
		*error = (char *)why;
		return r;
	}
	return 0;
}

static int fr_prepare_recover(struct dm_fr *fr, char **error)
{
	const struct fr_geometry *g = &fr->cache.geo;
	const struct fr_sb_disk *sb = fr->pm_addr;
	char origin_id[FR_ORIGIN_ID_LEN];
	const char *why = NULL;
	u8 uuid[16];
	int r;

	r = fr_cache_attach(&fr->cache, fr->pm_addr, fr->pm_bytes, NULL, NULL,
			    &why);
	if (r) {
		*error = (char *)why;
		return r;
	}
	if (fr_pm_read(uuid, sb->uuid, sizeof(uuid)) ||
	    fr_pm_read(origin_id, sb->origin_id, sizeof(origin_id))) {
		*error = "superblock unreadable (machine check)";
		return -EIO;
	}
	origin_id[FR_ORIGIN_ID_LEN - 1] = 0;
	if (fr->has_uuid && memcmp(uuid, fr->arg_uuid, sizeof(uuid))) {
		DMERR("%s: the PM's uuid is %pUb, the table's %pUb",
		      dm_table_device_name(fr->ti->table), uuid, fr->arg_uuid);
		*error = "PM has another uuid than the table's uuid argument";
		return -EINVAL;
	}
	r = fr_check_origin_id(fr, origin_id, error);
	if (r)
		return r;
	if ((fr->arg_chunk_size &&
	     fr->arg_chunk_size != g->chunk_sectors << SECTOR_SHIFT) ||
	    (fr->arg_region_size &&
	     fr->arg_region_size != (g->region_chunks << g->chunk_shift) <<
	     SECTOR_SHIFT) ||
	    (fr->arg_stride && fr->arg_stride != g->stride_slots)) {
		*error = "Geometry arguments do not match the PM's superblock";
		return -EINVAL;
	}
	if (g->origin_sectors != fr->ti->len) {
		*error = "PM was formatted for an origin of another length";
		return -EINVAL;
	}
	return 0;
}

static int fr_init_pm(struct dm_fr *fr)
{
	const char *name = dm_table_device_name(fr->ti->table);
	const struct fr_geometry *g = &fr->cache.geo;
	struct fr_group_scratch *scratch;
	struct fr_recovery_report rep;
	const char *why = NULL;
	int r;

	if (fr->fresh) {
		fr->fmt.format_time = ktime_get_real_seconds();
		r = fr_format(&fr->cache, fr->pm_addr, fr->pm_bytes, &fr->fmt,
			      fr->valid_bits, fr->dirty_bits, &why);
		if (r) {
			DMERR("%s: cannot format the PM: %s", name, why);
			return r;
		}
		DMINFO("%s: formatted %llu chunks of %u KiB for %llu origin sectors",
		       name, g->nr_chunks, g->chunk_sectors / 2,
		       g->origin_sectors);
		return 0;
	}

	scratch = kvcalloc(FR_RECOVERY_GROUPS, sizeof(*scratch), GFP_KERNEL);
	if (!scratch)
		return -ENOMEM;
	fr->cache.valid_bits = fr->valid_bits;
	fr->cache.dirty_bits = fr->dirty_bits;
	r = fr_recover(&fr->cache, FR_RECOVER_APPLY, scratch,
		       FR_RECOVERY_GROUPS, &rep, &why);
	kvfree(scratch);
	if (r) {
		if (rep.corrupt_tags)
			DMERR("%s: %llu corrupt tags on PM, first at chunk %llu",
			      name, rep.corrupt_tags, rep.first_corrupt);
		DMERR("%s: recovery refused: %s", name, why);
		return r;
	}
	DMINFO("%s: recovered %llu valid chunks (%llu dirty) of %llu; rolled back %llu and completed %llu interrupted writes, dropped %llu superseded copies",
	       name, rep.valid, rep.dirty, g->nr_chunks,
	       rep.groups_rolled_back, rep.groups_rolled_forward,
	       rep.superseded_dropped);
	return 0;
}

/* Physical page ranges [a, a + na) and [b, b + nb) overlap. */
static bool fr_pfns_overlap(unsigned long a, unsigned long na,
			    unsigned long b, unsigned long nb)
{
	return a < b + nb && b < a + na;
}

/*
 * Does any page of a DAX-capable origin lie in [pfn, pfn + n)? Walked in
 * pieces: the origin may be a concatenation, and a piece with a known bad
 * block does not map at all (its pages are then asked one by one).
 */
static bool fr_origin_on_pfns(struct dm_dev *origin, unsigned long pfn,
			      unsigned long n)
{
	struct block_device *bdev = origin->bdev;
	pgoff_t pgoff = get_start_sect(bdev) >> PAGE_SECTORS_SHIFT;
	long left = bdev_nr_sectors(bdev) >> PAGE_SECTORS_SHIFT, got;
	bool hit = false;
	pfn_t p;
	int id;

	if (!origin->dax_dev)
		return false;
	id = dax_read_lock();
	while (left > 0 && !hit) {
		got = dax_direct_access(origin->dax_dev, pgoff,
					min_t(long, left, 512), DAX_ACCESS,
					NULL, &p);
		if (got <= 0)
			got = 1;
		else
			hit = fr_pfns_overlap(pfn_t_to_pfn(p), got, pfn, n);
		pgoff += got;
		left -= got;
		cond_resched();
	}
	dax_read_unlock(id);
	return hit;
}

/* Do the two targets share PM pages, or an origin, or use each other's? */
static const char *fr_conflict(struct dm_fr *fr, struct dm_fr *o)
{
	dev_t pm = fr->pm_dev->bdev->bd_dev, origin = fr->origin->bdev->bd_dev;
	dev_t opm = o->pm_dev->bdev->bd_dev, oorigin = o->origin->bdev->bd_dev;

	if (opm == pm || fr_pfns_overlap(fr->pm_pfn, fr->pm_pages,
					  o->pm_pfn, o->pm_pages))
		return "PM overlaps the PM of another dm-fr target";
	if (oorigin == pm || fr_origin_on_pfns(o->origin, fr->pm_pfn,
						fr->pm_pages))
		return "PM overlaps the origin of another dm-fr target";
	if (opm == origin || fr_origin_on_pfns(fr->origin, o->pm_pfn,
						o->pm_pages))
		return "Origin overlaps the PM of another dm-fr target";
	if (oorigin == origin)
		return "Origin is in use by another dm-fr target";
	return NULL;
}

/*
 * Register the target unless it conflicts with one already constructed:
 * of another device, or of this same table (two targets in one table are
 * live at once). The same device's other table is a reload.
 */
static int fr_claim_devices(struct dm_fr *fr, char **error)
{
	const char *why = NULL;
	struct dm_fr *o;

	if (fr_origin_on_pfns(fr->origin, fr->pm_pfn, fr->pm_pages)) {
		*error = "Origin and PM share pages";
		return -EINVAL;
	}
	fr->md = dm_table_get_md(fr->ti->table);
	mutex_lock(&fr_targets_lock);
	list_for_each_entry(o, &fr_targets, node) {
		if (o->md == fr->md && o->ti->table != fr->ti->table)
			continue;
		why = fr_conflict(fr, o);
		if (why)
			break;
	}
	if (!why)
		list_add(&fr->node, &fr_targets);
	mutex_unlock(&fr_targets_lock);
	if (why) {
		*error = (char *)why;
		return -EBUSY;
	}
	return 0;
}

static int fr_fill_setup(struct dm_fr *fr)
{
	size_t chunk_bytes = (size_t)fr->cache.geo.chunk_sectors << SECTOR_SHIFT;
	unsigned int i;

	/* One fill read carries the whole pool at most: one bio's vectors. */
	BUILD_BUG_ON(max(FR_FILL_POOL_BYTES, FR_FILL_MIN *
			 (FR_MAX_CHUNK_SECTORS << SECTOR_SHIFT)) / PAGE_SIZE >
		     BIO_MAX_VECS);
	fr->nr_fills = clamp_t(size_t, FR_FILL_POOL_BYTES / chunk_bytes,
			       FR_FILL_MIN, FR_FILL_MAX);
	fr->fill_order = get_order(chunk_bytes);
	fr->fills = kcalloc(fr->nr_fills, sizeof(*fr->fills), GFP_KERNEL);
	if (!fr->fills)
		return -ENOMEM;
	for (i = 0; i < fr->nr_fills; i++) {
		struct page *page = alloc_pages(GFP_KERNEL, fr->fill_order);

		if (!page)
			return -ENOMEM;
		fr->fills[i].page = page;
		fr->fills[i].data = page_address(page);
	}
	init_llist_head(&fr->fills_ready);
	INIT_WORK(&fr->fill_work, fr_fill_work);
	return 0;
}

static void fr_fill_teardown(struct dm_fr *fr)
{
	unsigned int i;

	if (!fr->fills)
		return;
	for (i = 0; i < fr->nr_fills; i++)
		if (fr->fills[i].page)
			__free_pages(fr->fills[i].page, fr->fill_order);
	kfree(fr->fills);
}

static void fr_free(struct dm_fr *fr)
{
	if (!list_empty(&fr->node)) {
		mutex_lock(&fr_targets_lock);
		list_del(&fr->node);
		mutex_unlock(&fr_targets_lock);
	}
	if (fr->wb_wq)
		fr_writeback_teardown(fr);
	if (fr->io_wq)
		destroy_workqueue(fr->io_wq);
	bioset_exit(&fr->bs);
	free_percpu(fr->stats);
	fr_fill_teardown(fr);
	kvfree(fr->stripes);
	kvfree(fr->valid_bits);
	kvfree(fr->dirty_bits);
	if (fr->pm_dev)
		dm_put_device(fr->ti, fr->pm_dev);
	if (fr->origin)
		dm_put_device(fr->ti, fr->origin);
	kfree(fr);
}

static int fr_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct dm_fr *fr;
	unsigned int i;
	int r;

	if (argc < 2) {
		ti->error = "Requires <origin dev> <pm dev> [<#opt args> <opt args>...]";
		return -EINVAL;
	}
	/*
	 * Even a clean load writes: recovery repairs and rewrites tags on the
	 * PM, reads fill it, writeback writes the origin. Refused rather than
	 * half honoured (docs/target-interface.md).
	 */
	if (!(dm_table_get_mode(ti->table) & FR_MODE_WRITE)) {
		ti->error = "Read-only tables are not supported (dm-fr writes the PM and the origin)";
		return -EROFS;
	}
	fr = kzalloc(sizeof(*fr), GFP_KERNEL);
	if (!fr) {
		ti->error = "Cannot allocate target context";
		return -ENOMEM;
	}
	fr->ti = ti;
	INIT_LIST_HEAD(&fr->node);
	fr->read_fill = true;
	fr->writeback_period_ms = FR_DEFAULT_PERIOD_MS;
	fr->writeback_defer_ms = FR_DEFAULT_DEFER_MS;
	fr->high_watermark = FR_DEFAULT_HIGH_WM;
	fr->low_watermark = FR_DEFAULT_LOW_WM;
	fr->writeback_jobs = FR_DEFAULT_JOBS;

	r = dm_get_device(ti, dm_shift_arg(&as), dm_table_get_mode(ti->table),
			  &fr->origin);
	if (r) {
		ti->error = "Origin device lookup failed";
		goto bad;
	}
	r = dm_get_device(ti, dm_shift_arg(&as), dm_table_get_mode(ti->table),
			  &fr->pm_dev);
	if (r) {
		ti->error = "PM device lookup failed";
		goto bad;
	}
	if (fr->pm_dev->bdev == fr->origin->bdev) {
		ti->error = "Origin and PM are the same device";
		r = -EINVAL;
		goto bad;
	}
	if (bdev_read_only(fr->origin->bdev) ||
	    bdev_read_only(fr->pm_dev->bdev)) {
		ti->error = bdev_read_only(fr->origin->bdev) ?
			    "Origin device is read-only" :
			    "PM device is read-only";
		r = -EROFS;
		goto bad;
	}
	r = parse_features(fr, &as, &ti->error);
	if (r)
		goto bad;
	if (as.argc) {
		ti->error = "Trailing arguments after the optional group";
		r = -EINVAL;
		goto bad;
	}
	if (ti->len > bdev_nr_sectors(fr->origin->bdev)) {
		ti->error = "Origin device is smaller than the target";
		r = -EINVAL;
		goto bad;
	}
	r = fr_map_pm(fr, &ti->error);
	if (r)
		goto bad;
	r = fr_claim_devices(fr, &ti->error);
	if (r)
		goto bad;

	r = fr->fresh ? fr_prepare_format(fr, &ti->error) :
			fr_prepare_recover(fr, &ti->error);
	if (r)
		goto bad;

	r = -ENOMEM;
	if (fr_alloc_bitmaps(fr, &fr->cache.geo)) {
		ti->error = "Cannot allocate chunk bitmaps";
		goto bad;
	}
	fr->stripes = kvcalloc(FR_NR_STRIPES, sizeof(*fr->stripes), GFP_KERNEL);
	fr->stats = alloc_percpu(struct fr_stats);
	if (!fr->stripes || !fr->stats) {
		ti->error = "Cannot allocate target state";
		goto bad;
	}
	for (i = 0; i < FR_NR_STRIPES; i++)
		mutex_init(&fr->stripes[i].lock);
	r = bioset_init(&fr->bs, BIO_POOL_SIZE, 0, BIOSET_NEED_BVECS);
	if (r) {
		ti->error = "Cannot allocate bioset";
		goto bad;
	}
	fr->io_wq = alloc_workqueue("dm-fr-io", WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!fr->io_wq) {
		ti->error = "Cannot allocate I/O workqueue";
		r = -ENOMEM;
		goto bad;
	}
	r = fr_fill_setup(fr);
	if (r) {
		ti->error = "Cannot allocate read fill buffers";
		goto bad;
	}
	r = fr_writeback_setup(fr);
	if (r) {
		ti->error = "Cannot set up writeback";
		goto bad;
	}

	r = dm_set_target_max_io_len(ti, (sector_t)fr->cache.geo.region_chunks <<
				     fr->cache.geo.chunk_shift);
	if (r) {
		ti->error = "Cannot set the maximum I/O size";
		goto bad;
	}
	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->per_io_data_size = sizeof(struct fr_io);
	ti->private = fr;
	return 0;

bad:
	fr_free(fr);
	return r;
}

static void fr_dtr(struct dm_target *ti)
{
	fr_free(ti->private);
}

/*
 * Writeback stops at its next batch boundary as soon as a suspend begins:
 * device-mapper waits for a running message (a flush) before postsuspend,
 * and a flush must not hold a suspend up for its whole length.
 */
static void fr_presuspend(struct dm_target *ti)
{
	struct dm_fr *fr = ti->private;

	WRITE_ONCE(fr->wb_stopped, true);
}

static void fr_presuspend_undo(struct dm_target *ti)
{
	fr_writeback_start(ti->private);
}

/* No origin write of cached data after this, and no deferred bio. */
static void fr_postsuspend(struct dm_target *ti)
{
	struct dm_fr *fr = ti->private;

	fr_writeback_stop(fr);
	flush_workqueue(fr->io_wq);
}

static int fr_preresume(struct dm_target *ti)
{
	struct dm_fr *fr = ti->private;
	int r;

	if (fr->pm_ready)
		return 0;
	r = fr_init_pm(fr);
	if (!r)
		fr->pm_ready = true;
	return r;
}

static void fr_resume(struct dm_target *ti)
{
	fr_writeback_start(ti->private);
}

static void fr_sum_stats(struct dm_fr *fr, struct fr_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		struct fr_stats *s = per_cpu_ptr(fr->stats, cpu);

		sum->read_hits += s->read_hits;
		sum->read_misses += s->read_misses;
		sum->write_hits += s->write_hits;
		sum->write_misses += s->write_misses;
		sum->forced_writebacks += s->forced_writebacks;
		sum->writeback_rounds += s->writeback_rounds;
		sum->chunks_written_back += s->chunks_written_back;
		sum->origin_errors += s->origin_errors;
		sum->pm_errors += s->pm_errors;
		sum->read_fills += s->read_fills;
	}
}

static void fr_status(struct dm_target *ti, status_type_t type,
		      unsigned int status_flags, char *result,
		      unsigned int maxlen)
{
	struct dm_fr *fr = ti->private;
	const struct fr_geometry *g = &fr->cache.geo;
	unsigned int sz = 0, n = 0;
	struct fr_stats s;

	switch (type) {
	case STATUSTYPE_INFO:
		fr_sum_stats(fr, &s);
		DMEMIT("%s %u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %u %u",
		       READ_ONCE(fr->degraded) ? "degraded" : "ok",
		       g->chunk_sectors, g->nr_chunks,
		       fr_count_valid(&fr->cache), fr_count_dirty(&fr->cache),
		       s.read_hits, s.read_misses, s.write_hits, s.write_misses,
		       s.forced_writebacks, s.writeback_rounds,
		       s.chunks_written_back, s.origin_errors, s.pm_errors,
		       s.read_fills, READ_ONCE(fr->cleaner) ? 1 : 0,
		       READ_ONCE(fr->wb_unreadable));
		break;
	case STATUSTYPE_TABLE:
		n += fr->has_uuid ? 2 : 0;
		n += fr->arg_origin_id[0] ? 2 : 0;
		n += fr->arg_chunk_size ? 2 : 0;
		n += fr->arg_region_size ? 2 : 0;
		n += fr->arg_stride ? 2 : 0;
		n += fr->writeback_period_ms != FR_DEFAULT_PERIOD_MS ? 2 : 0;
		n += fr->writeback_defer_ms != FR_DEFAULT_DEFER_MS ? 2 : 0;
		n += fr->high_watermark != FR_DEFAULT_HIGH_WM ? 2 : 0;
		n += fr->low_watermark != FR_DEFAULT_LOW_WM ? 2 : 0;
		n += fr->writeback_jobs != FR_DEFAULT_JOBS ? 2 : 0;
		n += fr->cleaner ? 1 : 0;
		n += fr->read_fill ? 0 : 1;
		DMEMIT("%s %s %u", fr->origin->name, fr->pm_dev->name, n);
		if (fr->has_uuid)
			DMEMIT(" uuid %16phN", fr->arg_uuid);
		if (fr->arg_origin_id[0])
			DMEMIT(" origin_id %s", fr->arg_origin_id);
		if (fr->arg_chunk_size)
			DMEMIT(" chunk_size %u", fr->arg_chunk_size);
		if (fr->arg_region_size)
			DMEMIT(" region_size %u", fr->arg_region_size);
		if (fr->arg_stride)
			DMEMIT(" stride %llu", fr->arg_stride);
		if (fr->writeback_period_ms != FR_DEFAULT_PERIOD_MS)
			DMEMIT(" writeback_period %u", fr->writeback_period_ms);
		if (fr->writeback_defer_ms != FR_DEFAULT_DEFER_MS)
			DMEMIT(" writeback_defer %u", fr->writeback_defer_ms);
		if (fr->high_watermark != FR_DEFAULT_HIGH_WM)
			DMEMIT(" high_watermark %u", fr->high_watermark);
		if (fr->low_watermark != FR_DEFAULT_LOW_WM)
			DMEMIT(" low_watermark %u", fr->low_watermark);
		if (fr->writeback_jobs != FR_DEFAULT_JOBS)
			DMEMIT(" writeback_jobs %u", fr->writeback_jobs);
		if (fr->cleaner)
			DMEMIT(" cleaner");
		if (!fr->read_fill)
			DMEMIT(" no_read_fill");
		break;
	case STATUSTYPE_IMA:
		*result = '\0';
		break;
	}
}

/* Messages: one handler per verb. */

static int msg_flush(struct dm_fr *fr, unsigned int argc, char **argv,
		     const char **why)
{
	int r;

	if (argc != 1) {
		*why = "flush takes no arguments";
		return -EINVAL;
	}
	r = fr_writeback_all(fr);
	if (r == -EBUSY)
		*why = "the device is suspended, or was suspended during the flush";
	else if (r == -EHWPOISON)
		*why = "the data of the dirty chunks left cannot be read from PM (status: unreadable)";
	else if (r)
		*why = "the origin failed a writeback";
	return r;
}

static int msg_cleaner(struct dm_fr *fr, unsigned int argc, char **argv,
		       const char **why)
{
	if (argc == 2 && !strcasecmp(argv[1], "on")) {
		WRITE_ONCE(fr->cleaner, true);
	} else if (argc == 2 && !strcasecmp(argv[1], "off")) {
		WRITE_ONCE(fr->cleaner, false);
	} else {
		*why = "usage: cleaner on|off";
		return -EINVAL;
	}
	fr_writeback_kick(fr);
	return 0;
}

static int msg_clear_stats(struct dm_fr *fr, unsigned int argc, char **argv,
			   const char **why)
{
	int cpu;

	if (argc != 1) {
		*why = "clear_stats takes no arguments";
		return -EINVAL;
	}
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(fr->stats, cpu), 0, sizeof(struct fr_stats));
	return 0;
}

static int msg_set(struct dm_fr *fr, unsigned int argc, char **argv,
		   const char **why)
{
	u32 v;

	if (argc != 3) {
		*why = "usage: set <writeback_period|writeback_defer|high_watermark|low_watermark|writeback_jobs> <value>";
		return -EINVAL;
	}
	if (!strcasecmp(argv[1], "writeback_period")) {
		if (parse_u32(argv[2], 0, FR_MAX_PERIOD_MS, &v)) {
			*why = "writeback_period is 0..3600000 ms";
			return -EINVAL;
		}
		WRITE_ONCE(fr->writeback_period_ms, v);
		fr_writeback_kick(fr);
	} else if (!strcasecmp(argv[1], "writeback_defer")) {
		if (parse_u32(argv[2], 0, FR_MAX_PERIOD_MS, &v)) {
			*why = "writeback_defer is 0..3600000 ms";
			return -EINVAL;
		}
		WRITE_ONCE(fr->writeback_defer_ms, v);
		fr_writeback_kick(fr);
	} else if (!strcasecmp(argv[1], "high_watermark")) {
		if (parse_u32(argv[2], 0, 100, &v) || v < fr->low_watermark) {
			*why = "high_watermark is 0..100 and not below low_watermark";
			return -EINVAL;
		}
		WRITE_ONCE(fr->high_watermark, v);
	} else if (!strcasecmp(argv[1], "low_watermark")) {
		if (parse_u32(argv[2], 0, 100, &v) || v > fr->high_watermark) {
			*why = "low_watermark is 0..100 and not above high_watermark";
			return -EINVAL;
		}
		WRITE_ONCE(fr->low_watermark, v);
	} else if (!strcasecmp(argv[1], "writeback_jobs")) {
		if (parse_u32(argv[2], 1, FR_MAX_JOBS, &v)) {
			*why = "writeback_jobs is 1..1024";
			return -EINVAL;
		}
		if (fr_writeback_set_jobs(fr, v)) {
			*why = "cannot allocate the writeback buffers";
			return -ENOMEM;
		}
	} else {
		*why = "unknown setting";
		return -EINVAL;
	}
	return 0;
}

static const struct {
	const char *verb;
	int (*handler)(struct dm_fr *fr, unsigned int argc, char **argv,
		       const char **why);
} fr_messages[] = {
	{ "flush", msg_flush },
	{ "cleaner", msg_cleaner },
	{ "clear_stats", msg_clear_stats },
	{ "set", msg_set },
};

static int fr_message(struct dm_target *ti, unsigned int argc, char **argv,
		      char *result, unsigned int maxlen)
{
	struct dm_fr *fr = ti->private;
	const char *why = NULL;
	unsigned int i;
	int r;

	if (!argc)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(fr_messages); i++) {
		if (strcasecmp(argv[0], fr_messages[i].verb))
			continue;
		r = fr_messages[i].handler(fr, argc, argv, &why);
		if (r == -EINVAL)
			DMWARN("%s: invalid arguments for message \"%s\": %s",
			       dm_table_device_name(ti->table), argv[0],
			       why ? why : "refused");
		else if (r)
			DMWARN("%s: message \"%s\" failed: %s",
			       dm_table_device_name(ti->table), argv[0],
			       why ? why : "error");
		return r;
	}
	DMWARN("%s: unrecognised message \"%s\"",
	       dm_table_device_name(ti->table), argv[0]);
	return -EINVAL;
}

static int fr_iterate_devices(struct dm_target *ti,
			      iterate_devices_callout_fn fn, void *data)
{
	struct dm_fr *fr = ti->private;

	return fn(ti, fr->origin, 0, ti->len, data);
}

static void fr_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct dm_fr *fr = ti->private;
	unsigned int chunk_bytes = fr->cache.geo.chunk_sectors << SECTOR_SHIFT;

	/* Only whole chunks can be dropped from PM. */
	if (limits->discard_granularity < chunk_bytes)
		limits->discard_granularity = chunk_bytes;
}

static struct target_type fr_target = {
	.name = "fr",
	.version = {1, 3, 0},
	.module = THIS_MODULE,
	.ctr = fr_ctr,
	.dtr = fr_dtr,
	.map = fr_map,
	.presuspend = fr_presuspend,
	.presuspend_undo = fr_presuspend_undo,
	.postsuspend = fr_postsuspend,
	.preresume = fr_preresume,
	.resume = fr_resume,
	.status = fr_status,
	.message = fr_message,
	.iterate_devices = fr_iterate_devices,
	.io_hints = fr_io_hints,
};

static int __init dm_fr_init(void)
{
	return dm_register_target(&fr_target);
}

static void __exit dm_fr_exit(void)
{
	dm_unregister_target(&fr_target);
}

module_init(dm_fr_init);
module_exit(dm_fr_exit);

MODULE_DESCRIPTION(DM_NAME " persistent-memory first responder target");
MODULE_LICENSE("GPL");
