/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel side of dm-fr: the target's state, and the narrow interfaces
 * between its files:
 *
 *   fr-target.c     table line, suspend/resume hooks, status, messages
 *   fr-io.c         map, stripe locks, bio <-> PM copies, deferred bios
 *   fr-fill.c       read fill: its buffer pool, reads and installs
 *   fr-load.c       DAX mapping, device registry, format/recovery
 *   fr-writeback.c  the writeback worker and the flush message
 *
 * The protocol itself lives in fr-core.c.
 */
#ifndef DM_FR_H
#define DM_FR_H

#include <linux/device-mapper.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <linux/percpu.h>
#include <linux/bio.h>
#include <linux/llist.h>

#include "fr-core.h"
#include "fr-fault.h"

#define DM_MSG_PREFIX "fr"

/*
 * Slot locks are striped: STRIPE_SLOTS consecutive slots share a mutex, and
 * the stripes repeat every NR_STRIPES. A bio stays inside one region, whose
 * slots are consecutive, so it needs only a few stripes, taken in ascending
 * index order.
 */
#define FR_NR_STRIPES		1024
#define FR_STRIPE_SHIFT		4

struct fr_stripe {
	struct mutex lock;
	/*
	 * Bumped under the lock by writes and discards: what makes data read
	 * from the origin before it stale, or drops a copy of data the origin
	 * does not hold. Fills and writeback's clear_dirty change tags without
	 * bumping it: a clean copy (or a clean copy evicted by a fill) equals
	 * what the origin durably holds. A fill is installed and a mixed read's
	 * overlay trusted only if the epoch did not move since the origin read.
	 */
	u32 epoch;
} ____cacheline_aligned_in_smp;

/* Counters, per CPU so the I/O path shares no cache line for them. */
struct fr_stats {
	u64 read_hits;
	u64 read_misses;
	u64 write_hits;
	u64 write_misses;
	u64 forced_writebacks;
	u64 writeback_rounds;
	u64 chunks_written_back;
	u64 origin_errors;
	u64 pm_errors;
	u64 read_fills;
};

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
	/* Chunks whose PM data could not be read, and whether victim was. */
	u32 unreadable;
	u64 victim;
	bool victim_unreadable;
};

struct fr_fill;

enum fr_io_kind {
	FR_IO_NONE,
	FR_IO_WRITE,		/* needs a dirty chunk cleaned first */
	FR_IO_READ_MIXED,	/* part PM, part origin */
	FR_IO_WRITETHROUGH,	/* cleaner mode: straight to the origin */
	FR_IO_DISCARD,		/* drop from PM, then discard the origin */
};

/* Per-bio data. */
struct fr_io {
	struct delayed_work work;	/* delayed only to retry a write */
	struct dm_fr *fr;
	enum fr_io_kind kind;
	unsigned int tries;		/* FR_IO_WRITE: origin refusals so far */
	struct fr_fill *fills;		/* fill reads only */
	struct bvec_iter fill_iter;	/* the fill read's data */
};

/* The stripes a bio's chunks map to (one, most of the time). */
struct fr_lockset {
	int single;		/* the only stripe, or -1: see map */
	DECLARE_BITMAP(map, FR_NR_STRIPES);
};

/*
 * Lock order, outermost first (a lock is only ever taken with none of the
 * later ones held):
 *
 *   fr_targets_lock   the device registry: constructor and destructor only,
 *                     nothing taken inside it
 *   flush_lock        one flush message at a time; postsuspend takes it
 *                     alone, to wait for a flush that started during suspend
 *   wb_lock           every origin write of cached data and every origin
 *                     write that bypasses PM: writeback batches, forced
 *                     writebacks, cleaner write-through, discards
 *   stripe locks      the slots' locks; several only in ascending index
 *                     order (fr_lock_range), writeback one at a time
 *
 * No stripe lock is held across origin I/O, except by the last try of a
 * mixed read (fr_deferred_read_mixed). wb_lock is held across origin I/O
 * by design: a staged chunk's origin write must not be overtaken.
 */
struct dm_fr {
	struct dm_target *ti;
	struct mapped_device *md;
	struct list_head node;		/* in fr_targets */
	struct dm_dev *origin;
	struct dm_dev *pm_dev;
	void *pm_addr;
	u64 pm_bytes;
	/* Physical pages of the PM, so no other target maps them too. */
	unsigned long pm_pfn, pm_pages;

	struct fr_cache cache;
	unsigned long *valid_bits;
	unsigned long *dirty_bits;
	struct fr_stripe *stripes;

	/* Formatted or recovered (at the first preresume, not in the ctr). */
	bool pm_ready;
	struct fr_format_params fmt;

	/* Table arguments, kept to print the table back as given. */
	bool fresh;
	u32 arg_chunk_size, arg_region_size;
	u64 arg_stride;
	bool read_fill;
	/* Identity: the PM's superblock must carry these (when given). */
	bool has_uuid;
	u8 arg_uuid[16];
	char arg_origin_id[FR_ORIGIN_ID_LEN];	/* "" when not given */

	/* Tunables (table arguments, changed at run time by messages). */
	unsigned int writeback_period_ms;
	unsigned int writeback_defer_ms;
	unsigned int high_watermark;
	unsigned int low_watermark;
	unsigned int writeback_jobs;
	bool cleaner;

	/* Deferred bios: those that must wait for origin I/O. */
	struct workqueue_struct *io_wq;
	struct bio_set bs;

	/* Read fill: a fixed pool of chunk buffers, installed by fill_work. */
	struct fr_fill *fills;
	unsigned int nr_fills;
	unsigned int fill_order;	/* of each fill's pages */
	unsigned long fill_busy;	/* one bit per fill in flight */
	struct llist_head fills_ready;
	struct work_struct fill_work;
	/*
	 * Odd while the origin is written around the cache (a discard, a
	 * cleaner write-through): fills that overlap that are dropped.
	 * Changed under wb_lock.
	 */
	unsigned int bypass_seq;

	/* Writeback. */
	struct workqueue_struct *wb_wq;
	struct delayed_work wb_work;
	struct mutex wb_lock;		/* origin writes of cached data */
	struct mutex flush_lock;	/* one flush message at a time */
	struct fr_stage wb_stage;
	struct fr_wb_snap *wb_snaps;
	u64 wb_cursor;
	unsigned int wb_backoff_ms;
	/* Deferral (writeback_work): what the last tick saw, and when. */
	u64 wb_seen_writes, wb_seen_forced;
	unsigned long wb_swept_at;	/* start of the last full pass */
	unsigned long wb_busy_at;	/* the last tick that saw writes */
	unsigned long wb_collided_at;	/* ... and a forced writeback */
	unsigned long wb_polled_at;	/* the last watermark check */
	bool wb_stopped;		/* suspended or being destroyed */
	u32 wb_unreadable;		/* skipped by the last pass: PM errors */
	bool degraded;			/* the last writeback failed */

	struct fr_stats __percpu *stats;
};

#define fr_stat_add(fr, field, n) this_cpu_add((fr)->stats->field, (n))

static inline struct fr_stripe *fr_stripe_of(struct dm_fr *fr, fr_slot_t s)
{
	return &fr->stripes[(from_slot(s) >> FR_STRIPE_SHIFT) &
			    (FR_NR_STRIPES - 1)];
}

/* The first and last origin chunk a bio covers. */
static inline void fr_bio_chunks(struct dm_fr *fr, struct bio *bio, u64 *first,
				 u64 *last)
{
	u32 shift = fr->cache.geo.chunk_shift;

	*first = bio->bi_iter.bi_sector >> shift;
	*last = (bio_end_sector(bio) - 1) >> shift;
}

/* fr-io.c */
int fr_map(struct dm_target *ti, struct bio *bio);

/* fr-fill.c */
u64 fr_range_epoch(struct dm_fr *fr, struct fr_lockset *ls);
u32 fr_fill_plan(struct dm_fr *fr, struct bio *bio, struct fr_io *io);
void fr_fill_read(struct dm_fr *fr, struct bio *bio, struct fr_io *io);
int fr_fill_setup(struct dm_fr *fr);
void fr_fill_teardown(struct dm_fr *fr);

/* fr-load.c */
int fr_map_pm(struct dm_fr *fr, char **error);
int fr_claim_devices(struct dm_fr *fr, char **error);
void fr_release_devices(struct dm_fr *fr);
int fr_alloc_bitmaps(struct dm_fr *fr, const struct fr_geometry *g);
int fr_prepare_format(struct dm_fr *fr, char **error);
int fr_prepare_recover(struct dm_fr *fr, char **error);
int fr_init_pm(struct dm_fr *fr);

/* fr-writeback.c */
int fr_writeback_setup(struct dm_fr *fr);
void fr_writeback_teardown(struct dm_fr *fr);
void fr_writeback_start(struct dm_fr *fr);
void fr_writeback_stop(struct dm_fr *fr);
void fr_writeback_kick(struct dm_fr *fr);
int fr_writeback_all(struct dm_fr *fr);
int fr_writeback_set_jobs(struct dm_fr *fr, unsigned int jobs);
int fr_writeback_from(struct dm_fr *fr, fr_pchunk_t victim);

#endif /* DM_FR_H */
