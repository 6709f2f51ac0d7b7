/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The First Responder chunk-pair protocol at the block layer: pure logic on a
 * PM image in memory (DAX in the kernel, a file or buffer in userspace), with
 * no I/O, no allocation and no locking inside.
 *
 * Placement (no index, no allocator): origin chunk c lies in region
 * r = c / region_chunks at offset o = c % region_chunks, and may only live in
 * slot (r * stride + o) mod nr_slots, in any of that slot's chunks: two (a
 * pair), or a set's (FR_INCOMPAT_SETS, geo.ways).
 *
 * Locking contract: the caller serialises every call that touches a slot.
 * fr_write(), fr_fill(), fr_discard() and fr_lookup() need the locks of every
 * slot their range's keys are placed in, held for the whole call; fr_writeback() takes the
 * locks itself, one slot at a time, through its ops. fr_recover() and
 * fr_format() need the cache to themselves.
 *
 * Durability contract: when fr_write() returns 0, the data and the tags that
 * make it visible are durable on PM (every store fenced), so the caller may
 * acknowledge the write. A multi-chunk write is atomic: after a crash either
 * all of it is visible or none of it.
 *
 * The words used here, one meaning each: docs/glossary.md.
 */
#ifndef FR_CORE_H
#define FR_CORE_H

#include "fr-format.h"
#include "fr-interface.h"
#include "fr-pm.h"

/* Indices that must not be mixed up (sparse checks them as __bitwise). */
typedef u64 __bitwise fr_ochunk_t;	/* origin chunk number: a tag's key */
typedef u64 __bitwise fr_slot_t;	/* pair (or set) of PM chunks */
typedef u64 __bitwise fr_pchunk_t;	/* PM chunk: ways * slot + 0 .. ways - 1 */

static inline u64 from_ochunk(fr_ochunk_t c) { return (__force u64)c; }
static inline fr_ochunk_t to_ochunk(u64 v) { return (__force fr_ochunk_t)v; }
static inline u64 from_slot(fr_slot_t s) { return (__force u64)s; }
static inline fr_slot_t to_slot(u64 v) { return (__force fr_slot_t)v; }
static inline u64 from_pchunk(fr_pchunk_t p) { return (__force u64)p; }
static inline fr_pchunk_t to_pchunk(u64 v) { return (__force fr_pchunk_t)v; }

static inline fr_slot_t fr_slot_of_pchunk(const struct fr_geometry *g,
					   fr_pchunk_t p)
{
	return to_slot(from_pchunk(p) >> g->ways_shift);
}

/* Chunk i (0 .. g->ways - 1) of slot s. */
static inline fr_pchunk_t fr_slot_chunk(const struct fr_geometry *g,
					fr_slot_t s, u32 i)
{
	return to_pchunk(from_slot(s) << g->ways_shift | i);
}

/*
 * PM that is known to be unreadable (a bad block list, given by the caller
 * before fr_recover() or fr_format_bad(); all NULL when there is none). The
 * core never loads or stores a known bad range with plain accesses:
 *
 *   chunks     per PM chunk: its data is unreadable. It is never a write or
 *              fill destination; a dirty copy on it stays dirty, reads of it
 *              fail (fr_hit.unreadable), writeback skips it; recovery drops
 *              a clean copy on it (the origin holds that data).
 *   tag_slots  per slot: its tags are unreadable and never touched. The slot
 *              holds nothing the core can see; writes of its keys go to the
 *              origin (FR_WRITE_BYPASS), or fail while the slot is lost.
 *   lost       per slot, a subset of tag_slots: what the slot held is
 *              unknown (it may hold the only copy of dirty data), so reads
 *              and writes of every key placed in it fail until the caller
 *              declares it lost (fr_forget_unreadable()), after which the
 *              origin is authoritative for those keys.
 *
 * A slot whose chunks are all bad is like a forgotten slot
 * (FR_WRITE_BYPASS).
 */
struct fr_bad {
	unsigned long *chunks;
	unsigned long *tag_slots;
	unsigned long *lost;
};

struct fr_cache {
	struct fr_geometry geo;
	struct fr_sb_disk *sb;		/* the start of the PM image */
	struct fr_tag_disk *tags;
	u8 *data;
	/* DRAM state: one bit per PM chunk each, rebuilt by fr_recover(). */
	unsigned long *valid_bits;
	unsigned long *dirty_bits;
	/*
	 * How many bits each has set, kept in step with them (set_commit(),
	 * recovery) so that status and writeback count without a scan. Beside
	 * next_seq, in 24 bytes aligned to 32 that no line boundary splits:
	 * the one DRAM line every write takes from the other CPUs
	 * (bench/results/costs.md).
	 */
	atomic64_t nr_valid __aligned(32);
	atomic64_t nr_dirty;
	atomic64_t next_seq;
	/* PM known to be unreadable (none when NULL): struct fr_bad. */
	struct fr_bad bad;
	/*
	 * Per PM chunk: an origin write in flight reads its data straight
	 * from PM (writeback without a copy), so it must not change until
	 * that write is done. Set and cleared by the core's writeback and its
	 * writes around PM, under the slot lock (fr-wb.c: the pin rule;
	 * fr-around.c); the caller allocates it,
	 * or leaves it NULL when no two writers ever run at once (nothing is
	 * pinned then). A pinned chunk is never a write or fill destination
	 * (it may be dropped: its data stays), unless stage_copies.
	 */
	unsigned long *pinned;
	/*
	 * The caller's stage op copies the data it is given, so a store into
	 * a pinned chunk cannot reach the origin write: the pins then only
	 * keep two origin writes of one slot apart (docs/protocol.md, "What
	 * a pin must cover"). The kernel reads PM when it submits: false.
	 */
	bool stage_copies;
};

static inline bool fr_chunk_bad(const struct fr_cache *c, fr_pchunk_t p)
{
	return c->bad.chunks && test_bit(from_pchunk(p), c->bad.chunks);
}

static inline bool fr_chunk_pinned(const struct fr_cache *c, fr_pchunk_t p)
{
	return c->pinned && test_bit(from_pchunk(p), c->pinned);
}

/* Whether any chunk of slot s is pinned. */
static inline bool fr_slot_pinned(const struct fr_cache *c, fr_slot_t s)
{
	u32 i;

	for (i = 0; i < c->geo.ways; i++)
		if (fr_chunk_pinned(c, fr_slot_chunk(&c->geo, s, i)))
			return true;
	return false;
}

static inline bool fr_slot_tags_bad(const struct fr_cache *c, fr_slot_t s)
{
	return c->bad.tag_slots && test_bit(from_slot(s), c->bad.tag_slots);
}

static inline bool fr_slot_lost(const struct fr_cache *c, fr_slot_t s)
{
	return c->bad.lost && test_bit(from_slot(s), c->bad.lost);
}

static inline fr_ochunk_t fr_chunk_of_sector(const struct fr_geometry *g,
					     u64 sector)
{
	return to_ochunk(sector >> g->chunk_shift);
}

static inline u64 fr_first_sector(const struct fr_geometry *g, fr_ochunk_t c)
{
	return from_ochunk(c) << g->chunk_shift;
}

/*
 * x mod nr_slots, for any 64-bit x, without a division: Lemire, Kaser and
 * Kurz, "Faster remainder by direct computation" (2019), with the 128-bit
 * reciprocal of g->slots_recip. A 64-bit division takes tens of cycles, and
 * fr_slot_of() runs several times per chunk of every bio.
 */
static inline u64 fr_mod_slots(const struct fr_geometry *g, u64 x)
{
#ifdef __SIZEOF_INT128__
	__uint128_t m = (__uint128_t)g->slots_recip[1] << 64 |
			g->slots_recip[0];
	__uint128_t low = m * x;	/* the fraction x / nr_slots */
	__uint128_t hi = (__uint128_t)(u64)(low >> 64) * g->nr_slots;
	__uint128_t lo = (__uint128_t)(u64)low * g->nr_slots;

	return (u64)((hi + (lo >> 64)) >> 64);
#else
	return x % g->nr_slots;
#endif
}

static inline fr_slot_t fr_slot_of(const struct fr_geometry *g, fr_ochunk_t c)
{
	u64 region = from_ochunk(c) >> g->region_shift;
	u64 offset = from_ochunk(c) & (g->region_chunks - 1);
	u64 s;

	/*
	 * (region * stride + offset) mod nr_slots. stride < nr_slots <= 2^32,
	 * so the product of the reduced region fits in 64 bits; offset <
	 * region_chunks <= nr_slots, so one subtraction reduces the sum.
	 */
	s = fr_mod_slots(g, fr_mod_slots(g, region) * g->stride_slots) + offset;
	return to_slot(s >= g->nr_slots ? s - g->nr_slots : s);
}

/* Sectors of chunk c that exist on the origin (the last may be short). */
static inline u64 fr_chunk_mask(const struct fr_geometry *g, fr_ochunk_t c)
{
	u64 first = fr_first_sector(g, c);
	u64 n = g->chunk_sectors;

	if (first + n > g->origin_sectors)
		n = g->origin_sectors - first;
	return GENMASK_ULL(n - 1, 0);
}

static inline void *fr_chunk_data(const struct fr_cache *c, fr_pchunk_t p)
{
	return c->data + (from_pchunk(p) << (c->geo.chunk_shift +
					     FR_SECTOR_SHIFT));
}

/*
 * Attach to a PM image in memory: decode and check the superblock, and set
 * what it decides (geometry, the PM's parts, the bitmaps, counts zeroed).
 * The caller's fields are left alone: c->bad, c->pinned and c->stage_copies
 * are the caller's to set (or leave zero: no bad PM, nothing ever pinned).
 */
int fr_cache_attach(struct fr_cache *c, void *pm, u64 pm_bytes,
		    unsigned long *valid_bits, unsigned long *dirty_bits,
		    const char **why);

/*
 * Write a fresh, empty cache: every tag cleared, then the superblock, whose
 * magic is stored last. Leaves c attached (bitmaps cleared, caller-sized by
 * fr_bitmap_longs()).
 */
int fr_format(struct fr_cache *c, void *pm, u64 pm_bytes,
	      const struct fr_format_params *p, unsigned long *valid_bits,
	      unsigned long *dirty_bits, const char **why);

/*
 * fr_format() on PM with bad ranges: the tags of slots in bad->tag_slots are
 * not written (those slots stay retired; bad->lost must be clear for them),
 * and c->bad is set to *bad.
 */
int fr_format_bad(struct fr_cache *c, void *pm, u64 pm_bytes,
		  const struct fr_format_params *p, unsigned long *valid_bits,
		  unsigned long *dirty_bits, const struct fr_bad *bad,
		  const char **why);

static inline u64 fr_bitmap_longs(const struct fr_geometry *g)
{
	return BITS_TO_LONGS(g->nr_chunks);
}

/*
 * Recovery. One linear scan of the tags (plus one more per pass only when an
 * interrupted multi-chunk write is found). FR_RECOVER_CHECK changes nothing and
 * reports what APPLY would do. APPLY resolves every half-done step, rolls
 * incomplete groups back (or forward once any member was committed) and drops
 * superseded copies, but refuses PM with corrupt tags (-EUCLEAN) without
 * changing anything. REPAIR does what APPLY does and also clears corrupt tags.
 * Idempotent: a crash during recovery is recovered by running it again.
 */
enum fr_recover_mode {
	FR_RECOVER_CHECK,
	FR_RECOVER_APPLY,
	FR_RECOVER_REPAIR,
};

/* Scratch for interrupted groups, sized by the caller (not on the I/O path). */
struct fr_group_scratch {
	u64 seq;
	u32 members;
	u32 committed;			/* members with INCOMPLETE clear */
};

struct fr_recovery_report {
	u64 valid;			/* valid chunks after recovery */
	u64 dirty;			/* dirty chunks after recovery */
	u64 groups_rolled_back;
	u64 groups_rolled_forward;
	u64 members_rolled_back;
	u64 superseded_dropped;		/* older copies of a key dropped */
	u64 corrupt_tags;
	u64 first_corrupt;		/* PM chunk index, if corrupt_tags */
	u64 unreadable_tags;		/* machine-check on read */
	u64 lost_slots;			/* tags known bad: skipped (fr_bad) */
	u64 bad_clean_dropped;		/* clean copies on bad chunks dropped */
	u64 bad_dirty;			/* dirty copies on bad chunks kept */
	u64 max_seq;
	u64 stores;			/* PM words written (0 for CHECK) */
};

/*
 * Why a tag read as (commit, sectors) from PM chunk p is corrupt, or NULL if
 * it is free or well formed on its own (recovery also applies a pair rule:
 * two copies of one key with the same N flag).
 */
const char *fr_tag_problem(const struct fr_geometry *g, fr_pchunk_t p,
			   u64 commit, u64 sectors);

/*
 * A tag as recovery reads it (machine-check safe), with its verdict: free
 * (V clear), valid, or corrupt with the reason: unreadable, a problem of the
 * tag alone (fr_tag_problem()), or the pair rule (of two copies of one key
 * with the same N flag, the older one is corrupt).
 */
struct fr_tag_read {
	u64 commit, seq, sectors;
	const char *problem;		/* NULL unless corrupt */
	bool valid;
	bool unreadable;
};

/*
 * Read the tags of slot s (t[0 .. ways - 1]) and apply the pair rule to
 * every two copies of one key.
 */
void fr_read_slot(const struct fr_cache *c, fr_slot_t s,
		  struct fr_tag_read t[FR_MAX_WAYS]);

int fr_recover(struct fr_cache *c, enum fr_recover_mode mode,
	       struct fr_group_scratch *scratch, u32 scratch_len,
	       struct fr_recovery_report *rep, const char **why);

/*
 * Payload source for a write or a fill: called once per chunk the range
 * touches, in ascending sector order, to place the next nr_sectors of the
 * payload at pm_dst. It must write PM only through fr_pm_copy() (or an
 * equivalent that needs only fr_pm_fence() to become durable).
 */
typedef void (*fr_payload_fn)(void *arg, void *pm_dst, u32 nr_sectors);

/*
 * What fr_write() did: only FR_WRITE_DONE acknowledges the write. The other
 * outcomes say what the caller must do before it can be written, or why it
 * cannot; none of them is an error code.
 */
enum fr_write_outcome {
	/* Durable on PM. */
	FR_WRITE_DONE = 0,
	/*
	 * Nothing changed: a slot holds two chunks of which the one to
	 * displace, res->victim, is dirty. The caller drops its slot locks,
	 * writes the victim back with fr_writeback_chunk() (origin I/O)
	 * and calls fr_write() again.
	 */
	FR_WRITE_NEED_CLEAN,
	/*
	 * Nothing changed: the chunk the write would store into, res->victim,
	 * is pinned (an origin write in flight reads it: struct fr_cache).
	 * The caller drops its slot locks, waits until it is unpinned and
	 * calls fr_write() again: one origin write and flush at most.
	 */
	FR_WRITE_PINNED,
	/*
	 * Nothing changed: the slot of origin chunk res->bypass has no PM
	 * chunk it can write (its tags or both its chunks are bad). The
	 * caller writes that chunk's part of the range to the origin and
	 * then drops the chunk from PM (fr_discard()) if it wrote all of it.
	 */
	FR_WRITE_BYPASS,
	/*
	 * res->error: -EIO if PM could not be read (the write may have stored
	 * unfenced, uncommitted data: harmless, see docs/protocol.md) or,
	 * having changed nothing, if the range is placed in a lost slot or would
	 * have to merge sectors of a copy on a bad chunk (struct fr_bad);
	 * -EINVAL, having changed nothing, for a range outside the cache or
	 * across a region.
	 */
	FR_WRITE_FAILED,
};

struct fr_write_result {
	fr_pchunk_t victim;		/* NEED_CLEAN: clean it; PINNED: wait */
	u64 bypass;			/* FR_WRITE_BYPASS: this origin chunk */
	int error;			/* FR_WRITE_FAILED: -errno */
	u32 chunks;			/* chunks written */
	u32 hits;			/* of which were already cached */
	u32 evictions;			/* clean chunks displaced */
};

/*
 * Write nr_sectors at sector, durably. The range must lie within one region
 * (so a multi-chunk write is placed in distinct slots). See enum
 * fr_write_outcome for what it returns.
 */
enum fr_write_outcome fr_write(struct fr_cache *c, u64 sector, u32 nr_sectors,
			       fr_payload_fn payload, void *arg,
			       struct fr_write_result *res);

/* A read lookup: where (if anywhere) chunk key is held on PM. */
struct fr_hit {
	fr_pchunk_t pchunk;
	u64 sectors;			/* held sectors of the chunk */
	const void *data;		/* start of the chunk on PM */
	/*
	 * The held sectors cannot be read: the copy is on a bad chunk, or the
	 * slot is lost (then sectors is the whole chunk and data NULL).
	 */
	bool unreadable;
};

bool fr_lookup(const struct fr_cache *c, fr_ochunk_t key, struct fr_hit *hit);

/*
 * Install a clean copy of a whole chunk just read from the origin, if its
 * slot has room without displacing dirty data. Returns 1 if installed, 0 if
 * skipped (already cached, or no clean room that is not pinned), -EIO on PM
 * read failure.
 * The caller must make sure no write to key happened since the origin read.
 */
int fr_fill(struct fr_cache *c, fr_ochunk_t key, fr_payload_fn payload,
	    void *arg);

/* Whether fr_fill() of key would install it now (same locks as fr_fill). */
bool fr_can_fill(const struct fr_cache *c, fr_ochunk_t key);

/*
 * Before the range is discarded on the origin: drop every copy the range
 * covers whole, and every clean copy it covers in part (a clean copy must
 * equal the origin). A dirty copy covered in part stays, with the data of
 * all its held sectors. Returns chunks dropped.
 * fr_discard() walks the range's chunks (locks: every slot they are placed in);
 * fr_discard_slots() walks nr slots from first (locks: those slots), which
 * is cheaper when the range is larger than the cache.
 */
u64 fr_discard(struct fr_cache *c, u64 sector, u64 nr_sectors);
u64 fr_discard_slots(struct fr_cache *c, fr_slot_t first, u64 nr,
		     u64 sector, u64 nr_sectors);

/*
 * A write the caller sends around PM, to the origin (admission,
 * fr-around.c). fr_around_begin() (locks: every slot the range, which lies
 * within one region, is placed in) returns FR_AROUND_REFUSED if it may not
 * go around: a key of the range is held dirty (the write goes to PM, in
 * front of it), or a slot of the range is lost or has bad tags; else
 * FR_AROUND_BUSY if a slot of the range is pinned (an origin write of its
 * data is in flight: the caller may wait until it is unpinned and ask
 * again, or store the write on PM). Else it drops the range's clean copies,
 * fenced, pins every chunk of each of its slots and returns FR_AROUND_GO;
 * the caller then writes the origin durably, and once that write completed,
 * successfully or not, calls fr_around_end() (locks: the same slots), which
 * unpins them. Under the locks, as every pin change: the core reads a
 * slot's pins more than once under its lock (a write picks the free chunk
 * when it places its data and again when it commits), and a pin cleared in
 * between would make the write commit a chunk it never wrote.
 */
enum fr_around {
	FR_AROUND_GO,
	FR_AROUND_BUSY,
	FR_AROUND_REFUSED,
};

enum fr_around fr_around_begin(struct fr_cache *c, u64 sector,
			       u32 nr_sectors);
void fr_around_end(struct fr_cache *c, u64 sector, u32 nr_sectors);

/*
 * Writeback. fr_writeback() takes up to max dirty chunks from *cursor on,
 * stages their data for the origin, has the caller write and FLUSH the
 * origin, and only then clears their dirty flags (those not rewritten in the
 * meantime). A batch never stages two versions of one key (their origin
 * writes would overlap, in any order): it ends before the second, which
 * starts the next batch. The ops run in process context and may sleep.
 */
struct fr_wb_ops {
	void (*lock)(void *ctx, fr_slot_t slot);
	void (*unlock)(void *ctx, fr_slot_t slot);
	/*
	 * Stage nr_sectors of PM data for origin sector: submit writes them
	 * to the origin (the glue may read them from PM until then: the core
	 * has pinned the chunk, and no write stores into a pinned chunk).
	 * -EHWPOISON: PM could not be read; the glue has dropped what it
	 * staged of this chunk, and the chunk is skipped (left dirty).
	 * Another error drops the chunk too and ends the batch.
	 */
	int (*stage)(void *ctx, u64 sector, const void *pm_src, u32 nr_sectors);
	/*
	 * Optional: start the origin writes of what is staged so far, if the
	 * glue wants to (the core calls it after each chunk staged, with no
	 * slot lock held); submit writes the rest and waits for all.
	 */
	void (*send)(void *ctx);
	/*
	 * With send: wait for the origin writes send started and send no
	 * more. The core calls it when a stage failed, before it unpins.
	 */
	void (*wait)(void *ctx);
	/*
	 * Write everything staged to the origin and wait for all of it,
	 * failed or not (the core unpins when it returns an error).
	 */
	int (*submit)(void *ctx);
	/* Flush the origin's volatile cache (REQ_PREFLUSH) and wait. */
	int (*flush)(void *ctx);
	/*
	 * Optional: dirty chunk p was skipped without a stage call, because
	 * it lies on a known bad chunk (struct fr_bad); it stays dirty.
	 */
	void (*skip)(void *ctx, fr_pchunk_t p);
};

struct fr_wb_snap {
	fr_pchunk_t pchunk;
	u64 commit;
	u64 seq;
};

/*
 * Chunks a batch stages in origin order at once (fr_writeback_batch): a
 * multiple of the widest slot. 256 chunks are 32 sets of 8, so a run of
 * neighbouring origin chunks in them fills a 128 KiB stage buffer. The host
 * tests build the core with a smaller one, so that their small caches have
 * spans to cross.
 */
#ifndef FR_WB_SPAN
#define FR_WB_SPAN	256
#endif

/* Which dirty chunks a writeback batch takes (docs/glossary.md: scan). */
enum fr_wb_scan {
	FR_WB_WRAP,		/* every dirty chunk; on from chunk 0 at the end */
	FR_WB_TO_END,		/* every dirty chunk up to end; stops there */
	FR_WB_FULL_SLOTS,	/* those of slots whose chunks are all dirty; wraps */
};

/*
 * One writeback batch, the core's one entry for any kind: up to max dirty
 * chunks of the scan from *cursor on are staged (snaps holds max; a span
 * of FR_WB_SPAN chunks at a time, in the order of the origin chunks they
 * hold, so that neighbours on the origin go out side by side), then
 * submitted, the origin flushed, and their dirty flags cleared where no
 * write changed them since. A scan that wraps goes on from chunk 0 up to
 * the slot where it began when it reaches the end (end is ignored), and
 * *cursor ends below nr_chunks; FR_WB_TO_END stops at end (at most
 * nr_chunks), and *cursor is end once the scan got there. A batch ends
 * early at a second version of a key it staged (the next batch starts at
 * the first chunk of its span it did not try). Returns chunks
 * cleaned (>= 0) or the first error of stage/submit/flush; chunks whose
 * stage failed with -EHWPOISON, or whose slot another stage has pinned, are
 * skipped and stay dirty, not an error.
 */
int fr_writeback_batch(struct fr_cache *c, enum fr_wb_scan scan, u64 *cursor,
		       u64 end, u32 max, struct fr_wb_snap *snaps,
		       const struct fr_wb_ops *ops, void *ctx);

/* The worker's batch: every dirty chunk, wrapping. */
static inline int fr_writeback(struct fr_cache *c, u64 *cursor, u32 max,
			       struct fr_wb_snap *snaps,
			       const struct fr_wb_ops *ops, void *ctx)
{
	return fr_writeback_batch(c, FR_WB_WRAP, cursor, 0, max, snaps, ops,
				  ctx);
}

/*
 * A batch of a sweep of the whole cache (the flush message): it never
 * wraps. Start with *cursor = 0 and call again until *cursor is nr_chunks;
 * each call moves *cursor on, so every chunk dirty when the sweep began is
 * staged on the way unless a write replaced it first.
 */
static inline int fr_writeback_sweep(struct fr_cache *c, u64 *cursor,
				     u32 max, struct fr_wb_snap *snaps,
				     const struct fr_wb_ops *ops, void *ctx)
{
	return fr_writeback_batch(c, FR_WB_TO_END, cursor, c->geo.nr_chunks,
				  max, snaps, ops, ctx);
}

/*
 * A batch over the nr PM chunks from first only (a write's victims: the
 * chunks of the slots its range is placed in), for a writer that waits for
 * its own victims and nothing else: no wrap, no cursor, snaps holds nr. A
 * chunk it leaves dirty (its slot in flight elsewhere, unreadable, or a
 * second version of a key, which ends a batch) is the caller's to retry.
 * Returns what fr_writeback_batch() does, or -EINVAL for an empty or
 * outside range.
 */
static inline int fr_writeback_range(struct fr_cache *c, fr_pchunk_t first,
				     u32 nr, struct fr_wb_snap *snaps,
				     const struct fr_wb_ops *ops, void *ctx)
{
	u64 cursor = from_pchunk(first), nr_chunks = c->geo.nr_chunks;

	if (cursor >= nr_chunks || !nr)
		return -EINVAL;
	return fr_writeback_batch(c, FR_WB_TO_END, &cursor,
				  cursor + nr < nr_chunks ? cursor + nr :
				  nr_chunks, nr, snaps, ops, ctx);
}

/*
 * A batch of only the chunks of full slots (every chunk dirty): the
 * next write placed in such a slot must wait for a writeback
 * (FR_WRITE_NEED_CLEAN), so under pressure they go first. It wraps like
 * fr_writeback(); 0 when no such chunk could be staged.
 */
static inline int fr_writeback_full_slots(struct fr_cache *c, u64 *cursor,
					  u32 max, struct fr_wb_snap *snaps,
					  const struct fr_wb_ops *ops,
					  void *ctx)
{
	return fr_writeback_batch(c, FR_WB_FULL_SLOTS, cursor, 0, max, snaps,
				  ops, ctx);
}

/*
 * Write back dirty chunk p alone (a write's victim): stage it, submit, flush,
 * clear. Returns 1 if it was cleaned; 0 if it was clean already or
 * rewritten meanwhile; -EHWPOISON if its PM data cannot be read; -EBUSY if
 * another stage has its slot pinned (an origin write of the slot in flight:
 * the caller waits until the slot is unpinned and tries the write again);
 * or the error of submit or flush. snap is scratch for one chunk.
 */
int fr_writeback_chunk(struct fr_cache *c, fr_pchunk_t p,
		       struct fr_wb_snap *snap, const struct fr_wb_ops *ops,
		       void *ctx);

/*
 * The range of a multi-chunk write's victims: the chunks of the slots from
 * the victim's to last (the slot of its last chunk), at most max (a
 * multiple of the chunks a slot), and
 * at least the victim's slot. Returns nr; *first is the first chunk.
 */
static inline u32 fr_victim_range(const struct fr_geometry *g,
				  fr_pchunk_t victim, fr_slot_t last,
				  u32 max, fr_pchunk_t *first)
{
	u64 f = from_pchunk(victim) & ~(u64)(g->ways - 1), nr = g->ways;

	if (from_slot(last) > f >> g->ways_shift)
		nr = ((from_slot(last) + 1) << g->ways_shift) - f;
	*first = to_pchunk(f);
	return nr < max ? (u32)nr : max;
}

/*
 * Declare what the known bad PM held lost, for nr slots from first (locks:
 * those slots): dirty copies on bad chunks are dropped (their tags cleared)
 * and lost slots are forgotten, so the origin is authoritative for their
 * keys. Returns the copies dropped plus the slots forgotten.
 */
u64 fr_forget_unreadable(struct fr_cache *c, fr_slot_t first, u64 nr);

/*
 * Resize (fr-resize.c): a new origin length, committed by one failure-atomic
 * store of the superblock's resized_sectors.
 *
 * fr_resize_check() reads the tags from PM (machine-check safe) without
 * attached bitmaps, changes nothing, and says whether fr_resize() could
 * shrink to new_sectors: -EBUSY while a dirty copy holds a sector at or past
 * it, -EIO if a tag is unreadable. Growing is always possible.
 *
 * fr_resize() needs the cache to itself (after recovery, no I/O). A shrink
 * is refused (-EBUSY, nothing changed) while a dirty copy lies past the new
 * end or a slot is lost; clean copies past it are dropped and fenced before
 * the commit. c->geo takes the new length.
 */
struct fr_resize_report {
	u64 dirty_past_end;		/* dirty copies past the new end */
	u64 first_dirty_key;		/* the first such copy's key */
	u64 clean_past_end;		/* clean copies past it (dropped) */
	u64 lost_slots;			/* slots whose tags are lost */
	u64 unreadable;			/* tags unreadable (check only) */
};

int fr_resize_check(const struct fr_cache *c, u64 new_sectors,
		    struct fr_resize_report *rep, const char **why);
int fr_resize(struct fr_cache *c, u64 new_sectors,
	      struct fr_resize_report *rep, const char **why);

/* Valid and dirty PM chunks: counts kept with the bitmaps, no scan. */
u64 fr_count_valid(const struct fr_cache *c);
u64 fr_count_dirty(const struct fr_cache *c);

/* Whether PM chunk p is dirty (without its slot lock: a hint, maybe stale). */
static inline bool fr_chunk_dirty(const struct fr_cache *c, fr_pchunk_t p)
{
	return test_bit(from_pchunk(p), c->dirty_bits);
}

#endif /* FR_CORE_H */
