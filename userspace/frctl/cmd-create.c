// SPDX-License-Identifier: GPL-2.0-only
/*
 * frctl create: a dm-fr device from a formatted PM and its origin, with the
 * table line of docs/target-interface.md; also the table options and the
 * device creation that autoactivate uses.
 */
#include <getopt.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>


#include "frctl.h"

void table_opts_init(struct table_opts *t)
{
	memset(t, 0, sizeof(*t));
	t->wb_period = t->wb_defer = t->high = t->low = t->jobs = -1;
}

static void table_opts_string(const struct table_opts *t, char *out,
			      size_t len)
{
	char args[400] = "";
	int n = 0;
	size_t o = 0;

#define ADD(...) do { o += (size_t)snprintf(args + o, sizeof(args) - o, __VA_ARGS__); } while (0)
	/* First, as the kernel prints them back. */
	if (t->uuid[0]) {
		ADD(" uuid %s", t->uuid);
		n += 2;
	}
	if (t->origin_id[0]) {
		ADD(" origin_id %s", t->origin_id);
		n += 2;
	}
	if (t->wb_period >= 0) {
		ADD(" writeback_period %lld", t->wb_period);
		n += 2;
	}
	if (t->wb_defer >= 0) {
		ADD(" writeback_defer %lld", t->wb_defer);
		n += 2;
	}
	if (t->high >= 0) {
		ADD(" high_watermark %lld", t->high);
		n += 2;
	}
	if (t->low >= 0) {
		ADD(" low_watermark %lld", t->low);
		n += 2;
	}
	if (t->jobs >= 0) {
		ADD(" writeback_jobs %lld", t->jobs);
		n += 2;
	}
	if (t->cleaner) {
		ADD(" cleaner");
		n++;
	}
	if (t->no_read_fill) {
		ADD(" no_read_fill");
		n++;
	}
#undef ADD
	if (n)
		snprintf(out, len, " %d%s", n, args);
	else
		out[0] = 0;
}

/* A table option as "key=value" or "key" (frtab, and create's checks). */
int table_opt_set(struct table_opts *t, const char *key,
			 const char *val)
{
	u64 v;

	if (!strcmp(key, "cleaner") && !val) {
		t->cleaner = true;
		return 0;
	}
	if (!strcmp(key, "no_read_fill") && !val) {
		t->no_read_fill = true;
		return 0;
	}
	if (!val || parse_u64(val, &v))
		return -EINVAL;
	if (!strcmp(key, "writeback_period") && v <= 3600000)
		t->wb_period = (long long)v;
	else if (!strcmp(key, "writeback_defer") && v <= 3600000)
		t->wb_defer = (long long)v;
	else if (!strcmp(key, "high_watermark") && v <= 100)
		t->high = (long long)v;
	else if (!strcmp(key, "low_watermark") && v <= 100)
		t->low = (long long)v;
	else if (!strcmp(key, "writeback_jobs") && v >= 1 && v <= 1024)
		t->jobs = (long long)v;
	else
		return -EINVAL;
	return 0;
}

static int valid_name(const char *name)
{
	if (!*name || strlen(name) >= FRCTL_DM_NAME_LEN || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return fr_usage_error("'%s' is not a valid device name", name);
	return 0;
}

/* The major:minor of a block device, or its path for an image file. */
static int dev_arg(const char *path, char *out, size_t len)
{
	struct stat st;

	if (stat(path, &st)) {
		fr_err("cannot open %s: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISBLK(st.st_mode))
		snprintf(out, len, "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	else
		snprintf(out, len, "%s", path);
	return S_ISBLK(st.st_mode) ? 0 : 1;
}

/* The kernel takes an origin_id of printable characters, no space or '\\'. */
static bool table_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~' || *s == '\\')
			return false;
	return true;
}

/* create's reading of the PM's superblock; 0, or -EINVAL after saying why. */
static int create_read_sb(const char *pm, struct sb_info *si)
{
	switch (sb_read(pm, si)) {
	case SB_OK:
		return 0;
	case SB_NOT_FOUND:
	case SB_IO_ERROR:
		fr_err("cannot read %s: %s", pm, si->why);
		break;
	case SB_NOT_FR:
		fr_err("%s has no dm-fr superblock: run frctl format first (or create --format)",
		       pm);
		break;
	case SB_UNSUPPORTED:
		fr_err("%s: %s: %s", pm, sb_state_text(si->state), si->why);
		break;
	case SB_TRUNCATED:
		fr_err("%s: %s%s", pm, si->why, sb_state_hint(si->state));
		break;
	default:
		fr_err("%s: %s (frctl check %s tells more)", pm, si->why, pm);
		break;
	}
	return -EINVAL;
}

/*
 * What create and autoactivate share: check that origin is the PM's origin,
 * build the table and create the device. 0 or an exit code. The table binds
 * the PM's uuid always, and the recorded origin id once it is checked here
 * (or --force overrides): the kernel then refuses another PM, and does not
 * second-guess the origin (docs/target-interface.md).
 */
int create_device(const char *name, const char *pm, const char *origin,
			 const struct table_opts *opts_in, bool force, bool dry,
			 bool quiet)
{
	char pmarg[PATH_MAX], orarg[PATH_MAX], opts[500], params[PATH_MAX * 2 + 520];
	struct table_opts tbl = *opts_in, *to = &tbl;
	char dm_uuid[40], recorded[PATH_MAX];
	char other[FRCTL_DM_NAME_LEN];
	const struct fr_geometry *g;
	const char *id;		/* the origin id the PM records */
	struct sb_info si;
	u64 origin_bytes;
	int n, fd;
	bool blk;
	dev_t rdev, dmdev;

	if (create_read_sb(pm, &si))
		return FR_EXIT_OPERATIONAL;
	g = &si.geo;
	id = si.origin_id;
	snprintf(dm_uuid, sizeof(dm_uuid), FR_UUID_PREFIX "%s", si.uuid_hex);
	snprintf(to->uuid, sizeof(to->uuid), "%s", si.uuid_hex);

	fd = open(origin, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fr_err("cannot open origin %s: %s", origin, strerror(errno));
		return FR_EXIT_OPERATIONAL;
	}
	if (dev_size(fd, origin, &origin_bytes, &blk, &rdev)) {
		close(fd);
		return FR_EXIT_OPERATIONAL;
	}
	close(fd);
	if (origin_bytes >> FR_SECTOR_SHIFT != g->origin_sectors) {
		fr_err("%s was formatted for an origin of %llu sectors; %s has %llu",
		       pm, (unsigned long long)g->origin_sectors, origin,
		       (unsigned long long)(origin_bytes >> FR_SECTOR_SHIFT));
		return FR_EXIT_OPERATIONAL;
	}
	if (!origin_resolve_id(id, recorded, sizeof(recorded))) {
		if (!same_device(recorded, origin)) {
			if (!force) {
				fr_err("%s was formatted for origin %s (%s), not %s; --force to use it anyway",
				       pm, id, recorded, origin);
				return FR_EXIT_OPERATIONAL;
			}
			fr_warn("%s was formatted for origin %s, using %s as told",
				pm, id, origin);
		}
		snprintf(to->origin_id, sizeof(to->origin_id), "%s", id);
	} else {
		if (!quiet)
			fr_warn("cannot find the recorded origin %s to compare it with %s",
				id[0] ? id : "(none)", origin);
		if (force)
			snprintf(to->origin_id, sizeof(to->origin_id), "%s",
				 id);
	}
	/* An id the table cannot carry is left to the kernel's own check. */
	if (!table_word(to->origin_id))
		to->origin_id[0] = 0;

	if (dev_arg(origin, orarg, sizeof(orarg)) < 0 ||
	    dev_arg(pm, pmarg, sizeof(pmarg)) < 0)
		return FR_EXIT_OPERATIONAL;
	table_opts_string(to, opts, sizeof(opts));
	snprintf(params, sizeof(params), "%s %s%s", orarg, pmarg, opts);
	if (dry) {
		printf("dmsetup create %s --uuid %s --table '0 %llu %s %s'\n",
		       name, dm_uuid, (unsigned long long)g->origin_sectors,
		       FR_TARGET, params);
		return 0;
	}
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;
	if (dmw_uuid_in_use(dm_uuid, other, sizeof(other))) {
		fr_err("the device of this PM exists already: %s (uuid %s)",
		       other, dm_uuid);
		return FR_EXIT_OPERATIONAL;
	}
	if (dmw_create(name, dm_uuid, g->origin_sectors, FR_TARGET, params,
		       &dmdev)) {
		if (!dmw_target_registered(FR_TARGET))
			fr_err("creating %s failed: the kernel has no fr target (is dm-fr.ko installed? modprobe dm-fr)",
			       name);
		else
			fr_err("creating %s failed: the fr target refused the table '%s' (the kernel log says why)",
			       name, params);
		return FR_EXIT_OPERATIONAL;
	}
	/* The fr device holds the origin now; it is known from now on. */
	origins_record(si.uuid_hex, id);
	guard_release_pm(si.uuid_hex);
	n = dmdev ? dev_set_nonrot(dmdev) : -ENODEV;
	if (n)
		fr_warn("%s: cannot mark it not rotational (%s): file systems may tune themselves for a disk",
			name, strerror(-n));
	if (!quiet)
		printf("%s: created (uuid %s, %llu sectors)\n", name, dm_uuid,
		       (unsigned long long)g->origin_sectors);
	return 0;
}

int cmd_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pm", required_argument, NULL, 'p' },
		{ "origin", required_argument, NULL, 'o' },
		{ "format", no_argument, NULL, 'F' },
		{ "chunk-size", required_argument, NULL, 'C' },
		{ "region-size", required_argument, NULL, 'R' },
		{ "stride", required_argument, NULL, 'S' },
		{ "origin-id", required_argument, NULL, 'I' },
		{ "uuid", required_argument, NULL, 'U' },
		{ "writeback-period", required_argument, NULL, 'P' },
		{ "writeback-defer", required_argument, NULL, 'D' },
		{ "high-watermark", required_argument, NULL, 'H' },
		{ "low-watermark", required_argument, NULL, 'L' },
		{ "writeback-jobs", required_argument, NULL, 'J' },
		{ "cleaner", no_argument, NULL, 'c' },
		{ "no-read-fill", no_argument, NULL, 'N' },
		{ "force", no_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *pm = NULL, *origin = NULL, *origin_id = NULL, *name;
	bool format = false, force = false, dry = false, geo = false;
	bool have_uuid = false;
	struct geo_opts go = { 0 };
	struct table_opts to;
	u8 uuid[16], out[16];
	u64 v;
	int c, r;

	table_opts_init(&to);
	while ((c = verb_getopt(argc, argv, ":fnh", opts)) != -1) {
		switch (c) {
		case 'p':
			pm = optarg;
			break;
		case 'o':
			origin = optarg;
			break;
		case 'F':
			format = true;
			break;
		case 'C':
		case 'R':
		case 'S':
			if (geo_opts_parse(&go, c, optarg))
				return FR_EXIT_USAGE;
			geo = true;
			break;
		case 'I':
			origin_id = optarg;
			geo = true;
			break;
		case 'U':
			if (uuid_parse_str(optarg, uuid))
				return fr_usage_error("--uuid: '%s' is not a uuid",
						      optarg);
			have_uuid = true;
			geo = true;
			break;
		case 'P':
			if (parse_opt_u64("--writeback-period", optarg, 0,
					  3600000, &v))
				return FR_EXIT_USAGE;
			to.wb_period = (long long)v;
			break;
		case 'D':
			if (parse_opt_u64("--writeback-defer", optarg, 0,
					  3600000, &v))
				return FR_EXIT_USAGE;
			to.wb_defer = (long long)v;
			break;
		case 'H':
			if (parse_opt_u64("--high-watermark", optarg, 0, 100, &v))
				return FR_EXIT_USAGE;
			to.high = (long long)v;
			break;
		case 'L':
			if (parse_opt_u64("--low-watermark", optarg, 0, 100, &v))
				return FR_EXIT_USAGE;
			to.low = (long long)v;
			break;
		case 'J':
			if (parse_opt_u64("--writeback-jobs", optarg, 1, 1024, &v))
				return FR_EXIT_USAGE;
			to.jobs = (long long)v;
			break;
		case 'c':
			to.cleaner = true;
			break;
		case 'N':
			to.no_read_fill = true;
			break;
		case 'f':
			force = true;
			break;
		case 'n':
			dry = true;
			break;
		case 'h':
			print_help("create", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	r = 0;
	if (optind >= argc)
		return fr_usage_error("missing the device NAME");
	if (optind + 1 < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind + 1]);
	name = argv[optind];
	if (valid_name(name))
		return FR_EXIT_USAGE;
	if (!pm)
		return fr_usage_error("--pm is required");
	if (!origin)
		return fr_usage_error("--origin is required");
	if (geo && !format)
		return fr_usage_error("--chunk-size, --region-size, --stride, --origin-id and --uuid need --format (without it the PM's superblock decides)");
	if (to.high >= 0 && to.low >= 0 && to.low > to.high)
		return fr_usage_error("--low-watermark %lld is above --high-watermark %lld",
				      to.low, to.high);
	if (format) {
		if (dry) {
			printf("frctl format --pm %s --origin %s%s\n", pm, origin,
			       force ? " --force" : "");
			printf("(then, with the uuid the format picks:)\n");
			printf("dmsetup create %s --uuid FR-<uuid> --table '0 <origin sectors> fr %s %s ...'\n",
			       name, origin, pm);
			return 0;
		}
		r = format_pm(pm, origin, origin_id, 0, &go,
			      have_uuid ? uuid : NULL, force, false, false, out);
		if (r)
			return r;
	}
	return create_device(name, pm, origin, &to, force, dry, false);
}
