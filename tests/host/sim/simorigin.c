// SPDX-License-Identifier: GPL-2.0-only
/* Simulated origin with a volatile write cache; see simorigin.h. */
#include <stdio.h>
#include <stdlib.h>
#include "simorigin.h"
#include "simpm.h"

void so_init(struct simorigin *o, u64 sectors)
{
	u64 i;

	memset(o, 0, sizeof(*o));
	o->sectors = sectors;
	o->media = xcalloc(sectors, SO_SECTOR);
	o->view = xcalloc(sectors, SO_SECTOR);
	o->pick = xmalloc(sectors * sizeof(*o->pick));
	o->picked = xmalloc(sectors * sizeof(*o->picked));
	for (i = 0; i < sectors; i++)
		o->pick[i] = -1;
}

void so_free(struct simorigin *o)
{
	free(o->media);
	free(o->view);
	free(o->cache);
	free(o->pick);
	free(o->picked);
	memset(o, 0, sizeof(*o));
}

void so_write(struct simorigin *o, u64 sector, const void *buf, u32 n)
{
	u32 i;

	if (sector + n > o->sectors) {
		fprintf(stderr, "simorigin: write beyond the end\n");
		abort();
	}
	for (i = 0; i < n; i++) {
		if (o->ncache == o->cap) {
			o->cap = o->cap ? o->cap * 2 : 64;
			o->cache = xrealloc(o->cache, o->cap * sizeof(*o->cache));
		}
		o->cache[o->ncache].sector = sector + i;
		memcpy(o->cache[o->ncache].data, (const u8 *)buf + i * SO_SECTOR,
		       SO_SECTOR);
		o->ncache++;
		memcpy(o->view + (sector + i) * SO_SECTOR,
		       (const u8 *)buf + i * SO_SECTOR, SO_SECTOR);
	}
	o->writes++;
}

void so_flush(struct simorigin *o)
{
	u32 i;

	for (i = 0; i < o->ncache; i++)
		memcpy(o->media + o->cache[i].sector * SO_SECTOR,
		       o->cache[i].data, SO_SECTOR);
	o->ncache = 0;
	o->flushes++;
}

u32 so_units(const struct simorigin *o, struct gen_unit *u, u32 *unit_sector,
	     u32 max)
{
	u32 i, j, n = 0;

	for (i = 0; i < o->ncache; i++) {
		for (j = 0; j < n; j++)
			if (unit_sector[j] == o->cache[i].sector)
				break;
		if (j == n) {
			if (n == max)
				break;
			unit_sector[n] = (u32)o->cache[i].sector;
			u[n].nver = 0;
			u[n].group = -1;
			n++;
		}
		if (u[j].nver < 255)
			u[j].nver++;
	}
	return n;
}

u32 so_version_entry(const struct simorigin *o, u64 sector, u32 v)
{
	u32 i;

	for (i = 0; i < o->ncache; i++)
		if (o->cache[i].sector == sector && !v--)
			return i;
	abort();
}

void so_crash_pick(struct simorigin *o, u64 sector, u32 entry)
{
	if (o->pick[sector] < 0)
		o->picked[o->npicked++] = (u32)sector;
	o->pick[sector] = (int32_t)entry;
}

void so_crash_reset(struct simorigin *o)
{
	while (o->npicked)
		o->pick[o->picked[--o->npicked]] = -1;
}

void so_crash_adopt(struct simorigin *o)
{
	u32 i;

	for (i = 0; i < o->npicked; i++) {
		u64 s = o->picked[i];

		memcpy(o->media + s * SO_SECTOR, o->cache[o->pick[s]].data,
		       SO_SECTOR);
	}
	so_crash_reset(o);
	o->ncache = 0;
	memcpy(o->view, o->media, o->sectors * SO_SECTOR);
}
