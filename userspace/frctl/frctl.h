/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * frctl: the administration tool of dm-fr. Declarations shared by its files.
 *
 * The on-PM layout and the recovery logic are NOT defined here: frctl
 * links dm-fr/core/ (format, slot, writeback, recovery), the same files as
 * the kernel module (built by userspace/libfrcore against its shim fr-user.h),
 * and supplies only the persistence primitives of fr-pm.h (pm-user.c).
 */
#ifndef FRCTL_H
#define FRCTL_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "fr-core.h"
#include "sysdev.h"

struct json_object;

/* Exit codes, as fsck(8) has them. */
#define FR_EXIT_OK		0	/* clean / success */
#define FR_EXIT_CORRECTED	1	/* errors corrected (repair) */
#define FR_EXIT_NOTFOUND	2	/* probe: no dm-fr superblock */
#define FR_EXIT_UNCORRECTED	4	/* errors left uncorrected */
#define FR_EXIT_OPERATIONAL	8	/* could not do the job */
#define FR_EXIT_USAGE		16	/* bad command line */
#define FR_EXIT_CANCELED	32	/* interrupted, or --timeout: nothing changed */

/* util.c (fr_err and fr_warn are declared in sysdev.h) */
extern const char *frctl_verb;
int fr_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int parse_u64(const char *s, u64 *out);
int parse_size(const char *s, u64 *out);
int parse_opt_u64(const char *opt, const char *s, u64 min, u64 max, u64 *out);
int parse_opt_size(const char *opt, const char *s, u64 *out);
const char *fmt_bytes(char *buf, size_t len, u64 bytes);
void uuid_unparse_lower(const u8 uuid[16], char out[37]);
void uuid_hex(const u8 uuid[16], char out[33]);
int uuid_parse_str(const char *s, u8 uuid[16]);
void *xcalloc(size_t n, size_t size);
void json_print(struct json_object *obj);
void udev_encode(const char *in, char *out, size_t outlen);

/* pm-user.c: the fr_pm_* primitives for a mapped image. */
struct frctl_pm {
	void *sync_base;	/* msync() this range at every fence, if set */
	size_t sync_len;
	unsigned long fences;
	unsigned long stores;
	int error;		/* first msync() errno */
};
extern struct frctl_pm frctl_pm;
void frctl_pm_install_sigbus(void);

/* image.c: a PM device or image file, mapped. */
#define IMG_WRITE	0x1	/* map read-write, write back at close */
#define IMG_EXCL	0x2	/* refuse a block device in use */
#define IMG_FORCE	0x4	/* with IMG_EXCL: allow a busy device, read-only */

struct fr_image {
	const char *path;
	int fd;
	bool blkdev;
	bool busy;		/* opened with --force although in use */
	unsigned int flags;
	u64 size;
	void *map;
	dev_t rdev;
};

int image_open(struct fr_image *im, const char *path, unsigned int flags);
int image_sync(struct fr_image *im);
void image_close(struct fr_image *im);

/* sb.c: the one reader of a PM's superblock, and what it found. */
enum sb_state {
	SB_OK,			/* superblock decoded */
	SB_NOT_FOUND,		/* no such device or file */
	SB_IO_ERROR,		/* cannot open or read it */
	SB_NOT_FR,		/* no dm-fr magic */
	SB_UNSUPPORTED,		/* valid, but newer than this frctl */
	SB_DAMAGED,		/* magic but a bad or unusable superblock */
	SB_TRUNCATED,		/* damaged: shorter than the cache it holds */
};

struct sb_info {
	enum sb_state state;
	const char *why;	/* the reason for any state but SB_OK */
	int err;		/* SB_NOT_FOUND, SB_IO_ERROR: the errno */
	u64 dev_bytes;		/* size of the device or image */
	/* The rest is set for SB_OK only. */
	struct fr_geometry geo;
	u32 version;
	u8 uuid[16];
	char uuid_hex[33];
	char origin_id[FR_ORIGIN_ID_LEN];	/* as recorded, with a NUL */
};

enum sb_state sb_classify(const struct fr_sb_disk *sb, u64 have,
			  u64 dev_bytes, struct fr_geometry *g,
			  const char **why);
enum sb_state sb_read(const char *path, struct sb_info *si);
const char *sb_state_text(enum sb_state s);
const char *sb_state_hint(enum sb_state s);
int sb_state_exit(enum sb_state s);

/* meta.c: what check, repair and dump do with a mapped image. */
struct fr_meta {
	struct fr_cache cache;
	unsigned long *valid_bits;
	unsigned long *dirty_bits;
	struct fr_group_scratch *scratch;
	u32 scratch_len;
	enum sb_state state;
	const char *why;
	u64 len;
};

struct tag_counts {
	u64 free;		/* V clear */
	u64 flagged_valid;	/* V set (before recovery) */
	u64 flag_new;
	u64 flag_dirty;
	u64 flag_incomplete;
	u64 unknown_flags;
	u64 suspect;		/* V set but failing the per-tag checks */
	u64 unreadable;
};

int meta_open(struct fr_meta *m, void *pm, u64 len);
void meta_close(struct fr_meta *m);
int meta_recover(struct fr_meta *m, enum fr_recover_mode mode,
		 struct fr_recovery_report *rep);
void meta_count_tags(struct fr_meta *m, struct tag_counts *tc);
struct json_object *meta_sb_json(struct fr_meta *m);
struct json_object *meta_report_json(const struct fr_recovery_report *rep);
struct json_object *meta_counts_json(const struct tag_counts *tc);
struct json_object *meta_tags_json(struct fr_meta *m);
void meta_print_sb(FILE *f, struct fr_meta *m);
bool report_pending(const struct fr_recovery_report *rep);

/* cmd-meta.c */
struct option;
struct geo_opts {
	u64 chunk_bytes;	/* 0: default */
	u64 region_bytes;	/* 0: default */
	u64 stride;		/* 0: default */
	u32 ways;		/* chunks a slot: 2 a pair, 4 or 8 a set; 0 the default */
};
int verb_getopt(int argc, char **argv, const char *shortopts,
		const struct option *longopts);
int geo_opts_parse(struct geo_opts *go, int c, const char *arg);
int format_pm(const char *pm_path, const char *origin_path,
	      const char *origin_id, u64 origin_sectors,
	      const struct geo_opts *go, const u8 *uuid, bool force, bool json,
	      bool quiet, u8 uuid_out[16]);
int cmd_format(int argc, char **argv);
void new_uuid(u8 uuid[16]);
int cmd_check(int argc, char **argv);
int cmd_repair(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_probe(int argc, char **argv);

/* origin.c: stable names for the origin device. */
/*
 * The origin id of a PM put in front of a device in use (frctl attach):
 * "attach:NAME", the device-mapper device whose table the origin took.
 */
#define FR_ATTACH_ID_PREFIX	"attach:"
int origin_choose_id(const char *path, char *id, size_t idlen);
int read_dm_attr(dev_t rdev, const char *attr, char *buf, size_t len);
/* guard.c: the origin's guard (what is known as an origin, hidden, held). */
const char *origins_path(void);
void origins_record(const char *hex, const char *id);
void origins_forget(const char *hex);
void guard_release_pm(const char *hex);
void guard_hold_pm(const char *hex, const char *majmin);
/*
 * The registry's PM for the origin rdev: 0 with its uuid (hex) and origin
 * id, and in fr_name the dm-fr device that holds it now ("" if none); or
 * -ENOENT.
 */
int origin_known(dev_t rdev, char *hex, size_t hlen, char *id, size_t ilen,
		 char *fr_name, size_t nlen);
int cmd_guard(int argc, char **argv);
const char *frctl_run_dir(void);
int origin_resolve_id(const char *id, char *path, size_t plen);
bool same_device(const char *a, const char *b);

/* status.c: the target's status line, parsed and made readable. */

/* A status line: the state word and the fields of dm-fr/core/fr-status.h. */
struct fr_status {
	char state[16];
#define FR_STATUS(name, since, keyed, json, what) u64 name;
#include "fr-status.h"
#undef FR_STATUS
	/* Which fields the line had (bit by enum fr_status_id): an older
	 * target prints fewer. */
	u64 seen;
	unsigned int extra_fields;	/* appended fields this frctl ignores */
};
#define status_has(st, name)	((st)->seen >> FR_STATUS_##name & 1)

struct fr_table {
	char origin[32];	/* major:minor as the kernel prints it */
	char pm[32];
	char opts[512];		/* the optional arguments, verbatim */
};

int status_parse(const char *line, struct fr_status *st);
int table_parse(const char *line, struct fr_table *t);
struct json_object *status_json(const char *name, const char *uuid,
				u64 length, const struct fr_table *t,
				const struct fr_status *st,
				const struct fr_status *prev, double interval);
void status_print(FILE *f, const char *name, const char *uuid, u64 length,
		  const struct fr_table *t, const struct fr_status *st,
		  const struct fr_status *prev, double interval);

/* tunables.c: the kernel's list of tunables (dm-fr/core/fr-tunables.h) */
struct frctl_tunable {
	const char *name;	/* the table's word: writeback_period */
	u64 min, max, def;
	const char *unit, *what;
};
extern const struct frctl_tunable frctl_tunables[FR_NR_TUNABLES];
/* The id of a tunable by its table name or option name, or -1. */
int tunable_find(const char *name);
/* Its option name, without the dashes: writeback-period. */
void tunable_option(int id, char *out, size_t len);
/* Create's help lines for the tunables. */
void tunables_help(FILE *f);
/*
 * A table's optional arguments, as the kernel prints them: whether NAME
 * takes a value (a tunable, chunk_size, region_size, stride, set_ways,
 * uuid, origin_id), and the next argument from *p on (the count skipped):
 * 1 with its name in key and its value in val ("" for a keyword such as
 * cleaner), 0 at the end.
 */
bool table_arg_valued(const char *name);
int table_arg_next(const char **p, char *key, size_t klen, char *val,
		   size_t vlen);
/* Every tunable's value in a table's optional arguments (else default). */
void tunables_of_table(const char *opts, u64 out[FR_NR_TUNABLES]);

/* util.c: Ctrl-C ends a watching loop (status, flush), not frctl */
extern volatile sig_atomic_t frctl_interrupted;
void catch_sigint(void);

/* frdev.c: the target's name and uuid prefix, and a device by name */
#define FR_TARGET	"fr"
#define FR_UUID_PREFIX	"FR-"
/* One dm-fr device as the kernel sees it. */
struct fr_dev {
	char name[FRCTL_DM_NAME_LEN];
	char uuid[FRCTL_DM_UUID_LEN];
	bool exists;
	bool is_fr;		/* one target, of type fr */
	u64 length;		/* sectors */
	struct fr_status st;
	struct fr_table table;
	int parse_error;
};
/* 0 and fills d (d->is_fr tells whether it is ours), -ENOENT, or -EIO. */
int fr_dev_get(const char *name, struct fr_dev *d);
/* The same, for a verb: 0, or an exit code after saying why. */
int get_fr_dev(const char *name, struct fr_dev *d);
/* Names of every dm-fr device, in device-mapper's list order. */
int list_fr_devs(char ***names, int *count);
/* cmd-attach.c: whether frctl attach made it (its origin is NAME-frorigin). */
bool fr_dev_attached(const struct fr_dev *d);

/* cmd-create.c: create, and the table options autoactivate creates with */
struct table_opts {
	long long tun[FR_NR_TUNABLES];	/* by enum fr_tunable_id; -1: default */
	bool cleaner, no_read_fill;
	/* The PM's identity, from its superblock: "" leaves it out. */
	char uuid[33];				/* 32 hex digits */
	char origin_id[FR_ORIGIN_ID_LEN];	/* when checked (or --force) */
};
void table_opts_init(struct table_opts *t);
void table_opts_string(const struct table_opts *t, char *out, size_t len);
int table_opt_set(struct table_opts *t, const char *key, const char *val);
int create_device(const char *name, const char *pm, const char *origin,
		  const struct table_opts *opts_in, bool force, bool dry,
		  bool quiet);
int cmd_create(int argc, char **argv);

/* cmd-remove.c */
int cmd_remove(int argc, char **argv);
int cmd_flush(int argc, char **argv);

/* cmd-attach.c */
int device_lock(const char *name);
int cmd_attach(int argc, char **argv);
int attach_again(const char *name, const char *pm, const struct sb_info *si,
		 const struct table_opts *opts);

/*
 * Detach (retire: give up what the PM cannot give back, up to lost dirty
 * chunks, and lost slots). *left: dirty chunks left unreadable when it
 * stopped for them. 0 or an exit code.
 */
int do_detach(const char *name, unsigned int timeout, bool json, bool quiet,
	      bool retire, u64 lost, u64 *left);
int cmd_detach(int argc, char **argv);
int cmd_replace(int argc, char **argv);

/* cmd-retire.c */
int cmd_retire(int argc, char **argv);

/* cmd-resize.c */
int cmd_resize(int argc, char **argv);

/* cmd-status.c */
int cmd_status(int argc, char **argv);

/* cmd-activate.c */
int cmd_autoactivate(int argc, char **argv);

/* help.c */
struct verb_help {
	const char *verb;
	const char *text;
};
int print_help(const char *verb, FILE *f);

#endif /* FRCTL_H */
