// SPDX-License-Identifier: GPL-2.0-only
/*
 * A writeback stage: the context of the core's fr_wb_ops (fr_stage_ops) for
 * one batch of the worker or one victim write (fr-writeback.c).
 *
 * Each chunk staged is copied, machine-check safe, from PM into a buffer of
 * DRAM, and the origin writes are sent from there: PM is read once per
 * chunk written back, and a chunk whose PM data cannot be read is skipped
 * and stays dirty (pm_errors, and the status field unreadable) instead of
 * sending poisoned data, and the batch goes on. Since the origin never reads
 * PM, a write may store into a chunk in flight (c->stage_copies): the
 * core's clear then sees it rewritten and leaves it dirty, and the pins only
 * keep two origin writes of one slot apart.
 *
 * The buffers are two fixed pools of the target's: two of 128 KiB for the
 * worker's batches, four of 32 KiB shared by the victim writes. A stage
 * takes one before the core stages into it (reset, or the
 * send op between chunks: never under a slot lock), sends it once it has no
 * room for another chunk and takes the next, so staging goes on while the
 * origin writes of the last buffer are in flight; a buffer goes back to the
 * pool as its last origin write completes. A stage holds at most one
 * buffer it has not sent, and never waits for the pool while it does, so
 * the buffers in use always come back. No origin I/O is issued under a slot
 * lock; submit sends the rest and waits for all.
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

/*
 * The pools: 384 KiB of DRAM whatever the PM's size (the DRAM per GiB of PM
 * stays a bitmap's). A batch fills one buffer while the other is on its
 * way; 128 KiB sorted at once keep the origin's requests large where the
 * batch takes two streams at once (every chunk of full slots, whose
 * keys lie apart): 32 KiB buffers sent sequential overflow 15 KiB requests.
 * A victim write is one chunk, or a write's victims, which lie side by side
 * on the origin and merge under its plug: four small buffers, so that
 * several run at once. A buffer holds a chunk of the largest size (32 KiB).
 */
static const struct {
	u32 bytes;
	unsigned int nr;
} fr_pool_size[] = {
	[FR_STAGE_BATCH] = { 128 << 10, 2 },
	[FR_STAGE_VICTIM] = { 32 << 10, 4 },
};

/* Data staged for the origin: a run of sectors in the stage's buffer. */
struct fr_extent {
	u64 sector;
	u32 offset;		/* bytes into the buffer */
	u32 nr_sectors;
};

/* The origin writes of a stage in flight. */
struct fr_submit {
	atomic_t pending;	/* bios in flight, plus one while sending */
	struct completion done;
	blk_status_t status;
};

/* A buffer of the pool, and the origin writes that read it. */
struct fr_buf {
	struct list_head node;		/* in the pool's free list */
	struct fr_bufs *pool;
	struct fr_submit *sub;		/* the stage that sent it */
	atomic_t pending;		/* bios in flight, plus one while sending */
	u32 used;			/* bytes staged into it */
	u8 *data;			/* pool->bytes, kmalloc'd */
};

struct fr_bufs {
	spinlock_t lock;		/* free; taken in bio completion */
	struct list_head free;
	wait_queue_head_t wait;		/* a buffer came back */
	u32 bytes;			/* of each buffer */
	unsigned int nr;
	struct fr_buf buf[];
};

/*
 * The fr_wb_ops context: the buffer being filled and its extents not yet
 * sent.
 */
struct fr_stage {
	struct dm_fr *fr;
	struct fr_bufs *pool;		/* its owner's (fr->wb.bufs) */
	struct fr_buf *buf;		/* being filled; NULL between batches */
	struct fr_extent *ext;
	u32 nr_ext, max_ext;
	struct fr_submit sub;
	bool sending;		/* sub.pending holds the sender's count */
	int error;
	/* Where the chunk being staged began, to drop it if PM fails. */
	u64 chunk;
	u32 chunk_ext, chunk_last_sectors, chunk_used;
	/* Chunks whose PM data could not be read. */
	u32 unreadable;
	bool for_victim;	/* a victim write's: no wb.lock */
};

static void stage_assert_held(struct fr_stage *st)
{
	if (!st->for_victim)
		lockdep_assert_held(&st->fr->wb.lock);
}

static struct fr_buf *buf_take(struct fr_bufs *pool)
{
	struct fr_buf *buf;

	spin_lock_irq(&pool->lock);
	buf = list_first_entry_or_null(&pool->free, struct fr_buf, node);
	if (buf)
		list_del(&buf->node);
	spin_unlock_irq(&pool->lock);
	return buf;
}

/*
 * A free buffer, waiting for one to come back if none is: the caller holds
 * no slot lock and no buffer it has not sent, so every buffer in use is on
 * its way to the origin or with a stage that will send it.
 */
static struct fr_buf *buf_get(struct fr_bufs *pool)
{
	struct fr_buf *buf;

	wait_event(pool->wait, (buf = buf_take(pool)) != NULL);
	buf->used = 0;
	return buf;
}

/* From bio completion (any context) too. */
static void buf_put(struct fr_buf *buf)
{
	struct fr_bufs *pool = buf->pool;
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	list_add(&buf->node, &pool->free);
	spin_unlock_irqrestore(&pool->lock, flags);
	wake_up(&pool->wait);
}

static int stage_wait_status(struct fr_stage *st);

/*
 * Once the core returned from a batch or a victim write: no origin write of
 * it is in flight any more, and the core has unpinned its chunks, so
 * writers waiting to write their slots back may go on.
 */
void fr_stage_release(struct fr_stage *st)
{
	struct dm_fr *fr = st->fr;

	/* The core waited for every write it started: nothing is left. */
	WARN_ON_ONCE(st->sending);
	st->nr_ext = 0;
	if (st->buf) {
		buf_put(st->buf);
		st->buf = NULL;
	}
	/*
	 * Whatever the core pinned is unpinned (a chunk with nothing staged
	 * too); the slot locks ordered its clears before this wake-up.
	 * Writes around waiting for these slots are asked again.
	 */
	wake_up_all(&fr->wb.pin_wait);
	fr_admit_kick(fr);
}

static void stage_endio(struct bio *bio)
{
	struct fr_buf *buf = bio->bi_private;
	struct fr_submit *sub = buf->sub;

	if (bio->bi_status)
		sub->status = bio->bi_status;
	bio_put(bio);
	/* The buffer first: once sub is done, the stage may take it again. */
	if (atomic_dec_and_test(&buf->pending))
		buf_put(buf);
	if (atomic_dec_and_test(&sub->pending))
		complete(&sub->done);
}

static int extent_cmp(const void *a, const void *b)
{
	const struct fr_extent *x = a, *y = b;

	return x->sector < y->sector ? -1 : x->sector > y->sector;
}

/*
 * Send the stage's buffer to the origin, its extents sorted and merged; do
 * not wait. The buffer goes back to the pool when its last write is done.
 */
static void stage_send(struct fr_stage *st)
{
	struct fr_submit *sub = &st->sub;
	struct fr_buf *buf = st->buf;
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
	buf->sub = sub;
	atomic_set(&buf->pending, 1);
	sort(st->ext, st->nr_ext, sizeof(*st->ext), extent_cmp, NULL);
	blk_start_plug(&plug);
	for (i = 0; i < st->nr_ext; i++) {
		const struct fr_extent *e = &st->ext[i];
		const u8 *p = buf->data + e->offset;
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
						    buf);
				atomic_inc(&sub->pending);
				atomic_inc(&buf->pending);
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
	st->buf = NULL;
	if (atomic_dec_and_test(&buf->pending))
		buf_put(buf);
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

/*
 * Between chunks, no slot lock held: once the buffer has no room for
 * another chunk, send it and take the next (this may wait for one).
 */
static void stage_send_ready(void *ctx)
{
	struct fr_stage *st = ctx;
	u32 chunk_bytes = st->fr->cache.geo.chunk_sectors << SECTOR_SHIFT;

	if (st->error || st->buf->used + chunk_bytes <= st->pool->bytes)
		return;
	stage_send(st);
	st->buf = buf_get(st->pool);
}

/* Forget what was staged of the current chunk (its PM data failed). */
static void stage_drop_chunk(struct fr_stage *st)
{
	st->nr_ext = st->chunk_ext;
	if (st->nr_ext)
		st->ext[st->nr_ext - 1].nr_sectors = st->chunk_last_sectors;
	st->buf->used = st->chunk_used;
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
	struct fr_buf *buf = st->buf;
	struct fr_extent *last;

	stage_assert_held(st);
	fr_assert_slot_locked(fr, fr_slot_of_pchunk(&fr->cache.geo,
						     to_pchunk(chunk)));
	if (st->error)
		return st->error;
	if (chunk != st->chunk) {
		/* A chunk's first call: nothing of it is staged yet. */
		st->chunk = chunk;
		st->chunk_ext = st->nr_ext;
		st->chunk_last_sectors = st->nr_ext ?
					 st->ext[st->nr_ext - 1].nr_sectors : 0;
		st->chunk_used = buf->used;
	}
	/* A buffer has room for a whole chunk (stage_send_ready sends). */
	if (WARN_ON_ONCE(st->nr_ext == st->max_ext ||
			 buf->used + bytes > st->pool->bytes)) {
		st->error = -EOVERFLOW;
		return st->error;
	}
	if (fr_pm_read(buf->data + buf->used, pm_src, bytes)) {
		/* The chunk stays dirty on PM; the batch goes on. */
		stage_drop_chunk(st);
		st->unreadable++;
		fr_stat_add(fr, pm_errors, 1);
		return -EHWPOISON;
	}
	last = st->nr_ext ? &st->ext[st->nr_ext - 1] : NULL;
	if (last && last->sector + last->nr_sectors == sector &&
	    last->offset + ((u32)last->nr_sectors << SECTOR_SHIFT) == buf->used) {
		last->nr_sectors += nr_sectors;
	} else {
		st->ext[st->nr_ext].sector = sector;
		st->ext[st->nr_ext].nr_sectors = nr_sectors;
		st->ext[st->nr_ext].offset = buf->used;
		st->nr_ext++;
	}
	buf->used += bytes;
	return 0;
}

/* A dirty chunk on known bad PM (struct fr_bad): unreadable, not tried. */
static void stage_skip(void *ctx, fr_pchunk_t p)
{
	struct fr_stage *st = ctx;

	stage_assert_held(st);
	fr_assert_slot_locked(st->fr,
			      fr_slot_of_pchunk(&st->fr->cache.geo, p));
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

/* Before a batch or a victim write (no slot lock held): may wait for a buffer. */
void fr_stage_reset(struct fr_stage *st)
{
	WARN_ON_ONCE(st->sending || st->buf);
	st->nr_ext = 0;
	st->error = 0;
	st->chunk = U64_MAX;
	st->unreadable = 0;
	st->buf = buf_get(st->pool);
}

void fr_stage_destroy(struct fr_stage *st)
{
	if (!st)
		return;
	kvfree(st->ext);
	kfree(st);
}

/* A stage: the extents of one buffer (its data is the pool's). */
struct fr_stage *fr_stage_create(struct dm_fr *fr, enum fr_stage_owner owner)
{
	struct fr_stage *st = kzalloc(sizeof(*st), GFP_KERNEL);

	if (!st)
		return NULL;
	st->fr = fr;
	st->pool = fr->wb.bufs[owner];
	st->for_victim = owner == FR_STAGE_VICTIM;
	init_completion(&st->sub.done);
	/* An extent holds at least one sector of the buffer. */
	st->max_ext = st->pool->bytes >> SECTOR_SHIFT;
	st->ext = kvmalloc_array(st->max_ext, sizeof(*st->ext), GFP_KERNEL);
	if (!st->ext) {
		fr_stage_destroy(st);
		return NULL;
	}
	return st;
}

u32 fr_stage_unreadable(const struct fr_stage *st)
{
	return st->unreadable;
}

void fr_stage_pool_destroy(struct fr_bufs *pool)
{
	unsigned int i;

	if (!pool)
		return;
	for (i = 0; i < pool->nr; i++)
		kfree(pool->buf[i].data);
	kfree(pool);
}

/*
 * The target's buffers. kmalloc: they are written to the origin by page
 * (virt_to_page), and counted in the slab like the rest of the target.
 */
struct fr_bufs *fr_stage_pool_create(enum fr_stage_owner owner)
{
	unsigned int i, nr = fr_pool_size[owner].nr;
	struct fr_bufs *pool = kzalloc(struct_size(pool, buf, nr), GFP_KERNEL);

	if (!pool)
		return NULL;
	/* A buffer holds a whole chunk of the largest size. */
	BUILD_BUG_ON((FR_MAX_CHUNK_SECTORS << SECTOR_SHIFT) > (32 << 10));
	pool->bytes = fr_pool_size[owner].bytes;
	pool->nr = nr;
	spin_lock_init(&pool->lock);
	INIT_LIST_HEAD(&pool->free);
	init_waitqueue_head(&pool->wait);
	for (i = 0; i < nr; i++) {
		struct fr_buf *buf = &pool->buf[i];

		buf->pool = pool;
		buf->data = kmalloc(pool->bytes, GFP_KERNEL);
		if (!buf->data) {
			fr_stage_pool_destroy(pool);
			return NULL;
		}
		list_add(&buf->node, &pool->free);
	}
	return pool;
}
