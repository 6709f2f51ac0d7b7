/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The persistence primitives through which the core touches PM. Every store
 * the core makes to PM goes through fr_pm_store8() or fr_pm_copy(); neither is
 * durable until a later fr_pm_fence() has returned, and stores issued between
 * two fences may reach the media in any order (or partly, at 8-byte grain).
 *
 *   fr_pm_store8  one failure-atomic 8-byte store (a tag word)
 *   fr_pm_copy    bulk data, written back as it goes (non-temporal stores)
 *   fr_pm_fence   orders and completes everything stored before it
 *   fr_pm_load8   a machine-check-safe 8-byte read (used by recovery)
 *   fr_pm_read    a machine-check-safe bulk read into DRAM
 *
 * In the kernel these are memcpy_flushcache() (a single movnti for 8 bytes on
 * x86), wmb() and copy_mc_to_kernel(), as dm-writecache uses them. Userspace
 * programs link their own (declared in userspace/libfrcore/fr-user.h, which
 * stands in for this file there): frctl's act on a memory image it writes
 * out itself, the crash simulator's record every store not yet fenced.
 */
#ifndef FR_PM_H
#define FR_PM_H

#include "fr-types.h"
#include "fr-fault.h"

#include <linux/uaccess.h>
#include <asm/barrier.h>

static __always_inline void fr_pm_store8(__le64 *dst, u64 val)
{
	__le64 v = cpu_to_le64(val);

	memcpy_flushcache(dst, &v, sizeof(v));
}

static inline void fr_pm_copy(void *dst, const void *src, size_t len)
{
	memcpy_flushcache(dst, src, len);
}

static inline void fr_pm_fence(void)
{
	/* sfence: drains the non-temporal stores above to the media. */
	wmb();
}

static inline int fr_pm_load8(const __le64 *src, u64 *val)
{
	__le64 v;

	if (copy_mc_to_kernel(&v, src, sizeof(v)))
		return -EIO;
	*val = le64_to_cpu(v);
	return 0;
}

static inline int fr_pm_read(void *dst, const void *src, size_t len)
{
	if (fr_fault_pm_src(src))	/* test builds only */
		return -EIO;
	return copy_mc_to_kernel(dst, src, len) ? -EIO : 0;
}

#endif /* FR_PM_H */
