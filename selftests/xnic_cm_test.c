// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic_cm_test - the connection manager (Documentation/cm.rst) between two
 * xnic devices on a veth pair (node 1 and node 2):
 *  - connect + accept with private data both ways, then RDMA WRITE and
 *    SEND over the QPs the CM connected, checked byte by byte;
 *  - REJ: nobody listens, the listener refuses (with private data): both
 *    -ECONNREFUSED with the reason;
 *  - timeouts: a node nobody has, and a peer whose frames are all dropped
 *    (netem loss 100%): -ETIMEDOUT within the bound; a lost REQ is resent
 *    within a fraction of a second (backoff from 100 ms);
 *  - the listener goes away with a request pending (its process exits) or
 *    before the connect: -ECONNREFUSED (LISTENER_GONE, NO_LISTENER);
 *  - 64 concurrent connects from 8 threads to one listener: all connected,
 *    distinct QPs, each pair matched both ways;
 *  - a duplicate REQ injected with AF_PACKET is reported once and answered
 *    with the same REP; malformed CM frames are dropped and counted; a
 *    flood of 3000 REQs at a listener that does not read stays bounded;
 *  - hostile netlink requests: missing or oversized attributes, unknown
 *    device, a service id in use (EADDRINUSE), another socket's request
 *    (ENOENT); an unprivileged process may listen;
 *  - disconnect (DREQ/DREP): destroying a QP, xnic_cm_disconnect(), or
 *    SIGKILL of the process holding it flushes the peer's posted RECV and
 *    reports the disconnect within 1 s; a forged DREQ is ignored and
 *    counted;
 *  - RNR: by default a SEND to a peer with no receive posted fails with
 *    RNR_RETRY_EXC_ERR within the documented bound; rnr_retry 7 set
 *    before connecting still waits; the attributes set on each side
 *    before the CM connected them are in force (xnic_query_qp()), and
 *    the QP's error reason says why it failed;
 *  - misuse, each with its own errno and nothing sent: private data over
 *    64 bytes (EMSGSIZE), timeout 0 (ERANGE), the own node
 *    (EADDRNOTAVAIL), a connected QP (EISCONN), a node the peer table does
 *    not know once it had time to learn (EHOSTUNREACH, at once); posting
 *    on a QP not connected yet (ENOTCONN, the QP then connects);
 *    xnic_cm_reject_str().
 *
 * Runs as root in the test VM (tools/xnic-vm) with xnic.ko loaded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "kselftest_harness.h"
#include "xnic_lib.h"
#include "kmod/wire.h"
#include "kmod/cm_wire.h"
#include "uapi/xnic-netlink.h"

#define SID		0x5e41ce00c0ffee01ULL
#define BUF_LEN		(64 * 1024)
#define NCONN		64
#define NTHREADS	8
#define CM_WAIT_MS	20000

FIXTURE(cm) {
	struct xt_env env;
};

FIXTURE_SETUP(cm)
{
	int err = xt_env_setup(&self->env, "cm");

	if (err) {
		TH_LOG("environment: %s", xt_error());
		xt_env_teardown(&self->env);
	}
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(cm)
{
	xt_env_teardown(&self->env);
}

/* A counter moved by @delta from @before within a few seconds. */
static bool counter_reaches(const char *dev, const char *name,
			    uint64_t before, uint64_t delta)
{
	long long end = xt_now_ms() + 5000;

	do {
		if (xt_hw_counter(dev, name) >= before + delta)
			return true;
		xt_sleep_ms(20);
	} while (xt_now_ms() < end);
	return false;
}

struct qp_pair {
	struct xnic_cq *cq;
	struct xnic_qp *qp;
};

static int qp_new(struct xt_dev *d, struct qp_pair *p)
{
	int err = xnic_create_cq(d->ctx, 64, &p->cq);

	if (err)
		return err;
	err = xnic_create_qp(d->pd, p->cq, p->cq, NULL, &p->qp);
	if (err) {
		xnic_destroy_cq(p->cq);
		p->cq = NULL;
	}
	return err;
}

static void qp_free(struct qp_pair *p)
{
	if (p->qp)
		xnic_destroy_qp(p->qp);
	if (p->cq)
		xnic_destroy_cq(p->cq);
	p->qp = NULL;
	p->cq = NULL;
}

/* What the passive side tells the active one in its private data. */
struct mr_info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

/* The passive side of one connection, run in a thread. */
struct server {
	struct xt_dev *dev;
	struct xnic_cm_listener *l;
	struct xnic_cm_req req;
	struct qp_pair p;
	struct xt_buf buf;
	int n;			/* requests to take */
	bool reject;		/* refuse them instead */
	const struct xnic_qp_attr *attr;	/* set on its QPs first */
	int err;
	/* many: one QP per request */
	struct qp_pair qps[NCONN];
	uint32_t remote_qpn[NCONN];
};

static void *server_main(void *arg)
{
	struct server *s = arg;
	int k;

	for (k = 0; k < s->n; k++) {
		struct mr_info mi;
		struct qp_pair *p = s->n > 1 ? &s->qps[k] : &s->p;

		s->err = xnic_cm_get_request(s->l, &s->req, CM_WAIT_MS);
		if (s->err)
			return NULL;
		if (s->reject) {
			static const char no[] = "go away";

			s->err = xnic_cm_reject(&s->req, no, sizeof(no));
			continue;
		}
		s->err = qp_new(s->dev, p);
		if (s->err)
			return NULL;
		if (s->attr) {
			s->err = xnic_qp_set_attr(p->qp, s->attr);
			if (s->err)
				return NULL;
		}
		mi.addr = (uintptr_t)s->buf.p;
		mi.rkey = s->buf.mr ? s->buf.mr->rkey : 0;
		mi.len = BUF_LEN;
		s->err = xnic_cm_accept(&s->req, p->qp, &mi, sizeof(mi),
					CM_WAIT_MS);
		if (s->err)
			return NULL;
		s->remote_qpn[k] = s->req.remote_qpn;
	}
	return NULL;
}

TEST_F_TIMEOUT(cm, connect_and_transfer, 120)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct server s = { .dev = d1, .n = 1 };
	static const char hello[] = "hello from node 1";
	struct xnic_cm_reply rep;
	struct qp_pair c = { 0 };
	struct xt_buf src = { 0 }, rbuf = { 0 };
	struct xnic_sge sg;
	struct xnic_cqe cqe;
	struct mr_info mi;
	pthread_t t;
	int err;

	ASSERT_EQ(0, xt_buf_alloc(d1, &s.buf, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xt_buf_alloc(d0, &src, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xt_buf_alloc(d0, &rbuf, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &s.l));
	ASSERT_EQ(0, pthread_create(&t, NULL, server_main, &s));
	ASSERT_EQ(0, qp_new(d0, &c));

	err = xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID, hello,
			      sizeof(hello), 5000, &rep);
	pthread_join(t, NULL);
	ASSERT_EQ(0, err) TH_LOG("connect: %s", xnic_strerror(err));
	ASSERT_EQ(0, s.err) TH_LOG("server: %s", xnic_strerror(s.err));

	/* What each side learnt of the other. */
	EXPECT_EQ(d0->node_id, s.req.remote_node);
	EXPECT_EQ(SID, s.req.service_id);
	EXPECT_EQ(c.qp->qpn, s.req.remote_qpn);
	EXPECT_EQ(sizeof(hello), s.req.private_len);
	EXPECT_EQ(0, memcmp(hello, s.req.private_data, sizeof(hello)));
	EXPECT_EQ(s.p.qp->qpn, rep.remote_qpn);
	ASSERT_EQ(sizeof(mi), rep.private_len);
	memcpy(&mi, rep.private_data, sizeof(mi));
	EXPECT_EQ((uintptr_t)s.buf.p, mi.addr);
	EXPECT_EQ(s.buf.mr->rkey, mi.rkey);

	/* RDMA WRITE with what the private data said. */
	xt_fill(src.p, BUF_LEN, 42);
	sg.addr = (uintptr_t)src.p;
	sg.length = BUF_LEN;
	sg.lkey = src.mr->lkey;
	ASSERT_EQ(0, xnic_post_write(c.qp, &sg, 1, mi.addr, mi.rkey, 1,
				     XNIC_WQE_F_SIGNALED));
	ASSERT_EQ(0, xt_reap_one(c.cq, &cqe, XT_WAIT_MS));
	EXPECT_EQ(XNIC_WC_SUCCESS, cqe.status) TH_LOG("%s", xt_cqe_str(&cqe));
	EXPECT_EQ(-1, xt_check_pattern(s.buf.p, BUF_LEN, 42));

	/* SEND the other way. */
	sg.addr = (uintptr_t)rbuf.p;
	sg.length = BUF_LEN;
	sg.lkey = rbuf.mr->lkey;
	ASSERT_EQ(0, xnic_post_recv(c.qp, &sg, 1, 2));
	xt_fill(s.buf.p, 4096, 7);
	sg.addr = (uintptr_t)s.buf.p;
	sg.length = 4096;
	sg.lkey = s.buf.mr->lkey;
	ASSERT_EQ(0, xnic_post_send(s.p.qp, &sg, 1, 3, XNIC_WQE_F_SIGNALED));
	ASSERT_EQ(0, xt_reap_one(s.p.cq, &cqe, XT_WAIT_MS));
	EXPECT_EQ(XNIC_WC_SUCCESS, cqe.status) TH_LOG("%s", xt_cqe_str(&cqe));
	ASSERT_EQ(0, xt_reap_one(c.cq, &cqe, XT_WAIT_MS));
	EXPECT_EQ(XNIC_WC_SUCCESS, cqe.status) TH_LOG("%s", xt_cqe_str(&cqe));
	EXPECT_EQ(4096U, cqe.byte_len);
	EXPECT_EQ(-1, xt_check_pattern(rbuf.p, 4096, 7));

	EXPECT_LE(1U, xt_hw_counter(d0->name, "cm_established"));
	EXPECT_LE(1U, xt_hw_counter(d1->name, "cm_established"));
	xnic_cm_unlisten(s.l);
	qp_free(&c);
	qp_free(&s.p);
	xt_buf_free(&src);
	xt_buf_free(&rbuf);
	xt_buf_free(&s.buf);
}

TEST_F_TIMEOUT(cm, reject_no_listener, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct xnic_cm_reply rep;
	struct qp_pair c = { 0 };
	long long t0;
	int err;

	ASSERT_EQ(0, qp_new(d0, &c));
	t0 = xt_now_ms();
	err = xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID + 1, NULL, 0,
			      5000, &rep);
	EXPECT_EQ(-ECONNREFUSED, err) TH_LOG("%s", xnic_strerror(err));
	EXPECT_EQ(XNIC_CM_REJ_NO_LISTENER, rep.reject_reason);
	/* Refused at once, not after the timeout. */
	EXPECT_GT(4000, xt_now_ms() - t0);
	qp_free(&c);
}

TEST_F_TIMEOUT(cm, reject_by_listener, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct server s = { .dev = d1, .n = 1, .reject = true };
	struct xnic_cm_reply rep;
	struct qp_pair c = { 0 };
	pthread_t t;
	int err;

	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &s.l));
	ASSERT_EQ(0, pthread_create(&t, NULL, server_main, &s));
	ASSERT_EQ(0, qp_new(d0, &c));
	err = xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID, NULL, 0, 5000,
			      &rep);
	pthread_join(t, NULL);
	EXPECT_EQ(0, s.err);
	EXPECT_EQ(-ECONNREFUSED, err) TH_LOG("%s", xnic_strerror(err));
	EXPECT_EQ(XNIC_CM_REJ_USER, rep.reject_reason);
	EXPECT_EQ(sizeof("go away"), rep.private_len);
	EXPECT_STREQ("go away", (char *)rep.private_data);
	/* Answered already: a second answer is refused. */
	EXPECT_EQ(-EINVAL, xnic_cm_reject(&s.req, NULL, 0));
	xnic_cm_unlisten(s.l);
	qp_free(&c);
}

/* @n connects (at most NCONN / NTHREADS) in a thread of their own. */
struct client {
	struct xt_dev *dev;
	uint32_t node;
	int n;
	struct qp_pair p[NCONN / NTHREADS];
	uint32_t remote_qpn[NCONN / NTHREADS];
	int err;
};

static void *client_main(void *arg)
{
	struct client *cl = arg;
	struct xnic_cm_reply rep;
	int k;

	for (k = 0; k < cl->n; k++) {
		cl->err = qp_new(cl->dev, &cl->p[k]);
		if (cl->err)
			return NULL;
		cl->err = xnic_cm_connect(cl->dev->ctx, cl->p[k].qp, cl->node,
					  SID, NULL, 0, 10000, &rep);
		if (cl->err)
			return NULL;
		cl->remote_qpn[k] = rep.remote_qpn;
	}
	return NULL;
}

/*
 * A request read off the socket by a wait for a disconnect is queued on
 * the listener: its descriptor stays readable until the request is taken
 * (an event loop that polls it would otherwise never see the request).
 */
TEST_F_TIMEOUT(cm, listener_fd_sees_queued_request, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct client k = { .dev = d0, .node = d1->node_id, .n = 1 };
	struct xnic_cm_listener *l;
	struct xnic_cm_disconnect d;
	struct xnic_cm_req req;
	struct pollfd pfd = { .events = POLLIN };
	pthread_t t;

	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &l));
	pfd.fd = xnic_cm_listener_fd(l);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, pthread_create(&t, NULL, client_main, &k));
	EXPECT_EQ(1, poll(&pfd, 1, 4000));
	EXPECT_EQ(-ETIMEDOUT, xnic_cm_get_disconnect(l, &d, 0));
	EXPECT_EQ(1, poll(&pfd, 1, 500));
	EXPECT_EQ(0, xnic_cm_get_request(l, &req, 0));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	EXPECT_EQ(0, xnic_cm_reject(&req, NULL, 0));
	pthread_join(t, NULL);
	EXPECT_EQ(-ECONNREFUSED, k.err);
	qp_free(&k.p[0]);
	xnic_cm_unlisten(l);
}

/*
 * An accept that gave up before its answer came: the answer, queued on
 * the listener when it comes, is dropped by the listener's next call
 * (no call would take it), and the descriptor is quiet again.
 */
TEST_F_TIMEOUT(cm, listener_fd_quiet_after_accept_timeout, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct client k = { .dev = d0, .node = d1->node_id, .n = 1 };
	struct xnic_cm_listener *l;
	struct xnic_cm_req req;
	struct pollfd pfd = { .events = POLLIN };
	struct qp_pair p = { 0 };
	pthread_t t;
	int err;

	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &l));
	pfd.fd = xnic_cm_listener_fd(l);
	ASSERT_EQ(0, pthread_create(&t, NULL, client_main, &k));
	ASSERT_EQ(0, xnic_cm_get_request(l, &req, 4000));
	ASSERT_EQ(0, qp_new(d1, &p));
	err = xnic_cm_accept(&req, p.qp, NULL, 0, 0);	/* no wait */
	TH_LOG("accept without waiting: %s", xnic_strerror(err));
	pthread_join(t, NULL);
	EXPECT_EQ(0, k.err);
	/* The connect returned: the ESTABLISHED went to the listener. */
	if (err == -ETIMEDOUT)
		EXPECT_EQ(1, poll(&pfd, 1, 2000));
	EXPECT_EQ(-ETIMEDOUT, xnic_cm_get_request(l, &req, 0));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	qp_free(&k.p[0]);
	qp_free(&p);
	xnic_cm_unlisten(l);
}

/*
 * Within XNIC_PEER_LEARN_MS (3 s) of the link coming up a node missing
 * from the peer table may still come: the REQ is sent and resent. The
 * fixture set the links up just before.
 */
TEST_F_TIMEOUT(cm, timeout_unknown_node, 60)
{
	struct xt_dev *d0 = &self->env.dev[0];
	struct qp_pair c = { 0 };
	uint64_t retx = xt_hw_counter(d0->name, "cm_retransmits");
	long long t0, dt;
	int err;

	ASSERT_EQ(0, qp_new(d0, &c));
	t0 = xt_now_ms();
	err = xnic_cm_connect(d0->ctx, c.qp, 77, SID, NULL, 0, 800, NULL);
	dt = xt_now_ms() - t0;
	EXPECT_EQ(-ETIMEDOUT, err) TH_LOG("%s", xnic_strerror(err));
	/*
	 * timeout_ms 200 and 3 retries: the kernel resends 100 ms after the
	 * first try, then every 200 ms (at 300, 500 and 700 ms), and gives up
	 * after 800 ms.
	 */
	EXPECT_LE(750, dt);
	EXPECT_GT(800 + 2000, dt);
	EXPECT_EQ(retx + 4, xt_hw_counter(d0->name, "cm_retransmits"));
	qp_free(&c);
}

TEST_F_TIMEOUT(cm, timeout_frames_dropped, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct xnic_cm_listener *l;
	struct xnic_cm_req req;
	struct qp_pair c = { 0 };
	long long t0, dt;
	int err;

	if (xt_sh("tc qdisc add dev %s root netem loss 100%% 2>/dev/null",
		  d0->netdev))
		SKIP(return, "tc netem not available");
	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &l));
	ASSERT_EQ(0, qp_new(d0, &c));
	t0 = xt_now_ms();
	err = xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID, NULL, 0, 1000,
			      NULL);
	dt = xt_now_ms() - t0;
	xt_sh("tc qdisc del dev %s root", d0->netdev);
	EXPECT_EQ(-ETIMEDOUT, err) TH_LOG("%s", xnic_strerror(err));
	EXPECT_LE(950, dt);
	EXPECT_GT(1000 + 2000, dt);
	/* Nothing reached the listener. */
	EXPECT_EQ(-ETIMEDOUT, xnic_cm_get_request(l, &req, 0));
	xnic_cm_unlisten(l);
	qp_free(&c);
}

struct netem_lift {
	const char *netdev;
	int after_ms;
};

static void *netem_lift_main(void *arg)
{
	const struct netem_lift *nl = arg;

	usleep(nl->after_ms * 1000);
	xt_sh("tc qdisc del dev %s root", nl->netdev);
	return NULL;
}

/*
 * The first REQ (and maybe the first resend) is lost, then the link works:
 * the resends back off from 100 ms (Documentation/cm.rst), so the connect
 * does not wait for its 10 s tries (libxnic's split of 40 s).
 */
TEST_F_TIMEOUT(cm, lost_req_resent_soon, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct server s = { .dev = d1, .n = 1 };
	struct netem_lift nl = { .netdev = d0->netdev, .after_ms = 250 };
	uint64_t retx = xt_hw_counter(d0->name, "cm_retransmits");
	struct qp_pair c = { 0 };
	pthread_t t, lift;
	long long t0, dt;
	int err;

	if (xt_sh("tc qdisc add dev %s root netem loss 100%% 2>/dev/null",
		  d0->netdev))
		SKIP(return, "tc netem not available");
	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &s.l));
	ASSERT_EQ(0, pthread_create(&t, NULL, server_main, &s));
	ASSERT_EQ(0, qp_new(d0, &c));
	ASSERT_EQ(0, pthread_create(&lift, NULL, netem_lift_main, &nl));
	t0 = xt_now_ms();
	err = xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID, NULL, 0, 40000,
			      NULL);
	dt = xt_now_ms() - t0;
	pthread_join(lift, NULL);
	pthread_join(t, NULL);
	ASSERT_EQ(0, err) TH_LOG("connect: %s", xnic_strerror(err));
	ASSERT_EQ(0, s.err) TH_LOG("server: %s", xnic_strerror(s.err));
	EXPECT_LE(retx + 1, xt_hw_counter(d0->name, "cm_retransmits"));
	/* A resend at 100, 300, 700, 1500 ms...: not the 10 s of a try. */
	EXPECT_GT(5000, dt) TH_LOG("connected after %lld ms", dt);
	xnic_cm_unlisten(s.l);
	qp_free(&c);
	qp_free(&s.p);
}

/* Child: listen on dev, say so, take one request, exit unanswered. */
static void listener_child(const char *dev, int fd, bool take)
{
	struct xnic_cm_listener *l;
	struct xnic_cm_req req;
	struct xnic_ctx *ctx;
	char b = 'L';

	if (xnic_open(dev, &ctx) || xnic_cm_listen(ctx, SID, &l))
		_exit(1);
	if (write(fd, &b, 1) != 1)
		_exit(2);
	if (take && xnic_cm_get_request(l, &req, CM_WAIT_MS))
		_exit(3);
	_exit(0);	/* the kernel drops the listener with the socket */
}

/* Fork listener_child() and wait until it listens. Return: its pid or -1. */
static pid_t listener_spawn(const char *dev, bool take)
{
	int fds[2];
	pid_t pid;
	char b;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (!pid)
		listener_child(dev, fds[1], take);
	close(fds[1]);		/* a child that fails closes the pipe: EOF */
	if (pid > 0 && read(fds[0], &b, 1) != 1) {
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(fds[0]);
	return pid;
}

TEST_F_TIMEOUT(cm, listener_gone_with_request_pending, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct xnic_cm_reply rep;
	struct qp_pair c = { 0 };
	int status, err;
	pid_t pid;

	pid = listener_spawn(d1->name, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, qp_new(d0, &c));
	err = xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID, NULL, 0, 5000,
			      &rep);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-ECONNREFUSED, err) TH_LOG("%s", xnic_strerror(err));
	EXPECT_EQ(XNIC_CM_REJ_LISTENER_GONE, rep.reject_reason);
	qp_free(&c);
}

TEST_F_TIMEOUT(cm, listener_gone_before_connect, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct xnic_cm_listener *l;
	struct xnic_cm_reply rep;
	struct qp_pair c = { 0 };
	int status, err;
	pid_t pid;

	pid = listener_spawn(d1->name, false);
	ASSERT_LT(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, qp_new(d0, &c));
	err = xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID, NULL, 0, 5000,
			      &rep);
	EXPECT_EQ(-ECONNREFUSED, err) TH_LOG("%s", xnic_strerror(err));
	EXPECT_EQ(XNIC_CM_REJ_NO_LISTENER, rep.reject_reason);

	/* The service id is free again; unlisten frees it too. */
	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &l));
	xnic_cm_unlisten(l);
	err = xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID, NULL, 0, 5000,
			      &rep);
	EXPECT_EQ(-ECONNREFUSED, err);
	EXPECT_EQ(XNIC_CM_REJ_NO_LISTENER, rep.reject_reason);
	qp_free(&c);
}

TEST_F_TIMEOUT(cm, many_concurrent_connects, 600)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct server *s = calloc(1, sizeof(*s));
	struct client *cl = calloc(NTHREADS, sizeof(*cl));
	pthread_t st, ct[NTHREADS];
	int i, j, k, matched = 0;
	long long t0;

	ASSERT_NE(NULL, s);
	ASSERT_NE(NULL, cl);
	s->dev = d1;
	s->n = NCONN;
	t0 = xt_now_ms();
	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &s->l));
	ASSERT_EQ(0, pthread_create(&st, NULL, server_main, s));
	for (i = 0; i < NTHREADS; i++) {
		cl[i].dev = d0;
		cl[i].node = d1->node_id;
		cl[i].n = NCONN / NTHREADS;
		ASSERT_EQ(0, pthread_create(&ct[i], NULL, client_main, &cl[i]));
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(ct[i], NULL);
		EXPECT_EQ(0, cl[i].err) TH_LOG("client %d: %s", i,
					       xnic_strerror(cl[i].err));
	}
	pthread_join(st, NULL);
	ASSERT_EQ(0, s->err) TH_LOG("server: %s", xnic_strerror(s->err));
	TH_LOG("%d connections (QP creation included) in %lld ms", NCONN,
	       xt_now_ms() - t0);

	/* Every client QP is paired with a distinct server QP, both ways. */
	for (i = 0; i < NTHREADS; i++) {
		for (k = 0; k < NCONN / NTHREADS; k++) {
			uint32_t mine = cl[i].p[k].qp->qpn;

			for (j = 0; j < NCONN; j++) {
				if (s->qps[j].qp->qpn != cl[i].remote_qpn[k])
					continue;
				EXPECT_EQ(mine, s->remote_qpn[j]);
				matched++;
			}
		}
	}
	EXPECT_EQ(NCONN, matched);
	for (j = 0; j < NCONN; j++)
		for (k = j + 1; k < NCONN; k++)
			EXPECT_NE(s->remote_qpn[j], s->remote_qpn[k]);

	xnic_cm_unlisten(s->l);
	for (i = 0; i < NTHREADS; i++)
		for (k = 0; k < NCONN / NTHREADS; k++)
			qp_free(&cl[i].p[k]);
	for (j = 0; j < NCONN; j++)
		qp_free(&s->qps[j]);
	free(s);
	free(cl);
}

/* Frames as node 2 would send them to node 1, injected on node 2's veth. */
struct injector {
	int sock;
	uint8_t frame[14 + XNIC_WIRE_HDR_LEN + XNIC_WIRE_CM_LEN];
};

static int injector_open(struct injector *inj, struct xt_env *e)
{
	struct sockaddr_ll sll = { 0 };

	inj->sock = socket(AF_PACKET, SOCK_RAW, 0);
	if (inj->sock < 0)
		return -errno;
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = e->dev[1].ifindex;
	if (bind(inj->sock, (struct sockaddr *)&sll, sizeof(sll)))
		return -errno;
	memcpy(inj->frame, e->dev[0].mac, 6);
	memcpy(inj->frame + 6, e->dev[1].mac, 6);
	inj->frame[12] = XNIC_ETH_P >> 8;
	inj->frame[13] = XNIC_ETH_P & 0xff;
	return 0;
}

/* Send a CM frame from node 2 to node 1 with @plen payload bytes. */
static int inject_cm(struct injector *inj, const struct xnic_cm_info *ci,
		     uint16_t plen)
{
	struct xnic_wire_hdr *h = (struct xnic_wire_hdr *)(inj->frame + 14);
	struct xnic_wire_info i = {
		.opcode = XNIC_OP_CM,
		.src_node = XT_NODE1,
		.dst_node = XT_NODE0,
		.payload_len = plen,
	};
	size_t len = 14 + XNIC_WIRE_HDR_LEN + plen;

	xnic_wire_encode(h, &i);
	xnic_cm_encode((struct xnic_wire_cm *)(h + 1), ci);
	xnic_wire_seal(h, XNIC_WIRE_HDR_LEN + plen);
	if (send(inj->sock, inj->frame, len, 0) != (ssize_t)len)
		return -errno;
	return 0;
}

TEST_F_TIMEOUT(cm, duplicate_req_and_malformed, 120)
{
	struct xt_dev *d0 = &self->env.dev[0];
	struct xnic_cm_info ci = {
		.type = XNIC_CM_REQ,
		.local_id = 0x1234567,
		.qpn = 0x42,
		.psn = 0x77,
		.timeout_ms = 1000,
		.retries = 3,
		.service_id = SID,
		.private_len = 3,
		.private_data = { 'd', 'u', 'p' },
	};
	struct xnic_cm_listener *l;
	struct injector inj;
	struct xnic_cm_req req;
	struct qp_pair p = { 0 };
	uint64_t dup, rep, mal, malformed;
	struct xnic_cm_info bad;

	ASSERT_EQ(0, injector_open(&inj, &self->env));
	ASSERT_EQ(0, xnic_cm_listen(d0->ctx, SID, &l));
	dup = xt_hw_counter(d0->name, "cm_dup_req");
	rep = xt_hw_counter(d0->name, "cm_rep_sent");

	/* The same REQ twice: one request. */
	ASSERT_EQ(0, inject_cm(&inj, &ci, XNIC_WIRE_CM_LEN));
	ASSERT_EQ(0, xnic_cm_get_request(l, &req, CM_WAIT_MS));
	EXPECT_EQ(XT_NODE1, req.remote_node);
	EXPECT_EQ(0x42U, req.remote_qpn);
	EXPECT_EQ(0x77U, req.remote_psn);
	EXPECT_EQ(3U, req.private_len);
	ASSERT_EQ(0, inject_cm(&inj, &ci, XNIC_WIRE_CM_LEN));
	EXPECT_TRUE(counter_reaches(d0->name, "cm_dup_req", dup, 1));
	EXPECT_EQ(-ETIMEDOUT, xnic_cm_get_request(l, &req, 300));

	/*
	 * Accept: the REP goes to node 2, which knows nothing of it and
	 * answers REJ; a repeated REQ before that gets the REP again.
	 */
	ASSERT_EQ(0, qp_new(d0, &p));
	EXPECT_EQ(-ECONNREFUSED, xnic_cm_accept(&req, p.qp, NULL, 0,
						CM_WAIT_MS));
	EXPECT_TRUE(counter_reaches(d0->name, "cm_rep_sent", rep, 1));

	/* Malformed CM messages: dropped, counted, never reported. */
	mal = xt_hw_counter(d0->name, "cm_malformed");
	bad = ci;
	bad.local_id = 0x999;
	bad.type = 9;
	ASSERT_EQ(0, inject_cm(&inj, &bad, XNIC_WIRE_CM_LEN));
	bad.type = XNIC_CM_REQ;
	bad.private_len = XNIC_CM_PRIVATE_MAX + 1;
	ASSERT_EQ(0, inject_cm(&inj, &bad, XNIC_WIRE_CM_LEN));
	bad.private_len = 0;
	bad.remote_id = 5;	/* a REQ names nobody on our side */
	ASSERT_EQ(0, inject_cm(&inj, &bad, XNIC_WIRE_CM_LEN));
	bad.remote_id = 0;
	bad.timeout_ms = 0;
	ASSERT_EQ(0, inject_cm(&inj, &bad, XNIC_WIRE_CM_LEN));
	bad.timeout_ms = 1000;
	bad.qpn = 0x1000000;
	ASSERT_EQ(0, inject_cm(&inj, &bad, XNIC_WIRE_CM_LEN));
	EXPECT_TRUE(counter_reaches(d0->name, "cm_malformed", mal, 5));

	/* A CM frame of the wrong length: the transport's rx_malformed. */
	malformed = xt_hw_counter(d0->name, "rx_malformed");
	bad.qpn = 0;
	ASSERT_EQ(0, inject_cm(&inj, &bad, XNIC_WIRE_CM_LEN - 8));
	EXPECT_TRUE(counter_reaches(d0->name, "rx_malformed", malformed, 1));
	EXPECT_EQ(-ETIMEDOUT, xnic_cm_get_request(l, &req, 300));

	close(inj.sock);
	xnic_cm_unlisten(l);
	qp_free(&p);
}

/*
 * A flood of distinct REQs at a listener that never reads: events beyond
 * its socket buffer are dropped (and counted), records stay bounded, the
 * unread ones are refused when the listener goes, and the CM still works.
 */
TEST_F_TIMEOUT(cm, req_flood, 300)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct xnic_cm_info ci = {
		.type = XNIC_CM_REQ,
		.qpn = 0x42,
		.psn = 0x77,
		.timeout_ms = XNIC_CM_TIMEOUT_MAX_MS,
		.retries = XNIC_CM_RETRIES_MAX,
		.service_id = SID,
	};
	uint64_t rcvd, drops, rej, dups, d_rcvd, d_drops, d_rej;
	struct server s = { .dev = d0, .n = 1 };
	struct qp_pair c = { 0 };
	struct injector inj;
	pthread_t t;
	unsigned int k, n = 3000;

	ASSERT_EQ(0, injector_open(&inj, &self->env));
	ASSERT_EQ(0, xnic_cm_listen(d0->ctx, SID, &s.l));
	rcvd = xt_hw_counter(d0->name, "cm_req_rcvd");
	drops = xt_hw_counter(d0->name, "cm_event_drops");
	rej = xt_hw_counter(d0->name, "cm_rej_sent");
	dups = xt_hw_counter(d0->name, "cm_dup_req");
	for (k = 0; k < n; k++) {
		ci.local_id = 0x10000 + k;
		ASSERT_EQ(0, inject_cm(&inj, &ci, XNIC_WIRE_CM_LEN));
		if (k % 64 == 63)
			xt_sleep_ms(2);	/* the veth backlog holds 1000 */
	}
	xt_sleep_ms(500);	/* also outlives the counters' cache */
	d_rcvd = xt_hw_counter(d0->name, "cm_req_rcvd") - rcvd;
	d_drops = xt_hw_counter(d0->name, "cm_event_drops") - drops;
	TH_LOG("%u REQs injected: %llu received, %llu events dropped", n,
	       (unsigned long long)d_rcvd, (unsigned long long)d_drops);
	EXPECT_LT(0U, d_rcvd);
	EXPECT_GE(n, d_rcvd);
	EXPECT_EQ(dups, xt_hw_counter(d0->name, "cm_dup_req"));
	/* The listener goes: every request reported to it is refused. */
	xnic_cm_unlisten(s.l);
	/* hw_counters are cached for a few ms: poll. */
	EXPECT_TRUE(counter_reaches(d0->name, "cm_rej_sent", rej,
				    d_rcvd - d_drops));
	xt_sleep_ms(100);
	d_rej = xt_hw_counter(d0->name, "cm_rej_sent") - rej;
	EXPECT_EQ(d_rcvd - d_drops, d_rej);
	close(inj.sock);

	/* Still working: node 2 connects to a new listener on node 1. */
	ASSERT_EQ(0, xt_buf_alloc(d0, &s.buf, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xnic_cm_listen(d0->ctx, SID, &s.l));
	ASSERT_EQ(0, pthread_create(&t, NULL, server_main, &s));
	ASSERT_EQ(0, qp_new(d1, &c));
	EXPECT_EQ(0, xnic_cm_connect(d1->ctx, c.qp, d0->node_id, SID, NULL, 0,
				     10000, NULL));
	pthread_join(t, NULL);
	EXPECT_EQ(0, s.err);
	xnic_cm_unlisten(s.l);
	qp_free(&c);
	qp_free(&s.p);
	xt_buf_free(&s.buf);
}

/* --------------------------- disconnect ---------------------------- */

/* How soon the peer must learn of a disconnect (Documentation/cm.rst). */
#define DISC_MS		1000
/*
 * Connect timeout of the disconnect tests: 4 tries of 250 ms, so the
 * records' linger (250 ms * 5) is over before the disconnect and the
 * CONNECTED state is what is tested.
 */
#define DISC_CONNECT_MS	1000

/* Post one RECV of @b's first 4 KiB on @qp. */
static int post_one_recv(struct xnic_qp *qp, struct xt_buf *b, uint64_t id)
{
	struct xnic_sge sg = {
		.addr = (uintptr_t)b->p,
		.length = 4096,
		.lkey = b->mr->lkey,
	};

	return xnic_post_recv(qp, &sg, 1, id);
}

/*
 * After the peer's QP went at @t0: @p's posted RECV @id completes with a
 * flush error and, with @l, the listener reports the disconnect of @id;
 * without, @ctx gets QP_FATAL for @p's QP. Return: ms since @t0, or -1.
 */
static long long wait_disconnected(struct __test_metadata *_metadata,
				   struct qp_pair *p, uint64_t id,
				   struct xnic_cm_listener *l, uint32_t cm_id,
				   struct xnic_ctx *ctx, long long t0)
{
	struct xnic_cm_disconnect d;
	struct xnic_cqe cqe;
	long long dt;
	int err;

	err = xt_reap_one(p->cq, &cqe, DISC_MS);
	EXPECT_EQ(0, err) TH_LOG("no flushed RECV within %d ms", DISC_MS);
	if (err)
		return -1;
	EXPECT_EQ(XNIC_WC_WR_FLUSH_ERR, cqe.status)
		TH_LOG("%s", xt_cqe_str(&cqe));
	EXPECT_EQ(id, cqe.wr_id);
	if (l) {
		err = xnic_cm_get_disconnect(l, &d, DISC_MS);
		EXPECT_EQ(0, err) TH_LOG("no disconnect event: %s",
					 xnic_strerror(err));
		if (!err)
			EXPECT_EQ(cm_id, d.id);
	} else {
		err = xt_wait_async(ctx, XNIC_EVENT_QP_FATAL, p->qp, NULL,
				    DISC_MS);
		EXPECT_EQ(0, err) TH_LOG("no QP_FATAL event");
	}
	dt = xt_now_ms() - t0;
	EXPECT_GE(DISC_MS, dt);
	return err ? -1 : dt;
}

/* Connect @c on @dc to a server on @ds; the server's QP is s->p. */
static int disc_connect(struct server *s, struct xt_dev *dc,
			struct qp_pair *c, uint32_t node)
{
	pthread_t t;
	int err;

	s->n = 1;
	if (pthread_create(&t, NULL, server_main, s))
		return -EAGAIN;
	err = qp_new(dc, c);
	if (!err)
		err = xnic_cm_connect(dc->ctx, c->qp, node, SID, NULL, 0,
				      DISC_CONNECT_MS, NULL);
	pthread_join(t, NULL);
	return err ? err : s->err;
}

TEST_F_TIMEOUT(cm, disconnect_on_destroy, 120)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct server s = { .dev = d1 };
	struct xt_buf rb0 = { 0 }, rb1 = { 0 };
	struct qp_pair c = { 0 };
	uint64_t dreq, drep;
	long long t0, dt;

	ASSERT_EQ(0, xt_buf_alloc(d0, &rb0, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xt_buf_alloc(d1, &rb1, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &s.l));
	dreq = xt_hw_counter(d0->name, "cm_dreq_sent");
	drep = xt_hw_counter(d1->name, "cm_drep_sent");

	/* The connecting side destroys its QP: the listener hears of it. */
	ASSERT_EQ(0, disc_connect(&s, d0, &c, d1->node_id));
	xt_sleep_ms(2 * DISC_CONNECT_MS);	/* past the linger */
	ASSERT_EQ(0, post_one_recv(s.p.qp, &rb1, 11));
	t0 = xt_now_ms();
	xnic_destroy_qp(c.qp);
	c.qp = NULL;
	dt = wait_disconnected(_metadata, &s.p, 11, s.l, s.req.id, NULL, t0);
	TH_LOG("active QP destroyed: passive flushed and told in %lld ms",
	       dt);
	EXPECT_TRUE(counter_reaches(d0->name, "cm_dreq_sent", dreq, 1));
	EXPECT_TRUE(counter_reaches(d1->name, "cm_drep_sent", drep, 1));
	qp_free(&c);
	qp_free(&s.p);

	/* The accepting side destroys its QP: QP_FATAL on the other. */
	ASSERT_EQ(0, disc_connect(&s, d0, &c, d1->node_id));
	xt_sleep_ms(2 * DISC_CONNECT_MS);
	ASSERT_EQ(0, post_one_recv(c.qp, &rb0, 12));
	t0 = xt_now_ms();
	xnic_destroy_qp(s.p.qp);
	s.p.qp = NULL;
	dt = wait_disconnected(_metadata, &c, 12, NULL, 0, d0->ctx, t0);
	TH_LOG("passive QP destroyed: active flushed and told in %lld ms",
	       dt);
	qp_free(&c);
	qp_free(&s.p);

	/* xnic_cm_disconnect(), within the linger: both sides flush. */
	ASSERT_EQ(0, disc_connect(&s, d0, &c, d1->node_id));
	ASSERT_EQ(0, post_one_recv(s.p.qp, &rb1, 13));
	ASSERT_EQ(0, post_one_recv(c.qp, &rb0, 14));
	t0 = xt_now_ms();
	ASSERT_EQ(0, xnic_cm_disconnect(c.qp));
	dt = wait_disconnected(_metadata, &s.p, 13, s.l, s.req.id, NULL, t0);
	TH_LOG("xnic_cm_disconnect(): peer flushed and told in %lld ms", dt);
	{
		struct xnic_cqe cqe;

		ASSERT_EQ(0, xt_reap_one(c.cq, &cqe, DISC_MS));
		EXPECT_EQ(XNIC_WC_WR_FLUSH_ERR, cqe.status);
		EXPECT_EQ(14U, cqe.wr_id);
	}
	xnic_cm_unlisten(s.l);
	qp_free(&c);
	qp_free(&s.p);
	xt_buf_free(&rb0);
	xt_buf_free(&rb1);
}

/* Child: connect a QP of its own context to @node, say so, wait to die. */
static void connector_child(const char *dev, uint32_t node, int fd)
{
	struct xt_dev me = { 0 };
	struct qp_pair c = { 0 };
	char b = 'C';

	snprintf(me.name, sizeof(me.name), "%s", dev);
	if (xnic_open(me.name, &me.ctx) || xnic_alloc_pd(me.ctx, &me.pd) ||
	    qp_new(&me, &c))
		_exit(1);
	if (xnic_cm_connect(me.ctx, c.qp, node, SID, NULL, 0,
			    DISC_CONNECT_MS, NULL))
		_exit(2);
	if (write(fd, &b, 1) != 1)
		_exit(3);
	for (;;)
		pause();
}

TEST_F_TIMEOUT(cm, disconnect_on_process_death, 120)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct server s = { .dev = d1, .n = 1 };
	struct xt_buf rb = { 0 };
	long long t0, dt;
	int fds[2], status;
	pthread_t t;
	pid_t pid;
	char b;

	ASSERT_EQ(0, xt_buf_alloc(d1, &rb, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &s.l));
	ASSERT_EQ(0, pipe(fds));
	/* Fork before any thread: the child only uses libxnic. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		connector_child(d0->name, d1->node_id, fds[1]);
	close(fds[1]);
	ASSERT_EQ(0, pthread_create(&t, NULL, server_main, &s));
	pthread_join(t, NULL);
	ASSERT_EQ(0, s.err) TH_LOG("server: %s", xnic_strerror(s.err));
	ASSERT_EQ(1, read(fds[0], &b, 1));
	close(fds[0]);
	xt_sleep_ms(2 * DISC_CONNECT_MS);	/* past the linger */
	ASSERT_EQ(0, post_one_recv(s.p.qp, &rb, 21));

	t0 = xt_now_ms();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	dt = wait_disconnected(_metadata, &s.p, 21, s.l, s.req.id, NULL, t0);
	TH_LOG("connecting process killed: peer flushed and told in %lld ms",
	       dt);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	xnic_cm_unlisten(s.l);
	qp_free(&s.p);
	xt_buf_free(&rb);
}

/*
 * The peer took our SEND and disconnected before its ACK of it left: its
 * DREQ acknowledges what it received (its expected PSN), so the SEND is
 * not flushed. An unsignaled SEND is ACKed late (delayed ACK), which is
 * the window a DREQ used to win; a few rounds make that likely.
 */
#define DISC_ROUNDS	8

TEST_F_TIMEOUT(cm, disconnect_acks_delivered, 180)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct server s = { .dev = d1 };
	struct xt_buf sb = { 0 }, rb = { 0 };
	struct qp_pair c = { 0 };
	struct xnic_cqe cqe[4];
	int k, n;

	ASSERT_EQ(0, xt_buf_alloc(d0, &sb, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xt_buf_alloc(d1, &rb, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &s.l));
	for (k = 0; k < DISC_ROUNDS; k++) {
		struct xnic_sge sg = {
			.addr = (uintptr_t)sb.p,
			.length = 4096,
			.lkey = sb.mr->lkey,
		};

		ASSERT_EQ(0, disc_connect(&s, d0, &c, d1->node_id));
		ASSERT_EQ(0, post_one_recv(s.p.qp, &rb, 31));
		ASSERT_EQ(0, xnic_post_send(c.qp, &sg, 1, 32, 0));
		ASSERT_EQ(0, xt_reap_one(s.p.cq, &cqe[0], DISC_MS));
		ASSERT_EQ(XNIC_WC_SUCCESS, cqe[0].status)
			TH_LOG("%s", xt_cqe_str(&cqe[0]));
		ASSERT_EQ(0, xnic_cm_disconnect(s.p.qp));
		EXPECT_EQ(0, xt_wait_async(d0->ctx, XNIC_EVENT_QP_FATAL, c.qp,
					   NULL, DISC_MS));
		/* Success of an unsignaled SEND completes nothing. */
		n = xt_quiet(c.cq, cqe, 4, 100);
		EXPECT_EQ(0, n) TH_LOG("round %d: the delivered SEND: %s", k,
				       xt_cqe_str(&cqe[0]));
		qp_free(&c);
		qp_free(&s.p);
	}
	xnic_cm_unlisten(s.l);
	xt_buf_free(&sb);
	xt_buf_free(&rb);
}

TEST_F_TIMEOUT(cm, disconnect_forged_dreq, 120)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct server s = { .dev = d0 };
	struct xnic_cm_info ci = { .type = XNIC_CM_DREQ };
	struct xt_buf rb = { 0 }, sb = { 0 };
	struct xnic_cm_disconnect d;
	struct qp_pair c = { 0 };
	struct injector inj;
	struct xnic_sge sg;
	struct xnic_cqe cqe;
	uint64_t unknown, dreq;

	ASSERT_EQ(0, xt_buf_alloc(d0, &rb, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xt_buf_alloc(d1, &sb, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, injector_open(&inj, &self->env));
	/* Node 2 connects to node 1: node 1's id of it is s.req.id. */
	ASSERT_EQ(0, xnic_cm_listen(d0->ctx, SID, &s.l));
	ASSERT_EQ(0, disc_connect(&s, d1, &c, d0->node_id));
	ASSERT_EQ(0, post_one_recv(s.p.qp, &rb, 31));
	unknown = xt_hw_counter(d0->name, "cm_unknown_id");
	dreq = xt_hw_counter(d0->name, "cm_dreq_rcvd");

	/* An id node 1 never gave out. */
	ci.local_id = 0x7777;
	ci.remote_id = s.req.id + 1000;
	ci.qpn = c.qp->qpn;
	ASSERT_EQ(0, inject_cm(&inj, &ci, XNIC_WIRE_CM_LEN));
	/* The right id, but not the peer's: its id and QP are guesses. */
	ci.remote_id = s.req.id;
	ASSERT_EQ(0, inject_cm(&inj, &ci, XNIC_WIRE_CM_LEN));
	ci.qpn = c.qp->qpn ^ 1;
	ASSERT_EQ(0, inject_cm(&inj, &ci, XNIC_WIRE_CM_LEN));
	EXPECT_TRUE(counter_reaches(d0->name, "cm_dreq_rcvd", dreq, 3));
	EXPECT_TRUE(counter_reaches(d0->name, "cm_unknown_id", unknown, 3));

	/* Nothing happened to the connection: no event, SEND works. */
	EXPECT_EQ(-ETIMEDOUT, xnic_cm_get_disconnect(s.l, &d, 300));
	xt_fill(sb.p, 4096, 3);
	sg.addr = (uintptr_t)sb.p;
	sg.length = 4096;
	sg.lkey = sb.mr->lkey;
	ASSERT_EQ(0, xnic_post_send(c.qp, &sg, 1, 32, XNIC_WQE_F_SIGNALED));
	ASSERT_EQ(0, xt_reap_one(c.cq, &cqe, XT_WAIT_MS));
	EXPECT_EQ(XNIC_WC_SUCCESS, cqe.status) TH_LOG("%s", xt_cqe_str(&cqe));
	ASSERT_EQ(0, xt_reap_one(s.p.cq, &cqe, XT_WAIT_MS));
	EXPECT_EQ(XNIC_WC_SUCCESS, cqe.status) TH_LOG("%s", xt_cqe_str(&cqe));
	EXPECT_EQ(-1, xt_check_pattern(rb.p, 4096, 3));

	close(inj.sock);
	xnic_cm_unlisten(s.l);
	qp_free(&c);
	qp_free(&s.p);
	xt_buf_free(&rb);
	xt_buf_free(&sb);
}

/* ------------------------------- RNR ------------------------------- */

/*
 * The bound asserted on the default RNR failure: 6 waits of 0.64 ms and 7
 * round trips take milliseconds; the VM (TCG) gets a generous margin.
 */
#define RNR_BOUND_MS	1000

/* Post a signaled 4 KiB SEND of @b on @qp. */
static int post_one_send(struct xnic_qp *qp, struct xt_buf *b, uint64_t id)
{
	struct xnic_sge sg = {
		.addr = (uintptr_t)b->p,
		.length = 4096,
		.lkey = b->mr->lkey,
	};

	return xnic_post_send(qp, &sg, 1, id, XNIC_WQE_F_SIGNALED);
}

TEST_F_TIMEOUT(cm, rnr_default_bounded, 120)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct server s = { .dev = d1 };
	struct xt_buf sb = { 0 };
	struct xnic_qp_info info;
	struct qp_pair c = { 0 };
	struct xnic_cqe cqe;
	long long t0, dt;

	ASSERT_EQ(0, xt_buf_alloc(d0, &sb, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &s.l));
	ASSERT_EQ(0, disc_connect(&s, d0, &c, d1->node_id));
	ASSERT_EQ(0, xnic_query_qp(c.qp, &info));
	EXPECT_EQ(XNIC_QPS_RTS, info.state);
	EXPECT_EQ(XNIC_QP_DEF_RNR_RETRY, info.attr.rnr_retry);
	EXPECT_EQ(XNIC_QP_DEF_RETRY_CNT, info.attr.retry_cnt);
	EXPECT_EQ(XNIC_QP_DEF_TIMEOUT, info.attr.timeout);
	EXPECT_EQ(XNIC_QP_DEF_MIN_RNR_TIMER, info.attr.min_rnr_timer);
	EXPECT_EQ(XNIC_QP_ERR_NONE, info.err_reason);

	/* The peer never posts a receive. */
	t0 = xt_now_ms();
	ASSERT_EQ(0, post_one_send(c.qp, &sb, 41));
	ASSERT_EQ(0, xt_reap_one(c.cq, &cqe, RNR_BOUND_MS))
		TH_LOG("the SEND did not fail within %d ms", RNR_BOUND_MS);
	dt = xt_now_ms() - t0;
	TH_LOG("SEND to a peer with no receive: %s after %lld ms",
	       xnic_wc_status_str(cqe.status), dt);
	EXPECT_EQ(XNIC_WC_RNR_RETRY_EXC_ERR, cqe.status);
	EXPECT_EQ(41U, cqe.wr_id);
	EXPECT_EQ(XNIC_QP_ERR_RNR_RETRY_EXC, xnic_qp_err_reason(c.qp));
	ASSERT_EQ(0, xnic_query_qp(c.qp, &info));
	EXPECT_EQ(XNIC_QPS_ERR, info.state);
	EXPECT_EQ(XNIC_QP_ERR_RNR_RETRY_EXC, info.err_reason)
		TH_LOG("%s", xnic_qp_err_str(info.err_reason));

	xnic_cm_unlisten(s.l);
	qp_free(&c);
	qp_free(&s.p);
	xt_buf_free(&sb);
}

TEST_F_TIMEOUT(cm, rnr_infinite_explicit, 120)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	const struct xnic_qp_attr sattr = {
		.comp_mask = XNIC_QP_ATTR_MIN_RNR_TIMER | XNIC_QP_ATTR_TIMEOUT,
		.min_rnr_timer = 14,	/* 1.28 ms */
		.timeout = 15,
	};
	struct xnic_qp_attr cattr = {
		.comp_mask = XNIC_QP_ATTR_RNR_RETRY | XNIC_QP_ATTR_RETRY_CNT,
		.rnr_retry = XNIC_QP_RNR_INFINITE,
		.retry_cnt = 5,
	};
	struct server s = { .dev = d1, .n = 1, .attr = &sattr };
	struct xt_buf sb = { 0 };
	struct xnic_qp_info info;
	struct qp_pair c = { 0 };
	struct xnic_cqe cqe;
	pthread_t t;

	ASSERT_EQ(0, xt_buf_alloc(d0, &sb, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &s.l));
	ASSERT_EQ(0, pthread_create(&t, NULL, server_main, &s));
	ASSERT_EQ(0, qp_new(d0, &c));
	/* Bad values and the class are refused; nothing is changed. */
	cattr.rnr_retry = 8;
	EXPECT_EQ(-EINVAL, xnic_qp_set_attr(c.qp, &cattr));
	cattr.rnr_retry = XNIC_QP_RNR_INFINITE;
	cattr.comp_mask |= 1U << 31;
	EXPECT_EQ(-EOPNOTSUPP, xnic_qp_set_attr(c.qp, &cattr));
	cattr.comp_mask &= ~(1U << 31);
	ASSERT_EQ(0, xnic_qp_set_attr(c.qp, &cattr));
	EXPECT_EQ(0, xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID, NULL, 0,
				     5000, NULL));
	pthread_join(t, NULL);
	ASSERT_EQ(0, s.err) TH_LOG("server: %s", xnic_strerror(s.err));

	/* What each side set before the CM connected it is in force. */
	ASSERT_EQ(0, xnic_query_qp(c.qp, &info));
	EXPECT_EQ(XNIC_QPS_RTS, info.state);
	EXPECT_EQ(s.p.qp->qpn, info.dest_qpn);
	EXPECT_EQ(XNIC_QP_RNR_INFINITE, info.attr.rnr_retry);
	EXPECT_EQ(5, info.attr.retry_cnt);
	ASSERT_EQ(0, xnic_query_qp(s.p.qp, &info));
	EXPECT_EQ(14, info.attr.min_rnr_timer);
	EXPECT_EQ(15, info.attr.timeout);
	/* Connected: IBTA lets min_rnr_timer change, not rnr_retry. */
	EXPECT_EQ(-EINVAL, xnic_qp_set_attr(c.qp, &cattr));
	{
		struct xnic_qp_attr m = {
			.comp_mask = XNIC_QP_ATTR_MIN_RNR_TIMER,
			.min_rnr_timer = 16,
		};

		EXPECT_EQ(0, xnic_qp_set_attr(s.p.qp, &m));
		ASSERT_EQ(0, xnic_query_qp(s.p.qp, &info));
		EXPECT_EQ(16, info.attr.min_rnr_timer);	/* 2.56 ms */
	}

	/* No receive: still waiting long after the finite bound. */
	ASSERT_EQ(0, post_one_send(c.qp, &sb, 51));
	EXPECT_EQ(0, xt_quiet(c.cq, &cqe, 1, 2 * RNR_BOUND_MS))
		TH_LOG("completed: %s", xt_cqe_str(&cqe));
	ASSERT_EQ(0, xnic_query_qp(c.qp, &info));
	EXPECT_EQ(XNIC_QPS_RTS, info.state);
	EXPECT_LT(0U, xt_hw_counter(d1->name, "rnr_naks_sent"));

	xnic_cm_unlisten(s.l);
	qp_free(&c);
	qp_free(&s.p);
	xt_buf_free(&sb);
}

/* ------------------------------ misuse ----------------------------- */

/* The REQs @dev sent so far. */
static uint64_t reqs_sent(const struct xt_dev *d)
{
	return xt_hw_counter(d->name, "cm_req_sent");
}

TEST_F_TIMEOUT(cm, misuse_private_too_long, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	uint8_t big[XNIC_CM_PRIVATE_MAX + 1] = { 0 };
	struct qp_pair c = { 0 };
	uint64_t req = reqs_sent(d0);

	ASSERT_EQ(0, qp_new(d0, &c));
	EXPECT_EQ(-EMSGSIZE, xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID,
					     big, sizeof(big), 1000, NULL));
	xt_sleep_ms(100);
	EXPECT_EQ(req, reqs_sent(d0));
	qp_free(&c);
}

TEST_F_TIMEOUT(cm, misuse_timeout_zero, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct qp_pair c = { 0 };
	uint64_t req = reqs_sent(d0);

	ASSERT_EQ(0, qp_new(d0, &c));
	EXPECT_EQ(-ERANGE, xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID,
					   NULL, 0, 0, NULL));
	EXPECT_EQ(-ERANGE, xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID,
					   NULL, 0, 110001, NULL));
	xt_sleep_ms(100);
	EXPECT_EQ(req, reqs_sent(d0));
	qp_free(&c);
}

TEST_F_TIMEOUT(cm, misuse_own_node, 60)
{
	struct xt_dev *d0 = &self->env.dev[0];
	struct qp_pair c = { 0 };
	uint64_t req = reqs_sent(d0);

	ASSERT_EQ(0, qp_new(d0, &c));
	EXPECT_EQ(-EADDRNOTAVAIL, xnic_cm_connect(d0->ctx, c.qp, d0->node_id,
						  SID, NULL, 0, 1000, NULL));
	xt_sleep_ms(100);
	EXPECT_EQ(req, reqs_sent(d0));
	qp_free(&c);
}

/* Posting before the connect: refused at once; the QP then connects. */
TEST_F_TIMEOUT(cm, post_before_connect, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct server s = { .dev = d1 };
	struct xt_buf sb = { 0 }, rb = { 0 };
	struct qp_pair c = { 0 };
	struct xnic_cqe cqe;

	ASSERT_EQ(0, xt_buf_alloc(d0, &sb, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xt_buf_alloc(d1, &rb, BUF_LEN, XT_ACCESS_ALL));
	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &s.l));
	ASSERT_EQ(0, qp_new(d0, &c));
	EXPECT_EQ(-ENOTCONN, post_one_send(c.qp, &sb, 61));
	EXPECT_EQ(0, xt_quiet(c.cq, &cqe, 1, 200))
		TH_LOG("a completion: %s", xt_cqe_str(&cqe));

	/* Still in RESET and usable: connect, then the SEND goes. */
	{
		pthread_t t;
		int err;

		s.n = 1;
		ASSERT_EQ(0, pthread_create(&t, NULL, server_main, &s));
		err = xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID, NULL, 0,
				      5000, NULL);
		pthread_join(t, NULL);
		ASSERT_EQ(0, err) TH_LOG("connect: %s", xnic_strerror(err));
		ASSERT_EQ(0, s.err);
	}
	ASSERT_EQ(0, post_one_recv(s.p.qp, &rb, 62));
	ASSERT_EQ(0, post_one_send(c.qp, &sb, 63));
	ASSERT_EQ(0, xt_reap_one(c.cq, &cqe, XT_WAIT_MS));
	EXPECT_EQ(XNIC_WC_SUCCESS, cqe.status) TH_LOG("%s", xt_cqe_str(&cqe));
	xnic_cm_unlisten(s.l);
	qp_free(&c);
	qp_free(&s.p);
	xt_buf_free(&sb);
	xt_buf_free(&rb);
}

TEST_F_TIMEOUT(cm, misuse_reconnect, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct server s = { .dev = d1 };
	struct qp_pair c = { 0 };
	uint64_t req;

	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &s.l));
	ASSERT_EQ(0, disc_connect(&s, d0, &c, d1->node_id));
	req = reqs_sent(d0);
	EXPECT_EQ(-EISCONN, xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID,
					    NULL, 0, 1000, NULL));
	/* Disconnected (ERR): reset it first. */
	ASSERT_EQ(0, xnic_cm_disconnect(c.qp));
	EXPECT_EQ(-EINVAL, xnic_cm_connect(d0->ctx, c.qp, d1->node_id, SID,
					   NULL, 0, 1000, NULL));
	xt_sleep_ms(100);
	EXPECT_EQ(req, reqs_sent(d0));
	xnic_cm_unlisten(s.l);
	qp_free(&c);
	qp_free(&s.p);
}

TEST_F_TIMEOUT(cm, unknown_node_unreachable, 60)
{
	struct xt_dev *d0 = &self->env.dev[0];
	struct qp_pair c = { 0 };
	long long t0, dt;
	uint64_t req;
	int err;

	ASSERT_EQ(0, qp_new(d0, &c));
	/* The peer table had its time to learn (XNIC_PEER_LEARN_MS). */
	xt_sleep_ms(3500);
	req = reqs_sent(d0);
	t0 = xt_now_ms();
	err = xnic_cm_connect(d0->ctx, c.qp, 77, SID, NULL, 0, 5000, NULL);
	dt = xt_now_ms() - t0;
	EXPECT_EQ(-EHOSTUNREACH, err) TH_LOG("%s", xnic_strerror(err));
	EXPECT_GT(500, dt);
	TH_LOG("connect to an unknown node failed in %lld ms", dt);
	EXPECT_EQ(req, reqs_sent(d0));
	qp_free(&c);
}

TEST(reject_str)
{
	EXPECT_NE(NULL, strstr(xnic_cm_reject_str(XNIC_CM_REJ_NO_LISTENER),
			       "nobody listens"));
	EXPECT_NE(NULL, strstr(xnic_cm_reject_str(XNIC_CM_REJ_TIMEOUT),
			       "gave up"));
	EXPECT_STREQ("unknown reason", xnic_cm_reject_str(0));
	EXPECT_STREQ("unknown reason", xnic_cm_reject_str(99));
}

/* ------------------------- hostile netlink ------------------------- */

struct raw_nl {
	struct nl_sock *sk;
	int family;
};

static int raw_open(struct raw_nl *r)
{
	r->sk = nl_socket_alloc();
	if (!r->sk || genl_connect(r->sk))
		return -1;
	nl_socket_disable_seq_check(r->sk);
	r->family = genl_ctrl_resolve(r->sk, XNIC_GENL_NAME);
	return r->family < 0 ? -1 : 0;
}

static int raw_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	(void)nla;
	*(int *)arg = e->error;
	return NL_STOP;
}

static int raw_ack_cb(struct nl_msg *msg, void *arg)
{
	(void)msg;
	*(int *)arg = 0;
	return NL_STOP;
}

/* Send @msg (freed); return the kernel's errno (0: ACK). */
static int raw_run(struct raw_nl *r, struct nl_msg *msg)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int res = 1;

	nl_cb_err(cb, NL_CB_CUSTOM, raw_err_cb, &res);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, raw_ack_cb, &res);
	if (nl_send_auto(r->sk, msg) < 0)
		res = -EIO;
	while (res == 1)
		if (nl_recvmsgs(r->sk, cb) < 0 && res == 1)
			res = -EIO;
	nlmsg_free(msg);
	nl_cb_put(cb);
	return res;
}

static struct nl_msg *raw_msg(struct raw_nl *r, uint8_t cmd, const char *dev)
{
	struct nl_msg *msg = nlmsg_alloc();

	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, r->family, 0, 0, cmd,
		    XNIC_GENL_VERSION);
	if (dev)
		nla_put_string(msg, XNIC_A_DEV_NAME, dev);
	return msg;
}

/*
 * CM requests need no privilege, so a QP is named only by a requester of
 * the uid that created it: a CONNECT naming it from a process of another
 * uid is refused with -EPERM (else that process's DREQ could move the QP
 * to the error state).
 */
TEST_F_TIMEOUT(cm, other_uid_qp_refused, 60)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	struct qp_pair c = { 0 };
	int status = -1;
	pid_t pid;

	ASSERT_EQ(0, qp_new(d0, &c));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct raw_nl r = { 0 };
		struct nl_msg *msg;
		struct nlattr *nest;
		int err;

		/* All uids non-zero: the capabilities go too. */
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534) || raw_open(&r))
			_exit(2);
		msg = raw_msg(&r, XNIC_CMD_CM_CONNECT, d0->name);
		nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
		nla_put_u32(msg, XNIC_CM_A_NODE, d1->node_id);
		nla_put_u64(msg, XNIC_CM_A_SERVICE_ID, SID);
		nla_put_u32(msg, XNIC_CM_A_QPN, c.qp->qpn);
		nla_put_u32(msg, XNIC_CM_A_PSN, 5);
		nla_nest_end(msg, nest);
		err = raw_run(&r, msg);
		_exit(err == -EPERM ? 0 : err == 0 ? 3 : 4);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x (2: set-up, 3: connect accepted, "
		       "4: another error than -EPERM)", status);
	qp_free(&c);
}

TEST_F_TIMEOUT(cm, hostile_netlink, 120)
{
	struct xt_dev *d0 = &self->env.dev[0], *d1 = &self->env.dev[1];
	uint8_t big[XNIC_CM_PRIVATE_MAX + 1] = { 0 };
	struct xnic_cm_listener *l, *l2;
	struct raw_nl r = { 0 };
	struct nl_msg *msg;
	struct nlattr *nest;
	struct xnic_cm_req req;
	int status;
	pid_t pid;

	ASSERT_EQ(0, raw_open(&r));

	/* No CM nest; a nest without NLA_F_NESTED; no device. */
	msg = raw_msg(&r, XNIC_CMD_CM_LISTEN, d0->name);
	EXPECT_EQ(-EINVAL, raw_run(&r, msg));
	msg = raw_msg(&r, XNIC_CMD_CM_LISTEN, d0->name);
	{
		/* Built by hand: libnl adds NLA_F_NESTED itself. */
		struct { struct nlattr a; uint64_t v; } in = {
			{ sizeof(in), XNIC_CM_A_SERVICE_ID }, SID
		};

		nla_put(msg, XNIC_A_CM, sizeof(in), &in);
	}
	EXPECT_EQ(-EINVAL, raw_run(&r, msg));
	msg = raw_msg(&r, XNIC_CMD_CM_LISTEN, NULL);
	nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
	nla_put_u64(msg, XNIC_CM_A_SERVICE_ID, SID);
	nla_nest_end(msg, nest);
	EXPECT_EQ(-EINVAL, raw_run(&r, msg));
	/* Unknown device. */
	msg = raw_msg(&r, XNIC_CMD_CM_LISTEN, "nosuchdev");
	nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
	nla_put_u64(msg, XNIC_CM_A_SERVICE_ID, SID);
	nla_nest_end(msg, nest);
	EXPECT_EQ(-ENODEV, raw_run(&r, msg));
	/* A service id of the wrong size. */
	msg = raw_msg(&r, XNIC_CMD_CM_LISTEN, d0->name);
	nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
	nla_put_u32(msg, XNIC_CM_A_SERVICE_ID, 1);
	nla_nest_end(msg, nest);
	EXPECT_EQ(-EINVAL, raw_run(&r, msg));

	/* CONNECT: private data too long, QPN over 24 bits, own node. */
	msg = raw_msg(&r, XNIC_CMD_CM_CONNECT, d0->name);
	nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
	nla_put_u32(msg, XNIC_CM_A_NODE, d1->node_id);
	nla_put_u64(msg, XNIC_CM_A_SERVICE_ID, SID);
	nla_put_u32(msg, XNIC_CM_A_QPN, 5);
	nla_put_u32(msg, XNIC_CM_A_PSN, 5);
	nla_put(msg, XNIC_CM_A_PRIVATE, sizeof(big), big);
	nla_nest_end(msg, nest);
	EXPECT_NE(0, raw_run(&r, msg));
	msg = raw_msg(&r, XNIC_CMD_CM_CONNECT, d0->name);
	nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
	nla_put_u32(msg, XNIC_CM_A_NODE, d1->node_id);
	nla_put_u64(msg, XNIC_CM_A_SERVICE_ID, SID);
	nla_put_u32(msg, XNIC_CM_A_QPN, 0x1000000);
	nla_put_u32(msg, XNIC_CM_A_PSN, 5);
	nla_nest_end(msg, nest);
	EXPECT_EQ(-ERANGE, raw_run(&r, msg));
	msg = raw_msg(&r, XNIC_CMD_CM_CONNECT, d0->name);
	nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
	nla_put_u32(msg, XNIC_CM_A_NODE, d0->node_id);
	nla_put_u64(msg, XNIC_CM_A_SERVICE_ID, SID);
	nla_put_u32(msg, XNIC_CM_A_QPN, 5);
	nla_put_u32(msg, XNIC_CM_A_PSN, 5);
	nla_nest_end(msg, nest);
	EXPECT_EQ(-EINVAL, raw_run(&r, msg));
	/* Missing QPN. */
	msg = raw_msg(&r, XNIC_CMD_CM_CONNECT, d0->name);
	nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
	nla_put_u32(msg, XNIC_CM_A_NODE, d1->node_id);
	nla_put_u64(msg, XNIC_CM_A_SERVICE_ID, SID);
	nla_nest_end(msg, nest);
	EXPECT_EQ(-EINVAL, raw_run(&r, msg));

	/* ACCEPT, REJECT and RTU of ids this socket does not own. */
	msg = raw_msg(&r, XNIC_CMD_CM_ACCEPT, d0->name);
	nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
	nla_put_u32(msg, XNIC_CM_A_ID, 12345);
	nla_put_u32(msg, XNIC_CM_A_QPN, 5);
	nla_put_u32(msg, XNIC_CM_A_PSN, 5);
	nla_nest_end(msg, nest);
	EXPECT_EQ(-ENOENT, raw_run(&r, msg));
	msg = raw_msg(&r, XNIC_CMD_CM_RTU, d0->name);
	nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
	nla_put_u32(msg, XNIC_CM_A_ID, 12345);
	nla_nest_end(msg, nest);
	EXPECT_EQ(-ENOENT, raw_run(&r, msg));

	/* EADDRINUSE; another socket cannot unlisten or answer. */
	ASSERT_EQ(0, xnic_cm_listen(d1->ctx, SID, &l));
	EXPECT_EQ(-EADDRINUSE, xnic_cm_listen(d1->ctx, SID, &l2));
	msg = raw_msg(&r, XNIC_CMD_CM_UNLISTEN, d1->name);
	nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
	nla_put_u64(msg, XNIC_CM_A_SERVICE_ID, SID);
	nla_nest_end(msg, nest);
	EXPECT_EQ(-ENOENT, raw_run(&r, msg));
	/* A request the listener got, answered by a stranger: ENOENT. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct xt_dev me = { 0 };
		struct qp_pair c = { 0 };

		/* A context of its own: the parent's is not shared. */
		snprintf(me.name, sizeof(me.name), "%s", d0->name);
		if (xnic_open(me.name, &me.ctx) ||
		    xnic_alloc_pd(me.ctx, &me.pd) || qp_new(&me, &c))
			_exit(1);
		_exit(xnic_cm_connect(me.ctx, c.qp, d1->node_id, SID, NULL,
				      0, 5000, NULL) == -ECONNREFUSED ? 0 : 2);
	}
	ASSERT_EQ(0, xnic_cm_get_request(l, &req, CM_WAIT_MS));
	msg = raw_msg(&r, XNIC_CMD_CM_REJECT, d1->name);
	nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
	nla_put_u32(msg, XNIC_CM_A_ID, req.id);
	nla_nest_end(msg, nest);
	EXPECT_EQ(-ENOENT, raw_run(&r, msg));
	EXPECT_EQ(0, xnic_cm_reject(&req, NULL, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	xnic_cm_unlisten(l);

	/* Unprivileged processes may listen (and own what they create). */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgid(65534) || setuid(65534))
			_exit(1);
		if (xnic_cm_listen(d1->ctx, SID + 7, &l))
			_exit(2);
		xnic_cm_unlisten(l);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	nl_socket_free(r.sk);
}

TEST_HARNESS_MAIN
