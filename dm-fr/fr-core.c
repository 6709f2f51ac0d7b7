// SPDX-License-Identifier: GPL-2.0-only
/*
 * The chunk-pair protocol of First Responder (USENIX ATC'21, section 4),
 * applied to block I/O. See fr-core.h for the contracts and docs/protocol.md
 * for every state transition, its persist points and what recovery makes of
 * each intermediate state.
 *
 * A write to origin chunk k goes to the free chunk F of k's slot; the other
 * chunk O (if valid) keeps its data. In fence-separated steps:
 *   0. displace a clean chunk if the slot is full (it is on the origin);
 *   1. clear N on O, place the data (old sectors of k copied from O when the
 *      write is partial) and F's seq and sector words;
 *   2. commit F: key k, V N D (and INCOMPLETE for a multi-chunk write);
 *   3. multi-chunk only: clear INCOMPLETE on every member;
 *   4. drop the superseded copy of k in O, if there was one.
 * Only step 2 (or 3) changes what a reader sees, in one atomic word per chunk.
 */
#include "fr-core.h"

#ifdef FR_MUTATION
enum fr_mutation fr_mutation;
#endif

static inline u64 tag_commit(const struct fr_cache *c, fr_pchunk_t p)
{
	return le64_to_cpu(READ_ONCE(c->tags[from_pchunk(p)].commit));
}

static inline u64 tag_seq(const struct fr_cache *c, fr_pchunk_t p)
{
	return le64_to_cpu(READ_ONCE(c->tags[from_pchunk(p)].seq));
}

static inline u64 tag_sectors(const struct fr_cache *c, fr_pchunk_t p)
{
	return le64_to_cpu(READ_ONCE(c->tags[from_pchunk(p)].sectors));
}

static inline bool commit_holds(u64 commit, fr_ochunk_t key)
{
	return (commit & FR_TAG_VALID) && fr_commit_key(commit) == from_ochunk(key);
}

/* Store a commit word and keep the DRAM bitmaps in step with it. */
static void set_commit(struct fr_cache *c, fr_pchunk_t p, u64 commit)
{
	u64 i = from_pchunk(p);

	fr_pm_store8(&c->tags[i].commit, commit);
	if (commit & FR_TAG_VALID)
		set_bit(i, c->valid_bits);
	else
		clear_bit(i, c->valid_bits);
	if ((commit & FR_TAG_VALID) && (commit & FR_TAG_DIRTY))
		set_bit(i, c->dirty_bits);
	else
		clear_bit(i, c->dirty_bits);
}

static inline fr_pchunk_t slot_chunk(fr_slot_t s, unsigned int i)
{
	return to_pchunk(from_slot(s) * 2 + i);
}

static inline fr_pchunk_t buddy(fr_pchunk_t p)
{
	return to_pchunk(from_pchunk(p) ^ 1);
}

static u64 sector_mask(u32 first, u32 count)
{
	u64 m = count >= 64 ? ~0ULL : (1ULL << count) - 1;

	return m << first;
}

/* Next run of set bits in mask at or after bit *pos: [*pos, end). */
static bool next_run(u64 mask, u32 *pos, u32 *end)
{
	u32 b = *pos;

	while (b < 64 && !(mask >> b & 1))
		b++;
	if (b >= 64)
		return false;
	*pos = b;
	while (b < 64 && (mask >> b & 1))
		b++;
	*end = b;
	return true;
}

enum plan {
	PLAN_ROOM,		/* a free chunk is there */
	PLAN_EVICT,		/* *victim is clean: drop it to make room */
	PLAN_NEED_CLEAN,	/* *victim is dirty: write it back first */
};

/*
 * Which chunk, if any, must leave key's slot so that key can be written.
 * With a copy of key present, the other chunk must go (case 3-1/3-2).
 * With two foreign chunks (case 3-3), prefer a clean one, then the older.
 */
static enum plan plan_slot(const struct fr_cache *c, fr_ochunk_t key,
			   fr_pchunk_t *victim)
{
	fr_slot_t s = fr_slot_of(&c->geo, key);
	fr_pchunk_t p0 = slot_chunk(s, 0), p1 = slot_chunk(s, 1), v;
	u64 c0 = tag_commit(c, p0), c1 = tag_commit(c, p1), cv;

	if (!(c0 & FR_TAG_VALID) || !(c1 & FR_TAG_VALID))
		return PLAN_ROOM;
	if (commit_holds(c0, key) && commit_holds(c1, key))
		v = (c0 & FR_TAG_NEW) ? p1 : p0;	/* superseded copy */
	else if (commit_holds(c0, key))
		v = p1;
	else if (commit_holds(c1, key))
		v = p0;
	else if ((c0 & FR_TAG_DIRTY) != (c1 & FR_TAG_DIRTY))
		v = (c0 & FR_TAG_DIRTY) ? p1 : p0;
	else
		v = (c0 & FR_TAG_NEW) ? p1 : p0;
	*victim = v;
	cv = tag_commit(c, v);
	if ((cv & FR_TAG_DIRTY) && !(commit_holds(c0, key) &&
				     commit_holds(c1, key)))
		return PLAN_NEED_CLEAN;
	return PLAN_EVICT;
}

/* The free chunk a write into slot s uses: the first invalid one. */
static fr_pchunk_t free_chunk(const struct fr_cache *c, fr_slot_t s)
{
	fr_pchunk_t p0 = slot_chunk(s, 0);

	return (tag_commit(c, p0) & FR_TAG_VALID) ? slot_chunk(s, 1) : p0;
}

/* The chunk of slot s holding key with sequence seq (the new copy). */
static fr_pchunk_t chunk_with_seq(const struct fr_cache *c, fr_slot_t s,
				  fr_ochunk_t key, u64 seq)
{
	fr_pchunk_t p0 = slot_chunk(s, 0);

	if (commit_holds(tag_commit(c, p0), key) && tag_seq(c, p0) == seq)
		return p0;
	return slot_chunk(s, 1);
}

/* Copy the sectors in mask from one PM chunk to another, MC-safely. */
static int copy_sectors(void *dst, const void *src, u64 mask)
{
	u8 bounce[FR_SECTOR_SIZE];
	u32 pos = 0, end, i;

	while (next_run(mask, &pos, &end)) {
		for (i = pos; i < end; i++) {
			size_t off = (size_t)i << FR_SECTOR_SHIFT;

			if (fr_pm_read(bounce, (const u8 *)src + off,
				       FR_SECTOR_SIZE))
				return -EIO;
			fr_pm_copy((u8 *)dst + off, bounce, FR_SECTOR_SIZE);
		}
		pos = end;
	}
	return 0;
}

/* Broken variant FR_MUT_IN_PLACE: overwrite the cached copy where it is. */
static int write_in_place(struct fr_cache *c, fr_pchunk_t h, u32 off, u32 cnt,
			  fr_payload_fn payload, void *arg)
{
	payload(arg, (u8 *)fr_chunk_data(c, h) + ((size_t)off << FR_SECTOR_SHIFT),
		cnt);
	fr_pm_store8(&c->tags[from_pchunk(h)].sectors,
		     tag_sectors(c, h) | sector_mask(off, cnt));
	set_commit(c, h, tag_commit(c, h) | FR_TAG_DIRTY);
	fr_pm_fence();
	return 0;
}

int fr_write(struct fr_cache *c, u64 sector, u32 nr_sectors,
	     fr_payload_fn payload, void *arg, struct fr_write_result *res)
{
	const struct fr_geometry *g = &c->geo;
	u64 first, last, k, seq, s, left;
	fr_pchunk_t victim;
	bool group, evict = false, superseded = false;
	u8 flags;
	int r;

	memset(res, 0, sizeof(*res));
	if (!nr_sectors || sector >= g->origin_sectors ||
	    nr_sectors > g->origin_sectors - sector)
		return -EINVAL;
	first = sector >> g->chunk_shift;
	last = (sector + nr_sectors - 1) >> g->chunk_shift;
	if (first >> g->region_shift != last >> g->region_shift)
		return -EINVAL;
	group = first != last && !FR_MUTANT(FR_MUT_NO_GROUP_FLAG);

	/* Plan every slot before changing anything. */
	for (k = first; k <= last; k++) {
		enum plan p = plan_slot(c, to_ochunk(k), &victim);

		if (p == PLAN_NEED_CLEAN) {
			res->victim = victim;
			return FR_NEED_CLEAN;
		}
		evict |= p == PLAN_EVICT;
	}

	/* Step 0: displace clean chunks; durable before their reuse. */
	if (evict) {
		for (k = first; k <= last; k++) {
			if (plan_slot(c, to_ochunk(k), &victim) == PLAN_EVICT) {
				set_commit(c, victim, 0);
				res->evictions++;
			}
		}
		if (!FR_MUTANT(FR_MUT_EVICT_NO_FENCE))
			fr_pm_fence();
	}

	seq = (u64)atomic64_inc_return(&c->next_seq);
	flags = FR_TAG_VALID | FR_TAG_NEW | FR_TAG_DIRTY |
		(group ? FR_TAG_INCOMPLETE : 0);

	/* Step 1: the new copy's data and tag words; N off the other chunk. */
	s = sector;
	left = nr_sectors;
	for (k = first; k <= last; k++) {
		fr_ochunk_t key = to_ochunk(k);
		fr_slot_t slot = fr_slot_of(g, key);
		fr_pchunk_t f = free_chunk(c, slot), o = buddy(f);
		u64 oc = tag_commit(c, o), held = 0, mask;
		u32 off = s - fr_first_sector(g, key);
		u32 cnt = left < g->chunk_sectors - off ? left :
			  g->chunk_sectors - off;
		bool hit = commit_holds(oc, key);

		if (hit && !group && FR_MUTANT(FR_MUT_IN_PLACE))
			return write_in_place(c, o, off, cnt, payload, arg);

		mask = sector_mask(off, cnt);
		if (hit) {
			held = tag_sectors(c, o);
			res->hits++;
			superseded = true;
		}
		if ((oc & FR_TAG_VALID) && (oc & FR_TAG_NEW) &&
		    !(hit && FR_MUTANT(FR_MUT_KEEP_NEW_FLAG)))
			set_commit(c, o, oc & ~(u64)FR_TAG_NEW);
		if (held & ~mask) {
			r = copy_sectors(fr_chunk_data(c, f),
					 fr_chunk_data(c, o), held & ~mask);
			if (r)
				return r;
		}
		if (FR_MUTANT(FR_MUT_COMMIT_BEFORE_DATA))
			set_commit(c, f, fr_commit_word(k, flags));
		payload(arg, (u8 *)fr_chunk_data(c, f) +
			     ((size_t)off << FR_SECTOR_SHIFT), cnt);
		fr_pm_store8(&c->tags[from_pchunk(f)].seq, seq);
		fr_pm_store8(&c->tags[from_pchunk(f)].sectors, held | mask);
		res->chunks++;
		s += cnt;
		left -= cnt;
	}
	if (!FR_MUTANT(FR_MUT_NO_DATA_FENCE))
		fr_pm_fence();

	/* Step 2: commit. From here on each chunk reads as the new data. */
	for (k = first; k <= last; k++) {
		fr_slot_t slot = fr_slot_of(g, to_ochunk(k));
		fr_pchunk_t f;

		if (FR_MUTANT(FR_MUT_INVALIDATE_OLD_FIRST)) {
			f = free_chunk(c, slot);
			if (commit_holds(tag_commit(c, buddy(f)), to_ochunk(k)))
				set_commit(c, buddy(f), 0);
		}
		if (FR_MUTANT(FR_MUT_COMMIT_BEFORE_DATA))
			continue;
		set_commit(c, free_chunk(c, slot), fr_commit_word(k, flags));
	}
	fr_pm_fence();

	/* Step 3: a multi-chunk write is complete once every member is. */
	if (group) {
		for (k = first; k <= last; k++) {
			fr_slot_t slot = fr_slot_of(g, to_ochunk(k));
			fr_pchunk_t f = chunk_with_seq(c, slot, to_ochunk(k),
						       seq);

			set_commit(c, f, tag_commit(c, f) &
					 ~(u64)FR_TAG_INCOMPLETE);
		}
		fr_pm_fence();
	}

	/* Step 4: drop the superseded copies. */
	if (superseded) {
		for (k = first; k <= last; k++) {
			fr_slot_t slot = fr_slot_of(g, to_ochunk(k));
			fr_pchunk_t f = chunk_with_seq(c, slot, to_ochunk(k),
						       seq);

			if (commit_holds(tag_commit(c, buddy(f)), to_ochunk(k)))
				set_commit(c, buddy(f), 0);
		}
		fr_pm_fence();
	}
	return 0;
}

bool fr_lookup(const struct fr_cache *c, fr_ochunk_t key, struct fr_hit *hit)
{
	fr_slot_t s = fr_slot_of(&c->geo, key);
	unsigned int i;

	for (i = 0; i < 2; i++) {
		fr_pchunk_t p = slot_chunk(s, i);

		if (commit_holds(tag_commit(c, p), key)) {
			hit->pchunk = p;
			hit->sectors = tag_sectors(c, p);
			hit->data = fr_chunk_data(c, p);
			return true;
		}
	}
	return false;
}

int fr_fill(struct fr_cache *c, fr_ochunk_t key, fr_payload_fn payload,
	    void *arg)
{
	const struct fr_geometry *g = &c->geo;
	fr_slot_t s = fr_slot_of(g, key);
	fr_pchunk_t f, o, victim;
	struct fr_hit hit;
	u64 oc, mask, seq;

	if (from_ochunk(key) >= g->origin_chunks || fr_lookup(c, key, &hit))
		return 0;
	switch (plan_slot(c, key, &victim)) {
	case PLAN_NEED_CLEAN:
		return 0;	/* never write back to make room for clean data */
	case PLAN_EVICT:
		set_commit(c, victim, 0);
		fr_pm_fence();
		break;
	case PLAN_ROOM:
		break;
	}
	f = free_chunk(c, s);
	o = buddy(f);
	oc = tag_commit(c, o);
	if ((oc & FR_TAG_VALID) && (oc & FR_TAG_NEW))
		set_commit(c, o, oc & ~(u64)FR_TAG_NEW);
	mask = fr_chunk_mask(g, key);
	seq = (u64)atomic64_inc_return(&c->next_seq);
	payload(arg, fr_chunk_data(c, f), hweight64(mask));
	fr_pm_store8(&c->tags[from_pchunk(f)].seq, seq);
	fr_pm_store8(&c->tags[from_pchunk(f)].sectors, mask);
	fr_pm_fence();
	set_commit(c, f, fr_commit_word(from_ochunk(key),
					FR_TAG_VALID | FR_TAG_NEW));
	fr_pm_fence();
	return 1;
}

bool fr_can_fill(const struct fr_cache *c, fr_ochunk_t key)
{
	struct fr_hit hit;
	fr_pchunk_t victim;

	return from_ochunk(key) < c->geo.origin_chunks &&
	       !fr_lookup(c, key, &hit) &&
	       plan_slot(c, key, &victim) != PLAN_NEED_CLEAN;
}

/* Whether chunk key lies wholly inside [sector, end). */
static bool chunk_inside(const struct fr_geometry *g, fr_ochunk_t key,
			 u64 sector, u64 end)
{
	u64 first = fr_first_sector(g, key);
	u64 chunk_end = first + g->chunk_sectors;

	if (chunk_end > g->origin_sectors)
		chunk_end = g->origin_sectors;
	return first >= sector && chunk_end <= end;
}

u64 fr_discard_slots(struct fr_cache *c, fr_slot_t first, u64 nr,
		     u64 sector, u64 nr_sectors)
{
	const struct fr_geometry *g = &c->geo;
	u64 end, s, dropped = 0;
	unsigned int i;

	if (sector >= g->origin_sectors)
		return 0;
	end = nr_sectors > g->origin_sectors - sector ? g->origin_sectors :
	      sector + nr_sectors;
	for (s = from_slot(first); s < from_slot(first) + nr &&
	     s < g->nr_slots; s++) {
		for (i = 0; i < 2; i++) {
			fr_pchunk_t p = slot_chunk(to_slot(s), i);
			u64 commit = tag_commit(c, p);

			if ((commit & FR_TAG_VALID) &&
			    chunk_inside(g, to_ochunk(fr_commit_key(commit)),
					 sector, end)) {
				set_commit(c, p, 0);
				dropped++;
			}
		}
	}
	if (dropped)
		fr_pm_fence();
	return dropped;
}

u64 fr_discard(struct fr_cache *c, u64 sector, u64 nr_sectors)
{
	const struct fr_geometry *g = &c->geo;
	u64 end, k, dropped = 0;
	unsigned int i;

	if (sector >= g->origin_sectors)
		return 0;
	end = nr_sectors > g->origin_sectors - sector ? g->origin_sectors :
	      sector + nr_sectors;
	for (k = (sector + g->chunk_sectors - 1) >> g->chunk_shift;
	     k < g->origin_chunks; k++) {
		fr_ochunk_t key = to_ochunk(k);
		u64 chunk_end = fr_first_sector(g, key) + g->chunk_sectors;
		fr_slot_t s;

		if (chunk_end > g->origin_sectors)
			chunk_end = g->origin_sectors;
		if (chunk_end > end)
			break;
		s = fr_slot_of(g, key);
		for (i = 0; i < 2; i++) {
			fr_pchunk_t p = slot_chunk(s, i);

			if (commit_holds(tag_commit(c, p), key)) {
				set_commit(c, p, 0);
				dropped++;
			}
		}
	}
	if (dropped)
		fr_pm_fence();
	return dropped;
}

/* Stage a dirty chunk's held sectors; 1 if staged, 0 if no longer dirty. */
static int stage_chunk(struct fr_cache *c, fr_pchunk_t p,
		       struct fr_wb_snap *snap, const struct fr_wb_ops *ops,
		       void *ctx)
{
	const struct fr_geometry *g = &c->geo;
	u64 commit = tag_commit(c, p), first, mask;
	const u8 *data = fr_chunk_data(c, p);
	u32 pos = 0, end;
	int r;

	if (!(commit & FR_TAG_VALID) || !(commit & FR_TAG_DIRTY))
		return 0;
	first = fr_first_sector(g, to_ochunk(fr_commit_key(commit)));
	mask = tag_sectors(c, p) &
	       fr_chunk_mask(g, to_ochunk(fr_commit_key(commit)));
	while (next_run(mask, &pos, &end)) {
		r = ops->stage(ctx, first + pos,
			       data + ((size_t)pos << FR_SECTOR_SHIFT),
			       end - pos);
		if (r)
			return r;
		pos = end;
	}
	snap->pchunk = p;
	snap->commit = commit;
	snap->seq = tag_seq(c, p);
	return 1;
}

/* Clear dirty unless the chunk was rewritten since it was staged. */
static bool clear_dirty(struct fr_cache *c, const struct fr_wb_snap *snap)
{
	u64 commit = tag_commit(c, snap->pchunk);

	if (commit != snap->commit || tag_seq(c, snap->pchunk) != snap->seq)
		return false;
	set_commit(c, snap->pchunk, commit & ~(u64)FR_TAG_DIRTY);
	return true;
}

static int write_out(const struct fr_wb_ops *ops, void *ctx)
{
	int r = ops->submit(ctx);

	return r ? r : ops->flush(ctx);
}

int fr_writeback(struct fr_cache *c, u64 *cursor, u32 max,
		 struct fr_wb_snap *snaps, const struct fr_wb_ops *ops,
		 void *ctx)
{
	u64 nr = c->geo.nr_chunks, start = *cursor < nr ? *cursor : 0;
	u64 pos = start;
	bool wrapped = false;
	u32 n = 0, i, cleaned = 0;
	int r;

	while (n < max) {
		fr_slot_t slot;

		pos = find_next_bit(c->dirty_bits, nr, pos);
		if (pos >= nr) {
			if (wrapped || !start)
				break;
			wrapped = true;
			pos = 0;
			continue;
		}
		if (wrapped && pos >= start)
			break;
		slot = fr_slot_of_pchunk(to_pchunk(pos));
		ops->lock(ctx, slot);
		r = stage_chunk(c, to_pchunk(pos), &snaps[n], ops, ctx);
		ops->unlock(ctx, slot);
		if (r == -EHWPOISON) {
			/* Its data cannot be read from PM: it stays dirty. */
			pos++;
			continue;
		}
		if (r < 0) {
			*cursor = pos;
			return r;
		}
		n += r;
		pos++;
	}
	*cursor = pos < nr ? pos : 0;
	if (!n)
		return 0;

	if (FR_MUTANT(FR_MUT_CLEAN_BEFORE_FLUSH)) {
		for (i = 0; i < n; i++)
			clear_dirty(c, &snaps[i]);
		fr_pm_fence();
	}
	/* The origin must hold the data durably before PM may forget it. */
	r = write_out(ops, ctx);
	if (r)
		return r;
	for (i = 0; i < n; i++) {
		fr_slot_t slot = fr_slot_of_pchunk(snaps[i].pchunk);

		ops->lock(ctx, slot);
		cleaned += clear_dirty(c, &snaps[i]);
		ops->unlock(ctx, slot);
	}
	fr_pm_fence();
	return cleaned;
}

static u64 count_bits(const unsigned long *bits, u64 nbits)
{
	u64 i, n = 0;

	for (i = 0; i < nbits / BITS_PER_LONG; i++)
		n += hweight64(bits[i]);
	for (i = nbits & ~(u64)(BITS_PER_LONG - 1); i < nbits; i++)
		n += test_bit(i, bits);
	return n;
}

u64 fr_count_valid(const struct fr_cache *c)
{
	return count_bits(c->valid_bits, c->geo.nr_chunks);
}

u64 fr_count_dirty(const struct fr_cache *c)
{
	return count_bits(c->dirty_bits, c->geo.nr_chunks);
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
	c->pm = pm;
	c->sb = pm;
	c->tags = (struct fr_tag_disk *)((u8 *)pm + c->geo.tags_offset);
	c->data = (u8 *)pm + c->geo.data_offset;
	c->valid_bits = valid_bits;
	c->dirty_bits = dirty_bits;
	atomic64_set(&c->next_seq, 0);
	return 0;
}

int fr_format(struct fr_cache *c, void *pm, u64 pm_bytes,
	      const struct fr_format_params *p, unsigned long *valid_bits,
	      unsigned long *dirty_bits, const char **why)
{
	struct fr_sb_disk *sb_pm = pm, sb;
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
	return 0;
}

/*
 * Recovery.
 *
 * A tag read at recovery is one of: free (V clear: its other words mean
 * nothing), valid, or corrupt (unknown flags, a key outside the origin or not
 * mapping to this slot, an empty or out-of-range sector mask, two copies of
 * one key with the same N flag, or an unreadable line).
 *
 * An INCOMPLETE member belongs to an interrupted multi-chunk write (its seq
 * names the group). Members are committed with INCOMPLETE only after every
 * member's data was durable, and INCOMPLETE is cleared only after every
 * member was committed; so one member with INCOMPLETE clear proves the whole
 * group was committed (roll forward), and otherwise the write was never
 * acknowledged and the members are dropped (roll back), which uncovers the
 * older copies still kept in their slots.
 */
struct tag_read {
	u64 commit, seq, sectors;
	bool valid, corrupt, unreadable;
};

const char *fr_tag_problem(const struct fr_geometry *g, fr_pchunk_t p,
			   u64 commit, u64 sectors)
{
	u64 key = fr_commit_key(commit);

	if (!(commit & FR_TAG_VALID))
		return NULL;
	if (fr_commit_flags(commit) & ~FR_TAG_FLAGS_KNOWN)
		return "unknown flag bits";
	if (key >= g->origin_chunks)
		return "key beyond the end of the origin";
	if (from_slot(fr_slot_of(g, to_ochunk(key))) != from_pchunk(p) >> 1)
		return "key does not map to this slot";
	if (!sectors)
		return "no sectors held";
	if (sectors & ~fr_chunk_mask(g, to_ochunk(key)))
		return "sectors beyond the end of the origin";
	return NULL;
}

static void read_tag(const struct fr_cache *c, fr_pchunk_t p,
		     struct tag_read *t)
{
	const struct fr_tag_disk *d = &c->tags[from_pchunk(p)];

	memset(t, 0, sizeof(*t));
	if (fr_pm_load8(&d->commit, &t->commit) ||
	    fr_pm_load8(&d->seq, &t->seq) ||
	    fr_pm_load8(&d->sectors, &t->sectors)) {
		t->unreadable = true;
		t->corrupt = true;
		return;
	}
	if (!(t->commit & FR_TAG_VALID))
		return;
	if (fr_tag_problem(&c->geo, p, t->commit, t->sectors)) {
		t->corrupt = true;
		return;
	}
	t->valid = true;
}

/* Read both tags of a slot and apply the pair rule. */
static void read_slot(const struct fr_cache *c, fr_slot_t s,
		      struct tag_read t[2])
{
	read_tag(c, slot_chunk(s, 0), &t[0]);
	read_tag(c, slot_chunk(s, 1), &t[1]);
	if (t[0].valid && t[1].valid &&
	    fr_commit_key(t[0].commit) == fr_commit_key(t[1].commit) &&
	    (t[0].commit & FR_TAG_NEW) == (t[1].commit & FR_TAG_NEW)) {
		/* Ambiguous copies: the older one is the corrupt one. */
		unsigned int older = t[0].seq < t[1].seq ? 0 : 1;

		t[older].valid = false;
		t[older].corrupt = true;
	}
}

static struct fr_group_scratch *find_group(struct fr_group_scratch *gs,
					   u32 n, u64 seq)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (gs[i].seq == seq)
			return &gs[i];
	return NULL;
}

/* The commit word a valid tag has once its group is resolved. */
static u64 resolved_commit(const struct tag_read *t,
			   struct fr_group_scratch *gs, u32 ngroups)
{
	struct fr_group_scratch *grp;

	if (!t->valid)
		return 0;
	if (!(t->commit & FR_TAG_INCOMPLETE))
		return t->commit;
	grp = find_group(gs, ngroups, t->seq);
	if (grp && (grp->committed || FR_MUTANT(FR_MUT_RECOVER_FORWARD)))
		return t->commit & ~(u64)FR_TAG_INCOMPLETE;
	return 0;
}

int fr_recover(struct fr_cache *c, enum fr_recover_mode mode,
	       struct fr_group_scratch *scratch, u32 scratch_len,
	       struct fr_recovery_report *rep, const char **why)
{
	const struct fr_geometry *g = &c->geo;
	bool store = mode != FR_RECOVER_CHECK;
	struct tag_read t[2];
	u32 ngroups = 0, i;
	u64 s;

	memset(rep, 0, sizeof(*rep));
	rep->first_corrupt = ~0ULL;

	/* Pass 1, read-only: corrupt tags, interrupted groups, highest seq. */
	for (s = 0; s < g->nr_slots; s++) {
		read_slot(c, to_slot(s), t);
		for (i = 0; i < 2; i++) {
			struct fr_group_scratch *grp;

			if (t[i].corrupt) {
				rep->corrupt_tags++;
				rep->unreadable_tags += t[i].unreadable;
				if (rep->first_corrupt == ~0ULL)
					rep->first_corrupt = s * 2 + i;
				continue;
			}
			if (!t[i].valid)
				continue;
			if (t[i].seq > rep->max_seq)
				rep->max_seq = t[i].seq;
			if (!(t[i].commit & FR_TAG_INCOMPLETE))
				continue;
			grp = find_group(scratch, ngroups, t[i].seq);
			if (!grp) {
				if (ngroups == scratch_len) {
					*why = "too many interrupted multi-chunk writes on PM";
					return -E2BIG;
				}
				grp = &scratch[ngroups++];
				grp->seq = t[i].seq;
				grp->members = 0;
				grp->committed = 0;
			}
			grp->members++;
		}
	}
	if (rep->corrupt_tags && mode == FR_RECOVER_APPLY) {
		*why = "corrupt tags on PM (run frctl check)";
		return -EUCLEAN;
	}

	/* Pass 2: a group with a committed member was wholly committed. */
	if (ngroups) {
		for (s = 0; s < g->nr_slots; s++) {
			read_slot(c, to_slot(s), t);
			for (i = 0; i < 2; i++) {
				struct fr_group_scratch *grp;

				if (!t[i].valid ||
				    (t[i].commit & FR_TAG_INCOMPLETE))
					continue;
				grp = find_group(scratch, ngroups, t[i].seq);
				if (grp)
					grp->committed++;
			}
		}
		for (i = 0; i < ngroups; i++) {
			if (scratch[i].committed ||
			    FR_MUTANT(FR_MUT_RECOVER_FORWARD))
				rep->groups_rolled_forward++;
			else
				rep->groups_rolled_back++;
		}
	}

	/* Pass 3: settle every member of an interrupted group. */
	if (ngroups) {
		for (s = 0; s < g->nr_slots; s++) {
			read_slot(c, to_slot(s), t);
			for (i = 0; i < 2; i++) {
				u64 rc;

				if (!t[i].valid ||
				    !(t[i].commit & FR_TAG_INCOMPLETE))
					continue;
				rc = resolved_commit(&t[i], scratch, ngroups);
				if (!rc)
					rep->members_rolled_back++;
				if (store) {
					set_commit(c, slot_chunk(to_slot(s), i),
						   rc);
					rep->stores++;
				}
			}
		}
		if (store)
			fr_pm_fence();
	}

	/*
	 * Pass 4: per slot, drop a copy superseded by a newer one of the same
	 * key, clear corrupt tags when repairing, and rebuild the bitmaps.
	 */
	for (s = 0; s < g->nr_slots; s++) {
		u64 rc[2];

		read_slot(c, to_slot(s), t);
		for (i = 0; i < 2; i++) {
			fr_pchunk_t p = slot_chunk(to_slot(s), i);

			rc[i] = resolved_commit(&t[i], scratch, ngroups);
			if (t[i].corrupt && mode == FR_RECOVER_REPAIR) {
				fr_pm_store8(&c->tags[from_pchunk(p)].commit,
					     0);
				rep->stores++;
			}
		}
		if ((rc[0] & FR_TAG_VALID) && (rc[1] & FR_TAG_VALID) &&
		    fr_commit_key(rc[0]) == fr_commit_key(rc[1])) {
			i = (rc[0] & FR_TAG_NEW) ? 1 : 0;
			rc[i] = 0;
			rep->superseded_dropped++;
			if (store) {
				fr_pm_store8(&c->tags[s * 2 + i].commit, 0);
				rep->stores++;
			}
		}
		for (i = 0; i < 2; i++) {
			u64 p = s * 2 + i;

			if (rc[i] & FR_TAG_VALID) {
				set_bit(p, c->valid_bits);
				rep->valid++;
			} else {
				clear_bit(p, c->valid_bits);
			}
			if ((rc[i] & FR_TAG_VALID) && (rc[i] & FR_TAG_DIRTY)) {
				set_bit(p, c->dirty_bits);
				rep->dirty++;
			} else {
				clear_bit(p, c->dirty_bits);
			}
		}
	}
	if (store)
		fr_pm_fence();
	atomic64_set(&c->next_seq, rep->max_seq);
	return 0;
}
