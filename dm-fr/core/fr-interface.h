/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The target's tunables, defined once for everything that names them: the
 * kernel's table parser, "set" message and printed table (fr-table.c), frctl
 * (create's options, frtab's keys, status --json, help) and, through
 * frctl's JSON, the bench report. A tunable is a table argument that the
 * "set" message may change at run time: an unsigned integer in [min, max].
 * docs/target-interface.md describes each; a new one added here is parsed,
 * printed, settable and offered by frctl without another list to edit (the
 * host test tests/host/iface checks that).
 *
 * The list is fr-tunables.h: one FR_TUNABLE(name, min, max, default, unit,
 * what) per tunable, in the order the table prints them back; a user
 * defines FR_TUNABLE, includes it, and undefines FR_TUNABLE.
 */
#ifndef FR_INTERFACE_H
#define FR_INTERFACE_H

/* Chunks per writeback batch by default (one origin flush per batch). */
#define FR_WB_JOBS_DEFAULT	1024
/* Prefetch window at most, and by default: one origin read (256 pages). */
#define FR_PREFETCH_MAX_KIB	1024
/* The periods' bound: an hour. */
#define FR_MAX_PERIOD_MS	3600000

enum fr_tunable_id {
#define FR_TUNABLE(name, min, max, def, unit, what) FR_TUNABLE_##name,
#include "fr-tunables.h"
#undef FR_TUNABLE
	FR_NR_TUNABLES
};

#define FR_STRINGIFY_(x)	#x
#define FR_STRINGIFY(x)		FR_STRINGIFY_(x)

/* What the table parser and the "set" message say of a value out of range. */
#define FR_TUNABLE_RANGE_ERROR(name, min, max, unit)			\
	"Invalid " #name " (" FR_STRINGIFY(min) ".." FR_STRINGIFY(max)	\
	" " unit ")"

#endif /* FR_INTERFACE_H */
