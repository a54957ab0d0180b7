/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic_tool.h - what the command-line programs share: a fatal error
 * message with the program's exit status, and number options with their
 * range checks. Header only; each program chooses its exit status for
 * usage errors (xnic-perf 1, xnictl 1 for the kernel and 2 for usage,
 * xnic-coll-rank and xnic-allreduce 2).
 *
 * Messages start with the program's name (program_invocation_short_name,
 * GNU: build with _GNU_SOURCE).
 */
#ifndef XNIC_TOOL_H
#define XNIC_TOOL_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/**
 * xnic_tool_vdie() - print "PROG: message" and exit
 * @status: exit status
 * @fmt: printf format
 * @ap: its arguments
 */
static inline void __attribute__((noreturn, format(printf, 2, 0)))
xnic_tool_vdie(int status, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", program_invocation_short_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(status);
}

/**
 * xnic_tool_die() - print "PROG: message" and exit
 * @status: exit status
 * @fmt: printf format, then its arguments
 */
static inline void __attribute__((noreturn, format(printf, 2, 3)))
xnic_tool_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xnic_tool_vdie(status, fmt, ap);
}

/**
 * xnic_tool_parse_u64() - parse an unsigned number
 * @s: the text: decimal, 0x hex or 0 octal; with @suffix a K, M or G
 *	(binary: 2^10, 2^20, 2^30, either case, optionally followed by "i",
 *	"iB" or "B") may follow
 * @v: the value
 * @suffix: whether a size suffix is allowed
 * Return: 0, or -EINVAL for anything else (a sign, a space, junk, an
 *	overflow).
 */
static inline int xnic_tool_parse_u64(const char *s, uint64_t *v, bool suffix)
{
	unsigned long long x;
	unsigned int sh = 0;
	char *end;

	/* A digit first: strtoull() would take " -1" as 2^64 - 1. */
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	if (suffix && *end) {
		switch (*end | 0x20) {	/* lower case */
		case 'k':
			sh = 10;
			break;
		case 'm':
			sh = 20;
			break;
		case 'g':
			sh = 30;
			break;
		default:
			return -EINVAL;
		}
		if (x > (UINT64_MAX >> sh))
			return -EINVAL;
		x <<= sh;
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B')
			end++;
	}
	if (*end)
		return -EINVAL;
	*v = x;
	return 0;
}

/**
 * xnic_tool_num() - an option's number, or exit
 * @status: exit status when it is bad
 * @name: what it is, for the message
 * @arg: the text
 * @min: smallest value allowed
 * @max: largest value allowed
 * @suffix: whether K, M, G suffixes are allowed (xnic_tool_parse_u64())
 * Return: the value, within [@min, @max].
 */
static inline uint64_t xnic_tool_num(int status, const char *name,
				     const char *arg, uint64_t min,
				     uint64_t max, bool suffix)
{
	uint64_t v;

	if (!xnic_tool_parse_u64(arg, &v, suffix) && v >= min && v <= max)
		return v;
	if (!min && max == UINT64_MAX)
		xnic_tool_die(status, "bad %s '%s'", name, arg);
	xnic_tool_die(status, "bad %s '%s' (expected %" PRIu64 "..%" PRIu64 ")",
		      name, arg, min, max);
}

#endif /* XNIC_TOOL_H */
