/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The target's interface, listed once for everything that names it: the
 * kernel (fr-table.c parses, sets and prints the tunables; fr-target.c
 * prints the status), frctl (create's options, frtab's keys, help, status
 * and its JSON, the bash completion through the help) and bench/report.py.
 *
 * fr-tunables.h: one FR_TUNABLE(name, min, max, default, unit, what) per
 * tunable (a table argument the "set" message may change at run time, an
 * unsigned integer in [min, max]), in the order the table prints them back.
 * fr-status.h: one FR_STATUS(...) per status field. A user defines the
 * macro, includes the list, and undefines the macro. A tunable added to its
 * list is parsed, printed, settable and offered by frctl with nothing else
 * to edit; a status field needs its value in fr_status() (fr-target.c).
 * tests/iface checks that; docs/target-interface.md describes each.
 */
#ifndef FR_INTERFACE_H
#define FR_INTERFACE_H

/* Chunks per writeback batch by default (one origin flush per batch). */
#define FR_WB_JOBS_DEFAULT	1024
/* Prefetch window at most, and by default: one origin read (256 pages). */
#define FR_PREFETCH_MAX_KIB	1024
/* admit_stream_kib at most: a stream of a GiB. */
#define FR_MAX_STREAM_KIB	1048576
/* The periods' bound: an hour. */
#define FR_MAX_PERIOD_MS	3600000
/*
 * The table's optional arguments that take a value, besides the tunables:
 * the kernel parses them, and frctl reads past their values in a table line.
 */
#define FR_TABLE_VALUED_ARGS \
	"chunk_size", "region_size", "stride", "set_ways", "uuid", "origin_id"

enum fr_tunable_id {
#define FR_TUNABLE(name, min, max, def, unit, what) FR_TUNABLE_##name,
#include "fr-tunables.h"
#undef FR_TUNABLE
	FR_NR_TUNABLES
};

/*
 * The status fields after the state word (fr-status.h: one FR_STATUS(name,
 * since, keyed, json, what) per field, in the order printed; since is the
 * target version times 100, major and minor).
 */
enum fr_status_id {
#define FR_STATUS(name, since, keyed, json, what) FR_STATUS_##name,
#include "fr-status.h"
#undef FR_STATUS
	FR_NR_STATUS
};

#define FR_STRINGIFY_(x)	#x
#define FR_STRINGIFY(x)		FR_STRINGIFY_(x)

/* What the table parser and the "set" message say of a value out of range. */
#define FR_TUNABLE_RANGE_ERROR(name, min, max, unit)			\
	"Invalid " #name " (" FR_STRINGIFY(min) ".." FR_STRINGIFY(max)	\
	" " unit ")"

#endif /* FR_INTERFACE_H */
