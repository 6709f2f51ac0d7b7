// SPDX-License-Identifier: GPL-2.0-only
/*
 * scribble-read: a hostile reader. Reads a device with O_DIRECT into buffers
 * that other threads keep overwriting while the reads are in flight, so that
 * a target which takes anything from the reader's own pages after the
 * origin's DMA (a read fill copied out of the completed bio) caches the
 * scribbles instead of the device's data.
 *
 * Usage: scribble-read DEV BYTES SECONDS [BLOCK]
 *   Reads BLOCK-sized (default 65536), BLOCK-aligned pieces of the first
 *   BYTES of DEV, sweeping the range in a shuffled order again and again
 *   for SECONDS. Prints the number of reads done. Needs only read access.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NR_PAIRS 2

struct pair {
	int fd;
	unsigned char *buf;
	size_t block;
	uint64_t nr_blocks;
	unsigned int seed;
	uint64_t reads;
	int error;
};

static atomic_int stop;

static void *scribbler(void *arg)
{
	struct pair *p = arg;
	unsigned char c = 0xa5;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		/* Volatile stores: the compiler must not drop or merge them. */
		volatile unsigned char *v = p->buf;
		size_t i;

		for (i = 0; i < p->block; i += 64)
			v[i] = c;
		c = c * 33 + 1;
	}
	return NULL;
}

static void *reader(void *arg)
{
	struct pair *p = arg;
	uint64_t *order = malloc(p->nr_blocks * sizeof(*order));
	uint64_t i, j, t;

	if (!order) {
		p->error = ENOMEM;
		return NULL;
	}
	for (i = 0; i < p->nr_blocks; i++)
		order[i] = i;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (i = p->nr_blocks - 1; i > 0; i--) {
			j = rand_r(&p->seed) % (i + 1);
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < p->nr_blocks &&
		     !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
			ssize_t n = pread(p->fd, p->buf, p->block,
					  (off_t)(order[i] * p->block));

			if (n != (ssize_t)p->block) {
				p->error = n < 0 ? errno : EIO;
				goto out;
			}
			p->reads++;
		}
	}
out:
	free(order);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t rt[NR_PAIRS], st[NR_PAIRS];
	struct pair pairs[NR_PAIRS];
	unsigned long long bytes, total = 0;
	size_t block = 65536;
	unsigned int secs, i;
	int fd, rc = 0;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: %s DEV BYTES SECONDS [BLOCK]\n", argv[0]);
		return 2;
	}
	bytes = strtoull(argv[2], NULL, 0);
	secs = strtoul(argv[3], NULL, 0);
	if (argc == 5)
		block = strtoul(argv[4], NULL, 0);
	if (!block || block % 4096 || bytes < block) {
		fprintf(stderr, "%s: BLOCK must be a multiple of 4096, BYTES >= BLOCK\n",
			argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (i = 0; i < NR_PAIRS; i++) {
		pairs[i] = (struct pair){ .fd = fd, .block = block,
					  .nr_blocks = bytes / block,
					  .seed = 12345 + i };
		if (posix_memalign((void **)&pairs[i].buf, 4096, block)) {
			perror("posix_memalign");
			return 1;
		}
		memset(pairs[i].buf, 0x5a, block);
	}
	for (i = 0; i < NR_PAIRS; i++) {
		pthread_create(&st[i], NULL, scribbler, &pairs[i]);
		pthread_create(&rt[i], NULL, reader, &pairs[i]);
	}
	sleep(secs);
	atomic_store(&stop, 1);
	for (i = 0; i < NR_PAIRS; i++) {
		pthread_join(rt[i], NULL);
		pthread_join(st[i], NULL);
		total += pairs[i].reads;
		if (pairs[i].error) {
			fprintf(stderr, "%s: read: %s\n", argv[1],
				strerror(pairs[i].error));
			rc = 1;
		}
	}
	printf("%llu\n", total);
	return rc;
}
