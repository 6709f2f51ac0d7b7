// SPDX-License-Identifier: GPL-2.0-only
/*
 * Known bad PM: the pages a DAX driver refuses to map because they are on
 * its bad block list (ARS results, or /sys/block/pmemN/badblocks).
 *
 * One dax_direct_access() over the whole PM fails if any bad page lies
 * anywhere in it, which would refuse the table and strand every dirty chunk.
 * So the PM is mapped piece by piece: DAX_ACCESS for the rest of it and, when
 * that fails with a media error, DAX_RECOVERY_WRITE, which the pmem driver
 * answers with the number of good pages before the first bad one (at least
 * 1, so a 1-page answer is checked with a 1-page DAX_ACCESS). Every piece
 * must lie at the same offset from one base address (the pmem mapping is
 * linear), so the core keeps a single pointer.
 *
 * The bad pages are handed to the core as struct fr_bad (per PM chunk, per
 * slot); the core never loads or stores them. A bad page holding nothing the
 * core needs (an unused chunk, the tags of a forgotten slot) is overwritten
 * with dax_recovery_write(), which clears the poison where the platform can
 * (an NVDIMM with the clear-error DSM); if the page is still refused after
 * that (memmap= or e820 PM cannot clear), it stays retired.
 */
#include <linux/dax.h>
#include <linux/uio.h>
#include <linux/pfn_t.h>
#include <linux/vmalloc.h>

#include "dm-fr.h"

#define FR_BAD_RANGES_MIN	16

/* A media error from the driver: -EIO before 6.2, -EHWPOISON since. */
static bool fr_dax_media_error(long r)
{
	return r == -EIO || r == -EHWPOISON;
}

static int fr_bad_add(struct fr_badpm *b, u64 page)
{
	struct fr_bad_range *r;

	if (b->nr && b->ranges[b->nr - 1].page + b->ranges[b->nr - 1].nr == page) {
		b->ranges[b->nr - 1].nr++;
		b->pages++;
		return 0;
	}
	if (b->nr == b->max) {
		u32 max = max_t(u32, FR_BAD_RANGES_MIN, b->max * 2);

		r = kvmalloc_array(max, sizeof(*r), GFP_KERNEL);
		if (!r)
			return -ENOMEM;
		if (b->nr)
			memcpy(r, b->ranges, b->nr * sizeof(*r));
		kvfree(b->ranges);
		b->ranges = r;
		b->max = max;
	}
	b->ranges[b->nr].page = page;
	b->ranges[b->nr].nr = 1;
	b->nr++;
	b->pages++;
	return 0;
}

/*
 * One DAX call for pages [pos, pos + nr) of the PM; the address it gives must
 * be where the linear mapping puts them. Returns pages, or the error.
 */
static long fr_dax_piece(struct dm_fr *fr, u64 pos, long nr,
			 enum dax_access_mode mode, pfn_t *pfn)
{
	void *kaddr;
	long r;
	int id;

	id = dax_read_lock();
	r = dax_direct_access(fr->pm_dev->dax_dev, fr->pm_pgoff + pos, nr, mode,
			      &kaddr, pfn);
	dax_read_unlock(id);
	if (r <= 0)
		return r ? r : -ERANGE;
	if (!pos)
		fr->pm_pfn = pfn_t_to_pfn(*pfn);
	if (!fr->pm_addr && !pos)
		fr->pm_addr = kaddr;
	if (!fr->pm_addr || kaddr != (u8 *)fr->pm_addr + (pos << PAGE_SHIFT))
		return -EREMOTE;	/* not one linear mapping */
	return min(r, nr);
}

/*
 * How many pages from pos on are good (> 0), or 0 if page pos is bad, or an
 * error. Called after DAX_ACCESS of the rest failed with a media error.
 */
static long fr_good_run(struct dm_fr *fr, u64 pos, long rest)
{
	pfn_t pfn;
	long m, r;

	m = fr_dax_piece(fr, pos, rest, DAX_RECOVERY_WRITE, &pfn);
	if (m < 0)
		return m;
	/*
	 * m pages before the first bad one, by pmem's count. A bad range
	 * that began before pos makes that count meaningless (the driver
	 * clamps it to rest), and a 1-page answer may mean page pos is bad:
	 * only what DAX_ACCESS grants is good.
	 */
	if (m > 1 && m < rest) {
		r = fr_dax_piece(fr, pos, m, DAX_ACCESS, &pfn);
		if (r > 0 || !fr_dax_media_error(r))
			return r;
	}
	r = fr_dax_piece(fr, pos, 1, DAX_ACCESS, &pfn);
	if (fr_dax_media_error(r))
		return 0;
	return r;
}

int fr_badpm_map(struct dm_fr *fr, u64 nr_pages, char **error)
{
	struct fr_badpm *b = &fr->badpm;
	u64 pos = 0;
	pfn_t pfn;
	long r;

	fr->pm_addr = NULL;
	while (pos < nr_pages) {
		long rest = min_t(u64, nr_pages - pos, LONG_MAX);

		r = fr_dax_piece(fr, pos, rest, DAX_ACCESS, &pfn);
		if (fr_dax_media_error(r)) {
			r = fr_good_run(fr, pos, rest);
			if (!r) {
				if (!pos) {
					*error = "PM superblock is on a bad block (unreadable)";
					return -EIO;
				}
				if (fr_bad_add(b, pos)) {
					*error = "Cannot allocate the bad block list";
					return -ENOMEM;
				}
				pos++;
				continue;
			}
		}
		if (r == -EREMOTE) {
			*error = "PM device is not contiguously mappable";
			return -EOPNOTSUPP;
		}
		if (r < 0) {
			*error = "Cannot map the PM device with DAX";
			return r;
		}
		pos += r;
		cond_resched();
	}
	return 0;
}

/* What PM page pg holds, in the cache's layout. */
enum fr_page_kind { FR_PAGE_OTHER, FR_PAGE_TAGS, FR_PAGE_DATA };

static enum fr_page_kind fr_page_kind(const struct fr_geometry *g, u64 pg,
				      u64 *first, u64 *last)
{
	u64 off = pg << PAGE_SHIFT, end = off + PAGE_SIZE;
	u64 tags_end = g->tags_offset + g->nr_chunks * sizeof(struct fr_tag_disk);
	u32 chunk_shift = g->chunk_shift + SECTOR_SHIFT;
	u64 data_end = g->data_offset + (g->nr_chunks << chunk_shift);

	if (end > g->tags_offset && off < tags_end) {
		/* Slots whose tags (2 per slot, 64 bytes) the page holds. */
		*first = (max(off, g->tags_offset) - g->tags_offset) /
			 (2 * sizeof(struct fr_tag_disk));
		*last = (min(end, tags_end) - 1 - g->tags_offset) /
			(2 * sizeof(struct fr_tag_disk));
		return FR_PAGE_TAGS;
	}
	if (end > g->data_offset && off < data_end) {
		/* Chunks are 4 KiB or larger, pages 4 KiB: one chunk. */
		*first = (off - g->data_offset) >> chunk_shift;
		*last = *first;
		return FR_PAGE_DATA;
	}
	return FR_PAGE_OTHER;
}

void fr_badpm_free(struct dm_fr *fr)
{
	kvfree(fr->badpm.ranges);
	kvfree(fr->cache.bad.chunks);
	kvfree(fr->cache.bad.tag_slots);
	kvfree(fr->cache.bad.lost);
	memset(&fr->badpm, 0, sizeof(fr->badpm));
	memset(&fr->cache.bad, 0, sizeof(fr->cache.bad));
}

/*
 * Once the geometry is known (constructor): the core's view of the bad
 * pages. Slots with bad tags are lost when recovering (what they held is
 * unknown), merely retired when formatting (they held nothing). Logged
 * once, rate-limited.
 */
int fr_badpm_apply(struct dm_fr *fr, char **error)
{
	const char *name = dm_table_device_name(fr->ti->table);
	const struct fr_geometry *g = &fr->cache.geo;
	struct fr_badpm *b = &fr->badpm;
	u64 slot_longs = BITS_TO_LONGS(g->nr_slots), first, last, pg;
	u32 i;

	if (!b->nr)
		return 0;
	fr->cache.bad.chunks = kvcalloc(fr_bitmap_longs(g), sizeof(long), GFP_KERNEL);
	fr->cache.bad.tag_slots = kvcalloc(slot_longs, sizeof(long), GFP_KERNEL);
	fr->cache.bad.lost = kvcalloc(slot_longs, sizeof(long), GFP_KERNEL);
	if (!fr->cache.bad.chunks || !fr->cache.bad.tag_slots || !fr->cache.bad.lost) {
		*error = "Cannot allocate the bad chunk bitmaps";
		return -ENOMEM;
	}
	for (i = 0; i < b->nr; i++) {
		const struct fr_bad_range *r = &b->ranges[i];

		DMWARN_LIMIT("%s: PM pages %llu..%llu (sectors %llu..%llu) are bad blocks: not used",
			     name, r->page, r->page + r->nr - 1,
			     r->page << (PAGE_SHIFT - SECTOR_SHIFT),
			     ((r->page + r->nr) << (PAGE_SHIFT - SECTOR_SHIFT)) - 1);
		for (pg = r->page; pg < r->page + r->nr; pg++) {
			switch (fr_page_kind(g, pg, &first, &last)) {
			case FR_PAGE_TAGS:
				bitmap_set(fr->cache.bad.tag_slots, first,
					   last - first + 1);
				if (!fr->fresh)
					bitmap_set(fr->cache.bad.lost, first,
						   last - first + 1);
				break;
			case FR_PAGE_DATA:
				set_bit(first, fr->cache.bad.chunks);
				break;
			case FR_PAGE_OTHER:
				break;
			}
		}
	}
	DMWARN("%s: %llu bad PM pages in %u ranges: %llu chunks retired, %llu slots with unreadable tags",
	       name, b->pages, b->nr, fr_badpm_retired(fr),
	       (u64)bitmap_weight(fr->cache.bad.tag_slots, g->nr_slots));
	return 0;
}

/* PM chunks out of use: bad data, or in a slot whose tags are bad. */
u64 fr_badpm_retired(struct dm_fr *fr)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 n = 0, i;

	if (!fr->cache.bad.chunks)
		return 0;
	for_each_set_bit(i, fr->cache.bad.tag_slots, g->nr_slots)
		n += 2;
	for_each_set_bit(i, fr->cache.bad.chunks, g->nr_chunks)
		n += !test_bit(i >> 1, fr->cache.bad.tag_slots);
	return n;
}

u64 fr_badpm_lost(struct dm_fr *fr)
{
	if (!fr->cache.bad.lost)
		return 0;
	return bitmap_weight(fr->cache.bad.lost, fr->cache.geo.nr_slots);
}

/*
 * Overwrite PM page pg with zeros through dax_recovery_write(), which clears
 * its poison where the platform can; true if DAX maps it again afterwards.
 */
static bool fr_clear_page(struct dm_fr *fr, u64 pg)
{
	struct kvec kv = { .iov_base = page_address(ZERO_PAGE(0)),
			   .iov_len = PAGE_SIZE };
	struct iov_iter iter;
	pfn_t pfn;
	size_t done;
	int id;

	if (fr_dax_piece(fr, pg, 1, DAX_RECOVERY_WRITE, &pfn) != 1)
		return false;
	iov_iter_kvec(&iter, ITER_SOURCE, &kv, 1, PAGE_SIZE);
	id = dax_read_lock();
	done = dax_recovery_write(fr->pm_dev->dax_dev, fr->pm_pgoff + pg,
				  (u8 *)fr->pm_addr + (pg << PAGE_SHIFT),
				  PAGE_SIZE, &iter);
	dax_read_unlock(id);
	return done == PAGE_SIZE && fr_dax_piece(fr, pg, 1, DAX_ACCESS, &pfn) == 1;
}

/* Whether every page of PM chunk p maps with DAX_ACCESS. */
static bool fr_chunk_maps(struct dm_fr *fr, u64 p)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 pg = (g->data_offset >> PAGE_SHIFT) +
		 (p << (g->chunk_shift + SECTOR_SHIFT - PAGE_SHIFT));
	long n = 1L << (g->chunk_shift + SECTOR_SHIFT - PAGE_SHIFT);
	pfn_t pfn;

	return fr_dax_piece(fr, pg, n, DAX_ACCESS, &pfn) == n;
}

/*
 * Lock (or unlock) the stripes of what a page holds: one chunk's slot, or
 * the slots of a tag page (64 consecutive ones from a multiple of 64, so
 * their stripes are consecutive and ascending). Several stripes are taken
 * as fr_lock_range takes them, under stripe_range (dm-fr.h).
 */
static void fr_lock_slots(struct dm_fr *fr, enum fr_page_kind k, u64 first,
			  u64 last, bool lock)
{
	u64 s;

	if (k == FR_PAGE_DATA) {
		struct fr_stripe *st = fr_stripe_of(fr, to_slot(first >> 1));

		if (lock)
			mutex_lock(&st->lock);
		else
			mutex_unlock(&st->lock);
		return;
	}
	if (lock)
		lock_map_acquire(&fr->stripe_range.dep_map);
	for (s = first & ~(u64)((1 << FR_STRIPE_SHIFT) - 1); s <= last;
	     s += 1 << FR_STRIPE_SHIFT) {
		struct fr_stripe *st = fr_stripe_of(fr, to_slot(s));

		if (lock)
			mutex_lock_nest_lock(&st->lock, &fr->stripe_range);
		else
			mutex_unlock(&st->lock);
	}
	if (!lock)
		lock_map_release(&fr->stripe_range.dep_map);
}

/*
 * Try to bring retired PM back: every bad page that holds nothing anyone
 * needs (a bad chunk with no valid tag, the tags of slots that are retired
 * but not lost) is overwritten with zeros, which is also what a free tag or
 * an unused chunk may hold. Each page's slots are locked around the check,
 * the write and the bitmap change. Returns the chunks brought back.
 */
u64 fr_badpm_clear(struct dm_fr *fr)
{
	const struct fr_geometry *g = &fr->cache.geo;
	struct fr_badpm *b = &fr->badpm;
	u64 pg, first, last, s, back = 0;
	u32 i;

	if (!fr->cache.bad.chunks)
		return 0;
	for (i = 0; i < b->nr; i++) {
		for (pg = b->ranges[i].page;
		     pg < b->ranges[i].page + b->ranges[i].nr; pg++) {
			enum fr_page_kind k = fr_page_kind(g, pg, &first, &last);
			bool ok = true;

			if (k == FR_PAGE_OTHER)
				continue;
			fr_lock_slots(fr, k, first, last, true);
			if (k == FR_PAGE_DATA) {
				ok = test_bit(first, fr->cache.bad.chunks) &&
				     !test_bit(first, fr->cache.valid_bits) &&
				     !test_bit(first >> 1, fr->cache.bad.tag_slots);
			} else {
				for (s = first; s <= last && ok; s++)
					ok = test_bit(s, fr->cache.bad.tag_slots) &&
					     !test_bit(s, fr->cache.bad.lost);
			}
			if (ok && fr_clear_page(fr, pg)) {
				if (k == FR_PAGE_DATA && fr_chunk_maps(fr, first)) {
					clear_bit(first, fr->cache.bad.chunks);
					back++;
				} else if (k == FR_PAGE_TAGS) {
					bitmap_clear(fr->cache.bad.tag_slots, first,
						     last - first + 1);
					back += 2 * (last - first + 1);
				}
			}
			fr_lock_slots(fr, k, first, last, false);
			cond_resched();
		}
	}
	return back;
}

/*
 * The forget_unreadable message: what the bad PM held is declared lost, so
 * the origin is authoritative for it; then the pages that now hold nothing
 * are cleared where the platform can. Returns what was forgotten.
 */
u64 fr_badpm_forget(struct dm_fr *fr)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 pos, n = 0, d;

	if (!fr->cache.bad.chunks)
		return 0;
	for (pos = 0; pos < g->nr_slots; pos += 1 << FR_STRIPE_SHIFT) {
		struct fr_stripe *st = fr_stripe_of(fr, to_slot(pos));

		mutex_lock(&st->lock);
		d = fr_forget_unreadable(&fr->cache, to_slot(pos),
					 1 << FR_STRIPE_SHIFT);
		/* Reads of these keys now go to the origin: like a discard. */
		if (d)
			st->epoch++;
		mutex_unlock(&st->lock);
		n += d;
		cond_resched();
	}
	fr_badpm_clear(fr);
	return n;
}
