// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fr target's status line (docs/target-interface.md), parsed and made
 * readable. Pure functions: the unit tests feed them canned lines.
 *
 * Fields are positional and only ever appended to: a line with more fields
 * than this frctl knows is accepted (the extra ones are counted, not shown),
 * a line with fewer is an error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "frctl.h"

static int next_token(const char **s, char *tok, size_t len)
{
	const char *p = *s;
	size_t n = 0;

	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (!*p)
		return -ENOENT;
	while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
		if (n + 1 >= len)
			return -E2BIG;
		tok[n++] = *p++;
	}
	tok[n] = 0;
	*s = p;
	return 0;
}

/* The fields of dm-fr/core/fr-status.h: where each goes, and its version. */
static const struct {
	const char *name, *json;
	size_t offset;
	unsigned int since;
	bool keyed;
} fields[FR_NR_STATUS] = {
#define FR_STATUS(n, v, k, j, what) \
	[FR_STATUS_##n] = { #n, j, offsetof(struct fr_status, n), v, k },
#include "fr-status.h"
#undef FR_STATUS
};

_Static_assert(FR_NR_STATUS <= 64, "struct fr_status: seen has 64 bits");

static u64 *field(struct fr_status *st, int i)
{
	return (u64 *)((char *)st + fields[i].offset);
}

/* A "name=value" word of a field this frctl knows: 0, 1 (not one), < 0. */
static int parse_keyed(struct fr_status *st, const char *tok)
{
	const char *eq = strchr(tok, '=');
	int i;

	if (!eq)
		return -EINVAL;
	for (i = 0; i < FR_NR_STATUS; i++) {
		if (strlen(fields[i].name) != (size_t)(eq - tok) ||
		    strncmp(fields[i].name, tok, (size_t)(eq - tok)))
			continue;
		if (parse_u64(eq + 1, field(st, i)))
			return -EINVAL;
		st->seen |= 1ULL << i;
		return 0;
	}
	return 1;
}

int status_parse(const char *line, struct fr_status *st)
{
	char tok[64];
	const char *p = line, *q;
	int i, j, r;

	memset(st, 0, sizeof(*st));
	if (!line || next_token(&p, st->state, sizeof(st->state)))
		return -EINVAL;
	for (i = 0; st->state[i]; i++)
		if (!((st->state[i] >= 'a' && st->state[i] <= 'z') ||
		      st->state[i] == '_' || st->state[i] == '-'))
			return -EINVAL;
	/*
	 * The positional fields, a version's at a time: the fields a version
	 * added come together, so a line that ends inside a group is not that
	 * version's (its words count as fields this frctl does not know).
	 * Those of the first version must all be there.
	 */
	for (i = 0; i < FR_NR_STATUS && !fields[i].keyed; i = j) {
		u64 v[FR_NR_STATUS];

		q = p;
		for (j = i; j < FR_NR_STATUS && !fields[j].keyed &&
		     fields[j].since == fields[i].since; j++) {
			if (next_token(&q, tok, sizeof(tok)))
				break;
			if (strchr(tok, '='))
				break;
			if (parse_u64(tok, &v[j]))
				return -EINVAL;
		}
		if (j < FR_NR_STATUS && !fields[j].keyed &&
		    fields[j].since == fields[i].since) {
			if (!i)
				return -EINVAL;
			break;
		}
		for (j = i; j < FR_NR_STATUS && !fields[j].keyed &&
		     fields[j].since == fields[i].since; j++) {
			*field(st, j) = v[j];
			st->seen |= 1ULL << j;
		}
		p = q;
	}
	/* Then any word: a keyed field by name, or one this frctl ignores. */
	while (!next_token(&p, tok, sizeof(tok))) {
		r = strchr(tok, '=') ? parse_keyed(st, tok) : 1;
		if (r < 0)
			return r;
		if (r > 0) {
			u64 ignored;

			/* An unknown positional word is still a number. */
			if (!strchr(tok, '=') && parse_u64(tok, &ignored))
				return -EINVAL;
			st->extra_fields++;
		}
	}
	if (!st->chunk_sectors || st->chunks_valid > st->chunks_total ||
	    st->chunks_dirty > st->chunks_valid || st->cleaner > 1)
		return -ERANGE;
	return 0;
}

int table_parse(const char *line, struct fr_table *t)
{
	const char *p = line;

	memset(t, 0, sizeof(*t));
	if (!line || next_token(&p, t->origin, sizeof(t->origin)) ||
	    next_token(&p, t->pm, sizeof(t->pm)))
		return -EINVAL;
	while (*p == ' ')
		p++;
	snprintf(t->opts, sizeof(t->opts), "%s", p);
	return 0;
}

static double pct(u64 part, u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void add_u64(struct json_object *o, const char *k, u64 v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_pct(struct json_object *o, const char *k, double v)
{
	char buf[32];

	/* One decimal, as a number: 83.3, not 83.33333333. */
	snprintf(buf, sizeof(buf), "%.1f", v);
	json_object_object_add(o, k, json_object_new_double_s(v, buf));
}

/* Bytes written back per second between two samples, or -1. */
static double wb_rate(const struct fr_status *st, const struct fr_status *prev,
		      double interval)
{
	if (!prev || interval <= 0 ||
	    st->chunks_written_back < prev->chunks_written_back)
		return -1;
	return (double)((st->chunks_written_back - prev->chunks_written_back) *
			(st->chunk_sectors << FR_SECTOR_SHIFT)) / interval;
}

/* Every tunable's value now: the table's, else the kernel's default. */
static void add_tunables(struct json_object *o, const struct fr_table *t)
{
	struct json_object *tun = json_object_new_object();
	u64 v[FR_NR_TUNABLES];
	int i;

	tunables_of_table(t->opts, v);
	for (i = 0; i < FR_NR_TUNABLES; i++)
		add_u64(tun, frctl_tunables[i].name, v[i]);
	json_object_object_add(o, "tunables", tun);
}

struct json_object *status_json(const char *name, const char *uuid,
				u64 length, const struct fr_table *t,
				const struct fr_status *st,
				const struct fr_status *prev, double interval)
{
	struct json_object *o = json_object_new_object();
	u64 chunk = st->chunk_sectors << FR_SECTOR_SHIFT;
	double rate = wb_rate(st, prev, interval);
	int i;

	json_object_object_add(o, "name", json_object_new_string(name));
	if (uuid && *uuid)
		json_object_object_add(o, "uuid", json_object_new_string(uuid));
	add_u64(o, "size", length << FR_SECTOR_SHIFT);
	if (t) {
		json_object_object_add(o, "origin",
				       json_object_new_string(t->origin));
		json_object_object_add(o, "pm", json_object_new_string(t->pm));
		json_object_object_add(o, "options",
				       json_object_new_string(t->opts));
		add_tunables(o, t);
	}
	json_object_object_add(o, "state", json_object_new_string(st->state));
	/* Every field the line had, by its JSON key (fr-status.h). */
	for (i = 0; i < FR_NR_STATUS; i++) {
		u64 v = *(const u64 *)((const char *)st + fields[i].offset);

		if (!(st->seen >> i & 1))
			continue;
		if (i == FR_STATUS_cleaner)
			json_object_object_add(o, fields[i].json,
					       json_object_new_boolean(v != 0));
		else
			add_u64(o, fields[i].json, v);
	}
	/* What follows from them: sizes in bytes, shares, hit ratios. */
	add_u64(o, "chunk_size", chunk);
	add_u64(o, "cache_bytes", st->chunks_total * chunk);
	add_u64(o, "valid_bytes", st->chunks_valid * chunk);
	add_u64(o, "dirty_bytes", st->chunks_dirty * chunk);
	add_pct(o, "valid_percent", pct(st->chunks_valid, st->chunks_total));
	add_pct(o, "dirty_percent", pct(st->chunks_dirty, st->chunks_total));
	add_pct(o, "read_hit_percent",
		pct(st->read_hits, st->read_hits + st->read_misses));
	add_pct(o, "write_hit_percent",
		pct(st->write_hits, st->write_hits + st->write_misses));
	add_u64(o, "bytes_written_back", st->chunks_written_back * chunk);
	if (rate >= 0) {
		add_u64(o, "writeback_bytes_per_second", (u64)rate);
		add_pct(o, "sample_interval_seconds", interval);
	}
	return o;
}

void status_print(FILE *f, const char *name, const char *uuid, u64 length,
		  const struct fr_table *t, const struct fr_status *st,
		  const struct fr_status *prev, double interval)
{
	u64 chunk = st->chunk_sectors << FR_SECTOR_SHIFT;
	double rate = wb_rate(st, prev, interval);
	char b1[32], b2[32], b3[32];

	fprintf(f, "%s: %s%s\n", name, st->state,
		st->cleaner ? ", cleaner mode" : "");
	if (uuid && *uuid)
		fprintf(f, "  uuid:      %s\n", uuid);
	if (t)
		fprintf(f, "  devices:   origin %s, pm %s, %s%s%s\n", t->origin,
			t->pm, fmt_bytes(b1, sizeof(b1),
					 length << FR_SECTOR_SHIFT),
			t->opts[0] ? ", options " : "", t->opts);
	fprintf(f, "  cache:     %llu chunks of %s (%s), %llu valid (%.1f%%)\n",
		(unsigned long long)st->chunks_total,
		fmt_bytes(b1, sizeof(b1), chunk),
		fmt_bytes(b2, sizeof(b2), st->chunks_total * chunk),
		(unsigned long long)st->chunks_valid,
		pct(st->chunks_valid, st->chunks_total));
	/* A pair's width goes without saying (and before 1.18, unsaid). */
	if (status_has(st, set_ways) && st->set_ways != FR_PAIR_WAYS)
		fprintf(f, "  slots:     sets of %llu chunks (set_ways %llu)\n",
			(unsigned long long)st->set_ways,
			(unsigned long long)st->set_ways);
	fprintf(f, "  dirty:     %llu chunks, %s (%.1f%%)\n",
		(unsigned long long)st->chunks_dirty,
		fmt_bytes(b3, sizeof(b3), st->chunks_dirty * chunk),
		pct(st->chunks_dirty, st->chunks_total));
	fprintf(f, "  reads:     %llu hits, %llu misses (%.1f%% hit), %llu filled",
		(unsigned long long)st->read_hits,
		(unsigned long long)st->read_misses,
		pct(st->read_hits, st->read_hits + st->read_misses),
		(unsigned long long)st->read_fills);
	if (status_has(st, prefetched))
		fprintf(f, " (%llu chunks read ahead)",
			(unsigned long long)st->prefetched);
	fputc('\n', f);
	fprintf(f, "  writes:    %llu hits, %llu misses (%.1f%% hit), %llu forced writebacks",
		(unsigned long long)st->write_hits,
		(unsigned long long)st->write_misses,
		pct(st->write_hits, st->write_hits + st->write_misses),
		(unsigned long long)st->forced_writebacks);
	if (status_has(st, pinned_waits))
		fprintf(f, ", %llu waited for a writeback in flight",
			(unsigned long long)st->pinned_waits);
	fputc('\n', f);
	fprintf(f, "  writeback: %llu rounds, %llu chunks (%s)",
		(unsigned long long)st->writeback_rounds,
		(unsigned long long)st->chunks_written_back,
		fmt_bytes(b1, sizeof(b1), st->chunks_written_back * chunk));
	if (rate >= 0)
		fprintf(f, ", %s/s", fmt_bytes(b2, sizeof(b2), (u64)rate));
	if (status_has(st, drains) && st->drains)
		fprintf(f, ", %llu drain%s (writes outgrew the PM)",
			(unsigned long long)st->drains, st->drains == 1 ? "" : "s");
	fputc('\n', f);
	fprintf(f, "  errors:    origin %llu, pm %llu\n",
		(unsigned long long)st->origin_errors,
		(unsigned long long)st->pm_errors);
	if (st->unreadable)
		fprintf(f, "  unreadable: %llu dirty chunks cannot be read from PM: they stay dirty and are never written back (the origin keeps older data for them), reads of them fail; rewriting or discarding them whole replaces them\n",
			(unsigned long long)st->unreadable);
	if (st->bad_chunks)
		fprintf(f, "  bad PM:    %llu chunks retired (bad blocks on the PM): never read nor written\n",
			(unsigned long long)st->bad_chunks);
	if (st->lost_slots)
		fprintf(f, "  lost:      %llu slots whose PM tags are unreadable: what they held is unknown, so reads and writes of the origin chunks placed in them fail, and flush fails; the message forget_unreadable declares them lost (the origin then holds what is left)\n",
			(unsigned long long)st->lost_slots);
}
