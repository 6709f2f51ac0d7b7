// SPDX-License-Identifier: GPL-2.0-only
/*
 * Simulated persistent memory: the userspace fr_pm_* primitives of the crash
 * simulator and the unit tests. See simpm.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include "simpm.h"

struct simpm *simpm_cur;

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "out of memory\n");
		abort();
	}
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);

	if (!p) {
		fprintf(stderr, "out of memory\n");
		abort();
	}
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		abort();
	}
	return p;
}

static u64 nslots_of(const struct simpm *pm)
{
	return pm->data_off / 8 + (pm->size - pm->data_off) / SIMPM_LINE;
}

void simpm_init(struct simpm *pm, u8 *view, u8 *media, u64 size, u64 data_off)
{
	u64 i, n;

	memset(pm, 0, sizeof(*pm));
	if (data_off % SIMPM_LINE || size % SIMPM_LINE || data_off > size) {
		fprintf(stderr, "simpm: bad layout %llu/%llu\n",
			(unsigned long long)data_off, (unsigned long long)size);
		abort();
	}
	pm->view = view;
	pm->media = media;
	pm->size = size;
	pm->data_off = data_off;
	n = nslots_of(pm);
	pm->unit_of = xmalloc(n * sizeof(*pm->unit_of));
	for (i = 0; i < n; i++)
		pm->unit_of[i] = -1;
}

void simpm_epoch_free(struct simpm_epoch *ep)
{
	free(ep->units);
	free(ep->vals);
	memset(ep, 0, sizeof(*ep));
}

void simpm_free(struct simpm *pm)
{
	simpm_epoch_free(&pm->ep);
	free(pm->unit_of);
	pm->unit_of = NULL;
}

static u64 slot_index(const struct simpm *pm, const struct simpm_unit *u)
{
	return u->kind == SIMPM_WORD ? u->idx :
	       pm->data_off / 8 + (u->idx - pm->data_off / SIMPM_LINE);
}

void simpm_reset_pending(struct simpm *pm)
{
	u32 i;

	for (i = 0; i < pm->ep.nunits; i++)
		pm->unit_of[slot_index(pm, &pm->ep.units[i])] = -1;
	pm->ep.nunits = 0;
	pm->ep.nvals = 0;
}

void simpm_undo_log(struct simpm_undo *undo, u8 *buf, u32 word)
{
	if (undo->n == undo->cap) {
		undo->cap = undo->cap ? undo->cap * 2 : 256;
		undo->e = xrealloc(undo->e, undo->cap * sizeof(*undo->e));
	}
	undo->e[undo->n].word = word;
	memcpy(&undo->e[undo->n].old, buf + (u64)word * 8, 8);
	undo->n++;
}

void simpm_undo_to(struct simpm_undo *undo, u8 *buf, u32 n)
{
	while (undo->n > n) {
		undo->n--;
		memcpy(buf + (u64)undo->e[undo->n].word * 8,
		       &undo->e[undo->n].old, 8);
	}
}

void simpm_undo_free(struct simpm_undo *undo)
{
	free(undo->e);
	memset(undo, 0, sizeof(*undo));
}

void simpm_apply_unit(u8 *buf, const struct simpm_epoch *ep,
		      const struct simpm_unit *u, u32 v,
		      struct simpm_undo *undo)
{
	u32 w, nw = simpm_unit_words(u);
	u64 off = simpm_unit_off(u);

	if (undo)
		for (w = 0; w < nw; w++)
			simpm_undo_log(undo, buf, (u32)(off / 8) + w);
	memcpy(buf + off, &ep->vals[u->ver[v]], nw * 8);
}

void simpm_epoch_copy(struct simpm_epoch *dst, const struct simpm_epoch *src)
{
	if (dst->cap_units < src->nunits) {
		dst->cap_units = src->nunits;
		dst->units = xrealloc(dst->units,
				      dst->cap_units * sizeof(*dst->units));
	}
	if (dst->cap_vals < src->nvals) {
		dst->cap_vals = src->nvals;
		dst->vals = xrealloc(dst->vals, dst->cap_vals * sizeof(u64));
	}
	dst->nunits = src->nunits;
	dst->nvals = src->nvals;
	if (src->nunits)
		memcpy(dst->units, src->units, src->nunits * sizeof(*dst->units));
	if (src->nvals)
		memcpy(dst->vals, src->vals, src->nvals * sizeof(u64));
}

void simpm_set_pending(struct simpm *pm, const struct simpm_epoch *ep)
{
	u32 i;

	simpm_reset_pending(pm);
	simpm_epoch_copy(&pm->ep, ep);
	for (i = 0; i < pm->ep.nunits; i++)
		pm->unit_of[slot_index(pm, &pm->ep.units[i])] = (int32_t)i;
}

static u32 pool_add(struct simpm_epoch *ep, const void *src, u32 nw)
{
	u32 at;

	if (ep->nvals + nw > ep->cap_vals) {
		ep->cap_vals = ep->cap_vals ? ep->cap_vals * 2 : 1024;
		while (ep->cap_vals < ep->nvals + nw)
			ep->cap_vals *= 2;
		ep->vals = xrealloc(ep->vals, ep->cap_vals * sizeof(u64));
	}
	at = ep->nvals;
	memcpy(&ep->vals[at], src, nw * 8);
	ep->nvals += nw;
	return at;
}

/* Record the current content of a unit (after a store) as a new version. */
static void record_unit(struct simpm *pm, u8 kind, u32 idx)
{
	struct simpm_epoch *ep = &pm->ep;
	struct simpm_unit tmp = { .idx = idx, .kind = kind };
	struct simpm_unit *u;
	u64 slot = slot_index(pm, &tmp);
	int32_t ui = pm->unit_of[slot];
	u32 at;

	if (ui < 0) {
		if (ep->nunits == ep->cap_units) {
			ep->cap_units = ep->cap_units ? ep->cap_units * 2 : 256;
			ep->units = xrealloc(ep->units,
					     ep->cap_units * sizeof(*ep->units));
		}
		ui = (int32_t)ep->nunits++;
		ep->units[ui] = tmp;
		pm->unit_of[slot] = ui;
	}
	u = &ep->units[ui];
	at = pool_add(ep, pm->view + simpm_unit_off(u), simpm_unit_words(u));
	if (u->nver < SIMPM_MAXV)
		u->ver[u->nver++] = at;
	else
		u->ver[SIMPM_MAXV - 1] = at;	/* keep the first ones + last */
}

static u64 check_range(const struct simpm *pm, const void *p, size_t len,
		       const char *what)
{
	const u8 *b = p;

	if (!pm || b < pm->view || b + len > pm->view + pm->size ||
	    ((uintptr_t)b & 7) || (len & 7)) {
		fprintf(stderr, "simpm: %s outside PM or unaligned (%p, %zu)\n",
			what, p, len);
		abort();
	}
	return (u64)(b - pm->view);
}

static void note_store(struct simpm *pm, u64 off, size_t len)
{
	u64 o, end = off + len;

	pm->stores++;
	if (pm->on_store)
		pm->on_store(pm, off, len, pm->on_store_arg);
	if (!pm->record)
		return;
	for (o = off; o < end && o < pm->data_off; o += 8)
		record_unit(pm, SIMPM_WORD, (u32)(o / 8));
	if (end > pm->data_off) {
		u64 l = (o > pm->data_off ? o : pm->data_off) / SIMPM_LINE;

		for (; l * SIMPM_LINE < end; l++)
			record_unit(pm, SIMPM_LINE_UNIT, (u32)l);
	}
}

void fr_pm_store8(__le64 *dst, u64 val)
{
	struct simpm *pm = simpm_cur;
	u64 off = check_range(pm, dst, 8, "store8");
	__le64 v = cpu_to_le64(val);

	if (pm->undo)
		simpm_undo_log(pm->undo, pm->view, (u32)(off / 8));
	memcpy(pm->view + off, &v, 8);
	note_store(pm, off, 8);
}

void fr_pm_copy(void *dst, const void *src, size_t len)
{
	struct simpm *pm = simpm_cur;
	u64 off = check_range(pm, dst, len, "copy"), w;

	if (pm->undo)
		for (w = off / 8; w < (off + len) / 8; w++)
			simpm_undo_log(pm->undo, pm->view, (u32)w);
	memmove(pm->view + off, src, len);
	note_store(pm, off, len);
}

void fr_pm_fence(void)
{
	struct simpm *pm = simpm_cur;
	struct simpm_epoch *ep = &pm->ep;
	u32 i;

	if (!pm) {
		fprintf(stderr, "simpm: fence with no PM\n");
		abort();
	}
	pm->fences++;
	if (pm->on_fence)
		pm->on_fence(pm, pm->on_fence_arg);
	for (i = 0; i < ep->nunits; i++) {
		const struct simpm_unit *u = &ep->units[i];
		u64 off = simpm_unit_off(u);
		u32 nw = simpm_unit_words(u);

		if (pm->media)
			memcpy(pm->media + off, pm->view + off, nw * 8);
		if (pm->mirror)
			memcpy(pm->mirror + off, pm->view + off, nw * 8);
	}
	simpm_reset_pending(pm);
}

static bool poisoned(const struct simpm *pm, u64 off, size_t len)
{
	return pm->poison_len && off < pm->poison_off + pm->poison_len &&
	       off + len > pm->poison_off;
}

int fr_pm_load8(const __le64 *src, u64 *val)
{
	struct simpm *pm = simpm_cur;
	u64 off = check_range(pm, src, 8, "load8");
	__le64 v;

	if (poisoned(pm, off, 8)) {
		pm->poison_hits++;
		return -EIO;
	}
	memcpy(&v, pm->view + off, 8);
	*val = le64_to_cpu(v);
	return 0;
}

int fr_pm_read(void *dst, const void *src, size_t len)
{
	struct simpm *pm = simpm_cur;
	const u8 *b = src;
	u64 off;

	if (!pm || b < pm->view || b + len > pm->view + pm->size) {
		fprintf(stderr, "simpm: read outside PM\n");
		abort();
	}
	off = (u64)(b - pm->view);
	if (poisoned(pm, off, len)) {
		pm->poison_hits++;
		return -EIO;
	}
	memcpy(dst, b, len);
	return 0;
}
