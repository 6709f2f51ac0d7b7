/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Userspace stand-ins for the kernel facilities used by the shared core.
 * Only what the core needs, with the kernel's names and semantics, so the
 * core compiles unchanged (the way dm-vdo's userspace tools build kernel
 * sources against small shims of the linux headers).
 */
#ifndef FR_COMPAT_USER_H
#define FR_COMPAT_USER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef EUCLEAN
#define EUCLEAN 117
#endif

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

/* The __le types come from the kernel's uapi header where there is one,
 * so programs may also include <linux/fs.h> or libdevmapper. */
#ifdef __linux__
#include <linux/types.h>
#else
typedef u16 __le16;
typedef u32 __le32;
typedef u64 __le64;
#endif
#ifndef __bitwise
#define __bitwise
#endif
#ifndef __force
#define __force
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define cpu_to_le16(x) ((__le16)(x))
#define cpu_to_le32(x) ((__le32)(x))
#define cpu_to_le64(x) ((__le64)(x))
#else
#define cpu_to_le16(x) ((__le16)__builtin_bswap16(x))
#define cpu_to_le32(x) ((__le32)__builtin_bswap32(x))
#define cpu_to_le64(x) ((__le64)__builtin_bswap64(x))
#endif
#define le16_to_cpu(x) ((u16)cpu_to_le16(x))
#define le32_to_cpu(x) ((u32)cpu_to_le32(x))
#define le64_to_cpu(x) ((u64)cpu_to_le64(x))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define BUILD_BUG_ON(cond) _Static_assert(!(cond), #cond)

#define BITS_PER_LONG (8 * (int)sizeof(long))
#define BIT_WORD(nr) ((nr) / BITS_PER_LONG)
#define BIT_MASK(nr) (1UL << ((nr) % BITS_PER_LONG))
#define BITS_TO_LONGS(nr) (((nr) + BITS_PER_LONG - 1) / BITS_PER_LONG)

/* Atomic like the kernel's, so the simulator may run threads too. */
static inline void set_bit(unsigned long nr, unsigned long *addr)
{
	__atomic_fetch_or(&addr[BIT_WORD(nr)], BIT_MASK(nr), __ATOMIC_RELAXED);
}

static inline void clear_bit(unsigned long nr, unsigned long *addr)
{
	__atomic_fetch_and(&addr[BIT_WORD(nr)], ~BIT_MASK(nr), __ATOMIC_RELAXED);
}

static inline bool test_bit(unsigned long nr, const unsigned long *addr)
{
	return (__atomic_load_n(&addr[BIT_WORD(nr)], __ATOMIC_RELAXED) >>
		(nr % BITS_PER_LONG)) & 1;
}

static inline unsigned long find_next_bit(const unsigned long *addr,
					  unsigned long size,
					  unsigned long offset)
{
	while (offset < size) {
		unsigned long word = addr[BIT_WORD(offset)] >>
				     (offset % BITS_PER_LONG);

		if (word)
			return offset + __builtin_ctzl(word) < size ?
			       offset + __builtin_ctzl(word) : size;
		offset = (offset | (BITS_PER_LONG - 1)) + 1;
	}
	return size;
}

static inline unsigned int hweight64(u64 w)
{
	return (unsigned int)__builtin_popcountll(w);
}

typedef struct {
	s64 counter;
} atomic64_t;

static inline s64 atomic64_read(const atomic64_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

static inline void atomic64_set(atomic64_t *v, s64 i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}

static inline s64 atomic64_inc_return(atomic64_t *v)
{
	return __atomic_add_fetch(&v->counter, 1, __ATOMIC_RELAXED);
}

#endif /* FR_COMPAT_USER_H */
