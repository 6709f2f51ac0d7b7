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

/* The kernel's optional arguments that take a value besides the tunables. */
static const char *const table_valued_args[] = { FR_TABLE_VALUED_ARGS };

bool table_arg_valued(const char *name)
{
	size_t i;

	if (tunable_find(name) >= 0 && !strchr(name, '-'))
		return true;
	for (i = 0; i < sizeof(table_valued_args) / sizeof(table_valued_args[0]); i++)
		if (!strcmp(name, table_valued_args[i]))
			return true;
	return false;
}

_Static_assert(FR_ORIGIN_ID_LEN < 72, "table_arg_next reads words of 71");

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

int table_arg_next(const char **p, char *key, size_t klen, char *val,
		   size_t vlen)
{
	char word[72];		/* the longest word a table has: an origin id */
	int n;

	/* A number where a name goes: the count (or a stray value). */
	do {
		if (!*p || sscanf(*p, "%71s%n", word, &n) != 1)
			return 0;
		*p += n;
	} while (all_digits(word));
	snprintf(key, klen, "%s", word);
	val[0] = 0;
	if (table_arg_valued(word) && sscanf(*p, "%71s%n", word, &n) == 1) {
		*p += n;
		snprintf(val, vlen, "%s", word);
	}
	return 1;
}

void tunables_of_table(const char *opts, u64 out[FR_NR_TUNABLES])
{
	char key[72], val[72];
	const char *p = opts;
	int i;
	u64 v;

	for (i = 0; i < FR_NR_TUNABLES; i++)
		out[i] = frctl_tunables[i].def;
	while (table_arg_next(&p, key, sizeof(key), val, sizeof(val))) {
		i = tunable_find(key);
		if (i >= 0 && !strchr(key, '-') && !parse_u64(val, &v))
			out[i] = v;
	}
}
