// SPDX-License-Identifier: GPL-2.0-only
/*
 * frctl resize: a dm-fr device takes its origin's new length, online.
 *
 * The table is loaded again with the new length, suspended and resumed: the
 * target resizes the PM at the resume, after recovery, committing the length
 * with one failure-atomic store (dm-fr/core/fr-resize.c). A grow follows the
 * origin (lvextend, a larger disk); the file system then grows on top. A
 * shrink is asked for with --size, after the file system was shrunk: it is
 * refused below the end of an ext4, XFS or Btrfs on the device, and by the
 * target while dirty data lies past the new end (flush first). A device
 * that frctl attach made is refused: its origin is the LV's own table under
 * another name, which lvm2 cannot resize (detach, lvextend, attach).
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <json-c/json.h>

#include "frctl.h"

/* Open a device by major:minor (as a table names it), read-only. */
static int open_majmin(const char *majmin)
{
	char path[64];
	unsigned int ma, mi;

	if (sscanf(majmin, "%u:%u", &ma, &mi) != 2)
		return -EINVAL;
	snprintf(path, sizeof(path), "/dev/block/%u:%u", ma, mi);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* The bytes of the device major:minor. */
static int majmin_bytes(const char *majmin, u64 *bytes)
{
	dev_t rdev;
	bool blk;
	int fd, r;

	fd = open_majmin(majmin);
	if (fd < 0)
		return -errno;
	r = dev_size(fd, majmin, bytes, &blk, &rdev);
	close(fd);
	return r;
}

/*
 * A shrink must not cut the file system on NAME (read through NAME itself,
 * so what the cache holds counts). 0, or an exit code after saying why.
 */
static int shrink_fs_check(const char *name, const char *mapper_path,
			   dev_t rdev, u64 new_bytes, bool in_use)
{
	const char *type;
	char b1[32], b2[32];
	u64 end;
	int fd, r;

	fd = open(mapper_path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		char path[64];

		snprintf(path, sizeof(path), "/dev/block/%u:%u", major(rdev),
			 minor(rdev));
		fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	}
	if (fd < 0) {
		fr_err("cannot open %s to find the end of its file system: %s",
		       name, strerror(errno));
		return FR_EXIT_OPERATIONAL;
	}
	r = fs_end(fd, &end, &type);
	close(fd);
	if (r) {
		fr_err("%s: its file system's superblock makes no sense; not shrinking it",
		       name);
		return FR_EXIT_OPERATIONAL;
	}
	/*
	 * A mounted ext4 or XFS writes its grown size to disk when it likes
	 * (XFS at a log checkpoint): what the disk says may lag. Btrfs
	 * commits a resize, and is the one that shrinks mounted.
	 */
	if (in_use && (!type || strcmp(type, "btrfs"))) {
		fr_err("%s is in use (mounted?)%s%s: a shrink needs it unused (only a mounted Btrfs, which commits its size, is read while in use)",
		       name, type ? " with " : "", type ? type : "");
		return FR_EXIT_OPERATIONAL;
	}
	if (type && end > new_bytes) {
		fr_err("%s holds %s ending at %s: shrink the file system to at most %s first",
		       name, type, fmt_bytes(b1, sizeof(b1), end),
		       fmt_bytes(b2, sizeof(b2), new_bytes));
		return FR_EXIT_OPERATIONAL;
	}
	return 0;
}

/* Load NAME's table t with length len, suspend, resume; undo on failure. */
static int swap_length(const char *name, struct dmw_target *t, u64 len,
		       u64 old_len)
{
	t->len = len;
	if (dmw_reload(name, t, 1)) {
		fr_err("the fr target refused %s at %llu sectors (the kernel log says why; for a shrink: dirty data past the new end? frctl flush %s first)",
		       name, (unsigned long long)len, name);
		t->len = old_len;
		return FR_EXIT_OPERATIONAL;
	}
	if (dmw_suspend(name)) {
		fr_err("cannot suspend %s; nothing changed", name);
		dmw_clear(name);
		dmw_resume(name);
		t->len = old_len;
		return FR_EXIT_OPERATIONAL;
	}
	if (!dmw_resume(name))
		return 0;
	fr_err("%s did not resume at %llu sectors (the kernel log says why); loading %llu again",
	       name, (unsigned long long)len, (unsigned long long)old_len);
	t->len = old_len;
	if (dmw_reload(name, t, 1) || dmw_resume(name))
		fr_err("%s: could not load its old length again; it stays suspended (dmsetup table %s; dmsetup resume %s)",
		       name, name, name);
	return FR_EXIT_OPERATIONAL;
}

static void print_json(const char *name, u64 old_len, u64 new_len,
		       bool resized)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "old_sectors",
			       json_object_new_int64((int64_t)old_len));
	json_object_object_add(o, "new_sectors",
			       json_object_new_int64((int64_t)new_len));
	json_object_object_add(o, "resized", json_object_new_boolean(resized));
	json_print(o);
	json_object_put(o);
}

static int do_resize(const char *name, bool has_size, u64 size, bool json,
		     bool quiet)
{
	char b1[32], b2[32], path[PATH_MAX];
	u64 origin_bytes, new_len;
	struct dmw_target *t = NULL;
	struct dmw_info di;
	struct fr_dev d;
	int n = 0, r;

	r = get_fr_dev(name, &d);
	if (r)
		return r;
	if (fr_dev_attached(&d)) {
		fr_err("%s was attached in use (frctl attach): its origin is its old table under another name, which lvm2 cannot resize; frctl detach %s, resize it, frctl attach %s",
		       name, name, name);
		return FR_EXIT_OPERATIONAL;
	}
	if (dmw_info(name, &di) || di.suspended || di.inactive_table) {
		fr_err("%s is suspended or has an inactive table loaded: resize it when it is active and nothing else is loading it",
		       name);
		return FR_EXIT_OPERATIONAL;
	}
	r = majmin_bytes(d.table.origin, &origin_bytes);
	if (r) {
		fr_err("cannot read the size of %s's origin %s: %s", name,
		       d.table.origin, strerror(-r));
		return FR_EXIT_OPERATIONAL;
	}
	if (has_size) {
		if (size > origin_bytes) {
			fr_err("%s's origin %s has only %s; grow it first",
			       name, d.table.origin,
			       fmt_bytes(b1, sizeof(b1), origin_bytes));
			return FR_EXIT_OPERATIONAL;
		}
		new_len = size >> FR_SECTOR_SHIFT;
	} else {
		new_len = origin_bytes >> FR_SECTOR_SHIFT;
	}
	if (new_len == d.length) {
		if (json)
			print_json(name, d.length, new_len, false);
		else if (!quiet)
			printf("%s: already %llu sectors (%s), as asked\n",
			       name, (unsigned long long)new_len,
			       fmt_bytes(b1, sizeof(b1), new_len << FR_SECTOR_SHIFT));
		return 0;
	}
	if (new_len < d.length) {
		snprintf(path, sizeof(path), "/dev/mapper/%s", name);
		r = shrink_fs_check(name, path, di.rdev,
				    new_len << FR_SECTOR_SHIFT,
				    di.open_count > 0);
		if (r)
			return r;
	}
	if (dmw_table_get(name, &t, &n) || n != 1 || strcmp(t->type, FR_TARGET)) {
		fr_err("cannot read %s's table", name);
		if (t)
			dmw_table_free(t, n);
		return FR_EXIT_OPERATIONAL;
	}
	r = swap_length(name, t, new_len, d.length);
	dmw_table_free(t, n);
	if (r)
		return r;
	if (json)
		print_json(name, d.length, new_len, true);
	else if (!quiet)
		printf("%s: %s from %s to %s (%llu sectors)\n", name,
		       new_len > d.length ? "grown" : "shrunk",
		       fmt_bytes(b1, sizeof(b1), d.length << FR_SECTOR_SHIFT),
		       fmt_bytes(b2, sizeof(b2), new_len << FR_SECTOR_SHIFT),
		       (unsigned long long)new_len);
	return 0;
}

int cmd_resize(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool json = false, quiet = false, has_size = false;
	u64 size = 0;
	int c, r, lock;

	while ((c = verb_getopt(argc, argv, ":s:jqh", opts)) != -1) {
		switch (c) {
		case 's':
			if (parse_opt_size("--size", optarg, &size))
				return FR_EXIT_USAGE;
			has_size = true;
			break;
		case 'j':
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			print_help("resize", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return fr_usage_error("missing the device NAME");
	if (optind + 1 < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind + 1]);
	if (has_size && (!size || (size & (FR_SECTOR_SIZE - 1))))
		return fr_usage_error("--size must be a nonzero multiple of 512 bytes");
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;
	lock = device_lock(argv[optind]);
	if (lock < 0)
		return FR_EXIT_OPERATIONAL;
	r = do_resize(argv[optind], has_size, size, json, quiet);
	close(lock);
	return r;
}
