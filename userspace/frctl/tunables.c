// SPDX-License-Identifier: GPL-2.0-only
/*
 * The target's tunables for frctl, from the kernel's own list
 * (dm-fr/core/fr-tunables.h): create's options (--writeback-period for
 * writeback_period), frtab's keys, the table options, create's help and
 * status --json. Nothing here names a tunable.
 */
#include <stdio.h>
#include <string.h>

#include "frctl.h"

const struct frctl_tunable frctl_tunables[FR_NR_TUNABLES] = {
#define FR_TUNABLE(n, lo, hi, d, u, w) \
	[FR_TUNABLE_##n] = { .name = #n, .min = lo, .max = hi, .def = d, \
			     .unit = u, .what = w },
#include "fr-tunables.h"
#undef FR_TUNABLE
};

int tunable_find(const char *name)
{
	int i;
	size_t k;

	for (i = 0; i < FR_NR_TUNABLES; i++) {
		const char *t = frctl_tunables[i].name;

		for (k = 0; t[k] && (name[k] == t[k] ||
				     (t[k] == '_' && name[k] == '-')); k++)
			;
		if (!t[k] && !name[k])
			return i;
	}
	return -1;
}

void tunable_option(int id, char *out, size_t len)
{
	size_t k;

	snprintf(out, len, "%s", frctl_tunables[id].name);
	for (k = 0; out[k]; k++)
		if (out[k] == '_')
			out[k] = '-';
}

/* Help's columns: options from 2, text from 26, lines up to 78. */
#define HELP_TEXT_COL	26
#define HELP_WIDTH	78

/* "  --writeback-period N    period of ..." lines, wrapped as help.c's. */
void tunables_help(FILE *f)
{
	char opt[64], left[80], text[400];
	int i;

	for (i = 0; i < FR_NR_TUNABLES; i++) {
		const struct frctl_tunable *t = &frctl_tunables[i];
		const char *p = text;
		int col;

		tunable_option(i, opt, sizeof(opt));
		snprintf(left, sizeof(left), "  --%s N", opt);
		snprintf(text, sizeof(text), "%s; %llu..%llu %s, default %llu",
			 t->what, (unsigned long long)t->min,
			 (unsigned long long)t->max, t->unit,
			 (unsigned long long)t->def);
		col = fprintf(f, "%-*s", HELP_TEXT_COL, left);
		while (*p) {
			size_t w = strcspn(p, " ");

			if (col > HELP_TEXT_COL && col + 1 + (int)w > HELP_WIDTH)
				col = fprintf(f, "\n%*s", HELP_TEXT_COL, "") - 1;
			else if (col > HELP_TEXT_COL)
				col += fprintf(f, " ");
			col += fprintf(f, "%.*s", (int)w, p);
			p += w;
			p += strspn(p, " ");
		}
		fputc('\n', f);
	}
}

void tunables_of_table(const char *opts, u64 out[FR_NR_TUNABLES])
{
	char word[64], prev[64] = "";
	const char *p = opts;
	int i, n;

	for (i = 0; i < FR_NR_TUNABLES; i++)
		out[i] = frctl_tunables[i].def;
	/* The count first, then words: "name value" for a tunable. */
	while (p && sscanf(p, "%63s%n", word, &n) == 1) {
		unsigned long long v;
		char end;

		p += n;
		i = prev[0] ? tunable_find(prev) : -1;
		if (i >= 0 && sscanf(word, "%llu%c", &v, &end) == 1) {
			out[i] = v;
			prev[0] = 0;
			continue;
		}
		snprintf(prev, sizeof(prev), "%s", word);
	}
}
