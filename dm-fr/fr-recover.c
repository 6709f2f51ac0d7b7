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
 * mapping to this slot, an empty or out-of-range sector mask, two copies of
 * one key with the same N flag, or an unreadable line).
 *
 * Four passes over the tags: scan (read-only), judge the interrupted groups,
 * settle their members, then each slot on its own.
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
	if (from_slot(fr_slot_of(g, to_ochunk(key))) != from_pchunk(p) >> 1)
		return "key does not map to this slot";
	if (!sectors)
		return "no sectors held";
	if (sectors & ~fr_chunk_mask(g, to_ochunk(key)))
		return "sectors beyond the end of the origin";
	return NULL;
}

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
	t->problem = fr_tag_problem(&c->geo, p, t->commit, t->sectors);
	t->valid = (t->commit & FR_TAG_VALID) && !t->problem;
}

void fr_read_slot(const struct fr_cache *c, fr_slot_t s,
		  struct fr_tag_read t[2])
{
	if (fr_slot_tags_bad(c, s)) {
		/* Known unreadable: not read; the slot counts as empty. */
		memset(t, 0, 2 * sizeof(*t));
		return;
	}
	read_tag(c, slot_chunk(s, 0), &t[0]);
	read_tag(c, slot_chunk(s, 1), &t[1]);
	if (t[0].valid && t[1].valid &&
	    fr_commit_key(t[0].commit) == fr_commit_key(t[1].commit) &&
	    (t[0].commit & FR_TAG_NEW) == (t[1].commit & FR_TAG_NEW)) {
		/* Ambiguous copies: the older one is the corrupt one. */
		unsigned int older = t[0].seq < t[1].seq ? 0 : 1;

		t[older].valid = false;
		t[older].problem =
			"older of two copies of one key with the same N flag";
	}
}

/* One run of fr_recover(): its inputs, the groups found, the report. */
struct recovery {
	struct fr_cache *c;
	enum fr_recover_mode mode;
	bool store;			/* not FR_RECOVER_CHECK */
	struct fr_group_scratch *groups;
	u32 max_groups, ngroups;
	struct fr_recovery_report *rep;
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

/* Pass 1, read-only: corrupt tags, interrupted groups, the highest seq. */
static int recover_scan(struct recovery *rv, const char **why)
{
	struct fr_recovery_report *rep = rv->rep;
	struct fr_tag_read t[2];
	u32 i;
	u64 s;

	for (s = 0; s < rv->c->geo.nr_slots; s++) {
		if (fr_slot_tags_bad(rv->c, to_slot(s))) {
			rep->lost_slots++;
			continue;
		}
		fr_read_slot(rv->c, to_slot(s), t);
		for (i = 0; i < 2; i++) {
			struct fr_group_scratch *grp;

			if (t[i].problem) {
				rep->corrupt_tags++;
				rep->unreadable_tags += t[i].unreadable;
				if (rep->first_corrupt == ~0ULL)
					rep->first_corrupt = s * 2 + i;
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
	return 0;
}

/* Pass 2: a group with a committed member was wholly committed. */
static void recover_judge_groups(struct recovery *rv)
{
	struct fr_tag_read t[2];
	u32 i;
	u64 s;

	for (s = 0; s < rv->c->geo.nr_slots; s++) {
		fr_read_slot(rv->c, to_slot(s), t);
		for (i = 0; i < 2; i++) {
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

/* Pass 3: settle every member of an interrupted group. */
static void recover_settle_groups(struct recovery *rv)
{
	struct fr_tag_read t[2];
	u32 i;
	u64 s;

	for (s = 0; s < rv->c->geo.nr_slots; s++) {
		fr_read_slot(rv->c, to_slot(s), t);
		for (i = 0; i < 2; i++) {
			u64 rc;

			if (!t[i].valid || !(t[i].commit & FR_TAG_INCOMPLETE))
				continue;
			rc = resolved_commit(rv, &t[i]);
			if (!rc)
				rv->rep->members_rolled_back++;
			if (rv->store) {
				set_commit(rv->c, slot_chunk(to_slot(s), i), rc);
				rv->rep->stores++;
			}
		}
	}
	if (rv->store)
		fr_pm_fence();
}

/*
 * Pass 4's rule for bad chunks (struct fr_bad), given the resolved commit
 * words rc: a clean copy on one is dropped (the origin holds its data and
 * the chunk could never be read), a dirty one stays (reported unreadable).
 */
static void recover_bad_chunks(struct recovery *rv, fr_slot_t s, u64 rc[2])
{
	u32 i;

	for (i = 0; i < 2; i++) {
		fr_pchunk_t p = slot_chunk(s, i);

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
 * Pass 4, per slot: drop a copy superseded by a newer one of the same key,
 * clear corrupt tags when repairing, and rebuild the bitmaps.
 */
static void recover_slots(struct recovery *rv)
{
	struct fr_cache *c = rv->c;
	struct fr_recovery_report *rep = rv->rep;
	struct fr_tag_read t[2];
	u64 s, rc[2], nr_valid = 0, nr_dirty = 0;
	u32 i;

	for (s = 0; s < c->geo.nr_slots; s++) {
		if (fr_slot_tags_bad(c, to_slot(s))) {
			/* Nothing known: nothing valid (lost until forgotten). */
			clear_bit(s * 2, c->valid_bits);
			clear_bit(s * 2 + 1, c->valid_bits);
			clear_bit(s * 2, c->dirty_bits);
			clear_bit(s * 2 + 1, c->dirty_bits);
			continue;
		}
		fr_read_slot(c, to_slot(s), t);
		for (i = 0; i < 2; i++) {
			rc[i] = resolved_commit(rv, &t[i]);
			if (t[i].problem && rv->mode == FR_RECOVER_REPAIR) {
				fr_pm_store8(&c->tags[s * 2 + i].commit, 0);
				rep->stores++;
			}
		}
		if ((rc[0] & FR_TAG_VALID) && (rc[1] & FR_TAG_VALID) &&
		    fr_commit_key(rc[0]) == fr_commit_key(rc[1])) {
			i = (rc[0] & FR_TAG_NEW) ? 1 : 0;
			rc[i] = 0;
			rep->superseded_dropped++;
			if (rv->store) {
				fr_pm_store8(&c->tags[s * 2 + i].commit, 0);
				rep->stores++;
			}
		}
		recover_bad_chunks(rv, to_slot(s), rc);
		for (i = 0; i < 2; i++) {
			u64 p = s * 2 + i;

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
	FR_STEP(recover_slots, &rv);
	atomic64_set(&c->next_seq, rep->max_seq);
	return 0;
}
