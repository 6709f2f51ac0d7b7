// SPDX-License-Identifier: GPL-2.0-only
/*
 * The PM device: its claim (no two targets share PM pages or an origin),
 * its direct access (DAX) with the known bad pages left out, and what is done to
 * its pages through DAX (clearing poison). PM data is read only with
 * fr_pm_read() (fr-pm.h), machine-check safe; what the cache makes of bad
 * pages is fr-badpm.c's.
 *
 * One dax_direct_access() over the whole PM fails if any bad page lies
 * anywhere in it, which would refuse the table and strand every dirty chunk.
 * So the PM is accessed piece by piece: DAX_ACCESS for the rest of it and, when
 * that fails with a media error, DAX_RECOVERY_WRITE, which the pmem driver
 * answers with the number of good pages before the first bad one (at least
 * 1, so a 1-page answer is checked with a 1-page DAX_ACCESS). Every piece
 * must lie at the same offset from one base address (pmem's DAX addresses
 * are linear), so the core keeps a single pointer.
 */
#include <linux/blkdev.h>
#include <linux/dax.h>
#include <linux/uio.h>
#include <linux/pfn_t.h>
#include <linux/slab.h>

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
	r = dax_direct_access(fr->pm.dev->dax_dev, fr->pm.pgoff + pos, nr, mode,
			      &kaddr, pfn);
	dax_read_unlock(id);
	if (r <= 0)
		return r ? r : -ERANGE;
	/*
	 * Target 1.9 to 1.12 sent writeback bios from the PM pages; since 1.13
	 * writeback sends copies (fr-stage.c) and nothing needs the pages, but
	 * the refusal stays until a PM without them can be tested here.
	 */
	if (!pfn_t_has_page(*pfn))
		return -ENOTBLK;
	if (!pos)
		fr->pm.pfn = pfn_t_to_pfn(*pfn);
	if (!fr->pm.addr && !pos)
		fr->pm.addr = kaddr;
	if (!fr->pm.addr || kaddr != (u8 *)fr->pm.addr + (pos << PAGE_SHIFT))
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

static int access_pages(struct dm_fr *fr, u64 nr_pages, char **error)
{
	struct fr_badpm *b = &fr->pm.bad;
	u64 pos = 0;
	pfn_t pfn;
	long r;

	fr->pm.addr = NULL;
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
			*error = "PM device is not one contiguous DAX range";
			return -EOPNOTSUPP;
		}
		if (r == -ENOTBLK) {
			*error = "PM device has no struct pages (use an fsdax namespace)";
			return -EOPNOTSUPP;
		}
		if (r < 0) {
			*error = "Cannot access the PM device with DAX";
			return r;
		}
		pos += r;
		cond_resched();
	}
	return 0;
}

/*
 * Access the whole PM device with DAX; it must be one contiguous range, of
 * which known bad pages are left out (access_pages).
 */
int fr_pmdev_create(struct dm_fr *fr, char **error)
{
	struct block_device *bdev = fr->pm.dev->bdev;
	sector_t start = get_start_sect(bdev);
	long nr_pages;
	int r;

	if (!fr->pm.dev->dax_dev) {
		*error = "PM device does not support DAX";
		return -EOPNOTSUPP;
	}
	if (start & (PAGE_SECTORS - 1)) {
		*error = "PM partition is not page aligned";
		return -EINVAL;
	}
	fr->pm.bytes = (u64)bdev_nr_sectors(bdev) << SECTOR_SHIFT;
	nr_pages = fr->pm.bytes >> PAGE_SHIFT;
	if (!nr_pages) {
		*error = "PM device is too small";
		return -EINVAL;
	}
	fr->pm.bytes = (u64)nr_pages << PAGE_SHIFT;
	fr->pm.pgoff = start >> PAGE_SECTORS_SHIFT;
	/* Piece by piece: known bad pages must not refuse the whole PM. */
	r = access_pages(fr, nr_pages, error);
	if (r)
		return r;
	fr->pm.pages = nr_pages;
	return 0;
}

/*
 * Overwrite PM page pg with zeros through dax_recovery_write(), which clears
 * its poison where the platform can; true if DAX_ACCESS succeeds on it again afterwards.
 */
bool fr_pmdev_clear_page(struct dm_fr *fr, u64 pg)
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
	done = dax_recovery_write(fr->pm.dev->dax_dev, fr->pm.pgoff + pg,
				  (u8 *)fr->pm.addr + (pg << PAGE_SHIFT),
				  PAGE_SIZE, &iter);
	dax_read_unlock(id);
	return done == PAGE_SIZE && fr_dax_piece(fr, pg, 1, DAX_ACCESS, &pfn) == 1;
}

/* Whether DAX_ACCESS succeeds on pages [pg, pg + n) of the PM now. */
bool fr_pmdev_pages_accessible(struct dm_fr *fr, u64 pg, long n)
{
	pfn_t pfn;

	return fr_dax_piece(fr, pg, n, DAX_ACCESS, &pfn) == n;
}

void fr_pmdev_destroy(struct dm_fr *fr)
{
	kvfree(fr->pm.bad.ranges);
	memset(&fr->pm.bad, 0, sizeof(fr->pm.bad));
}

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

/* Physical page ranges [a, a + na) and [b, b + nb) overlap. */
static bool fr_pfns_overlap(unsigned long a, unsigned long na,
			    unsigned long b, unsigned long nb)
{
	return a < b + nb && b < a + na;
}

/*
 * Does any page of a DAX-capable origin lie in [pfn, pfn + n)? Walked in
 * pieces: the origin may be a concatenation, and DAX_ACCESS fails on a
 * piece with a known bad block (its pages are then asked one by one).
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
static bool fr_conflict(struct dm_fr *fr, struct dm_fr *o, char **error)
{
	dev_t pm = fr->pm.dev->bdev->bd_dev, origin = fr->origin->bdev->bd_dev;
	dev_t opm = o->pm.dev->bdev->bd_dev, oorigin = o->origin->bdev->bd_dev;

	if (opm == pm || fr_pfns_overlap(fr->pm.pfn, fr->pm.pages,
					  o->pm.pfn, o->pm.pages))
		*error = "PM overlaps the PM of another dm-fr target";
	else if (oorigin == pm || fr_origin_on_pfns(o->origin, fr->pm.pfn,
						     fr->pm.pages))
		*error = "PM overlaps the origin of another dm-fr target";
	else if (opm == origin || fr_origin_on_pfns(fr->origin, o->pm.pfn,
						     o->pm.pages))
		*error = "Origin overlaps the PM of another dm-fr target";
	else if (oorigin == origin)
		*error = "Origin is in use by another dm-fr target";
	else
		return false;
	return true;
}

/*
 * Register the target unless it conflicts with one already constructed:
 * of another device, or of this same table (two targets in one table are
 * live at once). The same device's other table is a reload.
 */
int fr_claim_devices(struct dm_fr *fr, char **error)
{
	bool conflict = false;
	struct dm_fr *o;

	if (fr_origin_on_pfns(fr->origin, fr->pm.pfn, fr->pm.pages)) {
		*error = "Origin and PM share pages";
		return -EINVAL;
	}
	fr->md = dm_table_get_md(fr->ti->table);
	mutex_lock(&fr_targets_lock);
	list_for_each_entry(o, &fr_targets, node) {
		if (o->md == fr->md && o->ti->table != fr->ti->table)
			continue;
		conflict = fr_conflict(fr, o, error);
		if (conflict)
			break;
	}
	if (!conflict)
		list_add(&fr->node, &fr_targets);
	mutex_unlock(&fr_targets_lock);
	return conflict ? -EBUSY : 0;
}

/*
 * The dirty chunks that the same device's other table (the live one, being
 * replaced) holds on these PM pages: what a fresh table would format away.
 * A table that never got the PM (its first resume was refused) passes on
 * the count of the table it replaced: those chunks are still there.
 */
u64 fr_live_dirty(struct dm_fr *fr)
{
	struct dm_fr *o;
	u64 n = 0;

	mutex_lock(&fr_targets_lock);
	list_for_each_entry(o, &fr_targets, node) {
		if (o == fr || o->md != fr->md || o->ti->table == fr->ti->table ||
		    !fr_pfns_overlap(fr->pm.pfn, fr->pm.pages, o->pm.pfn,
				     o->pm.pages))
			continue;
		n += READ_ONCE(o->pm_ready) ? fr_count_dirty(&o->cache) :
			READ_ONCE(o->replaced_dirty);
	}
	mutex_unlock(&fr_targets_lock);
	return n;
}

/* Leave the registry (a no-op if never registered). */
void fr_release_devices(struct dm_fr *fr)
{
	if (!list_empty(&fr->node)) {
		mutex_lock(&fr_targets_lock);
		list_del(&fr->node);
		mutex_unlock(&fr_targets_lock);
	}
}
