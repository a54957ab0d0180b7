// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxniccoll - error messages: each failing call leaves a message in its
 * communicator and in a per-thread buffer (the only place an init that
 * failed can leave one).
 */
#include <stdarg.h>
#include <stdio.h>

#include "priv.h"

static __thread char xnic_coll_tls_err[XNIC_COLL_ERRLEN];

/**
 * xnic_coll_seterr() - record an error message
 * @c: communicator (NULL: only the thread's buffer)
 * @err: the negative errno being returned
 * @fmt: printf format of the message
 *
 * Return: @err, so that callers can `return xnic_coll_seterr(...)`.
 */
int xnic_coll_seterr(struct xnic_comm *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(xnic_coll_tls_err, sizeof(xnic_coll_tls_err), fmt, ap);
	va_end(ap);
	if (c)
		snprintf(c->err, sizeof(c->err), "%s", xnic_coll_tls_err);
	return err;
}

/** xnic_coll_clear_tls_error() - forget the thread's last message */
void xnic_coll_clear_tls_error(void)
{
	xnic_coll_tls_err[0] = '\0';
}

/**
 * xnic_coll_tls_error() - the thread's last message
 * Return: the message, "" when none.
 */
const char *xnic_coll_tls_error(void)
{
	return xnic_coll_tls_err;
}

const char *xnic_comm_strerror(const struct xnic_comm *comm)
{
	return comm ? comm->err : xnic_coll_tls_err;
}

size_t xnic_coll_dtype_size(int dtype)
{
	switch (dtype) {
	case XNIC_COLL_FLOAT32:
		return 4;
	case XNIC_COLL_BFLOAT16:
		return 2;
	default:
		return 0;
	}
}
