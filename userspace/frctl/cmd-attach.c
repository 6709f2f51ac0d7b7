// SPDX-License-Identifier: GPL-2.0-only
/*
 * frctl attach and detach: put a PM in front of a device-mapper device that
 * is in use, and take it away again, without unmounting anything.
 *
 * Both swap the device's table, as lvm2 does for dm-writecache: the device
 * keeps its name and its dev_t (what a mounted file system holds); only what
 * device-mapper maps beneath it changes.
 *
 * attach: a hidden device, NAME-frorigin (DM UUID FRORIGIN-<PM uuid>), takes
 * NAME's table and becomes the origin; the PM is formatted for it; NAME is
 * loaded with an fr table over it, suspended (the I/O in flight completes,
 * new I/O waits) and resumed.
 *
 * detach: cleaner mode (new data is written through, the dirty data
 * drains) until little is dirty, watched and interruptible; then NAME is
 * loaded with what lay under the cache (the hidden device's table, or a
 * linear map of the origin for a device frctl create made) and suspended:
 * in cleaner mode the target writes back the rest before the suspend
 * returns (docs/target-interface.md). Only if its status then shows
 * nothing dirty is NAME resumed with the new table; else the new table is
 * cleared and the cache resumed as it was. The PM's superblock is then
 * wiped: once the origin is written alone, the PM's clean copies are stale.
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "frctl.h"

#define HIDDEN_SUFFIX	"-frorigin"
#define HIDDEN_PREFIX	"FRORIGIN-"
/* Detach swaps the table once no more than this is dirty (bytes). */
#define DETACH_SWAP_BYTES	(4ULL << 20)
/* A suspend that finds this much left dirty is tried again, this often. */
#define DETACH_SWAP_TRIES	5
/* An origin that fails writebacks this long (s) ends a detach. */
#define DETACH_FAILING_S	30

/*
 * One frctl at a time works on a device: a lock file per device name in
 * frctl's run directory, held until exit. -1 after saying why.
 */
static int lock_file(const char *name, bool quiet)
{
	char path[PATH_MAX];
	int fd;

	mkdir(frctl_run_dir(), 0755);
	snprintf(path, sizeof(path), "%s/%s.lock", frctl_run_dir(), name);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fr_err("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (!quiet)
			fr_err("another frctl is working on %s; try again when it is done",
			       name);
		close(fd);
		return -1;
	}
	return fd;
}

int device_lock(const char *name)
{
	return lock_file(name, false);
}

static int device_lock_quiet(const char *name)
{
	return lock_file(name, true);
}

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void catch_stop(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The dm device that major:minor is, if it is one: 0 and its name. */
static int dm_name_of(const char *majmin, char *name, size_t len,
		      char *uuid, size_t ulen)
{
	unsigned int ma, mi;

	if (sscanf(majmin, "%u:%u", &ma, &mi) != 2)
		return -EINVAL;
	if (read_dm_attr(makedev(ma, mi), "name", name, len))
		return -ENOENT;
	if (read_dm_attr(makedev(ma, mi), "uuid", uuid, ulen))
		uuid[0] = 0;
	return 0;
}

static bool is_hidden_origin(const char *uuid)
{
	return !strncmp(uuid, HIDDEN_PREFIX, strlen(HIDDEN_PREFIX));
}

/* --- attach --- */

static int attach_checks(const char *name, const char *pm,
			 struct dmw_info *di)
{
	struct dmw_target *t;
	struct stat st;
	char uuid[FRCTL_DM_UUID_LEN];
	int n, r, i;

	r = dmw_info(name, di);
	if (r == -ENOENT) {
		fr_err("no device-mapper device named '%s' (attach needs one: frctl(8), ATTACH)",
		       name);
		return FR_EXIT_OPERATIONAL;
	}
	if (r)
		return FR_EXIT_OPERATIONAL;
	if (!di->live_table || di->suspended) {
		fr_err("%s is %s: resume it first", name,
		       di->live_table ? "suspended" : "not active (no table)");
		return FR_EXIT_OPERATIONAL;
	}
	if (di->inactive_table) {
		fr_err("%s has an inactive table loaded (another tool at work?); clear it first (dmsetup clear %s)",
		       name, name);
		return FR_EXIT_OPERATIONAL;
	}
	if (di->read_only) {
		fr_err("%s is read-only: a cache in front of it has nothing to do",
		       name);
		return FR_EXIT_OPERATIONAL;
	}
	if (dmw_table_get(name, &t, &n))
		return FR_EXIT_OPERATIONAL;
	for (i = 0; i < n; i++)
		if (!strcmp(t[i].type, FR_TARGET))
			break;
	dmw_table_free(t, n);
	if (i < n) {
		fr_err("%s has a PM in front of it already (frctl status %s)",
		       name, name);
		return FR_EXIT_OPERATIONAL;
	}
	if (!dmw_uuid_of(name, uuid, sizeof(uuid)) && is_hidden_origin(uuid)) {
		fr_err("%s is the origin of a dm-fr device, not a device to attach to",
		       name);
		return FR_EXIT_OPERATIONAL;
	}
	if (strlen(name) + strlen(HIDDEN_SUFFIX) >= FRCTL_DM_NAME_LEN ||
	    strlen(FR_ATTACH_ID_PREFIX) + strlen(name) >= FR_ORIGIN_ID_LEN) {
		fr_err("'%s' is too long a name: the PM records it as its origin in %d bytes at most",
		       name, FR_ORIGIN_ID_LEN - 1 - (int)strlen(FR_ATTACH_ID_PREFIX));
		return FR_EXIT_OPERATIONAL;
	}
	for (i = 0; name[i]; i++)
		if (name[i] <= ' ' || name[i] > '~' || name[i] == '\\') {
			fr_err("'%s': a name with spaces or other characters a table line cannot carry cannot be attached to",
			       name);
			return FR_EXIT_OPERATIONAL;
		}
	if (stat(pm, &st)) {
		fr_err("cannot open %s: %s", pm, strerror(errno));
		return FR_EXIT_OPERATIONAL;
	}
	if (!S_ISBLK(st.st_mode) || !dev_is_dax(st.st_rdev)) {
		fr_err("%s is not a DAX-capable block device (an fsdax namespace: ndctl create-namespace -m fsdax)",
		       pm);
		return FR_EXIT_OPERATIONAL;
	}
	if (st.st_rdev == di->rdev) {
		fr_err("%s is %s itself", pm, name);
		return FR_EXIT_OPERATIONAL;
	}
	return 0;
}

/*
 * Put the old table back and resume it, after a resume of the fr table
 * failed (device-mapper had swapped it in already): 0 if the device is
 * as it was.
 */
static int attach_undo_swap(const char *name, const struct dmw_target *t,
			    int n)
{
	if (dmw_reload(name, t, n) || dmw_resume(name)) {
		fr_err("%s: could not put its table back; it stays suspended (dmsetup table --inactive %s; dmsetup resume %s)",
		       name, name, name);
		return -1;
	}
	return 0;
}

static u64 table_len(const struct dmw_target *t, int n)
{
	u64 len = 0;
	int i;

	for (i = 0; i < n; i++)
		if (t[i].start + t[i].len > len)
			len = t[i].start + t[i].len;
	return len;
}

/* Create NAME-frorigin, the origin to be, with NAME's table t. */
static int hidden_create(const char *name, const char *hex,
			 const struct dmw_target *t, int n, char *hidden,
			 size_t hlen, dev_t *hdev)
{
	char huuid[FRCTL_DM_UUID_LEN];
	struct dmw_info hi;

	snprintf(hidden, hlen, "%s%s", name, HIDDEN_SUFFIX);
	snprintf(huuid, sizeof(huuid), HIDDEN_PREFIX "%s", hex);
	/* Left behind when NAME was taken apart under the cache (lvm2). */
	if (!dmw_info(hidden, &hi)) {
		if (hi.open_count) {
			fr_err("%s exists and is in use: not replacing it",
			       hidden);
			return -EBUSY;
		}
		if (dmw_remove(hidden, true)) {
			fr_err("cannot remove %s, left from an earlier attach",
			       hidden);
			return -EIO;
		}
	}
	if (dmw_create_hidden_table(hidden, huuid, t, n, hdev)) {
		fr_err("cannot create %s, the origin to be, with %s's table",
		       hidden, name);
		return -EIO;
	}
	return 0;
}

/*
 * The swap: NAME, whose table is old, becomes an fr target over the hidden
 * device and the PM. 0; else an exit code, with NAME as it was and the
 * hidden device removed (unless NAME could not be put back).
 */
static int swap_in(const char *name, const struct dmw_target *old, int n,
		   const char *hidden, dev_t hdev, const char *pm,
		   const char *hex, const char *id,
		   const struct table_opts *opts)
{
	char params[PATH_MAX + 600], optstr[500];
	struct table_opts to = *opts;
	struct dmw_target fr;
	struct stat st;

	snprintf(to.uuid, sizeof(to.uuid), "%s", hex);
	snprintf(to.origin_id, sizeof(to.origin_id), "%s", id);
	table_opts_string(&to, optstr, sizeof(optstr));
	if (stat(pm, &st) || !S_ISBLK(st.st_mode)) {
		fr_err("cannot open the PM %s", pm);
		dmw_remove(hidden, true);
		return FR_EXIT_OPERATIONAL;
	}
	snprintf(params, sizeof(params), "%u:%u %u:%u%s", major(hdev),
		 minor(hdev), major(st.st_rdev), minor(st.st_rdev), optstr);
	memset(&fr, 0, sizeof(fr));
	fr.len = table_len(old, n);
	snprintf(fr.type, sizeof(fr.type), FR_TARGET);
	fr.params = params;
	if (dmw_reload(name, &fr, 1)) {
		fr_err("the fr target refused the table '%s' (the kernel log says why)",
		       params);
		dmw_remove(hidden, true);
		return FR_EXIT_OPERATIONAL;
	}
	/* The I/O in flight completes on the old table, the next waits. */
	if (dmw_suspend(name)) {
		fr_err("cannot suspend %s; nothing changed", name);
		dmw_clear(name);
		dmw_resume(name);
		dmw_remove(hidden, true);
		return FR_EXIT_OPERATIONAL;
	}
	if (dmw_resume(name)) {
		fr_err("%s: the fr table did not resume (the kernel log says why); putting the old table back",
		       name);
		if (!attach_undo_swap(name, old, n))
			dmw_remove(hidden, true);
		return FR_EXIT_OPERATIONAL;
	}
	return 0;
}

/* Is this dm-fr device one frctl attach made (its origin the hidden one)? */
bool fr_dev_attached(const struct fr_dev *d)
{
	char name[FRCTL_DM_NAME_LEN], uuid[FRCTL_DM_UUID_LEN];

	return !dm_name_of(d->table.origin, name, sizeof(name), uuid,
			   sizeof(uuid)) && is_hidden_origin(uuid);
}

static int do_attach(const char *name, const char *pm,
		     const struct geo_opts *go, const struct table_opts *opts,
		     bool force, bool quiet)
{
	char hidden[FRCTL_DM_NAME_LEN], hpath[PATH_MAX], hex[33];
	char id[FR_ORIGIN_ID_LEN];
	struct dmw_target *old;
	struct dmw_info di;
	struct stat st;
	u8 uuid[16], got[16];
	dev_t hdev;
	int n, r;

	r = attach_checks(name, pm, &di);
	if (r)
		return r;
	snprintf(id, sizeof(id), FR_ATTACH_ID_PREFIX "%s", name);
	if (dmw_table_get(name, &old, &n))
		return FR_EXIT_OPERATIONAL;
	new_uuid(uuid);
	uuid_hex(uuid, hex);
	if (hidden_create(name, hex, old, n, hidden, sizeof(hidden), &hdev)) {
		r = FR_EXIT_OPERATIONAL;
		goto out;
	}
	snprintf(hpath, sizeof(hpath), "/dev/mapper/%s", hidden);
	if (stat(hpath, &st) || !S_ISBLK(st.st_mode))
		snprintf(hpath, sizeof(hpath), "/dev/block/%u:%u", major(hdev),
			 minor(hdev));
	r = format_pm(pm, hpath, id, 0, go, uuid, force, false, true, got);
	if (r) {
		dmw_remove(hidden, true);
		goto out;
	}
	r = swap_in(name, old, n, hidden, hdev, pm, hex, id, opts);
	if (r)
		goto out;
	origins_record(hex, id);
	if (dev_set_nonrot(di.rdev))
		fr_warn("%s: cannot mark it not rotational", name);
	if (!quiet)
		printf("%s: attached PM %s (uuid %s); its origin is now %s\n",
		       name, pm, hex, hidden);
out:
	dmw_table_free(old, n);
	return r;
}

static int attach_again_locked(const char *name, const char *pm,
			       const struct sb_info *si,
			       const struct table_opts *opts);

/*
 * autoactivate, for a PM attached to NAME (origin id "attach:NAME") whose
 * device came back without it (a boot, lvm2 activating the LV with its
 * own table): the same swap, on the PM as it is, which the kernel then
 * recovers. The guard that held NAME meanwhile is dropped.
 */
int attach_again(const char *name, const char *pm, const struct sb_info *si,
		 const struct table_opts *opts)
{
	int r, lock;

	/*
	 * frctl attach (or detach) at work on NAME: the PM's udev event of
	 * its format comes here while it swaps; it finishes the job.
	 */
	lock = device_lock_quiet(name);
	if (lock < 0) {
		printf("%s: another frctl is working on %s; leaving it to that\n",
		       pm, name);
		return 0;
	}
	r = attach_again_locked(name, pm, si, opts);
	close(lock);
	return r;
}

static int attach_again_locked(const char *name, const char *pm,
			       const struct sb_info *si,
			       const struct table_opts *opts)
{
	char hidden[FRCTL_DM_NAME_LEN];
	struct dmw_target *old;
	struct dmw_info di;
	dev_t hdev;
	int n, r;

	if (dmw_info(name, &di) || !di.live_table || di.suspended ||
	    di.inactive_table) {
		fr_err("%s is not ready to take its PM back (no table, suspended, or a table loaded)",
		       name);
		return FR_EXIT_OPERATIONAL;
	}
	if (dmw_table_get(name, &old, &n))
		return FR_EXIT_OPERATIONAL;
	if (table_len(old, n) != si->geo.origin_sectors) {
		fr_err("%s has %llu sectors, and the PM %s was attached to %llu: not attaching it again",
		       name, (unsigned long long)table_len(old, n), pm,
		       (unsigned long long)si->geo.origin_sectors);
		r = FR_EXIT_OPERATIONAL;
		goto out;
	}
	if (hidden_create(name, si->uuid_hex, old, n, hidden, sizeof(hidden),
			  &hdev)) {
		r = FR_EXIT_OPERATIONAL;
		goto out;
	}
	r = swap_in(name, old, n, hidden, hdev, pm, si->uuid_hex, si->origin_id,
		    opts);
	if (!r) {
		origins_record(si->uuid_hex, si->origin_id);
		guard_release_pm(si->uuid_hex);
		if (dev_set_nonrot(di.rdev))
			fr_warn("%s: cannot mark it not rotational", name);
	}
out:
	dmw_table_free(old, n);
	return r;
}

/* Attach's options: these, then one per tunable (as create's). */
#define TUNABLE_OPT	0x100

int cmd_attach(int argc, char **argv)
{
	static const struct option base[] = {
		{ "pm", required_argument, NULL, 'p' },
		{ "chunk-size", required_argument, NULL, 'C' },
		{ "region-size", required_argument, NULL, 'R' },
		{ "stride", required_argument, NULL, 'S' },
		{ "ways", required_argument, NULL, 'W' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
	};
	enum { NR_BASE = sizeof(base) / sizeof(base[0]) };
	static char names[FR_NR_TUNABLES][64];
	struct option opts[NR_BASE + FR_NR_TUNABLES + 1];
	const char *pm = NULL, *name;
	struct geo_opts go = { 0 };
	struct table_opts to;
	bool force = false, quiet = false;
	char opt[72];
	int c, i, r, lock;

	memset(opts, 0, sizeof(opts));
	memcpy(opts, base, sizeof(base));
	for (i = 0; i < FR_NR_TUNABLES; i++) {
		tunable_option(i, names[i], sizeof(names[i]));
		opts[NR_BASE + i] = (struct option){
			names[i], required_argument, NULL, TUNABLE_OPT + i };
	}
	table_opts_init(&to);
	while ((c = verb_getopt(argc, argv, ":p:fqh", opts)) != -1) {
		if (c >= TUNABLE_OPT && c < TUNABLE_OPT + FR_NR_TUNABLES) {
			i = c - TUNABLE_OPT;
			snprintf(opt, sizeof(opt), "--%s", names[i]);
			if (table_opt_set(&to, frctl_tunables[i].name, optarg))
				return fr_usage_error("%s: '%s' is not a value from %llu to %llu",
						      opt, optarg,
						      (unsigned long long)frctl_tunables[i].min,
						      (unsigned long long)frctl_tunables[i].max);
			continue;
		}
		switch (c) {
		case 'p':
			pm = optarg;
			break;
		case 'C':
		case 'R':
		case 'S':
		case 'W':
			if (geo_opts_parse(&go, c, optarg))
				return FR_EXIT_USAGE;
			break;
		case 'f':
			force = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			print_help("attach", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return fr_usage_error("missing the device NAME");
	if (optind + 1 < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind + 1]);
	if (!pm)
		return fr_usage_error("--pm is required");
	/* The kernel would refuse it after the PM was formatted: say it now. */
	{
		int hi = FR_TUNABLE_high_watermark, lo = FR_TUNABLE_low_watermark;
		long long h = to.tun[hi] >= 0 ? to.tun[hi] :
			      (long long)frctl_tunables[hi].def;
		long long l = to.tun[lo] >= 0 ? to.tun[lo] :
			      (long long)frctl_tunables[lo].def;

		if (l > h)
			return fr_usage_error("--%s %lld is above --%s %lld",
					      names[lo], l, names[hi], h);
	}
	name = argv[optind];
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;
	lock = device_lock(name);
	if (lock < 0)
		return FR_EXIT_OPERATIONAL;
	r = do_attach(name, pm, &go, &to, force, quiet);
	close(lock);
	return r;
}

/* --- detach --- */

struct drain {
	const char *name;
	u64 chunk;		/* bytes */
	u64 start;		/* dirty chunks when it began */
	double t0, last_t;
	u64 last_dirty;
	double rate;		/* bytes per second, smoothed */
	bool json, tty;
};

/* Seconds to a tenth, printed so (not 2756.8000000000002). */
static struct json_object *tenths(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.1f", v);
	return json_object_new_double_s(v, buf);
}

static void drain_report(struct drain *dr, u64 dirty, const char *phase)
{
	double t = now_s(), eta = -1;
	u64 bytes = dirty * dr->chunk;
	char b1[32], b2[32];

	if (dr->last_t && t > dr->last_t) {
		double inst = ((double)dr->last_dirty - (double)dirty) *
			      (double)dr->chunk / (t - dr->last_t);

		if (inst < 0)
			inst = 0;
		dr->rate = dr->rate ? 0.7 * dr->rate + 0.3 * inst : inst;
	}
	dr->last_t = t;
	dr->last_dirty = dirty;
	if (dr->rate > 0)
		eta = (double)bytes / dr->rate;
	if (dr->json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "device", json_object_new_string(dr->name));
		json_object_object_add(o, "phase", json_object_new_string(phase));
		json_object_object_add(o, "dirty_chunks", json_object_new_int64((int64_t)dirty));
		json_object_object_add(o, "dirty_bytes", json_object_new_int64((int64_t)bytes));
		json_object_object_add(o, "rate_bytes_per_s",
				       json_object_new_int64((int64_t)dr->rate));
		json_object_object_add(o, "eta_s", eta < 0 ? NULL :
				       tenths(eta));
		json_object_object_add(o, "elapsed_s", tenths(t - dr->t0));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		fflush(stdout);
		return;
	}
	if (!dr->tty)
		return;
	{
		int width = 30, fill, i;
		double done = dr->start ? (double)(dr->start - (dirty < dr->start ?
					    dirty : dr->start)) / (double)dr->start : 1.0;

		fill = (int)(done * width + 0.5);
		printf("\rdetaching %s: [", dr->name);
		for (i = 0; i < width; i++)
			putchar(i < fill ? '#' : '-');
		printf("] %3d%%  %s dirty, %s/s", (int)(done * 100 + 0.5),
		       fmt_bytes(b1, sizeof(b1), bytes),
		       fmt_bytes(b2, sizeof(b2), (u64)dr->rate));
		if (eta >= 0)
			printf(", %.0f s left   ", eta);
		else
			printf("              ");
		fflush(stdout);
	}
}

static void drain_end_line(struct drain *dr)
{
	if (dr->tty && !dr->json)
		printf("\n");
}

/*
 * What goes back under NAME: the hidden origin's own table (and its name,
 * to remove it after), or a linear map of the origin.
 */
static int detach_table(const struct fr_dev *d, struct dmw_target **t,
			int *n, char *hidden, size_t hlen)
{
	char uuid[FRCTL_DM_UUID_LEN];

	hidden[0] = 0;
	if (!dm_name_of(d->table.origin, hidden, hlen, uuid, sizeof(uuid)) &&
	    is_hidden_origin(uuid))
		return dmw_table_get(hidden, t, n) ? -EIO : 0;
	hidden[0] = 0;
	*t = xcalloc(1, sizeof(**t));
	(*t)->start = 0;
	(*t)->len = d->length;
	snprintf((*t)->type, sizeof((*t)->type), "linear");
	(*t)->params = xcalloc(1, 64);
	snprintf((*t)->params, 64, "%s 0", d->table.origin);
	*n = 1;
	return 0;
}

/*
 * The PM no longer caches this origin: wipe the superblock (its first
 * 4 KiB) so that nothing assembles it again over an origin written since.
 */
static int wipe_pm(const char *majmin)
{
	static const char zero[4096];
	char path[64];
	int fd, r = 0;

	snprintf(path, sizeof(path), "/dev/block/%s", majmin);
	/* Not O_EXCL: the suspended fr table still holds it. */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pwrite(fd, zero, sizeof(zero), 0) != (ssize_t)sizeof(zero) ||
	    fsync(fd))
		r = -errno;
	close(fd);
	return r;
}

enum detach_end { DETACHED, STOPPED, FAILED };

/*
 * Suspend with the plain table loaded; resume it only if nothing is dirty
 * but the lost chunks a retire accepted (lost).
 */
static enum detach_end detach_swap(const char *name, struct drain *dr,
				   const struct dmw_target *t, int n,
				   const char *hex, const char *pm, u64 lost,
				   bool retire)
{
	struct fr_dev d;
	int r;

	if (dmw_reload(name, t, n)) {
		fr_err("%s: the table to go back to was refused (the kernel log says why)",
		       name);
		return FAILED;
	}
	if (retire ? dmw_suspend_nolockfs(name) : dmw_suspend(name)) {
		fr_err("cannot suspend %s", name);
		dmw_clear(name);
		return FAILED;
	}
	/* Suspended in cleaner mode: the target wrote back what was left. */
	if (fr_dev_get(name, &d) || !d.is_fr || d.parse_error ||
	    d.st.chunks_dirty > lost) {
		drain_report(dr, d.is_fr ? d.st.chunks_dirty : 0, "retrying");
		dmw_clear(name);
		if (dmw_resume(name))
			fr_err("%s: cannot resume it (dmsetup resume %s)", name,
			       name);
		return STOPPED;
	}
	/*
	 * The origin holds everything now: forget it before the resume, whose
	 * change event would otherwise find NAME bare and known as an origin
	 * (the guard would hide a mounted device from systemd).
	 */
	if (hex[0])
		origins_forget(hex);
	/*
	 * And the PM forgets it: a crash before the resume must not leave a
	 * superblock that assembles the PM's clean copies again over an
	 * origin written since. (The suspended table does not write it.)
	 */
	r = wipe_pm(pm);
	if (r)
		fr_warn("cannot wipe the superblock of the PM %s (%s): frctl format --force it before reuse",
			pm, strerror(-r));
	if (dmw_resume(name)) {
		fr_err("%s: the plain table did not resume; the device stays suspended (dmsetup resume %s)",
		       name, name);
		return FAILED;
	}
	return DETACHED;
}

int do_detach(const char *name, unsigned int timeout, bool json, bool quiet,
	      bool retire, u64 lost, u64 *left)
{
	struct dmw_target *t = NULL;
	char hidden[FRCTL_DM_NAME_LEN], pm[32], hex[33] = "";
	struct drain dr = { 0 };
	struct dmw_info di;
	enum detach_end end = FAILED;
	bool was_cleaner, stopped = false;
	struct fr_dev d;
	int n = 0, tries = 0, r;
	double deadline, failing_since = 0;

	*left = 0;
	r = get_fr_dev(name, &d);
	if (r)
		return r;
	if (dmw_info(name, &di) || di.suspended || di.inactive_table) {
		fr_err("%s is suspended or has an inactive table loaded (another tool at work?): resume or clear it first",
		       name);
		return FR_EXIT_OPERATIONAL;
	}
	if (detach_table(&d, &t, &n, hidden, sizeof(hidden))) {
		fr_err("cannot read the table of %s's origin %s", name,
		       hidden);
		return FR_EXIT_OPERATIONAL;
	}
	snprintf(pm, sizeof(pm), "%s", d.table.pm);
	if (!strncmp(d.uuid, FR_UUID_PREFIX, strlen(FR_UUID_PREFIX)))
		snprintf(hex, sizeof(hex), "%.32s", d.uuid + strlen(FR_UUID_PREFIX));
	else if (hidden[0]) {
		char u[FRCTL_DM_UUID_LEN];

		if (!dmw_uuid_of(hidden, u, sizeof(u)))
			snprintf(hex, sizeof(hex), "%.32s", u + strlen(HIDDEN_PREFIX));
	}
	was_cleaner = d.st.cleaner;
	dr.name = name;
	dr.chunk = d.st.chunk_sectors << FR_SECTOR_SHIFT;
	dr.start = d.st.chunks_dirty;
	dr.t0 = now_s();
	dr.json = json;
	dr.tty = !quiet && isatty(STDOUT_FILENO);
	deadline = timeout ? dr.t0 + timeout : 0;

	catch_stop();
	if (!was_cleaner && dmw_message(name, "cleaner on")) {
		r = FR_EXIT_OPERATIONAL;
		goto out;
	}
	for (;;) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };
		u64 dirty;

		if (fr_dev_get(name, &d) || !d.is_fr || d.parse_error) {
			fr_err("%s changed under frctl (removed or reloaded)",
			       name);
			r = FR_EXIT_OPERATIONAL;
			goto out;
		}
		dirty = d.st.chunks_dirty;
		drain_report(&dr, dirty, "draining");
		/* Lost slots held data nobody can read back: not a detach. */
		if (d.st.lost_slots && !retire) {
			fr_err("%s: %llu PM slots are lost (status: lost_slots): what they held cannot be written back; frctl retire gives it up",
			       name, (unsigned long long)d.st.lost_slots);
			break;
		}
		if (stop_signal || (deadline && now_s() >= deadline)) {
			stopped = true;
			break;
		}
		/*
		 * What cannot drain: say so rather than wait for ever; a
		 * retire that accepted losing them swaps now.
		 */
		if (dirty && d.st.unreadable >= dirty) {
			*left = dirty;
			if (dirty <= lost) {
				end = detach_swap(name, &dr, t, n, hex, pm,
						  lost, retire);
				if (end != STOPPED ||
				    ++tries >= DETACH_SWAP_TRIES)
					break;
				nanosleep(&ts, NULL);
				continue;
			}
			fr_err("%s: the %llu dirty chunks left cannot be read from PM (status: unreadable); frctl retire gives them up (see the admin guide, PM media errors)",
			       name, (unsigned long long)dirty);
			break;
		}
		if (strcmp(d.st.state, "ok")) {
			if (!failing_since)
				failing_since = now_s();
			else if (now_s() - failing_since >= DETACH_FAILING_S) {
				fr_err("%s: the origin has failed writebacks for %d s (state %s)",
				       name, DETACH_FAILING_S, d.st.state);
				break;
			}
		} else {
			failing_since = 0;
		}
		if (dirty * dr.chunk <= DETACH_SWAP_BYTES) {
			end = detach_swap(name, &dr, t, n, hex, pm, 0, retire);
			if (end != STOPPED || ++tries >= DETACH_SWAP_TRIES)
				break;
		}
		nanosleep(&ts, NULL);
	}
	drain_end_line(&dr);
	if (end == DETACHED) {
		if (hidden[0] && dmw_remove(hidden, true))
			fr_warn("cannot remove %s, the old origin (dmsetup remove %s)",
				hidden, hidden);
		if (json)
			drain_report(&dr, 0, "detached");
		else if (!quiet && !retire)
			printf("%s: detached; the origin holds all the data and the PM %s is free\n",
			       name, pm);
		r = 0;
		goto done;
	}
	if (!was_cleaner)
		dmw_message(name, "cleaner off");
	if (fr_dev_get(name, &d) || !d.is_fr)
		d.st.chunks_dirty = 0;
	if (json)
		drain_report(&dr, d.st.chunks_dirty, stopped ? "stopped" : "failed");
	if (stopped) {
		fr_err("%s: %s; it stays attached, back in %s mode, %llu chunks dirty",
		       name, stop_signal ? "interrupted" : "timed out",
		       was_cleaner ? "cleaner" : "normal",
		       (unsigned long long)d.st.chunks_dirty);
		r = FR_EXIT_CANCELED;
	} else {
		if (end == STOPPED)
			fr_err("%s: writes kept dirtying the cache (or the origin failed a writeback): still attached, %llu chunks dirty",
			       name, (unsigned long long)d.st.chunks_dirty);
		r = FR_EXIT_OPERATIONAL;
	}
	goto done;
out:
	if (!was_cleaner)
		dmw_message(name, "cleaner off");
done:
	dmw_table_free(t, n);
	return r;
}

int cmd_detach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool json = false, quiet = false;
	u64 timeout = 0, left;
	int c, r, lock;

	while ((c = verb_getopt(argc, argv, ":t:jqh", opts)) != -1) {
		switch (c) {
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
			print_help("detach", stdout);
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
	lock = device_lock(argv[optind]);
	if (lock < 0)
		return FR_EXIT_OPERATIONAL;
	r = do_detach(argv[optind], (unsigned int)timeout, json, quiet, false,
		      0, &left);
	close(lock);
	return r;
}

/* --- replace --- */

/* The table options a device runs with, less its PM's identity. */
static void table_opts_of(const struct fr_dev *d, struct table_opts *to)
{
	u64 tun[FR_NR_TUNABLES];
	char w[72], val[72];
	const char *p = d->table.opts;
	int i;

	table_opts_init(to);
	tunables_of_table(d->table.opts, tun);
	for (i = 0; i < FR_NR_TUNABLES; i++)
		if (tun[i] != frctl_tunables[i].def)
			to->tun[i] = (long long)tun[i];
	/*
	 * The keywords. The geometry (chunk_size ... set_ways) is the old
	 * PM's: the new one is formatted with frctl's defaults.
	 */
	while (table_arg_next(&p, w, sizeof(w), val, sizeof(val))) {
		if (val[0])
			continue;
		if (!strcmp(w, "cleaner"))
			to->cleaner = true;
		else if (!strcmp(w, "no_read_fill"))
			to->no_read_fill = true;
	}
}

/*
 * frctl replace: detach from the PM in use (everything written back), then
 * attach the new one, with the same tunables; the device stays in use
 * throughout and runs without a cache in between.
 */
int cmd_replace(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pm", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool json = false, quiet = false, force = false;
	const char *pm = NULL, *name;
	struct geo_opts go = { 0 };
	struct table_opts to;
	struct fr_dev d;
	struct stat st;
	char old[32];
	u64 timeout = 0, left;
	int c, r, lock;

	while ((c = verb_getopt(argc, argv, ":p:t:jfqh", opts)) != -1) {
		switch (c) {
		case 'p':
			pm = optarg;
			break;
		case 't':
			if (parse_opt_u64("--timeout", optarg, 1, 86400 * 365,
					  &timeout))
				return FR_EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		case 'f':
			force = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			print_help("replace", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return fr_usage_error("missing the device NAME");
	if (optind + 1 < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind + 1]);
	if (!pm)
		return fr_usage_error("--pm is required (the new PM)");
	name = argv[optind];
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;
	lock = device_lock(name);
	if (lock < 0)
		return FR_EXIT_OPERATIONAL;
	r = get_fr_dev(name, &d);
	if (r)
		goto out;
	if (stat(pm, &st) || !S_ISBLK(st.st_mode) || !dev_is_dax(st.st_rdev)) {
		fr_err("%s is not a DAX-capable block device (an fsdax namespace)",
		       pm);
		r = FR_EXIT_OPERATIONAL;
		goto out;
	}
	snprintf(old, sizeof(old), "%u:%u", major(st.st_rdev),
		 minor(st.st_rdev));
	if (!strcmp(old, d.table.pm)) {
		fr_err("%s is the PM %s uses already", pm, name);
		r = FR_EXIT_OPERATIONAL;
		goto out;
	}
	table_opts_of(&d, &to);
	r = do_detach(name, (unsigned int)timeout, json, quiet, false, 0, &left);
	if (r)
		goto out;
	r = do_attach(name, pm, &go, &to, force, quiet);
	if (r)
		fr_err("%s: detached from its PM %s, but attaching %s failed: it runs without a cache (frctl attach %s --pm ...)",
		       name, d.table.pm, pm, name);
out:
	close(lock);
	return r;
}
