// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cache's lifecycle in the target: the origin's identity, and format or
 * recovery at the first preresume. (The PM device itself, its claim and
 * DAX access, is fr-pmdev.c's.)
 */
#include <linux/blkdev.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uuid.h>

#include "dm-fr.h"

#define FR_RECOVERY_GROUPS	16384


/*
 * The origin's stable names the kernel can see itself, in order of
 * preference: a partition's PARTUUID (as udev's by-partuuid link names it),
 * a dm device's uuid, and its name (as frctl names dm devices).
 */
enum fr_id_kind { FR_ID_PARTUUID, FR_ID_DM_UUID, FR_ID_DM_NAME, FR_ID_KINDS };

static const char * const fr_id_prefix[FR_ID_KINDS] = {
	"/dev/disk/by-partuuid/", "dm-uuid-", "dm-name-",
};

/* The origin's name of one kind: 0, -ENOENT (none that fits) or -ENOMEM. */
static int fr_origin_id_of(struct dm_fr *fr, enum fr_id_kind kind, char *id)
{
	struct block_device *bdev = fr->origin->bdev;
	struct mapped_device *md;
	const char *val = NULL;
	char *buf = NULL;
	int r = -ENOENT;

	if (kind == FR_ID_PARTUUID) {
		if (bdev_is_partition(bdev) && bdev->bd_meta_info)
			val = bdev->bd_meta_info->uuid;
	} else {
		md = dm_get_md(bdev->bd_dev);
		if (!md)
			return -ENOENT;
		buf = kmalloc(DM_NAME_LEN + DM_UUID_LEN, GFP_KERNEL);
		if (!buf)
			r = -ENOMEM;
		else if (!dm_copy_name_and_uuid(md, buf, buf + DM_NAME_LEN))
			val = kind == FR_ID_DM_UUID ? buf + DM_NAME_LEN : buf;
		dm_put(md);
	}
	if (val && val[0] &&
	    strlen(fr_id_prefix[kind]) + strlen(val) < FR_ORIGIN_ID_LEN) {
		size_t plen = strlen(fr_id_prefix[kind]);

		/* It fits (checked above): no snprintf truncation to fear. */
		memcpy(id, fr_id_prefix[kind], plen);
		strscpy(id + plen, val, FR_ORIGIN_ID_LEN - plen);
		r = 0;
	}
	kfree(buf);
	return r;
}

/*
 * What a format records without origin_id: the first stable name that
 * fits, else dev:MAJ:MIN, which may name another disk after a reboot.
 */
static int fr_origin_stable_id(struct dm_fr *fr, char *id)
{
	enum fr_id_kind k;
	int r;

	for (k = 0; k < FR_ID_KINDS; k++) {
		r = fr_origin_id_of(fr, k, id);
		if (r != -ENOENT)
			return r;
	}
	snprintf(id, FR_ORIGIN_ID_LEN, "dev:%s", fr->origin->name);
	return 0;
}

/*
 * Is the origin the one the PM was formatted for? origin_id in the table
 * must equal the recorded id (whoever wrote the table vouches for the
 * device: frctl resolves the id first). Without it, a recorded name of a
 * kind the kernel can see must be the origin's; dev:MAJ:MIN, /dev/disk/by-id
 * names and paths cannot be checked here.
 */
static int fr_check_origin_id(struct dm_fr *fr, const char *recorded,
			      char **error)
{
	const char *name = dm_table_device_name(fr->ti->table);
	char now[FR_ORIGIN_ID_LEN];
	enum fr_id_kind k;
	int r;

	if (fr->arg_origin_id[0]) {
		if (strcmp(recorded, fr->arg_origin_id)) {
			DMERR("%s: the PM records origin \"%s\", the table's origin_id is \"%s\"",
			      name, recorded, fr->arg_origin_id);
			*error = "PM was formatted for another origin_id than the table's";
			return -EINVAL;
		}
		return 0;
	}
	for (k = 0; k < FR_ID_KINDS; k++) {
		if (strncmp(recorded, fr_id_prefix[k], strlen(fr_id_prefix[k])))
			continue;
		r = fr_origin_id_of(fr, k, now);
		if (r == -ENOMEM) {
			*error = "Cannot allocate memory for the origin's name";
			return r;
		}
		if (r)
			strscpy(now, "(none of that kind)", sizeof(now));
		if (r || strcmp(recorded, now)) {
			DMERR("%s: the PM records origin \"%s\", origin %s is \"%s\"",
			      name, recorded, fr->origin->name, now);
			*error = "Origin is not the device the PM was formatted for";
			return -EINVAL;
		}
		return 0;
	}
	return 0;
}

int fr_alloc_bitmaps(struct dm_fr *fr, const struct fr_geometry *g)
{
	u64 longs = fr_bitmap_longs(g);

	/*
	 * The cache owns them from here on: status reads them (all clear)
	 * before the first resume formats or recovers the PM.
	 */
	fr->cache.valid_bits = kvcalloc(longs, sizeof(long), GFP_KERNEL);
	fr->cache.dirty_bits = kvcalloc(longs, sizeof(long), GFP_KERNEL);
	return fr->cache.valid_bits && fr->cache.dirty_bits ? 0 : -ENOMEM;
}

/*
 * The constructor only reads the PM: a table may be loaded while another
 * table of the same device is still live on this PM (dmsetup reload). The
 * PM is formatted or recovered at the first preresume, once the old table
 * has been suspended.
 */
int fr_prepare_format(struct dm_fr *fr, char **error)
{
	struct dm_target *ti = fr->ti;
	struct fr_format_params *p = &fr->fmt;
	const char *why = NULL;
	int r;

	p->chunk_sectors = fr->arg_chunk_size >> SECTOR_SHIFT;
	if (fr->arg_region_size) {
		u32 chunk = fr->arg_chunk_size ? fr->arg_chunk_size :
			    FR_DEFAULT_CHUNK_SECTORS << SECTOR_SHIFT;

		if (fr->arg_region_size < chunk) {
			*error = "region_size is smaller than chunk_size";
			return -EINVAL;
		}
		p->region_chunks = fr->arg_region_size / chunk;
	}
	p->stride_slots = fr->arg_stride;
	/* A fresh PM named no width: the default, sets (target 1.19). */
	p->ways = fr->arg_ways ? fr->arg_ways : FR_DEFAULT_WAYS;
	p->origin_sectors = ti->len;
	if (fr->has_uuid)
		memcpy(p->uuid, fr->arg_uuid, sizeof(p->uuid));
	else
		generate_random_uuid(p->uuid);
	if (fr->arg_origin_id[0]) {
		strscpy(p->origin_id, fr->arg_origin_id, sizeof(p->origin_id));
	} else if (fr_origin_stable_id(fr, p->origin_id)) {
		*error = "Cannot allocate memory for the origin's name";
		return -ENOMEM;
	}

	/* The core's reason goes to the log; ti->error takes literals. */
	r = fr_geometry_layout(&fr->cache.geo, fr->pm.bytes, p, &why);
	if (r) {
		DMERR("%s: cannot lay out the PM: %s",
		      dm_table_device_name(ti->table), why);
		*error = "PM too small, or geometry out of range, for this origin";
		return r;
	}
	return 0;
}

/*
 * A table of another length than the PM maps: the origin grew or shrank
 * (docs/admin-guide.md, "Resizing the origin"). Growing needs nothing
 * checked; a shrink is refused here while a dirty copy lies past the new
 * end, as fr_resize() would refuse it at the resume (after recovery, when
 * nothing can write): refused here, the table swap does not happen.
 */
static int fr_resize_check_ctr(struct dm_fr *fr, char **error)
{
	const char *name = dm_table_device_name(fr->ti->table);
	struct fr_resize_report rep;
	const char *why = NULL;
	int r;

	r = fr_resize_check(&fr->cache, fr->ti->len, &rep, &why);
	if (r == -EBUSY) {
		DMERR("%s: cannot shrink from %llu to %llu sectors: %llu dirty chunks lie past the new end, the first of origin chunk %llu (flush, or discard that range, first)",
		      name, fr->cache.geo.origin_sectors, (u64)fr->ti->len,
		      rep.dirty_past_end, rep.first_dirty_key);
		*error = "Dirty chunks lie past the new end (flush first)";
	} else if (r) {
		DMERR("%s: cannot resize from %llu to %llu sectors: %s", name,
		      fr->cache.geo.origin_sectors, (u64)fr->ti->len, why);
		*error = "Origin length not usable for this PM";
	}
	return r;
}

int fr_prepare_recover(struct dm_fr *fr, char **error)
{
	const struct fr_geometry *g = &fr->cache.geo;
	const struct fr_sb_disk *sb = fr->pm.addr;
	char origin_id[FR_ORIGIN_ID_LEN];
	const char *why = NULL;
	u8 uuid[16];
	int r;

	r = fr_cache_attach(&fr->cache, fr->pm.addr, fr->pm.bytes, NULL, NULL,
			    &why);
	if (r) {
		DMERR("%s: cannot use the PM's superblock: %s",
		      dm_table_device_name(fr->ti->table), why);
		*error = "PM holds no usable dm-fr superblock";
		return r;
	}
	if (fr_pm_read(uuid, sb->uuid, sizeof(uuid)) ||
	    fr_pm_read(origin_id, sb->origin_id, sizeof(origin_id))) {
		*error = "superblock unreadable (machine check)";
		return -EIO;
	}
	origin_id[FR_ORIGIN_ID_LEN - 1] = 0;
	if (fr->has_uuid && memcmp(uuid, fr->arg_uuid, sizeof(uuid))) {
		DMERR("%s: the PM's uuid is %pUb, the table's %pUb",
		      dm_table_device_name(fr->ti->table), uuid, fr->arg_uuid);
		*error = "PM has another uuid than the table's uuid argument";
		return -EINVAL;
	}
	r = fr_check_origin_id(fr, origin_id, error);
	if (r)
		return r;
	if ((fr->arg_chunk_size &&
	     fr->arg_chunk_size != g->chunk_sectors << SECTOR_SHIFT) ||
	    (fr->arg_region_size &&
	     fr->arg_region_size != (g->region_chunks << g->chunk_shift) <<
	     SECTOR_SHIFT) ||
	    (fr->arg_stride && fr->arg_stride != g->stride_slots) ||
	    (fr->arg_ways && fr->arg_ways != g->ways)) {
		*error = "Geometry arguments do not match the PM's superblock";
		return -EINVAL;
	}
	fr->resize = g->origin_sectors != fr->ti->len;
	return fr->resize ? fr_resize_check_ctr(fr, error) : 0;
}

/* After format or recovery: clear what bad PM holds nothing, and say so. */
static void fr_init_bad_report(struct dm_fr *fr)
{
	u64 back;

	if (!fr->cache.bad.chunks)
		return;
	back = fr_badpm_clear(fr);
	DMWARN("%s: %llu PM chunks retired (bad blocks), %llu brought back by clearing poison",
	       dm_table_device_name(fr->ti->table), fr_badpm_retired(fr),
	       back);
}

/*
 * After recovery, before any I/O: the PM takes the table's length. A shrink
 * checked at the constructor can still meet a dirty copy past the new end
 * written by the old table since: refused then, with the PM unchanged (a
 * table of the old length resumes).
 */
static int fr_resize_pm(struct dm_fr *fr)
{
	const char *name = dm_table_device_name(fr->ti->table);
	u64 old = fr->cache.geo.origin_sectors;
	struct fr_resize_report rep;
	const char *why = NULL;
	int r;

	r = fr_resize(&fr->cache, fr->ti->len, &rep, &why);
	if (r) {
		DMERR("%s: cannot resize from %llu to %llu sectors: %s (%llu dirty chunks past the new end; load the old length again)",
		      name, old, (u64)fr->ti->len, why, rep.dirty_past_end);
		return r;
	}
	fr->resize = false;
	DMINFO("%s: origin resized from %llu to %llu sectors (%llu clean copies past the new end dropped)",
	       name, old, (u64)fr->ti->len, rep.clean_past_end);
	return 0;
}

int fr_init_pm(struct dm_fr *fr)
{
	const char *name = dm_table_device_name(fr->ti->table);
	const struct fr_geometry *g = &fr->cache.geo;
	struct fr_group_scratch *scratch;
	struct fr_recovery_report rep;
	const char *why = NULL;
	int r;

	if (fr->fresh) {
		fr->fmt.format_time = ktime_get_real_seconds();
		r = fr_format_bad(&fr->cache, fr->pm.addr, fr->pm.bytes,
				  &fr->fmt, fr->cache.valid_bits,
				  fr->cache.dirty_bits,
				  &fr->cache.bad, &why);
		if (r) {
			DMERR("%s: cannot format the PM: %s", name, why);
			return r;
		}
		DMINFO("%s: formatted %llu chunks of %u KiB for %llu origin sectors",
		       name, g->nr_chunks, g->chunk_sectors / 2,
		       g->origin_sectors);
		fr_init_bad_report(fr);
		return 0;
	}

	scratch = kvcalloc(FR_RECOVERY_GROUPS, sizeof(*scratch), GFP_KERNEL);
	if (!scratch)
		return -ENOMEM;
	r = fr_recover(&fr->cache, FR_RECOVER_APPLY, scratch,
		       FR_RECOVERY_GROUPS, &rep, &why);
	kvfree(scratch);
	if (r) {
		if (rep.corrupt_tags)
			DMERR("%s: %llu corrupt tags on PM, first at chunk %llu",
			      name, rep.corrupt_tags, rep.first_corrupt);
		DMERR("%s: recovery refused: %s", name, why);
		return r;
	}
	DMINFO("%s: recovered %llu valid chunks (%llu dirty) of %llu; rolled back %llu and completed %llu interrupted writes, dropped %llu superseded copies",
	       name, rep.valid, rep.dirty, g->nr_chunks,
	       rep.groups_rolled_back, rep.groups_rolled_forward,
	       rep.superseded_dropped);
	if (rep.lost_slots || rep.bad_dirty || rep.bad_clean_dropped)
		DMWARN("%s: bad PM: %llu slots with unreadable tags (lost until the forget_unreadable message), %llu dirty chunks unreadable, %llu clean copies on bad chunks dropped",
		       name, rep.lost_slots, rep.bad_dirty,
		       rep.bad_clean_dropped);
	fr_init_bad_report(fr);
	return fr->resize ? fr_resize_pm(fr) : 0;
}
