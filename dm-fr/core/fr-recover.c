// SPDX-License-Identifier: GPL-2.0-only
/*
 * Recovery of the chunk-pair protocol (fr_recover()) and the tag checks it
 * shares with frctl (fr_tag_problem(), fr_read_slot()). See fr-core.h for
 * the contract and docs/protocol.md, "Recovery", for what it makes of each
 * state a crash can leave.
 */
#include "fr-tags.h"

/*
 * Recovery.
 *
 * A tag read at recovery is one of: free (V clear: its other words mean
 * nothing), valid, or corrupt (unknown flags, a key outside the origin or not
 * placed in this slot, an empty or out-of-range sector mask, two copies of
 * one key with the same N flag, or an unreadable line).
 *
 * Four phases over the tags: scan (read-only), judge the interrupted groups,
 * settle their members, then each slot on its own. Only the scan runs when
 * nothing needs resolving (a clean shutdown's image, and most crashes): it
 * builds the bitmaps itself, a word at a time, as long as every slot it
 * met needs no store and no group's fate.
 *
 * An INCOMPLETE member belongs to an interrupted multi-chunk write (its seq
 * names the group). Members are committed with INCOMPLETE only after every
 * member's data was durable, and INCOMPLETE is cleared only after every
 * member was committed; so one member with INCOMPLETE clear proves the whole
 * group was committed (roll forward), and otherwise the write was never
 * acknowledged and the members are dropped (roll back), which uncovers the
 * older copies still kept in their slots.
 */
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
	if (from_slot(fr_slot_of(g, to_ochunk(key))) !=
	    from_slot(fr_slot_of_pchunk(g, p)))
		return "key belongs in another slot";
	if (!sectors)
		return "no sectors held";
	if (sectors & ~fr_chunk_mask(g, to_ochunk(key)))
		return "sectors beyond the end of the origin";
	return NULL;
}

/* Judge tag p from its words (read already). */
static void judge_tag(const struct fr_geometry *g, fr_pchunk_t p,
		      struct fr_tag_read *t)
{
	t->problem = fr_tag_problem(g, p, t->commit, t->sectors);
	t->valid = (t->commit & FR_TAG_VALID) && !t->problem;
}

/* Read tag p word by word, machine-check safe. */
static void read_tag(const struct fr_cache *c, fr_pchunk_t p,
		     struct fr_tag_read *t)
{
	const struct fr_tag_disk *d = &c->tags[from_pchunk(p)];

	memset(t, 0, sizeof(*t));
	if (fr_pm_load8(&d->commit, &t->commit) ||
	    fr_pm_load8(&d->seq, &t->seq) ||
	    fr_pm_load8(&d->sectors, &t->sectors)) {
		t->unreadable = true;
		t->problem = "unreadable";
		return;
	}
	judge_tag(&c->geo, p, t);
}

/*
 * The pair rule, for every two copies of one key in a slot (t[0 .. ways -
 * 1]): of two with the same N, the older one is corrupt.
 */
static void judge_pair(struct fr_tag_read *t, u32 ways)
{
	u32 i, j;

	for (i = 0; i < ways; i++) {
		for (j = i + 1; j < ways && t[i].valid; j++) {
			u32 older;

			if (!t[j].valid ||
			    fr_commit_key(t[i].commit) !=
			    fr_commit_key(t[j].commit) ||
			    (t[i].commit & FR_TAG_NEW) !=
			    (t[j].commit & FR_TAG_NEW))
				continue;
			/* Ambiguous copies: the older one is the corrupt one. */
			older = t[i].seq < t[j].seq ? i : j;
			t[older].valid = false;
			t[older].problem =
				"older of two copies of one key with the same N flag";
		}
	}
}

void fr_read_slot(const struct fr_cache *c, fr_slot_t s,
		  struct fr_tag_read t[FR_MAX_WAYS])
{
	u32 i;

	if (fr_slot_tags_bad(c, s)) {
		/* Known unreadable: not read; the slot counts as empty. */
		memset(t, 0, c->geo.ways * sizeof(*t));
		return;
	}
	for (i = 0; i < c->geo.ways; i++)
		read_tag(c, slot_chunk(c, s, i), &t[i]);
	judge_pair(t, c->geo.ways);
}

/*
 * Recovery reads the tags in order, FR_TAG_BATCH at a time, with one
 * machine-check-safe copy (three a tag, word by word, would cost a call per
 * word). A batch that holds a slot with known bad tags, or that cannot be
 * copied whole (a media error), is read a tag at a time as fr_read_slot()
 * does, so an error costs only the tags it hits.
 */
#define FR_TAG_BATCH	32	/* tags, 1 KiB: on the stack */

struct tag_batch {
	const struct fr_cache *c;
	bool loaded;		/* first is set: a load was tried */
	u64 first, n;		/* tags first .. first + n - 1 are in d */
	struct fr_tag_disk d[FR_TAG_BATCH];
};

static void batch_init(struct tag_batch *b, const struct fr_cache *c)
{
	b->c = c;
	b->loaded = false;
	b->first = 0;
	b->n = 0;
}

static bool batch_load(struct tag_batch *b, u64 p)
{
	const struct fr_cache *c = b->c;
	u64 first = p & ~(u64)(FR_TAG_BATCH - 1), s;

	b->loaded = true;
	b->first = first;
	b->n = 0;
	if (c->bad.tag_slots)
		for (s = first >> c->geo.ways_shift;
		     s < (first + FR_TAG_BATCH) >> c->geo.ways_shift &&
		     s < c->geo.nr_slots; s++)
			if (fr_slot_tags_bad(c, to_slot(s)))
				return false;
	if (fr_pm_read(b->d, &c->tags[first],
		       min_t(u64, FR_TAG_BATCH, c->geo.nr_chunks - first) *
		       sizeof(b->d[0])))
		return false;
	b->n = min_t(u64, FR_TAG_BATCH, c->geo.nr_chunks - first);
	return true;
}

/* Tag p of the batch (loaded, and holding p). */
static const struct fr_tag_disk *batch_tag(const struct tag_batch *b, u64 p)
{
	return &b->d[p - b->first];
}

/*
 * fr_read_slot(), from the batch when it can. (The first page is loaded
 * like every other: the bulk copy is the common path, and the one the
 * crash simulator must run.)
 */
static void batch_read_slot(struct tag_batch *b, u64 s,
			    struct fr_tag_read t[FR_MAX_WAYS])
{
	const u32 ways = b->c->geo.ways;
	u64 p = s << b->c->geo.ways_shift;
	u32 i;

	if (!b->loaded || p < b->first || p >= b->first + FR_TAG_BATCH)
		batch_load(b, p);
	if (p + ways - 1 >= b->first + b->n) {
		fr_read_slot(b->c, to_slot(s), t);
		return;
	}
	for (i = 0; i < ways; i++) {
		const struct fr_tag_disk *d = FR_STEP(batch_tag, b, p + i);

		memset(&t[i], 0, sizeof(t[i]));
		t[i].commit = le64_to_cpu(d->commit);
		t[i].seq = le64_to_cpu(d->seq);
		t[i].sectors = le64_to_cpu(d->sectors);
		judge_tag(&b->c->geo, to_pchunk(p + i), &t[i]);
	}
	judge_pair(t, ways);
}

/* One run of fr_recover(): its inputs, the groups found, the report. */
struct recovery {
	struct fr_cache *c;
	enum fr_recover_mode mode;
	bool store;			/* not FR_RECOVER_CHECK */
	/* Scan only: the scan built the bitmaps; no slot needs phase 4. */
	bool scan_only;
	struct fr_group_scratch *groups;
	u32 max_groups, ngroups;
	struct fr_recovery_report *rep;
	struct tag_batch batch;
};

static struct fr_group_scratch *find_group(const struct recovery *rv, u64 seq)
{
	u32 i;

	for (i = 0; i < rv->ngroups; i++)
		if (rv->groups[i].seq == seq)
			return &rv->groups[i];
	return NULL;
}

/* A new interrupted group, named by its seq; NULL if the scratch is full. */
static struct fr_group_scratch *add_group(struct recovery *rv, u64 seq)
{
	struct fr_group_scratch *grp;

	if (rv->ngroups == rv->max_groups)
		return NULL;
	grp = &rv->groups[rv->ngroups++];
	grp->seq = seq;
	grp->members = 0;
	grp->committed = 0;
	return grp;
}

/* The commit word a valid tag has once its group is resolved. */
static u64 resolved_commit(const struct recovery *rv,
			   const struct fr_tag_read *t)
{
	struct fr_group_scratch *grp;

	if (!t->valid)
		return 0;
	if (!(t->commit & FR_TAG_INCOMPLETE))
		return t->commit;
	grp = find_group(rv, t->seq);
	if (grp && grp->committed)
		return t->commit & ~(u64)FR_TAG_INCOMPLETE;
	return 0;
}

/*
 * The bitmaps as the scan builds them, a word at a time, while every slot
 * so far needs nothing of phase 4 (rv->scan_only): slot s's tags resolve to
 * their own commit words.
 */
struct scan_bits {
	unsigned long valid, dirty;	/* the word being built */
	u64 nr_valid, nr_dirty;
};

/*
 * Does the slot need more than the scan: a corrupt tag (repair clears it),
 * a member of an interrupted group, or two copies of one key (phase 4 drops
 * the superseded one)?
 */
static bool slot_needs_resolving(const struct fr_tag_read *t, u32 ways)
{
	u32 i, j;

	for (i = 0; i < ways; i++) {
		if (t[i].problem ||
		    (t[i].valid && (t[i].commit & FR_TAG_INCOMPLETE)))
			return true;
		for (j = i + 1; j < ways; j++)
			if (t[i].valid && t[j].valid &&
			    fr_commit_key(t[i].commit) ==
			    fr_commit_key(t[j].commit))
				return true;
	}
	return false;
}

static void scan_bits_slot(struct recovery *rv, struct scan_bits *sb, u64 s,
			   const struct fr_tag_read *t)
{
	struct fr_cache *c = rv->c;
	u32 i;

	if (FR_STEP(slot_needs_resolving, t, c->geo.ways)) {
		rv->scan_only = false;
		return;
	}
	for (i = 0; i < c->geo.ways; i++) {
		u64 p = (s << c->geo.ways_shift) + i;
		unsigned long bit = 1UL << (p % BITS_PER_LONG);

		if (t[i].valid) {
			sb->valid |= bit;
			sb->nr_valid++;
			if (t[i].commit & FR_TAG_DIRTY) {
				sb->dirty |= bit;
				sb->nr_dirty++;
			}
		}
		/* The word is complete, or the cache ends in it. */
		if (p % BITS_PER_LONG == BITS_PER_LONG - 1 ||
		    p == c->geo.nr_chunks - 1) {
			c->valid_bits[p / BITS_PER_LONG] = sb->valid;
			c->dirty_bits[p / BITS_PER_LONG] = sb->dirty;
			sb->valid = 0;
			sb->dirty = 0;
		}
	}
}

/*
 * Phase 1, read-only: corrupt tags, interrupted groups, the highest seq; and
 * the bitmaps, unless a slot needs phase 4 (then phase 4 builds them). Known
 * bad PM always takes phase 4 (its rules for bad chunks).
 */
static int recover_scan(struct recovery *rv, const char **why)
{
	struct fr_recovery_report *rep = rv->rep;
	struct scan_bits sb = { 0 };
	struct fr_tag_read t[FR_MAX_WAYS];
	const u32 ways = rv->c->geo.ways;
	u32 i;
	u64 s;

	rv->scan_only = !rv->c->bad.chunks && !rv->c->bad.tag_slots;
	batch_init(&rv->batch, rv->c);
	for (s = 0; s < rv->c->geo.nr_slots; s++) {
		if (fr_slot_tags_bad(rv->c, to_slot(s))) {
			rep->lost_slots++;
			continue;
		}
		batch_read_slot(&rv->batch, s, t);
		if (rv->scan_only)
			scan_bits_slot(rv, &sb, s, t);
		for (i = 0; i < ways; i++) {
			struct fr_group_scratch *grp;

			if (t[i].problem) {
				rep->corrupt_tags++;
				rep->unreadable_tags += t[i].unreadable;
				if (rep->first_corrupt == ~0ULL)
					rep->first_corrupt = s * ways + i;
				continue;
			}
			if (!t[i].valid)
				continue;
			rep->max_seq = max(rep->max_seq, t[i].seq);
			if (!(t[i].commit & FR_TAG_INCOMPLETE))
				continue;
			grp = find_group(rv, t[i].seq);
			if (!grp)
				grp = FR_STEP(add_group, rv, t[i].seq);
			if (!grp) {
				*why = "too many interrupted multi-chunk writes on PM";
				return -E2BIG;
			}
			grp->members++;
		}
	}
	if (rep->corrupt_tags && rv->mode == FR_RECOVER_APPLY) {
		*why = "corrupt tags on PM (run frctl check)";
		return -EUCLEAN;
	}
	if (rv->scan_only) {
		atomic64_set(&rv->c->nr_valid, sb.nr_valid);
		atomic64_set(&rv->c->nr_dirty, sb.nr_dirty);
		rep->valid = sb.nr_valid;
		rep->dirty = sb.nr_dirty;
	}
	return 0;
}

/* Phase 2: a group with a committed member was wholly committed. */
static void recover_judge_groups(struct recovery *rv)
{
	struct fr_tag_read t[FR_MAX_WAYS];
	u32 i;
	u64 s;

	batch_init(&rv->batch, rv->c);
	for (s = 0; s < rv->c->geo.nr_slots; s++) {
		batch_read_slot(&rv->batch, s, t);
		for (i = 0; i < rv->c->geo.ways; i++) {
			struct fr_group_scratch *grp;

			if (!t[i].valid || (t[i].commit & FR_TAG_INCOMPLETE))
				continue;
			grp = find_group(rv, t[i].seq);
			if (grp)
				grp->committed++;
		}
	}
	for (i = 0; i < rv->ngroups; i++) {
		if (rv->groups[i].committed)
			rv->rep->groups_rolled_forward++;
		else
			rv->rep->groups_rolled_back++;
	}
}

/* Phase 3: settle every member of an interrupted group. */
static void recover_settle_groups(struct recovery *rv)
{
	struct fr_tag_read t[FR_MAX_WAYS];
	u32 i;
	u64 s;

	batch_init(&rv->batch, rv->c);
	for (s = 0; s < rv->c->geo.nr_slots; s++) {
		batch_read_slot(&rv->batch, s, t);
		for (i = 0; i < rv->c->geo.ways; i++) {
			u64 rc;

			if (!t[i].valid || !(t[i].commit & FR_TAG_INCOMPLETE))
				continue;
			rc = resolved_commit(rv, &t[i]);
			if (!rc)
				rv->rep->members_rolled_back++;
			if (rv->store) {
				set_commit(rv->c, slot_chunk(rv->c, to_slot(s), i),
					   rc);
				rv->rep->stores++;
			}
		}
	}
	if (rv->store)
		fr_pm_fence();
}

/*
 * Phase 4's rule for bad chunks (struct fr_bad), given the resolved commit
 * words rc: a clean copy on one is dropped (the origin holds its data and
 * the chunk could never be read), a dirty one stays (reported unreadable).
 */
static void recover_bad_chunks(struct recovery *rv, fr_slot_t s, u64 *rc)
{
	u32 i;

	for (i = 0; i < rv->c->geo.ways; i++) {
		fr_pchunk_t p = slot_chunk(rv->c, s, i);

		if (!(rc[i] & FR_TAG_VALID) || !fr_chunk_bad(rv->c, p))
			continue;
		if (rc[i] & FR_TAG_DIRTY) {
			rv->rep->bad_dirty++;
			continue;
		}
		rc[i] = 0;
		rv->rep->bad_clean_dropped++;
		if (rv->store) {
			fr_pm_store8(&rv->c->tags[from_pchunk(p)].commit, 0);
			rv->rep->stores++;
		}
	}
}

/*
 * Phase 4's rule for two copies of one key (resolved commit words rc of
 * the slot whose first chunk is base): the one without N is superseded.
 * (The pair rule made two with the same N one.)
 */
static void recover_superseded(struct recovery *rv, u64 base, u64 *rc)
{
	struct fr_cache *c = rv->c;
	u32 i, j, drop;

	for (i = 0; i < c->geo.ways; i++) {
		for (j = i + 1; j < c->geo.ways && (rc[i] & FR_TAG_VALID); j++) {
			if (!(rc[j] & FR_TAG_VALID) ||
			    fr_commit_key(rc[i]) != fr_commit_key(rc[j]))
				continue;
			drop = (rc[i] & FR_TAG_NEW) ? j : i;
			rc[drop] = 0;
			rv->rep->superseded_dropped++;
			if (rv->store) {
				fr_pm_store8(&c->tags[base + drop].commit, 0);
				rv->rep->stores++;
			}
		}
	}
}

/*
 * Phase 4, per slot: drop a copy superseded by a newer one of the same key,
 * clear corrupt tags when repairing, and rebuild the bitmaps.
 */
static void recover_slots(struct recovery *rv)
{
	struct fr_cache *c = rv->c;
	struct fr_recovery_report *rep = rv->rep;
	struct fr_tag_read t[FR_MAX_WAYS];
	const u32 ways = c->geo.ways;
	u64 s, base, rc[FR_MAX_WAYS], nr_valid = 0, nr_dirty = 0;
	u32 i;

	batch_init(&rv->batch, c);
	for (s = 0; s < c->geo.nr_slots; s++) {
		base = s << c->geo.ways_shift;
		if (fr_slot_tags_bad(c, to_slot(s))) {
			/* Nothing known: nothing valid (lost until forgotten). */
			for (i = 0; i < ways; i++) {
				clear_bit(base + i, c->valid_bits);
				clear_bit(base + i, c->dirty_bits);
			}
			continue;
		}
		batch_read_slot(&rv->batch, s, t);
		for (i = 0; i < ways; i++) {
			rc[i] = resolved_commit(rv, &t[i]);
			if (t[i].problem && rv->mode == FR_RECOVER_REPAIR) {
				fr_pm_store8(&c->tags[base + i].commit, 0);
				rep->stores++;
			}
		}
		FR_STEP(recover_superseded, rv, base, rc);
		recover_bad_chunks(rv, to_slot(s), rc);
		for (i = 0; i < ways; i++) {
			u64 p = base + i;

			if (rc[i] & FR_TAG_VALID) {
				set_bit(p, c->valid_bits);
				nr_valid++;
			} else {
				clear_bit(p, c->valid_bits);
			}
			if ((rc[i] & FR_TAG_VALID) && (rc[i] & FR_TAG_DIRTY)) {
				set_bit(p, c->dirty_bits);
				nr_dirty++;
			} else {
				clear_bit(p, c->dirty_bits);
			}
		}
	}
	atomic64_set(&c->nr_valid, nr_valid);
	atomic64_set(&c->nr_dirty, nr_dirty);
	rep->valid += nr_valid;
	rep->dirty += nr_dirty;
	if (rv->store)
		fr_pm_fence();
}

int fr_recover(struct fr_cache *c, enum fr_recover_mode mode,
	       struct fr_group_scratch *scratch, u32 scratch_len,
	       struct fr_recovery_report *rep, const char **why)
{
	struct recovery rv = {
		.c = c, .mode = mode, .store = mode != FR_RECOVER_CHECK,
		.groups = scratch, .max_groups = scratch_len, .rep = rep,
	};
	int r;

	memset(rep, 0, sizeof(*rep));
	rep->first_corrupt = ~0ULL;
	r = FR_STEP(recover_scan, &rv, why);
	if (r)
		return r;
	if (rv.ngroups) {
		FR_STEP(recover_judge_groups, &rv);
		FR_STEP(recover_settle_groups, &rv);
	}
	/* Nothing to store and the bitmaps built: the scan was enough. */
	if (!rv.scan_only)
		FR_STEP(recover_slots, &rv);
	atomic64_set(&c->next_seq, rep->max_seq);
	return 0;
}
