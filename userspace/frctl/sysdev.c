// SPDX-License-Identifier: GPL-2.0-only
/*
 * Block devices, image files and sysfs: sizes, holders, the page cache,
 * reads past it. No dm-fr core headers here (see sysdev.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/fs.h>

#include "sysdev.h"

int dev_size(int fd, const char *path, uint64_t *bytes, bool *blkdev, dev_t *rdev)
{
	struct stat st;

	if (fstat(fd, &st)) {
		fr_err("cannot stat %s: %s", path, strerror(errno));
		return -errno;
	}
	*rdev = 0;
	if (S_ISBLK(st.st_mode)) {
		unsigned long long b;

		if (ioctl(fd, BLKGETSIZE64, &b)) {
			fr_err("cannot get the size of %s: %s", path,
			       strerror(errno));
			return -errno;
		}
		*bytes = b;
		*blkdev = true;
		*rdev = st.st_rdev;
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		*bytes = (uint64_t)st.st_size;
		*blkdev = false;
		return 0;
	}
	if (S_ISCHR(st.st_mode))
		fr_err("%s is a character device (a devdax namespace?): dm-fr needs a block device, e.g. an fsdax namespace (ndctl create-namespace -m fsdax)",
		       path);
	else
		fr_err("%s is neither a block device nor a regular file", path);
	return -EINVAL;
}

int read_sysfs(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

/*
 * Who holds a block device: the first holder in sysfs, by its dm name when it
 * is a device-mapper device. Returns 0 and fills name if one was found.
 */
int dev_holder(dev_t rdev, char *name, size_t nlen, bool *is_fr)
{
	char dir[PATH_MAX], p[PATH_MAX + 300], uuid[256];
	struct dirent *de;
	DIR *d;
	int r = -ENOENT;

	*is_fr = false;
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u/holders",
		 major(rdev), minor(rdev));
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s/dm/name", dir, de->d_name);
		if (read_sysfs(p, name, nlen))
			snprintf(name, nlen, "%s", de->d_name);
		snprintf(p, sizeof(p), "%s/%s/dm/uuid", dir, de->d_name);
		if (!read_sysfs(p, uuid, sizeof(uuid)) &&
		    !strncmp(uuid, "FR-", 3))
			*is_fr = true;
		r = 0;
		break;
	}
	closedir(d);
	return r;
}

/*
 * Drop a block device's page cache (after syncing it). The kernel target
 * reaches the PM through DAX, past this cache, so a page an earlier frctl
 * run cached would otherwise show a stale view. Needs CAP_SYS_ADMIN; without
 * it the cache stays, which only matters while a target has the PM.
 */
void dev_drop_cache(int fd)
{
	(void)ioctl(fd, BLKFLSBUF, 0);
}

bool dev_is_dax(dev_t rdev)
{
	char p[96], v[8] = "";
	FILE *f;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/queue/dax", major(rdev),
		 minor(rdev));
	f = fopen(p, "r");
	if (!f)
		return false;
	if (!fgets(v, sizeof(v), f))
		v[0] = 0;
	fclose(f);
	return v[0] == '1';
}

/*
 * Mark a block device not rotational (queue/rotational = 0). Before Linux
 * 6.11 a device-mapper target cannot say so itself, and a dm device inherits
 * the flag from the devices it maps (for dm-fr, the origin), though its
 * writes go to PM; file systems read the flag at mount (btrfs picks its ssd
 * mode by it). The udev rule 11-dm-fr.rules does the same on every
 * activation.
 */
int dev_set_nonrot(dev_t rdev)
{
	char p[96];
	FILE *f;
	int r = 0;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/queue/rotational",
		 major(rdev), minor(rdev));
	f = fopen(p, "w");
	if (!f)
		return -errno;
	if (fputs("0\n", f) < 0)
		r = -EIO;
	if (fclose(f) && !r)
		r = -errno;
	return r;
}

/* Read the first 4 KiB past the page cache when the device allows it. */
int read_head(const char *path, void *buf, size_t len, uint64_t *size)
{
	bool blk;
	dev_t rdev;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
	if (fd < 0 && errno == EINVAL)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (dev_size(fd, path, size, &blk, &rdev)) {
		close(fd);
		return -EINVAL;
	}
	n = pread(fd, buf, len, 0);
	if (n < 0 && errno == EINVAL) {
		/* O_DIRECT refused at read time (some file systems). */
		close(fd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		n = pread(fd, buf, len, 0);
	}
	close(fd);
	if (n < 0)
		return -errno;
	if ((size_t)n < len)
		memset((char *)buf + n, 0, len - (size_t)n);
	return (int)n;
}

