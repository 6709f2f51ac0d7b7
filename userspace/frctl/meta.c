// SPDX-License-Identifier: GPL-2.0-only
/*
 * Offline inspection of PM metadata: the part of check, repair and dump
 * that works on a mapped image, with no file or device I/O (the fuzz
 * target calls it on a plain buffer).
 *
 * The superblock is judged by sb_classify() (sb.c), as for probe and
 * create, and decoded by the core (fr_cache_attach). The verdict on the tags
 * is the core's own: recovery (fr_recover) and, per tag, the reading it
 * applies (fr_read_slot(): the per-tag rules and the pair rule).
 * What this file adds is reporting: counts per flag, and for dump each
 * corrupt tag's reason.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "frctl.h"

static const struct fr_sb_disk *sb_of(const struct fr_meta *m)
{
	return m->cache.sb;
}

/*
 * The superblock's verdict, from sb_classify() as for every verb. On PM an
 * unreadable superblock (a machine check) is damaged media, not a device
 * that failed to open: it is SB_DAMAGED here.
 */
static enum sb_state meta_classify(struct fr_meta *m, void *pm, u64 len)
{
	struct fr_sb_disk sb;
	struct fr_geometry g;
	u64 have = len < sizeof(sb) ? len : sizeof(sb);

	memset(&sb, 0, sizeof(sb));
	if (have && fr_pm_read(&sb, pm, have)) {
		m->why = "superblock unreadable (I/O error)";
		return SB_DAMAGED;
	}
	return sb_classify(&sb, have, len, &g, &m->why);
}

int meta_open(struct fr_meta *m, void *pm, u64 len)
{
	const struct fr_geometry *g;
	u64 i, incomplete = 0, commit, longs;
	int r;

	memset(m, 0, sizeof(*m));
	m->len = len;
	m->state = meta_classify(m, pm, len);
	if (m->state != SB_OK)
		return -EINVAL;		/* m->state and m->why say why */
	r = fr_cache_attach(&m->cache, pm, len, NULL, NULL, &m->why);
	if (r) {
		/* Read again and refused: the PM changed or failed under us. */
		m->state = SB_DAMAGED;
		return r;
	}
	g = &m->cache.geo;
	longs = fr_bitmap_longs(g);
	m->valid_bits = xcalloc(longs, sizeof(long));
	m->dirty_bits = xcalloc(longs, sizeof(long));
	m->cache.valid_bits = m->valid_bits;
	m->cache.dirty_bits = m->dirty_bits;

	/* Interrupted groups cannot outnumber the tags flagged INCOMPLETE. */
	for (i = 0; i < g->nr_chunks; i++) {
		if (fr_pm_load8(&m->cache.tags[i].commit, &commit))
			continue;
		if ((commit & FR_TAG_VALID) && (commit & FR_TAG_INCOMPLETE))
			incomplete++;
	}
	m->scratch_len = incomplete ? (u32)(incomplete > 0xffffffffULL ?
					    0xffffffffULL : incomplete) : 1;
	m->scratch = xcalloc(m->scratch_len, sizeof(*m->scratch));
	m->state = SB_OK;
	return 0;
}

void meta_close(struct fr_meta *m)
{
	free(m->valid_bits);
	free(m->dirty_bits);
	free(m->scratch);
	m->valid_bits = m->dirty_bits = NULL;
	m->scratch = NULL;
}

int meta_recover(struct fr_meta *m, enum fr_recover_mode mode,
		 struct fr_recovery_report *rep)
{
	return fr_recover(&m->cache, mode, m->scratch, m->scratch_len, rep,
			  &m->why);
}

bool report_pending(const struct fr_recovery_report *rep)
{
	return rep->groups_rolled_back || rep->groups_rolled_forward ||
	       rep->superseded_dropped;
}

void meta_count_tags(struct fr_meta *m, struct tag_counts *tc)
{
	const struct fr_geometry *g = &m->cache.geo;
	struct fr_tag_read t[FR_MAX_WAYS];
	u64 s;
	u32 i;

	memset(tc, 0, sizeof(*tc));
	for (s = 0; s < g->nr_slots; s++) {
		fr_read_slot(&m->cache, to_slot(s), t);
		for (i = 0; i < g->ways; i++) {
			u64 c = t[i].commit;

			if (t[i].unreadable) {
				tc->unreadable++;
				tc->suspect++;
				continue;
			}
			if (!(c & FR_TAG_VALID)) {
				tc->free++;
				continue;
			}
			tc->flagged_valid++;
			tc->flag_new += !!(c & FR_TAG_NEW);
			tc->flag_dirty += !!(c & FR_TAG_DIRTY);
			tc->flag_incomplete += !!(c & FR_TAG_INCOMPLETE);
			tc->unknown_flags += !!(fr_commit_flags(c) &
						~FR_TAG_FLAGS_KNOWN);
			if (t[i].problem)
				tc->suspect++;
		}
	}
}

static void add_u64(struct json_object *o, const char *k, u64 v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

static void origin_id_str(const struct fr_sb_disk *sb, char *out)
{
	size_t i;

	/* NUL-padded on PM; never trust it to be terminated or printable. */
	for (i = 0; i < FR_ORIGIN_ID_LEN - 1 && sb->origin_id[i]; i++)
		out[i] = (sb->origin_id[i] >= 0x20 && sb->origin_id[i] < 0x7f) ?
			 (char)sb->origin_id[i] : '?';
	out[i] = 0;
}

static void time_str(u64 t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t > (u64)0x7fffffffffffLL || !gmtime_r(&tt, &tm) ||
	    !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "invalid");
}

/* JSON's names; a truncated PM is "damaged" there, as it always was. */
static const char *state_name(enum sb_state s)
{
	switch (s) {
	case SB_OK:
		return "ok";
	case SB_NOT_FR:
		return "not-dm-fr";
	case SB_UNSUPPORTED:
		return "unsupported";
	case SB_NOT_FOUND:
	case SB_IO_ERROR:
		return "error";
	case SB_DAMAGED:
	case SB_TRUNCATED:
	default:
		return "damaged";
	}
}

struct json_object *meta_sb_json(struct fr_meta *m)
{
	struct json_object *o = json_object_new_object();
	const struct fr_geometry *g = &m->cache.geo;
	const struct fr_sb_disk *sb = sb_of(m);
	char buf[FR_ORIGIN_ID_LEN + 64];
	u64 chunk_bytes;

	add_str(o, "state", state_name(m->state));
	if (m->state != SB_OK) {
		add_str(o, "error", m->why ? m->why : "unknown");
		return o;
	}
	chunk_bytes = (u64)g->chunk_sectors << FR_SECTOR_SHIFT;
	add_u64(o, "version", le32_to_cpu(sb->version));
	uuid_unparse_lower(sb->uuid, buf);
	add_str(o, "uuid", buf);
	origin_id_str(sb, buf);
	add_str(o, "origin_id", buf);
	add_u64(o, "origin_sectors", g->origin_sectors);
	add_u64(o, "origin_bytes", g->origin_sectors << FR_SECTOR_SHIFT);
	add_u64(o, "chunk_size", chunk_bytes);
	add_u64(o, "chunk_sectors", g->chunk_sectors);
	add_u64(o, "region_size", chunk_bytes * g->region_chunks);
	add_u64(o, "region_chunks", g->region_chunks);
	add_u64(o, "stride_slots", g->stride_slots);
	add_u64(o, "nr_chunks", g->nr_chunks);
	add_u64(o, "nr_slots", g->nr_slots);
	/* Chunks a slot: 2, a pair (the superblock's field is 0), or 4, 8. */
	add_u64(o, "set_ways", g->ways);
	add_u64(o, "cache_bytes", g->nr_chunks * chunk_bytes);
	add_u64(o, "tags_offset", g->tags_offset);
	add_u64(o, "data_offset", g->data_offset);
	add_u64(o, "pm_bytes", g->pm_bytes);
	add_u64(o, "device_bytes", m->len);
	add_u64(o, "incompat_features", le64_to_cpu(sb->incompat_features));
	add_u64(o, "compat_features", le64_to_cpu(sb->compat_features));
	add_u64(o, "format_time", le64_to_cpu(sb->format_time));
	time_str(le64_to_cpu(sb->format_time), buf, sizeof(buf));
	add_str(o, "format_time_utc", buf);
	snprintf(buf, sizeof(buf), "0x%08x", le32_to_cpu(sb->csum));
	add_str(o, "checksum", buf);
	return o;
}

void meta_print_sb(FILE *f, struct fr_meta *m)
{
	const struct fr_geometry *g = &m->cache.geo;
	const struct fr_sb_disk *sb = sb_of(m);
	char uuid[37], origin[FR_ORIGIN_ID_LEN], t[64], b1[32], b2[32], b3[32];
	u64 chunk_bytes = (u64)g->chunk_sectors << FR_SECTOR_SHIFT;

	uuid_unparse_lower(sb->uuid, uuid);
	origin_id_str(sb, origin);
	time_str(le64_to_cpu(sb->format_time), t, sizeof(t));
	fprintf(f, "uuid:           %s\n", uuid);
	fprintf(f, "origin:         %s (%llu sectors, %s)\n",
		origin[0] ? origin : "(none recorded)",
		(unsigned long long)g->origin_sectors,
		fmt_bytes(b1, sizeof(b1), g->origin_sectors << FR_SECTOR_SHIFT));
	fprintf(f, "format:         version %u, formatted %s\n",
		le32_to_cpu(sb->version), t);
	if (g->ways == FR_PAIR_WAYS)
		fprintf(f, "slots:          pairs (set_ways 2)\n");
	else
		fprintf(f, "slots:          sets of %u chunks (set_ways %u, incompat feature sets)\n",
			g->ways, g->ways);
	fprintf(f, "cache:          %llu chunks of %s in %llu slots (%s of %s PM)\n",
		(unsigned long long)g->nr_chunks,
		fmt_bytes(b1, sizeof(b1), chunk_bytes),
		(unsigned long long)g->nr_slots,
		fmt_bytes(b2, sizeof(b2), g->nr_chunks * chunk_bytes),
		fmt_bytes(b3, sizeof(b3), g->pm_bytes));
	fprintf(f, "placement:      regions of %u chunks (%s), stride %llu slots\n",
		g->region_chunks,
		fmt_bytes(b1, sizeof(b1), chunk_bytes * g->region_chunks),
		(unsigned long long)g->stride_slots);
}

struct json_object *meta_report_json(const struct fr_recovery_report *rep)
{
	struct json_object *o = json_object_new_object();

	add_u64(o, "valid_chunks", rep->valid);
	add_u64(o, "dirty_chunks", rep->dirty);
	add_u64(o, "corrupt_tags", rep->corrupt_tags);
	if (rep->corrupt_tags)
		add_u64(o, "first_corrupt_chunk", rep->first_corrupt);
	add_u64(o, "unreadable_tags", rep->unreadable_tags);
	add_u64(o, "groups_rolled_back", rep->groups_rolled_back);
	add_u64(o, "groups_rolled_forward", rep->groups_rolled_forward);
	add_u64(o, "members_rolled_back", rep->members_rolled_back);
	add_u64(o, "superseded_dropped", rep->superseded_dropped);
	add_u64(o, "max_seq", rep->max_seq);
	add_u64(o, "stores", rep->stores);
	return o;
}

struct json_object *meta_counts_json(const struct tag_counts *tc)
{
	struct json_object *o = json_object_new_object();

	add_u64(o, "free", tc->free);
	add_u64(o, "flagged_valid", tc->flagged_valid);
	add_u64(o, "new", tc->flag_new);
	add_u64(o, "dirty", tc->flag_dirty);
	add_u64(o, "incomplete", tc->flag_incomplete);
	add_u64(o, "unknown_flags", tc->unknown_flags);
	add_u64(o, "suspect", tc->suspect);
	add_u64(o, "unreadable", tc->unreadable);
	return o;
}

static void flag_letters(u64 commit, char *out)
{
	char *p = out;

	if (commit & FR_TAG_VALID)
		*p++ = 'V';
	if (commit & FR_TAG_NEW)
		*p++ = 'N';
	if (commit & FR_TAG_DIRTY)
		*p++ = 'D';
	if (commit & FR_TAG_INCOMPLETE)
		*p++ = 'I';
	if (fr_commit_flags(commit) & ~FR_TAG_FLAGS_KNOWN)
		*p++ = '?';
	*p = 0;
}

/* Every tag with V set (or unreadable), as it is on PM before recovery. */
struct json_object *meta_tags_json(struct fr_meta *m)
{
	const struct fr_geometry *g = &m->cache.geo;
	struct json_object *a = json_object_new_array();
	struct fr_tag_read t[FR_MAX_WAYS];
	char buf[32];
	u64 s;
	u32 i;

	for (s = 0; s < g->nr_slots; s++) {
		fr_read_slot(&m->cache, to_slot(s), t);
		for (i = 0; i < g->ways; i++) {
			struct json_object *o;
			const char *why = t[i].problem;
			u64 p = from_pchunk(fr_slot_chunk(g, to_slot(s), i));

			if (!t[i].unreadable && !(t[i].commit & FR_TAG_VALID))
				continue;
			o = json_object_new_object();
			add_u64(o, "chunk", p);
			add_u64(o, "slot", s);
			add_str(o, "state", why ? "corrupt" : "valid");
			if (why)
				add_str(o, "problem", why);
			if (!t[i].unreadable) {
				u64 key = fr_commit_key(t[i].commit);

				add_u64(o, "key", key);
				if (key <= FR_MAX_KEY >> 7)
					add_u64(o, "origin_sector",
						key << g->chunk_shift);
				flag_letters(t[i].commit, buf);
				add_str(o, "flags", buf);
				snprintf(buf, sizeof(buf), "0x%016llx",
					 (unsigned long long)t[i].commit);
				add_str(o, "commit", buf);
				add_u64(o, "seq", t[i].seq);
				snprintf(buf, sizeof(buf), "0x%016llx",
					 (unsigned long long)t[i].sectors);
				add_str(o, "sectors", buf);
				add_u64(o, "held_sectors",
					hweight64(t[i].sectors));
			}
			json_object_array_add(a, o);
		}
	}
	return a;
}
