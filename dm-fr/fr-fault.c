// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fault injection for the VM tests (fr-fault.h): built only with
 * FR_FAULT_INJECT=1.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "fr-fault.h"

static bool fault_pm;
module_param(fault_pm, bool, 0644);
MODULE_PARM_DESC(fault_pm, "test only: inject the PM media error below");

static unsigned long long fault_pm_chunk;
module_param(fault_pm_chunk, ullong, 0644);
MODULE_PARM_DESC(fault_pm_chunk, "test only: PM chunk whose data reads as a media error (all ones: every chunk)");

/*
 * The data area of the device set up last, for fr_pm_read() (fr-pm.h),
 * which sees only addresses. One device at a time: the tests need no more.
 * Owned by its target instance: a reload's old table, destroyed after the
 * new one has resumed on the same PM, must not forget the new one's.
 */
static const void *fault_owner;
static const u8 *fault_data;
static unsigned int fault_chunk_bytes_shift;

void fr_fault_set_data(const void *owner, const void *data,
		       unsigned int chunk_bytes_shift)
{
	WRITE_ONCE(fault_owner, owner);
	WRITE_ONCE(fault_chunk_bytes_shift, chunk_bytes_shift);
	/* Pairs with fr_fault_pm_src(): the shift before the data. */
	smp_store_release(&fault_data, data);
}

void fr_fault_forget_data(const void *owner)
{
	if (cmpxchg(&fault_owner, owner, NULL) == owner)
		WRITE_ONCE(fault_data, NULL);
}

/* Does src lie in the data of fault_pm_chunk (any chunk: all ones)? */
bool fr_fault_pm_src(const void *src)
{
	/* Pairs with fr_fault_set_data(): the data, then its shift. */
	const u8 *data = smp_load_acquire(&fault_data);
	unsigned long long chunk = READ_ONCE(fault_pm_chunk);

	if (!READ_ONCE(fault_pm) || !data || (const u8 *)src < data)
		return false;
	return chunk == ~0ULL ||
	       ((const u8 *)src - data) >> READ_ONCE(fault_chunk_bytes_shift) ==
	       chunk;
}
