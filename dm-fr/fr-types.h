/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one place where the shared core (fr-format.c, fr-core.c) learns whether
 * it is built into the kernel module or into a userspace program (frctl, the
 * crash simulator, unit tests). Userspace gets small stand-ins for the kernel
 * facilities the core uses; the core itself has no #ifdef __KERNEL__.
 */
#ifndef FR_TYPES_H
#define FR_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/bitops.h>
#include <linux/bitmap.h>
#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <asm/byteorder.h>
#else
#include "fr-compat-user.h"
#endif

#endif /* FR_TYPES_H */
