/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The simulated fabric of the collective library's host tests
 * (coll_sim_test.c, coll_hier_test.c): libxnic's control path replaced by
 * fakes that build real rings in ordinary memory, a fake connection
 * manager, an "engine" thread that plays the kernel (it consumes SQ
 * entries, performs RDMA WRITE WITH IMM into the target rank's memory,
 * checking rkey and range, consumes the target's receive WQEs, retrying
 * like RNR while there is none, and writes CQEs, in a randomized order
 * across QPs), an in-memory bootstrap, and the mesh links the kernel
 * would report (sim_appl). The library's own datapath (the inline
 * functions of libuser/xnic.h) runs unchanged. Include it once, after
 * kselftest_harness.h.
 */
#ifndef COLL_SIM_H
#define COLL_SIM_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libuser/errors.c"
#include "coll/coll_logic.c"
#include "coll/error.c"
#include "coll/progress.c"
#include "coll/request.c"
#include "coll/ops.c"
#include "coll/connect.c"
#include "coll/comm.c"
#include "coll/hier.c"
#include "coll/bootstrap_tcp.c"

/* ========================= the fake libxnic ========================= */

#define SIM_MAX_QPS	512
#define SIM_MAX_MRS	16

struct xnic_pd {
	struct xnic_ctx *ctx;
};

struct xnic_ctx {
	struct xnic_ctx_attr attr;
	struct xnic_ctx_page page;
	struct xnic_pd pd;
	struct xnic_mr *mrs[SIM_MAX_MRS];
	int nmrs;
};

/* A QP with the engine's private state. */
struct sim_qp {
	struct xnic_qp qp;
	uint32_t sq_kidx;	/* the engine's SQ consumer */
	uint32_t rq_kidx;	/* the engine's RQ consumer */
	uint32_t rq_shown;	/* RQ consumer published (lags rq_kidx) */
	uint32_t remote_node;
	uint32_t remote_qpn;
	bool rts;
	bool error;
	bool cm_tied;		/* connected by the (fake) CM */
	bool disconnected;	/* the peer's DREQ came: flush everything */
};

static pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;
/* Connects refused -EHOSTUNREACH before any is let through (sim_lock). */
static int sim_unreachable;

/*
 * Injected connect outcomes (sim_lock): the first connect from node
 * @from to node @to waits @delay_ms, then fails with @err (0: goes on),
 * or, with @die, its node dies: its tied QPs disconnect (the peers get
 * the DREQ), its listeners refuse what is pending, and that connect and
 * every later one of the node fails -ENETDOWN. (Its thread goes on into
 * the bootstrap, as if the bootstrap had reported the death.)
 */
struct sim_cm_inject {
	uint32_t from;
	uint32_t to;
	int delay_ms;
	int err;
	bool die;
	bool fired;
};

#define SIM_INJECTS	4
static struct sim_cm_inject sim_inject[SIM_INJECTS];
static uint32_t sim_dead_node;	/* 0: none */
static struct sim_qp *sim_qps[SIM_MAX_QPS];
static uint32_t sim_next_qpn = 100;
static atomic_bool sim_stop;
static atomic_int sim_errors;
static uint64_t sim_seed = 1;

static void *ring_alloc(size_t elem, unsigned int n)
{
	void *p = aligned_alloc(64, XNIC_RING_HDR_SIZE + elem * n);

	if (p)
		memset(p, 0, XNIC_RING_HDR_SIZE + elem * n);
	return p;
}

int xnic_open(const char *name, struct xnic_ctx **ctxp)
{
	struct xnic_ctx *ctx;
	unsigned int k;

	if (strncmp(name, "sim", 3) || sscanf(name + 3, "%u", &k) != 1)
		return -ENODEV;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->attr = (struct xnic_ctx_attr) {
		.node_id = k + 1, .payload_mtu = 8000, .port_state = 4,
		.active_mtu = 4096, .max_msg_size = 1U << 31, .max_sge = 6,
		.max_recv_sge = 3, .max_inline = 96, .max_qp_wr = 4096,
		.max_cqe = 65536, .num_comp_vectors = 1,
	};
	ctx->pd.ctx = ctx;
	*ctxp = ctx;
	return 0;
}

const struct xnic_ctx_attr *xnic_ctx_info(const struct xnic_ctx *ctx)
{
	return &ctx->attr;
}

int xnic_alloc_pd(struct xnic_ctx *ctx, struct xnic_pd **pdp)
{
	*pdp = &ctx->pd;
	return 0;
}

int xnic_reg_mr(struct xnic_pd *pd, void *addr, size_t length,
		unsigned int access, struct xnic_mr **mrp)
{
	struct xnic_ctx *ctx = pd->ctx;
	struct xnic_mr *mr;

	if (ctx->nmrs == SIM_MAX_MRS)
		return -ENOMEM;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	mr->lkey = 0x1000 + (uint32_t)ctx->nmrs;
	mr->rkey = 0x2000 + (uint32_t)ctx->nmrs;
	ctx->mrs[ctx->nmrs++] = mr;
	*mrp = mr;
	return 0;
}

int xnic_create_cq(struct xnic_ctx *ctx, unsigned int entries,
		   struct xnic_cq **cqp)
{
	struct xnic_cq *cq = calloc(1, sizeof(*cq));
	unsigned int n = 1;

	while (n < entries)
		n <<= 1;
	if (!cq)
		return -ENOMEM;
	cq->map = ring_alloc(sizeof(struct xnic_cqe), n);
	if (!cq->map) {
		free(cq);
		return -ENOMEM;
	}
	cq->hdr = cq->map;
	cq->cqes = (struct xnic_cqe *)((char *)cq->map + XNIC_RING_HDR_SIZE);
	cq->mask = n - 1;
	cq->entries = n;
	cq->ctx = ctx;
	cq->channel_fd = -1;
	*cqp = cq;
	return 0;
}

static void wq_init(struct xnic_wq *wq, void *ring, unsigned int n,
		    uint32_t max_sge)
{
	wq->hdr = ring;
	wq->wqes = (char *)ring + XNIC_RING_HDR_SIZE;
	wq->entries = n;
	wq->mask = n - 1;
	wq->max_sge = max_sge;
}

int xnic_create_qp(struct xnic_pd *pd, struct xnic_cq *send_cq,
		   struct xnic_cq *recv_cq, struct xnic_qp_cap *cap,
		   struct xnic_qp **qpp)
{
	struct sim_qp *s = calloc(1, sizeof(*s));
	struct xnic_qp *qp;
	int k;

	if (!s)
		return -ENOMEM;
	qp = &s->qp;
	qp->sq_map = ring_alloc(sizeof(struct xnic_sq_wqe), cap->max_send_wr);
	qp->rq_map = ring_alloc(sizeof(struct xnic_rq_wqe), cap->max_recv_wr);
	if (!qp->sq_map || !qp->rq_map) {
		free(qp->sq_map);
		free(qp->rq_map);
		free(s);
		return -ENOMEM;
	}
	wq_init(&qp->sq, qp->sq_map, cap->max_send_wr, cap->max_send_sge);
	wq_init(&qp->rq, qp->rq_map, cap->max_recv_wr, cap->max_recv_sge);
	qp->max_inline = cap->max_inline_data;
	qp->state = XNIC_QPS_RTS;	/* the simulation is always connected */
	qp->ctx = pd->ctx;
	qp->pd = pd;
	qp->send_cq = send_cq;
	qp->recv_cq = recv_cq;
	qp->scq_flags = &send_cq->hdr->flags;
	qp->rcq_flags = &recv_cq->hdr->flags;
	qp->db_word = &pd->ctx->page.db_bits[0];
	qp->db_bit = 1;
	qp->db_summary = &pd->ctx->page.db_summary;
	qp->db_summary_bit = 1;
	qp->engine_flags = &pd->ctx->page.engine_flags;
	pthread_mutex_lock(&sim_lock);
	qp->qpn = sim_next_qpn++;
	for (k = 0; k < SIM_MAX_QPS && sim_qps[k]; k++)
		;
	if (k < SIM_MAX_QPS)
		sim_qps[k] = s;
	pthread_mutex_unlock(&sim_lock);
	if (k == SIM_MAX_QPS)
		return -ENOMEM;	/* leaks; the test fails anyway */
	*qpp = qp;
	return 0;
}

/* The simulated fabric has no RNR: the attributes change nothing. */
int xnic_create_qp_ex(struct xnic_pd *pd, struct xnic_cq *send_cq,
		      struct xnic_cq *recv_cq, struct xnic_qp_cap *cap,
		      const struct xnic_qp_attr *attr, struct xnic_qp **qpp)
{
	(void)attr;
	return xnic_create_qp(pd, send_cq, recv_cq, cap, qpp);
}

int xnic_connect_qp(struct xnic_qp *qp, uint32_t remote_node,
		    uint32_t remote_qpn, uint32_t local_psn,
		    uint32_t remote_psn)
{
	struct sim_qp *s = (struct sim_qp *)qp;

	(void)local_psn;
	(void)remote_psn;
	pthread_mutex_lock(&sim_lock);
	s->remote_node = remote_node;
	s->remote_qpn = remote_qpn;
	s->rts = true;
	pthread_mutex_unlock(&sim_lock);
	return 0;
}

static struct sim_qp *sim_find(uint32_t node, uint32_t qpn);

/*
 * A tied QP leaves (destroyed, or moved to error): its peer gets the
 * DREQ, goes to error with reason DISCONNECTED, and the engine flushes
 * its work requests. Called with sim_lock held.
 */
static void sim_disconnect(struct sim_qp *s)
{
	struct sim_qp *t;

	if (!s->cm_tied)
		return;
	s->cm_tied = false;
	t = sim_find(s->remote_node, s->remote_qpn);
	if (!t || !t->cm_tied)
		return;
	t->cm_tied = false;
	t->error = true;
	t->disconnected = true;
}

int xnic_modify_qp_err(struct xnic_qp *qp)
{
	pthread_mutex_lock(&sim_lock);
	((struct sim_qp *)qp)->error = true;
	sim_disconnect((struct sim_qp *)qp);
	pthread_mutex_unlock(&sim_lock);
	return 0;
}

uint32_t xnic_qp_err_reason(const struct xnic_qp *qp)
{
	const struct sim_qp *s = (const struct sim_qp *)qp;
	uint32_t r;

	pthread_mutex_lock(&sim_lock);
	r = s->disconnected ? XNIC_QP_ERR_DISCONNECTED :
	    s->error ? XNIC_QP_ERR_USER : XNIC_QP_ERR_NONE;
	pthread_mutex_unlock(&sim_lock);
	return r;
}

int xnic_qp_wakeup(struct xnic_qp *qp)
{
	(void)qp;
	return 0;
}

int xnic_cq_wait(struct xnic_cq *cq, int timeout_ms)
{
	uint64_t end = xnic_coll_now_ns() + (uint64_t)timeout_ms * 1000000;

	for (;;) {
		if (xnic__cq_ready(cq))
			return 0;
		if (xnic_coll_now_ns() >= end)
			return -ETIMEDOUT;
		usleep(20);
	}
}

/* No completion channel: xnic_coll_waitany() then sleeps 1 ms at most. */
int xnic_cq_fd(const struct xnic_cq *cq)
{
	(void)cq;
	return -1;
}

int xnic_cq_read_events(struct xnic_cq *cq)
{
	(void)cq;
	return 0;
}

void xnic_close(struct xnic_ctx *ctx)
{
	struct xnic_cq *cq = NULL;
	int k;

	pthread_mutex_lock(&sim_lock);
	for (k = 0; k < SIM_MAX_QPS; k++) {
		struct sim_qp *s = sim_qps[k];

		if (!s || s->qp.ctx != ctx)
			continue;
		sim_disconnect(s);
		cq = s->qp.send_cq;
		free(s->qp.sq_map);
		free(s->qp.rq_map);
		free(s);
		sim_qps[k] = NULL;
	}
	pthread_mutex_unlock(&sim_lock);
	if (cq) {
		free(cq->map);
		free(cq);
	}
	for (k = 0; k < ctx->nmrs; k++)
		free(ctx->mrs[k]);
	free(ctx);
}

/* ========================== the fake CM ============================ */

#define SIM_CM_REQS	64

struct xnic_cm_listener {
	uint32_t node;
	uint64_t sid;
};

/* A connection in progress: pending, seen, accepted, refused. */
enum { CMR_FREE, CMR_PENDING, CMR_SEEN, CMR_ACCEPTED, CMR_REFUSED };

struct sim_cm_conn {
	int state;
	struct xnic_cm_listener *l;
	struct xnic_cm_req req;
	uint32_t acc_qpn;
	uint32_t priv_len;
	uint8_t priv[XNIC_CM_PRIVATE_MAX];
};

static struct xnic_cm_listener *sim_listeners[SIM_MAX_QPS];
static struct sim_cm_conn sim_conns[SIM_CM_REQS];
static pthread_cond_t sim_cm_cond = PTHREAD_COND_INITIALIZER;

static void sim_deadline(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

int xnic_cm_listen(struct xnic_ctx *ctx, uint64_t service_id,
		   struct xnic_cm_listener **lp)
{
	struct xnic_cm_listener *l = calloc(1, sizeof(*l));
	int k, free_k = -1;

	if (!l)
		return -ENOMEM;
	l->node = ctx->attr.node_id;
	l->sid = service_id;
	pthread_mutex_lock(&sim_lock);
	for (k = 0; k < SIM_MAX_QPS; k++) {
		if (sim_listeners[k] && sim_listeners[k]->node == l->node &&
		    sim_listeners[k]->sid == l->sid) {
			pthread_mutex_unlock(&sim_lock);
			free(l);
			return -EADDRINUSE;
		}
		if (!sim_listeners[k] && free_k < 0)
			free_k = k;
	}
	sim_listeners[free_k] = l;
	pthread_mutex_unlock(&sim_lock);
	*lp = l;
	return 0;
}

void xnic_cm_unlisten(struct xnic_cm_listener *l)
{
	int k;

	if (!l)
		return;
	pthread_mutex_lock(&sim_lock);
	for (k = 0; k < SIM_MAX_QPS; k++)
		if (sim_listeners[k] == l)
			sim_listeners[k] = NULL;
	for (k = 0; k < SIM_CM_REQS; k++)
		if (sim_conns[k].l == l && (sim_conns[k].state == CMR_PENDING ||
					    sim_conns[k].state == CMR_SEEN))
			sim_conns[k].state = CMR_REFUSED;
	pthread_cond_broadcast(&sim_cm_cond);
	pthread_mutex_unlock(&sim_lock);
	free(l);
}

/* Node @node dies (see struct sim_cm_inject). Called with sim_lock held. */
static void sim_die(uint32_t node)
{
	int k;

	sim_dead_node = node;
	for (k = 0; k < SIM_MAX_QPS; k++) {
		if (!sim_qps[k] || sim_qps[k]->qp.ctx->attr.node_id != node)
			continue;
		sim_disconnect(sim_qps[k]);
		sim_qps[k]->error = true;
	}
	for (k = 0; k < SIM_CM_REQS; k++)
		if ((sim_conns[k].state == CMR_PENDING ||
		     sim_conns[k].state == CMR_SEEN) &&
		    sim_conns[k].l->node == node)
			sim_conns[k].state = CMR_REFUSED;
	for (k = 0; k < SIM_MAX_QPS; k++)
		if (sim_listeners[k] && sim_listeners[k]->node == node)
			sim_listeners[k] = NULL;
	pthread_cond_broadcast(&sim_cm_cond);
}

/* The injection for a connect from @from to @to, fired; or NULL. */
static struct sim_cm_inject *sim_injected(uint32_t from, uint32_t to)
{
	struct sim_cm_inject *i = NULL;
	int k;

	pthread_mutex_lock(&sim_lock);
	for (k = 0; k < SIM_INJECTS && !i; k++)
		if (!sim_inject[k].fired && sim_inject[k].from == from &&
		    sim_inject[k].to == to)
			i = &sim_inject[k];
	if (i)
		i->fired = true;
	pthread_mutex_unlock(&sim_lock);
	return i;
}

int xnic_cm_connect(struct xnic_ctx *ctx, struct xnic_qp *qp, uint32_t node,
		    uint64_t service_id, const void *priv, size_t len,
		    int timeout_ms, struct xnic_cm_reply *reply)
{
	struct sim_cm_inject *i = sim_injected(ctx->attr.node_id, node);
	struct sim_qp *s = (struct sim_qp *)qp;
	struct xnic_cm_listener *l = NULL;
	struct sim_cm_conn *c = NULL;
	struct timespec ts;
	int k, err = 0;

	memset(reply, 0, sizeof(*reply));
	if (i && i->delay_ms)
		usleep((useconds_t)i->delay_ms * 1000);
	if (i && i->die) {
		pthread_mutex_lock(&sim_lock);
		sim_die(ctx->attr.node_id);
		pthread_mutex_unlock(&sim_lock);
	}
	if (i && i->err) {
		if (i->err == -ECONNREFUSED)
			reply->reject_reason = XNIC_CM_REJ_USER;
		return i->err;
	}
	sim_deadline(&ts, timeout_ms);
	pthread_mutex_lock(&sim_lock);
	if (sim_dead_node == ctx->attr.node_id) {
		pthread_mutex_unlock(&sim_lock);
		return -ENETDOWN;
	}
	if (sim_unreachable > 0) {	/* a node the peer table lacks (yet) */
		sim_unreachable--;
		pthread_mutex_unlock(&sim_lock);
		return -EHOSTUNREACH;
	}
	for (k = 0; k < SIM_MAX_QPS && !l; k++)
		if (sim_listeners[k] && sim_listeners[k]->node == node &&
		    sim_listeners[k]->sid == service_id)
			l = sim_listeners[k];
	for (k = 0; k < SIM_CM_REQS && l && !c; k++)
		if (sim_conns[k].state == CMR_FREE)
			c = &sim_conns[k];
	if (!l || !c) {
		pthread_mutex_unlock(&sim_lock);
		reply->reject_reason = l ? XNIC_CM_REJ_NO_RESOURCES :
					   XNIC_CM_REJ_NO_LISTENER;
		return -ECONNREFUSED;
	}
	memset(c, 0, sizeof(*c));
	c->state = CMR_PENDING;
	c->l = l;
	c->req.listener = l;
	c->req.id = (uint32_t)(c - sim_conns);
	c->req.remote_node = ctx->attr.node_id;
	c->req.service_id = service_id;
	c->req.remote_qpn = qp->qpn;
	c->req.private_len = (uint32_t)len;
	memcpy(c->req.private_data, priv, len);
	pthread_cond_broadcast(&sim_cm_cond);
	while (c->state == CMR_PENDING || c->state == CMR_SEEN)
		if (pthread_cond_timedwait(&sim_cm_cond, &sim_lock, &ts))
			break;
	if (c->state == CMR_ACCEPTED) {
		s->remote_node = node;
		s->remote_qpn = c->acc_qpn;
		s->rts = true;
		s->cm_tied = true;
		reply->remote_qpn = c->acc_qpn;
		reply->private_len = c->priv_len;
		memcpy(reply->private_data, c->priv, c->priv_len);
	} else if (c->state == CMR_REFUSED) {
		reply->reject_reason = XNIC_CM_REJ_USER;
		err = -ECONNREFUSED;
	} else {
		err = -ETIMEDOUT;
	}
	c->state = CMR_FREE;
	pthread_mutex_unlock(&sim_lock);
	return err;
}

int xnic_cm_get_request(struct xnic_cm_listener *l, struct xnic_cm_req *req,
			int timeout_ms)
{
	struct timespec ts;
	int k;

	sim_deadline(&ts, timeout_ms);
	pthread_mutex_lock(&sim_lock);
	for (;;) {
		for (k = 0; k < SIM_CM_REQS; k++) {
			if (sim_conns[k].l == l &&
			    sim_conns[k].state == CMR_PENDING) {
				sim_conns[k].state = CMR_SEEN;
				*req = sim_conns[k].req;
				pthread_mutex_unlock(&sim_lock);
				return 0;
			}
		}
		if (pthread_cond_timedwait(&sim_cm_cond, &sim_lock, &ts))
			break;
	}
	pthread_mutex_unlock(&sim_lock);
	return -ETIMEDOUT;
}

static int sim_cm_answer(struct xnic_cm_req *req, struct xnic_qp *qp,
			 const void *priv, size_t len)
{
	struct sim_cm_conn *c = &sim_conns[req->id];
	struct sim_qp *s = (struct sim_qp *)qp;
	int err = 0;

	pthread_mutex_lock(&sim_lock);
	if (c->state != CMR_SEEN || c->l != req->listener) {
		err = -ENOENT;
	} else if (qp) {
		s->remote_node = req->remote_node;
		s->remote_qpn = req->remote_qpn;
		s->rts = true;
		s->cm_tied = true;
		c->acc_qpn = qp->qpn;
		c->priv_len = (uint32_t)len;
		memcpy(c->priv, priv, len);
		c->state = CMR_ACCEPTED;
	} else {
		c->state = CMR_REFUSED;
	}
	pthread_cond_broadcast(&sim_cm_cond);
	pthread_mutex_unlock(&sim_lock);
	return err;
}

int xnic_cm_accept(struct xnic_cm_req *req, struct xnic_qp *qp,
		   const void *priv, size_t len, int timeout_ms)
{
	(void)timeout_ms;
	return sim_cm_answer(req, qp, priv, len);
}

int xnic_cm_reject(struct xnic_cm_req *req, const void *priv, size_t len)
{
	(void)priv;
	(void)len;
	return sim_cm_answer(req, NULL, NULL, 0);
}

const char *xnic_cm_reject_str(unsigned int reason)
{
	return reason == XNIC_CM_REJ_NO_LISTENER ? "nobody listens" : "refused";
}

/* ============================ the engine ============================ */

static uint64_t sim_rand(void)
{
	uint64_t x = sim_seed;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	sim_seed = x;
	return x;
}

static void sim_cqe(struct xnic_cq *cq, const struct xnic_cqe *e)
{
	uint32_t prod = cq->hdr->producer;
	uint32_t cons = __atomic_load_n(&cq->hdr->consumer, __ATOMIC_ACQUIRE);

	if (prod - cons >= cq->entries) {
		atomic_fetch_add(&sim_errors, 1);	/* overflow */
		__atomic_store_n(&cq->hdr->flags, XNIC_RING_F_ERROR,
				 __ATOMIC_RELEASE);
		return;
	}
	cq->cqes[prod & cq->mask] = *e;
	__atomic_store_n(&cq->hdr->producer, prod + 1, __ATOMIC_RELEASE);
}

static struct sim_qp *sim_find(uint32_t node, uint32_t qpn)
{
	int k;

	for (k = 0; k < SIM_MAX_QPS; k++)
		if (sim_qps[k] && sim_qps[k]->qp.qpn == qpn &&
		    sim_qps[k]->qp.ctx->attr.node_id == node)
			return sim_qps[k];
	return NULL;
}

static bool sim_mr_ok(struct xnic_ctx *ctx, uint32_t rkey, uint64_t addr,
		      uint32_t len)
{
	int k;

	if (!len)
		return true;
	for (k = 0; k < ctx->nmrs; k++) {
		struct xnic_mr *mr = ctx->mrs[k];
		uint64_t a = (uintptr_t)mr->addr;

		if (mr->rkey == rkey && addr >= a &&
		    addr + len <= a + mr->length)
			return true;
	}
	return false;
}

/* Execute one SQ entry of @s; false when it must wait (RNR). */
static bool sim_exec(struct sim_qp *s, const struct xnic_sq_wqe *w)
{
	struct sim_qp *t = sim_find(s->remote_node, s->remote_qpn);
	struct xnic_cqe e = { .wr_id = w->wr_id, .qp_num = s->qp.qpn };
	struct xnic_rq_wqe rw;
	uint32_t prod, len = 0, k;
	char *dst;

	if (!t || t->error) {
		/* The target is gone: its frames are lost, ours stalls. */
		s->error = true;
		return true;
	}
	if (w->opcode != XNIC_WR_RDMA_WRITE_WITH_IMM || !t->rts) {
		e.status = XNIC_WC_REM_OP_ERR;
		goto fail;
	}
	prod = __atomic_load_n(&t->qp.rq.hdr->producer, __ATOMIC_ACQUIRE);
	if (prod == t->rq_kidx)
		return false;			/* no receive WQE: RNR */
	rw = ((struct xnic_rq_wqe *)t->qp.rq.wqes)[t->rq_kidx & t->qp.rq.mask];
	if (w->flags & XNIC_WQE_F_INLINE)
		len = w->inline_len;
	else
		for (k = 0; k < w->num_sge; k++)
			len += w->sge[k].length;
	if (!sim_mr_ok(t->qp.ctx, w->rkey, w->remote_addr, len)) {
		e.status = XNIC_WC_REM_ACCESS_ERR;
		goto fail;
	}
	dst = (char *)(uintptr_t)w->remote_addr;
	if (w->flags & XNIC_WQE_F_INLINE) {
		memcpy(dst, w->inline_data, len);
	} else {
		for (k = 0; k < w->num_sge; k++) {
			if (w->sge[k].lkey != s->qp.ctx->mrs[0]->lkey ||
			    !sim_mr_ok(s->qp.ctx, s->qp.ctx->mrs[0]->rkey,
				       w->sge[k].addr, w->sge[k].length)) {
				e.status = XNIC_WC_LOC_PROT_ERR;
				goto fail;
			}
			memcpy(dst, (void *)(uintptr_t)w->sge[k].addr,
			       w->sge[k].length);
			dst += w->sge[k].length;
		}
	}
	t->rq_kidx++;
	sim_cqe(t->qp.recv_cq, &(struct xnic_cqe) {
		.wr_id = rw.wr_id, .opcode = XNIC_WC_RECV_RDMA_WITH_IMM,
		.flags = XNIC_CQE_F_IMM, .byte_len = len,
		.imm_data = w->imm_data, .qp_num = t->qp.qpn,
		.src_qp = s->qp.qpn,
		.src_node = (uint16_t)s->qp.ctx->attr.node_id,
	});
	if (w->flags & XNIC_WQE_F_SIGNALED) {
		e.opcode = XNIC_WC_RDMA_WRITE;
		e.byte_len = len;
		sim_cqe(s->qp.send_cq, &e);
	}
	return true;
fail:
	atomic_fetch_add(&sim_errors, 1);
	s->error = true;
	e.opcode = XNIC_WC_RDMA_WRITE;
	sim_cqe(s->qp.send_cq, &e);
	return true;
}

/* Complete every posted work request of @s with FLUSH_ERR. */
static bool sim_flush(struct sim_qp *s)
{
	uint32_t prod;
	bool any = false;

	prod = __atomic_load_n(&s->qp.rq.hdr->producer, __ATOMIC_ACQUIRE);
	while (s->rq_kidx != prod) {
		struct xnic_rq_wqe rw = ((struct xnic_rq_wqe *)
			s->qp.rq.wqes)[s->rq_kidx & s->qp.rq.mask];

		s->rq_kidx++;
		sim_cqe(s->qp.recv_cq, &(struct xnic_cqe) {
			.wr_id = rw.wr_id, .opcode = XNIC_WC_RECV,
			.status = XNIC_WC_WR_FLUSH_ERR, .qp_num = s->qp.qpn,
		});
		any = true;
	}
	prod = __atomic_load_n(&s->qp.sq.hdr->producer, __ATOMIC_ACQUIRE);
	while (s->sq_kidx != prod) {
		struct xnic_sq_wqe w = ((struct xnic_sq_wqe *)
			s->qp.sq.wqes)[s->sq_kidx & s->qp.sq.mask];

		s->sq_kidx++;
		__atomic_store_n(&s->qp.sq.hdr->consumer, s->sq_kidx,
				 __ATOMIC_RELEASE);
		sim_cqe(s->qp.send_cq, &(struct xnic_cqe) {
			.wr_id = w.wr_id, .opcode = XNIC_WC_RDMA_WRITE,
			.status = XNIC_WC_WR_FLUSH_ERR, .qp_num = s->qp.qpn,
		});
		any = true;
	}
	return any;
}

static void *sim_engine(void *arg)
{
	(void)arg;
	while (!atomic_load(&sim_stop)) {
		bool busy = false;
		int k, start;

		pthread_mutex_lock(&sim_lock);
		start = (int)(sim_rand() % SIM_MAX_QPS);
		for (k = 0; k < SIM_MAX_QPS; k++) {
			struct sim_qp *s = sim_qps[(start + k) % SIM_MAX_QPS];
			int budget = 1 + (int)(sim_rand() % 4);
			uint32_t prod;

			if (!s)
				continue;
			/* RQ slots come free a little after their CQEs. */
			if (s->rq_shown != s->rq_kidx) {
				s->rq_shown = s->rq_kidx;
				__atomic_store_n(&s->qp.rq.hdr->consumer,
						 s->rq_shown, __ATOMIC_RELEASE);
			}
			if (s->disconnected) {
				busy |= sim_flush(s);
				continue;
			}
			if (!s->rts || s->error)
				continue;
			prod = __atomic_load_n(&s->qp.sq.hdr->producer,
					       __ATOMIC_ACQUIRE);
			while (s->sq_kidx != prod && budget--) {
				struct xnic_sq_wqe w = ((struct xnic_sq_wqe *)
					s->qp.sq.wqes)[s->sq_kidx & s->qp.sq.mask];

				if (!sim_exec(s, &w))
					break;
				s->sq_kidx++;
				__atomic_store_n(&s->qp.sq.hdr->consumer,
						 s->sq_kidx, __ATOMIC_RELEASE);
				busy = true;
			}
		}
		pthread_mutex_unlock(&sim_lock);
		if (!busy)
			usleep(10);
		else if (!(sim_rand() % 8))
			sched_yield();
	}
	return NULL;
}

/* ======================== in-memory bootstrap ======================= */

#define MEM_BS_CALLS	16

struct mem_bs_shared {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int nranks;
	char *buf[MEM_BS_CALLS];
	int arrived[MEM_BS_CALLS];
};

struct mem_bs {
	struct xnic_bootstrap bs;
	struct mem_bs_shared *sh;
	int rank;
	int calls;
};

static int mem_allgather(struct xnic_bootstrap *bs, const void *mine,
			 void *all, size_t len, int timeout_ms)
{
	struct mem_bs *m = (struct mem_bs *)bs;
	struct mem_bs_shared *sh = m->sh;
	int k = m->calls++, err = 0;
	struct timespec ts;

	if (k >= MEM_BS_CALLS)
		return -ENOSPC;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&sh->lock);
	if (!sh->buf[k])
		sh->buf[k] = calloc((size_t)sh->nranks, len);
	memcpy(sh->buf[k] + (size_t)m->rank * len, mine, len);
	sh->arrived[k]++;
	pthread_cond_broadcast(&sh->cond);
	while (sh->arrived[k] < sh->nranks && !err)
		err = pthread_cond_timedwait(&sh->cond, &sh->lock, &ts);
	if (sh->arrived[k] >= sh->nranks) {
		memcpy(all, sh->buf[k], (size_t)sh->nranks * len);
		err = 0;
	} else {
		err = -ETIMEDOUT;
	}
	pthread_mutex_unlock(&sh->lock);
	return err;
}

static const struct xnic_bootstrap_ops mem_bs_ops = {
	.allgather = mem_allgather,
};


/* ============================ a scenario run ======================== */

/*
 * The first members of every rank thread's argument: the bootstrap all
 * ranks share and the rank's number (sim_run() fills them).
 */
#define SIM_RANK_HEAD \
	struct mem_bs_shared *sh; \
	int rank

struct sim_rank {
	SIM_RANK_HEAD;
};

/*
 * sim_run - run one scenario: the engine thread and @nranks threads
 * running @rank_main, thread r given the element of @args that starts
 * r * @arg_size bytes in (each begins with SIM_RANK_HEAD; the rest the
 * caller filled). Returns 0 when, after every rank returned, every QP is
 * closed; -1 when one was left open.
 */
static int sim_run(int nranks, void *(*rank_main)(void *), void *args,
		   size_t arg_size)
{
	struct mem_bs_shared sh = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.nranks = nranks,
	};
	pthread_t eng, th[XNIC_COLL_MAX_RANKS];
	int r, k, started = 0, ret = 0;

	atomic_store(&sim_stop, false);
	atomic_store(&sim_errors, 0);
	if (pthread_create(&eng, NULL, sim_engine, NULL))
		return -1;
	for (r = 0; r < nranks && r < XNIC_COLL_MAX_RANKS; r++) {
		struct sim_rank *a = (struct sim_rank *)((char *)args +
							 (size_t)r * arg_size);

		a->sh = &sh;
		a->rank = r;
		if (pthread_create(&th[r], NULL, rank_main, a))
			break;
		started++;
	}
	for (r = 0; r < started; r++)
		pthread_join(th[r], NULL);
	atomic_store(&sim_stop, true);
	pthread_join(eng, NULL);
	for (k = 0; k < MEM_BS_CALLS; k++)
		free(sh.buf[k]);
	for (k = 0; k < SIM_MAX_QPS; k++)
		if (sim_qps[k])
			ret = -1;	/* not everything closed */
	return started == nranks ? ret : -1;
}

/* ====================== the kernel's mesh links ===================== */

/*
 * Appliance of each simulated device ("sim<k>" is node k + 1), for
 * xnic_coll_mesh_nodes(): devices of one appliance reach each other over
 * mesh links. NULL: no mesh links at all. sim_mesh_fail: the kernel
 * cannot be asked.
 */
static const int *sim_appl;
static int sim_ndev;
static bool sim_mesh_fail;

int xnic_coll_mesh_nodes(const char *device, uint32_t *nodes,
			 unsigned int max)
{
	unsigned int k, n = 0;
	int j;

	if (sim_mesh_fail)
		return -ENOENT;
	if (sscanf(device, "sim%u", &k) != 1)
		return -ENOENT;
	for (j = 0; sim_appl && j < sim_ndev; j++) {
		if ((unsigned int)j == k || sim_appl[j] != sim_appl[k])
			continue;
		if (n == max)
			return -ENOBUFS;
		nodes[n++] = (uint32_t)j + 1;
	}
	return (int)n;
}

#endif /* COLL_SIM_H */
