/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic-perf's control channel: the messages client and server exchange
 * around the measured traffic (parameters, start, stop, counts). Either a
 * TCP connection (the perftest way) or, with no IP at all, a second RC QP
 * connected through the fabric's connection manager, carrying each
 * message as one SEND (xnic-perf-ctl.c).
 */
#ifndef XNIC_PERF_CTL_H
#define XNIC_PERF_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xnic.h"

#define PERF_CTL_SLOTS		8	/* receive WQEs of the control QP */
#define PERF_CTL_MSG_MAX	128	/* largest control message, bytes */

/**
 * struct perf_ctl - one end of the control channel
 * @fd: TCP socket, or -1 for the CM channel
 * @cq: CM: the control QP's CQ (send and receive)
 * @qp: CM: the control QP
 * @mr: CM: registration of @buf
 * @buf: CM: PERF_CTL_SLOTS receive slots, then one send slot
 * @len: CM: byte length of the message in each slot
 * @queue: CM: slots holding messages not read yet, in arrival order
 * @head: CM: first of them in @queue
 * @count: CM: how many
 * @owed: CM: slots read and not yet given back to the RQ (bit mask)
 * @probing: CM: a keepalive WRITE is under way (perf_ctl_read())
 */
struct perf_ctl {
	int fd;
	struct xnic_cq *cq;
	struct xnic_qp *qp;
	struct xnic_mr *mr;
	uint8_t *buf;
	uint32_t len[PERF_CTL_SLOTS];
	unsigned int queue[PERF_CTL_SLOTS];
	unsigned int head;
	unsigned int count;
	unsigned int owed;
	bool probing;
	bool gone;	/* a receive was flushed: the peer disconnected */
};

/* TCP: the listening side accepts one connection; the other connects. */
void perf_ctl_tcp_accept(struct perf_ctl *c, unsigned int port);
void perf_ctl_tcp_connect(struct perf_ctl *c, const char *host,
			  unsigned int port);

/*
 * CM: create the control QP on @ctx/@pd and connect it. The client
 * connects to (@node, @sid) with @priv as private data; the server
 * accepts @req (from its listener).
 */
void perf_ctl_cm_connect(struct perf_ctl *c, struct xnic_ctx *ctx,
			 struct xnic_pd *pd, uint32_t node, uint64_t sid,
			 const void *priv, size_t len);
void perf_ctl_cm_accept(struct perf_ctl *c, struct xnic_ctx *ctx,
			struct xnic_pd *pd, struct xnic_cm_req *req);

/* Exactly @len bytes (one message); both exit with a message on error. */
void perf_ctl_write(struct perf_ctl *c, const void *buf, size_t len,
		    const char *what);
void perf_ctl_read(struct perf_ctl *c, void *buf, size_t len,
		   const char *what);
/* Whether a message has arrived that was not read yet (no waiting). */
bool perf_ctl_pending(struct perf_ctl *c);
/* Close the channel (before the device). */
void perf_ctl_close(struct perf_ctl *c);

/* Exit with "WHAT: message of ERR" when @err is a negative errno. */
void perf_check(int err, const char *what);
/* CLOCK_MONOTONIC, ns. */
uint64_t perf_now_ns(void);

/* How long a CM connect or accept may take, ms. */
#define PERF_CM_TIMEOUT_MS	10000

#endif /* XNIC_PERF_CTL_H */
