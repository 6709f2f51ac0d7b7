// SPDX-License-Identifier: GPL-2.0-only
/*
 * varmail: an fsync-heavy small-file workload in the manner of filebench's
 * "varmail" personality (a mail server: create, append, fsync, read whole
 * files, delete), with every byte it reads checked.
 *
 *   varmail run   DIR STATE SECONDS [THREADS [FILES [MIN_FSYNCS [MAX_SECONDS]]]]
 *   varmail check DIR STATE
 *
 * run: populate DIR with FILES files (default 400) of 16 KiB, then for
 * SECONDS seconds, and on until MIN_FSYNCS fsyncs were done in all (default
 * 0) but not past MAX_SECONDS (default: no limit), let THREADS threads
 * (default 2) loop over:
 *   1. delete a file and create it again: 16 KiB in four 4 KiB appends, fsync;
 *   2. open another file, read it whole (checked), append 4 KiB, fsync;
 *   3. open a third file and read it whole (checked).
 * One pass of 1-3 is an "op".  Each thread owns the files whose number is its
 * own modulo THREADS, so what a file must contain is always known: block b of
 * file i at generation g is a pseudo-random function of (i, g, b).  At the
 * end every file is read back and checked, and the state (generation and
 * length of each file) goes to STATE, for "check" after a remount or a
 * reload.  Prints one JSON object on stdout; exit status 1 on any data error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLK 4096
#define CREATE_BLOCKS 4
#define MAX_BLOCKS 32
#define MAX_LAT (1 << 20)

struct file_state {
	uint32_t gen;
	uint32_t blocks;	/* 0: does not exist */
};

struct thread_ctx {
	int id;
	pthread_t th;
	uint64_t rng;
	uint64_t ops, fsyncs, errors, bytes_read, bytes_written;
	uint32_t *fsync_lat;	/* ns / 64, saturating */
	uint32_t nfsync_lat;
	uint32_t *op_lat;
	uint32_t nop_lat;
};

static const char *dir;
static int nthreads = 2, nfiles = 400;
static struct file_state *files;
static volatile int stop;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fill_block(uint8_t *buf, uint32_t file, uint32_t gen, uint32_t b)
{
	uint64_t s = ((uint64_t)file << 40) ^ ((uint64_t)gen << 16) ^ b ^
		     0x5eed5eed00000000ull;
	uint64_t *w = (uint64_t *)buf;

	for (int i = 0; i < BLK / 8; i++)
		w[i] = splitmix(&s);
}

static void path_of(char *p, size_t n, uint32_t file)
{
	snprintf(p, n, "%s/m%05u", dir, file);
}

static void note_lat(uint32_t *arr, uint32_t *n, uint64_t ns)
{
	if (arr && *n < MAX_LAT)
		arr[(*n)++] = ns / 64 > UINT32_MAX ? UINT32_MAX : ns / 64;
}

static int timed_fsync(struct thread_ctx *t, int fd)
{
	uint64_t t0 = now_ns();
	int r = fsync(fd);

	note_lat(t->fsync_lat, &t->nfsync_lat, now_ns() - t0);
	__atomic_fetch_add(&t->fsyncs, 1, __ATOMIC_RELAXED);	/* read by main() */
	return r;
}

static void err(struct thread_ctx *t, const char *what, uint32_t file)
{
	if (t)
		t->errors++;
	fprintf(stderr, "varmail: %s: file m%05u: %s\n", what, file,
		errno ? strerror(errno) : "data mismatch");
	errno = 0;
}

/* Read the whole file and compare with what it must hold. */
static int read_check(struct thread_ctx *t, uint32_t file)
{
	struct file_state *f = &files[file];
	uint8_t buf[BLK], want[BLK];
	char p[4096];
	int fd, bad = 0;
	ssize_t r;

	path_of(p, sizeof(p), file);
	fd = open(p, O_RDONLY);
	if (fd < 0) {
		err(t, "open for read", file);
		return -1;
	}
	for (uint32_t b = 0; b <= f->blocks; b++) {
		r = pread(fd, buf, BLK, (off_t)b * BLK);
		if (b == f->blocks) {
			if (r != 0) {
				errno = 0;
				err(t, "file longer than written", file);
				bad = 1;
			}
			break;
		}
		if (r != BLK) {
			errno = 0;
			err(t, "short read", file);
			bad = 1;
			break;
		}
		fill_block(want, file, f->gen, b);
		if (memcmp(buf, want, BLK)) {
			errno = 0;
			err(t, "content differs", file);
			bad = 1;
			break;
		}
		if (t)
			t->bytes_read += BLK;
	}
	close(fd);
	return bad ? -1 : 0;
}

static int append_blocks(struct thread_ctx *t, int fd, uint32_t file,
			 uint32_t n)
{
	struct file_state *f = &files[file];
	uint8_t buf[BLK];

	for (uint32_t i = 0; i < n; i++) {
		fill_block(buf, file, f->gen, f->blocks);
		if (pwrite(fd, buf, BLK, (off_t)f->blocks * BLK) != BLK) {
			err(t, "write", file);
			return -1;
		}
		f->blocks++;
		t->bytes_written += BLK;
	}
	return 0;
}

static int recreate(struct thread_ctx *t, uint32_t file)
{
	struct file_state *f = &files[file];
	char p[4096];
	int fd, r;

	path_of(p, sizeof(p), file);
	if (f->blocks && unlink(p)) {
		err(t, "unlink", file);
		return -1;
	}
	f->gen++;
	f->blocks = 0;
	fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (fd < 0) {
		err(t, "create", file);
		return -1;
	}
	r = append_blocks(t, fd, file, CREATE_BLOCKS);
	if (!r && timed_fsync(t, fd)) {
		err(t, "fsync", file);
		r = -1;
	}
	close(fd);
	return r;
}

static int append_one(struct thread_ctx *t, uint32_t file)
{
	char p[4096];
	int fd, r;

	if (files[file].blocks >= MAX_BLOCKS)
		return recreate(t, file);
	path_of(p, sizeof(p), file);
	fd = open(p, O_WRONLY);
	if (fd < 0) {
		err(t, "open for append", file);
		return -1;
	}
	r = append_blocks(t, fd, file, 1);
	if (!r && timed_fsync(t, fd)) {
		err(t, "fsync", file);
		r = -1;
	}
	close(fd);
	return r;
}

static uint32_t pick(struct thread_ctx *t)
{
	uint32_t per = (nfiles - t->id + nthreads - 1) / nthreads;

	return t->id + (uint32_t)(splitmix(&t->rng) % per) * nthreads;
}

static void *worker(void *arg)
{
	struct thread_ctx *t = arg;

	while (!stop) {
		uint64_t t0 = now_ns();
		uint32_t a = pick(t), b = pick(t), c = pick(t);

		recreate(t, a);
		if (!read_check(t, b))
			append_one(t, b);
		read_check(t, c);
		note_lat(t->op_lat, &t->nop_lat, now_ns() - t0);
		t->ops++;
	}
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Percentiles (in microseconds) of the merged latency samples. */
static void pct_json(const char *name, uint32_t *all, uint64_t n)
{
	static const double ps[] = { 50, 99, 99.9 };

	qsort(all, n, sizeof(*all), cmp_u32);
	printf("\"%s\":{", name);
	for (int i = 0; i < 3; i++) {
		double v = 0;

		if (n) {
			uint64_t k = (uint64_t)(ps[i] / 100.0 * n);

			v = all[k >= n ? n - 1 : k] * 64 / 1000.0;
		}
		printf("%s\"p%g\":%.1f", i ? "," : "", ps[i], v);
	}
	printf("}");
}

static int save_state(const char *state)
{
	FILE *f = fopen(state, "w");

	if (!f)
		return -1;
	fprintf(f, "%d %d\n", nthreads, nfiles);
	for (int i = 0; i < nfiles; i++)
		fprintf(f, "%u %u\n", files[i].gen, files[i].blocks);
	return fclose(f);
}

static int load_state(const char *state)
{
	FILE *f = fopen(state, "r");

	if (!f || fscanf(f, "%d %d", &nthreads, &nfiles) != 2 || nfiles <= 0)
		return -1;
	files = calloc(nfiles, sizeof(*files));
	for (int i = 0; i < nfiles; i++)
		if (fscanf(f, "%u %u", &files[i].gen, &files[i].blocks) != 2)
			return -1;
	fclose(f);
	return 0;
}

static uint64_t check_all(void)
{
	uint64_t bad = 0;

	for (int i = 0; i < nfiles; i++)
		if (files[i].blocks && read_check(NULL, i))
			bad++;
	return bad;
}

int main(int argc, char **argv)
{
	struct thread_ctx *ts;
	uint64_t ops = 0, fsyncs = 0, errors = 0, rd = 0, wr = 0, nf = 0, no = 0;
	uint32_t *allf, *allo;
	double secs, elapsed, max_secs = 0;
	uint64_t t0, min_fsyncs = 0;

	if (argc >= 4 && !strcmp(argv[1], "check")) {
		dir = argv[2];
		if (load_state(argv[3])) {
			fprintf(stderr, "varmail: cannot read %s\n", argv[3]);
			return 2;
		}
		errors = check_all();
		printf("{\"check_errors\":%llu,\"files\":%d}\n",
		       (unsigned long long)errors, nfiles);
		return errors ? 1 : 0;
	}
	if (argc < 5 || strcmp(argv[1], "run")) {
		fprintf(stderr, "usage: varmail run DIR STATE SECONDS [THREADS [FILES [MIN_FSYNCS [MAX_SECONDS]]]]\n"
				"       varmail check DIR STATE\n");
		return 2;
	}
	dir = argv[2];
	secs = atof(argv[4]);
	if (argc > 5)
		nthreads = atoi(argv[5]);
	if (argc > 6)
		nfiles = atoi(argv[6]);
	if (argc > 7)
		min_fsyncs = strtoull(argv[7], NULL, 0);
	if (argc > 8)
		max_secs = atof(argv[8]);
	if (nthreads < 1 || nfiles < nthreads * 3)
		return 2;
	files = calloc(nfiles, sizeof(*files));
	ts = calloc(nthreads, sizeof(*ts));

	/* Populate (not timed), then sync so the run starts from a clean state. */
	{
		struct thread_ctx setup = { .id = 0 };

		for (int i = 0; i < nfiles; i++)
			if (recreate(&setup, i))
				return 1;
		sync();
	}

	for (int i = 0; i < nthreads; i++) {
		ts[i].id = i;
		ts[i].rng = 0x1234567ull * (i + 1);
		ts[i].fsync_lat = malloc(sizeof(uint32_t) * MAX_LAT);
		ts[i].op_lat = malloc(sizeof(uint32_t) * MAX_LAT);
	}
	t0 = now_ns();
	for (int i = 0; i < nthreads; i++)
		pthread_create(&ts[i].th, NULL, worker, &ts[i]);
	for (;;) {
		double e = (now_ns() - t0) / 1e9;
		uint64_t n = 0;

		for (int i = 0; i < nthreads; i++)
			n += __atomic_load_n(&ts[i].fsyncs, __ATOMIC_RELAXED);
		if (e >= secs && (n >= min_fsyncs || (max_secs > 0 && e >= max_secs)))
			break;
		usleep(10000);
	}
	stop = 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(ts[i].th, NULL);
	elapsed = (now_ns() - t0) / 1e9;

	for (int i = 0; i < nthreads; i++) {
		ops += ts[i].ops;
		fsyncs += ts[i].fsyncs;
		errors += ts[i].errors;
		rd += ts[i].bytes_read;
		wr += ts[i].bytes_written;
		nf += ts[i].nfsync_lat;
		no += ts[i].nop_lat;
	}
	allf = malloc(sizeof(uint32_t) * (nf + 1));
	allo = malloc(sizeof(uint32_t) * (no + 1));
	nf = no = 0;
	for (int i = 0; i < nthreads; i++) {
		memcpy(allf + nf, ts[i].fsync_lat, ts[i].nfsync_lat * 4);
		nf += ts[i].nfsync_lat;
		memcpy(allo + no, ts[i].op_lat, ts[i].nop_lat * 4);
		no += ts[i].nop_lat;
	}
	errors += check_all();
	if (save_state(argv[3]))
		errors++;

	printf("{\"ops\":%llu,\"secs\":%.3f,\"ops_per_sec\":%.1f,\"fsyncs\":%llu,"
	       "\"fsyncs_per_sec\":%.1f,\"bytes_read\":%llu,\"bytes_written\":%llu,"
	       "\"errors\":%llu,\"threads\":%d,\"files\":%d,",
	       (unsigned long long)ops, elapsed, ops / elapsed,
	       (unsigned long long)fsyncs, fsyncs / elapsed,
	       (unsigned long long)rd, (unsigned long long)wr,
	       (unsigned long long)errors, nthreads, nfiles);
	pct_json("fsync_lat_us", allf, nf);
	printf(",");
	pct_json("op_lat_us", allo, no);
	printf("}\n");
	return errors ? 1 : 0;
}
