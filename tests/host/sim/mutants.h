/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Deliberately broken variants of the protocol core (mutants.c), each a
 * plausible bug that the crash simulator must catch. crashsim-mut links
 * mutants.c; crashsim links the real core and has none.
 */
#ifndef MUTANTS_H
#define MUTANTS_H

enum fr_mutation {
	FR_MUT_NONE,
	FR_MUT_NO_DATA_FENCE,		/* commit not ordered after the data */
	FR_MUT_COMMIT_BEFORE_DATA,	/* commit word stored before the data */
	FR_MUT_INVALIDATE_OLD_FIRST,	/* old copy dropped before new commit */
	FR_MUT_KEEP_NEW_FLAG,		/* old copy keeps N on overwrite */
	FR_MUT_IN_PLACE,		/* overwrite the only valid copy */
	FR_MUT_CLEAN_BEFORE_FLUSH,	/* dirty cleared before origin flush */
	FR_MUT_NO_GROUP_FLAG,		/* multi-chunk members not INCOMPLETE */
	FR_MUT_EVICT_NO_FENCE,		/* victim reused before its drop is durable */
	FR_MUT_RECOVER_FORWARD,		/* recovery completes unfinished groups */
	FR_MUT_MASK_64,			/* sector mask of 64 sectors is 0 */
	FR_MUT_CLEAR_IGNORES_SEQ,	/* writeback compares the commit word only */
	FR_MUT_GROUP_SEQ_U32,		/* recovery keeps a group's seq in a u32 */
	FR_MUT_CLEAR_UNLOCKED,		/* writeback clears dirty without the lock */
	FR_MUT_POISON_CLEANS,		/* a chunk stage could not read is cleaned */
	FR_MUT_STAGE_BOTH_COPIES,	/* a batch stages both copies of a key */
	FR_MUT_DISCARD_KEEPS_CLEAN,	/* a clean copy a discard covers in part stays */
	FR_MUT_SWEEP_WRAPS,		/* a flush's batch wraps round to chunk 0 */
	FR_MUT_SCAN_ONLY_PAIRS,		/* recovery's scan-only path misses two copies of a key */
	FR_MUT_REUSE_PINNED,		/* a write stores into a chunk in flight */
	FR_MUT_BULK_TAG_SHIFT,		/* recovery's bulk read decodes a slot's second tag from its first */
	FR_MUT_WALK_DROPS_PARTIAL,	/* a discard's slot walk drops a dirty copy it covers in part */
	FR_MUT_FAILED_STAGE_CLEARS,	/* a batch whose stage failed clears what it staged before */
	FR_MUT_FILL_INTO_PINNED,	/* a read fill installs into a chunk in flight */
	FR_MUT_UNPIN_AT_STAGE,		/* a pin released before the origin write completed */
	FR_MUT_PIN_ANY_OWN,		/* a stage holding a pin takes any pinned buddy for its own */
	FR_MUT_PIN_IGNORES_BUDDY,	/* a stage ignores another's pin on its buddy (--wb-race) */
	FR_MUT_RESIZE_IN_PLACE,		/* a resize rewrites the checksummed length, then the checksum */
	FR_MUT_SHRINK_COMMIT_FIRST,	/* a shrink commits the length before dropping copies past it */
	FR_MUT_AROUND_KEEPS_COPY,	/* a write around PM keeps the key's clean copy */
	FR_MUT_AROUND_NO_PIN,		/* a write around PM leaves its slots unpinned */
	FR_MUT_AROUND_UNPIN_RACES,	/* a write around PM is unpinned in the middle of a write to its slot */
	FR_MUT_AROUND_IGNORES_PINS,	/* a write around PM goes while an origin write of its slot is in flight */
	FR_MUT_STAGED_BUDDY_ONLY,	/* a batch looks for a key's other copy in p ^ 1 only (a pair's rule in a set) */
	FR_MUT_SUPERSEDED_ADJACENT,	/* recovery looks for two copies of a key in adjacent chunks only */
	FR_MUT_STAGED_IN_A_ROW,		/* a batch in origin order looks for a key's other copy only in the snaps just before */
	FR_MUT_COUNT
};

/* Which variant the core runs (crashsim-mut); FR_MUT_NONE: the real one. */
extern enum fr_mutation fr_mutation;
/* Nonzero in crashsim-mut. */
extern const int crashsim_core_mutable;

#endif /* MUTANTS_H */
