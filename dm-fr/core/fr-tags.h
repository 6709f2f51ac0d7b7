/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Private to the protocol core (the .c files of core/): access to a cache's
 * tags and slots, and the FR_STEP() hook.
 */
#ifndef FR_TAGS_H
#define FR_TAGS_H

#include "fr-core.h"

/*
 * Each step below is called through FR_STEP(), a plain call here. The host
 * tests' mutant build (tests/host/sim/mutants.c) includes fr-slot.c, fr-wb.c and
 * fr-recover.c with its own FR_STEP(), which swaps a step for a broken variant to show that the
 * crash simulator catches it; as XFS_TEST_ERROR() is a no-op in libxfs, the
 * hooks cost nothing outside that build.
 */
#ifndef FR_STEP
#define FR_STEP(step, ...) step(__VA_ARGS__)
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

/*
 * Set or clear bit i of bits, and count the change in *nr. Only the holder
 * of chunk i's slot lock changes bit i, so a plain test first is exact, and
 * saves the atomic RMW (which takes the bitmap's line, shared by 512 chunks,
 * from every other CPU) when nothing changes.
 */
static inline void set_counted_bit(unsigned long *bits, atomic64_t *nr,
				   u64 i, bool on)
{
	if (test_bit(i, bits) == on)
		return;
	if (on) {
		set_bit(i, bits);
		atomic64_inc(nr);
	} else {
		clear_bit(i, bits);
		atomic64_dec(nr);
	}
}

/* Store a commit word and keep the DRAM bitmaps and counts in step. */
static inline void set_commit(struct fr_cache *c, fr_pchunk_t p, u64 commit)
{
	u64 i = from_pchunk(p);

	fr_pm_store8(&c->tags[i].commit, commit);
	set_counted_bit(c->valid_bits, &c->nr_valid, i,
			commit & FR_TAG_VALID);
	set_counted_bit(c->dirty_bits, &c->nr_dirty, i,
			(commit & FR_TAG_VALID) && (commit & FR_TAG_DIRTY));
}

static inline fr_pchunk_t slot_chunk(const struct fr_cache *c, fr_slot_t s,
				     u32 i)
{
	return fr_slot_chunk(&c->geo, s, i);
}

static inline fr_slot_t slot_of(const struct fr_cache *c, fr_pchunk_t p)
{
	return fr_slot_of_pchunk(&c->geo, p);
}


/* Next run of set bits in mask at or after bit *pos: [*pos, end). */
static inline bool next_run(u64 mask, u32 *pos, u32 *end)
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

#endif /* FR_TAGS_H */
