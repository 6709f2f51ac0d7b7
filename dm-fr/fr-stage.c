// SPDX-License-Identifier: GPL-2.0-only
/*
 * A writeback stage: the context of the core's fr_wb_ops (fr_stage_ops) for
 * one batch of the worker or one victim write (fr-writeback.c).
 *
 * Data is copied off PM (machine-check safe) into the stage's buffer under
 * the slot lock, so the origin gets exactly the version whose tag is
 * cleaned. The buffer holds a whole batch, so no origin I/O happens under a
 * slot lock. A chunk whose PM data cannot be read is skipped and stays
 * dirty (pm_errors, and the status field unreadable); the batch goes on.
 *
 * Two origin writes of one slot's data must never be in flight at once
 * (they land in any order, and the older could win: docs/protocol.md,
 * "Required serialization"), so a stage marks each slot it stages a chunk
 * of in fr->wb_busy, under the slot lock, and keeps the mark until that data
 * is flushed and its dirty flag cleared (fr_stage_release). A stage that
 * finds another's mark answers -EBUSY: the core leaves the chunk dirty.
 */
#include <linux/blkdev.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>

#include "dm-fr.h"
#include "fr-stage.h"

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
	/* Slots this stage marked in fr->wb_busy, cleared by fr_stage_release. */
	u64 *marked;
	u32 nr_marked, max_marked;
	bool chunk_marked;	/* the chunk being staged made the last mark */
	bool for_victim;	/* a victim write's: no wb_lock */
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
void fr_stage_release(struct fr_stage *st)
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

const struct fr_wb_ops fr_stage_ops = {
	.lock = stage_lock,
	.unlock = stage_unlock,
	.stage = stage_data,
	.submit = stage_submit,
	.flush = stage_flush,
	.skip = stage_skip,
};

void fr_stage_reset(struct fr_stage *st)
{
	st->buf_used = 0;
	st->nr_ext = 0;
	st->error = 0;
	st->chunk = U64_MAX;
	st->unreadable = 0;
	WARN_ON_ONCE(st->nr_marked);
}

void fr_stage_free(struct fr_stage *st)
{
	if (!st)
		return;
	vfree(st->buf);
	kvfree(st->ext);
	kvfree(st->marked);
	kfree(st);
}

/* A stage for up to chunks chunks: their data, extents and slot marks. */
struct fr_stage *fr_stage_alloc(struct dm_fr *fr, u32 chunks,
				enum fr_stage_owner owner)
{
	u32 chunk_sectors = fr->cache.geo.chunk_sectors;
	struct fr_stage *st = kzalloc(sizeof(*st), GFP_KERNEL);

	if (!st)
		return NULL;
	st->fr = fr;
	st->for_victim = owner == FR_STAGE_VICTIM;
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

u32 fr_stage_unreadable(const struct fr_stage *st)
{
	return st->unreadable;
}
