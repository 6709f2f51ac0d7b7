// SPDX-License-Identifier: GPL-2.0-only
/*
 * The read fill: a read miss of whole chunks is read by the target into
 * buffers of its own (a fixed pool), copied to the reader, and installed on
 * PM by a worker afterwards, unless the chunk's stripe changed in between
 * (its epoch moved, or a discard or write-through bypassed the cache: see
 * the epoch rule in fr-stripe.h).
 *
 * Prefetch: a miss in an aligned window of prefetch_kib (a power of two
 * chunks, inside one region) whose window saw another miss recently reads
 * the window's other fillable chunks too, in the background; they are
 * installed exactly like demand fills (stamped under their stripe locks,
 * checked at install). A sequential stream (a miss in the window after one
 * that was prefetched) has its window and the next read at once, and a hit
 * in the middle of a window read ahead reads the one after it: the stream
 * meets PM, not the origin. Prefetch buffers are not the pool's: each is
 * allocated without waiting (none to be had: no prefetch), at most
 * FR_PREFETCH_MAX_BYTES of them in flight, and freed at install, so
 * prefetch never takes a buffer from a demand fill and costs no memory
 * while reads hit. It holds the window's stripe locks only while it picks
 * chunks (never across origin I/O, so a write never waits for a prefetch
 * read), and never evicts a dirty chunk (fr_fill() cannot).
 */
#include <linux/blkdev.h>
#include <linux/slab.h>

#include "dm-fr.h"

/* Read fill: chunks in flight between a read's completion and their install. */
#define FR_FILL_POOL_BYTES	(256 << 10)
#define FR_FILL_MIN		4
#define FR_FILL_MAX		BITS_PER_LONG
/* What a fill read keeps of the reader's flags. */
#define FR_READ_FLAGS		(REQ_SYNC | REQ_META | REQ_PRIO | REQ_RAHEAD)
/* Prefetch buffers in flight (allocated, not yet installed), at most. */
#define FR_PREFETCH_MAX_BYTES	(4 * FR_PREFETCH_MAX_KIB << 10)
/*
 * prefetch_seen[w % FR_PREFETCH_SEEN]: window w + 1 in the low 40 bits
 * (windows further out alias: a lost prefetch or one more), when it was
 * noted (jiffies / 16, 22 bits), and whether it was prefetched (for a
 * miss, or ahead of a stream). An entry older than FR_PF_FORGET_MS is
 * forgotten: by then its prefetch has landed, and a miss there is a chunk
 * that left PM since (a working set larger than the PM, read again).
 */
#define FR_PF_DONE		(1ULL << 63)
#define FR_PF_AHEAD		(1ULL << 62)
#define FR_PF_STAMP_SHIFT	40
#define FR_PF_STAMP		(((1ULL << 22) - 1) << FR_PF_STAMP_SHIFT)
#define FR_PF_WINDOW		((1ULL << FR_PF_STAMP_SHIFT) - 1)
#define FR_PF_FORGET_MS		2000

/*
 * A chunk a read miss brings from the origin into memory of the target's
 * own: taken from the pool in map (with its stripe's epoch), read by
 * fr_fill_read(), copied to the reader, then installed by fr_fill_work
 * unless its stripe changed in between. The reader's pages are never the
 * source of a fill: its buffer may change under the read (O_DIRECT).
 */
struct fr_fill {
	struct dm_fr *fr;
	struct llist_node node;
	struct fr_fill *next;		/* the bio's next fill */
	fr_ochunk_t key;
	struct fr_stamp stamp;		/* its stripe at map: fr-stripe.h */
	struct page *page;		/* chunk-sized: the pool's kmalloc'd, a prefetch's 2^order pages */
	void *data;
};

static struct fr_fill *fr_fill_get(struct dm_fr *fr)
{
	unsigned int i;

	do {
		i = find_first_zero_bit(&fr->fills.busy, fr->fills.pool_size);
		if (i >= fr->fills.pool_size)
			return NULL;	/* all in flight: skip this fill */
	} while (test_and_set_bit(i, &fr->fills.busy));
	return &fr->fills.pool[i];
}

/* A prefetch buffer: one of its own, or none (the cap, or no memory). */
static struct fr_fill *fr_prefetch_get(struct dm_fr *fr)
{
	struct fr_fill *f;

	if (atomic_inc_return(&fr->fills.prefetch_bufs) > fr->fills.prefetch_max_bufs)
		goto none;
	f = kmalloc(sizeof(*f), GFP_NOWAIT | __GFP_NOWARN);
	if (!f)
		goto none;
	f->page = alloc_pages(GFP_NOWAIT | __GFP_NOWARN, fr->fills.order);
	if (!f->page) {
		kfree(f);
		goto none;
	}
	f->fr = fr;
	f->data = page_address(f->page);
	return f;
none:
	atomic_dec(&fr->fills.prefetch_bufs);
	return NULL;
}

static void fr_fill_put(struct dm_fr *fr, struct fr_fill *f)
{
	if (f >= fr->fills.pool && f < fr->fills.pool + fr->fills.pool_size) {
		clear_bit(f - fr->fills.pool, &fr->fills.busy);
		return;
	}
	__free_pages(f->page, fr->fills.order);
	kfree(f);
	atomic_dec(&fr->fills.prefetch_bufs);
}

/* Hand completed fills to the worker that installs them. */
static void fr_fills_done(struct dm_fr *fr, struct fr_fill *f, bool ok)
{
	struct fr_fill *next;

	for (; f; f = next) {
		next = f->next;
		if (ok)
			llist_add(&f->node, &fr->fills.ready);
		else
			fr_fill_put(fr, f);
	}
	if (ok)
		queue_work(fr->io_wq, &fr->fills.work);
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

/* The pages a list of fills (consecutive chunks) takes in one bio. */
static unsigned short fr_fills_vecs(const struct fr_geometry *g,
				    const struct fr_fill *f)
{
	unsigned short nr_vecs = 0;

	for (; f; f = f->next)
		nr_vecs += DIV_ROUND_UP(hweight64(fr_chunk_mask(g, f->key)) <<
					SECTOR_SHIFT, PAGE_SIZE);
	return nr_vecs;
}

/* Read a list of fills (consecutive chunks) from the origin, as one bio. */
static struct bio *fr_fills_bio(struct dm_fr *fr, struct fr_fill *fills,
				blk_opf_t opf, bio_end_io_t *end_io,
				void *private)
{
	const struct fr_geometry *g = &fr->cache.geo;
	struct fr_fill *f;
	struct bio *fbio;

	fbio = fr_origin_bio(fr, opf, fr_first_sector(g, fills->key),
			     fr_fills_vecs(g, fills), end_io, private);
	for (f = fills; f; f = f->next) {
		size_t left = hweight64(fr_chunk_mask(g, f->key)) << SECTOR_SHIFT;
		struct page *page = f->page;

		while (left) {
			size_t n = min_t(size_t, left, PAGE_SIZE);

			__bio_add_page(fbio, page++, n, 0);
			left -= n;
		}
	}
	return fbio;
}

/*
 * Read the planned chunks from the origin into the fills' own pages; the
 * reader gets a copy of them at completion (fr_fill_read_done). The plan
 * starts at the bio's first sector, a chunk's first.
 */
void fr_fill_read(struct dm_fr *fr, struct bio *bio, struct fr_io *io)
{
	struct bio *fbio;

	fbio = fr_fills_bio(fr, io->fills,
			    REQ_OP_READ | (bio->bi_opf & FR_READ_FLAGS),
			    fr_fill_read_done, io);
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
	struct fr_fill *f = io->fills;

	io->fills = NULL;
	bio->bi_status = fbio->bi_status;
	if (!bio->bi_status)
		bio_copy_data_iter(bio, &dst, fbio, &src);
	bio_put(fbio);
	fr_fills_done(fr, f, !bio->bi_status);
	bio_endio(bio);
}

/* The prefetch window in chunks (a power of two, within a region), or 0. */
static u64 fr_prefetch_chunks(struct dm_fr *fr)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 n = ((u64)fr_tunable(fr, prefetch_kib) << 10) >>
		(g->chunk_shift + SECTOR_SHIFT);

	if (n < 2)
		return 0;
	return min_t(u64, rounddown_pow_of_two(n), g->region_chunks);
}

/*
 * The count drops and the waiter is woken under the wait queue's lock, which
 * fr_prefetch_wait() takes once it saw 0: the target may be freed once it
 * returns, so nothing here touches fr after that unlock.
 */
static void fr_prefetch_done(struct bio *fbio)
{
	struct fr_fill *f = fbio->bi_private;
	struct dm_fr *fr = f->fr;
	unsigned long flags;

	fr_fills_done(fr, f, !fbio->bi_status);
	bio_put(fbio);
	spin_lock_irqsave(&fr->fills.prefetch_wait.lock, flags);
	if (atomic_dec_and_test(&fr->fills.prefetch_reads))
		wake_up_locked(&fr->fills.prefetch_wait);
	spin_unlock_irqrestore(&fr->fills.prefetch_wait.lock, flags);
}

/* Read a run of consecutive chunks' fills (linked) from the origin. */
static void fr_prefetch_submit(struct dm_fr *fr, struct fr_fill *run)
{
	atomic_inc(&fr->fills.prefetch_reads);
	fr_origin_submit(fr_fills_bio(fr, run, REQ_OP_READ | REQ_RAHEAD,
				      fr_prefetch_done, run));
}

/*
 * Read window w's fillable chunks but first..last (n chunks a window; no
 * lock held), each run of consecutive ones as one origin read.
 */
static void fr_prefetch_window(struct dm_fr *fr, u64 w, u64 n, u64 first,
			       u64 last)
{
	const struct fr_geometry *g = &fr->cache.geo;
	struct fr_fill *runs[FR_FILL_MAX / 2 + 1], *f, **tail = NULL;
	u64 ws = w * n, we, k, got = 0;
	unsigned int nr_runs = 0, i;
	struct fr_lockset ls;

	if (ws >= g->origin_chunks)
		return;
	we = min(ws + n, g->origin_chunks) - 1;
	fr_lock_range(fr, ws, we, &ls);
	for (k = ws; k <= we; k++) {
		f = NULL;
		if ((k < first || k > last) &&
		    fr_can_fill(&fr->cache, to_ochunk(k)))
			f = fr_prefetch_get(fr);
		if (!f) {
			tail = NULL;	/* the run, if any, ends */
			continue;
		}
		f->key = to_ochunk(k);
		fr_stamp_take(fr, fr_slot_of(g, f->key), &f->stamp);
		f->next = NULL;
		if (!tail) {
			if (nr_runs == ARRAY_SIZE(runs)) {
				fr_fill_put(fr, f);
				break;
			}
			tail = &runs[nr_runs++];
		}
		*tail = f;
		tail = &f->next;
		got++;
	}
	fr_unlock_range(fr, &ls, FR_STRIPE_KEPT);
	for (i = 0; i < nr_runs; i++)
		fr_prefetch_submit(fr, runs[i]);
	if (got)
		fr_stat_add(fr, prefetched, got);
}

/*
 * The table of recent windows (fr->fills.prefetch_seen), without a lock: a lost
 * update only delays, adds or repeats one prefetch, and a prefetch takes
 * only chunks that may be filled, stamped like any fill.
 */
static u64 *fr_prefetch_seen(struct dm_fr *fr, u64 w)
{
	return &fr->fills.prefetch_seen[w % FR_PREFETCH_SEEN];
}

static u64 fr_prefetch_stamp(void)
{
	u64 now = jiffies;

	return (now >> 4 << FR_PF_STAMP_SHIFT) & FR_PF_STAMP;
}

/* Whether window w is in the table, noted less than FR_PF_FORGET_MS ago. */
static bool fr_prefetch_seen_now(struct dm_fr *fr, u64 w, u64 *v)
{
	u64 age;

	*v = READ_ONCE(*fr_prefetch_seen(fr, w));
	if ((*v & FR_PF_WINDOW) != ((w + 1) & FR_PF_WINDOW))
		return false;
	age = ((fr_prefetch_stamp() - (*v & FR_PF_STAMP)) & FR_PF_STAMP) >>
	      FR_PF_STAMP_SHIFT;
	return age <= msecs_to_jiffies(FR_PF_FORGET_MS) >> 4;
}

static bool fr_prefetch_was(struct dm_fr *fr, u64 w, u64 flags)
{
	u64 v;

	return fr_prefetch_seen_now(fr, w, &v) && (v & flags);
}

static void fr_prefetch_note(struct dm_fr *fr, u64 w, u64 flags)
{
	WRITE_ONCE(*fr_prefetch_seen(fr, w),
		   ((w + 1) & FR_PF_WINDOW) | fr_prefetch_stamp() | flags);
}

/*
 * A read missed chunks first..last (whole or not, filled or remapped; no
 * lock held). The second miss in a window reads the window's other
 * fillable chunks ahead; a miss in the window after one prefetched is a
 * stream: its window now, and the next ahead. A window already prefetched
 * prefetches no more until the table forgets it (FR_PF_FORGET_MS): its
 * misses meanwhile are chunks still in flight, or chunks that cannot be
 * filled.
 */
void fr_prefetch(struct dm_fr *fr, u64 first, u64 last)
{
	u64 n = fr_prefetch_chunks(fr), w, v;

	if (!n || READ_ONCE(fr->cleaner))
		return;
	w = first >> ilog2(n);
	if (last >> ilog2(n) != w)
		return;		/* across windows: not a random miss */
	if (fr_prefetch_was(fr, w, FR_PF_DONE | FR_PF_AHEAD))
		return;
	if (w && fr_prefetch_was(fr, w - 1, FR_PF_DONE | FR_PF_AHEAD)) {
		fr_prefetch_note(fr, w, FR_PF_DONE);
		fr_prefetch_note(fr, w + 1, FR_PF_AHEAD);
		fr_prefetch_window(fr, w, n, first, last);
		fr_prefetch_window(fr, w + 1, n, U64_MAX, 0);
		return;
	}
	if (!fr_prefetch_seen_now(fr, w, &v)) {
		fr_prefetch_note(fr, w, 0);	/* its first miss */
		return;
	}
	fr_prefetch_note(fr, w, FR_PF_DONE);
	fr_prefetch_window(fr, w, n, first, last);
}

/*
 * A read hit chunks first..last: if they hold the middle chunk of a window
 * read ahead of a stream, read the next window ahead too.
 */
void fr_prefetch_hit(struct dm_fr *fr, u64 first, u64 last)
{
	u64 n = fr_prefetch_chunks(fr), mid, w;

	if (!n)
		return;
	mid = round_down(first, n) + n / 2;
	if (mid < first || mid > last)
		return;
	w = first >> ilog2(n);
	if (!fr_prefetch_was(fr, w, FR_PF_AHEAD) || READ_ONCE(fr->cleaner))
		return;
	fr_prefetch_note(fr, w, FR_PF_DONE);
	fr_prefetch_note(fr, w + 1, FR_PF_AHEAD);
	fr_prefetch_window(fr, w + 1, n, U64_MAX, 0);
}

/* No prefetch read in flight after this (suspend: no origin I/O). */
void fr_prefetch_wait(struct dm_fr *fr)
{
	wait_event(fr->fills.prefetch_wait, !atomic_read(&fr->fills.prefetch_reads));
	/* The last completion is out of its critical section. */
	spin_lock_irq(&fr->fills.prefetch_wait.lock);
	spin_unlock_irq(&fr->fills.prefetch_wait.lock);
}

static void fr_fill_payload(void *arg, void *pm_dst, u32 nr_sectors)
{
	fr_pm_copy(pm_dst, arg, (size_t)nr_sectors << SECTOR_SHIFT);
}

/* Install the completed reads' chunks whose stripes did not change since. */
static void fr_fill_work(struct work_struct *work)
{
	struct dm_fr *fr = container_of(work, struct dm_fr, fills.work);
	struct llist_node *list = llist_del_all(&fr->fills.ready);
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

int fr_fill_create(struct dm_fr *fr)
{
	size_t chunk_bytes = (size_t)fr->cache.geo.chunk_sectors << SECTOR_SHIFT;
	unsigned int i;

	/* A prefetch run is a window at most: one bio's vectors. */
	BUILD_BUG_ON(((size_t)FR_PREFETCH_MAX_KIB << 10) /
		     min_t(size_t, PAGE_SIZE, FR_MIN_CHUNK_SECTORS << SECTOR_SHIFT) >
		     BIO_MAX_VECS);
	/* One fill read carries the whole pool at most: one bio's vectors. */
	BUILD_BUG_ON(max(FR_FILL_POOL_BYTES, FR_FILL_MIN *
			 (FR_MAX_CHUNK_SECTORS << SECTOR_SHIFT)) / PAGE_SIZE >
		     BIO_MAX_VECS);
	fr->fills.pool_size = clamp_t(size_t, FR_FILL_POOL_BYTES / chunk_bytes,
			       FR_FILL_MIN, FR_FILL_MAX);
	fr->fills.order = get_order(chunk_bytes);
	fr->fills.pool = kcalloc(fr->fills.pool_size, sizeof(*fr->fills.pool), GFP_KERNEL);
	if (!fr->fills.pool)
		return -ENOMEM;
	/*
	 * kmalloc, chunk-sized and so naturally aligned and contiguous: read
	 * into by page like alloc_pages memory, and counted in the slab like
	 * the rest of the target's DRAM.
	 */
	for (i = 0; i < fr->fills.pool_size; i++) {
		void *data = kmalloc(chunk_bytes, GFP_KERNEL);

		if (!data)
			return -ENOMEM;
		fr->fills.pool[i].fr = fr;
		fr->fills.pool[i].page = virt_to_page(data);
		fr->fills.pool[i].data = data;
	}
	init_llist_head(&fr->fills.ready);
	INIT_WORK(&fr->fills.work, fr_fill_work);
	atomic_set(&fr->fills.prefetch_reads, 0);
	atomic_set(&fr->fills.prefetch_bufs, 0);
	fr->fills.prefetch_max_bufs = max_t(size_t, FR_PREFETCH_MAX_BYTES / chunk_bytes, 1);
	init_waitqueue_head(&fr->fills.prefetch_wait);
	return 0;
}

void fr_fill_destroy(struct dm_fr *fr)
{
	unsigned int i;

	if (!fr->fills.pool)
		return;
	/* Suspended first: every prefetch read completed and was installed. */
	WARN_ON_ONCE(atomic_read(&fr->fills.prefetch_bufs));
	for (i = 0; i < fr->fills.pool_size; i++)
		kfree(fr->fills.pool[i].data);
	kfree(fr->fills.pool);
}

