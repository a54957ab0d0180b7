// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic-perf's control channel (xnic-perf-ctl.h): TCP, or a control QP
 * connected through the fabric's connection manager.
 *
 * Over the CM each message is one SEND into one of PERF_CTL_SLOTS
 * receive slots; a slot is reposted once its message was read. The
 * protocol never has more than a few messages in flight (every message
 * but the last BYE is answered), and a SEND that finds no receive WQE is
 * retried by the transport (RNR), so the slots never overflow.
 */
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "xnic-perf-ctl.h"
#include "xnic_tool.h"

#define CONNECT_RETRY_MS	10000
#define CTL_BUF_LEN		((PERF_CTL_SLOTS + 1) * PERF_CTL_MSG_MAX)
/*
 * CM: a reader that waited this long for a message checks that the peer
 * is still there with a zero-length RDMA WRITE (no effect at the peer);
 * if it is gone, the WRITE completes in error and the reader exits
 * instead of waiting for ever (a TCP reader sees EOF).
 */
#define CTL_PROBE_NS		1000000000ULL
#define CTL_PROBE_WR_ID		UINT64_MAX

#define die(...)	xnic_tool_die(1, __VA_ARGS__)

void perf_check(int err, const char *what)
{
	if (err < 0)
		die("%s: %s", what, xnic_strerror(err));
}

uint64_t perf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#define check(err, what)	perf_check(err, what)

/* ------------------------------- TCP -------------------------------- */

static void sock_setup(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void perf_ctl_tcp_accept(struct perf_ctl *c, unsigned int port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int one = 1, ls, fd;

	memset(c, 0, sizeof(*c));
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0)
		die("socket: %s", strerror(errno));
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind to TCP port %u: %s", port, strerror(errno));
	if (listen(ls, 1) < 0)
		die("listen: %s", strerror(errno));
	do {
		fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		die("accept: %s", strerror(errno));
	close(ls);
	sock_setup(fd);
	c->fd = fd;
}

void perf_ctl_tcp_connect(struct perf_ctl *c, const char *host,
			  unsigned int port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	uint64_t deadline = perf_now_ns() + CONNECT_RETRY_MS * 1000000ULL;
	struct addrinfo *res, *ai;
	char service[16];
	int fd = -1, err, last = 0;

	memset(c, 0, sizeof(*c));
	snprintf(service, sizeof(service), "%u", port);
	err = getaddrinfo(host, service, &hints, &res);
	if (err)
		die("cannot resolve '%s': %s", host, gai_strerror(err));
	/* The server may still be starting: retry a refused connection. */
	for (;;) {
		for (ai = res; ai; ai = ai->ai_next) {
			fd = socket(ai->ai_family,
				    ai->ai_socktype | SOCK_CLOEXEC,
				    ai->ai_protocol);
			if (fd < 0) {
				last = errno;
				continue;
			}
			if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
				break;
			last = errno;
			close(fd);
			fd = -1;
		}
		if (fd >= 0 || last != ECONNREFUSED || perf_now_ns() > deadline)
			break;
		usleep(100000);
	}
	freeaddrinfo(res);
	if (fd < 0)
		die("connect to %s port %u: %s", host, port, strerror(last));
	sock_setup(fd);
	c->fd = fd;
}

static void sock_write(int fd, const void *buf, size_t len, const char *what)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("sending %s to the peer: %s", what,
			    n < 0 ? strerror(errno) : "connection closed");
		p += n;
		len -= (size_t)n;
	}
}

static void sock_read(int fd, void *buf, size_t len, const char *what)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("receiving %s from the peer: %s", what,
			    n < 0 ? strerror(errno) : "connection closed");
		p += n;
		len -= (size_t)n;
	}
}

/* Has the peer sent something (a DONE) we have not read yet? */
static bool sock_pending(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n == 0)
		die("the peer closed the connection");
	return n > 0;
}

/* -------------------------------- CM -------------------------------- */

static uint8_t *ctl_slot(struct perf_ctl *c, unsigned int s)
{
	return c->buf + (size_t)s * PERF_CTL_MSG_MAX;
}

/*
 * Give slot @s (and those still owed) back to the RQ. A receive WQE comes
 * free only once the kernel has published its RQ consumer index, a little
 * after the completion: what does not fit now is retried on the next
 * reap.
 */
static void ctl_post_recv(struct perf_ctl *c, int s)
{
	struct xnic_sge sge = {
		.length = PERF_CTL_MSG_MAX,
		.lkey = c->mr->lkey,
	};
	unsigned int i;
	int err;

	if (s >= 0)
		c->owed |= 1U << s;
	for (i = 0; i < PERF_CTL_SLOTS && c->owed; i++) {
		if (!(c->owed & (1U << i)))
			continue;
		sge.addr = (uintptr_t)ctl_slot(c, i);
		err = xnic_post_recv(c->qp, &sge, 1, i);
		if (err == -EAGAIN)
			return;
		check(err, "posting a receive on the control QP");
		c->owed &= ~(1U << i);
	}
}

/* Create the control QP, its CQ and its registered slots (QP in RESET). */
static void ctl_create(struct perf_ctl *c, struct xnic_ctx *ctx,
		       struct xnic_pd *pd)
{
	struct xnic_qp_cap cap = {
		.max_send_wr = 4,
		.max_recv_wr = PERF_CTL_SLOTS,
		.max_send_sge = 1,
		.max_recv_sge = 1,
	};
	/* A message sent before its receive is posted waits (RNR). */
	struct xnic_qp_attr attr = {
		.comp_mask = XNIC_QP_ATTR_RNR_RETRY,
		.rnr_retry = XNIC_QP_RNR_INFINITE,
	};

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->buf = mmap(NULL, CTL_BUF_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->buf == MAP_FAILED)
		die("allocating the control buffer: %s", strerror(errno));
	check(xnic_reg_mr(pd, c->buf, CTL_BUF_LEN, XNIC_ACCESS_LOCAL_WRITE,
			  &c->mr), "registering the control buffer");
	check(xnic_create_cq(ctx, cap.max_send_wr + cap.max_recv_wr, &c->cq),
	      "creating the control CQ");
	check(xnic_create_qp_ex(pd, c->cq, c->cq, &cap, &attr, &c->qp),
	      "creating the control QP");
}

static void ctl_post_all(struct perf_ctl *c)
{
	unsigned int s;

	for (s = 0; s < PERF_CTL_SLOTS; s++)
		ctl_post_recv(c, (int)s);
}

void perf_ctl_cm_connect(struct perf_ctl *c, struct xnic_ctx *ctx,
			 struct xnic_pd *pd, uint32_t node, uint64_t sid,
			 const void *priv, size_t len)
{
	int err;

	ctl_create(c, ctx, pd);
	err = xnic_cm_connect(ctx, c->qp, node, sid, priv, len,
			      PERF_CM_TIMEOUT_MS, NULL);
	if (err)
		die("connecting the control QP to node %#x service %#" PRIx64 ": %s",
		    node, sid, xnic_strerror(err));
	ctl_post_all(c);
}

void perf_ctl_cm_accept(struct perf_ctl *c, struct xnic_ctx *ctx,
			struct xnic_pd *pd, struct xnic_cm_req *req)
{
	int err;

	ctl_create(c, ctx, pd);
	err = xnic_cm_accept(req, c->qp, NULL, 0, PERF_CM_TIMEOUT_MS);
	if (err)
		die("accepting the control QP of node %#x: %s",
		    req->remote_node, xnic_strerror(err));
	/* A SEND that came first waits for these (RNR retry). */
	ctl_post_all(c);
}

/* Reap the control CQ; queue the messages. Return: whether a send completed. */
static bool ctl_reap(struct perf_ctl *c)
{
	struct xnic_cqe e[PERF_CTL_SLOTS + 4];
	bool sent = false;
	int n, i;

	if (c->owed)
		ctl_post_recv(c, -1);
	n = xnic_poll_cq(c->cq, e, (int)(sizeof(e) / sizeof(e[0])));
	check(n, "polling the control CQ");
	for (i = 0; i < n; i++) {
		if (e[i].wr_id == CTL_PROBE_WR_ID) {
			if (e[i].status != XNIC_WC_SUCCESS)
				die("the peer stopped answering on the control QP: %s",
				    xnic_wc_status_str(e[i].status));
			c->probing = false;
			continue;
		}
		/*
		 * The peer's QP went (destroyed, its process exited: the CM's
		 * DREQ): ours is in error and flushes its receives. Only
		 * fatal when a message is still expected (perf_ctl_read()).
		 */
		if ((e[i].opcode & XNIC_WC_RECV) &&
		    e[i].status == XNIC_WC_WR_FLUSH_ERR) {
			c->gone = true;
			continue;
		}
		if (e[i].status != XNIC_WC_SUCCESS)
			die("control %s: %s (status %u)",
			    xnic_wc_opcode_str(e[i].opcode),
			    xnic_wc_status_str(e[i].status), e[i].status);
		if (!(e[i].opcode & XNIC_WC_RECV)) {
			sent = true;
			continue;
		}
		if (e[i].wr_id >= PERF_CTL_SLOTS ||
		    c->count == PERF_CTL_SLOTS)
			die("unexpected control completion (wr_id %" PRIu64 ")",
			    (uint64_t)e[i].wr_id);
		c->len[e[i].wr_id] = e[i].byte_len;
		c->queue[(c->head + c->count++) % PERF_CTL_SLOTS] =
			(unsigned int)e[i].wr_id;
	}
	return sent;
}

/* Post the keepalive WRITE (CTL_PROBE_NS) unless one is under way. */
static void ctl_probe(struct perf_ctl *c)
{
	if (c->probing)
		return;
	check(xnic_post_write(c->qp, NULL, 0, 0, 0, CTL_PROBE_WR_ID,
			      XNIC_WQE_F_SIGNALED),
	      "probing the peer on the control QP");
	c->probing = true;
}

static void ctl_wait(struct perf_ctl *c)
{
	/* Owed receives raise no completion: look again soon. */
	int err = xnic_cq_wait(c->cq, c->owed ? 1 : 1000);

	if (err && err != -ETIMEDOUT && err != -EINTR)
		check(err, "waiting on the control CQ");
}

/* ------------------------------ either ------------------------------ */

void perf_ctl_write(struct perf_ctl *c, const void *buf, size_t len,
		    const char *what)
{
	struct xnic_sge sge;
	unsigned int flags = XNIC_WQE_F_SIGNALED;
	char msg[160];

	if (c->fd >= 0) {
		sock_write(c->fd, buf, len, what);
		return;
	}
	if (len > PERF_CTL_MSG_MAX)
		die("control message %s too long", what);
	memcpy(ctl_slot(c, PERF_CTL_SLOTS), buf, len);
	sge.addr = (uintptr_t)ctl_slot(c, PERF_CTL_SLOTS);
	sge.length = (uint32_t)len;
	sge.lkey = c->mr->lkey;
	snprintf(msg, sizeof(msg), "sending %s to the peer", what);
	check(xnic_post_send(c->qp, &sge, 1, 0, flags), msg);
	/* The send slot is reused next time: wait until it left. */
	while (!ctl_reap(c))
		ctl_wait(c);
}

void perf_ctl_read(struct perf_ctl *c, void *buf, size_t len,
		   const char *what)
{
	uint64_t probe;
	unsigned int s;

	if (c->fd >= 0) {
		sock_read(c->fd, buf, len, what);
		return;
	}
	probe = perf_now_ns() + CTL_PROBE_NS;
	while (!c->count) {
		ctl_reap(c);
		if (c->count)
			break;
		if (c->gone)
			die("the peer stopped answering on the control QP: it disconnected (receiving %s)",
			    what);
		if (perf_now_ns() > probe) {
			ctl_probe(c);
			probe = perf_now_ns() + CTL_PROBE_NS;
		}
		ctl_wait(c);
	}
	s = c->queue[c->head];
	c->head = (c->head + 1) % PERF_CTL_SLOTS;
	c->count--;
	if (c->len[s] != len)
		die("receiving %s from the peer: %u bytes, expected %zu", what,
		    c->len[s], len);
	memcpy(buf, ctl_slot(c, s), len);
	ctl_post_recv(c, (int)s);
}

bool perf_ctl_pending(struct perf_ctl *c)
{
	if (c->fd >= 0)
		return sock_pending(c->fd);
	ctl_reap(c);
	return c->count > 0;
}

void perf_ctl_close(struct perf_ctl *c)
{
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
		return;
	}
	if (c->qp)
		xnic_destroy_qp(c->qp);
	if (c->cq)
		xnic_destroy_cq(c->cq);
	if (c->mr)
		xnic_dereg_mr(c->mr);
	if (c->buf && c->buf != MAP_FAILED)
		munmap(c->buf, CTL_BUF_LEN);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}
