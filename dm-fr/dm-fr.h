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
 * Slot locks are striped: 2^FR_STRIPE_SHIFT consecutive slots share a
 * mutex, and the stripes repeat every FR_NR_STRIPES. A bio stays inside one
 * region, whose slots are consecutive, so it needs only a few stripes (at
 * most 65, for a region of 1024 chunks), taken in ascending index order.
 */
#define FR_NR_STRIPES		1024
#define FR_STRIPE_SHIFT		4

/*
 * Locking, outermost first: a lock is only taken with none of the later
 * ones held (lockdep checks the order on a debug kernel).
 *
 *   fr_targets_lock  (fr-load.c) the registry of constructed targets, in
 *                    the constructor and destructor only; inside it only
 *                    dax_read_lock, to walk an origin's pages
 *   flush_lock       one flush message at a time; fr_writeback_stop takes
 *                    it alone, to wait for a flush that began before it
 *   wb_lock          every origin write of cached data and every origin
 *                    write that bypasses PM: writeback batches (periodic,
 *                    flush, forced), cleaner write-through, discards, writes
 *                    of a chunk whose slot bad PM cannot hold. It also
 *                    guards wb_stage, wb_snaps and the changes of bypass_seq
 *   stripe_range     not a lock: a lockdep map held while fr_lock_range
 *                    holds several stripes (below)
 *   stripe locks     the slots' locks. Several at once only in
 *                    fr_lock_range (and fr_lock_slots, fr-badpm.c, which
 *                    follows it), in ascending stripe index; every other
 *                    user (writeback's ops, fill installs, the discard's slot
 *                    walk) holds one at a time
 *
 * The stripe mutexes share one lockdep class. Holding several is safe
 * because fr_lock_range and fr_lock_slots are the only places that do, and
 * they take them in ascending index order, so two holders cannot wait on
 * each other. lockdep cannot see that rule; it is told with
 * mutex_lock_nest_lock() under stripe_range, as ww_mutexes nest under their
 * acquire context, which also counts a whole range as one held lock (a
 * range may be longer than lockdep's 48-lock stack). stripe_range excludes
 * nothing and costs nothing without lockdep.
 *
 * Sleeping: no stripe lock is held across origin I/O, except by the last
 * try of a mixed read (fr_deferred_read_mixed), which holds its range
 * across one origin read so that writes cannot starve it. wb_lock is held
 * across origin I/O by design: a staged chunk's origin write must not be
 * overtaken. Suspend (postsuspend) cancels the writeback work and flushes
 * io_wq holding none of these locks.
 *
 * The epoch rule. What is read from the origin without the stripe locks (a
 * fill's chunk, a mixed read's origin part) is used only if no change that
 * makes it stale happened meanwhile:
 *
 *   - fr_stripe.epoch is bumped, under the stripe's lock, by every write
 *     that may have changed PM (all but FR_NEED_CLEAN, which changes
 *     nothing) and every discard: what puts on PM data the origin does not
 *     hold, or drops any copy.
 *   - fr_stripe.fills is bumped, under the lock, by every fill installed:
 *     a fill may evict a clean copy. Fills themselves do not check it (a
 *     clean copy equals the origin, so its loss makes no fill in flight
 *     stale); a mixed read does (below).
 *   - Neither moves for writeback's clear_dirty: PM keeps the copy, the
 *     origin now holds it too.
 *   - bypass_seq is odd while the origin is written around the cache (a
 *     discard, a cleaner write-through, a bad-PM bypass write); it changes
 *     only under wb_lock.
 *
 * A fill is installed only if its stripe's epoch and bypass_seq (even) are
 * those it saw at map (fr_fill_work). A mixed read's overlay is trusted only
 * if neither epoch nor fills moved in its range across its unlocked origin
 * read (fr_range_epoch): then every chunk PM held is still there to overlay
 * what the origin returned, however old (writeback may have written the
 * origin during the read).
 */
struct fr_stripe {
	struct mutex lock;
	u32 epoch;		/* see "The epoch rule" above */
	u32 fills;		/* fills installed: the epoch rule */
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
	FR_IO_BYPASS,		/* one chunk whose slot PM cannot hold */
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

/* Known bad PM pages, as found when it was mapped (fr-badpm.c). */
struct fr_bad_range {
	u64 page;		/* PM page index */
	u64 nr;
};

struct fr_badpm {
	struct fr_bad_range *ranges;	/* ascending, merged */
	u32 nr, max;
	u64 pages;
};

/* One target. Its locks and their order: above fr_stripe. */
struct dm_fr {
	struct dm_target *ti;
	struct mapped_device *md;
	struct list_head node;		/* in fr_targets */
	struct dm_dev *origin;
	struct dm_dev *pm_dev;
	void *pm_addr;
	u64 pm_bytes;
	pgoff_t pm_pgoff;		/* the PM's first page on its dax device */
	/* Bad pages found at load (their bitmaps: cache.bad, fr-badpm.c). */
	struct fr_badpm badpm;
	/* Physical pages of the PM, so no other target maps them too. */
	unsigned long pm_pfn, pm_pages;

	/* Its bitmaps are allocated (zeroed) in the constructor. */
	struct fr_cache cache;
	struct fr_stripe *stripes;
	struct {
		struct lockdep_map dep_map;
	} stripe_range;			/* lockdep only: fr_lock_range */

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
	/* The epoch rule (above): changed under wb_lock (fr_bypass_step). */
	unsigned int bypass_seq;

	/* Writeback. */
	struct workqueue_struct *wb_wq;
	struct delayed_work wb_work;
	struct mutex wb_lock;		/* origin writes of cached data */
	struct mutex flush_lock;	/* one flush message at a time */
	struct fr_stage wb_stage;
	struct fr_wb_snap *wb_snaps;
	u64 wb_cursor;
	atomic_t wb_asleep;	/* nothing dirty: no tick (fr_writeback_wake) */
	unsigned int wb_backoff_ms;
	/* Deferral (writeback_work): what the last tick saw, and when. */
	u64 wb_seen_writes, wb_seen_forced;
	unsigned long wb_swept_at;	/* start of the last full pass */
	unsigned long wb_busy_at;	/* the last tick that saw writes */
	unsigned long wb_collided_at;	/* ... and a forced writeback */
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

/*
 * lockdep: the caller holds the stripe locks of chunks first..last
 * (fr_lock_range). Compiled out without lockdep.
 */
static inline void fr_assert_range_locked(struct dm_fr *fr, u64 first,
					  u64 last)
{
	u64 k;

	if (!IS_ENABLED(CONFIG_LOCKDEP))
		return;
	for (k = first; k <= last; k++)
		lockdep_assert_held(&fr_stripe_of(fr, fr_slot_of(&fr->cache.geo,
								to_ochunk(k)))->lock);
}

/* fr-io.c */
void fr_stripes_init(struct dm_fr *fr);
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

/* fr-badpm.c */
int fr_badpm_map(struct dm_fr *fr, u64 nr_pages, char **error);
int fr_badpm_apply(struct dm_fr *fr, char **error);
u64 fr_badpm_clear(struct dm_fr *fr);
u64 fr_badpm_forget(struct dm_fr *fr);
u64 fr_badpm_retired(struct dm_fr *fr);
u64 fr_badpm_lost(struct dm_fr *fr);
void fr_badpm_free(struct dm_fr *fr);

/* fr-writeback.c */
int fr_writeback_setup(struct dm_fr *fr);
void fr_writeback_teardown(struct dm_fr *fr);
void fr_writeback_start(struct dm_fr *fr);
void fr_writeback_stop(struct dm_fr *fr);
void fr_writeback_kick(struct dm_fr *fr);
void fr_writeback_wake(struct dm_fr *fr);

/*
 * After a write that dirtied PM chunks, before its bio completes: wake the
 * writeback worker if it sleeps.
 */
static inline void fr_writeback_note_dirty(struct dm_fr *fr)
{
	/* Dirty bits before wb_asleep; pairs with wb_try_sleep(). */
	smp_mb();
	if (unlikely(atomic_read(&fr->wb_asleep)))
		fr_writeback_wake(fr);
}
int fr_writeback_all(struct dm_fr *fr);
int fr_writeback_set_jobs(struct dm_fr *fr, unsigned int jobs);
int fr_writeback_from(struct dm_fr *fr, fr_pchunk_t victim);

#endif /* DM_FR_H */
