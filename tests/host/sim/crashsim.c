// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dm-fr crash simulator.
 *
 * Runs the protocol core (dm-fr/core/, unchanged) against simulated PM
 * (simpm.c) and a simulated origin with a volatile write cache
 * (simorigin.c). At every crash point of every operation (each fr_pm_fence,
 * each origin submit before its flush, the end of the operation) it
 * enumerates which pending PM units and unflushed origin sectors reached the
 * media (gen.c), recovers each crash state with fr_recover(APPLY) on a fresh
 * fr_cache, and checks the invariants against a reference model:
 *
 *  1. every acknowledged write is readable with its exact data;
 *  2. the write in flight is entirely there or entirely absent (per bio);
 *  3. no read returns data never written to that LBA (sector patterns encode
 *     the op id and the LBA, so stale, foreign and torn data all show);
 *  4. recovery is idempotent: at every fence of that recovery, with every
 *     subset of its pending stores, recovering again gives the same tags;
 *  5. a clean chunk's held sectors equal the origin's media;
 *  6. every PM store of the live run is made under the lock of the slot it
 *     touches: the caller's around fr_write/fr_fill/fr_discard (the whole
 *     cache around fr_recover), or the one writeback takes through ops->lock;
 * and that recovery never fails on a reachable state, leaves no INCOMPLETE
 * member and no duplicate key, and rebuilds bitmaps that match the tags.
 *
 * The geometries cover every chunk size (8 to 64 sectors) and start the
 * sequence counter at 0, just below 2^32, 2^63 and 2^64 - 2^16.
 *
 * Reads after recovery go as the kernel's will: fr_lookup(), held sectors
 * from PM, the rest from the origin.
 *
 * This file is the command line; crashsim.h lists the others: the model of
 * the kernel glue (glue-model.c), the reference model and its checks
 * (checkers.c), the crash points and states (crash-states.c), the geometries
 * and ops (workloads.c), the exhaustive and random search (explore.c).
 *
 * Usage: crashsim [--quick|--full] [--seed N] [--ops N] [--iterations N]
 *                 [--depth N] [--mutant N|all] [--no-exhaustive] [-v]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "crashsim.h"
#include "mutants.h"

/*
 * The simulator's objects are compiled once and linked twice: with the real
 * core (crashsim) and with the core's broken variants (crashsim-mut, which
 * links sim/mutants.c). With the real core these weak definitions stand in,
 * and --mutant is refused.
 */
enum fr_mutation fr_mutation __attribute__((weak));
const int crashsim_core_mutable __attribute__((weak));

/* ---------------------------------------------------------------------- */
/* Main                                                                   */

static const char *const fig3_names[F_NR] = {
	[F_1] = "case1", [F_2_1] = "2-1", [F_2_2] = "2-2",
	[F_3_1_CLEAN] = "3-1/clean", [F_3_1_DIRTY] = "3-1/dirty",
	[F_3_2_CLEAN] = "3-2/clean", [F_3_2_DIRTY] = "3-2/dirty",
	[F_3_3_CLEAN] = "3-3/clean", [F_3_3_DIRTY] = "3-3/dirty",
	[F_MULTI] = "multi-chunk", [F_PARTIAL] = "partial",
	[F_NEED_CLEAN] = "need-clean", [F_FILL] = "fill",
	[F_FILL_SKIPPED] = "fill-skipped", [F_DISCARD_DROP] = "discard-drops",
	[F_WB_CLEANED] = "wb-cleaned", [F_WB_KEPT_DIRTY] = "wb-left-dirty",
	[F_XREGION] = "xregion-refused", [F_RECOVERY_STORES] = "recoveries-with-work",
	[F_GROUP_BACK] = "groups-rolled-back", [F_GROUP_FWD] = "groups-rolled-forward",
	[F_WAITED] = "writes-waited-for-batch", [F_ERRORS] = "io-errors",
	[F_RESIZED] = "resized", [F_RESIZE_REFUSED] = "shrinks-refused",
	[F_AROUND] = "sent-around", [F_AROUND_REFUSED] = "around-to-pm",
};

static const char *const mut_names[FR_MUT_COUNT] = {
	[FR_MUT_NONE] = "NONE",
	[FR_MUT_NO_DATA_FENCE] = "NO_DATA_FENCE",
	[FR_MUT_COMMIT_BEFORE_DATA] = "COMMIT_BEFORE_DATA",
	[FR_MUT_INVALIDATE_OLD_FIRST] = "INVALIDATE_OLD_FIRST",
	[FR_MUT_KEEP_NEW_FLAG] = "KEEP_NEW_FLAG",
	[FR_MUT_IN_PLACE] = "IN_PLACE",
	[FR_MUT_CLEAN_BEFORE_FLUSH] = "CLEAN_BEFORE_FLUSH",
	[FR_MUT_NO_GROUP_FLAG] = "NO_GROUP_FLAG",
	[FR_MUT_EVICT_NO_FENCE] = "EVICT_NO_FENCE",
	[FR_MUT_RECOVER_FORWARD] = "RECOVER_FORWARD",
	[FR_MUT_MASK_64] = "MASK_64",
	[FR_MUT_CLEAR_IGNORES_SEQ] = "CLEAR_IGNORES_SEQ",
	[FR_MUT_GROUP_SEQ_U32] = "GROUP_SEQ_U32",
	[FR_MUT_CLEAR_UNLOCKED] = "CLEAR_UNLOCKED",
	[FR_MUT_POISON_CLEANS] = "POISON_CLEANS",
	[FR_MUT_STAGE_BOTH_COPIES] = "STAGE_BOTH_COPIES",
	[FR_MUT_DISCARD_KEEPS_CLEAN] = "DISCARD_KEEPS_CLEAN",
	[FR_MUT_SWEEP_WRAPS] = "SWEEP_WRAPS",
	[FR_MUT_SCAN_ONLY_PAIRS] = "SCAN_ONLY_PAIRS",
	[FR_MUT_REUSE_PINNED] = "REUSE_PINNED",
	[FR_MUT_BULK_TAG_SHIFT] = "BULK_TAG_SHIFT",
	[FR_MUT_WALK_DROPS_PARTIAL] = "WALK_DROPS_PARTIAL",
	[FR_MUT_FAILED_STAGE_CLEARS] = "FAILED_STAGE_CLEARS",
	[FR_MUT_FILL_INTO_PINNED] = "FILL_INTO_PINNED",
	[FR_MUT_UNPIN_AT_STAGE] = "UNPIN_AT_STAGE",
	[FR_MUT_PIN_ANY_OWN] = "PIN_ANY_OWN",
	[FR_MUT_PIN_IGNORES_BUDDY] = "PIN_IGNORES_BUDDY",
	[FR_MUT_RESIZE_IN_PLACE] = "RESIZE_IN_PLACE",
	[FR_MUT_SHRINK_COMMIT_FIRST] = "SHRINK_COMMIT_FIRST",
	[FR_MUT_AROUND_KEEPS_COPY] = "AROUND_KEEPS_COPY",
	[FR_MUT_AROUND_NO_PIN] = "AROUND_NO_PIN",
	[FR_MUT_AROUND_UNPIN_RACES] = "AROUND_UNPIN_RACES",
	[FR_MUT_AROUND_IGNORES_PINS] = "AROUND_IGNORES_PINS",
	[FR_MUT_STAGED_BUDDY_ONLY] = "STAGED_BUDDY_ONLY",
	[FR_MUT_SUPERSEDED_ADJACENT] = "SUPERSEDED_ADJACENT",
	[FR_MUT_STAGED_IN_A_ROW] = "STAGED_IN_A_ROW",
};

static void usage(void)
{
	fprintf(stderr,
		"usage: crashsim [options]\n"
		"  --quick            the check-host budget (default)\n"
		"  --full             deeper: depth 3 in config 0 (--deep 15: all), 2 in\n"
		"                     the others, more random runs, subsets of 2 units\n"
		"  --seed N           seed of the random sequences and subsets (default: time)\n"
		"  --iterations N     random sequences (per configuration round)\n"
		"  --ops N            operations per random sequence\n"
		"  --depth N          exhaustive sequence length after each start state\n"
		"  --no-exhaustive    skip the exhaustive sequences\n"
		"  --no-random        skip the random sequences\n"
		"  --configs MASK     bit i: run configuration i (default: all)\n"
		"  --deep MASK        configurations searched to --depth, others to 1 (default 1)\n"
		"  --mutant N|all     run deliberately broken variants (crashsim-mut only)\n"
		"  --print N          print the first N violations (default 3)\n"
		"  --wb-race          the core's stages ignore each other's pins on a\n"
		"                     buddy: victim writes and batches write a slot's data\n"
		"                     to the origin while the other has it in flight (the\n"
		"                     mutant PIN_IGNORES_BUDDY, crashsim-mut only; expected\n"
		"                     to fail)\n"
		"  --copy-stage       writeback copies what it stages, so writes may store\n"
		"                     into a pinned chunk (c->stage_copies: the target's\n"
		"                     stage); with --mutant, every variant in this mode\n"
		"  -v                 per-phase statistics (-vv: every op)\n");
	exit(16);
}

static void reset_counters(void)
{
	S.states = S.points = S.violations = S.violating_states = 0;
	S.lock_checks = 0;
	memset(cfg_seen, 0, sizeof(cfg_seen));
	S.first_violation[0] = 0;
	memset(S.fig3, 0, sizeof(S.fig3));
	dfs_ops = 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "full", no_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "ops", required_argument, NULL, 'o' },
		{ "depth", required_argument, NULL, 'd' },
		{ "no-exhaustive", no_argument, NULL, 'E' },
		{ "no-random", no_argument, NULL, 'R' },
		{ "copy-stage", no_argument, NULL, 'C' },
		{ "configs", required_argument, NULL, 'c' },
		{ "deep", required_argument, NULL, 'D' },
		{ "mutant", required_argument, NULL, 'm' },
		{ "print", required_argument, NULL, 'p' },
		{ "wb-race", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	u64 seed = (u64)time(NULL);
	u32 iterations = 8, nops = 40, depth = 2, shallow = 1, cfgmask = ~0U,
	    deepmask = 1;
	bool exhaustive = true, random_runs = true, full = false;
	bool copy_all = false;	/* --copy-stage: every mutant in that mode */
	int mutant = -1, c;
	clock_t t0 = clock();
	u32 i;

	S.gp = (struct gen_params){ .exh_words = 12, .exh = 9, .ksub = 1, .randn = 4,
				    .line_detail = true };
	S.rgp = (struct gen_params){ .exh_words = 12, .exh = 12, .ksub = 2,
				     .randn = 8 };
	S.print_violations = 3;
	S.seen_op.gen = S.seen_rec.gen = 1;
	while ((c = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
		switch (c) {
		case 'q':
			break;
		case 'f':
			full = true;
			depth = 3;
			shallow = 2;
			deepmask = 1;
			iterations = 48;
			nops = 60;
			S.gp = (struct gen_params){ .exh_words = 12, .exh = 11, .ksub = 2,
						    .randn = 16, .line_detail = true };
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'i':
			iterations = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'o':
			nops = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'd':
			depth = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'E':
			exhaustive = false;
			break;
		case 'R':
			random_runs = false;
			break;
		case 'c':
			cfgmask = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'D':
			deepmask = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			mutant = strcmp(optarg, "all") ? atoi(optarg) : 0;
			break;
		case 'p':
			S.print_violations = atoi(optarg);
			break;
		case 'W':
			S.wb_race = true;
			break;
		case 'C':
			S.copy_stage = true;
			copy_all = true;
			break;
		case 'v':
			S.verbose++;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || depth > NR_SNAPS - 1)
		usage();
	S.log = xcalloc(LOG_MAX, sizeof(*S.log));
	S.gp.seed = seed;
	S.rgp.seed = seed ^ 0x5eed;

	if ((mutant >= 0 || S.wb_race) && !crashsim_core_mutable) {
		fprintf(stderr, "crashsim: this core has no broken variants; use crashsim-mut\n");
		return 16;
	}
	if (mutant >= 0 && S.wb_race)
		usage();
	if (mutant >= 0) {
		/*
		 * Every broken variant must be caught: a short exhaustive run
		 * and a few random sequences each, stopped at the end of the op
		 * that showed the first violation.
		 */
		int m, from = mutant ? mutant : 1, to = mutant ? mutant : FR_MUT_COUNT - 1;
		u32 survived = 0, caught = 0, mmask;

		S.print_violations = 0;
		S.max_violations = 1;
		for (m = from; m <= to; m++) {
			clock_t tm = clock();

			fr_mutation = (enum fr_mutation)m;
			/*
			 * Pins keep a staged chunk from being reused before its
			 * clear, so the seq a clear compares matters only to a
			 * stage that copies (c->stage_copies). And only there
			 * does a write store into a slot a write around PM has
			 * pinned (elsewhere it waits), which an unpin racing it
			 * breaks.
			 */
			S.copy_stage = copy_all || m == FR_MUT_CLEAR_IGNORES_SEQ ||
				       m == FR_MUT_AROUND_UNPIN_RACES;
			mmask = cfgmask;
			/* A resize's steps run only where a geometry resizes. */
			if (m == FR_MUT_RESIZE_IN_PLACE ||
			    m == FR_MUT_SHRINK_COMMIT_FIRST) {
				u32 ci;

				mmask = 0;
				for (ci = 0; ci < nr_cfgs; ci++)
					if (cfgs[ci].format_sectors)
						mmask |= 1U << ci;
				mmask &= cfgmask;
			}
			reset_counters();
			run_exhaustive(1, 1, mmask, 0);
			if (!S.violating_states)
				run_random(seed, 6, 30, mmask);
			/*
			 * A stage that copies may store into a chunk in
			 * flight: this breaks only the rule it does not need.
			 */
			if (copy_all && m == FR_MUT_REUSE_PINNED) {
				if (S.violating_states) {
					survived++;
					printf("FAIL mutant %s caught with a copying stage, which may store into a chunk in flight: %llu violations; first:\n  %s",
					       mut_names[m] ? mut_names[m] : "?",
					       (unsigned long long)S.violating_states,
					       S.first_violation);
				} else {
					caught++;
					printf("PASS mutant %s survives a copying stage, as it must (%llu crash states)\n",
					       mut_names[m] ? mut_names[m] : "?",
					       (unsigned long long)S.states);
				}
				fflush(stdout);
				continue;
			}
			if (S.violating_states) {
				caught++;
				printf("PASS mutant %s caught: %s%llu violations in %llu crash states (%.1fs); first:\n  %s",
				       mut_names[m] ? mut_names[m] : "?",
				       stop_now() ? ">= " : "",
				       (unsigned long long)S.violating_states,
				       (unsigned long long)S.states,
				       (double)(clock() - tm) / CLOCKS_PER_SEC,
				       S.first_violation);
			} else {
				survived++;
				printf("FAIL mutant %s survived %llu crash states (seed %llu)\n",
				       mut_names[m] ? mut_names[m] : "?",
				       (unsigned long long)S.states,
				       (unsigned long long)seed);
			}
			fflush(stdout);
		}
		fr_mutation = FR_MUT_NONE;
		world_free();
		if (copy_all)
			printf("%u mutants as they must be with a copying stage (caught, or surviving where it may store into a chunk in flight), %u not\n",
			       caught, survived);
		else
			printf("%u mutants caught, %u survived\n", caught, survived);
		return survived ? 1 : 0;
	}

	if (S.wb_race)
		fr_mutation = FR_MUT_PIN_IGNORES_BUDDY;
	reset_counters();
	printf("crashsim: seed %llu (rerun with --seed %llu%s)\n",
	       (unsigned long long)seed, (unsigned long long)seed,
	       full ? " --full" : "");
	if (exhaustive) {
		clock_t te = clock();
		u64 st = S.states;

		run_exhaustive(depth, shallow, cfgmask, deepmask);
		printf("exhaustive: every sequence of <= %u ops (<= %u in configs outside %#x) after each start state: %llu op runs, %llu crash states (%.1fs)\n",
		       depth, shallow, deepmask, (unsigned long long)dfs_ops,
		       (unsigned long long)(S.states - st),
		       (double)(clock() - te) / CLOCKS_PER_SEC);
	}
	if (random_runs) {
		clock_t tr = clock();
		u64 st = S.states;

		run_random(seed, iterations, nops, cfgmask);
		printf("random: %u sequences of %u ops: %llu crash states (%.1fs)\n",
		       iterations, nops, (unsigned long long)(S.states - st),
		       (double)(clock() - tr) / CLOCKS_PER_SEC);
	}
	printf("coverage:");
	for (i = 0; i < F_NR; i++)
		printf(" %s=%llu", fig3_names[i], (unsigned long long)S.fig3[i]);
	printf("\n");
	for (i = 0; i < nr_cfgs; i++)
		if (cfg_seen[i].used)
			printf("geometry %-18s %2u-sector chunks, %2u slots, regions of %u: %8llu crash states, next_seq %#llx..%#llx\n",
			       cfgs[i].name, cfgs[i].chunk_sectors,
			       cfgs[i].chunks / (cfgs[i].ways ? cfgs[i].ways : 2),
			       cfgs[i].region,
			       (unsigned long long)cfg_seen[i].states,
			       (unsigned long long)cfg_seen[i].seq_lo,
			       (unsigned long long)cfg_seen[i].seq_hi);
	printf("lock check: %llu PM stores outside recovery checked for their slot's lock\n",
	       (unsigned long long)S.lock_checks);
	printf("%llu crash points, %.1fs\n", (unsigned long long)S.points,
	       (double)(clock() - t0) / CLOCKS_PER_SEC);
	world_free();
	if (S.violating_states && S.print_violations == 0)
		printf("first violation: %s", S.first_violation);
	printf("%llu crash states explored, %llu violations\n",
	       (unsigned long long)S.states,
	       (unsigned long long)S.violating_states);
	return S.violating_states ? 1 : 0;
}
