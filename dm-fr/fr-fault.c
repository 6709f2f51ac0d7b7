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
MODULE_PARM_DESC(fault_pm_chunk, "test only: PM chunk whose data reads as a media error");

bool fr_fault_pm_read(u64 pchunk)
{
	return READ_ONCE(fault_pm) && pchunk == READ_ONCE(fault_pm_chunk);
}
