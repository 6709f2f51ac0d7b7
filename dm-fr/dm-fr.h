/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel side of dm-fr: the target's state, and the narrow interfaces
 * between its files:
 *
 *   fr-target.c     constructor, suspend/resume hooks, status, messages
 *   fr-table.c      the table line's optional arguments and the tunables
 *   fr-io.c         map, bio <-> PM copies, deferred bios
 *   fr-stripe.c     the stripe (slot) locks and the epoch rule (fr-stripe.h)
 *   fr-fill.c       read fill: its buffer pool, reads and installs
 *   fr-origin.c     every bio sent to the origin
 *   fr-pmdev.c      the PM device: claim, DAX access, bad pages, clearing
 *   fr-load.c       origin identity, format/recovery
 *   fr-badpm.c      what the cache makes of bad PM: retire, clear, forget
 *   fr-writeback.c  the writeback worker, victim writes, the flush message
 *   fr-stage.c      a writeback's stage: PM to origin
 *
 * The protocol itself lives in core/ (fr-slot.c, fr-wb.c, fr-recover.c).
 */
#ifndef DM_FR_H
#define DM_FR_H

#include <linux/device-mapper.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <linux/percpu.h>
#include <linux/bio.h>
#include <linux/llist.h>
#include <linux/wait.h>

#include "fr-core.h"
#include "fr-fault.h"
#include "fr-stripe.h"

#define DM_MSG_PREFIX "fr"

/* Prefetch: how many recent windows are remembered (fr-fill.c). */
#define FR_PREFETCH_SEEN	64

/*
 * Locking, outermost first: a lock is only taken with none of the later
 * ones held (lockdep checks the order on a debug kernel).
 *
 *   fr_targets_lock  (fr-pmdev.c) the registry of constructed targets, in
 *                    the constructor and destructor only; inside it only
 *                    dax_read_lock, to walk an origin's pages
 *   flush_lock       one flush message at a time; fr_writeback_stop takes
 *                    it alone, to wait for a flush that began before it
 *   wb.victim_lock   (rw_semaphore) read by a victim write (a write's own
 *                    forced writeback of its victims, fr_writeback_victim
 *                    and fr_writeback_from), which takes no other lock of
 *                    this list but the slot lock; written by every
 *                    origin write that bypasses PM and by the flush
 *                    message, so none runs beside one
 *   wb.lock          writeback batches (periodic, flush) and every origin
 *                    write that bypasses PM: cleaner write-through, discards,
 *                    writes of a chunk whose slot bad PM cannot hold. It
 *                    also guards wb.stage, wb.snaps and the bypass sequence.
 *                    A batch and victim writes run side by side; the
 *                    core's pins keep them off each other's slots
 *   stripe locks     the slots' locks, all taken in fr-stripe.c (its
 *                    header says how several are held at once): several
 *                    only by fr_lock_range and fr_lock_slot_span, in
 *                    ascending stripe index, under a lockdep map that
 *                    excludes nothing; every other user (writeback's ops,
 *                    fill installs, the discard's slot walk) holds one
 *
 * Sleeping: no stripe lock is held across origin I/O, except by the last
 * try of a mixed read (fr_deferred_read_mixed), which holds its range
 * across one origin read so that writes cannot starve it. wb.lock is held
 * across origin I/O by design: a staged chunk's origin write must not be
 * overtaken. Suspend (postsuspend) cancels the writeback work and flushes
 * io_wq holding none of these locks.
 *
 * The epoch rule, which lets origin reads run without the stripe locks,
 * is in fr-stripe.h.
 */

/* Counters, per CPU so the I/O path shares no cache line for them. */
struct fr_stats {
	u64 read_hits;
	u64 read_misses;
	u64 write_hits;
	u64 write_misses;
	u64 forced_writebacks;
	u64 pinned_waits;
	u64 writeback_rounds;
	u64 chunks_written_back;
	u64 origin_errors;
	u64 pm_errors;
	u64 read_fills;
	u64 prefetched;
	u64 around_stream;
	u64 around_background;
	u64 around_refused;
	u64 around_waited;
	u64 write_bios;		/* not a status field: the writeback's sample */
};

struct fr_stage;
struct fr_bufs;
struct fr_victims;
struct fr_fill;

enum fr_io_kind {
	FR_IO_NONE,
	FR_IO_WRITE,		/* needs a dirty chunk cleaned first */
	FR_IO_READ_MIXED,	/* part PM, part origin */
	FR_IO_WRITETHROUGH,	/* cleaner mode: straight to the origin */
	FR_IO_DISCARD,		/* drop from PM, then discard the origin */
	FR_IO_BYPASS,		/* one chunk whose slot PM cannot hold */
	FR_IO_AROUND,		/* admission: remapped to the origin, FUA */
	FR_IO_AROUND_WAIT,	/* the same once its slots are unpinned */
};

/* Why a write goes around PM (fr-admit.c). */
enum fr_admit_reason {
	FR_ADMIT_PM,		/* it does not: PM takes it */
	FR_ADMIT_STREAM,	/* a sequential stream past admit_stream_kib */
	FR_ADMIT_BACKGROUND,	/* page-cache writeback past admit_background */
};

/* Per-bio data. */
struct fr_io {
	struct delayed_work work;	/* delayed only to retry a write */
	struct dm_fr *fr;
	enum fr_io_kind kind;
	unsigned int tries;		/* FR_IO_WRITE: origin refusals so far */
	enum fr_admit_reason admit;	/* FR_IO_AROUND_WAIT: why around */
	unsigned long around_until;	/* FR_IO_AROUND_WAIT: then to PM */
	struct fr_fill *fills;		/* fill reads only */
	struct bvec_iter fill_iter;	/* the fill read's data */
	u64 around_sector;		/* FR_IO_AROUND: what it pinned */
	u32 around_sectors;
	struct llist_node around_done;	/* FR_IO_AROUND: to be unpinned */
};

/* Known bad PM pages, as found when it was accessed (fr-pmdev.c). */
struct fr_bad_range {
	u64 page;		/* PM page index */
	u64 nr;
};

struct fr_badpm {
	struct fr_bad_range *ranges;	/* ascending, merged */
	u32 nr, max;
	u64 pages;
};

/* The PM device, accessed whole and linearly with DAX (fr-pmdev.c). */
struct fr_pmdev {
	struct dm_dev *dev;
	void *addr;
	u64 bytes;
	pgoff_t pgoff;			/* its first page on its dax device */
	/* Its physical pages, so no other target uses them too. */
	unsigned long pfn, pages;
	/* Pages left out of DAX access (their bitmaps: cache.bad). */
	struct fr_badpm bad;
};

/* One target. Its locks and their order: above fr_stripe. */
/*
 * The read fills' and prefetch's state, owned by fr-fill.c (fr_fill_create,
 * fr_fill_destroy): a fixed pool of chunk buffers, installed by work.
 */
struct fr_fills {
	struct fr_fill *pool;
	unsigned int pool_size;
	unsigned int order;		/* of each fill's pages */
	unsigned long busy;		/* one bit per fill in flight */
	struct llist_head ready;
	struct work_struct work;
	/* Prefetch: recent windows, reads and buffers in flight. */
	u64 prefetch_seen[FR_PREFETCH_SEEN];
	atomic_t prefetch_reads;
	atomic_t prefetch_bufs;
	unsigned int prefetch_max_bufs;
	wait_queue_head_t prefetch_wait;
};

/*
 * The writeback's state, owned by fr-writeback.c (created by
 * fr_writeback_create, run by fr_writeback_start and fr_writeback_stop,
 * freed by fr_writeback_destroy); the core sets and clears the pins.
 */
struct fr_writeback {
	struct workqueue_struct *wq;
	struct delayed_work work;
	struct mutex lock;		/* origin writes of cached data */
	struct rw_semaphore victim_lock;	/* read: a victim write */
	unsigned long *pinned;		/* cache.pinned: origin writes of PM */
	wait_queue_head_t pin_wait;	/* a pin cleared */
	struct fr_victims *victim_stages;
	struct fr_bufs *bufs[2];	/* the stages' DRAM, by owner (fr-stage.c) */
	struct fr_stage *stage;		/* the worker's batches' */
	struct fr_wb_snap *snaps;
	u64 cursor;
	u64 full_cursor;	/* the full slots' batches' own */
	atomic_t asleep;	/* nothing dirty: no tick (fr_writeback_wake) */
	unsigned int backoff_ms;
	/* Deferral (writeback_work): what the last tick saw, and when. */
	u64 seen_chunks, seen_bios, seen_forced;
	unsigned long passed_at;	/* start of the last full pass */
	unsigned long busy_at;		/* the last tick that saw writes */
	unsigned long full_at;		/* the last scan for full slots */
	/* Drain (wb_sample): the data outgrow the PM. */
	u64 sample_chunks, sample_bios, sample_forced;
	bool draining;
	u64 drains;			/* times a drain began (status) */
	bool stopped;			/* suspended or being destroyed */
	u32 unreadable;			/* skipped by the last pass: PM errors */
};

/* Sequential write streams tracked at once (fr-admit.c). */
#define FR_STREAMS	16
/* Where a sequential write stream ends, and how long it is. */
struct fr_stream {
	u64 end;
	u64 bytes;
	unsigned long seen;		/* jiffies of its last write */
};

struct fr_admit {
	struct fr_stream streams[FR_STREAMS];
	atomic_t in_flight;		/* writes around PM, from fr_admit() */
	bool paused;			/* a flush's sweep: none may start */
	/* Writes around PM done on the origin, unpinned by work. */
	struct llist_head done;
	struct work_struct work;
	struct workqueue_struct *wq;
	/* Writes around whose slots are pinned, asked again by retry. */
	spinlock_t wait_lock;
	struct bio_list waiting;
	unsigned int nr_waiting;
	struct delayed_work retry;
};

struct dm_fr {
	struct dm_target *ti;
	struct mapped_device *md;
	struct list_head node;		/* in fr_targets */
	struct dm_dev *origin;
	struct fr_pmdev pm;

	/* Its bitmaps are allocated (zeroed) in the constructor. */
	struct fr_cache cache;
	struct fr_stripes stripes;	/* slot locks, the epoch rule */

	/* Formatted or recovered (at the first preresume, not in the ctr). */
	bool pm_ready;
	struct fr_format_params fmt;
	/*
	 * The PM maps another origin length than the table's: resized to
	 * the table's after recovery (fr_init_pm, fr_resize()).
	 */
	bool resize;

	/* Table arguments, kept to print the table back as given. */
	bool fresh;
	bool drop_dirty;	/* fresh may format away dirty chunks */
	/*
	 * The dirty chunks of the table this one replaced, counted at its
	 * first resume: passed on (fr_live_dirty) while this table has not
	 * got the PM, because its resume was refused.
	 */
	u64 replaced_dirty;
	u32 arg_chunk_size, arg_region_size;
	u64 arg_stride;
	u32 arg_ways;
	bool read_fill;
	/* Identity: the PM's superblock must carry these (when given). */
	bool has_uuid;
	u8 arg_uuid[16];
	char arg_origin_id[FR_ORIGIN_ID_LEN];	/* "" when not given */

	/*
	 * Tunables (table arguments, changed at run time by messages), by
	 * enum fr_tunable_id (core/fr-interface.h): read with fr_tunable().
	 */
	unsigned int tunables[FR_NR_TUNABLES];
	bool cleaner;

	/* Deferred bios: those that must wait for origin I/O. */
	struct workqueue_struct *io_wq;
	struct bio_set bs;

	/* Read fill and prefetch: their own state (fr-fill.c). */
	struct fr_fills fills;

	/* Admission: writes sent around PM (fr-admit.c). */
	struct fr_admit admit;

	/* Writeback: its own state (fr-writeback.c, fr-stage.c). */
	struct fr_writeback wb;
	struct mutex flush_lock;	/* one flush message at a time */
	bool degraded;			/* the last writeback failed */

	struct fr_stats __percpu *stats;
};

/* A tunable's value now: it may change under the reader (the "set" message). */
#define fr_tunable(fr, name)	READ_ONCE((fr)->tunables[FR_TUNABLE_##name])

#define fr_stat_add(fr, field, n) this_cpu_add((fr)->stats->field, (n))

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
int fr_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error);

/* fr-origin.c */
struct bio *fr_origin_bio(struct dm_fr *fr, blk_opf_t opf, sector_t sector,
			  unsigned short nr_vecs, bio_end_io_t *end_io,
			  void *private);
void fr_origin_submit(struct bio *bio);
blk_status_t fr_origin_clone_wait(struct dm_fr *fr, struct bio *bio,
				  blk_opf_t opf);
int fr_origin_flush(struct dm_fr *fr);
bool fr_origin_discards(struct dm_fr *fr);
int fr_origin_remap(struct dm_fr *fr, struct bio *bio);

/* fr-admit.c */
enum fr_admit_reason fr_admit(struct dm_fr *fr, struct bio *bio);
void fr_admit_done(struct dm_fr *fr);
enum fr_around fr_admit_map(struct dm_fr *fr, struct bio *bio,
			    struct fr_io *io, enum fr_admit_reason r);
void fr_admit_defer(struct dm_fr *fr, struct fr_io *io, struct bio *bio,
		    enum fr_admit_reason r);
void fr_admit_kick(struct dm_fr *fr);
void fr_queue_write(struct dm_fr *fr, struct fr_io *io);
int fr_admit_remap(struct dm_fr *fr, struct bio *bio);
void fr_admit_end_io(struct dm_fr *fr, struct fr_io *io);
int fr_admit_create(struct dm_fr *fr);
void fr_admit_wait(struct dm_fr *fr);
void fr_admit_destroy(struct dm_fr *fr);
void fr_admit_pause(struct dm_fr *fr);
void fr_admit_resume(struct dm_fr *fr);

/* fr-fill.c */
u32 fr_fill_plan(struct dm_fr *fr, struct bio *bio, struct fr_io *io);
void fr_fill_read(struct dm_fr *fr, struct bio *bio, struct fr_io *io);
void fr_prefetch(struct dm_fr *fr, u64 first, u64 last);
void fr_prefetch_hit(struct dm_fr *fr, u64 first, u64 last);
void fr_prefetch_wait(struct dm_fr *fr);
int fr_fill_create(struct dm_fr *fr);
void fr_fill_destroy(struct dm_fr *fr);

/* fr-pmdev.c */
int fr_pmdev_create(struct dm_fr *fr, char **error);
void fr_pmdev_destroy(struct dm_fr *fr);
bool fr_pmdev_pages_accessible(struct dm_fr *fr, u64 pg, long n);
bool fr_pmdev_clear_page(struct dm_fr *fr, u64 pg);
int fr_claim_devices(struct dm_fr *fr, char **error);
void fr_release_devices(struct dm_fr *fr);
u64 fr_live_dirty(struct dm_fr *fr);

/* fr-table.c */
/*
 * The optional arguments of the printed table, each decided once: the
 * words and their count. At most 324 characters (uuid, a 63-character
 * origin_id, every value at its widest, both flags).
 */
struct fr_table_args {
	char buf[384];
	size_t len;
	unsigned int n;
};

void fr_tunables_default(struct dm_fr *fr);
int fr_parse_features(struct dm_fr *fr, struct dm_arg_set *as, char **error);
int fr_tunable_set(struct dm_fr *fr, const char *name, const char *value,
		   const char **why);
void fr_table_args(struct dm_fr *fr, struct fr_table_args *a);

/* fr-load.c */
int fr_alloc_bitmaps(struct dm_fr *fr, const struct fr_geometry *g);
int fr_prepare_format(struct dm_fr *fr, char **error);
int fr_prepare_recover(struct dm_fr *fr, char **error);
int fr_init_pm(struct dm_fr *fr);

/* fr-badpm.c */
int fr_badpm_create(struct dm_fr *fr, char **error);
u64 fr_badpm_clear(struct dm_fr *fr);
u64 fr_badpm_forget(struct dm_fr *fr);
u64 fr_badpm_retired(struct dm_fr *fr);
u64 fr_badpm_lost(struct dm_fr *fr);
void fr_badpm_destroy(struct dm_fr *fr);

/* fr-writeback.c */
int fr_writeback_create(struct dm_fr *fr);
void fr_writeback_destroy(struct dm_fr *fr);
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
	if (unlikely(atomic_read(&fr->wb.asleep)))
		fr_writeback_wake(fr);
}
int fr_writeback_all(struct dm_fr *fr);
void fr_writeback_final(struct dm_fr *fr);
int fr_writeback_set_jobs(struct dm_fr *fr, unsigned int jobs);
int fr_writeback_victim(struct dm_fr *fr, fr_pchunk_t victim);
int fr_writeback_from(struct dm_fr *fr, fr_pchunk_t victim, fr_slot_t last);

#endif /* DM_FR_H */
