// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where a file system on a device ends, read from its own superblock: what
 * frctl resize must not cut. ext2/3/4, XFS and Btrfs, the file systems
 * dm-fr is tested under; anything else is unknown (0).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysdev.h"

/*
 * Read len bytes at off (within one 4 KiB block) through an aligned bounce
 * buffer, so that fd may be O_DIRECT: a mounted file system writes its
 * superblock past the page cache.
 */
static int read_at(int fd, uint64_t off, void *buf, size_t len)
{
	uint64_t base = off & ~4095ULL;
	void *blk;
	int r = -EIO;

	if (off - base + len > 4096 || posix_memalign(&blk, 4096, 4096))
		return -EINVAL;
	if (pread(fd, blk, 4096, (off_t)base) == 4096) {
		memcpy(buf, (char *)blk + (off - base), len);
		r = 0;
	}
	free(blk);
	return r;
}

static uint32_t le32_at(const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, sizeof(v));
	return le32toh(v);
}

static uint64_t le64_at(const uint8_t *b)
{
	uint64_t v;

	memcpy(&v, b, sizeof(v));
	return le64toh(v);
}

static uint64_t be64_at(const uint8_t *b)
{
	uint64_t v;

	memcpy(&v, b, sizeof(v));
	return be64toh(v);
}

static uint32_t be32_at(const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, sizeof(v));
	return be32toh(v);
}

int fs_end(int fd, uint64_t *end, const char **type)
{
	uint8_t b[1024];

	*end = 0;
	*type = NULL;
	/* ext2/3/4: the superblock at 1 KiB, magic 0xEF53 at 56. */
	if (!read_at(fd, 1024, b, sizeof(b)) && b[56] == 0x53 && b[57] == 0xef) {
		uint32_t log = le32_at(b + 24);
		uint64_t blocks = le32_at(b + 4);

		if (log > 6)
			return -EINVAL;
		if (le32_at(b + 96) & 0x80)	/* INCOMPAT_64BIT */
			blocks |= (uint64_t)le32_at(b + 0x150) << 32;
		*end = blocks << (10 + log);
		*type = "ext4";
		return 0;
	}
	/* XFS: "XFSB" at 0, sb_blocksize (be32) at 4, sb_dblocks (be64) at 8. */
	if (!read_at(fd, 0, b, 16) && !memcmp(b, "XFSB", 4)) {
		uint32_t bs = be32_at(b + 4);

		if (bs < 512 || bs > 65536 || (bs & (bs - 1)))
			return -EINVAL;
		*end = be64_at(b + 8) * bs;
		*type = "xfs";
		return 0;
	}
	/*
	 * Btrfs: the superblock at 64 KiB, "_BHRfS_M" at 0x40; this device's
	 * size is its dev_item's total_bytes (0xc9 + 8: the file system's
	 * total_bytes at 0x70 sums every device).
	 */
	if (!read_at(fd, 65536, b, 0xd9) && !memcmp(b + 0x40, "_BHRfS_M", 8)) {
		*end = le64_at(b + 0xd1);
		*type = "btrfs";
		return 0;
	}
	return 0;
}
