// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxniccoll - requests: the non-blocking collectives' queue per
 * communicator, test, wait and waitall. A communicator runs one
 * collective at a time (its channel counters and shard tables belong to
 * the active one), the head of its queue; the others wait behind it in
 * start order. Concurrency comes from several communicators, each with
 * its own QPs, advanced in turn by waitall.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

#include "priv.h"

/* Communicators a wait sleeps on at once (with more, it polls). */
#define XNIC_COLL_WAITANY_FDS	16

/**
 * xnic_coll_req_new() - allocate a request (queued state)
 * @c: its communicator
 * @name: the collective, for messages
 * @w: how it runs
 * Return: the request, or NULL (message set) when out of memory.
 */
struct xnic_coll_req *xnic_coll_req_new(struct xnic_comm *c,
					const char *name,
					const struct xnic_coll_waiter *w)
{
	struct xnic_coll_req *q = calloc(1, sizeof(*q));

	if (!q) {
		xnic_coll_seterr(c, -ENOMEM, "%s: out of memory", name);
		return NULL;
	}
	q->comm = c;
	q->name = name;
	q->w = w;
	return q;
}

/**
 * xnic_coll_submit() - queue a request on its communicator
 * @c: communicator
 * @q: request from xnic_coll_req_new(); NULL w: already done (err 0)
 * @reqp: where the caller gets it
 * Return: 0.
 */
int xnic_coll_submit(struct xnic_comm *c, struct xnic_coll_req *q,
		     struct xnic_coll_req **reqp)
{
	if (!q->w) {
		q->state = XNIC_COLL_REQ_DONE;
	} else if (c->tail) {
		c->tail->next = q;
		c->tail = q;
	} else {
		c->head = c->tail = q;
	}
	*reqp = q;
	return 0;
}

/* Take the head off the queue, done with @err. */
static void xnic_coll_pop(struct xnic_comm *c, int err)
{
	struct xnic_coll_req *q = c->head;

	c->head = q->next;
	if (!c->head)
		c->tail = NULL;
	q->next = NULL;
	q->state = XNIC_COLL_REQ_DONE;
	q->err = err;
	if (err)
		snprintf(q->msg, sizeof(q->msg), "%s", c->err);
}

/*
 * One pass without blocking: reap the CQ, run the active collective,
 * start the next one when it finishes. A failure breaks the
 * communicator (xnic_coll_fail()) and ends every queued request with it.
 * Sets c->progress when anything moved.
 */
static void xnic_coll_advance(struct xnic_comm *c)
{
	uint64_t tmo = (uint64_t)c->timeout_ms * 1000000ULL, t;
	struct xnic_coll_req *q;
	char desc[160];
	int ret;

	c->progress = false;
	c->need_poll = false;
	/*
	 * Not advanced for a whole timeout (the caller was busy elsewhere, as
	 * torch-xnic's progress thread in a blocking collective): the peers
	 * had no chance to be seen, so their timeout starts now.
	 */
	t = xnic_coll_now_ns();
	if (t - c->seen_ns >= tmo)
		c->last_ns = t;
	c->seen_ns = t;
	while ((q = c->head)) {
		if (c->failed) {
			xnic_coll_pop(c, c->failed);
			continue;
		}
		if (q->state == XNIC_COLL_REQ_QUEUED) {
			q->state = XNIC_COLL_REQ_ACTIVE;
			q->w->begin(c, q);
			c->last_ns = xnic_coll_now_ns();
		}
		ret = xnic_coll_poll(c);
		if (!ret)
			ret = q->w->step(c, q);
		/* A peer left: an error if we still need it. */
		if (!ret && c->gone)
			ret = xnic_coll_gone_check(c, q);
		if (ret > 0) {
			xnic_coll_pop(c, 0);
			c->progress = true;
			continue;
		}
		t = xnic_coll_now_ns();
		if (!ret && c->progress) {
			c->last_ns = t;
			return;
		}
		if (!ret && t - c->last_ns >= tmo) {
			q->w->describe(c, q, desc, sizeof(desc));
			ret = xnic_coll_seterr(c, -ETIMEDOUT,
					       "%s: no progress for %d ms: %s",
					       q->name, c->timeout_ms, desc);
		}
		if (!ret)
			return;
		xnic_coll_fail(c, ret);
	}
}

static int xnic_coll_result(const struct xnic_coll_req *q)
{
	if (q->state != XNIC_COLL_REQ_DONE)
		return 0;
	return q->err ? q->err : 1;
}

int xnic_coll_test(struct xnic_coll_req *req)
{
	if (!req)
		return xnic_coll_seterr(NULL, -EINVAL, "test: no request");
	if (req->state != XNIC_COLL_REQ_DONE)
		xnic_coll_advance(req->comm);
	return xnic_coll_result(req);
}

/*
 * One pass over @reqs (NULL entries skipped): advance the communicator of
 * each unfinished request. *@moved: some communicator made progress;
 * *@pending: some request is still unfinished. Returns the index of the
 * first finished request, or -1.
 */
static int xnic_coll_step(struct xnic_coll_req **reqs, int n, bool *moved,
			  bool *pending)
{
	int i, done = -1;

	*moved = false;
	*pending = false;
	for (i = 0; i < n; i++) {
		struct xnic_coll_req *q = reqs[i];

		if (!q)
			continue;
		if (q->state != XNIC_COLL_REQ_DONE) {
			xnic_coll_advance(q->comm);
			*moved |= q->comm->progress;
		}
		if (q->state != XNIC_COLL_REQ_DONE)
			*pending = true;
		else if (done < 0)
			done = i;
	}
	return done;
}

/*
 * Nothing moved: sleep until a completion on the CQ of any unfinished
 * request's communicator, at most @ms, and no longer than the first of
 * them times out (1 ms while one waits for a full SQ or RQ, which raises
 * no completion; not at all while one busy-polls, see spin_us). Errors
 * of the CQs are left to the next pass (xnic_coll_poll() reports them).
 */
static void xnic_coll_idle_any(struct xnic_coll_req **reqs, int n, int ms)
{
	struct pollfd pfd[XNIC_COLL_WAITANY_FDS];
	struct xnic_cq *cq[XNIC_COLL_WAITANY_FDS];
	uint64_t t = xnic_coll_now_ns(), idle, tmo;
	int i, k, np = 0;

	for (i = 0; i < n; i++) {
		struct xnic_comm *c = reqs[i] ? reqs[i]->comm : NULL;

		if (!c || reqs[i]->state == XNIC_COLL_REQ_DONE)
			continue;
		for (k = 0; k < np && cq[k] != c->cq; k++)
			;
		if (k < np)
			continue;
		idle = t - c->last_ns;
		tmo = (uint64_t)c->timeout_ms * 1000000ULL;
		if (!c->cq || np == XNIC_COLL_WAITANY_FDS || idle >= tmo ||
		    idle < (uint64_t)c->spin_us * 1000ULL ||
		    xnic_cq_wait(c->cq, 0) != -ETIMEDOUT)
			return;	/* something to do now (or poll instead) */
		if ((uint64_t)ms * 1000000ULL > tmo - idle)
			ms = (int)((tmo - idle + 999999) / 1000000);
		cq[np] = c->cq;
		pfd[np].fd = xnic_cq_fd(c->cq);
		if ((c->need_poll || pfd[np].fd < 0) && ms > 1)
			ms = 1;
		pfd[np].events = POLLIN;
		pfd[np].revents = 0;
		np++;
	}
	if (!np || poll(pfd, (nfds_t)np, ms) <= 0)
		return;
	for (k = 0; k < np; k++)
		if (pfd[k].revents)
			xnic_cq_read_events(cq[k]);
}

int xnic_coll_wait(struct xnic_coll_req *req)
{
	struct xnic_coll_req *reqs[1] = { req };

	if (!req)
		return xnic_coll_seterr(NULL, -EINVAL, "wait: no request");
	return xnic_coll_waitall(reqs, 1);
}

int xnic_coll_waitall(struct xnic_coll_req **reqs, int n)
{
	bool moved, pending;
	int i, k, ret;

	if (n > 0 && !reqs)
		return xnic_coll_seterr(NULL, -EINVAL, "waitall: no requests");
	/* Each is freed below: one named twice would be freed twice. */
	for (i = 0; i < n; i++)
		for (k = i + 1; reqs[i] && k < n; k++)
			if (reqs[k] == reqs[i])
				return xnic_coll_seterr(NULL, -EINVAL,
							"waitall: reqs[%d] and reqs[%d] are the same request",
							i, k);
	for (;;) {
		xnic_coll_step(reqs, n, &moved, &pending);
		if (!pending)
			break;
		if (!moved)
			xnic_coll_idle_any(reqs, n, 1000);
	}
	ret = 0;
	for (i = 0; i < n; i++) {
		if (!reqs[i])
			continue;
		if (!ret && reqs[i]->err) {
			ret = reqs[i]->err;
			/* Its own: the communicator may be gone. */
			xnic_coll_seterr(NULL, ret, "%s", reqs[i]->msg);
		}
		free(reqs[i]);
		reqs[i] = NULL;
	}
	return ret;
}

int xnic_coll_waitany(struct xnic_coll_req **reqs, int n, int timeout_ms)
{
	uint64_t end = xnic_coll_now_ns() +
		       (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ULL;
	bool moved, pending;
	uint64_t now;
	int i;

	if (n > 0 && !reqs)
		return xnic_coll_seterr(NULL, -EINVAL, "waitany: no requests");
	for (;;) {
		i = xnic_coll_step(reqs, n, &moved, &pending);
		if (i >= 0)
			return i;
		now = xnic_coll_now_ns();
		if (!pending || now >= end)
			return -EAGAIN;
		if (moved)
			continue;
		xnic_coll_idle_any(reqs, n, (int)((end - now + 999999) / 1000000));
	}
}

/**
 * xnic_coll_cancel_all() - end every unfinished request of a communicator
 * @c: communicator being destroyed
 *
 * They complete with -ECANCELED and forget @c, so that freeing them later
 * is safe (so is freeing the finished ones: they keep their message).
 */
void xnic_coll_cancel_all(struct xnic_comm *c)
{
	struct xnic_coll_req *q;

	while ((q = c->head)) {
		xnic_coll_pop(c, 0);	/* its own message, not c->err */
		q->err = -ECANCELED;
		snprintf(q->msg, sizeof(q->msg),
			 "%s: cancelled: its communicator was destroyed",
			 q->name);
		q->comm = NULL;
	}
}

void xnic_coll_req_free(struct xnic_coll_req *req)
{
	if (req && req->state != XNIC_COLL_REQ_DONE)
		xnic_coll_wait(req);
	else
		free(req);
}
