// SPDX-License-Identifier: GPL-2.0-only
/*
 * frctl retire: take a PM that failed out of service, so that the origin is
 * used alone, and say what that loses. Never silent: without --accept-loss
 * it reports and changes nothing whenever anything is or may be lost.
 *
 *   retire NAME         a live device whose PM fails: detach (cleaner mode,
 *                       everything readable written back); the dirty chunks
 *                       that cannot be read from PM, and lost slots, are
 *                       listed (origin ranges, from the tags), then given up
 *                       by the swap to the plain table
 *   retire --pm DEV     a PM no device uses (a device that would not load):
 *                       its dirty chunks listed from its tags, its
 *                       superblock wiped, its origin forgotten by the guard
 *   retire --origin DEV the PM is missing: its origin forgotten by the guard;
 *                       what the PM held is unknown, and lost
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "frctl.h"

/* What a PM's tags say is dirty: the keys, and tags that cannot be read. */
struct lost {
	u64 *keys;
	u64 n, cap;
	u64 unreadable_tags;
	u32 chunk_sectors;
	char hex[33];
};

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Read the dirty keys of the PM at path (busy: a live device has it). */
static int lost_read(const char *path, bool busy, struct lost *ls)
{
	struct fr_tag_read t[FR_MAX_WAYS];
	struct fr_image im;
	struct fr_meta m;
	u64 s, i, j;
	int r, k;

	memset(ls, 0, sizeof(*ls));
	r = image_open(&im, path, IMG_EXCL | (busy ? IMG_FORCE : 0));
	if (r)
		return r;
	r = meta_open(&m, im.map, im.size);
	if (r || m.state != SB_OK) {
		fr_err("%s: %s", path, m.why ? m.why : "no usable dm-fr superblock");
		image_close(&im);
		return -EINVAL;
	}
	ls->chunk_sectors = m.cache.geo.chunk_sectors;
	uuid_hex(m.cache.sb->uuid, ls->hex);
	for (s = 0; s < m.cache.geo.nr_slots; s++) {
		fr_read_slot(&m.cache, to_slot(s), t);
		for (k = 0; k < (int)m.cache.geo.ways; k++) {
			if (t[k].unreadable) {
				ls->unreadable_tags++;
				continue;
			}
			if (!t[k].valid || !(t[k].commit & FR_TAG_DIRTY))
				continue;
			if (ls->n == ls->cap) {
				u64 *nk;

				ls->cap = ls->cap ? 2 * ls->cap : 1024;
				nk = realloc(ls->keys, ls->cap * sizeof(*nk));
				if (!nk) {
					meta_close(&m);
					image_close(&im);
					return -ENOMEM;
				}
				ls->keys = nk;
			}
			ls->keys[ls->n++] = fr_commit_key(t[k].commit);
		}
	}
	meta_close(&m);
	image_close(&im);
	/* In origin order, each key once (two copies of a key: one loss). */
	if (ls->n)
		qsort(ls->keys, ls->n, sizeof(*ls->keys), cmp_u64);
	for (i = j = 0; i < ls->n; i++)
		if (!j || ls->keys[i] != ls->keys[j - 1])
			ls->keys[j++] = ls->keys[i];
	ls->n = j;
	return 0;
}

/* Calls fn for each run of consecutive keys: [first, last]. */
static void lost_ranges(const struct lost *ls,
			void (*fn)(u64 first, u64 last, void *arg), void *arg)
{
	u64 i = 0, j;

	while (i < ls->n) {
		for (j = i; j + 1 < ls->n && ls->keys[j + 1] == ls->keys[j] + 1; j++)
			;
		fn(ls->keys[i], ls->keys[j], arg);
		i = j + 1;
	}
}

struct print_ctx {
	const struct lost *ls;
	struct json_object *arr;
	u32 shown;
};

#define TEXT_RANGES	20

static void range_out(u64 first, u64 last, void *arg)
{
	struct print_ctx *p = arg;
	u64 cs = p->ls->chunk_sectors;

	if (p->arr) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "start_sector",
				       json_object_new_int64((int64_t)(first * cs)));
		json_object_object_add(o, "sectors",
				       json_object_new_int64((int64_t)((last - first + 1) * cs)));
		json_object_array_add(p->arr, o);
		return;
	}
	if (p->shown++ < TEXT_RANGES)
		printf("  origin sectors %llu-%llu\n",
		       (unsigned long long)(first * cs),
		       (unsigned long long)((last + 1) * cs - 1));
}

/* The report; what is lost: dirty chunks, unknown slots (lost_slots). */
static void report(const char *what, const struct lost *ls, u64 lost_slots,
		   bool json, bool retired)
{
	struct print_ctx p = { ls, NULL, 0 };
	char b1[32];

	if (json) {
		struct json_object *o = json_object_new_object();

		p.arr = json_object_new_array();
		lost_ranges(ls, range_out, &p);
		json_object_object_add(o, "retire", json_object_new_string(what));
		json_object_object_add(o, "lost_chunks", json_object_new_int64((int64_t)ls->n));
		json_object_object_add(o, "lost_bytes",
				       json_object_new_int64((int64_t)(ls->n * ls->chunk_sectors << FR_SECTOR_SHIFT)));
		json_object_object_add(o, "unreadable_tags",
				       json_object_new_int64((int64_t)ls->unreadable_tags));
		json_object_object_add(o, "lost_slots", json_object_new_int64((int64_t)lost_slots));
		json_object_object_add(o, "ranges", p.arr);
		json_object_object_add(o, "retired", json_object_new_boolean(retired));
		/* One line: after the drain's lines, one object per line. */
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		fflush(stdout);
		return;
	}
	if (!ls->n && !ls->unreadable_tags && !lost_slots) {
		printf("%s: nothing is lost: the origin holds all the data\n", what);
		return;
	}
	printf("%s: %s %llu dirty chunks (%s) the origin does not hold%s\n", what,
	       retired ? "gave up" : "would give up", (unsigned long long)ls->n,
	       fmt_bytes(b1, sizeof(b1), ls->n * ls->chunk_sectors << FR_SECTOR_SHIFT),
	       ls->n ? ":" : "");
	lost_ranges(ls, range_out, &p);
	if (p.shown > TEXT_RANGES)
		printf("  ... %u ranges in all (--json lists them)\n", p.shown);
	if (ls->unreadable_tags || lost_slots)
		printf("%s: and what %llu unreadable tags (%llu lost slots) held: unknown origin ranges\n",
		       what, (unsigned long long)ls->unreadable_tags,
		       (unsigned long long)lost_slots);
}

static int refuse_loss(const char *what)
{
	fr_err("%s: not retired (nothing changed): --accept-loss gives that up and uses the origin alone",
	       what);
	return FR_EXIT_OPERATIONAL;
}

/* A live device: detach, and give up what the PM cannot give back. */
static int retire_live(const char *name, unsigned int timeout, bool accept,
		       bool json, bool quiet)
{
	struct lost ls = { 0 };
	char pmpath[64];
	struct fr_dev d;
	u64 left = 0;
	int r;

	r = do_detach(name, timeout, json, quiet, false, 0, &left);
	if (!r) {
		if (json)
			report(name, &ls, 0, true, true);
		else if (!quiet)
			printf("%s: retired; nothing was lost: the origin holds all the data\n",
			       name);
		return 0;
	}
	if (r == FR_EXIT_CANCELED || get_fr_dev(name, &d))
		return r;
	if (!left && !d.st.lost_slots)
		return r;	/* not the PM's fault: detach said why */
	snprintf(pmpath, sizeof(pmpath), "/dev/block/%s", d.table.pm);
	if (lost_read(pmpath, true, &ls)) {
		fr_err("%s: cannot read the PM's tags: the lost ranges are unknown",
		       name);
		ls.chunk_sectors = (u32)d.st.chunk_sectors;
		ls.n = 0;
	}
	report(name, &ls, d.st.lost_slots, json && !accept, false);
	if (!accept) {
		free(ls.keys);
		return refuse_loss(name);
	}
	r = do_detach(name, timeout, json, true, true, left, &left);
	if (!r)
		report(name, &ls, d.st.lost_slots, json, true);
	free(ls.keys);
	return r;
}

/* A PM no device uses: list, wipe, forget. */
static int retire_pm(const char *pm, bool accept, bool json)
{
	static const char zero[4096];
	struct lost ls;
	int fd, r;

	r = lost_read(pm, false, &ls);
	if (r) {
		fr_err("%s: cannot read its tags%s", pm,
		       r == -EBUSY ? " (in use: retire the device NAME instead)" :
		       "; if the PM is dead, retire its origin (--origin)");
		return FR_EXIT_OPERATIONAL;
	}
	if ((ls.n || ls.unreadable_tags) && !accept) {
		report(pm, &ls, 0, json, false);
		free(ls.keys);
		return refuse_loss(pm);
	}
	fd = open(pm, O_WRONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0 || pwrite(fd, zero, sizeof(zero), 0) != (ssize_t)sizeof(zero) ||
	    fsync(fd)) {
		fr_err("%s: cannot wipe its superblock: %s", pm, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(ls.keys);
		return FR_EXIT_OPERATIONAL;
	}
	close(fd);
	origins_forget(ls.hex);
	report(pm, &ls, 0, json, true);
	free(ls.keys);
	return 0;
}

/* What retire --origin says with --json: the loss is unknown (null). */
static void origin_json(const char *origin, const char *hex, bool retired)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "retire", json_object_new_string(origin));
	json_object_object_add(o, "pm_uuid", json_object_new_string(hex));
	json_object_object_add(o, "lost_chunks", NULL);
	json_object_object_add(o, "retired", json_object_new_boolean(retired));
	json_print(o);
	json_object_put(o);
}

/* The PM is missing: forget its origin. */
static int retire_origin(const char *origin, bool accept, bool json)
{
	char hex[33], id[FR_ORIGIN_ID_LEN], frname[FRCTL_DM_NAME_LEN];
	struct stat st;

	if (stat(origin, &st) || !S_ISBLK(st.st_mode)) {
		fr_err("%s is not a block device", origin);
		return FR_EXIT_OPERATIONAL;
	}
	if (origin_known(st.st_rdev, hex, sizeof(hex), id, sizeof(id), frname,
			 sizeof(frname))) {
		fr_err("%s is not a known dm-fr origin (frctl guard --list)",
		       origin);
		return FR_EXIT_OPERATIONAL;
	}
	if (frname[0]) {
		fr_err("%s is the origin of %s, which runs: retire %s instead",
		       origin, frname, frname);
		return FR_EXIT_OPERATIONAL;
	}
	if (!accept) {
		if (json)
			origin_json(origin, hex, false);
		fr_err("%s: its PM %s is not here; whatever it held that the origin does not is lost, and how much is unknown",
		       origin, hex);
		return refuse_loss(origin);
	}
	origins_forget(hex);
	if (json) {
		origin_json(origin, hex, true);
	} else {
		printf("%s: retired its missing PM %s; the origin is used alone (what the PM held that it does not is lost: unknown); its file system is offered again at its next udev event\n",
		       origin, hex);
	}
	return 0;
}

int cmd_retire(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pm", required_argument, NULL, 'p' },
		{ "origin", required_argument, NULL, 'o' },
		{ "accept-loss", no_argument, NULL, 'A' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *pm = NULL, *origin = NULL;
	bool json = false, quiet = false, accept = false;
	u64 timeout = 0;
	int c, r, lock;

	while ((c = verb_getopt(argc, argv, ":p:o:t:jqh", opts)) != -1) {
		switch (c) {
		case 'p':
			pm = optarg;
			break;
		case 'o':
			origin = optarg;
			break;
		case 'A':
			accept = true;
			break;
		case 't':
			if (parse_opt_u64("--timeout", optarg, 1, 86400 * 365,
					  &timeout))
				return FR_EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			print_help("retire", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (!!pm + !!origin + (optind < argc) != 1)
		return fr_usage_error("give one of NAME, --pm DEV or --origin DEV");
	if (optind + 1 < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind + 1]);
	if (pm)
		return retire_pm(pm, accept, json);
	if (origin)
		return retire_origin(origin, accept, json);
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;
	lock = device_lock(argv[optind]);
	if (lock < 0)
		return FR_EXIT_OPERATIONAL;
	r = retire_live(argv[optind], (unsigned int)timeout, accept, json,
			quiet);
	close(lock);
	return r;
}
