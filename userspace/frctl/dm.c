// SPDX-License-Identifier: GPL-2.0-only
/*
 * libdevmapper, wrapped: the few device-mapper operations frctl needs, with
 * udev synchronisation (cookies) as dmsetup does it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/sysmacros.h>
#include <libdevmapper.h>

#include "sysdev.h"

/* libdevmapper's messages, with frctl's prefix; debug chatter dropped. */
static void __attribute__((format(printf, 5, 6)))
dm_log(int level, const char *file, int line, int dm_errno,
		   const char *fmt, ...)
{
	va_list ap;

	(void)file;
	(void)line;
	(void)dm_errno;
	if ((level & 7) > 4)	/* above _LOG_WARN */
		return;
	va_start(ap, fmt);
	fputs("frctl: device-mapper: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

bool dmw_ready(void)
{
	static int ok = -1;
	char v[64];

	if (ok >= 0)
		return ok;
	dm_log_with_errno_init(dm_log);
	ok = dm_driver_version(v, sizeof(v));
	if (!ok)
		fr_err("cannot talk to device-mapper (is the dm-mod module loaded, and are you root?)");
	return ok;
}

int dmw_uuid_of(const char *name, char *uuid, size_t len)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_INFO);
	struct dm_info info;
	const char *u;
	int r = -EIO;

	if (!dmt)
		return -ENOMEM;
	if (dm_task_set_name(dmt, name) && dm_task_run(dmt) &&
	    dm_task_get_info(dmt, &info)) {
		r = info.exists ? 0 : -ENOENT;
		u = dm_task_get_uuid(dmt);
		snprintf(uuid, len, "%s", u ? u : "");
	}
	dm_task_destroy(dmt);
	return r;
}

/* The first target of a device: its type, params and length. */
int dmw_query(const char *name, enum dmw_query q, char *out, size_t outlen,
	      uint64_t *length, char *target, size_t tlen, int *ntargets)
{
	struct dm_task *dmt;
	struct dm_info info;
	uint64_t start, len;
	char *ttype = NULL, *params = NULL;
	void *next = NULL;
	int n = 0;

	dmt = dm_task_create(q == DMW_STATUS ? DM_DEVICE_STATUS :
			     DM_DEVICE_TABLE);
	if (!dmt)
		return -ENOMEM;
	if (!dm_task_set_name(dmt, name) || !dm_task_run(dmt) ||
	    !dm_task_get_info(dmt, &info)) {
		dm_task_destroy(dmt);
		return -EIO;
	}
	if (!info.exists) {
		dm_task_destroy(dmt);
		return -ENOENT;
	}
	do {
		next = dm_get_next_target(dmt, next, &start, &len, &ttype,
					  &params);
		if (!ttype)
			break;
		if (!n) {
			snprintf(out, outlen, "%s", params ? params : "");
			snprintf(target, tlen, "%s", ttype);
			*length = len;
		}
		n++;
	} while (next);
	*ntargets = n;
	dm_task_destroy(dmt);
	return 0;
}

/* Names of every device-mapper device. */
int dmw_list(char ***names, int *count)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_LIST);
	struct dm_names *nl;
	unsigned int next = 0;
	int n = 0, cap = 8;
	char **v;

	*names = NULL;
	*count = 0;
	if (!dmt)
		return -ENOMEM;
	if (!dm_task_run(dmt) || !(nl = dm_task_get_names(dmt))) {
		dm_task_destroy(dmt);
		return -EIO;
	}
	v = calloc((size_t)cap, sizeof(char *));
	if (!v) {
		dm_task_destroy(dmt);
		return -ENOMEM;
	}
	if (nl->dev) {
		do {
			nl = (struct dm_names *)((char *)nl + next);
			if (n == cap) {
				char **nv = realloc(v, (size_t)cap * 2 * sizeof(char *));

				if (!nv)
					break;
				v = nv;
				cap *= 2;
			}
			v[n++] = strdup(nl->name);
			next = nl->next;
		} while (next);
	}
	dm_task_destroy(dmt);
	*names = v;
	*count = n;
	return 0;
}

int dmw_message(const char *name, const char *msg)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_TARGET_MSG);
	int ok;

	if (!dmt)
		return -ENOMEM;
	ok = dm_task_set_name(dmt, name) && dm_task_set_sector(dmt, 0) &&
	     dm_task_set_message(dmt, msg) && dm_task_run(dmt);
	dm_task_destroy(dmt);
	if (!ok) {
		fr_err("message '%s' to %s failed (the kernel log says why)",
		       msg, name);
		return -EIO;
	}
	return 0;
}

bool dmw_uuid_in_use(const char *dm_uuid, char *name, size_t nlen)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_INFO);
	struct dm_info info;
	bool found = false;
	const char *n;

	if (!dmt)
		return false;
	if (dm_task_set_uuid(dmt, dm_uuid) && dm_task_run(dmt) &&
	    dm_task_get_info(dmt, &info) && info.exists) {
		found = true;
		n = dm_task_get_name(dmt);
		snprintf(name, nlen, "%s", n ? n : "?");
	}
	dm_task_destroy(dmt);
	return found;
}

bool dmw_target_registered(const char *target)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_LIST_VERSIONS);
	struct dm_versions *v, *last;
	bool found = false;

	if (!dmt)
		return false;
	if (dm_task_run(dmt) && (v = dm_task_get_versions(dmt))) {
		do {
			last = v;
			if (!strcmp(v->name, target))
				found = true;
			v = (struct dm_versions *)((char *)v + v->next);
		} while (last != v);
	}
	dm_task_destroy(dmt);
	return found;
}

static int add_targets(struct dm_task *dmt, const struct dmw_target *t,
		       int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!dm_task_add_target(dmt, t[i].start, t[i].len, t[i].type,
					t[i].params))
			return 0;
	return 1;
}

static int create_flags(const char *name, const char *dm_uuid,
			const struct dmw_target *t, int n, uint16_t flags,
			dev_t *rdev)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_CREATE);
	struct dm_info info = { 0 };
	uint32_t cookie = 0;
	int ok;

	if (!dmt)
		return -ENOMEM;
	ok = dm_task_set_name(dmt, name) && dm_task_set_uuid(dmt, dm_uuid) &&
	     add_targets(dmt, t, n) &&
	     dm_task_set_cookie(dmt, &cookie, flags) && dm_task_run(dmt);
	/* The device exists even if its number cannot be had: rdev 0 then. */
	*rdev = ok && dm_task_get_info(dmt, &info) && info.exists ?
		makedev(info.major, info.minor) : 0;
	if (cookie)
		(void)dm_udev_wait(cookie);
	dm_task_destroy(dmt);
	return ok ? 0 : -EIO;
}

int dmw_create(const char *name, const char *dm_uuid, uint64_t len,
	       const char *target, const char *params, dev_t *rdev)
{
	struct dmw_target t = { 0, len, "", (char *)params };

	snprintf(t.type, sizeof(t.type), "%s", target);
	return create_flags(name, dm_uuid, &t, 1, 0, rdev);
}

/*
 * A device no udev rule but device-mapper's own looks at: not probed, no
 * links, not a systemd device (the origin's guard).
 */
int dmw_create_hidden(const char *name, const char *dm_uuid, uint64_t len,
		      const char *target, const char *params, dev_t *rdev)
{
	struct dmw_target t = { 0, len, "", (char *)params };

	snprintf(t.type, sizeof(t.type), "%s", target);
	return dmw_create_hidden_table(name, dm_uuid, &t, 1, rdev);
}

int dmw_create_hidden_table(const char *name, const char *dm_uuid,
			    const struct dmw_target *t, int n, dev_t *rdev)
{
	return create_flags(name, dm_uuid, t, n,
			    DM_UDEV_DISABLE_DISK_RULES_FLAG |
			    DM_UDEV_DISABLE_OTHER_RULES_FLAG, rdev);
}

/* Every target of a device's live table; free with dmw_table_free. */
int dmw_table_get(const char *name, struct dmw_target **out, int *count)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_TABLE);
	struct dmw_target *t = NULL, *nt;
	struct dm_info info;
	uint64_t start, len;
	char *ttype = NULL, *params = NULL;
	void *next = NULL;
	int n = 0, r = 0;

	*out = NULL;
	*count = 0;
	if (!dmt)
		return -ENOMEM;
	if (!dm_task_set_name(dmt, name) || !dm_task_run(dmt) ||
	    !dm_task_get_info(dmt, &info)) {
		dm_task_destroy(dmt);
		return -EIO;
	}
	if (!info.exists) {
		dm_task_destroy(dmt);
		return -ENOENT;
	}
	do {
		next = dm_get_next_target(dmt, next, &start, &len, &ttype,
					  &params);
		if (!ttype)
			break;
		nt = realloc(t, (size_t)(n + 1) * sizeof(*t));
		if (!nt) {
			r = -ENOMEM;
			break;
		}
		t = nt;
		t[n].start = start;
		t[n].len = len;
		snprintf(t[n].type, sizeof(t[n].type), "%s", ttype);
		t[n].params = strdup(params ? params : "");
		if (!t[n].params) {
			r = -ENOMEM;
			break;
		}
		n++;
	} while (next);
	dm_task_destroy(dmt);
	if (r) {
		dmw_table_free(t, n);
		return r;
	}
	*out = t;
	*count = n;
	return 0;
}

void dmw_table_free(struct dmw_target *t, int n)
{
	int i;

	for (i = 0; i < n && t; i++)
		free(t[i].params);
	free(t);
}

int dmw_info(const char *name, struct dmw_info *di)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_INFO);
	struct dm_info info;
	int r = -EIO;

	memset(di, 0, sizeof(*di));
	if (!dmt)
		return -ENOMEM;
	if (dm_task_set_name(dmt, name) && dm_task_run(dmt) &&
	    dm_task_get_info(dmt, &info)) {
		r = info.exists ? 0 : -ENOENT;
		di->suspended = info.suspended;
		di->live_table = info.live_table;
		di->inactive_table = info.inactive_table;
		di->read_only = info.read_only;
		di->open_count = info.open_count;
		di->rdev = makedev(info.major, info.minor);
	}
	dm_task_destroy(dmt);
	return r;
}

/* Load a table into the device's inactive slot: the live one goes on. */
int dmw_reload(const char *name, const struct dmw_target *t, int n)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_RELOAD);
	int ok;

	if (!dmt)
		return -ENOMEM;
	ok = dm_task_set_name(dmt, name) && add_targets(dmt, t, n) &&
	     dm_task_run(dmt);
	dm_task_destroy(dmt);
	return ok ? 0 : -EIO;
}

/* Suspend (I/O in flight completes, new I/O waits), resume, clear. */
static int simple_task(const char *name, int type, bool udev)
{
	struct dm_task *dmt = dm_task_create(type);
	uint32_t cookie = 0;
	int ok;

	if (!dmt)
		return -ENOMEM;
	ok = dm_task_set_name(dmt, name) &&
	     (!udev || dm_task_set_cookie(dmt, &cookie, 0)) &&
	     dm_task_run(dmt);
	if (cookie)
		(void)dm_udev_wait(cookie);
	dm_task_destroy(dmt);
	return ok ? 0 : -EIO;
}

int dmw_suspend(const char *name)
{
	return simple_task(name, DM_DEVICE_SUSPEND, false);
}

/*
 * A suspend that does not freeze the file system on the device: a table
 * swap needs only the I/O in flight drained, and a file system whose
 * device fails (a PM being retired) can fail its freeze, and the suspend.
 */
int dmw_suspend_nolockfs(const char *name)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_SUSPEND);
	int ok;

	if (!dmt)
		return -ENOMEM;
	ok = dm_task_set_name(dmt, name) && dm_task_skip_lockfs(dmt) &&
	     dm_task_run(dmt);
	dm_task_destroy(dmt);
	return ok ? 0 : -EIO;
}

int dmw_resume(const char *name)
{
	return simple_task(name, DM_DEVICE_RESUME, true);
}

int dmw_clear(const char *name)
{
	return simple_task(name, DM_DEVICE_CLEAR, false);
}

int dmw_remove(const char *name, bool retry)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_REMOVE);
	uint32_t cookie = 0;
	int ok;

	if (!dmt)
		return -ENOMEM;
	ok = dm_task_set_name(dmt, name) &&
	     (!retry || dm_task_retry_remove(dmt)) &&
	     dm_task_set_cookie(dmt, &cookie, 0) && dm_task_run(dmt);
	if (cookie)
		(void)dm_udev_wait(cookie);
	dm_task_destroy(dmt);
	return ok ? 0 : -EIO;
}
