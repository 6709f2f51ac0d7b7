/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fault injection for the VM tests, which cannot make emulated PM fail a
 * machine-check-safe read. Only a module built with FR_FAULT_INJECT=1
 * (Kbuild) has it; in any other build these are constant false and cost
 * nothing. With it, the module parameters fault_pm=1 and fault_pm_chunk name a PM chunk
 * (an index, as frctl dump prints it) whose data reads as a media error on
 * the paths that read cached data in the glue: reads served from PM and
 * writeback staging.
 */
#ifndef DM_FR_FAULT_H
#define DM_FR_FAULT_H

#include <linux/types.h>

#ifdef DM_FR_FAULT_INJECT
bool fr_fault_pm_read(u64 pchunk);
#else
static inline bool fr_fault_pm_read(u64 pchunk)
{
	return false;
}
#endif

#endif /* DM_FR_FAULT_H */
