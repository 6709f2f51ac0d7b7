// SPDX-License-Identifier: GPL-2.0-only
/*
 * frctl: set up, watch, check and take apart dm-fr devices.
 *
 *   frctl <verb> [options]      (git and ndctl style)
 *
 * Exit codes follow fsck(8): 0 clean or done, 1 errors corrected, 4 errors
 * left uncorrected, 8 operational error, 16 usage error.
 */
#include <stdio.h>
#include <string.h>

#include "frctl.h"

#ifndef FRCTL_VERSION
#define FRCTL_VERSION "0.1"
#endif

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} verbs[] = {
	{ "format", cmd_format },
	{ "create", cmd_create },
	{ "remove", cmd_remove },
	{ "status", cmd_status },
	{ "flush", cmd_flush },
	{ "attach", cmd_attach },
	{ "detach", cmd_detach },
	{ "replace", cmd_replace },
	{ "resize", cmd_resize },
	{ "retire", cmd_retire },
	{ "check", cmd_check },
	{ "repair", cmd_repair },
	{ "dump", cmd_dump },
	{ "probe", cmd_probe },
	{ "autoactivate", cmd_autoactivate },
	{ "guard", cmd_guard },
};

int main(int argc, char **argv)
{
	size_t i;

	frctl_pm_install_sigbus();
	if (argc < 2) {
		print_help(NULL, stderr);
		return FR_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		if (argc > 2 && !strcmp(argv[1], "help")) {
			frctl_verb = argv[2];
			if (print_help(argv[2], stdout))
				return fr_usage_error("unknown command '%s'",
						      argv[2]);
			return 0;
		}
		print_help(NULL, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("frctl %s (dm-fr format version %d)\n", FRCTL_VERSION,
		       FR_FORMAT_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (!strcmp(argv[1], verbs[i].name)) {
			frctl_verb = verbs[i].name;
			return verbs[i].fn(argc - 1, argv + 1);
		}
	}
	if (argv[1][0] == '-')
		return fr_usage_error("unknown option '%s'", argv[1]);
	return fr_usage_error("unknown command '%s'", argv[1]);
}
