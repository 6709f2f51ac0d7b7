// SPDX-License-Identifier: GPL-2.0-only
/*
 * coreprof: the dm-fr protocol core (dm-fr/core/) in
 * userspace on a PM image in plain memory, driven like the target drives it,
 * to count its instructions per operation deterministically under callgrind:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=OUT coreprof [N]
 *   callgrind_annotate --inclusive=yes OUT
 *
 * Phases (separate functions, so that callgrind attributes them):
 *   phase_write_miss   N 4 KiB writes to chunks not cached (fresh slots)
 *   phase_write_hit    N 4 KiB overwrites of cached chunks
 *   phase_read_hit     N lookups + 4 KiB copies out of PM
 *   phase_writeback    fr_writeback() of everything dirty, in batches of
 *                      WB_BATCH (the target's default writeback_jobs)
 *   phase_recover      fr_recover() of the whole image
 *   phase_raw_copy     N bare 4 KiB copies: what raw PM does per write
 * The fr_pm_* primitives are plain memory operations here (the kernel's are
 * memcpy_flushcache and sfence), so the counts are the core's own work.
 *
 * Built with -DCOREPROF_COUNT (no valgrind needed), the primitives also
 * count, per operation, what emulated PM hides: fences (fr_pm_fence, an
 * sfence in the kernel), 8-byte tag stores (fr_pm_store8), bytes stored and
 * the distinct 64-byte PM lines they touch (each a movnti/clwb'd line in the
 * kernel), and the line writes (distinct lines per fence epoch: a line
 * stored again after a fence is written to the media again). It prints one
 * "cost" line per kind of operation; with --check it compares them with
 * the persist points docs/protocol.md documents and prints PASS/FAIL lines
 * (the host test tests/host/run-tests runs it so). bench/tools/costs.sh
 * turns both builds' figures into bench/results/costs.{md,json}.
 * The counting build's phases are the same functions; the plain build
 * compiles the counting hooks out, so its instruction counts are unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr-core.h"
#include "fr-format.h"
#include "fr-pm.h"

#ifndef COREPROF_COUNT
void fr_pm_store8(__le64 *dst, u64 val) { *dst = cpu_to_le64(val); }
void fr_pm_copy(void *dst, const void *src, size_t len) { memcpy(dst, src, len); }
void fr_pm_fence(void) { __asm__ __volatile__("" ::: "memory"); }
#define OP_BEGIN()		do { } while (0)
#define OP_END(kind, units)	do { } while (0)
#define OP_DROP()		do { } while (0)
#else
/* What one operation stored to PM; summed, with min/max, per kind. */
struct cost {
	u64 fences;		/* fr_pm_fence */
	u64 store8;		/* fr_pm_store8: failure-atomic tag stores */
	u64 lines;		/* distinct 64-byte PM lines stored to */
	u64 line_writes;	/* distinct lines per fence epoch, summed */
	u64 bytes;		/* bytes stored (fr_pm_copy + fr_pm_store8) */
	/* DRAM, through the shim's fr_user_rmw() (FR_USER_RMW_HOOK): */
	u64 rmw;		/* atomic read-modify-writes */
	u64 global_lines;	/* distinct lines of struct fr_cache they write:
				 * every writer of every slot writes them */
	u64 bitmap_lines;	/* distinct bitmap lines: 512 chunks' each */
	/* PM data read machine-check safe (fr_pm_read, copy_mc_to_kernel in
	 * the kernel): 64-byte lines, each read counted. */
	u64 lines_read;
};
#define COST_FIELDS 9
static const char *const cost_names[COST_FIELDS] = {
	"fences", "store8", "lines", "line_writes", "bytes", "rmw",
	"global_lines", "bitmap_lines", "lines_read",
};

enum kind { K_WRITE_MISS, K_WRITE_HIT, K_READ_HIT, K_WRITEBACK, K_RECOVER,
	    K_RAW_COPY, NR_KINDS };
static const char *const kind_names[NR_KINDS] = {
	"write_miss", "write_hit", "read_hit", "writeback", "recovery",
	"raw_4k_copy",
};

struct tally {
	u64 ops, units;		/* units: chunks for writeback and recovery */
	u64 sum[COST_FIELDS], min[COST_FIELDS], max[COST_FIELDS];
};
static struct tally tallies[NR_KINDS];
static u64 cur[COST_FIELDS];	/* the operation in progress */
static int in_op;

/* Sets of line addresses, emptied in O(1) by bumping a generation. */
#define SET_SIZE (1u << 16)
struct lineset {
	uintptr_t line[SET_SIZE];
	u32 gen[SET_SIZE];
	u32 cur, used;
};
static struct lineset op_lines, epoch_lines, dram_lines;
static const struct fr_cache *prof_cache;	/* whose struct is "global" */

static void set_clear(struct lineset *s) { s->cur++; s->used = 0; }

/* Add a line; whether it was new to the set. */
static int set_add(struct lineset *s, uintptr_t line)
{
	u32 h = (u32)((line >> 6) * 0x9e3779b1u) & (SET_SIZE - 1);

	for (;; h = (h + 1) & (SET_SIZE - 1)) {
		if (s->gen[h] != s->cur) {
			if (++s->used > SET_SIZE / 2) {
				fprintf(stderr, "coreprof: too many PM lines in one operation\n");
				abort();
			}
			s->gen[h] = s->cur;
			s->line[h] = line;
			return 1;
		}
		if (s->line[h] == line)
			return 0;
	}
}

static void touch(const void *dst, size_t len)
{
	uintptr_t a = (uintptr_t)dst & ~(uintptr_t)63;
	uintptr_t end = (uintptr_t)dst + len;

	if (!in_op || !len)
		return;
	cur[4] += len;
	for (; a < end; a += 64) {
		cur[2] += set_add(&op_lines, a);
		cur[3] += set_add(&epoch_lines, a);
	}
}

void fr_pm_store8(__le64 *dst, u64 val)
{
	touch(dst, sizeof(*dst));
	cur[1] += in_op;
	*dst = cpu_to_le64(val);
}

void fr_pm_copy(void *dst, const void *src, size_t len)
{
	touch(dst, len);
	memcpy(dst, src, len);
}

/*
 * An atomic RMW of DRAM (the shim's hook): the line it writes is taken from
 * every other CPU that holds it. A line of struct fr_cache itself (next_seq,
 * nr_valid, nr_dirty) is written by every writer of every slot; a bitmap's
 * line by the writers of its 512 chunks.
 */
void fr_user_rmw(const volatile void *addr)
{
	uintptr_t a = (uintptr_t)addr & ~(uintptr_t)63;

	if (!in_op)
		return;
	cur[5]++;
	if (!set_add(&dram_lines, a))
		return;
	if (prof_cache && (uintptr_t)addr >= (uintptr_t)prof_cache &&
	    (uintptr_t)addr < (uintptr_t)(prof_cache + 1))
		cur[6]++;
	else
		cur[7]++;
}

/*
 * A machine-check-safe read of PM: the lines it reads (each read counted:
 * a line read twice goes to the media twice).
 */
static void touch_read(const void *src, size_t len)
{
	uintptr_t a = (uintptr_t)src & ~(uintptr_t)63;
	uintptr_t end = (uintptr_t)src + len;

	if (in_op && len)
		cur[8] += (end - a + 63) / 64;
}

void fr_pm_fence(void)
{
	cur[0] += in_op;
	set_clear(&epoch_lines);
	__asm__ __volatile__("" ::: "memory");
}

static void op_begin(void)
{
	memset(cur, 0, sizeof(cur));
	set_clear(&op_lines);
	set_clear(&epoch_lines);
	set_clear(&dram_lines);
	in_op = 1;
}

static void op_end(enum kind k, u64 units)
{
	struct tally *t = &tallies[k];

	in_op = 0;
	for (int i = 0; i < COST_FIELDS; i++) {
		if (!t->ops || cur[i] < t->min[i])
			t->min[i] = cur[i];
		if (!t->ops || cur[i] > t->max[i])
			t->max[i] = cur[i];
		t->sum[i] += cur[i];
	}
	t->ops++;
	t->units += units;
}
#define OP_BEGIN()		op_begin()
#define OP_END(kind, units)	op_end(kind, units)
#define OP_DROP()		(in_op = 0)

static void print_costs(void)
{
	for (int k = 0; k < NR_KINDS; k++) {
		const struct tally *t = &tallies[k];

		printf("cost %s ops=%llu units=%llu", kind_names[k],
		       (unsigned long long)t->ops, (unsigned long long)t->units);
		for (int i = 0; i < COST_FIELDS; i++)
			printf(" %s=%llu/%llu/%llu", cost_names[i],
			       (unsigned long long)t->sum[i],
			       (unsigned long long)t->min[i],
			       (unsigned long long)t->max[i]);
		printf("\n");
	}
}

/*
 * What docs/protocol.md ("Steps and persist points") documents, per
 * operation of each kind, for the paths the phases take: every operation
 * of a kind must cost exactly this (min and max alike). A change of the
 * protocol that adds or drops a fence or a store fails here: update
 * docs/protocol.md, this table and bench/results/costs.md (bench/tools/
 * costs.sh) together.
 */
struct expect {
	enum kind kind;
	u64 fences, store8, lines, line_writes;
	const char *why;
};
static const struct expect expected[] = {
	{ K_WRITE_MISS, 2, 3, 65, 66,
	  "case 1, empty slot: P1 after the data (64 lines) and F.seq, "
	  "F.sectors; P2 after F.commit (the tag line again)" },
	{ K_WRITE_HIT, 3, 5, 65, 67,
	  "case 2-1: P1 after O.commit &= ~N, the data, F.seq, F.sectors; "
	  "P2 after F.commit; P4 after O.commit := 0 (the slot's two tags "
	  "share one line, stored in each of the 3 epochs)" },
	{ K_READ_HIT, 0, 0, 0, 0, "a lookup and a copy out of PM: no stores" },
	{ K_RAW_COPY, 0, 0, 64, 64, "the bare 4 KiB copy: 64 lines, no fence" },
};

static int check_costs(void)
{
	const struct tally *wb = &tallies[K_WRITEBACK];
	const struct tally *rc = &tallies[K_RECOVER];
	int failed = 0;

	for (size_t e = 0; e < sizeof(expected) / sizeof(expected[0]); e++) {
		const struct expect *x = &expected[e];
		const struct tally *t = &tallies[x->kind];
		const u64 want[4] = { x->fences, x->store8, x->lines,
				      x->line_writes };
		int bad = !t->ops;

		for (int i = 0; i < 4; i++)
			bad |= t->min[i] != want[i] || t->max[i] != want[i];
		if (!bad) {
			printf("PASS costs: %s: %llu fences, %llu tag stores, "
			       "%llu PM lines (%llu line writes) per op, all %llu ops\n",
			       kind_names[x->kind], (unsigned long long)x->fences,
			       (unsigned long long)x->store8,
			       (unsigned long long)x->lines,
			       (unsigned long long)x->line_writes,
			       (unsigned long long)t->ops);
			continue;
		}
		failed++;
		printf("FAIL costs: %s over %llu ops:", kind_names[x->kind],
		       (unsigned long long)t->ops);
		for (int i = 0; i < 4; i++)
			printf(" %s %llu..%llu (documented %llu)%s", cost_names[i],
			       (unsigned long long)t->min[i],
			       (unsigned long long)t->max[i],
			       (unsigned long long)want[i], i < 3 ? "," : "");
		printf("; the protocol documents %s (docs/protocol.md, "
		       "\"Steps and persist points\"): if the change is meant, "
		       "update that, bench/tools/coreprof.c's table and "
		       "bench/results/costs.md (bench/tools/costs.sh)\n", x->why);
	}
	/*
	 * DRAM lines a write takes from other CPUs: one every writer of every
	 * slot writes (next_seq with nr_valid and nr_dirty beside it), and one
	 * line each of the valid and dirty bitmaps (shared by 512 chunks).
	 */
	for (int k = K_WRITE_MISS; k <= K_WRITE_HIT; k++) {
		const struct tally *t = &tallies[k];

		if (t->ops && t->min[6] == 1 && t->max[6] == 1 &&
		    t->min[7] <= 2 && t->max[7] <= 2) {
			printf("PASS costs: %s: 1 DRAM line shared by every writer "
			       "(next_seq, nr_valid, nr_dirty), <= 2 bitmap lines, "
			       "%.2f atomic RMWs per op\n", kind_names[k],
			       (double)t->sum[5] / (double)t->ops);
			continue;
		}
		failed++;
		printf("FAIL costs: %s: %llu..%llu DRAM lines every writer writes "
		       "(documented 1: next_seq, nr_valid and nr_dirty share one), "
		       "%llu..%llu bitmap lines (documented <= 2); see "
		       "bench/results/costs.md\n", kind_names[k],
		       (unsigned long long)t->min[6], (unsigned long long)t->max[6],
		       (unsigned long long)t->min[7], (unsigned long long)t->max[7]);
	}
	/*
	 * Writeback reads each chunk's data from PM once, machine-check safe
	 * (64 lines of a 4 KiB chunk), into the buffer the origin write is sent
	 * from (dm-fr/fr-stage.c); until target 1.12 it was read twice.
	 */
	if (wb->ops && wb->units && wb->sum[8] == 64 * wb->units) {
		printf("PASS costs: writeback: 64 PM lines read per 4 KiB chunk "
		       "written back (one machine-check-safe copy)\n");
	} else {
		failed++;
		printf("FAIL costs: writeback: %llu PM lines read for %llu chunks "
		       "(documented 64 per 4 KiB chunk: the stage's one copy; "
		       "bench/results/costs.md)\n",
		       (unsigned long long)wb->sum[8], (unsigned long long)wb->units);
	}
	/* Writeback: step 4, one commit &= ~D per chunk, one fence per batch. */
	if (wb->ops && wb->units && wb->min[0] == 1 && wb->max[0] == 1 &&
	    wb->sum[1] == wb->units && wb->sum[2] == wb->units) {
		printf("PASS costs: writeback: 1 fence per batch (%llu batches), "
		       "1 tag store and 1 PM line per chunk (%llu chunks)\n",
		       (unsigned long long)wb->ops, (unsigned long long)wb->units);
	} else {
		failed++;
		printf("FAIL costs: writeback: %llu..%llu fences per batch "
		       "(documented 1), %llu tag stores and %llu lines for %llu "
		       "chunks (documented 1 each per chunk: step 4 clears D, one "
		       "fence for the batch; docs/protocol.md, Writeback)\n",
		       (unsigned long long)wb->min[0], (unsigned long long)wb->max[0],
		       (unsigned long long)wb->sum[1], (unsigned long long)wb->sum[2],
		       (unsigned long long)wb->units);
	}
	/* Recovery of a consistent image: the scan alone, no stores, no fence. */
	if (rc->ops == 1 && rc->sum[0] == 0 && rc->sum[1] == 0 && rc->sum[4] == 0) {
		printf("PASS costs: recovery of a clean shutdown's image: no fence, "
		       "no stores (%llu chunks)\n", (unsigned long long)rc->units);
	} else {
		failed++;
		printf("FAIL costs: recovery of a clean shutdown's image: %llu "
		       "fences, %llu tag stores, %llu bytes (documented: the scan "
		       "alone, no fence, no stores; docs/protocol.md, Recovery)\n",
		       (unsigned long long)rc->sum[0], (unsigned long long)rc->sum[1],
		       (unsigned long long)rc->sum[4]);
	}
	return failed;
}
#endif
int fr_pm_load8(const __le64 *src, u64 *val) { *val = le64_to_cpu(*src); return 0; }
#ifdef COREPROF_COUNT
int fr_pm_read(void *dst, const void *src, size_t len)
{
	touch_read(src, len);
	memcpy(dst, src, len);
	return 0;
}
#else
int fr_pm_read(void *dst, const void *src, size_t len) { memcpy(dst, src, len); return 0; }
#endif

#define PM_BYTES (64ull << 20)
#define ORIGIN_SECTORS (1ull << 21)	/* 1 GiB */

static u8 payload_buf[4096], out_buf[4096];
static u8 stage_buf[64 * 4096];
static u64 sink;

static void payload(void *arg, void *pm_dst, u32 nr_sectors)
{
	fr_pm_copy(pm_dst, arg, (size_t)nr_sectors << 9);
}

static u64 rng = 88172645463325252ull;
static u64 xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void wb_lock(void *ctx, fr_slot_t s) { (void)ctx; (void)s; }
static int wb_stage(void *ctx, u64 sector, const void *src, u32 n)
{
	size_t *used = ctx;

	if (*used + ((size_t)n << 9) > sizeof(stage_buf))
		*used = 0;
	/* As the target's stage (dm-fr/fr-stage.c): one MC-safe copy. */
	if (fr_pm_read(stage_buf + *used, src, (size_t)n << 9))
		abort();
	*used += (size_t)n << 9;
	sink += sector;
	return 0;
}
static int wb_submit(void *ctx) { *(size_t *)ctx = 0; return 0; }
static int wb_flush(void *ctx) { (void)ctx; return 0; }
static const struct fr_wb_ops ops = {
	.lock = wb_lock, .unlock = wb_lock, .stage = wb_stage,
	.submit = wb_submit, .flush = wb_flush,
};

/* Chunks 0..n-1 (of 4 KiB): a range of half the PM never collides. */
static void __attribute__((noinline)) phase_write_miss(struct fr_cache *c, u64 n)
{
	struct fr_write_result res;

	for (u64 i = 0; i < n; i++) {
		OP_BEGIN();
		if (fr_write(c, i * 8, 8, payload, payload_buf, &res))
			abort();
		OP_END(K_WRITE_MISS, 1);
	}
}

static void __attribute__((noinline)) phase_write_hit(struct fr_cache *c, u64 n, u64 range)
{
	struct fr_write_result res;

	for (u64 i = 0; i < n; i++) {
		OP_BEGIN();
		if (fr_write(c, (xorshift() % range) * 8, 8, payload, payload_buf, &res))
			abort();
		OP_END(K_WRITE_HIT, 1);
	}
}

static void __attribute__((noinline)) phase_read_hit(struct fr_cache *c, u64 n, u64 range)
{
	struct fr_hit hit;

	for (u64 i = 0; i < n; i++) {
		OP_BEGIN();
		if (!fr_lookup(c, to_ochunk(xorshift() % range), &hit))
			abort();
		fr_pm_read(out_buf, hit.data, 4096);
		sink += out_buf[0];
		OP_END(K_READ_HIT, 1);
	}
}

/* Chunks per writeback batch: the target's default writeback_jobs. */
#define WB_BATCH FR_WB_JOBS_DEFAULT

static u64 __attribute__((noinline)) phase_writeback(struct fr_cache *c)
{
	static struct fr_wb_snap snaps[WB_BATCH];
	u64 cursor = 0, total = 0;
	size_t used = 0;
	int r;

	for (;;) {
		OP_BEGIN();
		r = fr_writeback(c, &cursor, WB_BATCH, snaps, &ops, &used);
		if (r <= 0)
			break;
		OP_END(K_WRITEBACK, (u64)r);	/* one batch: r chunks */
		total += r;
	}
	OP_DROP();	/* the last call, which found nothing to write back */
	return total;
}

static void __attribute__((noinline)) phase_recover(struct fr_cache *c)
{
	static struct fr_group_scratch scratch[16384];
	struct fr_recovery_report rep;
	const char *why = NULL;

	OP_BEGIN();
	if (fr_recover(c, FR_RECOVER_APPLY, scratch, 16384, &rep, &why)) {
		fprintf(stderr, "recover: %s\n", why);
		abort();
	}
	OP_END(K_RECOVER, c->geo.nr_chunks);
	sink += rep.valid;
}

static void __attribute__((noinline)) phase_raw_copy(u8 *pm, u64 n, u64 range)
{
	for (u64 i = 0; i < n; i++) {
		OP_BEGIN();
		fr_pm_copy(pm + (xorshift() % range) * 4096, payload_buf, 4096);
		OP_END(K_RAW_COPY, 1);
	}
}

int main(int argc, char **argv)
{
	int check = argc > 1 && !strcmp(argv[1], "--check");
	u64 n = argc > 1 + check ? strtoull(argv[1 + check], NULL, 0) : 10000, range;
	struct fr_format_params p = { .chunk_sectors = 8,
				      .origin_sectors = ORIGIN_SECTORS };
	static struct fr_cache c;
	unsigned long *valid, *dirty;
	const char *why = NULL;
	u8 *pm = aligned_alloc(4096, PM_BYTES);

	memset(pm, 0, PM_BYTES);
	memset(payload_buf, 0xa5, sizeof(payload_buf));
	strcpy(p.origin_id, "coreprof");
	/*
	 * The default width, as the kernel's fresh and frctl format it;
	 * COREPROF_WAYS another (2: pairs, costs.sh's column for them).
	 */
	p.ways = getenv("COREPROF_WAYS") ?
		 strtoul(getenv("COREPROF_WAYS"), NULL, 0) : FR_DEFAULT_WAYS;
	if (p.ways == FR_PAIR_WAYS)
		p.ways = 0;	/* version 1's layout, as frctl writes it */
	if (fr_geometry_layout(&c.geo, PM_BYTES, &p, &why)) {
		fprintf(stderr, "layout: %s\n", why);
		return 1;
	}
	valid = calloc(fr_bitmap_longs(&c.geo), sizeof(long));
	dirty = calloc(fr_bitmap_longs(&c.geo), sizeof(long));
	if (fr_format(&c, pm, PM_BYTES, &p, valid, dirty, &why)) {
		fprintf(stderr, "format: %s\n", why);
		return 1;
	}
#ifdef COREPROF_COUNT
	prof_cache = &c;
#endif
	range = c.geo.nr_chunks / 2 - c.geo.region_chunks;	/* half the PM */
	if (n > range)
		n = range;
	phase_write_miss(&c, n);
	phase_write_hit(&c, n, n);
	phase_read_hit(&c, n, n);
	printf("chunks %llu, ops per phase %llu, written back %llu\n",
	       (unsigned long long)c.geo.nr_chunks, (unsigned long long)n,
	       (unsigned long long)phase_writeback(&c));
	phase_write_hit(&c, n, n);	/* dirty again, for recovery */
	phase_recover(&c);
	phase_raw_copy(pm, n, n);
	printf("sink %llu\n", (unsigned long long)sink);
#ifdef COREPROF_COUNT
	print_costs();
	if (check) {
		int failed = check_costs();

		printf("costs: %d passed, %d failed\n",
		       (int)(sizeof(expected) / sizeof(expected[0])) + 2 - failed,
		       failed);
		return failed ? 1 : 0;
	}
#endif
	(void)check;
	return 0;
}
