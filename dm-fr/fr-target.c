// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-fr: persistent memory as a first responder for a block device.
 *
 * Table line: <origin dev> <pm dev> [<#opt args> <opt args>...]
 * (docs/admin-guide.md and docs/target-interface.md describe every argument,
 * status field and message).
 *
 * This file is the target's face to device-mapper: the constructor and
 * destructor, the suspend and resume hooks, status and messages (the table
 * line's optional arguments: fr-table.c). The rest: dm-fr.h's list
 * of the files (bio path, locks, PM device, origin I/O, writeback, core).
 */
#include <linux/module.h>
#include <linux/blkdev.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>

#include "dm-fr.h"
#include "fr-fault.h"

/* The table's mode: fmode_t before 6.5, blk_mode_t since. */
#ifdef BLK_OPEN_WRITE
#define FR_MODE_WRITE		BLK_OPEN_WRITE
#else
#define FR_MODE_WRITE		FMODE_WRITE
#endif

static void fr_free(struct dm_fr *fr)
{
	fr_release_devices(fr);
	if (fr->wb.wq)
		fr_writeback_destroy(fr);
	if (fr->io_wq)
		destroy_workqueue(fr->io_wq);
	fr_admit_destroy(fr);
	bioset_exit(&fr->bs);
	free_percpu(fr->stats);
	fr_fill_destroy(fr);
	fr_stripes_destroy(&fr->stripes);
	kvfree(fr->cache.valid_bits);
	kvfree(fr->cache.dirty_bits);
	fr_badpm_destroy(fr);
	fr_pmdev_destroy(fr);
	if (fr->pm.dev)
		dm_put_device(fr->ti, fr->pm.dev);
	if (fr->origin)
		dm_put_device(fr->ti, fr->origin);
	kfree(fr);
}

static int fr_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct dm_fr *fr;
	int r;

	if (argc < 2) {
		ti->error = "Requires <origin dev> <pm dev> [<#opt args> <opt args>...]";
		return -EINVAL;
	}
	/*
	 * Even a clean load writes: recovery repairs and rewrites tags on the
	 * PM, reads fill it, writeback writes the origin. Refused rather than
	 * half honoured (docs/target-interface.md).
	 */
	if (!(dm_table_get_mode(ti->table) & FR_MODE_WRITE)) {
		ti->error = "Read-only tables are not supported (dm-fr writes the PM and the origin)";
		return -EROFS;
	}
	fr = kzalloc(sizeof(*fr), GFP_KERNEL);
	if (!fr) {
		ti->error = "Cannot allocate target context";
		return -ENOMEM;
	}
	fr->ti = ti;
	INIT_LIST_HEAD(&fr->node);
	fr_tunables_default(fr);

	r = dm_get_device(ti, dm_shift_arg(&as), dm_table_get_mode(ti->table),
			  &fr->origin);
	if (r) {
		ti->error = "Origin device lookup failed";
		goto bad;
	}
	r = dm_get_device(ti, dm_shift_arg(&as), dm_table_get_mode(ti->table),
			  &fr->pm.dev);
	if (r) {
		ti->error = "PM device lookup failed";
		goto bad;
	}
	if (fr->pm.dev->bdev == fr->origin->bdev) {
		ti->error = "Origin and PM are the same device";
		r = -EINVAL;
		goto bad;
	}
	if (bdev_read_only(fr->origin->bdev) ||
	    bdev_read_only(fr->pm.dev->bdev)) {
		ti->error = bdev_read_only(fr->origin->bdev) ?
			    "Origin device is read-only" :
			    "PM device is read-only";
		r = -EROFS;
		goto bad;
	}
	r = fr_parse_features(fr, &as, &ti->error);
	if (r)
		goto bad;
	if (as.argc) {
		ti->error = "Trailing arguments after the optional group";
		r = -EINVAL;
		goto bad;
	}
	if (ti->len > bdev_nr_sectors(fr->origin->bdev)) {
		ti->error = "Origin device is smaller than the target";
		r = -EINVAL;
		goto bad;
	}
	r = fr_pmdev_create(fr, &ti->error);
	if (r)
		goto bad;
	r = fr_claim_devices(fr, &ti->error);
	if (r)
		goto bad;
	/* Checked again at the first resume, when the count is final. */
	if (fr->fresh && !fr->drop_dirty && fr_live_dirty(fr)) {
		ti->error = "PM holds dirty data of this device's live table (flush it first, or add drop_dirty)";
		r = -EBUSY;
		goto bad;
	}

	r = fr->fresh ? fr_prepare_format(fr, &ti->error) :
			fr_prepare_recover(fr, &ti->error);
	if (r)
		goto bad;

	r = -ENOMEM;
	if (fr_alloc_bitmaps(fr, &fr->cache.geo)) {
		ti->error = "Cannot allocate chunk bitmaps";
		goto bad;
	}
	r = fr_badpm_create(fr, &ti->error);
	if (r)
		goto bad;
	r = -ENOMEM;
	fr->stats = alloc_percpu(struct fr_stats);
	if (fr_stripes_create(&fr->stripes) || !fr->stats) {
		ti->error = "Cannot allocate target state";
		goto bad;
	}
	r = bioset_init(&fr->bs, BIO_POOL_SIZE, 0, BIOSET_NEED_BVECS);
	if (r) {
		ti->error = "Cannot allocate bioset";
		goto bad;
	}
	fr->io_wq = alloc_workqueue("dm-fr-io", WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!fr->io_wq) {
		ti->error = "Cannot allocate I/O workqueue";
		r = -ENOMEM;
		goto bad;
	}
	r = fr_admit_create(fr);
	if (r) {
		ti->error = "Cannot allocate the admission workqueue";
		goto bad;
	}
	r = fr_fill_create(fr);
	if (r) {
		ti->error = "Cannot allocate read fill buffers";
		goto bad;
	}
	r = fr_writeback_create(fr);
	if (r) {
		ti->error = "Cannot set up writeback";
		goto bad;
	}

	r = dm_set_target_max_io_len(ti, (sector_t)fr->cache.geo.region_chunks <<
				     fr->cache.geo.chunk_shift);
	if (r) {
		ti->error = "Cannot set the maximum I/O size";
		goto bad;
	}
	/*
	 * No flush bios: a write is durable when it is acknowledged, so the
	 * device has no volatile write cache (fr_io_hints) and the block
	 * layer completes an empty flush, and strips PREFLUSH and FUA from a
	 * write, before device-mapper is entered. Every write that does not
	 * go to PM is sent to the origin with REQ_FUA.
	 */
	ti->num_flush_bios = 0;
	ti->num_discard_bios = 1;
	ti->per_io_data_size = sizeof(struct fr_io);
	ti->private = fr;
	return 0;

bad:
	fr_free(fr);
	return r;
}

static void fr_dtr(struct dm_target *ti)
{
	struct dm_fr *fr = ti->private;

	fr_fault_forget_data(fr);
	fr_free(fr);
}

/*
 * Writeback stops at its next batch boundary as soon as a suspend begins:
 * device-mapper waits for a running message (a flush) before postsuspend,
 * and a flush must not hold a suspend up for its whole length.
 */
static void fr_presuspend(struct dm_target *ti)
{
	struct dm_fr *fr = ti->private;

	WRITE_ONCE(fr->wb.stopped, true);
}

static void fr_presuspend_undo(struct dm_target *ti)
{
	fr_writeback_start(ti->private);
}

/*
 * No origin write of cached data after this, and no deferred bio. In
 * cleaner mode the dirty data is written back first (fr_writeback_final).
 */
static void fr_postsuspend(struct dm_target *ti)
{
	struct dm_fr *fr = ti->private;

	fr_writeback_stop(fr);
	fr_prefetch_wait(fr);
	flush_workqueue(fr->io_wq);
	fr_admit_wait(fr);
	if (READ_ONCE(fr->cleaner) && fr->pm_ready)
		fr_writeback_final(fr);
}

static int fr_preresume(struct dm_target *ti)
{
	struct dm_fr *fr = ti->private;
	int r;

	if (fr->pm_ready)
		return 0;
	/*
	 * The table this one replaces is suspended now, its count final
	 * (writes that reached it after this table was loaded count too). A
	 * fresh table is refused over them and formats nothing: a recovering
	 * table brings them back. A resume tried again finds no table to
	 * replace (the first one destroyed it): the count only grows.
	 */
	WRITE_ONCE(fr->replaced_dirty, max(fr->replaced_dirty,
					   fr_live_dirty(fr)));
	if (fr->fresh && !fr->drop_dirty && fr->replaced_dirty) {
		DMERR("%s: fresh table refused: the PM holds %llu dirty chunks of the table it replaces (flush first, or drop_dirty)",
		      dm_table_device_name(fr->ti->table), fr->replaced_dirty);
		return -EBUSY;
	}
	r = fr_init_pm(fr);
	if (r)
		return r;
	WRITE_ONCE(fr->pm_ready, true);
	fr_fault_set_data(fr, fr->cache.data,
			  fr->cache.geo.chunk_shift + FR_SECTOR_SHIFT);
	return 0;
}

static void fr_resume(struct dm_target *ti)
{
	fr_writeback_start(ti->private);
}

static void fr_sum_stats(struct dm_fr *fr, struct fr_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		struct fr_stats *s = per_cpu_ptr(fr->stats, cpu);

		sum->read_hits += s->read_hits;
		sum->read_misses += s->read_misses;
		sum->write_hits += s->write_hits;
		sum->write_misses += s->write_misses;
		sum->forced_writebacks += s->forced_writebacks;
		sum->pinned_waits += s->pinned_waits;
		sum->writeback_rounds += s->writeback_rounds;
		sum->chunks_written_back += s->chunks_written_back;
		sum->origin_errors += s->origin_errors;
		sum->pm_errors += s->pm_errors;
		sum->read_fills += s->read_fills;
		sum->prefetched += s->prefetched;
		sum->around_stream += s->around_stream;
		sum->around_background += s->around_background;
		sum->around_refused += s->around_refused;
		sum->around_waited += s->around_waited;
	}
}

/* The status fields of core/fr-status.h, in its order. */
static const struct {
	const char *name;
	bool keyed;
} fr_status_fields[FR_NR_STATUS] = {
#define FR_STATUS(n, since, k, json, what)				\
	[FR_STATUS_##n] = { #n, k },
#include "fr-status.h"
#undef FR_STATUS
};

/* The state word, then every field of the list (docs/target-interface.md). */
static unsigned int fr_status_info(struct dm_fr *fr, char *result,
				   unsigned int maxlen)
{
	const struct fr_geometry *g = &fr->cache.geo;
	unsigned int sz = 0, i;
	struct fr_stats s;
	/* (a field of the list given no value here would print 0) */
	u64 v[FR_NR_STATUS] = { 0 };

	fr_sum_stats(fr, &s);
	v[FR_STATUS_chunk_sectors] = g->chunk_sectors;
	v[FR_STATUS_chunks_total] = g->nr_chunks;
	v[FR_STATUS_chunks_valid] = fr_count_valid(&fr->cache);
	v[FR_STATUS_chunks_dirty] = fr_count_dirty(&fr->cache);
	v[FR_STATUS_read_hits] = s.read_hits;
	v[FR_STATUS_read_misses] = s.read_misses;
	v[FR_STATUS_write_hits] = s.write_hits;
	v[FR_STATUS_write_misses] = s.write_misses;
	v[FR_STATUS_forced_writebacks] = s.forced_writebacks;
	v[FR_STATUS_writeback_rounds] = s.writeback_rounds;
	v[FR_STATUS_chunks_written_back] = s.chunks_written_back;
	v[FR_STATUS_origin_errors] = s.origin_errors;
	v[FR_STATUS_pm_errors] = s.pm_errors;
	v[FR_STATUS_read_fills] = s.read_fills;
	v[FR_STATUS_cleaner] = READ_ONCE(fr->cleaner) ? 1 : 0;
	v[FR_STATUS_unreadable] = READ_ONCE(fr->wb.unreadable);
	v[FR_STATUS_bad_chunks] = fr_badpm_retired(fr);
	v[FR_STATUS_lost_slots] = fr_badpm_lost(fr);
	v[FR_STATUS_prefetched] = s.prefetched;
	v[FR_STATUS_pinned_waits] = s.pinned_waits;
	v[FR_STATUS_drains] = READ_ONCE(fr->wb.drains);
	v[FR_STATUS_around_stream] = s.around_stream;
	v[FR_STATUS_around_background] = s.around_background;
	v[FR_STATUS_around_refused] = s.around_refused;
	v[FR_STATUS_around_waited] = s.around_waited;
	v[FR_STATUS_set_ways] = g->ways;

	DMEMIT("%s", READ_ONCE(fr->degraded) ? "degraded" : "ok");
	for (i = 0; i < FR_NR_STATUS; i++) {
		if (fr_status_fields[i].keyed)
			DMEMIT(" %s=%llu", fr_status_fields[i].name, v[i]);
		else
			DMEMIT(" %llu", v[i]);
	}
	return sz;
}

static void fr_status(struct dm_target *ti, status_type_t type,
		      unsigned int status_flags, char *result,
		      unsigned int maxlen)
{
	struct dm_fr *fr = ti->private;
	struct fr_table_args args;
	unsigned int sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		sz = fr_status_info(fr, result, maxlen);
		break;
	case STATUSTYPE_TABLE:
		fr_table_args(fr, &args);
		DMEMIT("%s %s %u%s", fr->origin->name, fr->pm.dev->name, args.n,
		       args.buf);
		break;
	case STATUSTYPE_IMA:
		*result = '\0';
		break;
	}
}

/* Messages: one handler per verb. */

static int msg_flush(struct dm_fr *fr, unsigned int argc, char **argv,
		     const char **why)
{
	int r;

	if (argc != 1) {
		*why = "flush takes no arguments";
		return -EINVAL;
	}
	r = fr_writeback_all(fr);
	if (!r && fr_badpm_lost(fr)) {
		/* They may hold dirty data that is on the origin nowhere. */
		*why = "slots whose PM tags are unreadable may hold dirty data (status: lost_slots; message forget_unreadable)";
		return -EHWPOISON;
	}
	if (r == -EBUSY)
		*why = "the device is suspended, or was suspended during the flush";
	else if (r == -EINTR)
		*why = "interrupted: what was written back stays written back";
	else if (r == -EHWPOISON)
		*why = "the data of the dirty chunks left cannot be read from PM (status: unreadable)";
	else if (r)
		*why = "the origin failed a writeback";
	return r;
}

static int msg_cleaner(struct dm_fr *fr, unsigned int argc, char **argv,
		       const char **why)
{
	if (argc == 2 && !strcasecmp(argv[1], "on")) {
		WRITE_ONCE(fr->cleaner, true);
	} else if (argc == 2 && !strcasecmp(argv[1], "off")) {
		WRITE_ONCE(fr->cleaner, false);
	} else {
		*why = "usage: cleaner on|off";
		return -EINVAL;
	}
	fr_writeback_kick(fr);
	return 0;
}

static int msg_forget_unreadable(struct dm_fr *fr, unsigned int argc,
				 char **argv, const char **why)
{
	u64 n;

	if (argc != 1) {
		*why = "forget_unreadable takes no arguments";
		return -EINVAL;
	}
	n = fr_badpm_forget(fr);
	DMWARN("%s: forget_unreadable: %llu unreadable dirty chunks and lost slots declared lost; the origin holds what is left of them",
	       dm_table_device_name(fr->ti->table), n);
	return 0;
}

static int msg_clear_stats(struct dm_fr *fr, unsigned int argc, char **argv,
			   const char **why)
{
	int cpu;

	if (argc != 1) {
		*why = "clear_stats takes no arguments";
		return -EINVAL;
	}
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(fr->stats, cpu), 0, sizeof(struct fr_stats));
	return 0;
}

static int msg_set(struct dm_fr *fr, unsigned int argc, char **argv,
		   const char **why)
{
	if (argc != 3) {
		/* The names are fr-table.c's list: not repeated here to drift. */
		*why = "usage: set <tunable of the table line> <value>";
		return -EINVAL;
	}
	return fr_tunable_set(fr, argv[1], argv[2], why);
}

static const struct {
	const char *verb;
	int (*handler)(struct dm_fr *fr, unsigned int argc, char **argv,
		       const char **why);
} fr_messages[] = {
	{ "flush", msg_flush },
	{ "cleaner", msg_cleaner },
	{ "clear_stats", msg_clear_stats },
	{ "forget_unreadable", msg_forget_unreadable },
	{ "set", msg_set },
};

static int fr_message(struct dm_target *ti, unsigned int argc, char **argv,
		      char *result, unsigned int maxlen)
{
	struct dm_fr *fr = ti->private;
	const char *why = NULL;
	unsigned int i;
	int r;

	if (!argc)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(fr_messages); i++) {
		if (strcasecmp(argv[0], fr_messages[i].verb))
			continue;
		r = fr_messages[i].handler(fr, argc, argv, &why);
		if (r == -EINVAL)
			DMWARN("%s: invalid arguments for message \"%s\": %s",
			       dm_table_device_name(ti->table), argv[0],
			       why ? why : "refused");
		else if (r)
			DMWARN("%s: message \"%s\" failed: %s",
			       dm_table_device_name(ti->table), argv[0],
			       why ? why : "error");
		return r;
	}
	DMWARN("%s: unrecognised message \"%s\"",
	       dm_table_device_name(ti->table), argv[0]);
	return -EINVAL;
}

static int fr_iterate_devices(struct dm_target *ti,
			      iterate_devices_callout_fn fn, void *data)
{
	struct dm_fr *fr = ti->private;

	return fn(ti, fr->origin, 0, ti->len, data);
}

/*
 * What the device tells the file systems on top (docs/target-interface.md,
 * "What the device reports"):
 *  - a chunk is its physical block (up to a page) and its minimum I/O: a
 *    write of part of a chunk merges the rest of it from PM;
 *  - only whole chunks can be dropped from PM by a discard;
 *  - from 6.11, no volatile write cache, no FUA and not rotational (on
 *    older kernels a target with no flush bios has no write cache, and
 *    rotational is set by the udev rule: the origin's would be inherited).
 */
static void fr_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct dm_fr *fr = ti->private;
	unsigned int chunk_bytes = fr->cache.geo.chunk_sectors << SECTOR_SHIFT;

	if (limits->discard_granularity < chunk_bytes)
		limits->discard_granularity = chunk_bytes;
	if (limits->physical_block_size < min_t(unsigned int, chunk_bytes,
						PAGE_SIZE))
		limits->physical_block_size = min_t(unsigned int, chunk_bytes,
						    PAGE_SIZE);
	if (limits->io_min < chunk_bytes)
		limits->io_min = chunk_bytes;
#ifdef BLK_FEAT_WRITE_CACHE
	limits->features &= ~(BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA |
			      BLK_FEAT_ROTATIONAL);
#endif
}

static struct target_type fr_target = {
	.name = "fr",
	.version = {1, 20, 0},
	.module = THIS_MODULE,
	.ctr = fr_ctr,
	.dtr = fr_dtr,
	.map = fr_map,
	.end_io = fr_end_io,
	.presuspend = fr_presuspend,
	.presuspend_undo = fr_presuspend_undo,
	.postsuspend = fr_postsuspend,
	.preresume = fr_preresume,
	.resume = fr_resume,
	.status = fr_status,
	.message = fr_message,
	.iterate_devices = fr_iterate_devices,
	.io_hints = fr_io_hints,
};

static int __init dm_fr_init(void)
{
	return dm_register_target(&fr_target);
}

static void __exit dm_fr_exit(void)
{
	dm_unregister_target(&fr_target);
}

module_init(dm_fr_init);
module_exit(dm_fr_exit);

MODULE_DESCRIPTION(DM_NAME " persistent-memory first responder target");
MODULE_LICENSE("GPL");
