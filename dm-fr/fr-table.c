// SPDX-License-Identifier: GPL-2.0-only
/*
 * The table line's optional arguments and the tunables: parsed by the
 * constructor, changed by the "set" message, printed back by the table
 * status, all from one list (docs/target-interface.md).
 */
#include <linux/kernel.h>

#include "dm-fr.h"

/* Table arguments. */

static int parse_u32(const char *s, u32 min, u32 max, u32 *out)
{
	u32 v;

	if (kstrtou32(s, 10, &v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * The tunables: table arguments the "set" message may change at run time,
 * from the one list of core/fr-interface.h. One entry serves the
 * constructor (parse_features), the message (msg_set) and the printed
 * table (fr_status), as dm-cache's messages end in the set_config_value
 * its constructor uses. Each is fr->tunables[id], printed back (in this
 * order) when it is not its default.
 */
struct fr_tunable {
	const char *name;
	u32 min, max, def;
	char *error;		/* out of range: ti->error, or the message's */
};

static const struct fr_tunable fr_tunables[FR_NR_TUNABLES] = {
#define FR_TUNABLE(n, lo, hi, d, unit, what)				\
	[FR_TUNABLE_##n] = { #n, lo, hi, d,				\
			     FR_TUNABLE_RANGE_ERROR(n, lo, hi, unit) },
#include "fr-tunables.h"
#undef FR_TUNABLE
};

/* A change that needs more than the store: the new value, or an error. */
static int (* const fr_tunable_setters[FR_NR_TUNABLES])(struct dm_fr *fr,
							 unsigned int v) = {
	[FR_TUNABLE_writeback_jobs] = fr_writeback_set_jobs,
};

/* Changes the writeback worker must see at once: it sleeps by them. */
static const bool fr_tunable_kicks[FR_NR_TUNABLES] = {
	[FR_TUNABLE_writeback_period] = true,
	[FR_TUNABLE_writeback_defer] = true,
	[FR_TUNABLE_writeback_idle] = true,
};

/* The tunable's id, or -1. */
static int fr_tunable_find(const char *name)
{
	int i;

	for (i = 0; i < FR_NR_TUNABLES; i++)
		if (!strcasecmp(name, fr_tunables[i].name))
			return i;
	return -1;
}

/* Before the table line's arguments: every default. */
void fr_tunables_default(struct dm_fr *fr)
{
	unsigned int i;

	fr->read_fill = true;
	for (i = 0; i < FR_NR_TUNABLES; i++)
		fr->tunables[i] = fr_tunables[i].def;
}

/*
 * The rule between tunables, with t (if any) changed to v: an error, or
 * NULL. The constructor checks it once all arguments are in (their order
 * is free), the message before it changes anything.
 */
static const char *fr_tunables_refused(struct dm_fr *fr, int id, u32 v)
{
	unsigned int high = fr_tunable(fr, high_watermark);
	unsigned int low = fr_tunable(fr, low_watermark);

	if (id == FR_TUNABLE_high_watermark)
		high = v;
	if (id == FR_TUNABLE_low_watermark)
		low = v;
	return low > high ? "low_watermark is above high_watermark" : NULL;
}

/* Optional arguments that take a value, besides the tunables. */
static const char * const fr_valued_args[] = { FR_TABLE_VALUED_ARGS };

static bool is_valued_arg(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fr_valued_args); i++)
		if (!strcasecmp(name, fr_valued_args[i]))
			return true;
	return fr_tunable_find(name) >= 0;
}

/* 32 hex digits, or the 36-character form with dashes. */
static int parse_uuid(const char *s, u8 out[16])
{
	size_t len = strlen(s), i, n = 0;
	char hex[32];

	if (len != 32 && len != 36)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (len == 36 && (i == 8 || i == 13 || i == 18 || i == 23)) {
			if (s[i] != '-')
				return -EINVAL;
			continue;
		}
		hex[n++] = s[i];
	}
	return hex2bin(out, hex, 16);
}

/*
 * An origin id fits the superblock and prints back as one table word
 * (dm_split_args would need a backslash to keep a space).
 */
static int parse_origin_id(const char *s, char *out)
{
	size_t len = strlen(s), i;

	if (!len || len >= FR_ORIGIN_ID_LEN)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '\\')
			return -EINVAL;
	memcpy(out, s, len + 1);
	return 0;
}

/* The optional arguments of a table line, into fr (the constructor). */
int fr_parse_features(struct dm_fr *fr, struct dm_arg_set *as, char **error)
{
	/*
	 * The 4 flags and every argument with a value, each given once (the
	 * count was 24, two words short once prefetch_kib came).
	 */
	static const struct dm_arg _args[] = {
		{0, 4 + 2 * (ARRAY_SIZE(fr_valued_args) + FR_NR_TUNABLES),
		 "Invalid number of optional arguments"},
	};
	unsigned int argc;
	int r, id;
	u32 v;

	if (!as->argc)
		return 0;
	r = dm_read_arg_group(_args, as, &argc, error);
	if (r)
		return r;
	while (argc) {
		const char *name = dm_shift_arg(as);
		const char *val;

		argc--;
		if (!strcasecmp(name, "fresh")) {
			fr->fresh = true;
			continue;
		}
		if (!strcasecmp(name, "drop_dirty")) {
			fr->drop_dirty = true;
			continue;
		}
		if (!strcasecmp(name, "cleaner")) {
			fr->cleaner = true;
			continue;
		}
		if (!strcasecmp(name, "no_read_fill")) {
			fr->read_fill = false;
			continue;
		}
		if (!is_valued_arg(name)) {
			*error = "Unrecognised optional argument";
			return -EINVAL;
		}
		if (!argc) {
			*error = "Optional argument is missing its value";
			return -EINVAL;
		}
		val = dm_shift_arg(as);
		argc--;
		id = fr_tunable_find(name);
		if (id >= 0) {
			const struct fr_tunable *t = &fr_tunables[id];

			if (parse_u32(val, t->min, t->max, &v)) {
				*error = t->error;
				return -EINVAL;
			}
			fr->tunables[id] = v;
		} else if (!strcasecmp(name, "chunk_size")) {
			if (parse_u32(val, FR_MIN_CHUNK_SECTORS << SECTOR_SHIFT,
				      FR_MAX_CHUNK_SECTORS << SECTOR_SHIFT, &v) ||
			    !is_power_of_2(v)) {
				*error = "Invalid chunk_size (power of two, 4096..32768)";
				return -EINVAL;
			}
			fr->arg_chunk_size = v;
		} else if (!strcasecmp(name, "region_size")) {
			if (parse_u32(val, 4096, 1U << 30, &v) ||
			    !is_power_of_2(v)) {
				*error = "Invalid region_size (power of two bytes)";
				return -EINVAL;
			}
			fr->arg_region_size = v;
		} else if (!strcasecmp(name, "stride")) {
			if (kstrtou64(val, 10, &fr->arg_stride) ||
			    !fr->arg_stride) {
				*error = "Invalid stride (slots, > 0)";
				return -EINVAL;
			}
		} else if (!strcasecmp(name, "set_ways")) {
			if (parse_u32(val, FR_PAIR_WAYS, FR_MAX_WAYS, &v) ||
			    !is_power_of_2(v)) {
				*error = "Invalid set_ways (2, 4 or 8)";
				return -EINVAL;
			}
			fr->arg_ways = v;
		} else if (!strcasecmp(name, "uuid")) {
			if (parse_uuid(val, fr->arg_uuid)) {
				*error = "Invalid uuid (32 hex digits, dashes allowed)";
				return -EINVAL;
			}
			fr->has_uuid = true;
		} else if (!strcasecmp(name, "origin_id")) {
			if (parse_origin_id(val, fr->arg_origin_id)) {
				*error = "Invalid origin_id (1..63 printable characters, no space or backslash)";
				return -EINVAL;
			}
		} else {
			*error = "Unrecognised optional argument";
			return -EINVAL;
		}
	}
	if (fr->drop_dirty && !fr->fresh) {
		*error = "drop_dirty needs fresh";
		return -EINVAL;
	}
	if (fr_tunables_refused(fr, -1, 0)) {
		*error = "low_watermark is above high_watermark";
		return -EINVAL;
	}
	return 0;
}

/*
 * The "set" message: one tunable to a new value, or nothing changed and
 * *why says what was wrong.
 */
int fr_tunable_set(struct dm_fr *fr, const char *name, const char *value,
		   const char **why)
{
	const struct fr_tunable *t;
	int id = fr_tunable_find(name);
	u32 v;

	if (id < 0) {
		*why = "unknown setting";
		return -EINVAL;
	}
	t = &fr_tunables[id];
	if (parse_u32(value, t->min, t->max, &v)) {
		*why = t->error;
		return -EINVAL;
	}
	*why = fr_tunables_refused(fr, id, v);
	if (*why)
		return -EINVAL;
	if (fr_tunable_setters[id]) {
		if (fr_tunable_setters[id](fr, v)) {
			*why = "cannot allocate the writeback buffers";
			return -ENOMEM;
		}
	} else {
		WRITE_ONCE(fr->tunables[id], v);
	}
	if (fr_tunable_kicks[id])
		fr_writeback_kick(fr);
	return 0;
}

static __printf(3, 4) void fr_table_arg(struct fr_table_args *a,
					 unsigned int words,
					 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	a->len += vscnprintf(a->buf + a->len, sizeof(a->buf) - a->len, fmt, ap);
	va_end(ap);
	WARN_ON_ONCE(a->len >= sizeof(a->buf) - 1);
	a->n += words;
}

/* The optional arguments of the printed table (struct fr_table_args). */
void fr_table_args(struct dm_fr *fr, struct fr_table_args *a)
{
	unsigned int i, v;

	a->buf[0] = 0;
	a->len = 0;
	a->n = 0;
	if (fr->has_uuid)
		fr_table_arg(a, 2, " uuid %16phN", fr->arg_uuid);
	if (fr->arg_origin_id[0])
		fr_table_arg(a, 2, " origin_id %s", fr->arg_origin_id);
	if (fr->arg_chunk_size)
		fr_table_arg(a, 2, " chunk_size %u", fr->arg_chunk_size);
	if (fr->arg_region_size)
		fr_table_arg(a, 2, " region_size %u", fr->arg_region_size);
	if (fr->arg_stride)
		fr_table_arg(a, 2, " stride %llu", fr->arg_stride);
	if (fr->arg_ways)
		fr_table_arg(a, 2, " set_ways %u", fr->arg_ways);
	for (i = 0; i < FR_NR_TUNABLES; i++) {
		v = READ_ONCE(fr->tunables[i]);
		if (v != fr_tunables[i].def)
			fr_table_arg(a, 2, " %s %u", fr_tunables[i].name, v);
	}
	if (READ_ONCE(fr->cleaner))
		fr_table_arg(a, 1, " cleaner");
	if (!fr->read_fill)
		fr_table_arg(a, 1, " no_read_fill");
}
