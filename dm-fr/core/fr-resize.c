// SPDX-License-Identifier: GPL-2.0-only
/*
 * Resize: a new origin length for a formatted cache.
 *
 * Placement does not depend on the origin's length (fr_slot_of() uses the
 * region, the stride and the slot count only), so a resize moves no chunk:
 * it changes which keys are legal. Growing makes more keys legal; shrinking
 * must first leave no copy of a sector at or past the new end, because
 * recovery judges such a tag corrupt (fr_tag_problem()).
 *
 * The superblock's origin_sectors is covered by its checksum with the rest,
 * and 512 bytes cannot be stored failure-atomically. The length a resize
 * commits goes to resized_sectors instead, a word outside the checksum: its
 * one 8-byte store, fenced, is the commit point. Shrinking drops the clean
 * copies past the new end and fences that before the commit, so a crash
 * leaves either the old length (with clean copies gone: only reads pay) or
 * the new one with nothing past its end. A dirty copy past the new end
 * refuses the shrink: only the origin may take that data, and writing it
 * back is the caller's (the flush message) before it asks again.
 *
 * The caller has the cache to itself (the kernel: at preresume, after
 * recovery, before any I/O).
 */
#include "fr-tags.h"

/* Sectors of key's chunk that a copy may hold under a length of end. */
static u64 mask_below(const struct fr_geometry *g, u64 key, u64 end)
{
	u64 first = key << g->chunk_shift;

	if (first >= end)
		return 0;
	if (end - first >= g->chunk_sectors)
		return GENMASK_ULL(g->chunk_sectors - 1, 0);
	return GENMASK_ULL(end - first - 1, 0);
}

static bool copy_past_end(const struct fr_geometry *g, u64 commit,
			  u64 sectors, u64 end)
{
	return (commit & FR_TAG_VALID) &&
	       (sectors & ~mask_below(g, fr_commit_key(commit), end));
}

/* Check a new length against the geometry's limits (fr-format.c's rules). */
static int resize_length_ok(const struct fr_geometry *g, u64 new_sectors,
			    const char **why)
{
	if (!new_sectors) {
		*why = "origin length is zero";
		return -EINVAL;
	}
	if (((new_sectors - 1) >> g->chunk_shift) > FR_MAX_KEY) {
		*why = "origin too large for 56-bit chunk keys";
		return -EINVAL;
	}
	return 0;
}

int fr_resize_check(const struct fr_cache *c, u64 new_sectors,
		    struct fr_resize_report *rep, const char **why)
{
	const struct fr_geometry *g = &c->geo;
	struct fr_tag_read t[FR_MAX_WAYS];
	u64 s;
	u32 i;
	int r;

	memset(rep, 0, sizeof(*rep));
	r = resize_length_ok(g, new_sectors, why);
	if (r || new_sectors >= g->origin_sectors)
		return r;
	for (s = 0; s < g->nr_slots; s++) {
		if (fr_slot_tags_bad(c, to_slot(s)))
			continue;
		fr_read_slot(c, to_slot(s), t);
		for (i = 0; i < g->ways; i++) {
			if (t[i].unreadable) {
				rep->unreadable++;
				continue;
			}
			if (!t[i].valid || !copy_past_end(g, t[i].commit,
							 t[i].sectors,
							 new_sectors))
				continue;
			if (!(t[i].commit & FR_TAG_DIRTY)) {
				rep->clean_past_end++;
				continue;
			}
			if (!rep->dirty_past_end++)
				rep->first_dirty_key = fr_commit_key(t[i].commit);
		}
	}
	if (rep->unreadable) {
		*why = "tags unreadable: cannot tell what lies past the new end";
		return -EIO;
	}
	if (rep->dirty_past_end) {
		*why = "dirty chunks lie past the new end: write them back first";
		return -EBUSY;
	}
	return 0;
}

/*
 * Drop the clean copies past the new end, fenced before the commit.
 * (SHRINK_COMMIT_FIRST in mutants.c commits the length first.)
 */
static void resize_drop_past_end(struct fr_cache *c, u64 new_sectors,
				 struct fr_resize_report *rep)
{
	const struct fr_geometry *g = &c->geo;
	u64 p;

	for (p = 0; p < g->nr_chunks; p++) {
		fr_pchunk_t pc = to_pchunk(p);

		if (!test_bit(p, c->valid_bits) || fr_chunk_dirty(c, pc))
			continue;
		if (copy_past_end(g, tag_commit(c, pc), tag_sectors(c, pc),
				  new_sectors)) {
			set_commit(c, pc, 0);
			rep->clean_past_end++;
		}
	}
	if (rep->clean_past_end)
		fr_pm_fence();
}

/*
 * The commit point. (RESIZE_IN_PLACE in mutants.c rewrites the checksummed
 * origin_sectors and then the checksum instead: two stores, torn by a crash.)
 */
static void resize_commit(struct fr_cache *c, u64 new_sectors)
{
	fr_pm_store8(&c->sb->resized_sectors, new_sectors);
	fr_pm_fence();
}

int fr_resize(struct fr_cache *c, u64 new_sectors,
	      struct fr_resize_report *rep, const char **why)
{
	struct fr_geometry *g = &c->geo;
	u64 s, p;
	int r;

	memset(rep, 0, sizeof(*rep));
	r = resize_length_ok(g, new_sectors, why);
	if (r)
		return r;
	if (new_sectors == g->origin_sectors)
		return 0;
	if (new_sectors < g->origin_sectors) {
		for (s = 0; s < g->nr_slots; s++)
			if (fr_slot_lost(c, to_slot(s)))
				rep->lost_slots++;
		if (rep->lost_slots) {
			*why = "slots with unreadable tags may hold data past the new end (forget_unreadable first)";
			return -EBUSY;
		}
		for (p = 0; p < g->nr_chunks; p++) {
			fr_pchunk_t pc = to_pchunk(p);

			if (fr_chunk_dirty(c, pc) &&
			    copy_past_end(g, tag_commit(c, pc),
					  tag_sectors(c, pc), new_sectors) &&
			    !rep->dirty_past_end++)
				rep->first_dirty_key =
					fr_commit_key(tag_commit(c, pc));
		}
		if (rep->dirty_past_end) {
			*why = "dirty chunks lie past the new end: write them back first";
			return -EBUSY;
		}
		FR_STEP(resize_drop_past_end, c, new_sectors, rep);
	}
	FR_STEP(resize_commit, c, new_sectors);
	g->origin_sectors = new_sectors;
	g->origin_chunks = (new_sectors + g->chunk_sectors - 1) >>
			   g->chunk_shift;
	return 0;
}
