// SPDX-License-Identifier: GPL-2.0-only
/*
 * Origin I/O: every bio dm-fr sends to the origin is made and sent here.
 *
 *   the read fill    fr_origin_bio + fr_origin_submit, into the fill pool
 *   writeback        fr_origin_bio + fr_origin_submit, from copies in DRAM
 *                    (pinned: fr-stage.c); then fr_origin_flush before
 *                    any dirty flag is cleared
 *   deferred bios    fr_origin_clone_wait: a mixed read's origin part, a
 *                    cleaner write-through or bad-PM bypass write (FUA),
 *                    a discard
 *   plain misses     fr_origin_remap: dm core sends the bio itself
 *
 * Every bio allocated here comes from the target's own bio_set, so none
 * comes from the general pool under memory pressure.
 */
#include <linux/blkdev.h>

#include "dm-fr.h"

struct bio *fr_origin_bio(struct dm_fr *fr, blk_opf_t opf, sector_t sector,
			  unsigned short nr_vecs, bio_end_io_t *end_io,
			  void *private)
{
	struct bio *bio = bio_alloc_bioset(fr->origin->bdev, nr_vecs, opf,
					   GFP_NOIO, &fr->bs);

	bio->bi_iter.bi_sector = sector;
	bio->bi_end_io = end_io;
	bio->bi_private = private;
	return bio;
}

void fr_origin_submit(struct bio *bio)
{
	submit_bio_noacct(bio);
}

/*
 * Send the bio's range to the origin as a clone (op and flags opf, data
 * the bio's own pages) and wait for it.
 */
blk_status_t fr_origin_clone_wait(struct dm_fr *fr, struct bio *bio,
				  blk_opf_t opf)
{
	struct bio *clone;
	blk_status_t status;

	clone = bio_alloc_clone(fr->origin->bdev, bio, GFP_NOIO, &fr->bs);
	clone->bi_opf = opf;
	submit_bio_wait(clone);
	status = clone->bi_status;
	bio_put(clone);
	return status;
}

/* What the origin completed is durable once this returns 0. */
int fr_origin_flush(struct dm_fr *fr)
{
	return blkdev_issue_flush(fr->origin->bdev) ? -EIO : 0;
}

bool fr_origin_discards(struct dm_fr *fr)
{
	return bdev_max_discard_sectors(fr->origin->bdev);
}

/* map's answer for a bio that goes to the origin as it is. */
int fr_origin_remap(struct dm_fr *fr, struct bio *bio)
{
	bio_set_dev(bio, fr->origin->bdev);
	return DM_MAPIO_REMAPPED;
}
