// SPDX-License-Identifier: GPL-2.0-only
/*
 * crashio: the writer and the checker of the crash campaign (tests/crash/run).
 *
 *   crashio write DEV --log FILE --epoch E --area START:LEN [--seed S]
 *           [--arm N] [--arm-discard] [--max-seconds T] STREAM...
 *   crashio verify DEV --area START:LEN --baseline FILE [--save FILE]
 *           [--region SECTORS] LOG...
 *   crashio fswrite DIR --log FILE --epoch E [--seed S] [--arm N]
 *           [--max-seconds T] [--max-bytes B]
 *   crashio fscheck DIR LOG...
 *   crashio stamp FILE EPOCH ID OFF NSECT [FIRST]
 *
 * Sizes and offsets are in 512-byte sectors unless said otherwise.
 *
 * write: one thread per STREAM, each one write at a time (queue depth 1), in
 * its own equal, 1 MiB-aligned part of the area.  STREAM is MODE:MIN:MAX[:P]
 * with MIN..MAX the write size in bytes (multiples of 512, at most 1 MiB,
 * log-uniform) and MODE:
 *   d  O_DIRECT, no fsync, no FUA
 *   y  O_DIRECT|O_DSYNC (FUA)
 *   f  O_DIRECT, fsync (a FLUSH) after a write with probability P
 *   x  O_DIRECT, a discard (BLKDISCARD) instead of a write with probability P
 *   b  buffered, fsync after a write with probability P
 *   s  as b, but sequential: each write where the last ended, from the
 *      part's start round to it again (a stream whose asynchronous
 *      writeback admission sends around PM: tests/crash/guest's stream
 *      kills)
 * Every 512-byte sector written carries a stamp: magic, epoch, write id,
 * index in the write, the write's length, its absolute sector, a filler, and
 * a crc32 of all that: a sector is either exactly one write's or detectably
 * not.  Each operation is logged to FILE (opened O_APPEND|O_SYNC: on the
 * host's 9p-shared state directory it survives a killed VM) before it is
 * issued and again once it is acknowledged:
 *   I E ID STREAM KIND OFF NSECT    issued (KIND: W d/f, Y y, X discard, B b)
 *   A E ID                          acknowledged (pwrite or ioctl returned)
 *   F E                             an fsync of a direct stream returned
 *   S E STREAM ID                   an fsync of a buffered stream returned: its
 *                                   writes up to ID are acknowledged
 * After N acknowledgements it prints "ARM" (the host kills the VM when it sees
 * it); with --arm-discard the next operation of the first x stream is a
 * discard of 8 MiB (or its whole part).  It writes until killed, or for T
 * seconds (then exits with status 3).
 *
 * verify: reads the area (O_DIRECT) and checks each sector against the
 * baseline (what the last verification found: one u64 per sector, 0 for
 * zeros, ~0 for "anything") and the logs of the boots since, oldest first.
 * A sector may hold the last acknowledged write that covered it, or any
 * write issued after that (acknowledged or not); a discard adds zeros.
 * Counts, for the RESULT line:
 *   acked    acknowledged writes (and discards) in the logs
 *   checked  acknowledged writes that still own a sector (what is checked)
 *   lost     acknowledged writes some owned sector of which holds something
 *            else (lost_flushed: of those, ones a FLUSH or FUA covered)
 *   torn     writes in flight (not acknowledged, O_DIRECT) present in some
 *            but not all of their sectors within one region (a bio up to a
 *            region is atomic); an acknowledged write partly present is lost
 *   garbage  sectors holding no valid stamp (a torn sector) or a stamp of
 *            another place
 *   changed  sectors no logged write covered that differ from the baseline
 *   discard_flips  sectors a discard covered that read back as their old data
 *            at the last verification and as zeros now (allowed: a discard
 *            leaves the data undefined; counted because it means the cache
 *            and the origin disagreed about them)
 * Exit status 1 when lost, torn, garbage or changed is not 0, 2 on errors.
 * --save writes the new baseline (what was found; a sector discarded since it
 * was last written that still reads as old data is marked so that zeros are
 * accepted there later).
 *
 * fswrite: files of 1 KiB..1 MiB in DIR/eE/ (content: a function of epoch,
 * index and offset), each written, fsync'd, its directory fsync'd, then
 * logged "F E IDX SIZE"; past --max-bytes the oldest of this run are deleted
 * ("D E IDX" logged first).  ARM after N files.
 * fscheck: every file logged F and not D in the LOGs has its size and content.
 * stamp: write the first FIRST (default all) sectors of the write EPOCH/ID of
 * NSECT sectors at OFF, as the writer would, logging nothing (tests/crash/selftest
 * builds cases for the checker with it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define SECT 512
#define MAX_NSECT 2048			/* 1 MiB */
#define MAGIC 0x31504d4341435246ULL	/* "FRCACMP1" */
#define KEY_ZERO 0ULL
#define KEY_ANY (~0ULL)
/* In a baseline: the sector was discarded since it was last written. */
#define KEY_DISCARDED (1ULL << 63)
/* ... and read as zeros then (the old data may come back from a cache). */
#define KEY_DZERO (1ULL << 62)
#define MAX_STREAMS 8
#define MAX_CAND 6

struct stamp {
	uint64_t magic;
	uint32_t epoch;
	uint32_t wid;
	uint16_t idx;
	uint16_t nsect;
	uint32_t pad;
	uint64_t sector;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "crashio: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

/* crc32 (IEEE), table-driven. */
static uint32_t crc_table[256];

static void crc_init(void)
{
	uint32_t c, i, k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320 ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint32_t c = 0xffffffff;

	while (n--)
		c = crc_table[(c ^ *b++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffff;
}

/* splitmix64: the filler and the random choices. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t rnd(uint64_t *st)
{
	*st += 0x9e3779b97f4a7c15ULL;
	return mix64(*st);
}

static double rnd01(uint64_t *st)
{
	return (rnd(st) >> 11) * (1.0 / 9007199254740992.0);
}

static void fill_sector(unsigned char *p, uint32_t epoch, uint32_t wid,
			unsigned int idx, unsigned int nsect, uint64_t sector)
{
	struct stamp s = {
		.magic = MAGIC, .epoch = epoch, .wid = wid, .idx = idx,
		.nsect = nsect, .sector = sector,
	};
	uint64_t f = mix64(((uint64_t)epoch << 32 | wid) ^ (sector << 1));
	uint32_t crc;
	size_t o;

	memcpy(p, &s, sizeof(s));
	for (o = sizeof(s); o + 8 <= SECT - 4; o += 8) {
		memcpy(p + o, &f, 8);
		f = mix64(f);
	}
	memset(p + o, 0, SECT - 4 - o);
	crc = crc32(p, SECT - 4);
	memcpy(p + SECT - 4, &crc, 4);
}

/* What is wrong with a sector that is not a valid stamp for its place. */
enum { G_OK, G_MAGIC, G_CRC, G_PLACE, G_UNLOGGED, G_KINDS };
static const char * const g_names[] = {
	"ok", "no stamp", "bad crc (torn sector)", "a stamp of another sector",
	"a stamp of a write never logged"
};

/* The key of a sector's content: 0 zeros, ~0 not a valid stamp for here (*why). */
static uint64_t sector_key(const unsigned char *p, uint64_t sector, unsigned char *why)
{
	static const unsigned char zero[SECT];
	struct stamp s;
	uint32_t crc;

	*why = G_OK;
	if (!memcmp(p, zero, SECT))
		return KEY_ZERO;
	memcpy(&s, p, sizeof(s));
	memcpy(&crc, p + SECT - 4, 4);
	if (s.magic != MAGIC)
		*why = G_MAGIC;
	else if (crc != crc32(p, SECT - 4))
		*why = G_CRC;
	else if (s.sector != sector || s.idx >= s.nsect || s.nsect == 0 ||
		 s.nsect > MAX_NSECT || s.epoch == 0)
		*why = G_PLACE;
	return *why ? KEY_ANY : (uint64_t)s.epoch << 32 | s.wid;
}

static int64_t parse_num(const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s)
		die("bad number '%s'", s);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	else if (*end == 'g' || *end == 'G')
		v <<= 30, end++;
	if (*end)
		die("bad number '%s'", s);
	return v;
}

static void parse_area(const char *s, uint64_t *start, uint64_t *len)
{
	char buf[64], *c;

	snprintf(buf, sizeof(buf), "%s", s);
	c = strchr(buf, ':');
	if (!c)
		die("--area wants START:LEN (sectors)");
	*c = 0;
	*start = parse_num(buf);
	*len = parse_num(c + 1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ log */

static int log_fd = -1;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void log_open(const char *path)
{
	log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_SYNC, 0644);
	if (log_fd < 0)
		die("cannot open log %s: %s", path, strerror(errno));
}

/* One record per write(): a killed VM leaves whole lines, at most a partial last one. */
static void logf_locked(const char *fmt, ...)
{
	char line[160];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (write(log_fd, line, n) != n)
		die("log write failed: %s", strerror(errno));
}

/* ------------------------------------------------------------------ write */

struct stream {
	int k;
	char mode;
	unsigned int min, max;		/* sectors */
	double p;
	uint64_t start, len;		/* sectors */
	uint64_t next;			/* s: where the next write goes */
	uint64_t rng;
	int arm_discard;
	pthread_t th;
};

static const char *w_dev;
static uint32_t w_epoch;
static atomic_uint w_next_id;
static atomic_long w_acks;
static long w_arm = -1;
static double w_stop;
static atomic_int w_armed;

static void ack_done(void)
{
	long n = atomic_fetch_add(&w_acks, 1) + 1;

	if (w_arm >= 0 && n >= w_arm && !atomic_exchange(&w_armed, 1)) {
		printf("ARM\n");
		fflush(stdout);
	}
}

static unsigned int pick_len(struct stream *s)
{
	double lmin = s->min, lmax = s->max, l;
	unsigned int n;

	/* Log-uniform between min and max. */
	l = lmin * __builtin_exp(rnd01(&s->rng) * __builtin_log(lmax / lmin + 1e-9));
	n = (unsigned int)l;
	if (n < s->min)
		n = s->min;
	if (n > s->max)
		n = s->max;
	if (n > s->len)
		n = s->len;
	return n;
}

static void *stream_run(void *arg)
{
	struct stream *s = arg;
	unsigned char *buf;
	int fd, flags = O_WRONLY;
	uint32_t last_b = 0;
	int have_b = 0;
	int buffered = s->mode == 'b' || s->mode == 's';

	if (!buffered)
		flags |= O_DIRECT;
	if (s->mode == 'y')
		flags |= O_DSYNC;
	fd = open(w_dev, flags);
	if (fd < 0)
		die("open %s: %s", w_dev, strerror(errno));
	if (posix_memalign((void **)&buf, 4096, MAX_NSECT * SECT))
		die("out of memory");

	while (now() < w_stop) {
		unsigned int n = pick_len(s), i;
		uint64_t off = s->start + rnd(&s->rng) % (s->len - n + 1);
		uint32_t wid = atomic_fetch_add(&w_next_id, 1) + 1;
		int discard = s->mode == 'x' && rnd01(&s->rng) < s->p;
		char kind;

		if (s->arm_discard && atomic_load(&w_acks) + 1 >= w_arm) {
			/* The ARM operation: a large discard. */
			discard = 1;
			n = s->len < 16384 ? s->len : 16384;
			off = s->start + rnd(&s->rng) % (s->len - n + 1);
			s->arm_discard = 0;
		}
		if (!buffered)
			off &= ~7ULL;	/* 4 KiB aligned starts keep most bios whole-page */
		if (s->mode == 'd' && (rnd(&s->rng) & 3) == 0)
			off = s->start + rnd(&s->rng) % (s->len - n + 1); /* any 512 B */
		if (s->mode == 's') {
			if (s->next < s->start || s->next + n > s->start + s->len)
				s->next = s->start;
			off = s->next;
			s->next = off + n;
		}
		kind = discard ? 'X' : s->mode == 'y' ? 'Y' : buffered ? 'B' : 'W';

		pthread_mutex_lock(&log_lock);
		logf_locked("I %u %u %d %c %llu %u\n", w_epoch, wid, s->k, kind,
			    (unsigned long long)off, n);
		pthread_mutex_unlock(&log_lock);

		if (discard) {
			uint64_t r[2] = { off * SECT, (uint64_t)n * SECT };

			if (ioctl(fd, BLKDISCARD, r))
				die("stream %d: BLKDISCARD: %s", s->k, strerror(errno));
		} else {
			for (i = 0; i < n; i++)
				fill_sector(buf + (size_t)i * SECT, w_epoch, wid, i, n, off + i);
			if (pwrite(fd, buf, (size_t)n * SECT, off * SECT) != (ssize_t)n * SECT)
				die("stream %d: pwrite of %u sectors at %llu: %s", s->k, n,
				    (unsigned long long)off, strerror(errno));
		}
		if (buffered) {
			last_b = wid;
			have_b = 1;
		} else {
			pthread_mutex_lock(&log_lock);
			logf_locked("A %u %u\n", w_epoch, wid);
			pthread_mutex_unlock(&log_lock);
			ack_done();
		}
		if ((s->mode == 'f' || buffered) && rnd01(&s->rng) < s->p) {
			if (fsync(fd))
				die("stream %d: fsync: %s", s->k, strerror(errno));
			pthread_mutex_lock(&log_lock);
			if (buffered)
				logf_locked("S %u %d %u\n", w_epoch, s->k, last_b);
			else
				logf_locked("F %u\n", w_epoch);
			pthread_mutex_unlock(&log_lock);
			if (buffered && have_b) {
				have_b = 0;
				ack_done();
			}
		}
	}
	free(buf);
	close(fd);
	return NULL;
}

static int cmd_write(int argc, char **argv)
{
	struct stream st[MAX_STREAMS];
	uint64_t start = 0, len = 0, seed = 1, part;
	const char *logp = NULL;
	int ns = 0, i, arm_discard = 0;
	double secs = 120;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--log") && i + 1 < argc)
			logp = argv[++i];
		else if (!strcmp(a, "--epoch") && i + 1 < argc)
			w_epoch = parse_num(argv[++i]);
		else if (!strcmp(a, "--area") && i + 1 < argc)
			parse_area(argv[++i], &start, &len);
		else if (!strcmp(a, "--seed") && i + 1 < argc)
			seed = parse_num(argv[++i]);
		else if (!strcmp(a, "--arm") && i + 1 < argc)
			w_arm = parse_num(argv[++i]);
		else if (!strcmp(a, "--arm-discard"))
			arm_discard = 1;
		else if (!strcmp(a, "--max-seconds") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!w_dev)
			w_dev = a;
		else {
			struct stream *s = &st[ns];
			char mode;
			unsigned int mn, mx;
			double p = 0;

			if (ns == MAX_STREAMS)
				die("at most %d streams", MAX_STREAMS);
			char tmp[64], *f[4] = { NULL };
			int nf = 0;

			snprintf(tmp, sizeof(tmp), "%s", a);
			for (f[0] = strtok(tmp, ":"); f[nf] && nf < 3; )
				f[++nf] = strtok(NULL, ":");
			if (nf < 3 || strlen(f[0]) != 1)
				die("bad stream '%s' (MODE:MIN:MAX[:P])", a);
			mode = f[0][0];
			mn = parse_num(f[1]);
			mx = parse_num(f[2]);
			if (f[3])
				p = atof(f[3]);
			if (!mode || !strchr("dyfxbs", mode) || mn < SECT || mx > MAX_NSECT * SECT ||
			    mn > mx || mn % SECT || mx % SECT)
				die("bad stream '%s' (MODE:MIN:MAX[:P])", a);
			memset(s, 0, sizeof(*s));
			s->k = ns;
			s->mode = mode;
			s->min = mn / SECT;
			s->max = mx / SECT;
			s->p = p;
			s->rng = mix64(seed * 1000003 + ns * 7919 + w_epoch);
			ns++;
		}
	}
	if (!w_dev || !logp || !w_epoch || !len || !ns)
		die("write: DEV, --log, --epoch, --area and a stream are required");
	part = (len / ns) & ~2047ULL;
	if (part < MAX_NSECT)
		die("area too small for %d streams", ns);
	for (i = 0; i < ns; i++) {
		st[i].start = start + i * part;
		st[i].len = part;
		if (arm_discard && st[i].mode == 'x') {
			st[i].arm_discard = 1;
			arm_discard = 0;
		}
	}
	log_open(logp);
	w_stop = now() + secs;
	printf("WRITER START epoch %u, %d streams\n", w_epoch, ns);
	fflush(stdout);
	for (i = 0; i < ns; i++)
		if (pthread_create(&st[i].th, NULL, stream_run, &st[i]))
			die("pthread_create");
	for (i = 0; i < ns; i++)
		pthread_join(st[i].th, NULL);
	printf("WRITER END after %ld acknowledgements\n", atomic_load(&w_acks));
	return 3;
}

/* ------------------------------------------------------------------ verify */

struct op {
	uint64_t key;
	uint64_t off;
	uint32_t nsect;
	char kind;
	char acked;
	char flushed;
	long apos;		/* record number of its A, for flushes */
	int logn;
	uint32_t stream;
};

static struct op *ops;
static size_t nops, capops;
/* key -> index + 1, open addressing */
static size_t *htab;
static size_t hcap;

static size_t hslot(uint64_t key)
{
	size_t h = mix64(key) & (hcap - 1);

	while (htab[h] && ops[htab[h] - 1].key != key)
		h = (h + 1) & (hcap - 1);
	return h;
}

static struct op *op_find(uint64_t key)
{
	size_t h;

	if (!hcap)
		return NULL;
	h = hslot(key);
	return htab[h] ? &ops[htab[h] - 1] : NULL;
}

static void op_add(struct op *o)
{
	size_t h;

	if ((nops + 1) * 2 > hcap) {
		size_t i, ocap = hcap;
		size_t *old = htab;

		hcap = hcap ? hcap * 2 : 1024;
		htab = calloc(hcap, sizeof(*htab));
		if (!htab)
			die("out of memory");
		for (i = 0; i < ocap; i++)
			if (old[i])
				htab[hslot(ops[old[i] - 1].key)] = old[i];
		free(old);
	}
	if (nops == capops) {
		capops = capops ? capops * 2 : 1024;
		ops = realloc(ops, capops * sizeof(*ops));
		if (!ops)
			die("out of memory");
	}
	h = hslot(o->key);
	if (htab[h])
		die("write %llx logged twice", (unsigned long long)o->key);
	ops[nops++] = *o;
	htab[h] = nops;
}

static void read_log(const char *path, int logn)
{
	FILE *f = fopen(path, "r");
	char line[256];
	long pos = 0, last_flush = -1;
	size_t first = nops, i;

	if (!f) {
		if (errno == ENOENT)
			return;	/* a boot that wrote nothing */
		die("cannot read %s: %s", path, strerror(errno));
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned int e, id, k, n;
		unsigned long long off;
		char kind;
		struct op o, *p;

		pos++;
		if (!strchr(line, '\n'))
			break;	/* the partial last line of a killed writer */
		if (sscanf(line, "I %u %u %u %c %llu %u", &e, &id, &k, &kind, &off, &n) == 6) {
			memset(&o, 0, sizeof(o));
			o.key = (uint64_t)e << 32 | id;
			o.off = off;
			o.nsect = n;
			o.kind = kind;
			o.logn = logn;
			o.stream = k;
			o.apos = -1;
			op_add(&o);
		} else if (sscanf(line, "A %u %u", &e, &id) == 2) {
			p = op_find((uint64_t)e << 32 | id);
			if (!p)
				die("%s: ack of unlogged write %u/%u", path, e, id);
			p->acked = 1;
			p->apos = pos;
			if (p->kind == 'Y')
				p->flushed = 1;
		} else if (sscanf(line, "S %u %u %u", &e, &k, &id) == 3) {
			for (i = first; i < nops; i++)
				if (ops[i].kind == 'B' && ops[i].stream == k &&
				    (uint32_t)ops[i].key <= id) {
					ops[i].acked = 1;
					ops[i].flushed = 1;
					ops[i].apos = pos;
				}
			last_flush = pos;
		} else if (sscanf(line, "F %u", &e) == 1) {
			last_flush = pos;
		} else {
			die("%s:%ld: bad record: %s", path, pos, line);
		}
	}
	fclose(f);
	for (i = first; i < nops; i++)
		if (ops[i].acked && ops[i].apos < last_flush)
			ops[i].flushed = 1;
}

struct cand {
	uint64_t k[MAX_CAND];
	unsigned char n;
	unsigned char any;	/* too many candidates, or an unknown baseline */
	unsigned char disc;	/* discarded since the last write */
	unsigned char was_disc;	/* ... according to the baseline */
	int32_t req;		/* the acknowledged write this sector must hold, or -1 */
};

static void cand_add(struct cand *c, uint64_t key)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (c->k[i] == key)
			return;
	if (c->n == MAX_CAND)
		c->any = 1;
	else
		c->k[c->n++] = key;
}

static int cand_has(const struct cand *c, uint64_t key)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (c->k[i] == key)
			return 1;
	return 0;
}

static int cmd_verify(int argc, char **argv)
{
	const char *dev = NULL, *basep = NULL, *savep = NULL, *logs[256];
	uint64_t start = 0, len = 0, region = 2048, s, i;
	int nlogs = 0, fd, a;
	struct cand *c;
	uint64_t *got, *base;
	unsigned char *buf, *gwhy;
	long gcount[G_KINDS] = { 0 };
	long acked = 0, checked = 0, lost = 0, lost_flushed = 0, torn = 0;
	long garbage = 0, changed = 0, inflight_new = 0, inflight_old = 0, shown = 0;
	long flips = 0;
	char *lostmark;
	FILE *f;

	for (a = 0; a < argc; a++) {
		if (!strcmp(argv[a], "--area") && a + 1 < argc)
			parse_area(argv[++a], &start, &len);
		else if (!strcmp(argv[a], "--baseline") && a + 1 < argc)
			basep = argv[++a];
		else if (!strcmp(argv[a], "--save") && a + 1 < argc)
			savep = argv[++a];
		else if (!strcmp(argv[a], "--region") && a + 1 < argc)
			region = parse_num(argv[++a]);
		else if (!dev)
			dev = argv[a];
		else if (nlogs < 256)
			logs[nlogs++] = argv[a];
		else
			die("too many logs");
	}
	if (!dev || !len || !basep)
		die("verify: DEV, --area and --baseline are required");

	for (a = 0; a < nlogs; a++)
		read_log(logs[a], a);

	c = calloc(len, sizeof(*c));
	got = calloc(len, sizeof(*got));
	gwhy = calloc(len, 1);
	base = calloc(len, sizeof(*base));
	lostmark = calloc(nops + 1, 1);
	if (!c || !got || !gwhy || !base || !lostmark)
		die("out of memory");
	f = fopen(basep, "r");
	if (f) {
		if (fread(base, sizeof(*base), len, f) != len)
			die("baseline %s is short", basep);
		fclose(f);
	} else if (errno != ENOENT) {
		die("cannot read %s: %s", basep, strerror(errno));
	}
	for (s = 0; s < len; s++) {
		c[s].req = -1;
		if (base[s] == KEY_ANY) {
			c[s].any = 1;
		} else if (base[s] & KEY_DISCARDED) {
			/*
			 * Discarded, and read back as the old data: the
			 * origin may hold zeros under it (a discard need not
			 * zero, nor be deterministic).
			 */
			cand_add(&c[s], base[s] & ~(KEY_DISCARDED | KEY_DZERO));
			cand_add(&c[s], KEY_ZERO);
			c[s].disc = 1;
			c[s].was_disc = !(base[s] & KEY_DZERO);
		} else {
			cand_add(&c[s], base[s]);
		}
	}
	/* Replay the operations in the order they were issued. */
	for (i = 0; i < nops; i++) {
		struct op *o = &ops[i];
		uint64_t x;

		if (o->acked)
			acked++;
		for (x = o->off; x < o->off + o->nsect; x++) {
			struct cand *cc;

			if (x < start || x >= start + len)
				continue;
			cc = &c[x - start];
			if (o->kind == 'X') {
				cand_add(cc, KEY_ZERO);
				cc->disc = 1;
				/* This discard explains zeros: they are no flip. */
				cc->was_disc = 0;
				if (o->acked)
					cc->req = -1;
			} else if (o->acked) {
				cc->n = 0;
				cc->any = 0;
				cc->disc = cc->was_disc = 0;
				cand_add(cc, o->key);
				cc->req = i;
			} else {
				cand_add(cc, o->key);
				cc->was_disc = 0;
			}
		}
	}

	fd = open(dev, O_RDONLY | O_DIRECT);
	if (fd < 0)
		die("open %s: %s", dev, strerror(errno));
	if (posix_memalign((void **)&buf, 4096, MAX_NSECT * SECT))
		die("out of memory");
	for (s = 0; s < len; s += MAX_NSECT) {
		uint64_t n = len - s < MAX_NSECT ? len - s : MAX_NSECT;

		if (pread(fd, buf, n * SECT, (start + s) * SECT) != (ssize_t)(n * SECT))
			die("read of %s at sector %llu: %s", dev,
			    (unsigned long long)(start + s), strerror(errno));
		for (i = 0; i < n; i++)
			got[s + i] = sector_key(buf + i * SECT, start + s + i, &gwhy[s + i]);
	}
	close(fd);

	for (s = 0; s < len; s++) {
		struct cand *cc = &c[s];
		const char *what;

		if (cc->was_disc && got[s] == KEY_ZERO)
			flips++;
		if (got[s] != KEY_ANY && (cc->any || cand_has(cc, got[s])))
			continue;
		if (got[s] != KEY_ANY && got[s] != KEY_ZERO && !op_find(got[s]) &&
		    (got[s] >> 32) >= (ops ? ops[0].key >> 32 : ~0ULL)) {
			/* A stamp of a write nobody logged: treated as garbage. */
			got[s] = KEY_ANY;
			gwhy[s] = G_UNLOGGED;
		}
		if (got[s] == KEY_ANY) {
			garbage++;
			what = g_names[gwhy[s]];
			/* A few of each kind. */
			if (gcount[gwhy[s]]++ < 3)
				shown = shown < 8 ? shown : 7;
		} else if (cc->req >= 0) {
			what = "lost";
		} else {
			changed++;
			what = "changed";
		}
		if (cc->req >= 0 && !lostmark[cc->req]) {
			lostmark[cc->req] = 1;
			lost++;
			if (ops[cc->req].flushed)
				lost_flushed++;
		}
		if (shown++ < 8)
			printf("# sector %llu: %s: holds %016llx, want %016llx%s\n",
			       (unsigned long long)(start + s), what,
			       (unsigned long long)got[s],
			       (unsigned long long)(cc->n ? cc->k[0] : 0),
			       cc->req >= 0 ? " (acknowledged)" : "");
	}

	/* Atomicity: per write and region, all of its sectors or none. */
	for (i = 0; i < nops; i++) {
		struct op *o = &ops[i];
		uint64_t r0, x, held = 0, may = 0;
		int is_torn = 0, any_held = 0;

		if (o->acked) {
			/* Checked sector by sector above: partly present is lost. */
			for (x = o->off; x < o->off + o->nsect; x++)
				if (x >= start && x < start + len && c[x - start].req == (int32_t)i)
					break;
			if (x < o->off + o->nsect)
				checked++;
			continue;
		}
		/* Buffered writes reach the device page by page, whenever. */
		if (o->kind == 'X' || o->kind == 'B')
			continue;
		r0 = o->off / region;
		for (x = o->off; x <= o->off + o->nsect; x++) {
			if (x == o->off + o->nsect || x / region != r0) {
				if (held && held < may)
					is_torn = 1;
				held = may = 0;
				r0 = x / region;
				if (x == o->off + o->nsect)
					break;
			}
			if (x < start || x >= start + len)
				continue;
			if (!cand_has(&c[x - start], o->key))
				continue;
			may++;
			if (got[x - start] == o->key) {
				held++;
				any_held = 1;
			}
		}
		if (is_torn) {
			torn++;
			if (shown++ < 16)
				printf("# write %u/%u (%c, %u sectors at %llu, in flight) is torn\n",
				       (unsigned int)(o->key >> 32), (unsigned int)o->key,
				       o->kind, o->nsect, (unsigned long long)o->off);
		}
		if (any_held)
			inflight_new++;
		else
			inflight_old++;
	}

	if (garbage)
		printf("# garbage sectors: %ld %s, %ld %s, %ld %s, %ld %s\n",
		       gcount[G_MAGIC], g_names[G_MAGIC], gcount[G_CRC], g_names[G_CRC],
		       gcount[G_PLACE], g_names[G_PLACE], gcount[G_UNLOGGED], g_names[G_UNLOGGED]);
	printf("RESULT ops %zu acked %ld checked %ld lost %ld lost_flushed %ld torn %ld garbage %ld changed %ld inflight_new %ld inflight_old %ld discard_flips %ld\n",
	       nops, acked, checked, lost, lost_flushed, torn, garbage, changed,
	       inflight_new, inflight_old, flips);
	if (savep) {
		for (s = 0; s < len; s++) {
			int i;

			if (!c[s].disc || got[s] == KEY_ANY)
				continue;
			if (got[s] != KEY_ZERO) {
				got[s] |= KEY_DISCARDED;
				continue;
			}
			/* Zeros now; the old data may still come back from a cache. */
			for (i = 0; i < c[s].n; i++)
				if (c[s].k[i] != KEY_ZERO)
					got[s] = c[s].k[i] | KEY_DISCARDED | KEY_DZERO;
		}
		char tmp[4096];

		snprintf(tmp, sizeof(tmp), "%s.new", savep);
		f = fopen(tmp, "w");
		if (!f || fwrite(got, sizeof(*got), len, f) != len || fflush(f) ||
		    fsync(fileno(f)) || fclose(f) || rename(tmp, savep))
			die("cannot save the baseline %s", savep);
	}
	return lost || torn || garbage || changed ? 1 : 0;
}

/* ------------------------------------------------------------------ files */

static void file_block(unsigned char *p, size_t n, uint32_t epoch, uint32_t idx, uint64_t off)
{
	uint64_t st = mix64((uint64_t)epoch << 32 | idx) ^ off;
	size_t i;

	for (i = 0; i < n; i += 8) {
		uint64_t v = rnd(&st);

		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

static int cmd_fswrite(int argc, char **argv)
{
	const char *dir = NULL, *logp = NULL;
	uint64_t seed = 1, rng, max_bytes = 16 << 20, total = 0;
	uint32_t epoch = 0, idx, oldest = 0, *sizes = NULL;
	long arm = -1, files = 0;
	double secs = 120, stop;
	char path[4096], sub[2048];
	unsigned char *buf;
	int a, dfd;

	for (a = 0; a < argc; a++) {
		if (!strcmp(argv[a], "--log") && a + 1 < argc)
			logp = argv[++a];
		else if (!strcmp(argv[a], "--epoch") && a + 1 < argc)
			epoch = parse_num(argv[++a]);
		else if (!strcmp(argv[a], "--seed") && a + 1 < argc)
			seed = parse_num(argv[++a]);
		else if (!strcmp(argv[a], "--arm") && a + 1 < argc)
			arm = parse_num(argv[++a]);
		else if (!strcmp(argv[a], "--max-seconds") && a + 1 < argc)
			secs = atof(argv[++a]);
		else if (!strcmp(argv[a], "--max-bytes") && a + 1 < argc)
			max_bytes = parse_num(argv[++a]);
		else if (!dir)
			dir = argv[a];
		else
			die("fswrite: unexpected %s", argv[a]);
	}
	if (!dir || !logp || !epoch)
		die("fswrite: DIR, --log and --epoch are required");
	log_open(logp);
	snprintf(sub, sizeof(sub), "%s/e%u", dir, epoch);
	if (mkdir(sub, 0755) && errno != EEXIST)
		die("mkdir %s: %s", sub, strerror(errno));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0 || fsync(dfd))
		die("fsync %s: %s", dir, strerror(errno));
	close(dfd);
	dfd = open(sub, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		die("open %s: %s", sub, strerror(errno));
	buf = malloc(1 << 20);
	if (!buf)
		die("out of memory");
	rng = mix64(seed * 31 + epoch);
	stop = now() + secs;
	printf("FSWRITER START epoch %u\n", epoch);
	fflush(stdout);
	for (idx = 0; now() < stop; idx++) {
		/* 1 KiB .. 1 MiB, log-uniform, any length. */
		uint32_t size = 1024 * __builtin_exp(rnd01(&rng) * __builtin_log(1024.0));
		int fd;

		sizes = realloc(sizes, (idx + 1) * sizeof(*sizes));
		if (!sizes)
			die("out of memory");
		sizes[idx] = size;
		while (total + size > max_bytes && oldest < idx) {
			logf_locked("D %u %u\n", epoch, oldest);
			snprintf(path, sizeof(path), "%s/f%u", sub, oldest);
			if (unlink(path))
				die("unlink %s: %s", path, strerror(errno));
			total -= sizes[oldest++];
		}
		snprintf(path, sizeof(path), "%s/f%u", sub, idx);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die("create %s: %s", path, strerror(errno));
		file_block(buf, size, epoch, idx, 0);
		if (write(fd, buf, size) != (ssize_t)size)
			die("write %s: %s", path, strerror(errno));
		if (fsync(fd) || close(fd) || fsync(dfd))
			die("fsync %s: %s", path, strerror(errno));
		logf_locked("F %u %u %u\n", epoch, idx, size);
		total += size;
		if (++files == arm) {
			printf("ARM\n");
			fflush(stdout);
		}
	}
	printf("FSWRITER END after %ld files\n", files);
	return 3;
}

static int cmd_fscheck(int argc, char **argv)
{
	unsigned char *buf, *want;
	long files = 0, bad = 0;
	int a;

	buf = malloc(1 << 20);
	want = malloc(1 << 20);
	if (!buf || !want || argc < 1)
		die("fscheck: DIR LOG...");
	for (a = 1; a < argc; a++) {
		FILE *f = fopen(argv[a], "r");
		char line[256];
		unsigned int e, idx, size, n = 0, cap = 0, i;
		struct { unsigned int e, idx, size, gone; } *fl = NULL;

		if (!f)
			die("cannot read %s: %s", argv[a], strerror(errno));
		while (fgets(line, sizeof(line), f)) {
			if (!strchr(line, '\n'))
				break;
			if (sscanf(line, "F %u %u %u", &e, &idx, &size) == 3) {
				if (n == cap) {
					cap = cap ? cap * 2 : 64;
					fl = realloc(fl, cap * sizeof(*fl));
					if (!fl)
						die("out of memory");
				}
				fl[n].e = e;
				fl[n].idx = idx;
				fl[n].size = size;
				fl[n++].gone = 0;
			} else if (sscanf(line, "D %u %u", &e, &idx) == 2) {
				for (i = 0; i < n; i++)
					if (fl[i].e == e && fl[i].idx == idx)
						fl[i].gone = 1;
			} else {
				die("%s: bad record: %s", argv[a], line);
			}
		}
		fclose(f);
		for (i = 0; i < n; i++) {
			char path[4096];
			struct stat sb;
			ssize_t r = -1;
			int fd;

			if (fl[i].gone)
				continue;
			files++;
			snprintf(path, sizeof(path), "%s/e%u/f%u", argv[0], fl[i].e, fl[i].idx);
			fd = open(path, O_RDONLY);
			if (fd >= 0 && !fstat(fd, &sb) && sb.st_size == fl[i].size)
				r = read(fd, buf, fl[i].size);
			if (fd >= 0)
				close(fd);
			file_block(want, fl[i].size, fl[i].e, fl[i].idx, 0);
			if (r != (ssize_t)fl[i].size || memcmp(buf, want, fl[i].size)) {
				if (bad++ < 8)
					printf("# %s: %s\n", path, fd < 0 ? "missing" :
					       r != (ssize_t)fl[i].size ? "wrong size" : "wrong content");
			}
		}
		free(fl);
	}
	printf("FSCHECK files %ld bad %ld\n", files, bad);
	return bad ? 1 : 0;
}

static int cmd_stamp(int argc, char **argv)
{
	uint64_t off, n, first, i;
	uint32_t epoch, wid;
	unsigned char sec[SECT];
	int fd;

	if (argc < 5)
		die("stamp FILE EPOCH ID OFF NSECT [FIRST]");
	epoch = parse_num(argv[1]);
	wid = parse_num(argv[2]);
	off = parse_num(argv[3]);
	n = parse_num(argv[4]);
	first = argc > 5 ? (uint64_t)parse_num(argv[5]) : n;
	if (!epoch || !n || n > MAX_NSECT || first > n)
		die("stamp: bad arguments");
	fd = open(argv[0], O_WRONLY);
	if (fd < 0)
		die("open %s: %s", argv[0], strerror(errno));
	for (i = 0; i < first; i++) {
		fill_sector(sec, epoch, wid, i, n, off + i);
		if (pwrite(fd, sec, SECT, (off + i) * SECT) != SECT)
			die("write %s: %s", argv[0], strerror(errno));
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	crc_init();
	if (argc < 2)
		die("usage: crashio write|verify|fswrite|fscheck|stamp ... (see the source)");
	if (!strcmp(argv[1], "write"))
		return cmd_write(argc - 2, argv + 2);
	if (!strcmp(argv[1], "verify"))
		return cmd_verify(argc - 2, argv + 2);
	if (!strcmp(argv[1], "fswrite"))
		return cmd_fswrite(argc - 2, argv + 2);
	if (!strcmp(argv[1], "fscheck"))
		return cmd_fscheck(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stamp"))
		return cmd_stamp(argc - 2, argv + 2);
	die("unknown command %s", argv[1]);
	return 2;
}
