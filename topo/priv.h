/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Helpers shared by libxnicmap's files (not installed). */
#ifndef XNIC_MAP_PRIV_H
#define XNIC_MAP_PRIV_H

#include <stddef.h>

/* Format a message into err (XNIC_MAP_ERRLEN bytes) unless err is NULL. */
void xnic_map_err(char *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int xnic_map_grow(void *p, int *cap, int n, size_t size);

#endif /* XNIC_MAP_PRIV_H */
