// SPDX-License-Identifier: GPL-2.0-only
/*
 * The verbs that talk to device-mapper through libdevmapper: create, remove,
 * status, flush, autoactivate. The table line, status fields and messages
 * are those of docs/target-interface.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "frctl.h"

#define FR_TARGET	"fr"
#define FR_UUID_PREFIX	"FR-"

/* One dm-fr device as the kernel sees it. */
struct fr_dev {
	char name[FRCTL_DM_NAME_LEN];
	char uuid[FRCTL_DM_UUID_LEN];
	bool exists;
	bool is_fr;		/* one target, of type fr */
	u64 length;		/* sectors */
	struct fr_status st;
	struct fr_table table;
	int parse_error;
};

/* 0 and fills d (d->is_fr tells whether it is ours), -ENOENT, or -EIO. */
static int fr_dev_get(const char *name, struct fr_dev *d)
{
	char params[4096], target[64];
	int n, r;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	r = dmw_uuid_of(name, d->uuid, sizeof(d->uuid));
	if (r)
		return r;
	d->exists = true;
	r = dmw_query(name, DMW_STATUS, params, sizeof(params),
		     &d->length, target, sizeof(target), &n);
	if (r)
		return r;
	if (n != 1 || strcmp(target, FR_TARGET))
		return 0;
	d->is_fr = true;
	d->parse_error = status_parse(params, &d->st);
	if (!dmw_query(name, DMW_TABLE, params, sizeof(params),
		      &d->length, target, sizeof(target), &n))
		table_parse(params, &d->table);
	return 0;
}

static int get_fr_dev(const char *name, struct fr_dev *d)
{
	int r = fr_dev_get(name, d);

	if (r == -ENOENT) {
		fr_err("no device-mapper device named '%s'", name);
		return FR_EXIT_OPERATIONAL;
	}
	if (r)
		return FR_EXIT_OPERATIONAL;
	if (!d->is_fr) {
		fr_err("'%s' is not a dm-fr device (its table is not one fr target)",
		       name);
		return FR_EXIT_OPERATIONAL;
	}
	if (d->parse_error) {
		fr_err("'%s': cannot parse the status of its fr target (frctl and the module do not match?)",
		       name);
		return FR_EXIT_OPERATIONAL;
	}
	return 0;
}

/* Names of every dm-fr device, in device-mapper's list order. */
static int list_fr_devs(char ***names, int *count)
{
	struct fr_dev d;
	char **all;
	int i, n, k = 0;

	if (dmw_list(&all, &n))
		return -EIO;
	*names = xcalloc((size_t)n + 1, sizeof(char *));
	for (i = 0; i < n; i++) {
		if (all[i] && !fr_dev_get(all[i], &d) && d.is_fr)
			(*names)[k++] = all[i];
		else
			free(all[i]);
	}
	free(all);
	*count = k;
	return 0;
}

/* ---- create ---------------------------------------------------------- */

struct table_opts {
	long long wb_period, wb_defer, high, low, jobs;	/* -1: kernel default */
	bool cleaner, no_read_fill;
	/* The PM's identity, from its superblock: "" leaves it out. */
	char uuid[33];				/* 32 hex digits */
	char origin_id[FR_ORIGIN_ID_LEN];	/* when checked (or --force) */
};

static void table_opts_init(struct table_opts *t)
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
static int table_opt_set(struct table_opts *t, const char *key,
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
static int create_device(const char *name, const char *pm, const char *origin,
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

/* ---- remove, flush --------------------------------------------------- */

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void draw_bar(const char *name, u64 start, u64 now, u64 chunk)
{
	char b1[32];
	int width = 30, fill, i;
	double done = start ? (double)(start - (now < start ? now : start)) /
			      (double)start : 1.0;

	fill = (int)(done * width + 0.5);
	printf("\rflushing %s: [", name);
	for (i = 0; i < width; i++)
		putchar(i < fill ? '#' : '-');
	printf("] %3d%%  %s dirty   ", (int)(done * 100 + 0.5),
	       fmt_bytes(b1, sizeof(b1), now * chunk));
	fflush(stdout);
}

/* Send "flush" and, on a terminal, draw the dirty data draining. */
static int flush_device(const char *name, bool quiet)
{
	struct fr_dev d;
	u64 start, chunk;
	pid_t pid;
	int status, r;

	r = get_fr_dev(name, &d);
	if (r)
		return r;
	start = d.st.chunks_dirty;
	chunk = d.st.chunk_sectors << FR_SECTOR_SHIFT;
	if (quiet || !isatty(STDOUT_FILENO))
		return dmw_message(name, "flush") ? FR_EXIT_OPERATIONAL : 0;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fr_err("fork: %s", strerror(errno));
		return FR_EXIT_OPERATIONAL;
	}
	if (!pid)
		_exit(dmw_message(name, "flush") ? FR_EXIT_OPERATIONAL : 0);
	signal(SIGINT, on_sigint);
	for (;;) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };

		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			break;
		if (!fr_dev_get(name, &d) && d.is_fr && !d.parse_error)
			draw_bar(name, start, d.st.chunks_dirty, chunk);
		if (interrupted) {
			printf("\n");
			fr_err("interrupted; the kernel goes on flushing %s in the background",
			       name);
			return FR_EXIT_OPERATIONAL;
		}
		nanosleep(&ts, NULL);
	}
	if (!fr_dev_get(name, &d) && d.is_fr && !d.parse_error)
		draw_bar(name, start, d.st.chunks_dirty, chunk);
	printf("\n");
	if (r != pid || !WIFEXITED(status))
		return FR_EXIT_OPERATIONAL;
	return WEXITSTATUS(status);
}

int cmd_flush(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool quiet = false;
	int c;

	while ((c = verb_getopt(argc, argv, ":qh", opts)) != -1) {
		switch (c) {
		case 'q':
			quiet = true;
			break;
		case 'h':
			print_help("flush", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return fr_usage_error("missing the device NAME");
	if (optind + 1 < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind + 1]);
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;
	return flush_device(argv[optind], quiet);
}

int cmd_remove(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "flush", no_argument, NULL, 'F' },
		{ "retry", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool flush = false, retry = false;
	const char *name;
	struct fr_dev d;
	int c, r;

	while ((c = verb_getopt(argc, argv, ":h", opts)) != -1) {
		switch (c) {
		case 'F':
			flush = true;
			break;
		case 'r':
			retry = true;
			break;
		case 'h':
			print_help("remove", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return fr_usage_error("missing the device NAME");
	if (optind + 1 < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind + 1]);
	name = argv[optind];
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;
	r = get_fr_dev(name, &d);
	if (r)
		return r;
	if (flush) {
		/* New writes go through; then drain what is dirty. */
		if (dmw_message(name, "cleaner on"))
			return FR_EXIT_OPERATIONAL;
		r = flush_device(name, false);
		if (r)
			return r;
		r = get_fr_dev(name, &d);
		if (r)
			return r;
		if (d.st.chunks_dirty) {
			fr_err("%s still has %llu dirty chunks after the flush; not removed",
			       name, (unsigned long long)d.st.chunks_dirty);
			return FR_EXIT_OPERATIONAL;
		}
	}
	if (dmw_remove(name, retry)) {
		fr_err("removing %s failed (in use? mounted?)", name);
		return FR_EXIT_OPERATIONAL;
	}
	if (!flush && d.st.chunks_dirty) {
		/* The bare origin is now a stale copy: not to be mounted. */
		if (!strncmp(d.uuid, FR_UUID_PREFIX, strlen(FR_UUID_PREFIX)))
			guard_hold_pm(d.uuid + strlen(FR_UUID_PREFIX),
				      d.table.origin);
		printf("%s: removed; %llu dirty chunks stay on the PM until it is created again (the origin is held: frctl(8), GUARD)\n",
		       name, (unsigned long long)d.st.chunks_dirty);
	}
	else
		printf("%s: removed%s\n", name,
		       flush ? "; the origin holds all the data" : "");
	return 0;
}

/* ---- status ---------------------------------------------------------- */

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
	signal(SIGINT, on_sigint);
	for (k = 0; !interrupted; k++) {
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

/* ---- autoactivate ---------------------------------------------------- */

const char *frctl_run_dir(void)
{
	const char *d = getenv("FRCTL_RUNDIR");

	return d && *d ? d : "/run/frctl";
}

static const char *frtab_path(void)
{
	const char *p = getenv("FRCTL_FRTAB");

	return p && *p ? p : "/etc/frctl/frtab";
}

/*
 * Look the uuid up in frtab: "NAME UUID [opt,opt=val,...]". Returns 1 and
 * fills name/to when found, 0 when not, -1 when the line says noauto.
 */
static int frtab_lookup(const u8 uuid[16], char *name, size_t nlen,
			struct table_opts *to)
{
	char line[1024], lname[FRCTL_DM_NAME_LEN], luuid[64], lopts[900];
	FILE *f = fopen(frtab_path(), "r");
	int found = 0, n;
	u8 u[16];

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p, *tok, *save = NULL;

		if (line[0] == '#')
			continue;
		lopts[0] = 0;
		n = sscanf(line, "%127s %63s %899s", lname, luuid, lopts);
		if (n < 2 || uuid_parse_str(luuid, u) || memcmp(u, uuid, 16))
			continue;
		found = 1;
		snprintf(name, nlen, "%s", lname);
		for (tok = strtok_r(lopts, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			if (!strcmp(tok, "noauto") || !strcmp(tok, "defaults")) {
				if (tok[0] == 'n')
					found = -1;
				continue;
			}
			p = strchr(tok, '=');
			if (p)
				*p++ = 0;
			if (table_opt_set(to, tok, p))
				fr_warn("%s: ignoring unknown option '%s'",
					frtab_path(), tok);
		}
	}
	fclose(f);
	return found;
}

static void pending_path(const char *hex, char *out, size_t len)
{
	snprintf(out, len, "%s/pending/%s", frctl_run_dir(), hex);
}

static void pending_remember(const char *hex, const char *pm)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s", frctl_run_dir());
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/pending", frctl_run_dir());
	mkdir(p, 0755);
	pending_path(hex, p, sizeof(p));
	f = fopen(p, "w");
	if (!f) {
		fr_warn("cannot record %s: %s", p, strerror(errno));
		return;
	}
	fprintf(f, "%s\n", pm);
	fclose(f);
}

static void pending_forget(const char *hex)
{
	char p[PATH_MAX];

	pending_path(hex, p, sizeof(p));
	unlink(p);
	snprintf(p, sizeof(p), "%s/pending", frctl_run_dir());
	rmdir(p);	/* only when empty: the udev rule tests for it */
}

/*
 * The superblock of a PM to activate: 0, or -ENOENT when there is none (any
 * more), or -EUCLEAN when it is there but unusable, which is said here:
 * neither is an error of autoactivate, and neither is waited for.
 */
static int activate_read_sb(const char *pm, struct sb_info *si)
{
	switch (sb_read(pm, si)) {
	case SB_OK:
		return 0;
	case SB_NOT_FOUND:
	case SB_NOT_FR:
		return -ENOENT;
	default:
		fr_warn("%s: %s: %s%s; not activating", pm,
			sb_state_text(si->state), si->why,
			sb_state_hint(si->state));
		return -EUCLEAN;
	}
}

/* activate_pm() found nothing to activate: a pending entry is dropped. */
static bool nothing_to_activate(int r)
{
	return r == -ENOENT || r == -EUCLEAN;
}

static int activate_pm(const char *pm)
{
	char dm_uuid[40], name[FRCTL_DM_NAME_LEN];
	char other[FRCTL_DM_NAME_LEN], origin[PATH_MAX];
	const char *id, *hex;
	struct table_opts to;
	struct sb_info si;
	int r;

	r = activate_read_sb(pm, &si);
	if (r)
		return r;
	id = si.origin_id;
	hex = si.uuid_hex;
	snprintf(dm_uuid, sizeof(dm_uuid), FR_UUID_PREFIX "%s", hex);
	table_opts_init(&to);
	r = frtab_lookup(si.uuid, name, sizeof(name), &to);
	if (r < 0) {
		printf("%s: noauto in %s, not activating\n", pm, frtab_path());
		pending_forget(hex);
		return 0;
	}
	if (!r)
		snprintf(name, sizeof(name), "fr-%.8s", hex);
	if (dmw_uuid_in_use(dm_uuid, other, sizeof(other))) {
		printf("%s: active already as %s\n", pm, other);
		pending_forget(hex);
		return 0;
	}
	if (origin_resolve_id(id, origin, sizeof(origin))) {
		printf("%s: waiting for origin %s\n", pm, id);
		pending_remember(hex, pm);
		return 0;
	}
	r = create_device(name, pm, origin, &to, false, false, true);
	if (!r) {
		printf("%s: activated %s on origin %s\n", pm, name, origin);
		pending_forget(hex);
	}
	return r;
}

int cmd_autoactivate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pm", required_argument, NULL, 'p' },
		{ "pending", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char lock[PATH_MAX], p[PATH_MAX], pm[PATH_MAX];
	const char *pmdev = NULL;
	bool pending = false;
	struct dirent *de;
	int c, fd, r = 0, rr;
	DIR *d;

	while ((c = verb_getopt(argc, argv, ":h", opts)) != -1) {
		switch (c) {
		case 'p':
			pmdev = optarg;
			break;
		case 'P':
			pending = true;
			break;
		case 'h':
			print_help("autoactivate", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind]);
	if (!pmdev == !pending)
		return fr_usage_error("give either --pm DEV or --pending");
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;

	/* One activation at a time: udev may run several of us at once. */
	mkdir(frctl_run_dir(), 0755);
	snprintf(lock, sizeof(lock), "%s/lock", frctl_run_dir());
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		fr_err("cannot lock %s: %s", lock, strerror(errno));
		return FR_EXIT_OPERATIONAL;
	}
	if (pmdev) {
		r = activate_pm(pmdev);
		if (r == -ENOENT)
			printf("%s: no dm-fr superblock\n", pmdev);
		if (nothing_to_activate(r))
			r = 0;
		close(fd);
		return r;
	}
	snprintf(p, sizeof(p), "%s/pending", frctl_run_dir());
	d = opendir(p);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		char file[PATH_MAX + 300];
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", p, de->d_name);
		f = fopen(file, "r");
		if (!f)
			continue;
		if (!fgets(pm, sizeof(pm), f))
			pm[0] = 0;
		fclose(f);
		pm[strcspn(pm, "\n")] = 0;
		rr = pm[0] ? activate_pm(pm) : -ENOENT;
		if (nothing_to_activate(rr)) {
			/* The PM went away or lost its superblock. */
			unlink(file);
			rr = 0;
		}
		if (rr && !r)
			r = rr;
	}
	closedir(d);
	rmdir(p);
	close(fd);
	return r;
}
