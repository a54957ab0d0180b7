/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fi_xnic - the libfabric provider "xnic" (private header).
 *
 * Built against libfabric's public <rdma/providers/fi_prov.h> only: every
 * fid object here is ours. One concern per file:
 *   fi_xnic_prov.c    provider entry, fi_getinfo, fabric
 *   fi_xnic_attr.c    the attributes we offer and hint matching (pure)
 *   fi_xnic_domain.c  domain (one xnic context + PD), MR, async events
 *   fi_xnic_eq.c      event queue
 *   fi_xnic_cq.c      completion queue (CQE -> fi_cq_*_entry)
 *   fi_xnic_cm.c      passive endpoint, connect/accept/reject/shutdown
 *   fi_xnic_ep.c      FI_EP_MSG endpoint, send/recv and RMA
 *   fi_xnic_stub.c    -FI_ENOSYS for the operations not offered
 *   fi_xnic_rdm*.c, fi_xnic_av.c: the FI_EP_RDM endpoint (fi_xnic_rdm.h)
 *
 * Addresses are FI_SOCKADDR_IN6 (struct sockaddr_in6; ofi_rxm in libfabric
 * 1.17 layers only on IPv4/IPv6 address formats, not FI_SOCKADDR_IB): the
 * address fe80::786e:6963:<node id> names an xnic device, sin6_port is a
 * port; the xnic CM service id is FI_XNIC_PS << 16 | port. No IP is used.
 */
#ifndef FI_XNIC_H
#define FI_XNIC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>

#include "../libuser/xnic.h"

#define FI_XNIC_NAME		"xnic"
#define FI_XNIC_VERSION		FI_VERSION(0, 1)
#define FI_XNIC_API		FI_VERSION(1, 17)

#define FI_XNIC_PS		0x013FULL	/* service id prefix (RDMA_PS_IB) */
#define FI_XNIC_CM_DATA_MAX	XNIC_CM_PRIVATE_MAX
#define FI_XNIC_DEF_TIMEOUT_MS	10000		/* connect, accept */
#define FI_XNIC_MR_CACHE_COUNT	1024		/* mr_cache_max_count */
#define FI_XNIC_MR_CACHE_SIZE	(512UL << 20)	/* mr_cache_max_size */
/*
 * fi_getinfo flag libfabric gives when a utility provider asks for core
 * providers to layer on (libfabric's internal OFI_CORE_PROV_ONLY, stable
 * since 1.5; fabtests use the same value).
 */
#define FI_XNIC_CORE_PROV_ONLY	(1ULL << 59)

extern struct fi_provider fi_xnic_prov;

#define XNIC_WARN(subsys, ...) FI_WARN(&fi_xnic_prov, subsys, __VA_ARGS__)
#define XNIC_DBG(subsys, ...) FI_DBG(&fi_xnic_prov, subsys, __VA_ARGS__)
#define XNIC_INFO(subsys, ...) FI_INFO(&fi_xnic_prov, subsys, __VA_ARGS__)

/* An xnic endpoint address (see above). */
#define fi_xnic_addr sockaddr_in6

/* fi_xnic_attr.c */
void fi_xnic_addr_init(struct fi_xnic_addr *a, uint32_t node, uint16_t port);
int fi_xnic_addr_check(const void *addr, size_t len);
uint32_t fi_xnic_addr_node(const struct fi_xnic_addr *a);
uint16_t fi_xnic_addr_port(const struct fi_xnic_addr *a);
uint64_t fi_xnic_addr_sid(const struct fi_xnic_addr *a);

/**
 * struct fi_xnic_limits - what a device offers
 * @name: its name (the domain name)
 * @attr: its attributes, xnic_ctx_info()
 */
struct fi_xnic_limits {
	char name[XNIC_NAME_MAX];
	struct xnic_ctx_attr attr;
};

int fi_xnic_info_for(uint32_t version, enum fi_ep_type type,
		     const struct fi_xnic_limits *lim,
		     const struct fi_info *hints, struct fi_info **infop);
/* fi_xnic_rdm_attr.c */
int fi_xnic_rdm_fill(uint32_t version, const struct fi_xnic_limits *lim,
		     const struct fi_info *hints, struct fi_info *fi);
int fi_xnic_check_hints(uint32_t version, const struct fi_info *hints);

/* ------------------------------ fabric ------------------------------ */

struct fi_xnic_fabric {
	struct fid_fabric fabric_fid;
};

int fi_xnic_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fab,
			void *context);

/* ------------------------------ domain ------------------------------ */

struct fi_xnic_ep;

struct fi_xnic_domain {
	struct fid_domain domain_fid;
	struct xnic_ctx *ctx;
	struct xnic_pd *pd;
	struct fi_xnic_limits lim;
	pthread_mutex_t lock;		/* @eps, the async thread */
	struct fi_xnic_ep *eps;		/* with a QP */
	pthread_t async_thread;
	bool async_running;
	int stop_fd;			/* eventfd that stops the thread */
	int refs;			/* CQs, MRs, EPs */
	struct xnic_mr_cache *mr_cache;	/* the RDM rendezvous's MRs */
};

int fi_xnic_domain_open(struct fid_fabric *fabric, struct fi_info *info,
			struct fid_domain **dom, void *context);

/*
 * The provider's helper threads (the domain's async events, a listener's
 * requests) sleep in poll(2) on their descriptor and on an eventfd that
 * stops them, so that they neither wake up idle nor keep a close waiting.
 */
bool fi_xnic_thread_wait(int fd, int stop_fd);
void fi_xnic_thread_stop(pthread_t thread, int stop_fd);
void fi_xnic_domain_add_ep(struct fi_xnic_domain *d, struct fi_xnic_ep *ep);
void fi_xnic_domain_del_ep(struct fi_xnic_domain *d, struct fi_xnic_ep *ep);

struct fi_xnic_mr {
	struct fid_mr mr_fid;
	struct fi_xnic_domain *domain;
	struct xnic_mr *mr;		/* NULL for a zero-length region */
	uint32_t lkey;
};

/* -------------------------------- EQ -------------------------------- */

struct fi_xnic_eq_ev;

struct fi_xnic_eq {
	struct fid_eq eq_fid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fi_xnic_eq_ev *head, *tail;
	int fd;				/* eventfd: readable while not empty */
	unsigned int refs;		/* bound endpoints */
};

int fi_xnic_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		    struct fid_eq **eq, void *context);
/* Queue an event (data: a struct fi_eq_cm_entry or fi_eq_entry). */
int fi_xnic_eq_put(struct fi_xnic_eq *eq, uint32_t event, const void *data,
		   size_t len);
/* Queue FI_CONNREQ; its fi_info is the provider's until read. */
int fi_xnic_eq_put_connreq(struct fi_xnic_eq *eq,
			   const struct fi_eq_cm_entry *e, size_t len);
/* Queue an error entry about @fid with CM data @cm (may be NULL). */
int fi_xnic_eq_put_err(struct fi_xnic_eq *eq, fid_t fid, void *context,
		       int err, int prov_errno, const void *cm, size_t cmlen);
/* Drop every queued event about @fid (its endpoint is being closed). */
void fi_xnic_eq_purge(struct fi_xnic_eq *eq, fid_t fid);

/* -------------------------------- CQ -------------------------------- */

struct fi_xnic_cq_sw;
struct fi_xnic_rdm_ep;

/* An FI_EP_MSG endpoint's QP on a CQ, and its count of WQEs in flight. */
struct fi_xnic_cq_qp {
	uint32_t qpn;
	unsigned int *out;		/* struct fi_xnic_ep.out[] */
};
#define FI_XNIC_CQ_MAX_RDM	8	/* RDM endpoints bound to one CQ */

/*
 * A CQ reads its xnic CQ (FI_EP_MSG endpoints) or, once an FI_EP_RDM
 * endpoint is bound to it, the software ring @sw the endpoints' progress
 * fills (never both: fi_ep_bind refuses to mix them).
 */
struct fi_xnic_cq {
	struct fid_cq cq_fid;
	struct fi_xnic_cq_sw *sw;	/* ring of @sw_size entries */
	size_t sw_size, sw_head, sw_count;
	struct fi_xnic_rdm_ep *rdm[FI_XNIC_CQ_MAX_RDM];
	unsigned int nrdm;
	struct fi_xnic_domain *domain;
	struct xnic_cq *cq;
	enum fi_cq_format format;
	pthread_mutex_t lock;
	/* read: progressing @rdm's endpoints; write: one leaves @rdm */
	pthread_rwlock_t rdm_lock;
	bool err_pending;		/* @err holds an unread error */
	struct xnic_cqe err;
	int cq_err;			/* xnic_poll_cq() gave -EIO */
	struct fi_xnic_cq_qp *qps;	/* by qpn, @nqps of @qps_size */
	unsigned int nqps, qps_size;
	unsigned int qps_last;		/* @qps index of the last CQE's QP */
	unsigned int refs;		/* bound endpoints */
	unsigned int cqe_budget;	/* @cq entries no WQE may still fill */
	int wait_fd;			/* FI_GETWAIT: epoll set */
	int sw_fd;			/* eventfd: software entries */
	bool sw_armed;			/* a waiter wants @sw_fd written */
};

int fi_xnic_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		    struct fid_cq **cq, void *context);
int fi_xnic_cq_arm_all(struct fi_xnic_cq *cq);
int fi_xnic_cqe_take(unsigned int *budget, unsigned int need);
void fi_xnic_cqe_give(unsigned int *budget, unsigned int n);
int fi_xnic_cq_bind_check(const struct fi_xnic_cq *cq,
			  const struct fi_xnic_domain *d, uint64_t flags,
			  const struct fi_xnic_cq *tx,
			  const struct fi_xnic_cq *rx);
int fi_xnic_cq_add_qp(struct fi_xnic_cq *cq, uint32_t qpn, unsigned int *out);
void fi_xnic_cq_del_qp(struct fi_xnic_cq *cq, uint32_t qpn, bool destroyed);

/*
 * FI_RM_ENABLED on FI_EP_MSG: every WQE may complete (a WQE posted without
 * a completion wanted still completes on error or flush), so a post takes
 * one entry of its CQ's cqe_budget (-FI_EAGAIN when there is none) and
 * reading the CQE gives it back. A WQE the application wants no completion
 * of is posted signalled all the same, with this wr_id: fi_cq_read drops
 * its successful CQE (the entry comes back) and reports an error one with
 * op_context NULL.
 */
extern const char fi_xnic_wr_quiet;
#define FI_XNIC_WR_QUIET	((uint64_t)(uintptr_t)&fi_xnic_wr_quiet)

/* ----------------------------- endpoints ---------------------------- */

struct fi_xnic_pep;

/*
 * A connection request, handed to the user as fi_info.handle; its
 * lifetime rules are in fi_xnic_connreq.c.
 */
struct fi_xnic_connreq {
	struct fid fid;
	struct fi_xnic_pep *pep;	/* holds a reference on it */
	struct xnic_cm_req req;
	struct fi_xnic_connreq *prev, *next;	/* registry (xnic_cr_lock) */
	unsigned int refs;			/* (xnic_cr_lock) */
	bool handle;	/* the handle holds a reference (xnic_cr_lock) */
	bool answered;	/* accepted or rejected (pep->lock) */
};

struct fi_xnic_pep {
	struct fid_pep pep_fid;
	struct fi_info *info;
	struct fi_xnic_eq *eq;
	struct xnic_ctx *ctx;
	struct xnic_cm_listener *listener;
	struct fi_xnic_addr addr;
	pthread_mutex_t lock;		/* the listener's socket */
	pthread_t thread;
	int stop_fd;			/* eventfd that stops @thread */
	unsigned int refs;	/* the handle, each request (xnic_cr_lock) */
	bool listening;
	bool closed;			/* (lock) */
};

void fi_xnic_pep_put(struct fi_xnic_pep *pep);
struct fi_xnic_connreq *fi_xnic_connreq_new(struct fi_xnic_pep *pep,
					    const struct xnic_cm_req *req,
					    struct fi_info *info);
void fi_xnic_connreq_undo(struct fi_xnic_connreq *cr);
struct fi_xnic_connreq *fi_xnic_connreq_take(fid_t handle);
void fi_xnic_connreq_release(struct fi_xnic_connreq *cr);
int fi_xnic_connreq_accept(struct fi_xnic_connreq *cr, struct xnic_qp *qp,
			   const void *data, size_t len);
int fi_xnic_connreq_reject(struct fi_xnic_pep *pep, fid_t handle,
			   const void *param, size_t len);
void fi_xnic_connreq_unread(struct fi_info *info);
void fi_xnic_connreq_abort_all(struct fi_xnic_pep *pep);

int fi_xnic_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		       struct fid_pep **pep, void *context);
int fi_xnic_timeout_ms(void);
int fi_xnic_listen(struct xnic_ctx *ctx, struct fi_xnic_addr *addr,
		   struct xnic_cm_listener **lp);

enum fi_xnic_ep_state {
	FI_XNIC_EP_IDLE,
	FI_XNIC_EP_CONNECTING,		/* connect or accept thread runs */
	FI_XNIC_EP_CONNECTED,
	FI_XNIC_EP_SHUTDOWN,
};

struct fi_xnic_ep {
	struct fid_ep ep_fid;
	struct fi_xnic_domain *domain;
	struct fi_info *info;
	struct fi_xnic_eq *eq;
	struct fi_xnic_cq *tx_cq, *rx_cq;
	bool tx_selective;		/* FI_SELECTIVE_COMPLETION on tx */
	bool rx_cq_data;		/* FI_RX_CQ_DATA mode granted */
	struct xnic_qp *qp;
	/*
	 * WQEs posted whose CQE fi_cq_read has not taken: [0] completing on
	 * the send CQ, [1] on the receive CQ when it is another one.
	 */
	unsigned int out[2];
	pthread_mutex_t tx_lock, rx_lock;
	enum fi_xnic_ep_state state;
	struct fi_xnic_connreq *connreq;	/* passive side */
	struct fi_xnic_addr peer;
	uint8_t cm_data[FI_XNIC_CM_DATA_MAX];
	size_t cm_len;
	pthread_t cm_thread;
	bool cm_thread_running;
	struct fi_xnic_ep *next;	/* domain->eps */
};

int fi_xnic_endpoint(struct fid_domain *domain, struct fi_info *info,
		     struct fid_ep **ep, void *context);
void fi_xnic_ep_qp_fatal(struct fi_xnic_ep *ep);
extern struct fi_ops_cm fi_xnic_ep_cm_ops;
extern struct fi_ops_ep fi_xnic_ep_ops;
int fi_xnic_getopt(fid_t fid, int level, int optname, void *optval,
		   size_t *optlen);
int fi_xnic_ep_cm_start(struct fi_xnic_ep *ep, bool accept);

/* Map a negative errno of libxnic to a negative FI_ errno. */
static inline int fi_xnic_err(int err)
{
	return err;	/* FI_E* values equal errno values on Linux */
}

#endif /* FI_XNIC_H */

/* fi_xnic_stub.c: -FI_ENOSYS for what we do not offer */
int fi_xnic_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int fi_xnic_no_control(struct fid *fid, int command, void *arg);
int fi_xnic_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
			void **ops, void *context);
int fi_xnic_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			 struct fid_wait **waitset);
int fi_xnic_no_sep(struct fid_domain *domain, struct fi_info *info,
		   struct fid_ep **sep, void *context);
int fi_xnic_no_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
			 struct fid_cntr **cntr, void *context);
int fi_xnic_no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
			 struct fid_poll **pollset);
int fi_xnic_no_stx(struct fid_domain *domain, struct fi_tx_attr *attr,
		   struct fid_stx **stx, void *context);
int fi_xnic_no_srx(struct fid_domain *domain, struct fi_rx_attr *attr,
		   struct fid_ep **rx_ep, void *context);
int fi_xnic_no_query_atomic(struct fid_domain *domain,
			    enum fi_datatype datatype, enum fi_op op,
			    struct fi_atomic_attr *attr, uint64_t flags);
int fi_xnic_no_query_collective(struct fid_domain *domain,
				enum fi_collective_op coll,
				struct fi_collective_attr *attr, uint64_t flags);
ssize_t fi_xnic_no_cancel(fid_t fid, void *context);
int fi_xnic_no_setopt(fid_t fid, int level, int optname, const void *optval,
		      size_t optlen);
int fi_xnic_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		      struct fid_ep **tx_ep, void *context);
int fi_xnic_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		      struct fid_ep **rx_ep, void *context);
ssize_t fi_xnic_no_size_left(struct fid_ep *ep);
int fi_xnic_no_setname(fid_t fid, void *addr, size_t addrlen);
int fi_xnic_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int fi_xnic_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		       size_t paramlen);
int fi_xnic_no_listen(struct fid_pep *pep);
int fi_xnic_no_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int fi_xnic_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		      size_t paramlen);
int fi_xnic_no_shutdown(struct fid_ep *ep, uint64_t flags);
int fi_xnic_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		    struct fid_mc **mc, void *context);

#ifndef container_of
#define container_of(ptr, type, field) \
	((type *)((char *)(ptr) - offsetof(type, field)))
#endif
