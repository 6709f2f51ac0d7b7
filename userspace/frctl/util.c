// SPDX-License-Identifier: GPL-2.0-only
/*
 * Messages, strict number parsing, sizes and uuids.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "frctl.h"

const char *frctl_verb;

static void __attribute__((format(printf, 2, 0)))
vmsg(const char *kind, const char *fmt, va_list ap)
{
	fflush(stdout);
	if (frctl_verb)
		fprintf(stderr, "frctl %s: %s", frctl_verb, kind);
	else
		fprintf(stderr, "frctl: %s", kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void fr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void fr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

int fr_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	if (frctl_verb)
		fprintf(stderr, "Try 'frctl %s --help'.\n", frctl_verb);
	else
		fprintf(stderr, "Try 'frctl --help'.\n");
	return FR_EXIT_USAGE;
}

/* Decimal digits only: no sign, no spaces, no trailing junk, no overflow. */
int parse_u64(const char *s, u64 *out)
{
	u64 v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (~0ULL - (u64)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (u64)(*s - '0');
	}
	*out = v;
	return 0;
}

/* A byte count: digits with an optional binary suffix (k, KiB, M, MiB, ...). */
int parse_size(const char *s, u64 *out)
{
	static const struct {
		const char *suffix;
		unsigned int shift;
	} units[] = {
		{ "", 0 }, { "b", 0 }, { "B", 0 },
		{ "k", 10 }, { "K", 10 }, { "KiB", 10 },
		{ "m", 20 }, { "M", 20 }, { "MiB", 20 },
		{ "g", 30 }, { "G", 30 }, { "GiB", 30 },
		{ "t", 40 }, { "T", 40 }, { "TiB", 40 },
	};
	char digits[32];
	size_t n = 0;
	unsigned int i;
	u64 v;
	int r;

	if (!s)
		return -EINVAL;
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	if (!n || n >= sizeof(digits))
		return n ? -ERANGE : -EINVAL;
	memcpy(digits, s, n);
	digits[n] = 0;
	r = parse_u64(digits, &v);
	if (r)
		return r;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s + n, units[i].suffix))
			continue;
		if (units[i].shift && v > (~0ULL >> units[i].shift))
			return -ERANGE;
		*out = v << units[i].shift;
		return 0;
	}
	return -EINVAL;
}

int parse_opt_u64(const char *opt, const char *s, u64 min, u64 max, u64 *out)
{
	int r = parse_u64(s, out);

	if (r == -ERANGE || (!r && (*out < min || *out > max))) {
		fr_usage_error("%s: '%s' is out of range (%llu..%llu)", opt, s,
			       (unsigned long long)min,
			       (unsigned long long)max);
		return -1;
	}
	if (r) {
		fr_usage_error("%s: '%s' is not a decimal number", opt, s);
		return -1;
	}
	return 0;
}

int parse_opt_size(const char *opt, const char *s, u64 *out)
{
	int r = parse_size(s, out);

	if (r == -ERANGE) {
		fr_usage_error("%s: '%s' is too large", opt, s);
		return -1;
	}
	if (r) {
		fr_usage_error("%s: '%s' is not a size (bytes, or with a suffix k, M, G, KiB, MiB, GiB)",
			       opt, s);
		return -1;
	}
	return 0;
}

const char *fmt_bytes(char *buf, size_t len, u64 bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	unsigned int i = 0;

	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	if (!i)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v,
			 unit[i]);
	return buf;
}

void uuid_unparse_lower(const u8 u[16], char out[37])
{
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

void uuid_hex(const u8 u[16], char out[33])
{
	int i;

	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", u[i]);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* 32 hex digits, with or without the four dashes of the usual form. */
int uuid_parse_str(const char *s, u8 u[16])
{
	int i = 0, hi, lo;

	while (i < 16) {
		if (*s == '-' && (i == 4 || i == 6 || i == 8 || i == 10))
			s++;
		hi = hexval((unsigned char)s[0]);
		lo = hi < 0 ? -1 : hexval((unsigned char)s[1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		u[i++] = (u8)(hi << 4 | lo);
		s += 2;
	}
	return *s ? -EINVAL : 0;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		fr_err("out of memory");
		exit(FR_EXIT_OPERATIONAL);
	}
	return p;
}

void json_print(struct json_object *obj)
{
	puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
					    JSON_C_TO_STRING_SPACED |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
}

/*
 * Make a string safe as a udev property value, the way blkid encodes labels:
 * anything outside a conservative set becomes \xHH.
 */
void udev_encode(const char *in, char *out, size_t outlen)
{
	size_t o = 0;

	for (; *in && o + 5 < outlen; in++) {
		unsigned char c = (unsigned char)*in;

		if (isalnum(c) || strchr("#+-.:=@_/", c))
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
	}
	out[o] = 0;
}

volatile sig_atomic_t frctl_interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	frctl_interrupted = 1;
}

void catch_sigint(void)
{
	signal(SIGINT, on_sigint);
}
