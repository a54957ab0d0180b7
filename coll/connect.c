// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxniccoll - connecting the communicator's QPs with the fabric's
 * connection manager (Documentation/cm.rst), so that each pair's QPs are
 * *tied* to a CM connection: when a rank's process dies or its
 * communicator is destroyed or fails, its kernel sends a DREQ and every
 * peer's QP to it goes to the error state within milliseconds, with its
 * posted receives flushed. progress.c turns that into -ECONNRESET naming
 * the rank, instead of a wait until the timeout.
 *
 * Every rank listens on a random service id of its device and publishes
 * it in the bootstrap's first exchange (with, for each peer, the QP number
 * meant for it). Rank r then connects to every rank below it, in rank
 * order, and accepts one request from every rank above it: rank 0 only
 * accepts, and rank q < r reaches its accepting phase once it has
 * connected to the ranks below it, so the chain ends. A request must come
 * from the peer's node and QP and carry its rank; anything else is
 * refused and the wait goes on.
 *
 * A rank r whose connect to rank q fails joins the bootstrap's second
 * exchange with its error, but ranks q..r-1 would wait for its request
 * until their timeout first. So it stops listening (ranks above it that
 * still connect are refused) and sends each of them, highest first, an
 * abort notice: a request flagged XNIC_COLL_CM_F_ABORT, which they refuse
 * and fail on. While accepting, a rank also fails when a peer it is
 * connected to left (its DREQ: the process died).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "priv.h"

#define XNIC_COLL_CM_SID	0x58434f4c00000000ULL	/* "XCOL" << 32 */
#define XNIC_COLL_CM_TRIES	16
#define XNIC_COLL_CM_ABORT_MS	1000	/* for each abort notice */
#define XNIC_COLL_CM_SLICE_MS	200	/* accepting: looks for peers gone */

/* Private data of the REQ and the REP. */
struct xnic_coll_cm_priv {
	uint32_t magic;
	uint32_t rank;
	uint32_t nranks;
	uint32_t flags;		/* XNIC_COLL_CM_F_* (REQ), 0 */
};

/* The sender failed to connect to its peers and leaves: refuse, fail. */
#define XNIC_COLL_CM_F_ABORT	0x1U

static int xnic_coll_cm_ms(const struct xnic_comm *c)
{
	return c->timeout_ms > 110000 ? 110000 : c->timeout_ms;
}

/**
 * xnic_coll_listen() - listen on a random service id of our device
 * @c: communicator (device open)
 * @service: the service id, for the bootstrap's exchange
 * Return: 0 or a negative errno (message set).
 */
int xnic_coll_listen(struct xnic_comm *c, uint64_t *service)
{
	uint32_t rnd;
	int k, err = -EADDRINUSE;

	for (k = 0; k < XNIC_COLL_CM_TRIES && err == -EADDRINUSE; k++) {
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			rnd = (uint32_t)rand();
		*service = XNIC_COLL_CM_SID | rnd;
		err = xnic_cm_listen(c->ctx, *service, &c->listener);
	}
	if (err)
		return xnic_coll_seterr(c, err,
					"listening for the peers' connections: %s",
					xnic_strerror(err));
	return 0;
}

static void xnic_coll_cm_priv_fill(const struct xnic_comm *c,
				   struct xnic_coll_cm_priv *p)
{
	p->magic = htole32(XNIC_COLL_MAGIC);
	p->rank = htole32((uint32_t)c->rank);
	p->nranks = htole32((uint32_t)c->nranks);
	p->flags = 0;
}

/*
 * The rank a peer's private data names, or -1 when it is not ours;
 * @flags (may be NULL): its XNIC_COLL_CM_F_*.
 */
static int xnic_coll_cm_priv_rank(const struct xnic_comm *c, const void *data,
				  uint32_t len, uint32_t *flags)
{
	struct xnic_coll_cm_priv p;
	uint32_t r;

	if (flags)
		*flags = 0;
	if (len < sizeof(p))
		return -1;
	memcpy(&p, data, sizeof(p));
	r = le32toh(p.rank);
	if (flags)
		*flags = le32toh(p.flags);
	if (le32toh(p.magic) != XNIC_COLL_MAGIC ||
	    le32toh(p.nranks) != (uint32_t)c->nranks ||
	    r >= (uint32_t)c->nranks || (int)r == c->rank)
		return -1;
	return (int)r;
}

/* Connect our QP for rank @r (below us) to its listener. */
static int xnic_coll_cm_connect(struct xnic_comm *c, int r, uint64_t service)
{
	struct xnic_coll_peer *p = &c->peers[r];
	struct xnic_coll_cm_priv mine;
	uint64_t end = xnic_coll_now_ns() +
		       (uint64_t)xnic_coll_cm_ms(c) * 1000000ULL;
	struct xnic_cm_reply rep;
	int err;

	xnic_coll_cm_priv_fill(c, &mine);
	/*
	 * -EHOSTUNREACH: the peer table has not learnt the node (yet: it
	 * may just have come up, as the CM bootstrap allows for too).
	 */
	do {
		err = xnic_cm_connect(c->ctx, p->qp, p->node, service, &mine,
				      sizeof(mine), xnic_coll_cm_ms(c), &rep);
	} while (err == -EHOSTUNREACH && xnic_coll_now_ns() < end &&
		 !usleep(50000));
	if (err == -ECONNREFUSED)
		return xnic_coll_seterr(c, err,
					"connecting to rank %d (node %u, service %#llx): refused: %s",
					r, p->node, (unsigned long long)service,
					xnic_cm_reject_str(rep.reject_reason));
	if (err)
		return xnic_coll_seterr(c, err,
					"connecting to rank %d (node %u, service %#llx): %s",
					r, p->node, (unsigned long long)service,
					xnic_strerror(err));
	if (xnic_coll_cm_priv_rank(c, rep.private_data, rep.private_len,
				   NULL) != r)
		return xnic_coll_seterr(c, -EPROTO,
					"connecting to rank %d (node %u): another program answered",
					r, p->node);
	return 0;
}

/*
 * A peer connected to us (a rank below us, or one of @done) whose QP the
 * peer's DREQ broke since: it left. Its rank, or -1.
 */
static int xnic_coll_cm_left(struct xnic_comm *c, const bool *done)
{
	int r;

	for (r = 0; r < c->nranks; r++)
		if ((r < c->rank || done[r]) &&
		    xnic_qp_err_reason(c->peers[r].qp) ==
		    XNIC_QP_ERR_DISCONNECTED)
			return r;
	return -1;
}

/*
 * Accept one request from every rank above us, in slices of
 * XNIC_COLL_CM_SLICE_MS to notice a connected peer that left.
 */
static int xnic_coll_cm_accept_all(struct xnic_comm *c, const uint32_t *qpns)
{
	uint64_t end = xnic_coll_now_ns() + (uint64_t)c->timeout_ms * 1000000ULL;
	int left = c->nranks - 1 - c->rank, r, ms, err;
	struct xnic_coll_cm_priv mine;
	struct xnic_cm_req req;
	uint32_t flags;
	uint64_t t;
	bool *done;

	done = calloc((size_t)c->nranks, sizeof(*done));
	if (!done)
		return xnic_coll_seterr(c, -ENOMEM, "out of memory");
	xnic_coll_cm_priv_fill(c, &mine);
	err = 0;
	while (left > 0) {
		t = xnic_coll_now_ns();
		if (t >= end) {
			for (r = c->rank + 1; r < c->nranks && done[r]; r++)
				;
			err = xnic_coll_seterr(c, -ETIMEDOUT,
					       "rank %d (node %u) did not connect in %d ms",
					       r, c->peers[r].node, c->timeout_ms);
			break;
		}
		r = xnic_coll_cm_left(c, done);
		if (r >= 0) {
			err = xnic_coll_seterr(c, -ECONNRESET,
					       "rank %d (node %u) left during set-up: it disconnected (its process exited or was killed, or its set-up failed)",
					       r, c->peers[r].node);
			break;
		}
		ms = (int)((end - t + 999999) / 1000000);
		err = xnic_cm_get_request(c->listener, &req,
					  ms < XNIC_COLL_CM_SLICE_MS ? ms :
					  XNIC_COLL_CM_SLICE_MS);
		if (err == -ETIMEDOUT || err == -EINTR)
			continue;
		if (err) {
			xnic_coll_seterr(c, err, "waiting for the peers' connections: %s",
					 xnic_strerror(err));
			break;
		}
		r = xnic_coll_cm_priv_rank(c, req.private_data,
					   req.private_len, &flags);
		if (r <= c->rank || done[r] ||
		    req.remote_node != c->peers[r].node ||
		    req.remote_qpn != qpns[r]) {
			xnic_cm_reject(&req, NULL, 0);	/* not one of ours */
			continue;
		}
		if (flags & XNIC_COLL_CM_F_ABORT) {
			xnic_cm_reject(&req, NULL, 0);
			err = xnic_coll_seterr(c, -ECONNABORTED,
					       "rank %d (node %u) failed to connect to its peers and left",
					       r, c->peers[r].node);
			break;
		}
		err = xnic_cm_accept(&req, c->peers[r].qp, &mine, sizeof(mine),
				     xnic_coll_cm_ms(c));
		if (err) {
			xnic_coll_seterr(c, err,
					 "accepting rank %d's connection (node %u): %s",
					 r, c->peers[r].node, xnic_strerror(err));
			break;
		}
		done[r] = true;
		left--;
	}
	free(done);
	return err;
}

/*
 * Our connect to rank @q failed: tell ranks @q..rank-1, which wait for our
 * request (xnic_coll_cm_accept_all()), to give up. Highest first: @q,
 * once told, stops listening, and a rank above it still connecting to it
 * would fail on that refusal rather than on our notice.
 * Each notice waits for its refusal up to XNIC_COLL_CM_ABORT_MS, all of
 * them up to twice that; what they fail with does not matter (a rank
 * still connecting, or gone). Sets no message: ours stays.
 */
static void xnic_coll_cm_abort(struct xnic_comm *c, int q,
			       const uint64_t *services)
{
	uint64_t t, end = xnic_coll_now_ns() +
			  2ULL * XNIC_COLL_CM_ABORT_MS * 1000000ULL;
	struct xnic_coll_cm_priv mine;
	struct xnic_cm_reply rep;
	int r, ms;

	xnic_coll_cm_priv_fill(c, &mine);
	mine.flags = htole32(XNIC_COLL_CM_F_ABORT);
	for (r = c->rank - 1; r >= q; r--) {
		t = xnic_coll_now_ns();
		if (t >= end)
			break;
		ms = (int)((end - t + 999999) / 1000000);
		if (ms > XNIC_COLL_CM_ABORT_MS)
			ms = XNIC_COLL_CM_ABORT_MS;
		if (ms > xnic_coll_cm_ms(c))
			ms = xnic_coll_cm_ms(c);
		xnic_cm_connect(c->ctx, c->peers[r].qp, c->peers[r].node,
				services[r], &mine, sizeof(mine), ms, &rep);
	}
}

/**
 * xnic_coll_connect_peers() - connect every peer's QP through the CM
 * @c: communicator, listening (xnic_coll_listen()), peers' nodes known
 * @services: each rank's listening service id
 * @qpns: each rank's QP meant for us
 *
 * Stops listening when done.
 * Return: 0 or a negative errno (message set).
 */
int xnic_coll_connect_peers(struct xnic_comm *c, const uint64_t *services,
			    const uint32_t *qpns)
{
	int r, err = 0;

	for (r = 0; r < c->rank; r++) {
		err = xnic_coll_cm_connect(c, r, services[r]);
		if (err)
			break;
	}
	if (!err)
		err = xnic_coll_cm_accept_all(c, qpns);
	/* The ranks above us that still connect are refused from now on. */
	xnic_cm_unlisten(c->listener);
	c->listener = NULL;
	if (err && r < c->rank)
		xnic_coll_cm_abort(c, r, services);
	return err;
}
