// SPDX-License-Identifier: GPL-2.0-only
/*
 * The verbs that work on PM metadata offline: format, check, repair, dump,
 * probe.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "frctl.h"

/* getopt_long with frctl's own messages; returns '?' after reporting. */
int verb_getopt(int argc, char **argv, const char *shortopts,
		const struct option *longopts)
{
	int c, prev = optind;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == '?' || c == ':') {
		const char *arg = argv[prev < argc ? prev : argc - 1];

		if (c == ':' || (optopt && strchr(shortopts, optopt) &&
				 strchr(shortopts, optopt)[1] == ':'))
			fr_usage_error("option '%s' needs a value", arg);
		else
			fr_usage_error("unknown option '%s'", arg);
		return '?';
	}
	return c;
}

static int want_one_arg(int argc, char **argv, const char *what,
			const char **out)
{
	if (optind >= argc)
		return fr_usage_error("missing %s", what);
	if (optind + 1 < argc)
		return fr_usage_error("unexpected argument '%s'",
				      argv[optind + 1]);
	*out = argv[optind];
	return 0;
}

/*
 * --chunk-size/--region-size/--stride/--ways, shared by format, create and
 * attach: 0, 1 for an option that is not one of them, or -1 after a usage
 * error.
 */
int geo_opts_parse(struct geo_opts *go, int c, const char *arg)
{
	u64 v;

	switch (c) {
	case 'C':
		if (parse_opt_size("--chunk-size", arg, &go->chunk_bytes))
			return -1;
		if (go->chunk_bytes < 4096 || go->chunk_bytes > 32768 ||
		    (go->chunk_bytes & (go->chunk_bytes - 1))) {
			fr_usage_error("--chunk-size must be 4k, 8k, 16k or 32k, not '%s'",
				       arg);
			return -1;
		}
		return 0;
	case 'R':
		if (parse_opt_size("--region-size", arg, &go->region_bytes))
			return -1;
		if (!go->region_bytes) {
			fr_usage_error("--region-size must not be 0");
			return -1;
		}
		return 0;
	case 'S':
		return parse_opt_u64("--stride", arg, 1, FR_MAX_SLOTS - 1,
				     &go->stride) ? -1 : 0;
	case 'W':
		/* The widths of fr-format.h: a pair (version 1), or a set. */
		if (parse_u64(arg, &v) || v < FR_PAIR_WAYS || v > FR_MAX_WAYS ||
		    (v & (v - 1))) {
			fr_usage_error("--ways must be 2, 4 or 8, not '%s'", arg);
			return -1;
		}
		go->ways = (u32)v;
		return 0;
	}
	return 1;
}

/* Turn geo_opts into format params for a PM of pm_bytes; 0 or an exit code. */
static int geo_params(const struct geo_opts *go, u64 pm_bytes,
		      struct fr_format_params *p)
{
	u64 chunk = go->chunk_bytes ? go->chunk_bytes :
		    (u64)FR_DEFAULT_CHUNK_SECTORS << FR_SECTOR_SHIFT;
	struct fr_geometry g;
	const char *why;
	u64 region;

	p->chunk_sectors = (u32)(chunk >> FR_SECTOR_SHIFT);
	/*
	 * No --ways: the default width, sets (1.19). A pair is version 1's
	 * layout: no FR_INCOMPAT_SETS, set_ways 0.
	 */
	p->ways = !go->ways ? FR_DEFAULT_WAYS :
		  go->ways == FR_PAIR_WAYS ? 0 : go->ways;
	if (go->region_bytes) {
		if (go->region_bytes % chunk ||
		    ((go->region_bytes / chunk) & (go->region_bytes / chunk - 1)) ||
		    go->region_bytes / chunk > FR_MAX_REGION_CHUNKS)
			return fr_usage_error("--region-size must be a power-of-two number of chunks (of %llu bytes), at most %u",
					      (unsigned long long)chunk,
					      FR_MAX_REGION_CHUNKS);
		p->region_chunks = (u32)(go->region_bytes / chunk);
	}
	p->stride_slots = go->stride;
	if (go->region_bytes)
		return 0;

	/*
	 * The default region is the core's (fr_geometry_layout(): 1 MiB,
	 * halved while it has more chunks than the PM has slots), as the
	 * kernel's fresh format lays it out: say so when a small PM shrinks it.
	 */
	region = FR_DEFAULT_REGION_BYTES / chunk;
	if (fr_geometry_layout(&g, pm_bytes, p, &why))
		return 0;	/* the real layout reports the problem */
	if (g.region_chunks != region)
		fr_warn("the PM has only %llu slots: regions of %u chunks instead of %llu",
			(unsigned long long)g.nr_slots, g.region_chunks,
			(unsigned long long)region);
	return 0;
}

void new_uuid(u8 uuid[16])
{
	size_t got = 0;
	ssize_t n;

	while (got < 16) {
		n = getrandom(uuid + got, 16 - got, 0);
		if (n <= 0) {
			fr_err("cannot get random bytes for a uuid: %s",
			       strerror(errno));
			exit(FR_EXIT_OPERATIONAL);
		}
		got += (size_t)n;
	}
	uuid[6] = (uuid[6] & 0x0f) | 0x40;	/* version 4 */
	uuid[8] = (uuid[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
}

static u64 format_time(void)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	u64 t;

	if (sde && !parse_u64(sde, &t))
		return t;
	return (u64)time(NULL);
}

/* Origin length in sectors and whether it can be opened; 0 or exit code. */
static int origin_sectors_of(const char *path, u64 *sectors)
{
	bool blk;
	dev_t rdev;
	u64 bytes;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fr_err("cannot open origin %s: %s", path, strerror(errno));
		return FR_EXIT_OPERATIONAL;
	}
	r = dev_size(fd, path, &bytes, &blk, &rdev);
	close(fd);
	if (r)
		return FR_EXIT_OPERATIONAL;
	if (bytes % FR_SECTOR_SIZE)
		fr_warn("origin %s is not a whole number of sectors: its last %llu bytes are not cached",
			path, (unsigned long long)(bytes % FR_SECTOR_SIZE));
	*sectors = bytes >> FR_SECTOR_SHIFT;
	if (!*sectors) {
		fr_err("origin %s is empty", path);
		return FR_EXIT_OPERATIONAL;
	}
	return 0;
}

/*
 * Format a mapped PM. Shared by format and create --format. Fills uuid_out.
 */
int format_pm(const char *pm_path, const char *origin_path,
	      const char *origin_id, u64 origin_sectors,
	      const struct geo_opts *go, const u8 *uuid, bool force, bool json,
	      bool quiet, u8 uuid_out[16])
{
	struct fr_format_params p;
	struct fr_geometry g;
	struct fr_image im;
	struct fr_cache cache = { 0 };
	unsigned long *vb, *db;
	char b1[32], b2[32], idbuf[FR_ORIGIN_ID_LEN], us[37];
	const char *why;
	u64 magic;
	int r;

	memset(&p, 0, sizeof(p));
	if (origin_path) {
		if (same_device(pm_path, origin_path)) {
			return fr_usage_error("the PM and the origin are the same device");
		}
		r = origin_sectors_of(origin_path, &origin_sectors);
		if (r)
			return r;
		if (!origin_id) {
			if (origin_choose_id(origin_path, idbuf, sizeof(idbuf)))
				return FR_EXIT_OPERATIONAL;
			origin_id = idbuf;
		}
	}
	if (strlen(origin_id) >= FR_ORIGIN_ID_LEN) {
		return fr_usage_error("origin id '%s' is longer than %d bytes",
				      origin_id, FR_ORIGIN_ID_LEN - 1);
	}
	snprintf(p.origin_id, sizeof(p.origin_id), "%s", origin_id);
	p.origin_sectors = origin_sectors;

	if (image_open(&im, pm_path, IMG_WRITE | IMG_EXCL))
		return FR_EXIT_OPERATIONAL;
	if (im.blkdev && !dev_is_dax(im.rdev))
		fr_warn("%s is not DAX-capable: the fr target will refuse it (use an fsdax namespace)",
			pm_path);

	if (!fr_pm_load8(im.map, &magic) && magic == FR_SB_MAGIC) {
		struct fr_meta m;
		struct fr_recovery_report rep;

		if (!force) {
			fr_err("%s already has a dm-fr superblock; --force overwrites it (and loses what it caches)",
			       pm_path);
			r = FR_EXIT_OPERATIONAL;
			goto out;
		}
		if (!meta_open(&m, im.map, im.size) &&
		    !meta_recover(&m, FR_RECOVER_CHECK, &rep) && rep.dirty)
			fr_warn("overwriting %llu dirty chunks (%s) that the origin does not hold",
				(unsigned long long)rep.dirty,
				fmt_bytes(b1, sizeof(b1), rep.dirty *
					  ((u64)m.cache.geo.chunk_sectors <<
					   FR_SECTOR_SHIFT)));
		meta_close(&m);
	}

	r = geo_params(go, im.size, &p);
	if (r)
		goto out;
	if (uuid)
		memcpy(p.uuid, uuid, 16);
	else
		new_uuid(p.uuid);
	p.format_time = format_time();
	if (fr_geometry_layout(&g, im.size, &p, &why)) {
		fr_err("cannot format %s: %s", pm_path, why);
		r = FR_EXIT_OPERATIONAL;
		goto out;
	}
	vb = xcalloc(fr_bitmap_longs(&g), sizeof(long));
	db = xcalloc(fr_bitmap_longs(&g), sizeof(long));
	r = fr_format(&cache, im.map, im.size, &p, vb, db, &why);
	free(vb);
	free(db);
	if (r) {
		fr_err("cannot format %s: %s", pm_path, why);
		r = FR_EXIT_OPERATIONAL;
		goto out;
	}
	if (image_sync(&im)) {
		r = FR_EXIT_OPERATIONAL;
		goto out;
	}
	memcpy(uuid_out, p.uuid, 16);
	if (im.blkdev) {
		char hex[33];

		uuid_hex(p.uuid, hex);
		origins_record(hex, p.origin_id);
	}
	if (json) {
		struct fr_meta m;
		struct json_object *o;

		meta_open(&m, im.map, im.size);
		o = meta_sb_json(&m);
		json_print(o);
		json_object_put(o);
		meta_close(&m);
	} else if (!quiet) {
		uuid_unparse_lower(p.uuid, us);
		printf("%s: formatted for origin %s (%s)\n", pm_path,
		       origin_id, fmt_bytes(b1, sizeof(b1),
					    origin_sectors << FR_SECTOR_SHIFT));
		printf("  uuid %s, %llu chunks of %s (%s cache), regions of %u chunks, stride %llu\n",
		       us, (unsigned long long)g.nr_chunks,
		       fmt_bytes(b1, sizeof(b1),
				 (u64)g.chunk_sectors << FR_SECTOR_SHIFT),
		       fmt_bytes(b2, sizeof(b2), g.nr_chunks *
				 ((u64)g.chunk_sectors << FR_SECTOR_SHIFT)),
		       g.region_chunks, (unsigned long long)g.stride_slots);
		if (g.ways != FR_PAIR_WAYS)
			printf("  set_ways %u: slots of %u chunks (incompat feature sets)\n",
			       g.ways, g.ways);
	}
	r = 0;
out:
	image_close(&im);
	return r;
}

int cmd_format(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pm", required_argument, NULL, 'p' },
		{ "origin", required_argument, NULL, 'o' },
		{ "chunk-size", required_argument, NULL, 'C' },
		{ "region-size", required_argument, NULL, 'R' },
		{ "stride", required_argument, NULL, 'S' },
		{ "ways", required_argument, NULL, 'W' },
		{ "origin-id", required_argument, NULL, 'I' },
		{ "origin-sectors", required_argument, NULL, 'O' },
		{ "uuid", required_argument, NULL, 'U' },
		{ "force", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *pm = NULL, *origin = NULL, *origin_id = NULL;
	struct geo_opts go = { 0 };
	bool force = false, json = false, have_uuid = false;
	u64 origin_sectors = 0;
	u8 uuid[16], out[16];
	int c;

	while ((c = verb_getopt(argc, argv, ":fjh", opts)) != -1) {
		switch (c) {
		case 'p':
			pm = optarg;
			break;
		case 'o':
			origin = optarg;
			break;
		case 'C':
		case 'R':
		case 'S':
		case 'W':
			if (geo_opts_parse(&go, c, optarg))
				return FR_EXIT_USAGE;
			break;
		case 'I':
			origin_id = optarg;
			break;
		case 'O':
			if (parse_opt_u64("--origin-sectors", optarg, 1,
					  ~0ULL >> FR_SECTOR_SHIFT,
					  &origin_sectors))
				return FR_EXIT_USAGE;
			break;
		case 'U':
			if (uuid_parse_str(optarg, uuid))
				return fr_usage_error("--uuid: '%s' is not a uuid",
						      optarg);
			have_uuid = true;
			break;
		case 'f':
			force = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			print_help("format", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind]);
	if (!pm)
		return fr_usage_error("--pm is required");
	if (origin && origin_sectors)
		return fr_usage_error("--origin and --origin-sectors exclude each other");
	if (!origin && !origin_sectors)
		return fr_usage_error("--origin is required");
	if (!origin && !origin_id)
		return fr_usage_error("--origin-sectors needs --origin-id");
	return format_pm(pm, origin, origin_id, origin_sectors, &go,
			 have_uuid ? uuid : NULL, force, json, false, out);
}

/* Open and decode for check, repair and dump; 0 or an exit code. */
static int open_meta(const char *path, unsigned int flags, struct fr_image *im,
		     struct fr_meta *m, bool quiet)
{
	memset(m, 0, sizeof(*m));
	if (image_open(im, path, flags))
		return FR_EXIT_OPERATIONAL;
	if (im->busy)
		fr_warn("%s is in use: what follows is a snapshot of a live cache and may show transient states",
			path);
	if (!meta_open(m, im->map, im->size))
		return 0;
	if (!quiet)
		fr_err("%s: %s: %s%s", path, sb_state_text(m->state), m->why,
		       sb_state_hint(m->state));
	return sb_state_exit(m->state);
}

static void print_report(const char *path, struct fr_meta *m,
			 const struct fr_recovery_report *rep, bool done)
{
	u64 chunk = (u64)m->cache.geo.chunk_sectors << FR_SECTOR_SHIFT;
	char b1[32];

	printf("%s: dm-fr PM\n", path);
	meta_print_sb(stdout, m);
	printf("tags:           %llu valid chunks, %llu dirty (%s not yet on the origin)\n",
	       (unsigned long long)rep->valid, (unsigned long long)rep->dirty,
	       fmt_bytes(b1, sizeof(b1), rep->dirty * chunk));
	if (report_pending(rep)) {
		printf("%s  %llu interrupted multi-chunk writes rolled back (%llu chunks), %llu rolled forward, %llu superseded copies dropped\n",
		       done ? "recovered:    " : "to recover:   ",
		       (unsigned long long)rep->groups_rolled_back,
		       (unsigned long long)rep->members_rolled_back,
		       (unsigned long long)rep->groups_rolled_forward,
		       (unsigned long long)rep->superseded_dropped);
	}
	if (rep->corrupt_tags)
		printf("%s  %llu corrupt tags (%llu unreadable), the first at chunk %llu\n",
		       done ? "cleared:      " : "errors:       ",
		       (unsigned long long)rep->corrupt_tags,
		       (unsigned long long)rep->unreadable_tags,
		       (unsigned long long)rep->first_corrupt);
}

static int check_common(int argc, char **argv, bool repair)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct fr_recovery_report rep, after;
	struct json_object *o = NULL;
	bool force = false, json = false, dry = false;
	const char *path;
	struct fr_image im;
	struct fr_meta m;
	int c, r;

	while ((c = verb_getopt(argc, argv, repair ? ":jnh" : ":fjh",
				opts)) != -1) {
		switch (c) {
		case 'f':
			if (repair)
				return fr_usage_error("unknown option '--force'");
			force = true;
			break;
		case 'j':
			json = true;
			break;
		case 'n':
			if (!repair)
				return fr_usage_error("unknown option '--dry-run'");
			dry = true;
			break;
		case 'h':
			print_help(repair ? "repair" : "check", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	r = want_one_arg(argc, argv, "the PM device or image", &path);
	if (r)
		return r;
	if (repair && !dry)
		r = open_meta(path, IMG_WRITE | IMG_EXCL, &im, &m, json);
	else
		r = open_meta(path, IMG_EXCL | (force ? IMG_FORCE : 0), &im, &m,
			      json);
	if (json) {
		o = json_object_new_object();
		json_object_object_add(o, "device", json_object_new_string(path));
	}
	if (r) {
		if (o) {
			if (im.map)
				json_object_object_add(o, "superblock",
						       meta_sb_json(&m));
			json_object_object_add(o, "result",
				json_object_new_string(r == FR_EXIT_UNCORRECTED ?
						       "damaged" : "error"));
			json_object_object_add(o, "exit_code",
					       json_object_new_int(r));
			json_print(o);
			json_object_put(o);
		}
		meta_close(&m);
		image_close(&im);
		return r;
	}

	if (meta_recover(&m, FR_RECOVER_CHECK, &rep)) {
		fr_err("%s: %s", path, m.why);
		r = FR_EXIT_OPERATIONAL;
		goto out;
	}
	if (!repair || dry) {
		r = rep.corrupt_tags ? FR_EXIT_UNCORRECTED : FR_EXIT_OK;
		if (!json) {
			print_report(path, &m, &rep, false);
			if (rep.corrupt_tags)
				printf("result:         errors found: run frctl repair (the kernel refuses this PM until then)\n");
			else if (report_pending(&rep))
				printf("result:         clean; crash recovery pending (done by the kernel at load, or frctl repair)\n");
			else
				printf("result:         clean\n");
		} else {
			json_object_object_add(o, "superblock", meta_sb_json(&m));
			json_object_object_add(o, "recovery",
					       meta_report_json(&rep));
			json_object_object_add(o, "pending_recovery",
				json_object_new_boolean(report_pending(&rep)));
			json_object_object_add(o, "result",
				json_object_new_string(rep.corrupt_tags ?
						       "errors" : "clean"));
		}
		goto out;
	}

	if (!rep.corrupt_tags && !report_pending(&rep)) {
		r = FR_EXIT_OK;
		if (!json) {
			print_report(path, &m, &rep, false);
			printf("result:         clean, nothing to repair\n");
		}
	} else {
		r = meta_recover(&m, FR_RECOVER_REPAIR, &rep);
		if (r || image_sync(&im)) {
			if (r)
				fr_err("%s: %s", path, m.why);
			r = FR_EXIT_OPERATIONAL;
			goto out;
		}
		if (meta_recover(&m, FR_RECOVER_CHECK, &after) ||
		    after.corrupt_tags || report_pending(&after)) {
			fr_err("%s: still inconsistent after repair (please report this as a bug)",
			       path);
			r = FR_EXIT_UNCORRECTED;
		} else {
			r = FR_EXIT_CORRECTED;
		}
		if (!json) {
			print_report(path, &m, &rep, true);
			if (r == FR_EXIT_CORRECTED)
				printf("result:         repaired%s\n",
				       rep.corrupt_tags ?
				       " (the data of the cleared tags is lost)" :
				       "");
		}
	}
	if (json) {
		json_object_object_add(o, "superblock", meta_sb_json(&m));
		json_object_object_add(o, "recovery", meta_report_json(&rep));
		json_object_object_add(o, "result",
			json_object_new_string(r == FR_EXIT_OK ? "clean" :
					       r == FR_EXIT_CORRECTED ?
					       "repaired" : "errors"));
	}
out:
	if (o) {
		json_object_object_add(o, "exit_code", json_object_new_int(r));
		json_print(o);
		json_object_put(o);
	}
	meta_close(&m);
	image_close(&im);
	return r;
}

int cmd_check(int argc, char **argv)
{
	return check_common(argc, argv, false);
}

int cmd_repair(int argc, char **argv)
{
	return check_common(argc, argv, true);
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "tags", no_argument, NULL, 't' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool json = false, tags = false, force = false;
	struct fr_recovery_report rep;
	struct tag_counts tc;
	struct json_object *o;
	struct fr_image im;
	struct fr_meta m;
	const char *path;
	int c, r;

	while ((c = verb_getopt(argc, argv, ":jtfh", opts)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 't':
			tags = true;
			break;
		case 'f':
			force = true;
			break;
		case 'h':
			print_help("dump", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	r = want_one_arg(argc, argv, "the PM device or image", &path);
	if (r)
		return r;
	r = open_meta(path, IMG_EXCL | (force ? IMG_FORCE : 0), &im, &m, false);
	if (r) {
		meta_close(&m);
		image_close(&im);
		return r;
	}
	meta_count_tags(&m, &tc);
	if (meta_recover(&m, FR_RECOVER_CHECK, &rep)) {
		fr_err("%s: %s", path, m.why);
		r = FR_EXIT_OPERATIONAL;
		goto out;
	}
	if (json) {
		o = json_object_new_object();
		json_object_object_add(o, "device", json_object_new_string(path));
		json_object_object_add(o, "superblock", meta_sb_json(&m));
		json_object_object_add(o, "tags", meta_counts_json(&tc));
		json_object_object_add(o, "recovery", meta_report_json(&rep));
		if (tags)
			json_object_object_add(o, "tag_list", meta_tags_json(&m));
		json_print(o);
		json_object_put(o);
	} else {
		printf("%s: dm-fr PM\n", path);
		meta_print_sb(stdout, &m);
		printf("tags:           %llu free, %llu with V set: %llu N, %llu dirty, %llu incomplete, %llu unknown flags, %llu suspect, %llu unreadable\n",
		       (unsigned long long)tc.free,
		       (unsigned long long)tc.flagged_valid,
		       (unsigned long long)tc.flag_new,
		       (unsigned long long)tc.flag_dirty,
		       (unsigned long long)tc.flag_incomplete,
		       (unsigned long long)tc.unknown_flags,
		       (unsigned long long)tc.suspect,
		       (unsigned long long)tc.unreadable);
		printf("after recovery: %llu valid, %llu dirty, %llu corrupt\n",
		       (unsigned long long)rep.valid,
		       (unsigned long long)rep.dirty,
		       (unsigned long long)rep.corrupt_tags);
		if (tags) {
			struct json_object *a = meta_tags_json(&m);
			size_t i, n = json_object_array_length(a);

			printf("%10s %10s %16s %-5s %10s %18s %s\n", "chunk",
			       "slot", "key", "flags", "seq", "sectors",
			       "problem");
			for (i = 0; i < n; i++) {
				struct json_object *t = json_object_array_get_idx(a, i), *v;

				printf("%10s %10s",
				       json_object_get_string(json_object_object_get(t, "chunk")),
				       json_object_get_string(json_object_object_get(t, "slot")));
				if (json_object_object_get_ex(t, "key", &v))
					printf(" %16s %-5s %10s %18s",
					       json_object_get_string(v),
					       json_object_get_string(json_object_object_get(t, "flags")),
					       json_object_get_string(json_object_object_get(t, "seq")),
					       json_object_get_string(json_object_object_get(t, "sectors")));
				if (json_object_object_get_ex(t, "problem", &v))
					printf(" %s", json_object_get_string(v));
				putchar('\n');
			}
			json_object_put(a);
		}
	}
	r = FR_EXIT_OK;
out:
	meta_close(&m);
	image_close(&im);
	return r;
}

/*
 * probe's exit codes are fsck's, but for its own "no dm-fr superblock" (2):
 * udev runs it on every device, and most are not PMs.
 */
static int probe_exit(enum sb_state s)
{
	return s == SB_NOT_FR ? FR_EXIT_NOTFOUND : sb_state_exit(s);
}

/* Why a device is not reported, for --verbose, as probe has said it. */
static void probe_explain(const char *path, const struct sb_info *si)
{
	switch (si->state) {
	case SB_NOT_FR:
		fprintf(stderr, "frctl probe: %s: no dm-fr superblock\n", path);
		break;
	case SB_UNSUPPORTED:
		fprintf(stderr, "frctl probe: %s: %s: %s\n", path,
			sb_state_text(si->state), si->why);
		break;
	default:
		fprintf(stderr, "frctl probe: %s: %s%s\n", path, si->why,
			sb_state_hint(si->state));
		break;
	}
}

static void probe_print(const struct sb_info *si)
{
	char enc[FR_ORIGIN_ID_LEN * 4 + 8], us[37];

	udev_encode(si->origin_id, enc, sizeof(enc));
	uuid_unparse_lower(si->uuid, us);
	printf("FR_SUPERBLOCK=1\n");
	printf("FR_VERSION=%u\n", si->version);
	printf("FR_UUID=%s\n", us);
	printf("FR_UUID_HEX=%s\n", si->uuid_hex);
	printf("FR_ORIGIN_ID=%s\n", enc);
	printf("FR_ORIGIN_SECTORS=%llu\n",
	       (unsigned long long)si->geo.origin_sectors);
	printf("FR_CHUNK_SIZE=%llu\n",
	       (unsigned long long)si->geo.chunk_sectors << FR_SECTOR_SHIFT);
	printf("FR_NR_CHUNKS=%llu\n", (unsigned long long)si->geo.nr_chunks);
	printf("FR_PM_BYTES=%llu\n", (unsigned long long)si->geo.pm_bytes);
}

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool verbose = false;
	struct sb_info si;
	const char *path;
	int c, r;

	while ((c = verb_getopt(argc, argv, ":vh", opts)) != -1) {
		switch (c) {
		case 'v':
			verbose = true;
			break;
		case 'h':
			print_help("probe", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	r = want_one_arg(argc, argv, "the device", &path);
	if (r)
		return r;
	if (sb_read(path, &si) != SB_OK) {
		if (verbose)
			probe_explain(path, &si);
		return probe_exit(si.state);
	}
	probe_print(&si);
	return FR_EXIT_OK;
}
