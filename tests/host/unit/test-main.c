// SPDX-License-Identifier: GPL-2.0-only
/* Runs every registered unit test case. Usage: test-unit [name-substring] */
#include <stdio.h>
#include <string.h>
#include "harness.h"

struct test_case tests[MAX_TESTS];
int ntests, case_failures;

int main(int argc, char **argv)
{
	int i, passed = 0, failed = 0;

	for (i = 0; i < ntests; i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		case_failures = 0;
		tests[i].fn();
		if (case_failures) {
			printf("FAIL unit/%s\n", tests[i].name);
			failed++;
		} else {
			printf("PASS unit/%s\n", tests[i].name);
			passed++;
		}
		fflush(stdout);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
