/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fault injection for the VM tests, which cannot make emulated PM fail a
 * machine-check-safe read. Only a module built with FR_FAULT_INJECT=1
 * (Kbuild) has it; in any other build these are constant false and cost
 * nothing. With it, the module parameters fault_pm=1 and fault_pm_chunk
 * name a PM chunk (an index, as frctl dump prints it) whose data reads as a
 * media error, on the device set up last.
 *
 * One hook: fr_pm_read() (fr-pm.h), the only way the glue and the core
 * read PM data, asks fr_fault_pm_src() about the address it reads. So the
 * fault reaches every path that reads a chunk: reads served from PM,
 * writeback staging, and a partial write merging the rest of the chunk
 * from its older copy.
 */
#ifndef DM_FR_FAULT_H
#define DM_FR_FAULT_H

#include <linux/types.h>

#ifdef DM_FR_FAULT_INJECT
bool fr_fault_pm_src(const void *src);
void fr_fault_set_data(const void *owner, const void *data,
		       unsigned int chunk_bytes_shift);
void fr_fault_forget_data(const void *owner);
#else
static inline bool fr_fault_pm_src(const void *src)
{
	return false;
}

static inline void fr_fault_set_data(const void *owner, const void *data,
				     unsigned int chunk_bytes_shift)
{
}

static inline void fr_fault_forget_data(const void *owner)
{
}
#endif

#endif /* DM_FR_FAULT_H */
