// SPDX-License-Identifier: GPL-2.0-only
/*
 * One dm-fr device as the kernel sees it (its status and table parsed), by
 * name, and the list of them: what remove, flush, status and autoactivate
 * look at through libdevmapper.
 */

#include <json-c/json.h>

#include "frctl.h"

/* 0 and fills d (d->is_fr tells whether it is ours), -ENOENT, or -EIO. */
int fr_dev_get(const char *name, struct fr_dev *d)
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

int get_fr_dev(const char *name, struct fr_dev *d)
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
int list_fr_devs(char ***names, int *count)
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
