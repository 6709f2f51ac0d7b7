/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel facilities the dm-fr core (dm-fr/core/) uses, for its userspace
 * builds: frctl, the crash simulator,
 * the unit tests and the fuzzers. Only what the core needs, with the
 * kernel's names and semantics, so the core compiles unchanged (as xfsprogs
 * builds libxfs against libxfs_priv.h).
 *
 * Every userspace compile includes this file first (-include fr-user.h). It
 * stands in for dm-fr/fr-types.h and dm-fr/fr-pm.h, which hold only the
 * kernel's side: it defines their include guards, so the kernel headers they
 * include are never reached from userspace.
 */
#ifndef FR_USER_H
#define FR_USER_H
#define FR_TYPES_H
#define FR_PM_H

/* This file comes before any system header: the programs' feature macro. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

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

/* <linux/minmax.h>, <linux/math.h>, <linux/log2.h>, <linux/bits.h> */
#define min(a, b) ({ __typeof__(a) a_ = (a); __typeof__(b) b_ = (b); \
		     a_ < b_ ? a_ : b_; })
#define max(a, b) ({ __typeof__(a) a_ = (a); __typeof__(b) b_ = (b); \
		     a_ > b_ ? a_ : b_; })
#define min_t(type, a, b) min((type)(a), (type)(b))
#define round_up(x, y) ((((x) - 1) | ((__typeof__(x))((y) - 1))) + 1)
#define GENMASK_ULL(h, l) \
	((~0ULL - (1ULL << (l)) + 1) & (~0ULL >> (63 - (h))))

static inline bool is_power_of_2(unsigned long n)
{
	return n && !(n & (n - 1));
}

/* (The kernel's ilog2() of 0 is undefined too.) */
#define ilog2(n) (63 - __builtin_clzll((unsigned long long)(n)))

/* <linux/crc32c.h>: the raw CRC update, no inversion in or out. */
u32 crc32c(u32 crc, const void *address, unsigned int length);

#define __aligned(x) __attribute__((aligned(x)))
#define BITS_PER_LONG (8 * (int)sizeof(long))
#define BIT_WORD(nr) ((nr) / BITS_PER_LONG)
#define BIT_MASK(nr) (1UL << ((nr) % BITS_PER_LONG))
#define BITS_TO_LONGS(nr) (((nr) + BITS_PER_LONG - 1) / BITS_PER_LONG)

/* The index of the lowest set bit; w must not be 0. */
static inline unsigned long __ffs(unsigned long w)
{
	return (unsigned long)__builtin_ctzl(w);
}

/*
 * Every atomic read-modify-write of DRAM below: a write of its cache line,
 * which takes the line from every other CPU. With FR_USER_RMW_HOOK the
 * program defines fr_user_rmw() to count them (bench/tools/coreprof.c:
 * the shared lines a write touches); otherwise nothing.
 */
#ifdef FR_USER_RMW_HOOK
void fr_user_rmw(const volatile void *addr);
#else
static inline void fr_user_rmw(const volatile void *addr) { }
#endif

/* Atomic like the kernel's, so the simulator may run threads too. */
static inline void set_bit(unsigned long nr, unsigned long *addr)
{
	fr_user_rmw(&addr[BIT_WORD(nr)]);
	__atomic_fetch_or(&addr[BIT_WORD(nr)], BIT_MASK(nr), __ATOMIC_RELAXED);
}

static inline void clear_bit(unsigned long nr, unsigned long *addr)
{
	fr_user_rmw(&addr[BIT_WORD(nr)]);
	__atomic_fetch_and(&addr[BIT_WORD(nr)], ~BIT_MASK(nr), __ATOMIC_RELAXED);
}

static inline bool test_and_set_bit(unsigned long nr, unsigned long *addr)
{
	fr_user_rmw(&addr[BIT_WORD(nr)]);
	return __atomic_fetch_or(&addr[BIT_WORD(nr)], BIT_MASK(nr),
				 __ATOMIC_SEQ_CST) & BIT_MASK(nr);
}

static inline bool test_and_clear_bit(unsigned long nr, unsigned long *addr)
{
	fr_user_rmw(&addr[BIT_WORD(nr)]);
	return __atomic_fetch_and(&addr[BIT_WORD(nr)], ~BIT_MASK(nr),
				  __ATOMIC_SEQ_CST) & BIT_MASK(nr);
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

static inline unsigned int bitmap_weight(const unsigned long *src,
					 unsigned int nbits)
{
	unsigned int i, n = 0;

	for (i = 0; i < nbits / BITS_PER_LONG; i++)
		n += (unsigned int)__builtin_popcountl(src[i]);
	if (nbits % BITS_PER_LONG)
		n += (unsigned int)__builtin_popcountl(src[i] &
			(~0UL >> (BITS_PER_LONG - nbits % BITS_PER_LONG)));
	return n;
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
	fr_user_rmw(&v->counter);
	return __atomic_add_fetch(&v->counter, 1, __ATOMIC_RELAXED);
}

static inline void atomic64_inc(atomic64_t *v)
{
	fr_user_rmw(&v->counter);
	__atomic_add_fetch(&v->counter, 1, __ATOMIC_RELAXED);
}

static inline void atomic64_dec(atomic64_t *v)
{
	fr_user_rmw(&v->counter);
	__atomic_sub_fetch(&v->counter, 1, __ATOMIC_RELAXED);
}

/*
 * dm-fr/fr-pm.h: the persistence primitives. Each userspace program links
 * its own: frctl's act on a mapped image (userspace/frctl/pm-user.c), the
 * crash simulator's record every store not yet fenced (tests/host/sim), the
 * fuzzers' are plain memory (tests/host/fuzz/pm-direct.c).
 */
void fr_pm_store8(__le64 *dst, u64 val);
void fr_pm_copy(void *dst, const void *src, size_t len);
void fr_pm_fence(void);
int fr_pm_load8(const __le64 *src, u64 *val);
int fr_pm_read(void *dst, const void *src, size_t len);

#endif /* FR_USER_H */
