// SPDX-License-Identifier: GPL-2.0-only
/*
 * frctl flush and remove: write every dirty chunk back (the flush message,
 * with a progress bar), and remove a device (after a flush unless told).
 */
#include <getopt.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>


#include "frctl.h"

static void draw_bar(const char *name, u64 start, u64 now, u64 chunk)
{
	char b1[32];
	int width = 30, fill, i;
	double done = start ? (double)(start - (now < start ? now : start)) /
			      (double)start : 1.0;

	fill = (int)(done * width + 0.5);
	printf("\rflushing %s: [", name);
	for (i = 0; i < width; i++)
		putchar(i < fill ? '#' : '-');
	printf("] %3d%%  %s dirty   ", (int)(done * 100 + 0.5),
	       fmt_bytes(b1, sizeof(b1), now * chunk));
	fflush(stdout);
}

/* Send "flush" and, on a terminal, draw the dirty data draining. */
static int flush_device(const char *name, bool quiet)
{
	struct fr_dev d;
	u64 start, chunk;
	char b1[32];
	pid_t pid;
	int status, r;

	r = get_fr_dev(name, &d);
	if (r)
		return r;
	start = d.st.chunks_dirty;
	chunk = d.st.chunk_sectors << FR_SECTOR_SHIFT;
	if (quiet || !isatty(STDOUT_FILENO))
		return dmw_message(name, "flush") ? FR_EXIT_OPERATIONAL : 0;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fr_err("fork: %s", strerror(errno));
		return FR_EXIT_OPERATIONAL;
	}
	if (!pid)
		_exit(dmw_message(name, "flush") ? FR_EXIT_OPERATIONAL : 0);
	catch_sigint();
	for (;;) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };

		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			break;
		if (!fr_dev_get(name, &d) && d.is_fr && !d.parse_error)
			draw_bar(name, start, d.st.chunks_dirty, chunk);
		if (frctl_interrupted) {
			/* The child's flush stops at its next batch (1.14). */
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			printf("\n");
			if (!fr_dev_get(name, &d) && d.is_fr && !d.parse_error)
				fr_err("interrupted; %s stays dirty on %s (what was written back stays written back)",
				       fmt_bytes(b1, sizeof(b1), d.st.chunks_dirty * chunk),
				       name);
			else
				fr_err("interrupted");
			return FR_EXIT_CANCELED;
		}
		nanosleep(&ts, NULL);
	}
	if (!fr_dev_get(name, &d) && d.is_fr && !d.parse_error)
		draw_bar(name, start, d.st.chunks_dirty, chunk);
	printf("\n");
	if (r != pid || !WIFEXITED(status))
		return FR_EXIT_OPERATIONAL;
	return WEXITSTATUS(status);
}

int cmd_flush(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool quiet = false;
	int c;

	while ((c = verb_getopt(argc, argv, ":qh", opts)) != -1) {
		switch (c) {
		case 'q':
			quiet = true;
			break;
		case 'h':
			print_help("flush", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return fr_usage_error("missing the device NAME");
	if (optind + 1 < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind + 1]);
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;
	return flush_device(argv[optind], quiet);
}

int cmd_remove(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "flush", no_argument, NULL, 'F' },
		{ "retry", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool flush = false, retry = false;
	const char *name;
	struct fr_dev d;
	int c, r;

	while ((c = verb_getopt(argc, argv, ":h", opts)) != -1) {
		switch (c) {
		case 'F':
			flush = true;
			break;
		case 'r':
			retry = true;
			break;
		case 'h':
			print_help("remove", stdout);
			return 0;
		default:
			return FR_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return fr_usage_error("missing the device NAME");
	if (optind + 1 < argc)
		return fr_usage_error("unexpected argument '%s'", argv[optind + 1]);
	name = argv[optind];
	if (!dmw_ready())
		return FR_EXIT_OPERATIONAL;
	r = get_fr_dev(name, &d);
	if (r)
		return r;
	if (fr_dev_attached(&d)) {
		fr_err("%s was made by frctl attach: take its PM away with frctl detach %s (remove would take the device itself away)",
		       name, name);
		return FR_EXIT_OPERATIONAL;
	}
	if (flush) {
		/* New writes go through; then drain what is dirty. */
		if (dmw_message(name, "cleaner on"))
			return FR_EXIT_OPERATIONAL;
		r = flush_device(name, false);
		if (r)
			return r;
		r = get_fr_dev(name, &d);
		if (r)
			return r;
		if (d.st.chunks_dirty) {
			fr_err("%s still has %llu dirty chunks after the flush; not removed",
			       name, (unsigned long long)d.st.chunks_dirty);
			return FR_EXIT_OPERATIONAL;
		}
	}
	if (dmw_remove(name, retry)) {
		fr_err("removing %s failed (in use? mounted?)", name);
		return FR_EXIT_OPERATIONAL;
	}
	if (!flush && d.st.chunks_dirty) {
		/* The bare origin is now a stale copy: not to be mounted. */
		if (!strncmp(d.uuid, FR_UUID_PREFIX, strlen(FR_UUID_PREFIX)))
			guard_hold_pm(d.uuid + strlen(FR_UUID_PREFIX),
				      d.table.origin);
		printf("%s: removed; %llu dirty chunks stay on the PM until it is created again (the origin is held: frctl(8), GUARD)\n",
		       name, (unsigned long long)d.st.chunks_dirty);
	}
	else
		printf("%s: removed%s\n", name,
		       flush ? "; the origin holds all the data" : "");
	return 0;
}
