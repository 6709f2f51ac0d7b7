/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * frctl's access to the operating system: block devices, sysfs and
 * libdevmapper. Kept apart from the dm-fr core headers on purpose: it needs
 * <linux/fs.h>, O_DIRECT and <libdevmapper.h>, which bring in
 * <linux/types.h>, whose __le64 clashes with the core's userspace shim
 * (userspace/libfrcore/fr-user.h). Only plain C types cross this interface.
 */
#ifndef FRCTL_SYSDEV_H
#define FRCTL_SYSDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

void fr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Block devices and image files (sysdev.c). */
int dev_size(int fd, const char *path, uint64_t *bytes, bool *blkdev,
	     dev_t *rdev);
int dev_holder(dev_t rdev, char *name, size_t nlen, bool *is_fr);
void dev_drop_cache(int fd);
bool dev_is_dax(dev_t rdev);
int dev_set_nonrot(dev_t rdev);
int read_head(const char *path, void *buf, size_t len, uint64_t *size);
int read_sysfs(const char *path, char *buf, size_t len);
/* fsprobe.c: the end of an ext4, XFS or Btrfs on fd (bytes; 0: none known). */
int fs_end(int fd, uint64_t *end, const char **type);

/* libdevmapper, wrapped (dm.c). */
#define FRCTL_DM_NAME_LEN 128
#define FRCTL_DM_UUID_LEN 129

enum dmw_query {
	DMW_STATUS,
	DMW_TABLE,
};

bool dmw_ready(void);
int dmw_uuid_of(const char *name, char *uuid, size_t len);
int dmw_query(const char *name, enum dmw_query q, char *params, size_t plen,
	      uint64_t *length, char *target, size_t tlen, int *ntargets);
int dmw_list(char ***names, int *count);
int dmw_message(const char *name, const char *msg);
bool dmw_uuid_in_use(const char *dm_uuid, char *name, size_t nlen);
bool dmw_target_registered(const char *target);
int dmw_create(const char *name, const char *dm_uuid, uint64_t len,
	       const char *target, const char *params, dev_t *rdev);
int dmw_create_hidden(const char *name, const char *dm_uuid, uint64_t len,
		      const char *target, const char *params, dev_t *rdev);
int dmw_remove(const char *name, bool retry);

/* A target of a table, as libdevmapper gives and takes it. */
struct dmw_target {
	uint64_t start, len;
	char type[64];
	char *params;
};

struct dmw_info {
	bool suspended, live_table, inactive_table, read_only;
	int open_count;
	dev_t rdev;
};

int dmw_create_hidden_table(const char *name, const char *dm_uuid,
			    const struct dmw_target *t, int n, dev_t *rdev);
int dmw_table_get(const char *name, struct dmw_target **t, int *n);
void dmw_table_free(struct dmw_target *t, int n);
int dmw_info(const char *name, struct dmw_info *di);
int dmw_reload(const char *name, const struct dmw_target *t, int n);
int dmw_suspend(const char *name);
int dmw_suspend_nolockfs(const char *name);
int dmw_resume(const char *name);
int dmw_clear(const char *name);

#endif /* FRCTL_SYSDEV_H */
