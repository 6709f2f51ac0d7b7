// SPDX-License-Identifier: GPL-2.0-only
/*
 * Known bad PM in the cache: the pages a DAX driver refuses access to because
 * they are on its bad block list (ARS results, or
 * /sys/block/pmemN/badblocks), as the PM device found them when it was
 * accessed (fr-pmdev.c).
 *
 * The bad pages are handed to the core as struct fr_bad (per PM chunk, per
 * slot); the core never loads or stores them. A bad page holding nothing the
 * core needs (an unused chunk, the tags of a forgotten slot) is overwritten
 * with dax_recovery_write(), which clears the poison where the platform can
 * (an NVDIMM with the clear-error DSM); if the page is still refused after
 * that (memmap= or e820 PM cannot clear), it stays retired.
 */
#include <linux/slab.h>

#include "dm-fr.h"

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
		/* Slots whose tags (ways per slot) the page holds. */
		*first = (max(off, g->tags_offset) - g->tags_offset) /
			 (g->ways * sizeof(struct fr_tag_disk));
		*last = (min(end, tags_end) - 1 - g->tags_offset) /
			(g->ways * sizeof(struct fr_tag_disk));
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

/* The core's bad-PM bitmaps (the page list is the PM device's). */
void fr_badpm_destroy(struct dm_fr *fr)
{
	kvfree(fr->cache.bad.chunks);
	kvfree(fr->cache.bad.tag_slots);
	kvfree(fr->cache.bad.lost);
	memset(&fr->cache.bad, 0, sizeof(fr->cache.bad));
}

/*
 * Once the geometry is known (constructor): the core's view of the bad
 * pages. Slots with bad tags are lost when recovering (what they held is
 * unknown), merely retired when formatting (they held nothing). Logged
 * once, rate-limited.
 */
int fr_badpm_create(struct dm_fr *fr, char **error)
{
	const char *name = dm_table_device_name(fr->ti->table);
	const struct fr_geometry *g = &fr->cache.geo;
	struct fr_badpm *b = &fr->pm.bad;
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
		n += g->ways;
	for_each_set_bit(i, fr->cache.bad.chunks, g->nr_chunks)
		n += !test_bit(i >> g->ways_shift, fr->cache.bad.tag_slots);
	return n;
}

u64 fr_badpm_lost(struct dm_fr *fr)
{
	if (!fr->cache.bad.lost)
		return 0;
	return bitmap_weight(fr->cache.bad.lost, fr->cache.geo.nr_slots);
}

/* Whether DAX_ACCESS succeeds on every page of PM chunk p. */
static bool fr_chunk_accessible(struct dm_fr *fr, u64 p)
{
	const struct fr_geometry *g = &fr->cache.geo;
	u64 pg = (g->data_offset >> PAGE_SHIFT) +
		 (p << (g->chunk_shift + SECTOR_SHIFT - PAGE_SHIFT));
	long n = 1L << (g->chunk_shift + SECTOR_SHIFT - PAGE_SHIFT);

	return fr_pmdev_pages_accessible(fr, pg, n);
}

/*
 * Lock (or unlock) the stripes of what a page holds: one chunk's slot, or
 * the slots of a tag page (4096 / (32 * ways) consecutive ones).
 */
static void fr_lock_slots(struct dm_fr *fr, enum fr_page_kind k, u64 first,
			  u64 last, bool lock)
{
	fr_slot_t s = fr_slot_of_pchunk(&fr->cache.geo, to_pchunk(first));

	if (k == FR_PAGE_DATA && lock)
		fr_lock_slot(fr, s);
	else if (k == FR_PAGE_DATA)
		fr_unlock_slot(fr, s, FR_STRIPE_KEPT);
	else if (lock)
		fr_lock_slot_span(fr, first, last);
	else
		fr_unlock_slot_span(fr, first, last);
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
	struct fr_badpm *b = &fr->pm.bad;
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
				     !test_bit(first >> fr->cache.geo.ways_shift,
					       fr->cache.bad.tag_slots);
			} else {
				for (s = first; s <= last && ok; s++)
					ok = test_bit(s, fr->cache.bad.tag_slots) &&
					     !test_bit(s, fr->cache.bad.lost);
			}
			if (ok && fr_pmdev_clear_page(fr, pg)) {
				if (k == FR_PAGE_DATA && fr_chunk_accessible(fr, first)) {
					clear_bit(first, fr->cache.bad.chunks);
					back++;
				} else if (k == FR_PAGE_TAGS) {
					bitmap_clear(fr->cache.bad.tag_slots, first,
						     last - first + 1);
					back += g->ways * (last - first + 1);
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
		fr_lock_slot(fr, to_slot(pos));
		d = fr_forget_unreadable(&fr->cache, to_slot(pos),
					 1 << FR_STRIPE_SHIFT);
		/* Reads of these keys now go to the origin: like a discard. */
		fr_unlock_slot(fr, to_slot(pos), d ? FR_STRIPE_CHANGED :
			       FR_STRIPE_KEPT);
		n += d;
		cond_resched();
	}
	fr_badpm_clear(fr);
	return n;
}
