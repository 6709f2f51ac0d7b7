// SPDX-License-Identifier: GPL-2.0-only
/*
 * The read fill: a read miss of whole chunks is read by the target into
 * buffers of its own (a fixed pool), copied to the reader, and installed on
 * PM by a worker afterwards, unless the chunk's stripe changed in between
 * (its epoch moved, or a discard or write-through bypassed the cache: see
 * the epoch rule in fr-stripe.h).
 */
#include <linux/blkdev.h>
#include <linux/slab.h>

#include "dm-fr.h"

/* Read fill: chunks in flight between a read's completion and their install. */
#define FR_FILL_POOL_BYTES	(128 << 10)
#define FR_FILL_MIN		4
#define FR_FILL_MAX		BITS_PER_LONG
/* What a fill read keeps of the reader's flags. */
#define FR_READ_FLAGS		(REQ_SYNC | REQ_META | REQ_PRIO | REQ_RAHEAD)

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
	struct fr_stamp stamp;		/* its stripe at map: fr-stripe.h */
	struct page *page;		/* 2^order pages, chunk-sized */
	void *data;
};

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
u32 fr_fill_plan(struct dm_fr *fr, struct bio *bio, struct fr_io *io)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 sector = bio->bi_iter.bi_sector, end = bio_end_sector(bio);
	struct fr_fill **tail = &io->fills;
	u64 first, last, k, run_end = sector;

	fr_bio_chunks(fr, bio, &first, &last);
	fr_assert_range_locked(fr, first, last);
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
		fr_stamp_take(fr, fr_slot_of(g, key), &f->stamp);
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
void fr_fill_read(struct dm_fr *fr, struct bio *bio, struct fr_io *io)
{
	const struct fr_geometry *g = &fr->cache.geo;
	unsigned short nr_vecs = 0;
	struct fr_fill *f;
	struct bio *fbio;

	for (f = io->fills; f; f = f->next)
		nr_vecs += DIV_ROUND_UP(hweight64(fr_chunk_mask(g, f->key)) <<
					SECTOR_SHIFT, PAGE_SIZE);
	fbio = fr_origin_bio(fr, REQ_OP_READ | (bio->bi_opf & FR_READ_FLAGS),
			     bio->bi_iter.bi_sector, nr_vecs,
			     fr_fill_read_done, io);
	for (f = io->fills; f; f = f->next) {
		size_t left = hweight64(fr_chunk_mask(g, f->key)) << SECTOR_SHIFT;
		struct page *page = f->page;

		while (left) {
			size_t n = min_t(size_t, left, PAGE_SIZE);

			__bio_add_page(fbio, page++, n, 0);
			left -= n;
		}
	}
	io->fill_iter = fbio->bi_iter;
	fr_origin_submit(fbio);
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
		fr_slot_t slot = fr_slot_of(&fr->cache.geo, f->key);
		int r = 0;

		/*
		 * A fill does not bump the epoch: clean data equal to the
		 * origin's makes no other fill in flight stale. It counts in
		 * fills, for mixed reads: it may have evicted a clean copy.
		 */
		fr_lock_slot(fr, slot);
		if (fr_stamp_current(fr, slot, &f->stamp) &&
		    !READ_ONCE(fr->cleaner))
			r = fr_fill(&fr->cache, f->key, fr_fill_payload, f->data);
		fr_unlock_slot(fr, slot, r > 0 ? FR_STRIPE_FILLED :
				   FR_STRIPE_KEPT);
		if (r < 0)
			fr_stat_add(fr, pm_errors, 1);
		else
			filled += r;
		fr_fill_put(fr, f);
	}
	fr_stat_add(fr, read_fills, filled);
}

int fr_fill_setup(struct dm_fr *fr)
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

void fr_fill_teardown(struct dm_fr *fr)
{
	unsigned int i;

	if (!fr->fills)
		return;
	for (i = 0; i < fr->nr_fills; i++)
		if (fr->fills[i].page)
			__free_pages(fr->fills[i].page, fr->fill_order);
	kfree(fr->fills);
}

