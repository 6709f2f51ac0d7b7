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
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < FR_NR_TUNABLES; i++)
		t->tun[i] = -1;
}

void table_opts_string(const struct table_opts *t, char *out, size_t len)
{
	char args[400] = "";
	int i, n = 0;
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
	for (i = 0; i < FR_NR_TUNABLES; i++) {
		if (t->tun[i] < 0)
			continue;
		ADD(" %s %lld", frctl_tunables[i].name, t->tun[i]);
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
	const struct frctl_tunable *tn;
	int id;
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
	id = tunable_find(key);
	if (id < 0 || strchr(key, '-'))
		return -EINVAL;
	tn = &frctl_tunables[id];
	if (v < tn->min || v > tn->max)
		return -EINVAL;
	t->tun[id] = (long long)v;
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
	/*
	 * A larger origin grew (lvextend) before a resize was made, or was
	 * to shrink after one: the device takes the PM's length, and frctl
	 * resize grows it. A smaller one lost what lay past its end.
	 */
	if (origin_bytes >> FR_SECTOR_SHIFT < g->origin_sectors) {
		fr_err("%s caches an origin of %llu sectors; %s has only %llu (shrunk under the cache?)",
		       pm, (unsigned long long)g->origin_sectors, origin,
		       (unsigned long long)(origin_bytes >> FR_SECTOR_SHIFT));
		return FR_EXIT_OPERATIONAL;
	}
	if (origin_bytes >> FR_SECTOR_SHIFT > g->origin_sectors && !quiet)
		fr_warn("%s has %llu sectors, %s caches %llu of them: frctl resize %s to use the rest",
			origin,
			(unsigned long long)(origin_bytes >> FR_SECTOR_SHIFT),
			pm, (unsigned long long)g->origin_sectors, name);
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

/* The geometry options given to create --format, as format takes them. */
static void print_geo_opts(const struct geo_opts *go, const char *origin_id,
			   const u8 *uuid)
{
	char us[37];

	if (go->chunk_bytes)
		printf(" --chunk-size %llu", (unsigned long long)go->chunk_bytes);
	if (go->region_bytes)
		printf(" --region-size %llu",
		       (unsigned long long)go->region_bytes);
	if (go->stride)
		printf(" --stride %llu", (unsigned long long)go->stride);
	if (go->ways)
		printf(" --ways %u", go->ways);
	if (origin_id)
		printf(" --origin-id %s", origin_id);
	if (uuid) {
		uuid_unparse_lower(uuid, us);
		printf(" --uuid %s", us);
	}
}

/* Create's options: these, then one per tunable (TUNABLE_OPT + its id). */
#define TUNABLE_OPT	0x100

int cmd_create(int argc, char **argv)
{
	static const struct option base[] = {
		{ "pm", required_argument, NULL, 'p' },
		{ "origin", required_argument, NULL, 'o' },
		{ "format", no_argument, NULL, 'F' },
		{ "chunk-size", required_argument, NULL, 'C' },
		{ "region-size", required_argument, NULL, 'R' },
		{ "stride", required_argument, NULL, 'S' },
		{ "ways", required_argument, NULL, 'W' },
		{ "origin-id", required_argument, NULL, 'I' },
		{ "uuid", required_argument, NULL, 'U' },
		{ "cleaner", no_argument, NULL, 'c' },
		{ "no-read-fill", no_argument, NULL, 'N' },
		{ "force", no_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
	};
	enum { NR_BASE = sizeof(base) / sizeof(base[0]) };
	static char names[FR_NR_TUNABLES][64];
	struct option opts[NR_BASE + FR_NR_TUNABLES + 1];
	const char *pm = NULL, *origin = NULL, *origin_id = NULL, *name;
	bool format = false, force = false, dry = false, geo = false;
	bool have_uuid = false;
	struct geo_opts go = { 0 };
	struct table_opts to;
	u8 uuid[16], out[16];
	char opt[72];
	u64 v;
	int c, r, i, hi, lo;

	memset(opts, 0, sizeof(opts));
	memcpy(opts, base, sizeof(base));
	for (i = 0; i < FR_NR_TUNABLES; i++) {
		tunable_option(i, names[i], sizeof(names[i]));
		opts[NR_BASE + i] = (struct option){
			names[i], required_argument, NULL, TUNABLE_OPT + i };
	}
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
		case 'W':
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
			if (c < TUNABLE_OPT || c >= TUNABLE_OPT + FR_NR_TUNABLES)
				return FR_EXIT_USAGE;
			i = c - TUNABLE_OPT;
			snprintf(opt, sizeof(opt), "--%s", names[i]);
			if (parse_opt_u64(opt, optarg, frctl_tunables[i].min,
					  frctl_tunables[i].max, &v))
				return FR_EXIT_USAGE;
			to.tun[i] = (long long)v;
			break;
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
		return fr_usage_error("--chunk-size, --region-size, --stride, --ways, --origin-id and --uuid need --format (without it the PM's superblock decides)");
	hi = FR_TUNABLE_high_watermark;
	lo = FR_TUNABLE_low_watermark;
	if (to.tun[hi] >= 0 && to.tun[lo] >= 0 && to.tun[lo] > to.tun[hi])
		return fr_usage_error("--%s %lld is above --%s %lld", names[lo],
				      to.tun[lo], names[hi], to.tun[hi]);
	if (format) {
		if (dry) {
			printf("frctl format --pm %s --origin %s", pm, origin);
			print_geo_opts(&go, origin_id, have_uuid ? uuid : NULL);
			printf("%s\n", force ? " --force" : "");
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
