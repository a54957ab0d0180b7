// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fabric_err_test - the xnic libfabric provider through libfabric's public
 * API only, in one process: an FI_EP_MSG endpoint on device A connects to
 * a passive endpoint on device B (fabric CM, private data both ways), then
 *   - send/recv and senddata (FI_REMOTE_CQ_DATA), data checked;
 *   - RMA write, writedata (consumes a receive: FI_RX_CQ_DATA), read;
 *   - a write with a wrong key: an error completion, FI_EACCES, prov_errno
 *     the xnic status, fi_cq_strerror's text; target bytes untouched;
 *   - FI_RM_ENABLED: more signalled sends, injects and receives than a
 *     64-entry CQ holds: posts return -FI_EAGAIN until completions are
 *     read, none is lost (each completes and arrives once, in order), no
 *     -FI_EOVERRUN, also when fi_shutdown flushes a full CQ's work; an
 *     endpoint closed with work posted reports nothing and gives its
 *     CQ entries back;
 *   - fi_shutdown on one side: FI_SHUTDOWN on the other's EQ;
 *   - fi_getinfo with hints xnic cannot meet: -FI_ENODATA;
 *   - bad arguments: negative FI_ errors, no crash;
 *   - connect to a port nobody listens on, and to a passive endpoint that
 *     was closed: FI_ECONNREFUSED on the EQ; to a node the fabric does
 *     not know: FI_EHOSTUNREACH;
 *   - connection requests handled out of order: stale handles refused
 *     (-FI_EINVAL), a passive endpoint closed with requests pending
 *     refuses their peers and aborts a later accept (FI_ECONNABORTED),
 *     its unread requests leave the EQ and its wait fd quiet;
 *   - fi_cq_sread sleeping in one thread: fi_cq_read in another returns
 *     at once (FI_THREAD_SAFE).
 * Usage: fabric_err_test DEVICE_A DEVICE_B (FI_PROVIDER_PATH must find
 * libxnic-fi.so). Prints TAP; exit 0 when every check passed.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "uapi/xnic-abi.h"

#define BUF	65536
#define TMO_MS	15000

#include "fabric_tap.h"

struct side {
	const char *dev;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_mr *mr;
	char *buf;
};

static struct fi_info *hints_for(const char *dev)
{
	struct fi_info *h = fi_allocinfo();

	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA;
	h->mode = FI_RX_CQ_DATA | FI_CONTEXT;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				  FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->domain_attr->name = strdup(dev);
	h->fabric_attr->prov_name = strdup("xnic");
	return h;
}

static void side_open(struct side *s, const char *dev)
{
	struct fi_info *h = hints_for(dev);
	struct fi_eq_attr eqa = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_DATA, .size = 256 };

	s->dev = dev;
	MUST(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &s->info));
	fi_freeinfo(h);
	MUST(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
	MUST(fi_eq_open(s->fabric, &eqa, &s->eq, NULL));
	MUST(fi_domain(s->fabric, s->info, &s->domain, NULL));
	MUST(fi_cq_open(s->domain, &cqa, &s->cq, NULL));
	s->buf = aligned_alloc(4096, BUF);
	memset(s->buf, 0, BUF);
	MUST(fi_mr_reg(s->domain, s->buf, BUF, FI_SEND | FI_RECV | FI_READ |
		       FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
		       &s->mr, NULL));
}

static struct fid_ep *ep_open(struct side *s, struct fi_info *info)
{
	struct fid_ep *ep;

	MUST(fi_endpoint(s->domain, info, &ep, NULL));
	MUST(fi_ep_bind(ep, &s->eq->fid, 0));
	MUST(fi_ep_bind(ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	MUST(fi_enable(ep));
	return ep;
}

/* The next EQ event: its type, or -err for an error entry. */
static int eq_next(struct fid_eq *eq, struct fi_eq_cm_entry *e, size_t len,
		   struct fi_eq_err_entry *err)
{
	uint32_t ev;
	ssize_t n = fi_eq_sread(eq, &ev, e, len, TMO_MS, 0);

	if (n == -FI_EAVAIL) {
		memset(err, 0, sizeof(*err));
		if (fi_eq_readerr(eq, err, 0) != sizeof(*err))
			return -FI_EOTHER;
		return -err->err;
	}
	if (n < 0)
		return (int)n;
	return (int)ev;
}

/* One completion (successful or not) from @cq within the timeout. */
static ssize_t cq_next(struct fid_cq *cq, struct fi_cq_data_entry *c,
		       struct fi_cq_err_entry *err)
{
	int i;

	for (i = 0; i < TMO_MS * 10; i++) {
		ssize_t n = fi_cq_read(cq, c, 1);

		if (n == 1)
			return 1;
		if (n == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			return fi_cq_readerr(cq, err, 0) == 1 ? -FI_EAVAIL :
								-FI_EOTHER;
		}
		if (n != -FI_EAGAIN)
			return n;
		usleep(100);
	}
	return -FI_ETIMEDOUT;
}

struct pair {
	struct fid_pep *pep;
	struct fid_ep *a, *b;
	char addr[64];
	size_t addrlen;
};

/* A connects to B's passive endpoint; private data both ways. */
static void connect_pair(struct side *A, struct side *B, struct pair *p,
			 bool check)
{
	struct {
		struct fi_eq_cm_entry e;
		char data[64];
	} ev;
	struct fi_eq_err_entry err;
	int t;

	MUST(fi_passive_ep(B->fabric, B->info, &p->pep, NULL));
	MUST(fi_pep_bind(p->pep, &B->eq->fid, 0));
	MUST(fi_listen(p->pep));
	p->addrlen = sizeof(p->addr);
	MUST(fi_getname(&p->pep->fid, p->addr, &p->addrlen));
	p->a = ep_open(A, A->info);
	MUST(fi_connect(p->a, p->addr, "hello", 6));
	t = eq_next(B->eq, &ev.e, sizeof(ev), &err);
	if (check)
		CHECK(t == FI_CONNREQ && !strcmp(ev.data, "hello"),
		      "FI_CONNREQ with the connect's private data (%d)", t);
	if (t != FI_CONNREQ) {
		printf("Bail out! no FI_CONNREQ: %d\n", t);
		exit(1);
	}
	p->b = ep_open(B, ev.e.info);
	fi_freeinfo(ev.e.info);
	MUST(fi_accept(p->b, "world", 6));
	t = eq_next(B->eq, &ev.e, sizeof(ev), &err);
	if (check)
		CHECK(t == FI_CONNECTED && ev.e.fid == &p->b->fid,
		      "passive side FI_CONNECTED (%d)", t);
	t = eq_next(A->eq, &ev.e, sizeof(ev), &err);
	if (check)
		CHECK(t == FI_CONNECTED && ev.e.fid == &p->a->fid &&
		      !strcmp(ev.data, "world"),
		      "active side FI_CONNECTED with the accept's data (%d)", t);
}

/* A listens on a new passive endpoint of B; the FI_CONNREQ's info. */
static struct fi_info *connreq_of(struct side *A, struct side *B,
				  struct fid_pep **pep, struct fid_ep **a)
{
	struct fi_eq_cm_entry ev;
	struct fi_eq_err_entry err;
	char addr[64];
	size_t len = sizeof(addr);
	int t;

	MUST(fi_passive_ep(B->fabric, B->info, pep, NULL));
	MUST(fi_pep_bind(*pep, &B->eq->fid, 0));
	MUST(fi_listen(*pep));
	MUST(fi_getname(&(*pep)->fid, addr, &len));
	*a = ep_open(A, A->info);
	MUST(fi_connect(*a, addr, NULL, 0));
	t = eq_next(B->eq, &ev, sizeof(ev), &err);
	if (t != FI_CONNREQ) {
		printf("Bail out! no FI_CONNREQ: %d\n", t);
		exit(1);
	}
	return ev.info;
}

/* The connecting side's verdict: refused, not timed out. */
static void refused(struct side *A, struct fid_ep *a, const char *what)
{
	struct fi_eq_cm_entry ev;
	struct fi_eq_err_entry err;
	int t = eq_next(A->eq, &ev, sizeof(ev), &err);

	CHECK(t == -FI_ECONNREFUSED && err.fid == &a->fid,
	      "%s: the connecting side is refused (%d)", what, t);
	fi_close(&a->fid);
}

/*
 * Connection requests handled in orders fi_cm(3) does not foresee: a
 * stale handle is refused, never followed; a passive endpoint closed with
 * requests not answered refuses their peers and aborts a later accept;
 * an FI_CONNREQ written by the application stays the application's.
 */
static void test_connreq_lifetimes(struct side *A, struct side *B)
{
	struct fi_eq_attr eqa = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_cm_entry ev, mine;
	struct fi_eq_err_entry err;
	struct fi_info *info, *own;
	struct fid_pep *pep;
	struct fid_ep *a, *b, *b2;
	struct fid_eq *eq;
	struct pollfd p;
	uint32_t type;
	int t;

	/* The endpoint made of it closed, then fi_reject of its handle. */
	info = connreq_of(A, B, &pep, &a);
	MUST(fi_endpoint(B->domain, info, &b, NULL));
	t = fi_endpoint(B->domain, info, &b2, NULL);
	CHECK(t == -FI_EINVAL, "a second endpoint of one request: -FI_EINVAL (%d)",
	      t);
	fi_close(&b->fid);
	refused(A, a, "endpoint closed unaccepted");
	t = fi_reject(pep, info->handle, NULL, 0);
	CHECK(t == -FI_EINVAL,
	      "reject after its endpoint was closed: -FI_EINVAL (%d)", t);
	fi_freeinfo(info);
	fi_close(&pep->fid);

	/* fi_reject, then the endpoint made of it closed. */
	info = connreq_of(A, B, &pep, &a);
	MUST(fi_endpoint(B->domain, info, &b, NULL));
	t = fi_reject(pep, info->handle, NULL, 0);
	CHECK(t == 0, "reject of a request with an endpoint (%d)", t);
	refused(A, a, "rejected");
	t = fi_reject(pep, info->handle, NULL, 0);
	CHECK(t == -FI_EINVAL, "reject twice: -FI_EINVAL (%d)", t);
	CHECK(fi_close(&b->fid) == 0, "its endpoint closes");
	fi_freeinfo(info);
	fi_close(&pep->fid);

	/* The passive endpoint closed: its peer refused, the accept aborted. */
	info = connreq_of(A, B, &pep, &a);
	MUST(fi_endpoint(B->domain, info, &b, NULL));
	MUST(fi_ep_bind(b, &B->eq->fid, 0));
	MUST(fi_ep_bind(b, &B->cq->fid, FI_TRANSMIT | FI_RECV));
	fi_close(&pep->fid);
	refused(A, a, "passive endpoint closed");
	MUST(fi_accept(b, NULL, 0));
	t = eq_next(B->eq, &ev, sizeof(ev), &err);
	CHECK(t == -FI_ECONNABORTED && err.fid == &b->fid,
	      "accept after its passive endpoint closed: FI_ECONNABORTED (%d)",
	      t);
	fi_close(&b->fid);
	fi_freeinfo(info);

	/* A request never read: refused when its passive endpoint closes. */
	MUST(fi_passive_ep(B->fabric, B->info, &pep, NULL));
	MUST(fi_pep_bind(pep, &B->eq->fid, 0));
	MUST(fi_listen(pep));
	{
		char addr[64];
		size_t len = sizeof(addr);

		MUST(fi_getname(&pep->fid, addr, &len));
		a = ep_open(A, A->info);
		MUST(fi_connect(a, addr, NULL, 0));
	}
	t = (int)fi_eq_sread(B->eq, &type, &ev, sizeof(ev), TMO_MS, FI_PEEK);
	CHECK(t > 0 && type == FI_CONNREQ, "FI_CONNREQ queued (%d)", t);
	fi_close(&pep->fid);
	refused(A, a, "passive endpoint closed, request unread");
	t = (int)fi_eq_read(B->eq, &type, &ev, sizeof(ev), 0);
	CHECK(t == -FI_EAGAIN, "its event went with it (%d)", t);
	MUST(fi_control(&B->eq->fid, FI_GETWAIT, &p.fd));
	p.events = POLLIN;
	t = poll(&p, 1, 0);
	CHECK(t == 0, "and the EQ's wait fd is not readable any more (%d)", t);

	/* fi_eq_write's FI_CONNREQ: its fi_info stays the writer's. */
	MUST(fi_eq_open(B->fabric, &eqa, &eq, NULL));
	own = fi_allocinfo();
	memset(&mine, 0, sizeof(mine));
	mine.info = own;
	t = (int)fi_eq_write(eq, FI_CONNREQ, &mine, sizeof(mine), 0);
	CHECK(t == sizeof(mine), "fi_eq_write of an FI_CONNREQ (%d)", t);
	t = fi_close(&eq->fid);
	CHECK(t == 0, "an EQ with a written FI_CONNREQ unread closes (%d)", t);
	fi_freeinfo(own);	/* a double free if the close had freed it */
}

struct sleeper {
	struct fid_cq *cq;
	ssize_t ret;
};

static void *cq_sleeper(void *arg)
{
	struct sleeper *s = arg;
	struct fi_cq_data_entry c;

	s->ret = fi_cq_sread(s->cq, &c, 1, NULL, 2000);
	return NULL;
}

/*
 * A thread asleep in fi_cq_sread does not hold the CQ from the others
 * (before, it held the CQ's lock through each 100 ms slice of its sleep:
 * another thread's fi_cq_read waited for it, for as long as it slept).
 */
static void test_sread_shared(struct side *A)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_DATA,
				  .wait_obj = FI_WAIT_UNSPEC };
	struct sleeper s = { .ret = 1 };
	struct fi_cq_data_entry c;
	long long t0, took;
	pthread_t th;
	int i, again = 0;

	MUST(fi_cq_open(A->domain, &cqa, &s.cq, NULL));
	MUST(pthread_create(&th, NULL, cq_sleeper, &s));
	usleep(200 * 1000);
	t0 = now_ms();
	for (i = 0; i < 10; i++)
		again += fi_cq_read(s.cq, &c, 1) == -FI_EAGAIN;
	took = now_ms() - t0;
	pthread_join(th, NULL);
	CHECK(again == 10 && took < 500 && s.ret == -FI_EAGAIN,
	      "fi_cq_read beside a sleeping fi_cq_sread: %d x -FI_EAGAIN in "
	      "%lld ms; the sleeper -FI_EAGAIN after its 2 s (%zd)", again,
	      took, s.ret);
	fi_close(&s.cq->fid);
}

#define CQ_SMALL	64	/* entries of the CQs of test_cq_full() */
#define CQ_MSGS		500	/* messages sent through them */

/*
 * Receives taken off @cq: each must hold the next sequence number of
 * @seq (its buffer is slot ctx - 1 of @rb) and is posted again when
 * @desc. Return the number, or a negative FI_ errno of fi_cq_read (an
 * error entry is read and counted as -FI_EAVAIL).
 */
static ssize_t cq_full_recv(struct fid_cq *cq, struct fid_ep *ep, char *rb,
			    void *desc, int *seq, int *bad)
{
	struct fi_cq_data_entry c[16];
	struct fi_cq_err_entry ce;
	ssize_t n, i;

	n = fi_cq_read(cq, c, 16);
	if (n == -FI_EAVAIL) {
		fi_cq_readerr(cq, &ce, 0);
		return n;
	}
	for (i = 0; i < n; i++) {
		uintptr_t slot = (uintptr_t)c[i].op_context - 1;
		int v;

		if (slot >= CQ_SMALL) {
			(*bad)++;
			continue;
		}
		memcpy(&v, rb + slot * 8, sizeof(v));
		if (v != (*seq)++ || !(c[i].flags & FI_RECV))
			(*bad)++;
		if (desc &&
		    fi_recv(ep, rb + slot * 8, 8, desc, 0, c[i].op_context))
			(*bad)++;
	}
	return n;
}

/*
 * One step of the receiving side of test_cq_full(): cq_full_recv(), its
 * error entries counted in @errs, another failure kept in @fail; a pause
 * when nothing arrived.
 */
static void cq_full_recv_step(struct fid_cq *cq, struct fid_ep *ep, char *rb,
			      void *desc, int *seq, int *bad, int *errs,
			      ssize_t *fail)
{
	ssize_t n = cq_full_recv(cq, ep, rb, desc, seq, bad);

	if (n == -FI_EAVAIL)
		(*errs)++;
	else if (n < 0 && n != -FI_EAGAIN)
		*fail = n;
	if (n <= 0)
		usleep(50);
}

/*
 * FI_RM_ENABLED: an FI_EP_MSG endpoint on CQs of CQ_SMALL entries. Posts
 * beyond what the CQ can hold return -FI_EAGAIN; once completions are
 * read the rest goes through, nothing lost and nothing twice.
 */
static void test_cq_full(struct side *A, struct side *B)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_DATA,
				  .size = CQ_SMALL };
	struct fi_cq_data_entry c[16];
	struct fi_cq_err_entry ce;
	struct fi_eq_err_entry ee;
	struct fi_eq_cm_entry ev;
	struct side a = *A, b = *B;
	void *adesc = fi_mr_desc(A->mr), *bdesc = fi_mr_desc(B->mr);
	char *rb = B->buf + 60000;
	int i, sent, scomp, rseq, eagain, bad, errs, ok, canceled, t;
	ssize_t n, r, last, overrun;
	struct pair p;

	MUST(fi_cq_open(A->domain, &cqa, &a.cq, NULL));
	MUST(fi_cq_open(B->domain, &cqa, &b.cq, NULL));
	connect_pair(&a, &b, &p, false);

	/* Receives: one CQ entry each. */
	for (i = 0; i < 4 * CQ_SMALL; i++) {
		r = fi_recv(p.b, rb + i * 8, 8, bdesc, 0,
			    (void *)(uintptr_t)(i + 1));
		if (r)
			break;
	}
	CHECK(i == CQ_SMALL && r == -FI_EAGAIN,
	      "receives on a %d-entry CQ: -FI_EAGAIN after %d (%zd)",
	      CQ_SMALL, i, r);

	/* Signalled sends: more than the CQ holds. */
	sent = scomp = rseq = eagain = bad = errs = 0;
	overrun = 0;
	for (i = 0; i < TMO_MS * 10 && !overrun &&
	     (scomp < CQ_MSGS || rseq < CQ_MSGS); i++) {
		if (sent < CQ_MSGS) {
			memcpy(A->buf + sent * 8, &sent, sizeof(sent));
			r = fi_send(p.a, A->buf + sent * 8, 8, adesc, 0,
				    (void *)(uintptr_t)(sent + 1));
			if (!r) {
				sent++;
				continue;
			}
			if (r != -FI_EAGAIN) {
				overrun = r;
				break;
			}
			eagain++;
		}
		n = fi_cq_read(a.cq, c, 16);
		if (n == -FI_EAVAIL) {
			fi_cq_readerr(a.cq, &ce, 0);
			errs++;
		} else if (n < 0 && n != -FI_EAGAIN) {
			overrun = n;
		}
		for (t = 0; t < n; t++)
			if (c[t].op_context != (void *)(uintptr_t)++scomp ||
			    !(c[t].flags & FI_SEND))
				bad++;
		cq_full_recv_step(b.cq, p.b, rb, bdesc, &rseq, &bad, &errs,
				  &overrun);
	}
	CHECK(eagain && !overrun,
	      "%d signalled sends on a %d-entry CQ: -FI_EAGAIN (%d times), "
	      "no -FI_EOVERRUN (%zd)", CQ_MSGS, CQ_SMALL, eagain, overrun);
	CHECK(sent == CQ_MSGS && scomp == CQ_MSGS && rseq == CQ_MSGS &&
	      !bad && !errs,
	      "each send completed once and arrived once, in order "
	      "(%d posted, %d completed, %d received, %d wrong, %d errors)",
	      sent, scomp, rseq, bad, errs);

	/* Injects want no completion, but each holds an entry till read. */
	sent = eagain = 0;
	rseq = bad = errs = 0;
	overrun = 0;
	for (i = 0; i < TMO_MS * 10 && !overrun && rseq < CQ_MSGS; i++) {
		if (sent < CQ_MSGS) {
			r = fi_inject(p.a, &sent, sizeof(sent), 0);
			if (!r) {
				sent++;
				continue;
			}
			if (r != -FI_EAGAIN) {
				overrun = r;
				break;
			}
			eagain++;
		}
		n = fi_cq_read(a.cq, c, 16);
		if (n > 0 || n == -FI_EAVAIL)
			bad++;		/* none was asked for */
		else if (n != -FI_EAGAIN)
			overrun = n;
		cq_full_recv_step(b.cq, p.b, rb, bdesc, &rseq, &bad, &errs,
				  &overrun);
	}
	CHECK(eagain && !overrun && sent == CQ_MSGS && rseq == CQ_MSGS &&
	      !bad && !errs,
	      "%d injects on a %d-entry CQ: -FI_EAGAIN (%d times), no "
	      "completion, each arrived once, in order (%d received, %d "
	      "wrong, %d errors, %zd)", CQ_MSGS, CQ_SMALL, eagain, rseq, bad,
	      errs, overrun);

	/* The injects' CQEs (none reported) give their entries back. */
	for (i = 0; i < 200; i++) {
		if (fi_cq_read(a.cq, c, 16) != -FI_EAGAIN)
			bad++;
		usleep(1000);
	}
	/* Use up B's receives, not posted again. */
	rseq = scomp = 0;
	for (sent = 0; sent < CQ_SMALL; sent++) {
		memcpy(A->buf + sent * 8, &sent, sizeof(sent));
		if (fi_send(p.a, A->buf + sent * 8, 8, adesc, 0,
			    (void *)(uintptr_t)(sent + 1)))
			break;
	}
	for (i = 0; i < TMO_MS && (scomp < CQ_SMALL || rseq < CQ_SMALL);
	     i++) {
		n = fi_cq_read(a.cq, c, 16);
		scomp += n > 0 ? (int)n : 0;
		if (n == -FI_EAVAIL || cq_full_recv(b.cq, p.b, rb, NULL, &rseq,
						    &bad) == -FI_EAVAIL)
			errs++;
		usleep(1000);
	}
	CHECK(sent == CQ_SMALL && scomp == CQ_SMALL && rseq == CQ_SMALL &&
	      !bad && !errs,
	      "the injects gave their CQ entries back: %d more sends "
	      "posted, %d completed, %d received (%d wrong, %d errors)", sent,
	      scomp, rseq, bad, errs);

	/* A full CQ of sends no receive waits for, flushed by fi_shutdown. */
	for (sent = 0; sent < 4 * CQ_SMALL; sent++)
		if (fi_send(p.a, A->buf, 8, adesc, 0, A))
			break;
	MUST(fi_shutdown(p.a, 0));
	t = eq_next(B->eq, &ev, sizeof(ev), &ee);
	ok = canceled = 0;
	last = 0;
	for (i = 0; i < 2000 && ok + canceled < sent; i++) {
		n = fi_cq_read(a.cq, c, 16);
		if (n > 0) {
			ok += (int)n;
		} else if (n == -FI_EAVAIL) {
			if (fi_cq_readerr(a.cq, &ce, 0) == 1 &&
			    ce.err == FI_ECANCELED && ce.op_context == A)
				canceled++;
		} else if (n != -FI_EAGAIN) {
			last = n;
			break;
		} else {
			usleep(1000);
		}
	}
	CHECK(t == FI_SHUTDOWN && sent == CQ_SMALL && !ok &&
	      canceled == sent && !last,
	      "fi_shutdown with %d sends holding the whole CQ: %d completed, "
	      "%d canceled, no -FI_EOVERRUN (%zd)", sent, ok, canceled, last);
	fi_close(&p.a->fid);
	fi_close(&p.b->fid);
	fi_close(&p.pep->fid);
	MUST(fi_close(&a.cq->fid));
	MUST(fi_close(&b.cq->fid));
}

/* Receives posted on @ep until -FI_EAGAIN, at most 4 x CQ_SMALL. */
static int recv_room(struct fid_ep *ep, char *rb, void *desc)
{
	int i;

	for (i = 0; i < 4 * CQ_SMALL; i++)
		if (fi_recv(ep, rb + i * 8, 8, desc, 0,
			    (void *)(uintptr_t)(i + 1)))
			break;
	return i;
}

/*
 * fi_close of an endpoint with work posted discards it (fi_endpoint(3)):
 * its completions are not reported, the CQEs it had in the ring are
 * dropped, and the entries of a CQ_SMALL-entry CQ its receives held come
 * back, so a new endpoint on that CQ posts as many again.
 */
static void test_close_gives_back(struct side *A, struct side *B)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_DATA,
				  .size = CQ_SMALL };
	void *bdesc = fi_mr_desc(B->mr);
	char *rb = B->buf + 60000;
	struct side a = *A, b = *B;
	struct fi_cq_data_entry c;
	struct fi_cq_err_entry ce;
	struct fid_ep *e2;
	int first, again, i, done = 0;
	struct pair p;
	ssize_t n;

	MUST(fi_cq_open(A->domain, &cqa, &a.cq, NULL));
	MUST(fi_cq_open(B->domain, &cqa, &b.cq, NULL));
	connect_pair(&a, &b, &p, false);
	first = recv_room(p.b, rb, bdesc);
	for (i = 0; i < 3; i++)
		MUST(fi_send(p.a, A->buf, 8, fi_mr_desc(A->mr), 0, A));
	while (done < 3 && cq_next(a.cq, &c, &ce) == 1)
		done++;
	MUST(fi_close(&p.b->fid));	/* 3 CQEs unread, 61 receives */
	n = fi_cq_read(b.cq, &c, 1);
	CHECK(first == CQ_SMALL && done == 3 && n == -FI_EAGAIN,
	      "an endpoint closed with %d receives posted, 3 of them "
	      "completed and unread: nothing reported (%zd)", first, n);
	e2 = ep_open(&b, B->info);
	again = recv_room(e2, rb, bdesc);
	CHECK(again == CQ_SMALL, "a new endpoint on its %d-entry CQ posts %d "
	      "receives (its entries came back)", CQ_SMALL, again);
	fi_close(&e2->fid);
	fi_close(&p.a->fid);
	fi_close(&p.pep->fid);
	MUST(fi_close(&a.cq->fid));
	MUST(fi_close(&b.cq->fid));
}

static void test_getinfo(const char *dev)
{
	struct fi_info *h, *info = NULL;
	int r;

	h = hints_for(dev);
	h->ep_attr->type = FI_EP_DGRAM;
	r = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	CHECK(r == -FI_ENODATA, "getinfo FI_EP_DGRAM: -FI_ENODATA (%d)", r);
	fi_freeinfo(h);

	h = hints_for(dev);
	h->caps |= FI_ATOMIC;
	r = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	CHECK(r == -FI_ENODATA, "getinfo FI_ATOMIC: -FI_ENODATA (%d)", r);
	fi_freeinfo(h);

	h = hints_for("nosuchdev");
	r = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	CHECK(r == -FI_ENODATA, "getinfo unknown domain: -FI_ENODATA (%d)", r);
	fi_freeinfo(h);

	h = hints_for(dev);
	h->tx_attr->inject_size = 1 << 20;
	r = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	CHECK(r == -FI_ENODATA, "getinfo inject_size 1 MiB: -FI_ENODATA (%d)",
	      r);
	fi_freeinfo(h);

	h = hints_for(dev);
	h->domain_attr->mr_mode = 0;	/* cannot register: FI_MR_LOCAL */
	r = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	CHECK(r == -FI_ENODATA, "getinfo without FI_MR_LOCAL: -FI_ENODATA (%d)",
	      r);
	fi_freeinfo(h);

	h = hints_for(dev);
	r = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	CHECK(!r && info && info->tx_attr->inject_size == XNIC_MAX_INLINE &&
	      info->domain_attr->mr_key_size == 4 &&
	      info->domain_attr->cq_data_size == 4 &&
	      info->addr_format == FI_SOCKADDR_IN6 &&
	      (info->mode & FI_RX_CQ_DATA) &&
	      !strcmp(info->domain_attr->name, dev),
	      "getinfo: limits (inject %zu, key %zu, cq data %zu)",
	      info ? info->tx_attr->inject_size : 0,
	      info ? info->domain_attr->mr_key_size : 0,
	      info ? info->domain_attr->cq_data_size : 0);
	fi_freeinfo(info);
	fi_freeinfo(h);
}

int main(int argc, char **argv)
{
	struct fi_cq_data_entry c;
	struct fi_cq_err_entry ce;
	struct fi_eq_err_entry ee;
	struct fi_eq_cm_entry ev;
	struct side A, B;
	struct pair p, q;
	char big[65], sbuf[64];
	struct iovec iov[2];
	struct fid_mr *mr2;
	struct fid_ep *e3;
	void *desc;
	uint64_t key;
	ssize_t n;
	int i, t, ok;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE_A DEVICE_B\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_getinfo(argv[1]);
	side_open(&A, argv[1]);
	side_open(&B, argv[2]);
	desc = fi_mr_desc(A.mr);

	/* Bad arguments before a connection. */
	e3 = ep_open(&A, A.info);
	n = fi_send(e3, A.buf, 8, desc, 0, NULL);
	CHECK(n == -FI_ENOTCONN, "send before connect: -FI_ENOTCONN (%zd)", n);
	memset(big, 0, sizeof(big));
	t = fi_connect(e3, big, NULL, 0);
	CHECK(t == -FI_EINVAL, "connect to a garbage address: -FI_EINVAL (%d)",
	      t);
	t = fi_accept(e3, NULL, 0);
	CHECK(t == -FI_EINVAL, "accept without a request: -FI_EINVAL (%d)", t);
	iov[0].iov_base = A.buf;
	iov[0].iov_len = 8;
	iov[1] = iov[0];
	t = fi_mr_regv(A.domain, iov, 2, FI_SEND, 0, 0, 0, &mr2, NULL);
	CHECK(t == -FI_EINVAL, "mr_regv of 2 iovs (limit 1): -FI_EINVAL (%d)",
	      t);

	connect_pair(&A, &B, &p, true);
	t = fi_connect(p.a, p.addr, big, sizeof(big));
	CHECK(t == -FI_EINVAL, "65 bytes of connect data: -FI_EINVAL (%d)", t);

	/* send/recv and senddata */
	for (i = 0; i < 4096; i++)
		A.buf[i] = (char)(i * 7 + 1);
	MUST(fi_recv(p.b, B.buf, 4096, fi_mr_desc(B.mr), 0, &B));
	MUST(fi_send(p.a, A.buf, 4096, desc, 0, &A));
	n = cq_next(A.cq, &c, &ce);
	CHECK(n == 1 && c.op_context == &A && (c.flags & FI_SEND),
	      "send completion (%zd)", n);
	n = cq_next(B.cq, &c, &ce);
	CHECK(n == 1 && c.op_context == &B && c.len == 4096 &&
	      (c.flags & FI_RECV) && !memcmp(A.buf, B.buf, 4096),
	      "recv completion, 4096 bytes landed (%zd)", n);
	MUST(fi_recv(p.b, B.buf, 64, fi_mr_desc(B.mr), 0, &B));
	MUST(fi_senddata(p.a, A.buf, 16, desc, 0xabcd1234, 0, &A));
	cq_next(A.cq, &c, &ce);
	n = cq_next(B.cq, &c, &ce);
	CHECK(n == 1 && (c.flags & FI_REMOTE_CQ_DATA) && c.data == 0xabcd1234,
	      "senddata: remote CQ data 0x%llx", (unsigned long long)c.data);
	snprintf(sbuf, sizeof(sbuf), "inject!");
	MUST(fi_recv(p.b, B.buf, 64, fi_mr_desc(B.mr), 0, &B));
	MUST(fi_inject(p.a, sbuf, 8, 0));
	n = cq_next(B.cq, &c, &ce);
	CHECK(n == 1 && !strcmp(B.buf, "inject!"), "inject landed (%zd)", n);

	/* RMA */
	key = fi_mr_key(B.mr);
	memset(A.buf, 0x5a, 8192);
	MUST(fi_write(p.a, A.buf, 8192, desc, 0, (uintptr_t)B.buf + 8192, key,
		      &A));
	n = cq_next(A.cq, &c, &ce);
	for (ok = 1, i = 0; i < 8192; i++)
		ok &= B.buf[8192 + i] == 0x5a;
	CHECK(n == 1 && (c.flags & FI_WRITE) && ok,
	      "RMA write: 8 KiB landed (%zd)", n);
	MUST(fi_recv(p.b, B.buf, 64, fi_mr_desc(B.mr), 0, &B));
	MUST(fi_writedata(p.a, A.buf, 100, desc, 77, 0,
			  (uintptr_t)B.buf + 20000, key, &A));
	cq_next(A.cq, &c, &ce);
	n = cq_next(B.cq, &c, &ce);
	CHECK(n == 1 && (c.flags & FI_REMOTE_WRITE) &&
	      (c.flags & FI_REMOTE_CQ_DATA) && c.data == 77,
	      "writedata: the target's receive completes with data %llu",
	      (unsigned long long)c.data);
	for (i = 0; i < 4096; i++)
		B.buf[30000 + i] = (char)(i ^ 0x33);
	MUST(fi_read(p.a, A.buf + 30000, 4096, desc, 0,
		     (uintptr_t)B.buf + 30000, key, &A));
	n = cq_next(A.cq, &c, &ce);
	CHECK(n == 1 && (c.flags & FI_READ) &&
	      !memcmp(A.buf + 30000, B.buf + 30000, 4096),
	      "RMA read: 4 KiB read back (%zd)", n);
	n = fi_write(p.a, A.buf, 8, desc, 0, (uintptr_t)B.buf, 1ULL << 40, &A);
	CHECK(n == -FI_EINVAL, "a key over 32 bits: -FI_EINVAL (%zd)", n);

	/* A wrong key: error completion, target untouched. */
	memset(B.buf + 40000, 0x11, 4096);
	memset(A.buf, 0x77, 4096);
	MUST(fi_write(p.a, A.buf, 4096, desc, 0, (uintptr_t)B.buf + 40000,
		      key ^ 0x5a5a00, &A));
	n = cq_next(A.cq, &c, &ce);
	for (ok = 1, i = 0; i < 4096; i++)
		ok &= B.buf[40000 + i] == 0x11;
	{
		char sb[128];
		const char *s = fi_cq_strerror(A.cq, ce.prov_errno, NULL, sb,
					       sizeof(sb));

		CHECK(n == -FI_EAVAIL && ce.err == FI_EACCES &&
		      ce.prov_errno == XNIC_WC_REM_ACCESS_ERR &&
		      ce.op_context == &A && s && *s && ok,
		      "wrong key: FI_EACCES, prov_errno %d (%s), target untouched",
		      ce.prov_errno, s ? s : "?");
	}
	fi_close(&p.a->fid);
	fi_close(&p.b->fid);
	fi_close(&p.pep->fid);
	while (fi_cq_read(A.cq, &c, 1) > 0 || fi_cq_readerr(A.cq, &ce, 0) > 0)
		;
	while (fi_cq_read(B.cq, &c, 1) > 0 || fi_cq_readerr(B.cq, &ce, 0) > 0)
		;

	test_cq_full(&A, &B);
	test_close_gives_back(&A, &B);
	test_sread_shared(&A);

	/* fi_shutdown: the peer's EQ says FI_SHUTDOWN. */
	connect_pair(&A, &B, &q, false);
	MUST(fi_shutdown(q.a, 0));
	t = eq_next(B.eq, &ev, sizeof(ev), &ee);
	CHECK(t == FI_SHUTDOWN && ev.fid == &q.b->fid,
	      "peer fi_shutdown: FI_SHUTDOWN on the passive side (%d)", t);
	n = fi_send(q.a, A.buf, 8, desc, 0, &A);
	n = n ? n : cq_next(A.cq, &c, &ce);
	CHECK(n == -FI_EAVAIL && ce.err == FI_ECANCELED,
	      "send after shutdown completes as canceled (%zd, err %d)", n,
	      ce.err);
	fi_close(&q.a->fid);
	fi_close(&q.b->fid);

	/* Nobody listens: refused. */
	((struct sockaddr_in6 *)q.addr)->sin6_port = htons(1);
	fi_close(&q.pep->fid);
	e3 = ep_open(&A, A.info);
	MUST(fi_connect(e3, q.addr, NULL, 0));
	t = eq_next(A.eq, &ev, sizeof(ev), &ee);
	CHECK(t == -FI_ECONNREFUSED && ee.fid == &e3->fid,
	      "connect to a port nobody listens on: FI_ECONNREFUSED (%d)", t);
	fi_close(&e3->fid);

	/* A listener that went away: refused too. */
	e3 = ep_open(&A, A.info);
	MUST(fi_connect(e3, p.addr, NULL, 0));
	t = eq_next(A.eq, &ev, sizeof(ev), &ee);
	CHECK(t == -FI_ECONNREFUSED,
	      "connect to a closed passive endpoint: FI_ECONNREFUSED (%d)", t);
	fi_close(&e3->fid);

	test_connreq_lifetimes(&A, &B);

	/*
	 * No such node on the fabric: unreachable, at once. The device says
	 * so only once its peer table had 3 s to learn since a member link
	 * last came up (kmod/peer.c, xnic_peer_unreachable()); before that
	 * the request times out. A link event late in a cold boot can
	 * restart that window, so a time-out is followed by one more try.
	 */
	((struct sockaddr_in6 *)q.addr)->sin6_addr.s6_addr[15] ^= 0x55;
	for (i = 0; i < 2; i++) {
		e3 = ep_open(&A, A.info);
		MUST(fi_connect(e3, q.addr, NULL, 0));
		t = eq_next(A.eq, &ev, sizeof(ev), &ee);
		ok = ee.fid == &e3->fid;
		fi_close(&e3->fid);
		if (t != -FI_ETIMEDOUT)
			break;
		printf("# connect to an unknown node timed out: the peer table was still learning, again\n");
	}
	CHECK(t == -FI_EHOSTUNREACH && ok,
	      "connect to a node the fabric does not know: FI_EHOSTUNREACH (%d)",
	      t);

	printf("1..%d\n", num);
	if (failed)
		printf("# %d of %d failed\n", failed, num);
	return failed ? 1 : 0;
}
