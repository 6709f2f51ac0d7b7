/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The on-PM format of a dm-fr cache. This header is the only definition of
 * the layout; the kernel module, frctl, the crash simulator and the tests all
 * include it. docs/format.md describes the same layout byte by byte.
 *
 * All integers are little-endian. Every field is naturally aligned and the
 * structs have no padding (fr_format_size_checks() breaks the build if that
 * changes), so they are not __packed: tag words are stored through aligned
 * 8-byte pointers, which failure atomicity needs.
 *
 *   0              superblock (struct fr_sb_disk, 512 bytes, 4 KiB reserved)
 *   tags_offset    nr_chunks tags (struct fr_tag_disk, 32 bytes each);
 *                  tags w*s .. w*s + w - 1 describe the w chunks of slot s
 *                  (w = 2, a pair; or set_ways with FR_INCOMPAT_SETS)
 *   data_offset    nr_chunks chunks of chunk_sectors * 512 bytes each;
 *                  chunk i lives at data_offset + i * chunk bytes
 *
 * A tag's first word, the commit word, is the only word whose store makes a
 * chunk valid, new, dirty or complete: it holds the key (the origin chunk
 * number) and the status flags, and is written with one failure-atomic
 * 8-byte store. The other tag words (seq, sectors) are written only while the
 * chunk is invalid and are persisted before the commit word that validates
 * them, so the commit word alone decides what a tag means.
 */
#ifndef FR_FORMAT_H
#define FR_FORMAT_H

#include "fr-types.h"

#define FR_SB_MAGIC		0x3142532d52464d44ULL	/* "DMFR-SB1" */
#define FR_FORMAT_VERSION	1
#define FR_SB_BYTES		512
#define FR_SB_RESERVED		4096	/* tags start after this */
#define FR_SECTOR_SHIFT		9
#define FR_SECTOR_SIZE		(1U << FR_SECTOR_SHIFT)

/*
 * Features. An image with an unknown incompat bit is refused.
 * FR_INCOMPAT_SETS: slots of set_ways chunks (a power of two, 4 to 8),
 * not pairs; a module that predates it must not read such a PM as pairs.
 */
#define FR_INCOMPAT_SETS	(1ULL << 0)
#define FR_INCOMPAT_SUPPORTED	FR_INCOMPAT_SETS

/* Chunks a slot: a pair (version 1), or a set (FR_INCOMPAT_SETS). */
#define FR_PAIR_WAYS		2
#define FR_MAX_WAYS		8
/*
 * The width the kernel's "fresh" and frctl format when none is named
 * (target 1.19; pairs before): a write collides only when all 8 chunks of
 * its set are dirty, and each collision waits for an origin write and
 * flush (docs/design.md, "Associativity"). fr_format_params.ways 0 is the
 * format's base layout, the pair.
 */
#define FR_DEFAULT_WAYS		8

/* Geometry limits (the sector bitmap of a tag is one 64-bit word). */
#define FR_MIN_CHUNK_SECTORS	8	/* 4 KiB */
#define FR_MAX_CHUNK_SECTORS	64	/* 32 KiB */
#define FR_MAX_REGION_CHUNKS	1024
#define FR_MAX_SLOTS		(1ULL << 32)
#define FR_KEY_BITS		56
#define FR_MAX_KEY		((1ULL << FR_KEY_BITS) - 1)
#define FR_ORIGIN_ID_LEN	64

/* Defaults: 4 KiB chunks, 1 MiB regions, stride = region + 1 slot. */
#define FR_DEFAULT_CHUNK_SECTORS	8
#define FR_DEFAULT_REGION_BYTES		(1U << 20)

struct fr_sb_disk {
	__le64 magic;			/* FR_SB_MAGIC, written last at format */
	__le32 csum;			/* crc32c of these 512 bytes, csum = 0 */
	__le32 version;			/* FR_FORMAT_VERSION */
	__le64 incompat_features;
	__le64 compat_features;
	__le32 chunk_sectors;		/* power of two, 8..64 */
	__le32 region_chunks;		/* power of two, <= 1024 and <= slots */
	__le64 stride_slots;		/* 1 .. nr_slots - 1 */
	__le64 nr_chunks;		/* slots = nr_chunks / ways */
	__le64 tags_offset;		/* bytes from the start of the PM */
	__le64 data_offset;		/* bytes, 4 KiB aligned */
	__le64 pm_bytes;		/* PM bytes the layout was made for */
	__le64 origin_sectors;		/* length of the cached origin range */
	__le64 format_time;		/* seconds since the epoch, informational */
	u8 uuid[16];			/* identity of this cache */
	u8 origin_id[FR_ORIGIN_ID_LEN];	/* NUL-padded stable origin name */
	/*
	 * 0, or the origin length of the last resize, which replaces
	 * origin_sectors. Outside the checksum (read as zero, like csum):
	 * its one failure-atomic store commits a resize (fr-resize.c). A
	 * module that predates it finds the checksum wrong and refuses the PM
	 * instead of using the old length.
	 */
	__le64 resized_sectors;
	__le32 set_ways;		/* FR_INCOMPAT_SETS: chunks a slot; else 0 */
	u8 reserved[512 - 188];
};

/* Flags in the low byte of the commit word. */
#define FR_TAG_VALID		0x01	/* V: the chunk holds data of key */
#define FR_TAG_NEW		0x02	/* N: the newest chunk of its slot */
#define FR_TAG_DIRTY		0x04	/* the origin does not hold this data */
#define FR_TAG_INCOMPLETE	0x08	/* member of an uncommitted group */
#define FR_TAG_FLAGS_KNOWN	0x0f
#define FR_TAG_FLAG_BITS	8

struct fr_tag_disk {
	__le64 commit;			/* key << 8 | flags */
	__le64 seq;			/* write sequence; shared by a group */
	__le64 sectors;			/* bit i: sector i of the chunk is held */
	__le64 reserved;
};

static inline void fr_format_size_checks(void)
{
	BUILD_BUG_ON(sizeof(struct fr_sb_disk) != FR_SB_BYTES);
	BUILD_BUG_ON(offsetof(struct fr_sb_disk, chunk_sectors) != 32);
	BUILD_BUG_ON(offsetof(struct fr_sb_disk, uuid) != 96);
	BUILD_BUG_ON(offsetof(struct fr_sb_disk, origin_id) != 112);
	BUILD_BUG_ON(offsetof(struct fr_sb_disk, resized_sectors) != 176);
	BUILD_BUG_ON(offsetof(struct fr_sb_disk, set_ways) != 184);
	BUILD_BUG_ON(sizeof(struct fr_tag_disk) != 32);
	BUILD_BUG_ON(offsetof(struct fr_tag_disk, sectors) != 16);
}

static inline u64 fr_commit_word(u64 key, u8 flags)
{
	return key << FR_TAG_FLAG_BITS | flags;
}

static inline u64 fr_commit_key(u64 commit)
{
	return commit >> FR_TAG_FLAG_BITS;
}

static inline u8 fr_commit_flags(u64 commit)
{
	return commit & 0xff;
}

/*
 * The geometry of a cache, decoded from (or to be encoded into) the
 * superblock, with the derived values the protocol needs.
 */
struct fr_geometry {
	u32 chunk_sectors;
	u32 chunk_shift;		/* log2(chunk_sectors) */
	u32 region_chunks;
	u32 region_shift;		/* log2(region_chunks) */
	u32 ways;			/* chunks a slot: 2, or a set's */
	u32 ways_shift;			/* log2(ways) */
	u64 stride_slots;
	u64 nr_chunks;
	u64 nr_slots;
	u64 tags_offset;
	u64 data_offset;
	u64 pm_bytes;
	u64 origin_sectors;
	u64 origin_chunks;		/* keys are 0 .. origin_chunks - 1 */
	/*
	 * floor((2^128 - 1) / nr_slots) + 1 (mod 2^128), as {low, high}:
	 * fr_slot_of() takes remainders by nr_slots with multiplications
	 * instead of a 64-bit division (fr_geometry_set_recip()).
	 */
	u64 slots_recip[2];
};

/* Set g->slots_recip from g->nr_slots (1 .. 2^32). */
void fr_geometry_set_recip(struct fr_geometry *g);

/* What the user chooses; zero fields take the defaults. */
struct fr_format_params {
	u32 chunk_sectors;
	u32 ways;			/* 0: a pair (version 1) */
	u32 region_chunks;
	u64 stride_slots;
	u64 origin_sectors;
	u64 format_time;
	u8 uuid[16];
	char origin_id[FR_ORIGIN_ID_LEN];
};

/*
 * The superblock's checksum: the standard CRC-32C of its 512 bytes with the
 * csum and resized_sectors fields read as zero.
 */
u32 fr_sb_csum(const struct fr_sb_disk *sb);

int fr_geometry_layout(struct fr_geometry *geo, u64 pm_bytes,
		       const struct fr_format_params *p, const char **why);
void fr_sb_encode(struct fr_sb_disk *sb, const struct fr_geometry *geo,
		  const struct fr_format_params *p);
int fr_sb_decode(const struct fr_sb_disk *sb, u64 pm_bytes,
		 struct fr_geometry *geo, const char **why);

/* Bytes of PM a layout needs for nr_chunks chunks (for sizing tools). */
u64 fr_layout_bytes(u32 chunk_sectors, u64 nr_chunks);

#endif /* FR_FORMAT_H */
