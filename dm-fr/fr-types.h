/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel facilities the shared core (core/) uses, by
 * their kernel names. Userspace builds of the core (frctl, the host tests)
 * get the same names from userspace/libfrcore/fr-user.h, which stands in for this
 * file; the core itself has no #ifdef __KERNEL__.
 */
#ifndef FR_TYPES_H
#define FR_TYPES_H

#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/bitops.h>
#include <linux/bitmap.h>
#include <linux/bits.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/crc32c.h>
#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <asm/byteorder.h>

#endif /* FR_TYPES_H */
