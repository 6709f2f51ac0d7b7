// SPDX-License-Identifier: GPL-2.0-only
/*
 * Opening a PM device or an image file: size, exclusivity, mapping.
 *
 * A block device is opened O_EXCL (as mkfs and fsck do), which fails with
 * EBUSY while the kernel holds it: an active dm-fr table, a mounted file
 * system. Its page cache is dropped (BLKFLSBUF) before it is mapped and after
 * it was written, because the kernel target reads and writes the PM through
 * DAX, past the block device's page cache: a page cached by an earlier frctl
 * run would otherwise show a stale view.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frctl.h"

static void explain_busy(const char *path, dev_t rdev, bool force_hint)
{
	char holder[256];
	bool is_fr;

	if (!dev_holder(rdev, holder, sizeof(holder), &is_fr))
		fr_err("%s is in use by %s device '%s'%s", path,
		       is_fr ? "the dm-fr" : "the", holder,
		       force_hint ? " (--force to look at it anyway, read-only)" :
		       " (remove it first)");
	else
		fr_err("%s is in use (mounted, or opened exclusively by another program)%s",
		       path, force_hint ? " (--force to look at it anyway, read-only)" : "");
}

static void drop_page_cache(struct fr_image *im)
{
	if (im->blkdev)
		dev_drop_cache(im->fd);
}

int image_open(struct fr_image *im, const char *path, unsigned int flags)
{
	int oflags = (flags & IMG_WRITE) ? O_RDWR : O_RDONLY;
	struct stat st;
	int r;

	memset(im, 0, sizeof(*im));
	im->path = path;
	im->fd = -1;
	im->flags = flags;
	if (stat(path, &st)) {
		fr_err("cannot open %s: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISBLK(st.st_mode) && (flags & IMG_EXCL)) {
		im->fd = open(path, oflags | O_EXCL | O_CLOEXEC);
		if (im->fd < 0 && errno == EBUSY) {
			if ((flags & IMG_FORCE) && !(flags & IMG_WRITE)) {
				im->fd = open(path, oflags | O_CLOEXEC);
				im->busy = true;
			} else {
				explain_busy(path, st.st_rdev,
					     !(flags & IMG_WRITE));
				return -EBUSY;
			}
		}
	} else {
		im->fd = open(path, oflags | O_CLOEXEC);
	}
	if (im->fd < 0) {
		r = -errno;
		fr_err("cannot open %s: %s%s", path, strerror(errno),
		       errno == EACCES || errno == EPERM ?
		       " (frctl needs root to open block devices)" : "");
		return r;
	}
	r = dev_size(im->fd, path, &im->size, &im->blkdev, &im->rdev);
	if (r)
		goto fail;
	if (!im->blkdev && (flags & IMG_WRITE) &&
	    flock(im->fd, LOCK_EX | LOCK_NB)) {
		r = -errno;
		fr_err("%s is locked by another frctl", path);
		goto fail;
	}
	if (!im->size) {
		fr_err("%s is empty", path);
		r = -EINVAL;
		goto fail;
	}
	if (im->size > (u64)SIZE_MAX / 2) {
		fr_err("%s is too large to map", path);
		r = -EFBIG;
		goto fail;
	}
	drop_page_cache(im);
	im->map = mmap(NULL, im->size, PROT_READ |
		       ((flags & IMG_WRITE) ? PROT_WRITE : 0), MAP_SHARED,
		       im->fd, 0);
	if (im->map == MAP_FAILED) {
		r = -errno;
		im->map = NULL;
		fr_err("cannot map %s: %s", path, strerror(errno));
		goto fail;
	}
	if (flags & IMG_WRITE) {
		frctl_pm.sync_base = im->map;
		frctl_pm.sync_len = im->size;
	}
	return 0;
fail:
	close(im->fd);
	im->fd = -1;
	return r;
}

/* Everything written so far reaches the device; 0 or -errno. */
int image_sync(struct fr_image *im)
{
	if (!(im->flags & IMG_WRITE))
		return 0;
	if (msync(im->map, im->size, MS_SYNC) && !frctl_pm.error)
		frctl_pm.error = errno;
	if (fsync(im->fd) && !frctl_pm.error)
		frctl_pm.error = errno;
	if (frctl_pm.error) {
		fr_err("writing %s failed: %s", im->path,
		       strerror(frctl_pm.error));
		return -frctl_pm.error;
	}
	return 0;
}

void image_close(struct fr_image *im)
{
	if (im->map) {
		if (frctl_pm.sync_base == im->map) {
			frctl_pm.sync_base = NULL;
			frctl_pm.sync_len = 0;
		}
		munmap(im->map, im->size);
		im->map = NULL;
	}
	if (im->fd >= 0) {
		if (im->flags & IMG_WRITE)
			drop_page_cache(im);
		close(im->fd);
		im->fd = -1;
	}
}
