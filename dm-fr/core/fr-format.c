// SPDX-License-Identifier: GPL-2.0-only
/*
 * Superblock encoding and validation, and the layout arithmetic that turns a
 * PM size and the user's choices into a geometry; formatting a PM
 * (fr_format()) and attaching a cache to a formatted one (fr_cache_attach()).
 * Shared by the kernel module and userspace; see fr-format.h for the layout
 * itself.
 */
#include "fr-core.h"

u32 fr_sb_csum(const struct fr_sb_disk *sb)
{
	const size_t at = offsetof(struct fr_sb_disk, csum);
	const size_t rs = offsetof(struct fr_sb_disk, resized_sectors);
	const u8 zero[sizeof(sb->resized_sectors)] = { 0 };
	const u8 *b = (const u8 *)sb;
	u32 crc;

	crc = crc32c(~0U, b, at);
	crc = crc32c(crc, zero, sizeof(sb->csum));
	crc = crc32c(crc, b + at + sizeof(sb->csum),
		     rs - at - sizeof(sb->csum));
	crc = crc32c(crc, zero, sizeof(zero));
	crc = crc32c(crc, b + rs + sizeof(zero), sizeof(*sb) - rs - sizeof(zero));
	return ~crc;
}

u64 fr_layout_bytes(u32 chunk_sectors, u64 nr_chunks)
{
	u64 tags_end = FR_SB_RESERVED + nr_chunks * sizeof(struct fr_tag_disk);

	return round_up(tags_end, 4096) +
	       nr_chunks * ((u64)chunk_sectors << FR_SECTOR_SHIFT);
}

/*
 * The reciprocal is computed by long division of 2^128 - 1 in 32-bit
 * digits: nr_slots <= 2^32 keeps every partial dividend below 2^64.
 */
void fr_geometry_set_recip(struct fr_geometry *g)
{
	u64 q[4], rem = 0, d = g->nr_slots;
	int i;

	for (i = 3; i >= 0; i--) {
		u64 cur = rem << 32 | 0xffffffffULL;

		q[i] = cur / d;
		rem = cur % d;
	}
	g->slots_recip[0] = q[1] << 32 | q[0];
	g->slots_recip[1] = q[3] << 32 | q[2];
	/* + 1, carried (it wraps to 0 for nr_slots = 1: x mod 1 = 0). */
	if (!++g->slots_recip[0])
		g->slots_recip[1]++;
}

/* Whether ways chunks a slot is a width the format has. */
static bool ways_ok(u32 ways, const char **why)
{
	if (is_power_of_2(ways) && ways >= FR_PAIR_WAYS && ways <= FR_MAX_WAYS)
		return true;
	*why = "chunks a slot must be a power of two from 2 to 8";
	return false;
}

/*
 * Check a geometry whose chunk_sectors, region_chunks, stride_slots,
 * nr_chunks and origin_sectors are set, and fill in the derived fields.
 */
static int geometry_derive(struct fr_geometry *g, const char **why)
{
	if (!is_power_of_2(g->chunk_sectors) ||
	    g->chunk_sectors < FR_MIN_CHUNK_SECTORS ||
	    g->chunk_sectors > FR_MAX_CHUNK_SECTORS) {
		*why = "chunk size must be a power of two from 4 KiB to 32 KiB";
		return -EINVAL;
	}
	if (!ways_ok(g->ways, why))
		return -EINVAL;
	g->ways_shift = ilog2(g->ways);
	if (g->nr_chunks < g->ways || (g->nr_chunks & (g->ways - 1))) {
		*why = "PM too small: not one slot's chunks fit";
		return -EINVAL;
	}
	g->nr_slots = g->nr_chunks >> g->ways_shift;
	if (g->nr_slots > FR_MAX_SLOTS) {
		*why = "PM too large for this format (more than 2^32 slots)";
		return -EINVAL;
	}
	if (!is_power_of_2(g->region_chunks) ||
	    g->region_chunks > FR_MAX_REGION_CHUNKS) {
		*why = "region size must be a power-of-two number of chunks, at most 1024";
		return -EINVAL;
	}
	if (g->region_chunks > g->nr_slots) {
		*why = "region larger than the PM's slot count";
		return -EINVAL;
	}
	if (!g->stride_slots || g->stride_slots >= g->nr_slots) {
		*why = "stride must be between 1 and the slot count - 1";
		return -EINVAL;
	}
	if (!g->origin_sectors) {
		*why = "origin length is zero";
		return -EINVAL;
	}
	g->chunk_shift = ilog2(g->chunk_sectors);
	g->region_shift = ilog2(g->region_chunks);
	fr_geometry_set_recip(g);
	g->origin_chunks = (g->origin_sectors + g->chunk_sectors - 1) >>
			   g->chunk_shift;
	if (g->origin_chunks - 1 > FR_MAX_KEY) {
		*why = "origin too large for 56-bit chunk keys";
		return -EINVAL;
	}
	return 0;
}

int fr_geometry_layout(struct fr_geometry *g, u64 pm_bytes,
		       const struct fr_format_params *p, const char **why)
{
	u64 chunk_bytes, nr;

	memset(g, 0, sizeof(*g));
	g->chunk_sectors = p->chunk_sectors ? p->chunk_sectors :
			   FR_DEFAULT_CHUNK_SECTORS;
	if (!is_power_of_2(g->chunk_sectors) ||
	    g->chunk_sectors < FR_MIN_CHUNK_SECTORS ||
	    g->chunk_sectors > FR_MAX_CHUNK_SECTORS) {
		*why = "chunk size must be a power of two from 4 KiB to 32 KiB";
		return -EINVAL;
	}
	g->ways = p->ways ? p->ways : FR_PAIR_WAYS;
	if (!ways_ok(g->ways, why))
		return -EINVAL;
	chunk_bytes = (u64)g->chunk_sectors << FR_SECTOR_SHIFT;
	if (pm_bytes < FR_SB_RESERVED + 4096 + g->ways * chunk_bytes) {
		*why = "PM too small for the superblock and one slot";
		return -EINVAL;
	}
	/* Largest whole number of slots whose tags and chunks fit. */
	nr = (pm_bytes - FR_SB_RESERVED - 4096) /
	     (chunk_bytes + sizeof(struct fr_tag_disk));
	nr &= ~(u64)(g->ways - 1);
	while (nr >= g->ways &&
	       fr_layout_bytes(g->chunk_sectors, nr) > pm_bytes)
		nr -= g->ways;
	g->nr_chunks = nr;
	g->region_chunks = p->region_chunks ? p->region_chunks :
			   (u32)(FR_DEFAULT_REGION_BYTES / chunk_bytes);
	/*
	 * A region's chunks map to distinct slots: on a PM of fewer slots
	 * (a small one, or one of sets) the default region shrinks to fit.
	 */
	while (!p->region_chunks && g->region_chunks > 1 &&
	       g->region_chunks > nr / g->ways)
		g->region_chunks >>= 1;
	/*
	 * The default stride is one slot more than a region: consecutive
	 * regions tile the slots with a one-slot gap, so power-of-two spaced
	 * structures (ext4 block groups, XFS allocation groups, Btrfs chunks)
	 * do not all land on the same slot when the PM size is a power of two.
	 */
	g->stride_slots = p->stride_slots ? p->stride_slots :
			  g->region_chunks + 1;
	if (!p->stride_slots && nr >= g->ways &&
	    g->stride_slots >= nr / g->ways)
		g->stride_slots = 1;
	g->origin_sectors = p->origin_sectors;
	g->tags_offset = FR_SB_RESERVED;
	g->data_offset = round_up(FR_SB_RESERVED +
				  nr * sizeof(struct fr_tag_disk), 4096);
	g->pm_bytes = pm_bytes;
	return geometry_derive(g, why);
}

void fr_sb_encode(struct fr_sb_disk *sb, const struct fr_geometry *g,
		  const struct fr_format_params *p)
{
	memset(sb, 0, sizeof(*sb));
	sb->magic = cpu_to_le64(FR_SB_MAGIC);
	sb->version = cpu_to_le32(FR_FORMAT_VERSION);
	sb->incompat_features = cpu_to_le64(g->ways != FR_PAIR_WAYS ?
					    FR_INCOMPAT_SETS : 0);
	sb->set_ways = cpu_to_le32(g->ways != FR_PAIR_WAYS ? g->ways : 0);
	sb->compat_features = cpu_to_le64(0);
	sb->chunk_sectors = cpu_to_le32(g->chunk_sectors);
	sb->region_chunks = cpu_to_le32(g->region_chunks);
	sb->stride_slots = cpu_to_le64(g->stride_slots);
	sb->nr_chunks = cpu_to_le64(g->nr_chunks);
	sb->tags_offset = cpu_to_le64(g->tags_offset);
	sb->data_offset = cpu_to_le64(g->data_offset);
	sb->pm_bytes = cpu_to_le64(g->pm_bytes);
	sb->origin_sectors = cpu_to_le64(g->origin_sectors);
	sb->format_time = cpu_to_le64(p->format_time);
	memcpy(sb->uuid, p->uuid, sizeof(sb->uuid));
	memcpy(sb->origin_id, p->origin_id, sizeof(sb->origin_id));
	sb->origin_id[FR_ORIGIN_ID_LEN - 1] = 0;
	sb->csum = cpu_to_le32(fr_sb_csum(sb));
}

int fr_sb_decode(const struct fr_sb_disk *sb, u64 pm_bytes,
		 struct fr_geometry *g, const char **why)
{
	u64 resized;
	int r;

	if (le64_to_cpu(sb->magic) != FR_SB_MAGIC) {
		*why = "no dm-fr superblock (bad magic)";
		return -EINVAL;
	}
	if (fr_sb_csum(sb) != le32_to_cpu(sb->csum)) {
		*why = "superblock checksum mismatch";
		return -EUCLEAN;
	}
	if (le32_to_cpu(sb->version) != FR_FORMAT_VERSION) {
		*why = "unsupported superblock format version";
		return -EINVAL;
	}
	if (le64_to_cpu(sb->incompat_features) & ~FR_INCOMPAT_SUPPORTED) {
		*why = "superblock has unsupported incompatible features";
		return -EINVAL;
	}

	memset(g, 0, sizeof(*g));
	g->ways = FR_PAIR_WAYS;
	if (le64_to_cpu(sb->incompat_features) & FR_INCOMPAT_SETS) {
		g->ways = le32_to_cpu(sb->set_ways);
		if (g->ways == FR_PAIR_WAYS) {
			*why = "superblock has sets of two: a pair is version 1";
			return -EUCLEAN;
		}
	} else if (sb->set_ways) {
		*why = "superblock has set_ways without the sets feature";
		return -EUCLEAN;
	}
	g->chunk_sectors = le32_to_cpu(sb->chunk_sectors);
	g->region_chunks = le32_to_cpu(sb->region_chunks);
	g->stride_slots = le64_to_cpu(sb->stride_slots);
	g->nr_chunks = le64_to_cpu(sb->nr_chunks);
	g->tags_offset = le64_to_cpu(sb->tags_offset);
	g->data_offset = le64_to_cpu(sb->data_offset);
	g->pm_bytes = le64_to_cpu(sb->pm_bytes);
	g->origin_sectors = le64_to_cpu(sb->origin_sectors);
	resized = le64_to_cpu(sb->resized_sectors);
	if (resized)
		g->origin_sectors = resized;
	if (g->pm_bytes < FR_SB_RESERVED) {
		*why = "superblock layout does not fit its PM size";
		return -EUCLEAN;
	}
	r = geometry_derive(g, why);
	if (r)
		return r;
	if (g->pm_bytes > pm_bytes) {
		*why = "PM device is smaller than the formatted cache";
		return -EINVAL;
	}
	if (g->nr_chunks > (g->pm_bytes - FR_SB_RESERVED) /
			   sizeof(struct fr_tag_disk) ||
	    g->tags_offset != FR_SB_RESERVED ||
	    g->data_offset != round_up(FR_SB_RESERVED + g->nr_chunks *
				       sizeof(struct fr_tag_disk), 4096) ||
	    fr_layout_bytes(g->chunk_sectors, g->nr_chunks) > g->pm_bytes) {
		*why = "superblock layout does not fit its PM size";
		return -EUCLEAN;
	}
	return 0;
}

int fr_cache_attach(struct fr_cache *c, void *pm, u64 pm_bytes,
		    unsigned long *valid_bits, unsigned long *dirty_bits,
		    const char **why)
{
	struct fr_sb_disk sb;
	int r;

	fr_format_size_checks();
	if (pm_bytes < FR_SB_BYTES) {
		*why = "PM too small for a superblock";
		return -EINVAL;
	}
	if (fr_pm_read(&sb, pm, sizeof(sb))) {
		*why = "superblock unreadable (machine check)";
		return -EIO;
	}
	r = fr_sb_decode(&sb, pm_bytes, &c->geo, why);
	if (r)
		return r;
	c->sb = pm;
	c->tags = (struct fr_tag_disk *)((u8 *)pm + c->geo.tags_offset);
	c->data = (u8 *)pm + c->geo.data_offset;
	c->valid_bits = valid_bits;
	c->dirty_bits = dirty_bits;
	atomic64_set(&c->nr_valid, 0);
	atomic64_set(&c->nr_dirty, 0);
	atomic64_set(&c->next_seq, 0);
	return 0;
}

int fr_format(struct fr_cache *c, void *pm, u64 pm_bytes,
	      const struct fr_format_params *p, unsigned long *valid_bits,
	      unsigned long *dirty_bits, const char **why)
{
	static const struct fr_bad none;

	return fr_format_bad(c, pm, pm_bytes, p, valid_bits, dirty_bits, &none,
			     why);
}

int fr_format_bad(struct fr_cache *c, void *pm, u64 pm_bytes,
		  const struct fr_format_params *p, unsigned long *valid_bits,
		  unsigned long *dirty_bits, const struct fr_bad *bad,
		  const char **why)
{
	struct fr_sb_disk *sb_pm = pm, sb;
	/* (bad may be &c->bad) */
	const struct fr_bad keep = *bad;
	struct fr_geometry g;
	struct fr_tag_disk *tags;
	u64 i;
	int r;

	r = fr_geometry_layout(&g, pm_bytes, p, why);
	if (r)
		return r;
	/* An old superblock must not describe half-cleared tags. */
	fr_pm_store8(&sb_pm->magic, 0);
	fr_pm_fence();
	tags = (struct fr_tag_disk *)((u8 *)pm + g.tags_offset);
	for (i = 0; i < g.nr_chunks; i++) {
		/* A retired slot's tags are never read: they stay as they are. */
		if (keep.tag_slots &&
		    test_bit(i >> g.ways_shift, keep.tag_slots))
			continue;
		fr_pm_store8(&tags[i].commit, 0);
		fr_pm_store8(&tags[i].seq, 0);
		fr_pm_store8(&tags[i].sectors, 0);
		fr_pm_store8(&tags[i].reserved, 0);
	}
	fr_sb_encode(&sb, &g, p);
	fr_pm_copy((u8 *)pm + sizeof(sb.magic), (u8 *)&sb + sizeof(sb.magic),
		   sizeof(sb) - sizeof(sb.magic));
	fr_pm_fence();
	fr_pm_store8(&sb_pm->magic, le64_to_cpu(sb.magic));
	fr_pm_fence();

	r = fr_cache_attach(c, pm, pm_bytes, valid_bits, dirty_bits, why);
	if (r)
		return r;
	memset(valid_bits, 0, fr_bitmap_longs(&c->geo) * sizeof(long));
	memset(dirty_bits, 0, fr_bitmap_longs(&c->geo) * sizeof(long));
	c->bad = keep;
	return 0;
}
