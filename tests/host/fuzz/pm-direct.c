// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fr_pm_* primitives for the fuzzers and the corpus generator: plain
 * memory, stores immediately visible, fences no-ops (no crash model here:
 * the fuzzers look for crashes of the code, not of the machine).
 */
#include "fr-core.h"

void fr_pm_store8(__le64 *dst, u64 val)
{
	__le64 v = cpu_to_le64(val);

	memcpy(dst, &v, 8);
}

void fr_pm_copy(void *dst, const void *src, size_t len)
{
	memmove(dst, src, len);
}

void fr_pm_fence(void)
{
}

int fr_pm_load8(const __le64 *src, u64 *val)
{
	__le64 v;

	memcpy(&v, src, 8);
	*val = le64_to_cpu(v);
	return 0;
}

int fr_pm_read(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return 0;
}
