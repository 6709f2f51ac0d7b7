// SPDX-License-Identifier: GPL-2.0-only
/*
 * The persistence primitives of fr-pm.h for frctl.
 *
 * frctl works on a PM device or an image file mapped into its address space
 * (or, in the tests and the fuzzer, on a plain buffer). A store is a plain
 * store; a fence is msync(MS_SYNC) of the mapping when frctl_pm.sync_base is
 * set, so the order the core imposes with fences (a superblock's magic after
 * the tags it describes, a repair's passes) is the order in which the data
 * reaches the device. Reads are guarded against SIGBUS, the way the kernel
 * reads PM with copy_mc: a poisoned page or an I/O error behind the mapping
 * becomes -EIO for the core, which counts the tag as unreadable.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "frctl.h"

struct frctl_pm frctl_pm;

static sigjmp_buf *volatile pm_guard;

static void sigbus_handler(int sig, siginfo_t *si, void *uc)
{
	static const char msg[] =
		"frctl: I/O error reading the PM (SIGBUS outside a guarded read)\n";
	(void)si;
	(void)uc;
	(void)sig;
	if (pm_guard)
		siglongjmp(*pm_guard, 1);
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(FR_EXIT_OPERATIONAL);
	_exit(FR_EXIT_OPERATIONAL);
}

void frctl_pm_install_sigbus(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sigbus_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

void fr_pm_store8(__le64 *dst, u64 val)
{
	__le64 v = cpu_to_le64(val);

	memcpy(dst, &v, sizeof(v));
	frctl_pm.stores++;
}

void fr_pm_copy(void *dst, const void *src, size_t len)
{
	memmove(dst, src, len);
	frctl_pm.stores++;
}

void fr_pm_fence(void)
{
	frctl_pm.fences++;
	if (frctl_pm.sync_base &&
	    msync(frctl_pm.sync_base, frctl_pm.sync_len, MS_SYNC) &&
	    !frctl_pm.error)
		frctl_pm.error = errno;
}

int fr_pm_read(void *dst, const void *src, size_t len)
{
	sigjmp_buf env;

	if (sigsetjmp(env, 0)) {
		pm_guard = NULL;
		return -EIO;
	}
	pm_guard = &env;
	memcpy(dst, src, len);
	pm_guard = NULL;
	return 0;
}

int fr_pm_load8(const __le64 *src, u64 *val)
{
	__le64 v;

	if (fr_pm_read(&v, src, sizeof(v)))
		return -EIO;
	*val = le64_to_cpu(v);
	return 0;
}
