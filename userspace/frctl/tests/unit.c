// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of frctl's pure parts: number parsing, the status line parser
 * and its JSON and text, a table line's optional arguments, udev encoding,
 * uuids, the SIGBUS-guarded PM read, and the superblock classifier.
 * Prints one line per failure and "N passed, N failed" at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <json-c/json.h>

#include "frctl.h"

static int passed, failed;

#define CHECK(cond) do {						\
	if (cond) {							\
		passed++;						\
	} else {							\
		failed++;						\
		printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);	\
	}								\
} while (0)

static void test_numbers(void)
{
	u64 v;

	CHECK(!parse_u64("0", &v) && v == 0);
	CHECK(!parse_u64("18446744073709551615", &v) && v == ~0ULL);
	CHECK(parse_u64("18446744073709551616", &v) == -ERANGE);
	CHECK(parse_u64("12a", &v) == -EINVAL);
	CHECK(parse_u64("-1", &v) == -EINVAL);
	CHECK(parse_u64(" 1", &v) == -EINVAL);
	CHECK(parse_u64("1 ", &v) == -EINVAL);
	CHECK(parse_u64("", &v) == -EINVAL);
	CHECK(parse_u64("0x10", &v) == -EINVAL);
	CHECK(!parse_size("4096", &v) && v == 4096);
	CHECK(!parse_size("4k", &v) && v == 4096);
	CHECK(!parse_size("4KiB", &v) && v == 4096);
	CHECK(!parse_size("1M", &v) && v == 1 << 20);
	CHECK(!parse_size("2GiB", &v) && v == 2ULL << 30);
	CHECK(!parse_size("1t", &v) && v == 1ULL << 40);
	CHECK(parse_size("4kb", &v) == -EINVAL);
	CHECK(parse_size("4 k", &v) == -EINVAL);
	CHECK(parse_size("k", &v) == -EINVAL);
	CHECK(parse_size("1.5M", &v) == -EINVAL);
	CHECK(parse_size("17179869184T", &v) == -ERANGE);
	CHECK(parse_size("99999999999999999999999999", &v) == -ERANGE);
}

static const char *good =
	"ok 8 130048 1024 512 1000 200 300 100 3 7 4096 0 0 10 0";

static void test_status(void)
{
	struct fr_status st;
	struct fr_table t;
	struct json_object *o, *v;
	char line[256];

	CHECK(!status_parse(good, &st));
	CHECK(!strcmp(st.state, "ok") && st.chunk_sectors == 8 &&
	      st.chunks_total == 130048 && st.chunks_valid == 1024 &&
	      st.chunks_dirty == 512 && st.read_hits == 1000 &&
	      st.read_misses == 200 && st.write_hits == 300 &&
	      st.write_misses == 100 && st.forced_writebacks == 3 &&
	      st.writeback_rounds == 7 && st.chunks_written_back == 4096 &&
	      st.origin_errors == 0 && st.pm_errors == 0 &&
	      st.read_fills == 10 && st.cleaner == 0 && !st.extra_fields);
	CHECK(!status_has(&st, unreadable) && !st.unreadable);
	snprintf(line, sizeof(line), "%s 5 6", good);
	CHECK(!status_parse(line, &st) && status_has(&st, unreadable) &&
	      st.unreadable == 5 && st.extra_fields == 1);
	CHECK(!status_has(&st, bad_chunks));
	snprintf(line, sizeof(line), "%s 5 6 7", good);
	CHECK(!status_parse(line, &st) && status_has(&st, unreadable) && status_has(&st, bad_chunks) &&
	      st.unreadable == 5 && st.bad_chunks == 6 && st.lost_slots == 7 &&
	      !st.extra_fields);
	snprintf(line, sizeof(line), "%s 5 6 7 8", good);
	CHECK(!status_parse(line, &st) && st.lost_slots == 7 &&
	      status_has(&st, prefetched) && st.prefetched == 8 && !st.extra_fields);
	CHECK(!status_has(&st, pinned_waits));
	snprintf(line, sizeof(line), "%s 5 6 7 8 9", good);
	CHECK(!status_parse(line, &st) && st.prefetched == 8 &&
	      status_has(&st, pinned_waits) && st.pinned_waits == 9 && !st.extra_fields);
	snprintf(line, sizeof(line), "%s 5 6 7 8 9 10", good);
	CHECK(!status_parse(line, &st) && st.pinned_waits == 9 &&
	      st.extra_fields == 1);
	/* Fields added from now on come as name=value: an unknown one is
	 * skipped by name, a known one read wherever it stands. */
	snprintf(line, sizeof(line), "%s 5 6 7 8 9 later_field=4", good);
	CHECK(!status_parse(line, &st) && st.pinned_waits == 9 &&
	      st.extra_fields == 1);
	snprintf(line, sizeof(line), "%s 5 6 7 8 later=1 pinned_waits=3", good);
	CHECK(!status_parse(line, &st) && st.prefetched == 8 &&
	      status_has(&st, pinned_waits) && st.pinned_waits == 3 &&
	      st.extra_fields == 1);
	CHECK(!status_has(&st, drains));
	snprintf(line, sizeof(line), "%s 5 6 7 8 9 drains=2", good);
	CHECK(!status_parse(line, &st) && st.pinned_waits == 9 &&
	      status_has(&st, drains) && st.drains == 2 && !st.extra_fields);
	snprintf(line, sizeof(line), "%s 5 6 7 8 9 drains=-1", good);
	CHECK(status_parse(line, &st) == -EINVAL);
	snprintf(line, sizeof(line), "%s 5 6 7 8 9 pinned_waits=x", good);
	CHECK(status_parse(line, &st) == -EINVAL);
	snprintf(line, sizeof(line), "%s 5 6 7 8 9x", good);
	CHECK(status_parse(line, &st) == -EINVAL);
	snprintf(line, sizeof(line), "%s 5 6 7 8x", good);
	CHECK(status_parse(line, &st) == -EINVAL);
	snprintf(line, sizeof(line), "%s 5 6 x", good);
	CHECK(status_parse(line, &st) == -EINVAL);
	snprintf(line, sizeof(line), "%s 5x", good);
	CHECK(status_parse(line, &st) == -EINVAL);
	CHECK(status_parse("ok 8 1 2 3", &st) == -EINVAL);
	CHECK(status_parse("ok 8 130048 1024 512 1000 200 300 100 3 7 4096 0 0 10 x", &st) == -EINVAL);
	CHECK(status_parse("ok 8 130048 1024 512 1000 200 300 100 3 7 4096 0 0 10 1x", &st) == -EINVAL);
	CHECK(status_parse("ok 8 130048 1024 512 1000 200 300 100 3 7 -4 0 0 10 0", &st) == -EINVAL);
	CHECK(status_parse("OK! 8 130048 1024 512 1000 200 300 100 3 7 4 0 0 10 0", &st) == -EINVAL);
	CHECK(status_parse("ok 8 10 20 5 0 0 0 0 0 0 0 0 0 0 0", &st) == -ERANGE);
	CHECK(status_parse("ok 0 10 2 1 0 0 0 0 0 0 0 0 0 0 0", &st) == -ERANGE);
	CHECK(status_parse("", &st) == -EINVAL);
	CHECK(status_parse(NULL, &st) == -EINVAL);
	CHECK(!status_parse("degraded 8 10 2 1 0 0 0 0 0 0 0 9 0 0 1", &st) &&
	      !strcmp(st.state, "degraded") && st.cleaner == 1 &&
	      st.origin_errors == 9);

	CHECK(!table_parse("253:1 259:0 2 writeback_period 20", &t));
	CHECK(!strcmp(t.origin, "253:1") && !strcmp(t.pm, "259:0") &&
	      !strcmp(t.opts, "2 writeback_period 20"));
	CHECK(table_parse("253:1", &t) == -EINVAL);

	{
		struct fr_status prev;

		status_parse(good, &st);
		prev = st;
		prev.chunks_written_back -= 256;	/* 1 MiB in 2 s */
		o = status_json("fr0", "FR-00", 16384, &t, &st, &prev, 2.0);
		CHECK(json_object_object_get_ex(o, "dirty_bytes", &v) &&
		      json_object_get_uint64(v) == 512ULL * 4096);
		CHECK(json_object_object_get_ex(o, "read_hit_percent", &v) &&
		      json_object_get_double(v) > 83.3 &&
		      json_object_get_double(v) < 83.4);
		CHECK(json_object_object_get_ex(o, "writeback_bytes_per_second", &v) &&
		      json_object_get_uint64(v) == 512 * 1024);
		CHECK(json_object_object_get_ex(o, "cleaner", &v) &&
		      !json_object_get_boolean(v));
		CHECK(json_object_object_get_ex(o, "size", &v) &&
		      json_object_get_uint64(v) == 16384ULL * 512);
		json_object_put(o);
		o = status_json("fr0", NULL, 16384, NULL, &st, NULL, 0);
		CHECK(!json_object_object_get_ex(o, "writeback_bytes_per_second", &v));
		CHECK(!json_object_object_get_ex(o, "uuid", &v));
		json_object_put(o);
	}
}

/*
 * A table line's optional arguments as the kernel prints them (with fresh's
 * geometry, set_ways among it): each argument read with its value, the
 * tunables found among them, nothing taken for what it is not.
 */
static void test_table_args(void)
{
	const char *line = "16 uuid 0123456789abcdef0123456789abcdef origin_id cleaner chunk_size 8192 region_size 65536 stride 5 set_ways 8 writeback_period 20 cleaner no_read_fill";
	char key[72], val[72], all[400] = "";
	u64 tun[FR_NR_TUNABLES];
	const char *p = line;
	struct fr_table t;
	size_t o = 0;
	int i, ok;

	while (table_arg_next(&p, key, sizeof(key), val, sizeof(val)))
		o += (size_t)snprintf(all + o, sizeof(all) - o, "%s%s%s%s",
				      o ? " " : "", key, val[0] ? "=" : "", val);
	CHECK(!strcmp(all, "uuid=0123456789abcdef0123456789abcdef origin_id=cleaner chunk_size=8192 region_size=65536 stride=5 set_ways=8 writeback_period=20 cleaner no_read_fill"));
	CHECK(table_arg_valued("set_ways") && table_arg_valued("stride") &&
	      table_arg_valued("writeback_period") &&
	      !table_arg_valued("writeback-period") &&
	      !table_arg_valued("cleaner") && !table_arg_valued("8"));

	tunables_of_table(line, tun);
	ok = 1;
	for (i = 0; i < FR_NR_TUNABLES; i++)
		if (tun[i] != (i == FR_TUNABLE_writeback_period ? 20 :
			       frctl_tunables[i].def))
			ok = 0;
	CHECK(ok);
	/* A value is never a name: an origin id that reads as a tunable. */
	tunables_of_table("6 origin_id writeback_jobs set_ways 8 prefetch_kib 0",
			  tun);
	CHECK(tun[FR_TUNABLE_writeback_jobs] ==
	      frctl_tunables[FR_TUNABLE_writeback_jobs].def &&
	      tun[FR_TUNABLE_prefetch_kib] == 0);
	tunables_of_table("", tun);
	CHECK(tun[FR_TUNABLE_prefetch_kib] ==
	      frctl_tunables[FR_TUNABLE_prefetch_kib].def);

	/* The line round-trips: status and resize keep it verbatim. */
	CHECK(!table_parse("253:1 259:0 4 set_ways 8 stride 5", &t) &&
	      !strcmp(t.opts, "4 set_ways 8 stride 5"));
}

/* status_print's text of a status line, in a string to free. */
static char *status_text(const char *line)
{
	struct fr_status st;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (status_parse(line, &st))
		return NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	status_print(f, "fr0", NULL, 16384, NULL, &st, NULL, 0);
	fclose(f);
	return text;
}

/*
 * The width of a set in frctl status (set_ways=, target 1.18): "sets of 8"
 * in the text, set_ways in the JSON; a pair's 2, or no field (a module
 * before 1.18), adds nothing to the text.
 */
static void test_status_ways(void)
{
	struct json_object *o, *v;
	struct fr_status st;
	char line[256], *text;

	snprintf(line, sizeof(line), "%s 5 6 7 8 9 set_ways=8", good);
	CHECK(!status_parse(line, &st) && status_has(&st, set_ways) &&
	      st.set_ways == 8);
	o = status_json("fr0", NULL, 16384, NULL, &st, NULL, 0);
	CHECK(json_object_object_get_ex(o, "set_ways", &v) &&
	      json_object_get_uint64(v) == 8);
	json_object_put(o);
	text = status_text(line);
	CHECK(text && strstr(text, "\n  slots:     sets of 8 chunks (set_ways 8)\n"));
	free(text);

	snprintf(line, sizeof(line), "%s 5 6 7 8 9 set_ways=2", good);
	text = status_text(line);
	CHECK(text && strstr(text, "  cache:") && !strstr(text, "slots:"));
	free(text);
	text = status_text(good);
	CHECK(text && strstr(text, "  cache:") && !strstr(text, "slots:"));
	free(text);
}

static void test_strings(void)
{
	char out[256], us[37], hex[33];
	u8 u[16];
	size_t i;

	udev_encode("/dev/disk/by-id/wwn-0x5000c500a1b2c3d4", out, sizeof(out));
	CHECK(!strcmp(out, "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4"));
	udev_encode("a b\"c$", out, sizeof(out));
	CHECK(!strcmp(out, "a\\x20b\\x22c\\x24"));
	CHECK(!uuid_parse_str("0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0", u));
	uuid_unparse_lower(u, us);
	CHECK(!strcmp(us, "0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0"));
	uuid_hex(u, hex);
	CHECK(!strcmp(hex, "0f1e2d3c4b5a49788796a5b4c3d2e1f0"));
	CHECK(!uuid_parse_str("0F1E2D3C4B5A49788796A5B4C3D2E1F0", u));
	CHECK(uuid_parse_str("0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f", u));
	CHECK(uuid_parse_str("0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f00", u));
	CHECK(uuid_parse_str("0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1fg", u));
	fmt_bytes(out, sizeof(out), 512);
	CHECK(!strcmp(out, "512 B"));
	fmt_bytes(out, sizeof(out), 1536);
	CHECK(!strcmp(out, "1.50 KiB"));
	fmt_bytes(out, sizeof(out), 512ULL << 20);
	CHECK(!strcmp(out, "512 MiB"));
	for (i = 0; i < sizeof(out); i++)
		out[i] = 'x';
	udev_encode("\x01\x02\x03\x04\x05\x06\x07\x08", out, 12);
	CHECK(strlen(out) < 12);
}

/* A read of a page past the end of a truncated file: -EIO, not a crash. */
static void test_sigbus(void)
{
	char path[] = "/tmp/frctl-unit-XXXXXX";
	long pg = sysconf(_SC_PAGESIZE);
	u8 buf[16];
	u64 v;
	int fd = mkstemp(path);
	u8 *map;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unlink(path);
	CHECK(!ftruncate(fd, 2 * pg));
	map = mmap(NULL, 2 * (size_t)pg, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		return;
	CHECK(!ftruncate(fd, pg));
	frctl_pm_install_sigbus();
	CHECK(fr_pm_read(buf, map, sizeof(buf)) == 0);
	CHECK(fr_pm_read(buf, map + pg, sizeof(buf)) == -EIO);
	CHECK(fr_pm_load8((const __le64 *)(map + pg + 8), &v) == -EIO);
	CHECK(fr_pm_load8((const __le64 *)map, &v) == 0 && v == 0);
	munmap(map, 2 * (size_t)pg);
	close(fd);
}

/* A valid superblock for a PM of pm_bytes, as format writes it. */
static void sb_good(struct fr_sb_disk *sb, u64 pm_bytes)
{
	struct fr_format_params p;
	struct fr_geometry g;
	const char *why;

	memset(&p, 0, sizeof(p));
	p.origin_sectors = 16384;
	p.region_chunks = 16;
	snprintf(p.origin_id, sizeof(p.origin_id), "origin");
	CHECK(!fr_geometry_layout(&g, pm_bytes, &p, &why));
	fr_sb_encode(sb, &g, &p);
}

static enum sb_state classify(const struct fr_sb_disk *sb, u64 have, u64 dev)
{
	struct fr_geometry g;
	const char *why = NULL;
	enum sb_state s = sb_classify(sb, have, dev, &g, &why);

	CHECK(s == SB_OK || why);
	return s;
}

static void resum(struct fr_sb_disk *sb)
{
	sb->csum = cpu_to_le32(fr_sb_csum(sb));
}

/* The one classifier: what each kind of superblock is called. */
static void test_sb_classify(void)
{
	const u64 L = 1 << 20;
	struct fr_sb_disk sb;

	sb_good(&sb, L);
	CHECK(classify(&sb, sizeof(sb), L) == SB_OK);
	CHECK(classify(&sb, sizeof(sb), 2 * L) == SB_OK);
	CHECK(classify(&sb, 7, L) == SB_NOT_FR);
	CHECK(classify(&sb, 100, L) == SB_TRUNCATED);
	CHECK(classify(&sb, sizeof(sb), L / 2) == SB_TRUNCATED);
	sb.magic = cpu_to_le64(FR_SB_MAGIC + 1);
	resum(&sb);
	CHECK(classify(&sb, sizeof(sb), L) == SB_NOT_FR);

	sb_good(&sb, L);
	sb.origin_id[3] ^= 0x10;
	CHECK(classify(&sb, sizeof(sb), L) == SB_DAMAGED);
	/* A damaged superblock's size is not believed: no "truncated". */
	CHECK(classify(&sb, sizeof(sb), L / 2) == SB_DAMAGED);

	sb_good(&sb, L);
	sb.version = cpu_to_le32(FR_FORMAT_VERSION + 1);
	resum(&sb);
	CHECK(classify(&sb, sizeof(sb), L) == SB_UNSUPPORTED);
	/* Nor is a newer format's: its fields may mean something else. */
	CHECK(classify(&sb, sizeof(sb), L / 2) == SB_UNSUPPORTED);
	sb.csum ^= cpu_to_le32(1);
	CHECK(classify(&sb, sizeof(sb), L) == SB_DAMAGED);

	sb_good(&sb, L);
	sb.incompat_features = cpu_to_le64(1ULL << 63);
	resum(&sb);
	CHECK(classify(&sb, sizeof(sb), L) == SB_UNSUPPORTED);

	sb_good(&sb, L);
	sb.region_chunks = cpu_to_le32(3);
	resum(&sb);
	CHECK(classify(&sb, sizeof(sb), L) == SB_DAMAGED);

	CHECK(sb_state_exit(SB_OK) == FR_EXIT_OK);
	CHECK(sb_state_exit(SB_DAMAGED) == FR_EXIT_UNCORRECTED);
	CHECK(sb_state_exit(SB_TRUNCATED) == FR_EXIT_UNCORRECTED);
	CHECK(sb_state_exit(SB_UNSUPPORTED) == FR_EXIT_OPERATIONAL);
	CHECK(sb_state_exit(SB_NOT_FR) == FR_EXIT_OPERATIONAL);
	CHECK(*sb_state_hint(SB_TRUNCATED) && !*sb_state_hint(SB_DAMAGED));
}

/* sb_read() on files: what it cannot read is told apart from garbage. */
static void test_sb_read(void)
{
	char path[] = "/tmp/frctl-unit-XXXXXX";
	struct fr_sb_disk sb;
	struct sb_info si;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	sb_good(&sb, 1 << 20);
	CHECK(pwrite(fd, &sb, sizeof(sb), 0) == sizeof(sb));
	CHECK(!ftruncate(fd, 1 << 20));
	CHECK(sb_read(path, &si) == SB_OK);
	CHECK(si.version == FR_FORMAT_VERSION && si.dev_bytes == 1 << 20);
	CHECK(!strcmp(si.origin_id, "origin"));
	CHECK(si.geo.origin_sectors == 16384 && strlen(si.uuid_hex) == 32);
	CHECK(!ftruncate(fd, 100));
	CHECK(sb_read(path, &si) == SB_TRUNCATED);
	close(fd);
	unlink(path);
	CHECK(sb_read(path, &si) == SB_NOT_FOUND && si.err == ENOENT);
}

int main(void)
{
	test_numbers();
	test_status();
	test_table_args();
	test_status_ways();
	test_strings();
	test_sigbus();
	test_sb_classify();
	test_sb_read();
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
