/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Simulated origin block device with a volatile write cache, with
 * dm-log-writes' semantics: a completed write sits in the cache until a
 * completed FLUSH; at a crash each unflushed write, sector by sector, may or
 * may not have reached the media (and of several unflushed writes to one
 * sector, any one may be the survivor).
 */
#ifndef SIMORIGIN_H
#define SIMORIGIN_H

#include "fr-core.h"
#include "gen.h"

#define SO_SECTOR 512

struct so_write {
	u64 sector;
	u8 data[SO_SECTOR];
};

struct simorigin {
	u64 sectors;
	u8 *media;		/* durable */
	u8 *view;		/* what a read returns: media + cache */
	struct so_write *cache;	/* unflushed, in completion order */
	u32 ncache, cap;
	u64 writes, flushes;
	/* Crash overlay: for reads of a crashed origin (see so_crash_*). */
	int32_t *pick;		/* per sector: cache entry that survived, or -1 */
	u32 *picked;		/* sectors with a pick, to reset them */
	u32 npicked;
};

void so_init(struct simorigin *o, u64 sectors);
void so_free(struct simorigin *o);
void so_write(struct simorigin *o, u64 sector, const void *buf, u32 n);
void so_flush(struct simorigin *o);

/* Unflushed writes as crash units: one per sector, each write a version. */
u32 so_units(const struct simorigin *o, struct gen_unit *u, u32 *unit_sector,
	     u32 max);
/* Which write of unit sector (version v, 0-based) to use. */
u32 so_version_entry(const struct simorigin *o, u64 sector, u32 v);

/* Choose the survivor of a sector for the crash overlay, and reset it. */
void so_crash_pick(struct simorigin *o, u64 sector, u32 entry);
void so_crash_reset(struct simorigin *o);
/* A sector of the crashed origin (media + overlay). */
static inline const u8 *so_crash_sector(const struct simorigin *o, u64 sector)
{
	int32_t e = o->pick[sector];

	return e >= 0 ? o->cache[e].data : o->media + sector * SO_SECTOR;
}

/* Make the crashed origin the real one: media = crash, cache emptied. */
void so_crash_adopt(struct simorigin *o);

#endif /* SIMORIGIN_H */
