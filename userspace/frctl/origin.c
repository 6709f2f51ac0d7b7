// SPDX-License-Identifier: GPL-2.0-only
/*
 * The origin id: the stable name of the origin that frctl format records in
 * the superblock (63 bytes at most), so that frctl create and udev
 * auto-activation can find the origin again and refuse the wrong one.
 *
 * An id is either an absolute path (an image file, a /dev/disk/by-path link,
 * the /dev/disk/by-partuuid link the kernel records for a partition), a bare
 * name under /dev/disk/by-id/, or "dev:MAJOR:MINOR" as the kernel writes it
 * when it formats the PM itself (table argument "fresh") and knows no better
 * name. A bare "dm-uuid-X" or "dm-name-X" (frctl's and the kernel's name for
 * a dm origin) is also found through sysfs when udev made no link (a guest
 * without udev).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "frctl.h"

#define BY_ID "/dev/disk/by-id/"
#define BY_PATH "/dev/disk/by-path/"

static int rank_by_id(const char *name)
{
	if (!strncmp(name, "dm-uuid-", 8))
		return 1;
	if (!strncmp(name, "wwn-", 4) || !strncmp(name, "nvme-eui.", 9))
		return 2;
	if (!strncmp(name, "lvm-pv-uuid-", 12))
		return 0;	/* names the PV, not what is on it */
	if (!strncmp(name, "dm-name-", 8))
		return 4;
	return 3;
}

/* Put dir+name (or name alone when the whole path is too long) in id. */
static bool fit(const char *dir, const char *name, char *id, size_t idlen)
{
	size_t max = idlen < FR_ORIGIN_ID_LEN ? idlen : FR_ORIGIN_ID_LEN;

	/* A by-id name is kept bare: resolvable through sysfs without udev. */
	if (strcmp(dir, BY_ID) && strlen(dir) + strlen(name) < max) {
		snprintf(id, idlen, "%s%s", dir, name);
		return true;
	}
	if (!strcmp(dir, BY_ID) && strlen(name) < max) {
		snprintf(id, idlen, "%s", name);
		return true;
	}
	return false;
}

static bool scan_links(const char *dir, dev_t rdev, bool by_id, char *id,
		       size_t idlen)
{
	char best[NAME_MAX + 1] = "", p[PATH_MAX];
	int best_rank = 99, rank;
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s%s", dir, de->d_name);
		if (stat(p, &st) || !S_ISBLK(st.st_mode) || st.st_rdev != rdev)
			continue;
		rank = by_id ? rank_by_id(de->d_name) : 5;
		if (!rank)
			continue;
		if (!fit(dir, de->d_name, p, sizeof(p)))
			continue;
		/* Best rank; among equals the shortest, then the first name. */
		if (rank < best_rank ||
		    (rank == best_rank && (strlen(de->d_name) < strlen(best) ||
		     (strlen(de->d_name) == strlen(best) &&
		      strcmp(de->d_name, best) < 0)))) {
			best_rank = rank;
			snprintf(best, sizeof(best), "%s", de->d_name);
		}
	}
	closedir(d);
	return best[0] && fit(dir, best, id, idlen);
}

int read_dm_attr(dev_t rdev, const char *attr, char *buf, size_t len)
{
	char p[128];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/dm/%s", major(rdev),
		 minor(rdev), attr);
	f = fopen(p, "r");
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	return n ? 0 : -ENOENT;
}

int origin_choose_id(const char *path, char *id, size_t idlen)
{
	char real[PATH_MAX], buf[256];
	struct stat st;

	if (stat(path, &st)) {
		fr_err("cannot open origin %s: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISREG(st.st_mode)) {
		if (!realpath(path, real)) {
			fr_err("cannot resolve %s: %s", path, strerror(errno));
			return -errno;
		}
		if (strlen(real) >= FR_ORIGIN_ID_LEN || strlen(real) >= idlen) {
			fr_err("origin path %s is longer than the %d bytes the superblock keeps (use --origin-id)",
			       real, FR_ORIGIN_ID_LEN - 1);
			return -ENAMETOOLONG;
		}
		snprintf(id, idlen, "%s", real);
		return 0;
	}
	if (!S_ISBLK(st.st_mode)) {
		fr_err("origin %s is neither a block device nor a regular file",
		       path);
		return -EINVAL;
	}
	if (scan_links(BY_ID, st.st_rdev, true, id, idlen))
		return 0;
	if (!read_dm_attr(st.st_rdev, "uuid", buf, sizeof(buf)) &&
	    fit("", "dm-uuid-", id, idlen) &&
	    strlen(buf) + 8 < FR_ORIGIN_ID_LEN && strlen(buf) + 8 < idlen) {
		snprintf(id, idlen, "dm-uuid-%s", buf);
		return 0;
	}
	if (!read_dm_attr(st.st_rdev, "name", buf, sizeof(buf)) &&
	    strlen(buf) + 8 < FR_ORIGIN_ID_LEN && strlen(buf) + 8 < idlen) {
		snprintf(id, idlen, "dm-name-%s", buf);
		return 0;
	}
	if (scan_links(BY_PATH, st.st_rdev, false, id, idlen))
		return 0;
	if (!realpath(path, real) || strlen(real) >= FR_ORIGIN_ID_LEN ||
	    strlen(real) >= idlen) {
		fr_err("no stable name of 63 bytes or less for origin %s (use --origin-id)",
		       path);
		return -ENAMETOOLONG;
	}
	fr_warn("origin %s has no /dev/disk/by-id or by-path name; recording %s, which may change across boots (see --origin-id)",
		path, real);
	snprintf(id, idlen, "%s", real);
	return 0;
}

/* Find a dm device whose sysfs attribute (name or uuid) equals val. */
static int find_dm_by(const char *attr, const char *val, char *path,
		      size_t plen)
{
	char p[PATH_MAX], buf[256];
	struct dirent *de;
	DIR *d = opendir("/sys/block");
	int r = -ENOENT;
	FILE *f;
	size_t n;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "dm-", 3))
			continue;
		snprintf(p, sizeof(p), "/sys/block/%s/dm/%s", de->d_name, attr);
		f = fopen(p, "r");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		while (n && buf[n - 1] == '\n')
			buf[--n] = 0;
		if (!strcmp(buf, val)) {
			snprintf(path, plen, "/dev/%s", de->d_name);
			r = 0;
			break;
		}
	}
	closedir(d);
	return r;
}

/* Where the origin named by id is now: 0 and its path, or -ENOENT. */
int origin_resolve_id(const char *id, char *path, size_t plen)
{
	struct stat st;

	if (!id[0])
		return -ENOENT;
	if (id[0] == '/') {
		snprintf(path, plen, "%s", id);
		return stat(path, &st) ? -ENOENT : 0;
	}
	if (!strncmp(id, "dev:", 4)) {
		/* The kernel's own "fresh" format records dev:MAJOR:MINOR. */
		unsigned int ma, mi;
		char sys[64], link[PATH_MAX];
		ssize_t n;
		char *b;

		if (sscanf(id + 4, "%u:%u", &ma, &mi) != 2)
			return -EINVAL;
		snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", ma, mi);
		n = readlink(sys, link, sizeof(link) - 1);
		if (n <= 0)
			return -ENOENT;
		link[n] = 0;
		b = strrchr(link, '/');
		b = b ? b + 1 : link;
		if (strlen(b) + 6 > plen)
			return -ENAMETOOLONG;
		memcpy(path, "/dev/", 5);
		memcpy(path + 5, b, strlen(b) + 1);
		return stat(path, &st) ? -ENOENT : 0;
	}
	/* frctl attach: the device-mapper device the PM was put in front of. */
	if (!strncmp(id, FR_ATTACH_ID_PREFIX, strlen(FR_ATTACH_ID_PREFIX)))
		return find_dm_by("name", id + strlen(FR_ATTACH_ID_PREFIX), path,
				  plen);
	if (strchr(id, '/'))
		return -EINVAL;
	snprintf(path, plen, BY_ID "%s", id);
	if (!stat(path, &st))
		return 0;
	if (!strncmp(id, "dm-uuid-", 8))
		return find_dm_by("uuid", id + 8, path, plen);
	if (!strncmp(id, "dm-name-", 8))
		return find_dm_by("name", id + 8, path, plen);
	return -ENOENT;
}

/* Do two paths name the same block device or the same file? */
bool same_device(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) || stat(b, &sb))
		return false;
	if (S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode))
		return sa.st_rdev == sb.st_rdev;
	if (S_ISREG(sa.st_mode) && S_ISREG(sb.st_mode))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return false;
}
