// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxnic - completion queues: creation (one completion channel each),
 * the mapped ring, and blocking waits.
 *
 * Completion events (ib_uverbs_comp_handler()): after REQ_NOTIFY_CQ the
 * driver raises one event when it writes the next CQE; the event is queued
 * on the CQ's completion channel and read() from it. The legacy ABI has no
 * acknowledge command: the kernel counts the events read and reports the
 * count when the CQ is destroyed (comp_events_reported), which matters
 * only to libraries that make destroy wait for acks. We read every event
 * we wait for, so nothing is left to acknowledge.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "priv.h"

static int xnic_create_channel(struct xnic_ctx *ctx)
{
	struct ib_uverbs_create_comp_channel req = { 0 };
	struct ib_uverbs_create_comp_channel_resp resp;
	int err, fd, fl;

	err = xnic_cmd(ctx->fd, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &req,
		       sizeof(req), NULL, 0, &resp, sizeof(resp), NULL, 0);
	if (err)
		return err;
	fd = (int)resp.fd;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static int xnic_destroy_cq_cmd(struct xnic_ctx *ctx, uint32_t handle)
{
	struct ib_uverbs_destroy_cq req = { .cq_handle = handle };
	struct ib_uverbs_destroy_cq_resp resp;

	return xnic_cmd(ctx->fd, IB_USER_VERBS_CMD_DESTROY_CQ, &req,
			sizeof(req), NULL, 0, &resp, sizeof(resp), NULL, 0);
}

static int xnic_check_cq_resp(const struct xnic_create_cq_resp *r)
{
	if (!r->entries || (r->entries & (r->entries - 1)) ||
	    r->entries > XNIC_MAX_CQE)
		return -EPROTO;
	if (r->ring_size < XNIC_RING_HDR_SIZE +
			   (size_t)r->entries * sizeof(struct xnic_cqe))
		return -EPROTO;
	return 0;
}

int xnic_create_cq(struct xnic_ctx *ctx, unsigned int entries,
		   struct xnic_cq **cqp)
{
	struct ib_uverbs_create_cq req = { 0 };
	struct ib_uverbs_create_cq_resp resp;
	struct xnic_create_cq_resp drv;
	struct xnic_cq *cq;
	int err;

	if (!entries || entries > ctx->attr.max_cqe)
		return -EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->ctx = ctx;
	cq->channel_fd = xnic_create_channel(ctx);
	if (cq->channel_fd < 0) {
		err = cq->channel_fd;
		free(cq);
		return err;
	}

	req.user_handle = (uintptr_t)cq;
	req.cqe = entries;
	req.comp_vector = 0;
	req.comp_channel = cq->channel_fd;
	memset(&drv, 0, sizeof(drv));
	err = xnic_cmd(ctx->fd, IB_USER_VERBS_CMD_CREATE_CQ, &req, sizeof(req),
		       NULL, 0, &resp, sizeof(resp), &drv, sizeof(drv));
	if (err)
		goto err_channel;
	cq->handle = resp.cq_handle;
	err = xnic_check_cq_resp(&drv);
	if (err)
		goto err_destroy;
	cq->map_size = drv.ring_size;
	cq->map = xnic_map(ctx->fd, drv.ring_key, cq->map_size, &err);
	if (!cq->map)
		goto err_destroy;

	cq->hdr = (struct xnic_ring_hdr *)cq->map;
	cq->cqes = (struct xnic_cqe *)((char *)cq->map + XNIC_RING_HDR_SIZE);
	cq->entries = drv.entries;
	cq->mask = drv.entries - 1;
	cq->head = __atomic_load_n(&cq->hdr->consumer, __ATOMIC_ACQUIRE);
	cq->cqn = drv.cqn;
	pthread_mutex_lock(&ctx->lock);
	XNIC_LIST_ADD(ctx->cqs, cq);
	pthread_mutex_unlock(&ctx->lock);
	*cqp = cq;
	return 0;

err_destroy:
	xnic_destroy_cq_cmd(ctx, cq->handle);
err_channel:
	close(cq->channel_fd);
	free(cq);
	return err;
}

int xnic_destroy_cq(struct xnic_cq *cq)
{
	struct xnic_ctx *ctx = cq->ctx;
	int err;

	pthread_mutex_lock(&ctx->lock);
	if (cq->users) {
		pthread_mutex_unlock(&ctx->lock);
		return -EBUSY;
	}
	err = xnic_destroy_cq_cmd(ctx, cq->handle);
	if (!err)
		XNIC_LIST_DEL(ctx->cqs, cq);
	pthread_mutex_unlock(&ctx->lock);
	if (err)
		return err;
	munmap(cq->map, cq->map_size);
	close(cq->channel_fd);
	free(cq);
	return 0;
}

int xnic_cq_arm(struct xnic_cq *cq, int solicited_only)
{
	struct ib_uverbs_req_notify_cq req = {
		.cq_handle = cq->handle,
		.solicited_only = !!solicited_only,
	};
	int err;

	err = xnic_cmd(cq->ctx->fd, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &req,
		       sizeof(req), NULL, 0, NULL, 0, NULL, 0);
	if (!err)
		cq->armed = 1;
	return err;
}

int xnic_cq_fd(const struct xnic_cq *cq)
{
	return cq->channel_fd;
}

int xnic_cq_read_events(struct xnic_cq *cq)
{
	struct ib_uverbs_comp_event_desc desc[16];
	int count = 0;
	ssize_t n;

	for (;;) {
		/* The kernel returns one event per read(). */
		n = read(cq->channel_fd, desc, sizeof(desc));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return -errno;
		}
		if (n == 0)
			break;
		count += (int)((size_t)n / sizeof(desc[0]));
	}
	if (count)
		cq->armed = 0;
	return count;
}

static int64_t xnic_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int xnic_cq_wait(struct xnic_cq *cq, int timeout_ms)
{
	int64_t deadline = timeout_ms > 0 ? xnic_now_ms() + timeout_ms : 0;
	struct pollfd pfd = { .fd = cq->channel_fd, .events = POLLIN };
	int err, wait_ms, n;

	for (;;) {
		if (xnic__cq_ready(cq))
			return 0;
		if (!cq->armed) {
			err = xnic_cq_arm(cq, 0);
			if (err)
				return err;
			/* A CQE written before the arm raises no event. */
			if (xnic__cq_ready(cq))
				return 0;
		}
		if (!timeout_ms)
			return -ETIMEDOUT;
		wait_ms = -1;
		if (timeout_ms > 0) {
			int64_t left = deadline - xnic_now_ms();

			if (left <= 0)
				return -ETIMEDOUT;
			wait_ms = left > 60000 ? 60000 : (int)left;
		}
		n = poll(&pfd, 1, wait_ms);
		if (n < 0)
			return -errno;
		if (n == 0)
			continue;
		n = xnic_cq_read_events(cq);
		if (n < 0)
			return n;
	}
}
