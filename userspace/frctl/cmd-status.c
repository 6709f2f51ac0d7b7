// SPDX-License-Identifier: GPL-2.0-only
/*
 * frctl status: the status of dm-fr devices, once or every interval, as
 * text or JSON, with rates between samples.
 */
#include <getopt.h>
#include <time.h>

#include <json-c/json.h>

#include "frctl.h"

struct sample {
	char *name;
	struct fr_dev d;
	bool ok;
};

static void take_samples(struct sample *s, int n)
{
	int i;

	for (i = 0; i < n; i++)
		s[i].ok = !fr_dev_get(s[i].name, &s[i].d) && s[i].d.is_fr &&
			  !s[i].d.parse_error;
}

static void show(struct sample *now, struct sample *prev, int n, bool json,
		 double interval)
{
	struct json_object *a = json ? json_object_new_array() : NULL;
	int i;

	for (i = 0; i < n; i++) {
		const struct fr_status *p = prev && prev[i].ok ? &prev[i].d.st :
					    NULL;

		if (!now[i].ok) {
			if (!json)
				printf("%s: gone\n", now[i].name);
			continue;
		}
		if (json)
			json_object_array_add(a, status_json(now[i].name,
				now[i].d.uuid, now[i].d.length,
				&now[i].d.table, &now[i].d.st, p, interval));
		else
			status_print(stdout, now[i].name, now[i].d.uuid,
				     now[i].d.length, &now[i].d.table,
				     &now[i].d.st, p, interval);
	}
	if (json) {
		json_print(a);
		json_object_put(a);
	}
	fflush(stdout);
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "watch", no_argument, NULL, 'w' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool json = false, watch = false, have_interval = false;
	struct sample *now, *prev;
	double interval = 1.0;
	u64 count = 0, ms = 1000, k;
	char **names;
	int c, i, n, r = 0;

	while ((c = verb_getopt(argc, argv, ":jwi:c:h", opts)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'w':
			watch = true;
			break;
		case 'i': {
			/* Seconds, with up to three decimals: 0.5, 2, 1.25. */
			char ip[24], *dot;
			u64 frac = 0, whole;
			size_t fl = 0;

			snprintf(ip, sizeof(ip), "%s", optarg);
			dot = strchr(ip, '.');
			if (dot) {
				*dot++ = 0;
				fl = strlen(dot);
			}
			if (strlen(optarg) >= sizeof(ip) - 1 ||
			    parse_u64(ip, &whole) || whole > 86400 ||
			    (dot && (fl < 1 || fl > 3 || parse_u64(dot, &frac))))
				return fr_usage_error("--interval: '%s' is not a number of seconds (e.g. 0.5, 2)",
						      optarg);
			while (fl && fl < 3) {
				frac *= 10;
				fl++;
			}
			ms = whole * 1000 + frac;
			if (!ms)
				return fr_usage_error("--interval must be above 0");
			interval = (double)ms / 1000.0;
			have_interval = true;
			break;
		}
		case 'c':
			if (parse_opt_u64("--count", optarg, 1, 1000000000,
					  &count))
				return FR_EXIT_USAGE;
			break;
		case 'h':
			print_help("status", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (count && !watch)
		return fr_usage_error("--count needs --watch");
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;
	if (optind < argc) {
		n = argc - optind;
		names = xcalloc((size_t)n, sizeof(char *));
		for (i = 0; i < n; i++) {
			struct fr_dev d;

			r = get_fr_dev(argv[optind + i], &d);
			if (r)
				return r;
			names[i] = strdup(argv[optind + i]);
		}
	} else if (list_fr_devs(&names, &n)) {
		return FR_EXIT_OPERATIONAL;
	}
	if (!n && !json) {
		printf("no dm-fr devices\n");
		return 0;
	}
	now = xcalloc((size_t)n, sizeof(*now));
	prev = xcalloc((size_t)n, sizeof(*prev));
	for (i = 0; i < n; i++)
		now[i].name = prev[i].name = names[i];
	take_samples(now, n);
	if (!watch && !have_interval) {
		show(now, NULL, n, json, 0);
		goto out;
	}
	catch_sigint();
	for (k = 0; !frctl_interrupted; k++) {
		struct timespec ts = { (time_t)(ms / 1000),
				       (long)(ms % 1000) * 1000000L };

		memcpy(prev, now, (size_t)n * sizeof(*now));
		nanosleep(&ts, NULL);
		take_samples(now, n);
		if (watch && isatty(STDOUT_FILENO) && !json)
			printf("\033[H\033[2J");
		show(now, prev, n, json, interval);
		if (!watch || (count && k + 1 >= count))
			break;
	}
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(now);
	free(prev);
	return 0;
}
