/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A writeback stage (fr-stage.c): what the core's writeback ops act on for
 * one batch or one victim write, shared by fr-writeback.c only.
 */
#ifndef FR_STAGE_H
#define FR_STAGE_H

#include "fr-core.h"

struct dm_fr;
struct fr_stage;
struct fr_bufs;

/* Who runs a stage: a batch runs under wb.lock, a victim write does not. */
enum fr_stage_owner {
	FR_STAGE_BATCH,
	FR_STAGE_VICTIM,
};

extern const struct fr_wb_ops fr_stage_ops;

/* The target's DRAM buffers for one owner's stages (fr->wb.bufs[owner]). */
struct fr_bufs *fr_stage_pool_create(enum fr_stage_owner owner);
void fr_stage_pool_destroy(struct fr_bufs *pool);

struct fr_stage *fr_stage_create(struct dm_fr *fr, enum fr_stage_owner owner);
void fr_stage_destroy(struct fr_stage *st);
/*
 * Before a batch or a victim write: empty, nothing pinned, a buffer taken
 * (it may wait for one: no slot lock may be held).
 */
void fr_stage_reset(struct fr_stage *st);
/* After one (the core has unpinned its chunks): their waiters woken. */
void fr_stage_release(struct fr_stage *st);
/* Chunks the last batch skipped because their PM data cannot be read. */
u32 fr_stage_unreadable(const struct fr_stage *st);

#endif
