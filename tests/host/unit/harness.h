/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A minimal test harness: TEST(name) { ... } registers a case, CHECK()
 * records a failure and goes on, REQUIRE() records it and ends the case.
 * Each case prints "PASS name" or "FAIL name"; the program ends with
 * "N passed, M failed" and exits 1 if anything failed.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <stdio.h>
#include <string.h>

struct test_case {
	const char *name;
	void (*fn)(void);
};

#define MAX_TESTS 128
extern struct test_case tests[MAX_TESTS];
extern int ntests, case_failures;

#define TEST(tn) \
	static void test_##tn(void); \
	__attribute__((constructor)) static void reg_##tn(void) \
	{ tests[ntests].name = #tn; tests[ntests++].fn = test_##tn; } \
	static void test_##tn(void)

#ifndef ARRAY_LEN
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#endif

#define CHECK(cond) do { \
	if (!(cond)) { \
		case_failures++; \
		printf("  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
	} \
} while (0)

#define REQUIRE(cond) do { \
	if (!(cond)) { \
		case_failures++; \
		printf("  %s:%d: requirement failed: %s\n", __FILE__, __LINE__, #cond); \
		return; \
	} \
} while (0)

#define CHECK_EQ(a, b) do { \
	unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
	if (a_ != b_) { \
		case_failures++; \
		printf("  %s:%d: %s == %s failed: %llu != %llu\n", __FILE__, \
		       __LINE__, #a, #b, a_, b_); \
	} \
} while (0)

#define CHECK_STR(why, want) do { \
	const char *w_ = (why); \
	if (!w_ || !strstr(w_, (want))) { \
		case_failures++; \
		printf("  %s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, \
		       __LINE__, w_ ? w_ : "(null)", (want)); \
	} \
} while (0)

#endif /* HARNESS_H */
