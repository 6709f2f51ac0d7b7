// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one reader of a PM's superblock. Every verb that looks at a PM asks
 * sb_classify() what its first bytes are, so that probe, create,
 * autoactivate, check, repair and dump agree on what "not dm-fr",
 * "unsupported", "damaged" and "truncated" mean; the decoding itself is the
 * core's (fr_sb_decode), the same as the kernel's.
 *
 * sb_read() reads the head of a device or image past the page cache, for
 * the verbs that need only the superblock's facts. meta_open() classifies the
 * superblock of an image it has mapped, then attaches the cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frctl.h"

/* read_head() reads this much: one aligned block holds the superblock. */
#define SB_HEAD_BYTES	FR_SB_RESERVED

/* Valid bytes this frctl cannot interpret: a newer format, or features. */
static bool sb_newer(const struct fr_sb_disk *sb)
{
	return le32_to_cpu(sb->version) != FR_FORMAT_VERSION ||
	       (le64_to_cpu(sb->incompat_features) & ~FR_INCOMPAT_SUPPORTED);
}

/*
 * Why a superblock that fr_sb_decode() refused was refused. Only a
 * checksum-valid superblock is believed about its version or its size: a
 * damaged one may say anything.
 */
static enum sb_state sb_refusal(const struct fr_sb_disk *sb, u64 dev_bytes)
{
	if (fr_sb_csum(sb) != le32_to_cpu(sb->csum))
		return SB_DAMAGED;
	if (sb_newer(sb))
		return SB_UNSUPPORTED;
	if (le64_to_cpu(sb->pm_bytes) > dev_bytes)
		return SB_TRUNCATED;
	return SB_DAMAGED;
}

/*
 * What a superblock says. sb holds the first bytes of the PM, have of them
 * read from it (the rest zero); dev_bytes is the size of the device or
 * image. Sets *why for every state but SB_OK, and g for SB_OK.
 */
enum sb_state sb_classify(const struct fr_sb_disk *sb, u64 have,
			  u64 dev_bytes, struct fr_geometry *g,
			  const char **why)
{
	if (have < sizeof(sb->magic)) {
		*why = "too small to hold a dm-fr superblock";
		return SB_NOT_FR;
	}
	if (le64_to_cpu(sb->magic) != FR_SB_MAGIC) {
		*why = "no dm-fr superblock (bad magic)";
		return SB_NOT_FR;
	}
	if (have < FR_SB_BYTES) {
		*why = "PM too small for a superblock";
		return SB_TRUNCATED;
	}
	if (!fr_sb_decode(sb, dev_bytes, g, why))
		return SB_OK;
	return sb_refusal(sb, dev_bytes);
}

/* The facts the verbs take from a decoded superblock. */
static void sb_facts(struct sb_info *si, const struct fr_sb_disk *sb)
{
	si->version = le32_to_cpu(sb->version);
	memcpy(si->uuid, sb->uuid, sizeof(si->uuid));
	uuid_hex(sb->uuid, si->uuid_hex);
	/* NUL-padded on PM, but a full field has no terminator. */
	memcpy(si->origin_id, sb->origin_id, sizeof(si->origin_id));
	si->origin_id[sizeof(si->origin_id) - 1] = 0;
}

/* A path that cannot be read: gone, or an I/O error (err is an errno). */
static enum sb_state sb_unreadable(struct sb_info *si, int err)
{
	si->err = err;
	si->why = strerror(err);
	si->state = err == ENOENT ? SB_NOT_FOUND : SB_IO_ERROR;
	return si->state;
}

/*
 * Read and judge the superblock at the head of a device or image file: for
 * the verbs that need its facts, not the tags. Fills si; returns si->state.
 */
enum sb_state sb_read(const char *path, struct sb_info *si)
{
	void *buf;
	int n;

	memset(si, 0, sizeof(*si));
	/* Aligned, for the O_DIRECT read that bypasses a stale page cache. */
	if (posix_memalign(&buf, SB_HEAD_BYTES, SB_HEAD_BYTES))
		return sb_unreadable(si, ENOMEM);
	n = read_head(path, buf, SB_HEAD_BYTES, &si->dev_bytes);
	if (n < 0) {
		free(buf);
		return sb_unreadable(si, -n);
	}
	si->state = sb_classify(buf, (u64)n, si->dev_bytes, &si->geo,
				&si->why);
	if (si->state == SB_OK)
		sb_facts(si, buf);
	free(buf);
	return si->state;
}

/* What a state means, as every verb words it before the reason. */
const char *sb_state_text(enum sb_state s)
{
	switch (s) {
	case SB_OK:
		return "dm-fr PM";
	case SB_NOT_FOUND:
	case SB_IO_ERROR:
		return "cannot read";
	case SB_NOT_FR:
		return "not a dm-fr PM";
	case SB_UNSUPPORTED:
		return "a dm-fr superblock this frctl does not support";
	case SB_DAMAGED:
	case SB_TRUNCATED:
	default:
		return "damaged dm-fr superblock";
	}
}

/* What to add after the reason: the likely cause of a truncated PM. */
const char *sb_state_hint(enum sb_state s)
{
	if (s != SB_TRUNCATED)
		return "";
	return " (the device or image is shorter than the cache it describes: truncated?)";
}

/* fsck's exit codes: a bad superblock is an error left uncorrected. */
int sb_state_exit(enum sb_state s)
{
	switch (s) {
	case SB_OK:
		return FR_EXIT_OK;
	case SB_DAMAGED:
	case SB_TRUNCATED:
		return FR_EXIT_UNCORRECTED;
	default:
		return FR_EXIT_OPERATIONAL;
	}
}
