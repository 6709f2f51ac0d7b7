// SPDX-License-Identifier: GPL-2.0-only
/*
 * frctl autoactivate: what udev runs for a PM with a dm-fr superblock (its
 * device created if the origin is there, else remembered in
 * /run/frctl/pending) and for every new block device (the pending PMs
 * whose origin came).
 */
#include <dirent.h>
#include <getopt.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "frctl.h"

const char *frctl_run_dir(void)
{
	const char *d = getenv("FRCTL_RUNDIR");

	return d && *d ? d : "/run/frctl";
}

static const char *frtab_path(void)
{
	const char *p = getenv("FRCTL_FRTAB");

	return p && *p ? p : "/etc/frctl/frtab";
}

/*
 * Look the uuid up in frtab: "NAME UUID [opt,opt=val,...]". Returns 1 and
 * fills name/to when found, 0 when not, -1 when the line says noauto.
 */
static int frtab_lookup(const u8 uuid[16], char *name, size_t nlen,
			struct table_opts *to)
{
	char line[1024], lname[FRCTL_DM_NAME_LEN], luuid[64], lopts[900];
	FILE *f = fopen(frtab_path(), "r");
	int found = 0, n;
	u8 u[16];

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p, *tok, *save = NULL;

		if (line[0] == '#')
			continue;
		lopts[0] = 0;
		n = sscanf(line, "%127s %63s %899s", lname, luuid, lopts);
		if (n < 2 || uuid_parse_str(luuid, u) || memcmp(u, uuid, 16))
			continue;
		found = 1;
		snprintf(name, nlen, "%s", lname);
		for (tok = strtok_r(lopts, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			if (!strcmp(tok, "noauto") || !strcmp(tok, "defaults")) {
				if (tok[0] == 'n')
					found = -1;
				continue;
			}
			p = strchr(tok, '=');
			if (p)
				*p++ = 0;
			if (table_opt_set(to, tok, p))
				fr_warn("%s: ignoring unknown option '%s'",
					frtab_path(), tok);
		}
	}
	fclose(f);
	return found;
}

static void pending_path(const char *hex, char *out, size_t len)
{
	snprintf(out, len, "%s/pending/%s", frctl_run_dir(), hex);
}

static void pending_remember(const char *hex, const char *pm)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s", frctl_run_dir());
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/pending", frctl_run_dir());
	mkdir(p, 0755);
	pending_path(hex, p, sizeof(p));
	f = fopen(p, "w");
	if (!f) {
		fr_warn("cannot record %s: %s", p, strerror(errno));
		return;
	}
	fprintf(f, "%s\n", pm);
	fclose(f);
}

static void pending_forget(const char *hex)
{
	char p[PATH_MAX];

	pending_path(hex, p, sizeof(p));
	unlink(p);
	snprintf(p, sizeof(p), "%s/pending", frctl_run_dir());
	rmdir(p);	/* only when empty: the udev rule tests for it */
}

/*
 * The superblock of a PM to activate: 0, or -ENOENT when there is none (any
 * more), or -EUCLEAN when it is there but unusable, which is said here:
 * neither is an error of autoactivate, and neither is waited for.
 */
static int activate_read_sb(const char *pm, struct sb_info *si)
{
	switch (sb_read(pm, si)) {
	case SB_OK:
		return 0;
	case SB_NOT_FOUND:
	case SB_NOT_FR:
		return -ENOENT;
	default:
		fr_warn("%s: %s: %s%s; not activating", pm,
			sb_state_text(si->state), si->why,
			sb_state_hint(si->state));
		return -EUCLEAN;
	}
}

/* activate_pm() found nothing to activate: a pending entry is dropped. */
static bool nothing_to_activate(int r)
{
	return r == -ENOENT || r == -EUCLEAN;
}

/*
 * A PM that frctl attach put in front of the device-mapper device NAME
 * (origin id "attach:NAME"): NAME takes it back, by the same table swap,
 * once NAME exists; it keeps its name (frtab's is not used). Until then
 * the PM waits, and the guard holds NAME (frctl(8), GUARD).
 */
static int activate_attached(const char *pm, const struct sb_info *si,
			     const struct table_opts *to)
{
	const char *name = si->origin_id + strlen(FR_ATTACH_ID_PREFIX);
	struct fr_dev d;
	int r;

	r = fr_dev_get(name, &d);
	if (r == -ENOENT) {
		printf("%s: waiting for %s, the device it was attached to\n", pm,
		       name);
		pending_remember(si->uuid_hex, pm);
		return 0;
	}
	if (r)
		return FR_EXIT_OPERATIONAL;
	if (d.is_fr) {
		printf("%s: %s has a PM in front of it already\n", pm, name);
		pending_forget(si->uuid_hex);
		return 0;
	}
	r = attach_again(name, pm, si, to);
	if (!r) {
		printf("%s: attached to %s again\n", pm, name);
		pending_forget(si->uuid_hex);
	}
	return r;
}

static int activate_pm(const char *pm)
{
	char dm_uuid[40], name[FRCTL_DM_NAME_LEN];
	char other[FRCTL_DM_NAME_LEN], origin[PATH_MAX];
	const char *id, *hex;
	struct table_opts to;
	struct sb_info si;
	int r;

	r = activate_read_sb(pm, &si);
	if (r)
		return r;
	id = si.origin_id;
	hex = si.uuid_hex;
	snprintf(dm_uuid, sizeof(dm_uuid), FR_UUID_PREFIX "%s", hex);
	table_opts_init(&to);
	r = frtab_lookup(si.uuid, name, sizeof(name), &to);
	if (r < 0) {
		printf("%s: noauto in %s, not activating\n", pm, frtab_path());
		pending_forget(hex);
		return 0;
	}
	if (!r)
		snprintf(name, sizeof(name), "fr-%.8s", hex);
	if (dmw_uuid_in_use(dm_uuid, other, sizeof(other))) {
		printf("%s: active already as %s\n", pm, other);
		pending_forget(hex);
		return 0;
	}
	if (!strncmp(id, FR_ATTACH_ID_PREFIX, strlen(FR_ATTACH_ID_PREFIX)))
		return activate_attached(pm, &si, &to);
	if (origin_resolve_id(id, origin, sizeof(origin))) {
		printf("%s: waiting for origin %s\n", pm, id);
		pending_remember(hex, pm);
		return 0;
	}
	r = create_device(name, pm, origin, &to, false, false, true);
	if (!r) {
		printf("%s: activated %s on origin %s\n", pm, name, origin);
		pending_forget(hex);
	}
	return r;
}

int cmd_autoactivate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pm", required_argument, NULL, 'p' },
		{ "pending", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char lock[PATH_MAX], p[PATH_MAX], pm[PATH_MAX];
	const char *pmdev = NULL;
	bool pending = false;
	struct dirent *de;
	int c, fd, r = 0, rr;
	DIR *d;

	while ((c = verb_getopt(argc, argv, ":h", opts)) != -1) {
		switch (c) {
		case 'p':
			pmdev = optarg;
			break;
		case 'P':
			pending = true;
			break;
		case 'h':
			print_help("autoactivate", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind]);
	if (!pmdev == !pending)
		return fr_usage_error("give either --pm DEV or --pending");
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;

	/* One activation at a time: udev may run several of us at once. */
	mkdir(frctl_run_dir(), 0755);
	snprintf(lock, sizeof(lock), "%s/lock", frctl_run_dir());
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		fr_err("cannot lock %s: %s", lock, strerror(errno));
		return FR_EXIT_OPERATIONAL;
	}
	if (pmdev) {
		r = activate_pm(pmdev);
		if (r == -ENOENT)
			printf("%s: no dm-fr superblock\n", pmdev);
		if (nothing_to_activate(r))
			r = 0;
		close(fd);
		return r;
	}
	snprintf(p, sizeof(p), "%s/pending", frctl_run_dir());
	d = opendir(p);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		char file[PATH_MAX + 300];
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", p, de->d_name);
		f = fopen(file, "r");
		if (!f)
			continue;
		if (!fgets(pm, sizeof(pm), f))
			pm[0] = 0;
		fclose(f);
		pm[strcspn(pm, "\n")] = 0;
		rr = pm[0] ? activate_pm(pm) : -ENOENT;
		if (nothing_to_activate(rr)) {
			/* The PM went away or lost its superblock. */
			unlink(file);
			rr = 0;
		}
		if (rr && !r)
			r = rr;
	}
	closedir(d);
	rmdir(p);
	close(fd);
	return r;
}
