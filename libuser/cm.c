// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxnic - connection manager client: listen, get requests, accept,
 * reject and connect through the generic netlink family "xnic"
 * (uapi/xnic-netlink.h, Documentation/cm.rst), with libnl-3.
 *
 * Each listener and each xnic_cm_connect() call has a netlink socket of
 * its own: the kernel reports a listener's requests and a connection's
 * outcome to the socket that created it, and drops both when the socket
 * closes. Events that arrive while the library waits for something else
 * (a request while xnic_cm_accept() waits for the RTU, a REP before the
 * CONNECT reply) are queued on the socket and handed out in order.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "cm_msg.h"
#include "priv.h"
#include "../uapi/xnic-netlink.h"

_Static_assert(XNIC_CM_PRIVATE_MAX == XNIC_CM_PRIVATE_LEN,
	       "private data sizes of the library and the kernel differ");

/* The kernel's REQ resend bounds (kmod/cm_wire.h). */
#define XNIC_CM_TRY_MAX_MS	10000
#define XNIC_CM_RETRIES		3
#define XNIC_CM_RETRIES_MAX	10
/* Slack over the kernel's own timeout before the library gives up, ms. */
#define XNIC_CM_SLACK_MS	2000
/* Receive buffer of a CM socket: room for many queued requests. */
#define XNIC_CM_RCVBUF		(1 << 20)

/* A netlink socket to the CM of one device, and its queued events. */
struct xnic_cm_sock {
	struct nl_sock *sk;
	int family;
	char dev[XNIC_NAME_MAX];
	struct xnic_cm_ev *head, *tail;
	int evfd;	/* a listener's: readable while @head is not empty */
	int epfd;	/* a listener's: the socket and @evfd */
};

struct xnic_cm_listener {
	struct xnic_cm_sock s;
	uint64_t service_id;
};

/* State of one request/reply exchange (xnic_cm_run()). */
struct xnic_cm_call {
	struct xnic_cm_sock *s;
	bool done;
	int error;
	uint32_t id;	/* CONNECT reply */
};

static int xnic_cm_nlerr(int nlerr)
{
	switch (-nlerr) {
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	case NLE_AGAIN:
		return -EAGAIN;
	case NLE_INTR:
		return -EINTR;
	case NLE_PERM:
		return -EPERM;
	default:
		return -EIO;
	}
}

static void xnic_cm_sock_close(struct xnic_cm_sock *s)
{
	struct xnic_cm_ev *ev;

	while ((ev = s->head)) {
		s->head = ev->next;
		free(ev);
	}
	s->tail = NULL;
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->evfd >= 0)
		close(s->evfd);
	s->epfd = -1;
	s->evfd = -1;
	if (s->sk)
		nl_socket_free(s->sk);	/* closes: the kernel drops our records */
	s->sk = NULL;
}

/*
 * A listener's descriptor to poll: an epoll set of its netlink socket and
 * an eventfd readable while events wait on its queue (taken off the
 * socket by a wait for another kind, they are pending all the same).
 */
static int xnic_cm_sock_pollable(struct xnic_cm_sock *s)
{
	struct epoll_event ev = { .events = EPOLLIN };

	s->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->evfd < 0 || s->epfd < 0 ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->evfd, &ev) ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, nl_socket_get_fd(s->sk), &ev))
		return -errno;
	return 0;
}

static int xnic_cm_sock_open(struct xnic_cm_sock *s, struct xnic_ctx *ctx)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->evfd = -1;
	s->epfd = -1;
	snprintf(s->dev, sizeof(s->dev), "%s", ctx->dev.name);
	s->sk = nl_socket_alloc();
	if (!s->sk)
		return -ENOMEM;
	err = genl_connect(s->sk);
	if (err < 0)
		goto err;
	/* Events carry sequence number 0: check replies ourselves. */
	nl_socket_disable_seq_check(s->sk);
	err = nl_socket_set_buffer_size(s->sk, XNIC_CM_RCVBUF, 0);
	if (err < 0)
		goto err;
	s->family = genl_ctrl_resolve(s->sk, XNIC_GENL_NAME);
	if (s->family < 0) {
		err = s->family;
		goto err;
	}
	return 0;
err:
	xnic_cm_sock_close(s);
	return xnic_cm_nlerr(err);
}

/* Queue a copy of @dec on @s. */
static int xnic_cm_queue(struct xnic_cm_sock *s, const struct xnic_cm_ev *dec)
{
	struct xnic_cm_ev *ev = malloc(sizeof(*ev));

	if (!ev)
		return NL_SKIP;	/* the peer resends, or we time out */
	*ev = *dec;
	if (s->tail) {
		s->tail->next = ev;
	} else {
		s->head = ev;
		if (s->evfd >= 0)
			eventfd_write(s->evfd, 1);
	}
	s->tail = ev;
	return NL_OK;
}

static int xnic_cm_valid_cb(struct nl_msg *msg, void *arg)
{
	struct xnic_cm_call *c = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct xnic_cm_ev ev;

	switch (xnic_cm_msg_parse(nlh, nlh->nlmsg_len, c->s->family, &ev)) {
	case XNIC_CM_MSG_EVENT:
		return xnic_cm_queue(c->s, &ev);
	case XNIC_CM_MSG_CONNECT:
		c->id = ev.id;
		return NL_OK;
	case XNIC_CM_MSG_OTHER:
		return NL_OK;
	default:
		return NL_SKIP;
	}
}

/* Events carry sequence number 0: every message is looked at. */
static int xnic_cm_seq_cb(struct nl_msg *msg, void *arg)
{
	(void)msg;
	(void)arg;
	return NL_OK;
}

static int xnic_cm_ack_cb(struct nl_msg *msg, void *arg)
{
	struct xnic_cm_call *c = arg;

	(void)msg;
	c->done = true;
	return NL_STOP;
}

static int xnic_cm_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e,
			  void *arg)
{
	struct xnic_cm_call *c = arg;

	(void)nla;
	c->error = e->error;
	c->done = true;
	return NL_STOP;
}

/*
 * Read what the socket has; with @c->done false after a request, until
 * its ACK. Return: 0 or -errno of the socket.
 */
static int xnic_cm_recv(struct xnic_cm_call *c)
{
	struct nl_cb *cb;
	int err;

	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, xnic_cm_seq_cb, NULL);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, xnic_cm_valid_cb, c);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, xnic_cm_ack_cb, c);
	nl_cb_err(cb, NL_CB_CUSTOM, xnic_cm_err_cb, c);
	err = nl_recvmsgs(c->s->sk, cb);
	nl_cb_put(cb);
	/* Errors the kernel reported are in c->error. */
	return err < 0 && !c->done ? xnic_cm_nlerr(err) : 0;
}

/* A request for @cmd naming the device, with the CM nest open in @nest. */
static struct nl_msg *xnic_cm_msg(struct xnic_cm_sock *s, uint8_t cmd,
				  struct nlattr **nest)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, s->family, 0, 0, cmd,
			 XNIC_GENL_VERSION) ||
	    nla_put_string(msg, XNIC_A_DEV_NAME, s->dev)) {
		nlmsg_free(msg);
		return NULL;
	}
	*nest = nla_nest_start(msg, XNIC_A_CM | NLA_F_NESTED);
	if (!*nest) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* Send @msg (freed) and wait for its ACK. Return: 0 or -errno. */
static int xnic_cm_run(struct xnic_cm_sock *s, struct nl_msg *msg,
		       struct nlattr *nest, uint32_t *id)
{
	struct xnic_cm_call c = { .s = s };
	int err;

	nla_nest_end(msg, nest);
	err = nl_send_auto(s->sk, msg);
	nlmsg_free(msg);
	if (err < 0)
		return xnic_cm_nlerr(err);
	while (!c.done) {
		err = xnic_cm_recv(&c);
		if (err)
			return err;
	}
	if (id)
		*id = c.id;
	return c.error;
}

static int64_t xnic_cm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * On a listener (one thread at a time), an answer to an accept that its
 * waiter does not take: that accept returned already (timed out), and no
 * call would ever take it.
 */
static bool xnic_cm_orphan(const struct xnic_cm_sock *s,
			   const struct xnic_cm_ev *ev)
{
	return s->evfd >= 0 && ev->event != XNIC_CM_EVENT_REQ &&
	       ev->event != XNIC_CM_EVENT_DISCONNECTED;
}

/*
 * Take the first queued event that @match accepts (all when NULL),
 * waiting up to @timeout_ms (negative: for ever). The caller frees it.
 */
static int xnic_cm_wait(struct xnic_cm_sock *s,
			bool (*match)(const struct xnic_cm_ev *, uint32_t),
			uint32_t arg, int timeout_ms, struct xnic_cm_ev **evp)
{
	int64_t end = xnic_cm_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);

	for (;;) {
		/* No request outstanding: a stray ACK or error is ignored. */
		struct xnic_cm_call c = { .s = s, .done = true };
		struct xnic_cm_ev **pp, *ev, *prev = NULL;
		struct pollfd pfd;
		int left, n, err;

		for (pp = &s->head; (ev = *pp);) {
			bool take = !match || match(ev, arg);

			if (!take && !xnic_cm_orphan(s, ev)) {
				prev = ev;
				pp = &ev->next;
				continue;
			}
			*pp = ev->next;
			if (s->tail == ev)
				s->tail = prev;
			if (!s->head && s->evfd >= 0) {
				eventfd_t v;

				eventfd_read(s->evfd, &v);
			}
			if (take) {
				*evp = ev;
				return 0;
			}
			free(ev);
		}
		left = timeout_ms < 0 ? -1 :
		       (int)(end - xnic_cm_now_ms() > 0 ?
			     end - xnic_cm_now_ms() : 0);
		pfd.fd = nl_socket_get_fd(s->sk);
		pfd.events = POLLIN;
		n = poll(&pfd, 1, left);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
		if (n > 0) {
			err = xnic_cm_recv(&c);
			if (err)
				return err;
		}
	}
}

static bool xnic_cm_match_req(const struct xnic_cm_ev *ev, uint32_t arg)
{
	(void)arg;
	return ev->event == XNIC_CM_EVENT_REQ;
}

static bool xnic_cm_match_id(const struct xnic_cm_ev *ev, uint32_t id)
{
	return ev->event != XNIC_CM_EVENT_REQ && ev->id == id;
}

static bool xnic_cm_match_disc(const struct xnic_cm_ev *ev, uint32_t arg)
{
	(void)arg;
	return ev->event == XNIC_CM_EVENT_DISCONNECTED;
}

/*
 * May @qp be connected? The kernel's state, not the library's (a peer's
 * DREQ moves the QP to error behind the library's back). Return: 0 in
 * RESET; -EISCONN when connected (RTR, RTS): disconnect and reset it
 * first; -EINVAL in any other state (INIT, ERR): reset it first.
 */
static int xnic_cm_qp_unused(struct xnic_qp *qp)
{
	struct xnic_qp_info info;
	int err;

	err = xnic_query_qp(qp, &info);
	if (err)
		return err;
	if (info.state == XNIC_QPS_RTR || info.state == XNIC_QPS_RTS)
		return -EISCONN;
	return info.state == XNIC_QPS_RESET ? 0 : -EINVAL;
}

const char *xnic_cm_reject_str(unsigned int reason)
{
	static const char *const names[] = {
		[XNIC_CM_REJ_NO_LISTENER] =
			"nobody listens on the service id (start the server first)",
		[XNIC_CM_REJ_USER] = "the listening application refused",
		[XNIC_CM_REJ_LISTENER_GONE] =
			"the listener went away before answering",
		[XNIC_CM_REJ_NO_RESOURCES] =
			"the peer has too many connections in progress (retry later)",
		[XNIC_CM_REJ_TIMEOUT] =
			"the peer gave up waiting (no answer in time)",
	};

	if (reason < sizeof(names) / sizeof(names[0]) && names[reason])
		return names[reason];
	return "unknown reason";
}

static uint32_t xnic_cm_psn(void)
{
	uint32_t psn;

	if (getrandom(&psn, sizeof(psn), 0) != sizeof(psn))
		psn = (uint32_t)rand();
	return psn & XNIC_PSN_MASK;
}

int xnic_cm_listen(struct xnic_ctx *ctx, uint64_t service_id,
		   struct xnic_cm_listener **lp)
{
	struct xnic_cm_listener *l;
	struct nlattr *nest;
	struct nl_msg *msg;
	int err;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	err = xnic_cm_sock_open(&l->s, ctx);
	if (!err)
		err = xnic_cm_sock_pollable(&l->s);
	if (err)
		goto err;
	l->service_id = service_id;
	err = -ENOMEM;
	msg = xnic_cm_msg(&l->s, XNIC_CMD_CM_LISTEN, &nest);
	if (!msg)
		goto err;
	if (nla_put_u64(msg, XNIC_CM_A_SERVICE_ID, service_id)) {
		nlmsg_free(msg);
		goto err;
	}
	err = xnic_cm_run(&l->s, msg, nest, NULL);
	if (err)
		goto err;
	*lp = l;
	return 0;
err:
	xnic_cm_sock_close(&l->s);
	free(l);
	return err;
}

int xnic_cm_listener_fd(const struct xnic_cm_listener *l)
{
	return l->s.epfd;
}

void xnic_cm_unlisten(struct xnic_cm_listener *l)
{
	if (!l)
		return;
	/* Closing the socket drops the listener and refuses what is left. */
	xnic_cm_sock_close(&l->s);
	free(l);
}

int xnic_cm_get_request(struct xnic_cm_listener *l, struct xnic_cm_req *req,
			int timeout_ms)
{
	struct xnic_cm_ev *ev;
	int err;

	err = xnic_cm_wait(&l->s, xnic_cm_match_req, 0, timeout_ms, &ev);
	if (err)
		return err;
	memset(req, 0, sizeof(*req));
	req->listener = l;
	req->id = ev->id;
	req->remote_node = ev->node;
	req->service_id = ev->service_id;
	req->remote_qpn = ev->qpn;
	req->remote_psn = ev->psn;
	req->private_len = ev->private_len;
	memcpy(req->private_data, ev->private_data, ev->private_len);
	free(ev);
	return 0;
}

/* ACCEPT or REJECT @req; @qpn/@psn only for ACCEPT. */
static int xnic_cm_answer(struct xnic_cm_req *req, uint8_t cmd, uint32_t qpn,
			  uint32_t psn, const void *priv, size_t len)
{
	struct xnic_cm_sock *s = &req->listener->s;
	struct nlattr *nest;
	struct nl_msg *msg;

	msg = xnic_cm_msg(s, cmd, &nest);
	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, XNIC_CM_A_ID, req->id) ||
	    (cmd == XNIC_CMD_CM_ACCEPT &&
	     (nla_put_u32(msg, XNIC_CM_A_QPN, qpn) ||
	      nla_put_u32(msg, XNIC_CM_A_PSN, psn))) ||
	    (len && nla_put(msg, XNIC_CM_A_PRIVATE, (int)len, priv))) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return xnic_cm_run(s, msg, nest, NULL);
}

int xnic_cm_accept(struct xnic_cm_req *req, struct xnic_qp *qp,
		   const void *priv, size_t len, int timeout_ms)
{
	uint32_t psn = xnic_cm_psn();
	struct xnic_cm_ev *ev;
	int err;

	if (len > XNIC_CM_PRIVATE_MAX)
		return -EMSGSIZE;
	if ((len && !priv) || !req->listener)
		return -EINVAL;
	err = xnic_cm_qp_unused(qp);
	if (err)
		return err;
	/* Ready to receive before the peer can send: RTR/RTS first. */
	err = xnic_connect_qp(qp, req->remote_node, req->remote_qpn, psn,
			      req->remote_psn);
	if (err) {
		xnic_cm_reject(req, NULL, 0);
		return err;
	}
	err = xnic_cm_answer(req, XNIC_CMD_CM_ACCEPT, qp->qpn, psn, priv, len);
	if (err)
		return err;
	err = xnic_cm_wait(&req->listener->s, xnic_cm_match_id, req->id,
			   timeout_ms, &ev);
	if (err)
		return err;
	switch (ev->event) {
	case XNIC_CM_EVENT_ESTABLISHED:
		err = 0;
		break;
	case XNIC_CM_EVENT_REJ:
		err = -ECONNREFUSED;
		break;
	case XNIC_CM_EVENT_DISCONNECTED:
		err = -ECONNRESET;
		break;
	default:
		err = -ETIMEDOUT;
		break;
	}
	free(ev);
	return err;
}

int xnic_cm_get_disconnect(struct xnic_cm_listener *l,
			   struct xnic_cm_disconnect *d, int timeout_ms)
{
	struct xnic_cm_ev *ev;
	int err;

	err = xnic_cm_wait(&l->s, xnic_cm_match_disc, 0, timeout_ms, &ev);
	if (err)
		return err;
	memset(d, 0, sizeof(*d));
	d->id = ev->id;
	d->remote_node = ev->node;
	d->service_id = ev->service_id;
	d->remote_qpn = ev->qpn;
	free(ev);
	return 0;
}

int xnic_cm_disconnect(struct xnic_qp *qp)
{
	if (qp->state == XNIC_QPS_RESET)
		return -EINVAL;
	/* The kernel sends the DREQ when a CM-connected QP goes to error. */
	return xnic_modify_qp_err(qp);
}

int xnic_cm_reject(struct xnic_cm_req *req, const void *priv, size_t len)
{
	if (len > XNIC_CM_PRIVATE_MAX)
		return -EMSGSIZE;
	if ((len && !priv) || !req->listener)
		return -EINVAL;
	return xnic_cm_answer(req, XNIC_CMD_CM_REJECT, 0, 0, priv, len);
}

/* CONNECT on @s; @id set to the connection's id. */
static int xnic_cm_send_req(struct xnic_cm_sock *s, struct xnic_qp *qp,
			    uint32_t node, uint64_t service_id, uint32_t psn,
			    const void *priv, size_t len, int timeout_ms,
			    uint32_t *id)
{
	uint32_t retries = XNIC_CM_RETRIES, try_ms;
	struct nlattr *nest;
	struct nl_msg *msg;

	/* timeout_ms over (retries + 1) tries of at most 10 s each. */
	while ((uint32_t)timeout_ms > (retries + 1) * XNIC_CM_TRY_MAX_MS &&
	       retries < XNIC_CM_RETRIES_MAX)
		retries++;
	try_ms = (uint32_t)timeout_ms / (retries + 1);
	if (!try_ms)
		try_ms = 1;
	if (try_ms > XNIC_CM_TRY_MAX_MS)
		try_ms = XNIC_CM_TRY_MAX_MS;

	msg = xnic_cm_msg(s, XNIC_CMD_CM_CONNECT, &nest);
	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, XNIC_CM_A_NODE, node) ||
	    nla_put_u64(msg, XNIC_CM_A_SERVICE_ID, service_id) ||
	    nla_put_u32(msg, XNIC_CM_A_QPN, qp->qpn) ||
	    nla_put_u32(msg, XNIC_CM_A_PSN, psn) ||
	    nla_put_u32(msg, XNIC_CM_A_TIMEOUT_MS, try_ms) ||
	    nla_put_u32(msg, XNIC_CM_A_RETRIES, retries) ||
	    (len && nla_put(msg, XNIC_CM_A_PRIVATE, (int)len, priv))) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return xnic_cm_run(s, msg, nest, id);
}

static int xnic_cm_send_rtu(struct xnic_cm_sock *s, uint32_t id)
{
	struct nlattr *nest;
	struct nl_msg *msg;

	msg = xnic_cm_msg(s, XNIC_CMD_CM_RTU, &nest);
	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, XNIC_CM_A_ID, id)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return xnic_cm_run(s, msg, nest, NULL);
}

int xnic_cm_connect(struct xnic_ctx *ctx, struct xnic_qp *qp, uint32_t node,
		    uint64_t service_id, const void *priv, size_t len,
		    int timeout_ms, struct xnic_cm_reply *reply)
{
	struct xnic_cm_reply r = { 0 };
	uint32_t psn = xnic_cm_psn(), id = 0;
	struct xnic_cm_ev *ev = NULL;
	struct xnic_cm_sock s;
	int err;

	/* Every misuse has its own errno; nothing is sent before. */
	if (len > XNIC_CM_PRIVATE_MAX)
		return -EMSGSIZE;
	if (timeout_ms < 1 ||
	    timeout_ms > (XNIC_CM_RETRIES_MAX + 1) * XNIC_CM_TRY_MAX_MS)
		return -ERANGE;
	if (node == ctx->attr.node_id)
		return -EADDRNOTAVAIL;
	if ((len && !priv) || node >= 0xffff)
		return -EINVAL;
	err = xnic_cm_qp_unused(qp);
	if (err)
		return err;
	err = xnic_cm_sock_open(&s, ctx);
	if (err)
		return err;
	err = xnic_cm_send_req(&s, qp, node, service_id, psn, priv, len,
			       timeout_ms, &id);
	if (err)
		goto out;
	err = xnic_cm_wait(&s, xnic_cm_match_id, id,
			   timeout_ms + XNIC_CM_SLACK_MS, &ev);
	if (err)
		goto out;
	r.private_len = ev->private_len;
	memcpy(r.private_data, ev->private_data, ev->private_len);
	switch (ev->event) {
	case XNIC_CM_EVENT_REP:
		r.remote_qpn = ev->qpn;
		r.remote_psn = ev->psn;
		err = xnic_connect_qp(qp, node, ev->qpn, psn, ev->psn);
		if (!err)
			err = xnic_cm_send_rtu(&s, id);
		/* Gone: the peer gave up (REJ) before our RTU. */
		if (err == -ENOENT)
			err = -ETIMEDOUT;
		break;
	case XNIC_CM_EVENT_REJ:
		r.reject_reason = ev->reason;
		err = ev->reason == XNIC_CM_REJ_TIMEOUT ? -ETIMEDOUT :
							 -ECONNREFUSED;
		break;
	default:
		err = -ETIMEDOUT;
		break;
	}
	free(ev);
out:
	/* Closing the socket abandons whatever is left of the attempt. */
	xnic_cm_sock_close(&s);
	if (reply)
		*reply = r;
	return err;
}
