// SPDX-License-Identifier: GPL-2.0-only
/*
 * A writeback stage: the context of the core's fr_wb_ops (fr_stage_ops) for
 * one batch of the worker or one victim write (fr-writeback.c).
 *
 * The origin writes are sent straight from the PM pages, with no copy in
 * DRAM: the core pins each chunk before it stages it (c->pinned, the pin
 * rule in core/fr-wb.c) and stores into no pinned chunk (a write that would
 * waits: FR_WRITE_PINNED), so the origin gets exactly the version whose tag
 * is cleaned. Each chunk is first read machine-check safe into a page of
 * scratch: a chunk whose PM data cannot be read is skipped and stays dirty
 * (pm_errors, and the status field unreadable) instead of sending poisoned
 * data, and the batch goes on. No origin I/O is issued under a slot lock:
 * once FR_STAGE_SUBMIT_CHUNKS chunks are staged, the core's send op (called
 * between chunks) sends them, and the batch stages the next ones while they
 * are in flight; submit sends the rest and waits for all.
 *
 * The core unpins once the origin writes are done (or, when a stage failed,
 * once the wait op has waited for them); fr_stage_release then wakes
 * whoever waits for a pin (wb.pin_wait).
 */
#include <linux/blkdev.h>
#include <linux/sort.h>
#include <linux/slab.h>

#include "dm-fr.h"
#include "fr-stage.h"

/* Staged chunks sent to the origin at once, as the batch goes on. */
#define FR_STAGE_SUBMIT_CHUNKS	64

/* Data staged for the origin: a run of sectors on PM. */
struct fr_extent {
	u64 sector;
	const u8 *pm;
	u32 nr_sectors;
};

/* The origin writes of a stage in flight. */
struct fr_submit {
	atomic_t pending;	/* bios in flight, plus one while sending */
	struct completion done;
	blk_status_t status;
};

/*
 * The fr_wb_ops context: the extents staged and not yet sent (at most
 * FR_STAGE_SUBMIT_CHUNKS chunks and the one being staged), and one page to
 * read PM into, machine-check safe.
 */
struct fr_stage {
	struct dm_fr *fr;
	struct fr_extent *ext;
	u32 nr_ext, max_ext;
	u32 unsent_chunks;	/* chunks whose extents are not sent yet */
	void *scratch;		/* PAGE_SIZE: the check read */
	struct fr_submit sub;
	bool sending;		/* sub.pending holds the sender's count */
	int error;
	/* Where the chunk being staged began, to drop it if PM fails. */
	u64 chunk;
	u32 chunk_ext, chunk_last_sectors;
	/* Chunks whose PM data could not be read. */
	u32 unreadable;
	bool for_victim;	/* a victim write's: no wb.lock */
};

static void stage_assert_held(struct fr_stage *st)
{
	if (!st->for_victim)
		lockdep_assert_held(&st->fr->wb.lock);
}

static int stage_wait_status(struct fr_stage *st);

/*
 * Once the core returned from a batch or a victim write: no origin write of
 * it is in flight any more, and the core has unpinned its chunks, so
 * writers waiting to store into them, or to write their slots back, may go
 * on.
 */
void fr_stage_release(struct fr_stage *st)
{
	struct dm_fr *fr = st->fr;

	/* The core waited for every write it started: nothing is left. */
	WARN_ON_ONCE(st->sending);
	st->nr_ext = 0;
	st->unsent_chunks = 0;
	/*
	 * Whatever the core pinned is unpinned (a chunk with nothing staged
	 * too); the slot locks ordered its clears before this wake-up.
	 */
	wake_up_all(&fr->wb.pin_wait);
}

static void stage_endio(struct bio *bio)
{
	struct fr_submit *sub = bio->bi_private;

	if (bio->bi_status)
		sub->status = bio->bi_status;
	bio_put(bio);
	if (atomic_dec_and_test(&sub->pending))
		complete(&sub->done);
}

static int extent_cmp(const void *a, const void *b)
{
	const struct fr_extent *x = a, *y = b;

	return x->sector < y->sector ? -1 : x->sector > y->sector;
}

/*
 * Send the staged extents to the origin, sorted and merged, from the PM
 * pages (pinned: they do not change until the core unpins); do not wait.
 * The PM lies in the linear mapping with struct pages (fr-pmdev.c).
 */
static void stage_send(struct fr_stage *st)
{
	struct fr_submit *sub = &st->sub;
	struct bio *bio = NULL;
	struct blk_plug plug;
	u32 i;

	if (!st->nr_ext)
		return;
	if (!st->sending) {
		atomic_set(&sub->pending, 1);
		reinit_completion(&sub->done);
		sub->status = BLK_STS_OK;
		st->sending = true;
	}
	sort(st->ext, st->nr_ext, sizeof(*st->ext), extent_cmp, NULL);
	blk_start_plug(&plug);
	for (i = 0; i < st->nr_ext; i++) {
		const struct fr_extent *e = &st->ext[i];
		const u8 *p = e->pm;
		size_t left = (size_t)e->nr_sectors << SECTOR_SHIFT;
		u64 sector = e->sector;

		while (left) {
			size_t n = min_t(size_t, left,
					 PAGE_SIZE - offset_in_page(p));

			if (bio && (bio_end_sector(bio) != sector ||
				    bio_add_page(bio, virt_to_page(p), n,
						 offset_in_page(p)) != n)) {
				fr_origin_submit(bio);
				bio = NULL;
			}
			if (!bio) {
				bio = fr_origin_bio(st->fr, REQ_OP_WRITE, sector,
						    BIO_MAX_VECS, stage_endio,
						    sub);
				atomic_inc(&sub->pending);
				__bio_add_page(bio, virt_to_page(p), n,
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
	st->nr_ext = 0;
	st->unsent_chunks = 0;
}

/* Wait for every origin write sent: 0, or -EIO if any failed. */
static int stage_wait_status(struct fr_stage *st)
{
	struct fr_submit *sub = &st->sub;

	if (!st->sending)
		return 0;
	st->sending = false;
	if (!atomic_dec_and_test(&sub->pending))
		wait_for_completion_io(&sub->done);
	return sub->status ? -EIO : 0;
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

/* Between chunks, no slot lock held: send full groups now. */
static void stage_send_ready(void *ctx)
{
	struct fr_stage *st = ctx;

	if (st->unsent_chunks >= FR_STAGE_SUBMIT_CHUNKS && !st->error)
		stage_send(st);
}

/* Forget what was staged of the current chunk (its PM data failed). */
static void stage_drop_chunk(struct fr_stage *st)
{
	st->nr_ext = st->chunk_ext;
	if (st->nr_ext)
		st->ext[st->nr_ext - 1].nr_sectors = st->chunk_last_sectors;
}

/*
 * Read PM data machine-check safe, a page at a time, and throw it away: an
 * origin write from PM pages would carry poison where this fails.
 */
static int stage_check_read(struct fr_stage *st, const u8 *pm, size_t bytes)
{
	while (bytes) {
		size_t n = min_t(size_t, bytes, PAGE_SIZE);

		if (fr_pm_read(st->scratch, pm, n))
			return -EHWPOISON;
		pm += n;
		bytes -= n;
	}
	return 0;
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
		st->chunk = chunk;
		st->chunk_ext = st->nr_ext;
		st->chunk_last_sectors = st->nr_ext ?
					 st->ext[st->nr_ext - 1].nr_sectors : 0;
		st->unsent_chunks++;
	}
	/* Sized for the unsent chunks and one more (stage_send_ready sends). */
	if (WARN_ON_ONCE(st->nr_ext == st->max_ext)) {
		st->error = -EOVERFLOW;
		return st->error;
	}
	if (stage_check_read(st, pm_src, bytes)) {
		/* The chunk stays dirty on PM; the batch goes on. */
		stage_drop_chunk(st);
		st->unsent_chunks--;
		st->unreadable++;
		fr_stat_add(fr, pm_errors, 1);
		return -EHWPOISON;
	}
	last = st->nr_ext ? &st->ext[st->nr_ext - 1] : NULL;
	if (last && last->sector + last->nr_sectors == sector &&
	    last->pm + ((size_t)last->nr_sectors << SECTOR_SHIFT) == pm_src) {
		last->nr_sectors += nr_sectors;
	} else {
		st->ext[st->nr_ext].sector = sector;
		st->ext[st->nr_ext].nr_sectors = nr_sectors;
		st->ext[st->nr_ext].pm = pm_src;
		st->nr_ext++;
	}
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
	int r;

	stage_assert_held(st);
	if (!st->error)
		stage_send(st);
	r = stage_wait_status(st);
	if (!st->error)
		st->error = r;
	return st->error;
}

/* A stage failed: wait for what stage_send_ready sent; send no more. */
static void stage_wait(void *ctx)
{
	struct fr_stage *st = ctx;

	stage_assert_held(st);
	stage_wait_status(st);
}

static int stage_flush(void *ctx)
{
	struct fr_stage *st = ctx;

	stage_assert_held(st);
	return fr_origin_flush(st->fr);
}

const struct fr_wb_ops fr_stage_ops = {
	.lock = stage_lock,
	.unlock = stage_unlock,
	.stage = stage_data,
	.send = stage_send_ready,
	.wait = stage_wait,
	.submit = stage_submit,
	.flush = stage_flush,
	.skip = stage_skip,
};

void fr_stage_reset(struct fr_stage *st)
{
	st->nr_ext = 0;
	st->unsent_chunks = 0;
	st->error = 0;
	st->chunk = U64_MAX;
	st->unreadable = 0;
	WARN_ON_ONCE(st->sending);
}

void fr_stage_destroy(struct fr_stage *st)
{
	if (!st)
		return;
	kfree(st->scratch);
	kvfree(st->ext);
	kfree(st);
}

/*
 * A stage for up to chunks chunks: the extents of those not sent yet. No
 * data: it goes to the origin from PM.
 */
struct fr_stage *fr_stage_create(struct dm_fr *fr, u32 chunks,
				enum fr_stage_owner owner)
{
	u32 chunk_sectors = fr->cache.geo.chunk_sectors;
	u32 unsent = min_t(u32, chunks, FR_STAGE_SUBMIT_CHUNKS) + 1;
	struct fr_stage *st = kzalloc(sizeof(*st), GFP_KERNEL);

	if (!st)
		return NULL;
	st->fr = fr;
	st->for_victim = owner == FR_STAGE_VICTIM;
	init_completion(&st->sub.done);
	/* A chunk stages at most one extent per two sectors. */
	st->max_ext = unsent * DIV_ROUND_UP(chunk_sectors, 2);
	st->scratch = kmalloc(PAGE_SIZE, GFP_KERNEL);
	st->ext = kvmalloc_array(st->max_ext, sizeof(*st->ext), GFP_KERNEL);
	if (!st->scratch || !st->ext) {
		fr_stage_destroy(st);
		return NULL;
	}
	return st;
}

u32 fr_stage_unreadable(const struct fr_stage *st)
{
	return st->unreadable;
}
