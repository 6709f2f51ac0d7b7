// SPDX-License-Identifier: GPL-2.0-only
/*
 * The origin's guard. A dm-fr origin carries the file system's own signature,
 * and while its newest data waits on the PM the bare origin is a stale copy.
 * So an origin is known before its device exists, and hidden and held:
 *
 * - known: /etc/frctl/origins ($FRCTL_ORIGINS), one line per PM, "UUID
 *   ORIGIN_ID" (the PM's uuid in 32 hex digits and the origin id its
 *   superblock records), written by frctl format, create and autoactivate;
 *   and the PMs waiting for their origin this boot (/run/frctl/pending,
 *   autoactivate), whose superblocks name it;
 * - hidden: the udev rule 61-dm-fr-origin.rules imports "frctl guard --udev"
 *   after the persistent-storage rules, and for an origin gives back its
 *   links less the by-uuid and by-label ones and the file-system properties (so nothing mounts it
 *   by UUID= or LABEL=, and btrfs does not register it), sets SYSTEMD_READY=0
 *   and says what it is (ID_FS_TYPE=dm_fr_origin, FR_ORIGIN_PM);
 * - held: "frctl guard --hold" gives an origin that no dm-fr device uses a
 *   4 KiB device-mapper device over its start (fr-guard-<8 hex>, DM UUID
 *   FRGUARD-<uuid>). Device-mapper opens what its tables use exclusively for
 *   itself, so a mount of the bare origin fails with "device busy", while
 *   the fr target, device-mapper too, can still be created over it; frctl
 *   create and autoactivate then drop the guard, frctl remove puts it back.
 *
 * "frctl guard --forget DEV" is the way out, for an origin that is to be used
 * alone: it drops the hold and the registry's lines, and refuses while a
 * dm-fr device uses it or its PM holds dirty data the origin does not have.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "frctl.h"

#define GUARD_UUID_PREFIX	"FRGUARD-"
#define GUARD_SECTORS		8	/* 4 KiB: any logical block size */

struct origin_entry {
	char hex[33];
	char id[FR_ORIGIN_ID_LEN];
	char pm[PATH_MAX];	/* pending entries: the PM seen this boot */
};

const char *origins_path(void)
{
	const char *p = getenv("FRCTL_ORIGINS");

	return p && *p ? p : "/etc/frctl/origins";
}

static bool hex32(const char *s)
{
	int i;

	for (i = 0; i < 32; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return !s[32];
}

/* Append an entry to *e (*n of them): the new, zeroed one, or NULL. */
static struct origin_entry *entry_add(struct origin_entry **e, int *n,
				      const char *hex, const char *id,
				      const char *pm)
{
	struct origin_entry *t = realloc(*e, (*n + 1) * sizeof(**e));

	if (!t)
		return NULL;
	*e = t;
	t = &t[(*n)++];
	memset(t, 0, sizeof(*t));
	snprintf(t->hex, sizeof(t->hex), "%.32s", hex);
	snprintf(t->id, sizeof(t->id), "%.63s", id);
	snprintf(t->pm, sizeof(t->pm), "%s", pm);
	return t;
}

/* The registry's entries; *n of them, malloc'd (NULL and 0 when none). */
static struct origin_entry *origins_read(int *n)
{
	struct origin_entry *e = NULL;
	char line[PATH_MAX], hex[64], id[PATH_MAX];
	FILE *f = fopen(origins_path(), "r");

	*n = 0;
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || sscanf(line, "%63s %4095s", hex, id) != 2 ||
		    !hex32(hex) || strlen(id) >= FR_ORIGIN_ID_LEN)
			continue;
		if (!entry_add(&e, n, hex, id, ""))
			break;
	}
	fclose(f);
	return e;
}

/*
 * Rewrite the registry without the lines of this PM or of this origin id,
 * then with "hex id" when id is given. Written to a new file and renamed: a
 * reader (udev) sees the old file or the new one.
 */
static int origins_update(const char *hex, const char *id)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 8], *slash;
	struct origin_entry *e;
	int n, i, r = 0;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", origins_path());
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		mkdir(dir, 0755);
	}
	e = origins_read(&n);
	snprintf(tmp, sizeof(tmp), "%s.new", origins_path());
	f = fopen(tmp, "w");
	if (!f) {
		r = -errno;
		goto out;
	}
	fprintf(f, "# dm-fr origins, written by frctl (frctl(8), GUARD): PM uuid, origin id\n");
	for (i = 0; i < n; i++)
		if (strcmp(e[i].hex, hex) && (!id || strcmp(e[i].id, id)))
			fprintf(f, "%s %s\n", e[i].hex, e[i].id);
	if (id)
		fprintf(f, "%s %s\n", hex, id);
	if (fclose(f) || rename(tmp, origins_path()))
		r = -errno;
out:
	free(e);
	return r;
}

void origins_record(const char *hex, const char *id)
{
	int r;

	/* An id the kernel wrote ("dev:MAJ:MINOR") names no device for long. */
	if (!id[0] || !strncmp(id, "dev:", 4))
		return;
	r = origins_update(hex, id);
	if (r)
		fr_warn("cannot record origin %s in %s: %s (its guard at boot needs it)",
			id, origins_path(), strerror(-r));
}

/* The PM no longer caches an origin (frctl detach): forget it, release it. */
void origins_forget(const char *hex)
{
	int r;

	guard_release_pm(hex);
	r = origins_update(hex, NULL);
	if (r)
		fr_warn("cannot rewrite %s: %s", origins_path(), strerror(-r));
}

/* The PMs that autoactivate saw this boot, waiting for their origin. */
static struct origin_entry *pending_read(int *n)
{
	struct origin_entry *e = NULL;
	char dir[PATH_MAX], p[PATH_MAX + 300];
	struct dirent *de;
	struct sb_info si;
	FILE *f;
	DIR *d;

	*n = 0;
	snprintf(dir, sizeof(dir), "%s/pending", frctl_run_dir());
	d = opendir(dir);
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		char pm[PATH_MAX] = "";

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (!fgets(pm, sizeof(pm), f))
			pm[0] = 0;
		fclose(f);
		pm[strcspn(pm, "\n")] = 0;
		if (!pm[0] || sb_read(pm, &si) != SB_OK)
			continue;
		if (!entry_add(&e, n, si.uuid_hex, si.origin_id, pm))
			break;
	}
	closedir(d);
	return e;
}

/*
 * Is the device rdev the origin named id? By the links udev is giving it in
 * this event (its own /dev/disk/by-id names may not exist yet), else by
 * where the id resolves now.
 */
static bool id_names(const char *id, dev_t rdev, char **links, int nlinks)
{
	char path[PATH_MAX];
	struct stat st;
	int i;

	for (i = 0; i < nlinks; i++) {
		const char *l = links[i];

		if (!strncmp(l, "/dev/", 5))
			l += 5;
		if ((id[0] == '/' && !strncmp(id, "/dev/", 5) &&
		     !strcmp(id + 5, l)) ||
		    (id[0] != '/' && !strncmp(l, "disk/by-id/", 11) &&
		     !strcmp(l + 11, id)))
			return true;
	}
	return !origin_resolve_id(id, path, sizeof(path)) &&
	       !stat(path, &st) && S_ISBLK(st.st_mode) && st.st_rdev == rdev;
}

/*
 * An origin id of frctl attach names the device-mapper device the PM sits
 * in front of: while that device has the PM (its table is fr) it is the
 * cache, not a stale origin.
 */
static bool attached_now(const char *id, dev_t rdev)
{
	char name[FRCTL_DM_NAME_LEN];
	struct fr_dev d;

	if (strncmp(id, FR_ATTACH_ID_PREFIX, strlen(FR_ATTACH_ID_PREFIX)) ||
	    read_dm_attr(rdev, "name", name, sizeof(name)))
		return false;
	return !fr_dev_get(name, &d) && d.is_fr;
}

/*
 * The PM whose origin the device is: 0 and *out (from the registry, else a
 * pending PM), or -ENOENT.
 */
static int guard_match(dev_t rdev, char **links, int nlinks,
		       struct origin_entry *out)
{
	struct origin_entry *e;
	int n, i, r = -ENOENT, pass;

	for (pass = 0; pass < 2 && r; pass++) {
		e = pass ? pending_read(&n) : origins_read(&n);
		for (i = 0; i < n && r; i++) {
			if (id_names(e[i].id, rdev, links, nlinks) &&
			    !attached_now(e[i].id, rdev)) {
				*out = e[i];
				r = 0;
			}
		}
		free(e);
	}
	return r;
}

static int devnode_rdev(const char *path, dev_t *rdev)
{
	struct stat st;

	if (stat(path, &st)) {
		fr_err("%s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISBLK(st.st_mode)) {
		fr_err("%s is not a block device", path);
		return -ENOTBLK;
	}
	*rdev = st.st_rdev;
	return 0;
}

/* Who holds the device: a dm-fr device, a guard, or nothing (sysfs). */
enum holder { HELD_NONE, HELD_FR, HELD_GUARD, HELD_OTHER };

static enum holder origin_holder(dev_t rdev, char *name, size_t nlen)
{
	char dir[PATH_MAX], p[PATH_MAX + 300], uuid[256];
	enum holder h = HELD_NONE;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u/holders",
		 major(rdev), minor(rdev));
	d = opendir(dir);
	if (!d)
		return HELD_NONE;
	while (h != HELD_FR && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s/dm/uuid", dir, de->d_name);
		if (read_sysfs(p, uuid, sizeof(uuid)))
			uuid[0] = 0;
		snprintf(p, sizeof(p), "%s/%s/dm/name", dir, de->d_name);
		if (read_sysfs(p, name, nlen))
			snprintf(name, nlen, "%.127s", de->d_name);
		if (!strncmp(uuid, "FR-", 3))
			h = HELD_FR;
		else if (!strncmp(uuid, GUARD_UUID_PREFIX, strlen(GUARD_UUID_PREFIX)))
			h = HELD_GUARD;
		else if (h == HELD_NONE)
			h = HELD_OTHER;
	}
	closedir(d);
	return h;
}

static void guard_names(const char *hex, char *name, size_t nlen, char *uuid,
			size_t ulen)
{
	snprintf(name, nlen, "fr-guard-%.8s", hex);
	snprintf(uuid, ulen, GUARD_UUID_PREFIX "%s", hex);
}

/* Hold the origin of PM hex (device rdev), unless dm-fr or a guard does. */
static int guard_hold(const char *hex, dev_t rdev, bool quiet)
{
	char name[FRCTL_DM_NAME_LEN], uuid[FRCTL_DM_UUID_LEN], other[FRCTL_DM_NAME_LEN];
	char params[64];
	dev_t gdev;

	switch (origin_holder(rdev, other, sizeof(other))) {
	case HELD_FR:
	case HELD_GUARD:
		if (!quiet)
			printf("%u:%u: held by %s already\n", major(rdev),
			       minor(rdev), other);
		return 0;
	default:
		break;
	}
	guard_names(hex, name, sizeof(name), uuid, sizeof(uuid));
	snprintf(params, sizeof(params), "%u:%u 0", major(rdev), minor(rdev));
	if (dmw_create_hidden(name, uuid, GUARD_SECTORS, "linear", params,
			      &gdev)) {
		fr_err("cannot create the guard %s over %u:%u", name,
		       major(rdev), minor(rdev));
		return -EIO;
	}
	if (!quiet)
		printf("%u:%u: held by %s\n", major(rdev), minor(rdev), name);
	return 0;
}

void guard_release_pm(const char *hex)
{
	char name[FRCTL_DM_NAME_LEN], uuid[FRCTL_DM_UUID_LEN], other[FRCTL_DM_NAME_LEN];

	guard_names(hex, name, sizeof(name), uuid, sizeof(uuid));
	if (dmw_uuid_in_use(uuid, other, sizeof(other)) &&
	    dmw_remove(other, true))
		fr_warn("cannot remove the guard %s", other);
}

/*
 * A dm-fr device was removed with dirty data left on its PM: its origin
 * (major:minor, as the table printed it) is held again.
 */
void guard_hold_pm(const char *hex, const char *majmin)
{
	unsigned int ma, mi;

	if (sscanf(majmin, "%u:%u", &ma, &mi) == 2)
		(void)guard_hold(hex, makedev(ma, mi), true);
}

/*
 * What udev imports for an origin. FR_ORIGIN_LINKS: the links the event gave
 * it less those naming its file system (by-uuid, by-label), which the rule
 * assigns back (udev has no way to remove one link from the list).
 */
static void print_udev(const struct origin_entry *e, char **links, int nlinks)
{
	char enc[256];
	const char *sep = "";
	int i;

	printf("FR_ORIGIN=1\n");
	printf("FR_ORIGIN_PM=%s\n", e->hex);
	udev_encode(e->id, enc, sizeof(enc));
	printf("FR_ORIGIN_ID=%s\n", enc);
	printf("FR_ORIGIN_LINKS=");
	for (i = 0; i < nlinks; i++) {
		const char *l = links[i];

		if (!strncmp(l, "/dev/", 5))
			l += 5;
		if (!strncmp(l, "disk/by-uuid/", 13) ||
		    !strncmp(l, "disk/by-label/", 14) || strchr(l, '"') ||
		    strchr(l, '\n'))
			continue;
		printf("%s%s", sep, l);
		sep = " ";
	}
	printf("\n");
}

/* A PM waiting this boot (never activated) that names the device. */
static bool pending_names(dev_t rdev, char *pm, size_t len)
{
	struct origin_entry *e;
	int n, i;
	bool found = false;

	e = pending_read(&n);
	for (i = 0; i < n && !found; i++) {
		if (id_names(e[i].id, rdev, NULL, 0)) {
			snprintf(pm, len, "%s", e[i].pm);
			found = true;
		}
	}
	free(e);
	return found;
}

int origin_known(dev_t rdev, char *hex, size_t hlen, char *id, size_t ilen,
		 char *fr_name, size_t nlen)
{
	struct origin_entry e;

	if (guard_match(rdev, NULL, 0, &e))
		return -ENOENT;
	snprintf(hex, hlen, "%s", e.hex);
	snprintf(id, ilen, "%s", e.id);
	fr_name[0] = 0;
	if (origin_holder(rdev, fr_name, nlen) != HELD_FR)
		fr_name[0] = 0;
	return 0;
}

static int guard_forget(const char *dev, dev_t rdev, bool force)
{
	struct origin_entry e;
	char other[FRCTL_DM_NAME_LEN], pm[PATH_MAX];
	int r;

	if (guard_match(rdev, NULL, 0, &e)) {
		printf("%s: not a known dm-fr origin\n", dev);
		return 0;
	}
	if (origin_holder(rdev, other, sizeof(other)) == HELD_FR) {
		fr_err("%s is the origin of %s: remove it first (frctl remove --flush)",
		       dev, other);
		return FR_EXIT_OPERATIONAL;
	}
	if (pending_names(rdev, pm, sizeof(pm)) && !force) {
		fr_err("%s: the PM %s waits for it and was never activated this boot; activate it (frctl autoactivate --pending), flush it, or --force",
		       dev, pm);
		return FR_EXIT_OPERATIONAL;
	}
	guard_release_pm(e.hex);
	r = origins_update(e.hex, NULL);
	if (r) {
		fr_err("cannot rewrite %s: %s", origins_path(), strerror(-r));
		return FR_EXIT_OPERATIONAL;
	}
	printf("%s: forgotten (PM %s); its file system is offered again at its next udev event\n",
	       dev, e.hex);
	return 0;
}

static int guard_list(void)
{
	struct origin_entry *e;
	char path[PATH_MAX], other[FRCTL_DM_NAME_LEN];
	struct stat st;
	int n, i;

	e = origins_read(&n);
	for (i = 0; i < n; i++) {
		const char *state = "absent";

		if (!origin_resolve_id(e[i].id, path, sizeof(path)) &&
		    !stat(path, &st) && S_ISBLK(st.st_mode)) {
			switch (origin_holder(st.st_rdev, other, sizeof(other))) {
			case HELD_FR: state = "in use by dm-fr"; break;
			case HELD_GUARD: state = "held"; break;
			case HELD_OTHER: state = "in use by another device"; break;
			default: state = "not held"; break;
			}
		}
		printf("%s %s %s\n", e[i].hex, e[i].id, state);
	}
	free(e);
	return 0;
}

int cmd_guard(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "udev", required_argument, NULL, 'u' },
		{ "hold", required_argument, NULL, 'H' },
		{ "forget", required_argument, NULL, 'F' },
		{ "list", no_argument, NULL, 'l' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *dev = NULL;
	struct origin_entry e;
	bool force = false;
	int c, mode = 0;
	dev_t rdev = 0;

	while ((c = verb_getopt(argc, argv, ":h", opts)) != -1) {
		switch (c) {
		case 'u':
		case 'H':
		case 'F':
		case 'l':
			if (mode)
				return fr_usage_error("give one of --udev, --hold, --forget, --list");
			mode = c;
			dev = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'h':
			print_help("guard", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (!mode)
		return fr_usage_error("give one of --udev, --hold, --forget, --list");
	if (mode == 'l') {
		if (optind < argc)
			return fr_usage_error("unexpected argument '%s'", argv[optind]);
		return guard_list();
	}
	/* --udev, --hold DEV LINK...: the links udev gives DEV in this event. */
	if (mode != 'u' && mode != 'H' && optind < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind]);
	if (mode == 'u') {
		/*
		 * udev imports what is printed: nothing for another device.
		 * Anything but a block device matches by its links alone.
		 */
		struct stat st;

		rdev = !stat(dev, &st) && S_ISBLK(st.st_mode) ? st.st_rdev : 0;
		if (guard_match(rdev, argv + optind, argc - optind, &e))
			return 0;
		print_udev(&e, argv + optind, argc - optind);
		return 0;
	}
	if (devnode_rdev(dev, &rdev))
		return FR_EXIT_OPERATIONAL;
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;
	if (mode == 'F')
		return guard_forget(dev, rdev, force);
	if (guard_match(rdev, argv + optind, argc - optind, &e)) {
		fr_err("%s is not a known dm-fr origin (%s, %s/pending)", dev,
		       origins_path(), frctl_run_dir());
		return FR_EXIT_OPERATIONAL;
	}
	return guard_hold(e.hex, rdev, false) ? FR_EXIT_OPERATIONAL : 0;
}
