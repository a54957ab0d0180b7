/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic - verbs objects: ucontext, PD, MR, CQ, QP, and the shared rings they
 * map into userspace (layouts in uapi/xnic-abi.h).
 *
 * Lifetimes: ib_core allocates and frees the objects (INIT_RDMA_OBJ_SIZE);
 * our destroy callbacks must not return while the engine still uses the
 * object. MRs and QPs carry a refcount the engine takes for each use and a
 * completion the destroy path waits on.
 */
#ifndef XNIC_VERBS_H
#define XNIC_VERBS_H

#include <linux/completion.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "../uapi/xnic-abi.h"
#include "transport.h"

struct xnic_dev;

/**
 * struct xnic_mmap_entry - an rdma_user_mmap entry for xnic_vmalloc_user() memory
 * @rdma_entry: ib_core's entry (key = mmap offset)
 * @address: xnic_vmalloc_user() memory. Once the entry is inserted it owns the
 *	memory: xnic_mmap_free() vfree()s it when ib_core drops the entry's
 *	last reference, i.e. after rdma_user_mmap_entry_remove() and after any
 *	mmap() in progress. Pages already mapped into a process stay alive
 *	through the page references remap_vmalloc_range() took.
 */
struct xnic_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *address;
};

/**
 * struct xnic_ring - kernel view of a ring shared with userspace
 * @buf: xnic_vmalloc_user() memory: header, then @nr entries
 * @hdr: == @buf
 * @entries: first entry
 * @nr: entries, a power of two
 * @elem_size: bytes per entry
 * @size: mapping size, bytes (page aligned)
 * @kidx: the kernel's own index (consumer of SQ/RQ, producer of CQ);
 *	authoritative, never read back from @hdr
 * @mmap: userspace mapping entry, NULL for none
 */
struct xnic_ring {
	void *buf;
	struct xnic_ring_hdr *hdr;
	void *entries;
	u32 nr;
	u32 elem_size;
	size_t size;
	u32 kidx;
	struct rdma_user_mmap_entry *mmap;
};

/**
 * struct xnic_ucontext - one process's context on a device
 * @ibuc: ib_core's ucontext
 * @page: the shared struct xnic_ctx_page (xnic_vmalloc_user(), PAGE_SIZE)
 * @page_mmap: its mmap entry
 * @qps: db_index -> struct xnic_qp (xa_alloc_bh; lookups under the
 *	xarray's lock, so a QP found there still holds its table reference)
 * @engine_node: entry in the engine's context list (its context mutex)
 */
struct xnic_ucontext {
	struct ib_ucontext ibuc;
	struct xnic_ctx_page *page;
	struct rdma_user_mmap_entry *page_mmap;
	struct xarray qps;
	struct list_head engine_node;
	struct file *db_file;
	int db_fd;
};

/** struct xnic_pd - protection domain @ibpd: ib_core's PD */
struct xnic_pd {
	struct ib_pd ibpd;
};

/**
 * struct xnic_mr - memory region of pinned user pages
 * @ibmr: ib_core's MR; lkey == rkey == @key
 * @pd: owning PD
 * @umem: pinned pages (ib_umem_get())
 * @pages: page array built from @umem, @npages long
 * @npages: pages
 * @iova: first virtual address covered
 * @length: bytes covered
 * @offset: offset of @iova within pages[0]
 * @access: IB_ACCESS_* flags
 * @key: (table index << 8) | generation; the generation changes on every
 *	registration so a stale key never matches a new MR
 * @ref: one for the table, one per engine user
 * @released: completed when @ref drops to zero
 * @rcu: deferred free: xnic_mr_get() looks keys up under RCU
 * @watch: with @stale: the mmu interval notifier on the range (mr_watch.c)
 * @stale: the context page's mr_stale byte of the MR's watch slot, or NULL
 * @watch_seq: @watch's sequence when it went live (mmu_interval_read_begin)
 */
struct xnic_mr {
	struct ib_mr ibmr;
	struct xnic_pd *pd;
	struct ib_umem *umem;
	struct page **pages;
	unsigned long npages;
	u64 iova;
	u64 length;
	unsigned int offset;
	int access;
	u32 key;
	refcount_t ref;
	struct completion released;
	struct rcu_head rcu;
	struct mmu_interval_notifier watch;
	u8 *stale;
	unsigned long watch_seq;
};

/**
 * struct xnic_cq - completion queue
 * @ibcq: ib_core's CQ
 * @ring: CQE ring (kernel produces)
 * @lock: serialises the producer (xnic_cq_post()) and the arming
 *	(req_notify_cq); spin_lock_bh
 * @notify: armed state: 0, IB_CQ_NEXT_COMP or IB_CQ_SOLICITED (@lock)
 * @error: overflowed or otherwise broken; no more CQEs (@lock)
 * @cqn: number for messages
 */
struct xnic_cq {
	struct ib_cq ibcq;
	struct xnic_ring ring;
	spinlock_t lock;		/* producer side and @notify, @error */
	u8 notify;
	bool error;
	u32 cqn;
};

/**
 * struct xnic_qp - reliable connected queue pair
 * @ibqp: ib_core's QP (qp_num is the QPN)
 * @xdev: device
 * @uctx: owning context (the doorbell page)
 * @pd: protection domain
 * @scq: send CQ
 * @rcq: receive CQ
 * @sq: send ring (user produces); @sq.kidx is engine-owned
 * @rq: receive ring (user produces); @rq.kidx is engine-owned
 * @db_index: slot in the context's doorbell bitmap
 * @mutex: serialises modify_qp and query_qp (ib_core runs them in
 *	parallel on one QP; destroy_qp is exclusive with both)
 * @state_lock: guards writes of @state and of the connection fields below
 *	(spin_lock_bh)
 * @state: IB_QPS_RESET, INIT, RTR, RTS or ERR. Written under @state_lock
 *	with smp_store_release(); a reader that smp_load_acquire()s RTR or
 *	RTS also sees the connection fields that transition set.
 * @remote_node: peer node id (set at RTR)
 * @dest_qpn: peer QPN (set at RTR)
 * @sq_psn: first PSN the SQ sends (set at RTS)
 * @rq_psn: first PSN the RQ expects (set at RTR)
 * @sq_sig_all: every WQE is signaled
 * @path_mtu: payload bytes per frame, bytes
 * @qp_access: IB_ACCESS_REMOTE_* the peer may use on this QP (INIT)
 * @timeout: local ACK timeout, IBTA encoding 4.096 us * 2^timeout (RTS)
 * @retry_cnt: transport retries, 0..7 (RTS)
 * @rnr_retry: RNR retries, 0..7, 7 = infinite (RTS)
 * @min_rnr_timer: RNR NAK timer, IBTA encoding (RTR)
 * @max_rd_atomic: RDMA READs outstanding as requester (RTS)
 * @max_dest_rd_atomic: RDMA READs outstanding as responder (RTR)
 * @tp_ready: xnic_tp_qp_init() succeeded and xnic_tp_qp_release() is due.
 *	Written at create, and by the engine thread while it resets the QP.
 * @ref: one for the QP table, one per engine user
 * @released: completed when @ref drops to zero
 * @eng_flags: XNIC_QP_ENG_* bits (engine.c; atomic bitops, list
 *	membership changes under the engine's lock)
 * @engine_node: entry in the engine's pending or active list (engine lock
 *	for the pending list, engine thread only for the active list)
 * @tp: transport state, owned by the engine thread (transport.h)
 * @tclass: traffic class, XNIC_TCLASS_* (set at creation, credit.c)
 * @cm_id: communication id of the CM connection this QP is bound to
 *	(0: none); guarded by the device's CM lock (cm.c): the CM sends a
 *	DREQ when the QP is destroyed, reset or moved to the error state
 * @owner_uid: effective uid of the process that created the QP: only a CM
 *	request of that uid (or with CAP_NET_ADMIN) ties it (xnic_cm_bind())
 * @post_ns: local_clock() of the QP's last post the engine saw (a
 *	wakeup syscall or a doorbell; a hint written without a lock:
 *	xnic_engine_stream())
 * @post_epsn: the responder's expected PSN at that post (a hint)
 * @post_streak: posts in a row that looked like a stream (a hint)
 */
struct xnic_qp {
	struct ib_qp ibqp;
	struct xnic_dev *xdev;
	struct xnic_ucontext *uctx;
	struct xnic_pd *pd;
	struct xnic_cq *scq;
	struct xnic_cq *rcq;
	struct xnic_ring sq;
	struct xnic_ring rq;
	u32 db_index;
	struct mutex mutex;		/* modify_qp, query_qp */
	spinlock_t state_lock;		/* writers of @state and fields below */
	enum ib_qp_state state;
	u16 remote_node;
	u32 dest_qpn;
	u32 sq_psn;
	u32 rq_psn;
	bool sq_sig_all;
	u32 path_mtu;
	int qp_access;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	bool tp_ready;
	refcount_t ref;
	struct completion released;
	unsigned long eng_flags;
	struct list_head engine_node;
	struct xnic_qp_tp tp;
	u8 tclass;
	u32 cm_id;
	kuid_t owner_uid;
	u64 post_ns;
	u32 post_epsn;
	u32 post_streak;
};

static inline struct xnic_ucontext *to_xuctx(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct xnic_ucontext, ibuc);
}

static inline struct xnic_pd *to_xpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct xnic_pd, ibpd);
}

static inline struct xnic_mr *to_xmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct xnic_mr, ibmr);
}

static inline struct xnic_cq *to_xcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct xnic_cq, ibcq);
}

static inline struct xnic_qp *to_xqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct xnic_qp, ibqp);
}

/*
 * Messages: debug output names the function; anything a user or a peer can
 * trigger at will is rate limited.
 */
#define xnic_dbg(xdev, fmt, ...)					\
	ibdev_dbg(&(xdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define xnic_err_rl(xdev, fmt, ...)					\
	ibdev_err_ratelimited(&(xdev)->ibdev, fmt, ##__VA_ARGS__)
#define xnic_warn_rl(xdev, fmt, ...)					\
	ibdev_warn_ratelimited(&(xdev)->ibdev, fmt, ##__VA_ARGS__)

/* verbs.c: the ib_device_ops of the datapath, set by xnic_dev_add() */
extern const struct ib_device_ops xnic_verbs_ops;
u32 xnic_dev_payload_mtu(struct xnic_dev *xdev);

/* ring.c */
void *xnic_vmalloc_user(size_t size);
int xnic_ring_alloc(struct xnic_ring *ring, u32 nr, u32 elem_size);
void xnic_ring_free(struct xnic_ring *ring);
int xnic_ring_map(struct xnic_ring *ring, struct ib_ucontext *ibuc, u64 *key);
struct rdma_user_mmap_entry *xnic_mmap_insert(struct ib_ucontext *ibuc,
					      void *address, size_t size,
					      u64 *key);
void xnic_mmap_free(struct rdma_user_mmap_entry *rdma_entry);

/* verbs.c, mr.c, cq.c, qp.c: ib_device_ops implementations */
struct ib_mr *xnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt_addr, int access,
			       struct ib_udata *udata);
int xnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int xnic_udata_read(struct ib_udata *udata, void *req, size_t size);
int xnic_mr_watch_start(struct xnic_mr *mr, struct ib_udata *udata,
			u64 start, u64 length);
void xnic_mr_watch_pinned(struct xnic_mr *mr);
void xnic_mr_watch_stop(struct xnic_mr *mr);
int xnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
int xnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int xnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int xnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		   struct ib_udata *udata);
int xnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int xnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init_attr);
int xnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

/* mr.c: used by the engine */
struct xnic_mr *xnic_mr_get(struct xnic_dev *xdev, u32 key,
			    struct xnic_pd *pd, int access, u64 addr, u64 len,
			    int *status);
void xnic_mr_put(struct xnic_mr *mr);
int xnic_mr_copy_to(struct xnic_mr *mr, u64 addr, const void *src, u32 len);
int xnic_mr_copy_from(struct xnic_mr *mr, u64 addr, void *dst, u32 len);
int xnic_mr_copy_from_skb(struct xnic_mr *mr, u64 addr,
			  const struct sk_buff *skb, int offset, u32 len);
int xnic_mr_scatter_skb(struct xnic_dev *xdev, struct xnic_pd *pd,
			const struct xnic_sge *sge, unsigned int num_sge,
			u32 off, const struct sk_buff *skb, int skb_off,
			u32 len);

/* cq.c: used by the engine */
int xnic_cq_post(struct xnic_cq *cq, const struct xnic_cqe *cqe,
		 bool solicited);
void xnic_qp_cq_post(struct xnic_qp *qp, struct xnic_cq *cq,
		     const struct xnic_cqe *cqe, bool solicited);

/* qp.c: used by the engine */
struct xnic_qp *xnic_qp_get(struct xnic_dev *xdev, u32 qpn);
struct xnic_qp *xnic_uctx_qp_get(struct xnic_ucontext *uctx,
				 unsigned long slot);
int xnic_db_open(struct xnic_ucontext *uctx);
void xnic_db_publish(struct xnic_ucontext *uctx);
void xnic_db_abort(struct xnic_ucontext *uctx);
void xnic_db_close(struct xnic_ucontext *uctx);
void xnic_qp_put(struct xnic_qp *qp);
void xnic_qp_to_error(struct xnic_qp *qp, u32 reason);
void xnic_qp_do_reset(struct xnic_qp *qp);

#endif /* XNIC_VERBS_H */
