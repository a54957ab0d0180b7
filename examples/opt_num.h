/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * opt_num.h - the one helper the examples share: a number option read
 * whole, or the program exits 2 naming the option and its value. "abc",
 * "12x", an empty value and a value beyond MIN..MAX (or beyond a long)
 * are refused rather than read as 0 or wrapped. Copy it with an example.
 */
#ifndef OPT_NUM_H
#define OPT_NUM_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* PROG's option -OPT ARG: decimal (0x hex) in MIN..MAX, else exit 2. */
static inline long opt_num(const char *prog, int opt, const char *arg,
			   long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 0);
	if (end == arg || *end || errno || v < min || v > max) {
		fprintf(stderr, "%s: bad -%c '%s' (expected %ld..%ld)\n",
			prog, opt, arg, min, max);
		exit(2);
	}
	return v;
}

#endif /* OPT_NUM_H */
