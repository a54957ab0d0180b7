/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxnic - userspace library for xnic RDMA devices.
 *
 * Control path: ib_uverbs write() commands on /dev/infiniband/uverbsN.
 * Datapath: shared rings and doorbell records (uapi/xnic-abi.h), driven by
 * the static inline functions at the end of this file: posting work and
 * reaping completions makes no system call (except the rare engine wakeup
 * of rule D1). Documentation/libxnic.rst describes the whole API.
 *
 * Errors: functions returning int return 0 (or a count) or a negative
 * errno; they never print. xnic_strerror() turns such a value into a
 * message.
 *
 * Threads: the control path (open, create, destroy, connect) may be called
 * from any thread. The datapath is not locked: one thread at a time may
 * post to a QP's SQ, one to its RQ, and one may poll or wait on a CQ (the
 * liburing rule). Destroying an object while another thread uses it is a
 * bug.
 */
#ifndef XNIC_LIB_H
#define XNIC_LIB_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__has_include)
#if __has_include("../uapi/xnic-abi.h")
#include "../uapi/xnic-abi.h"	/* in the source tree */
#else
#include <xnic-abi.h>		/* installed beside this header */
#endif
#else
#include "../uapi/xnic-abi.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define XNIC_NAME_MAX	64

/* ============================ devices ============================== */

/**
 * struct xnic_device_info - an RDMA device as seen in sysfs
 * @name: RDMA device name, e.g. "xnic0"
 * @uverbs: its ib_uverbs character device, e.g. "/dev/infiniband/uverbs0"
 * @node_guid: node GUID, host order
 * @abi_version: the driver's uverbs ABI version
 */
struct xnic_device_info {
	char name[XNIC_NAME_MAX];
	char uverbs[XNIC_NAME_MAX];
	uint64_t node_guid;
	unsigned int abi_version;
};

/**
 * xnic_device_lookup() - find an RDMA device and its uverbs node by name
 * @name: RDMA device name
 * @info: filled on success
 *
 * Reads /sys/class/infiniband/@name and /sys/class/infiniband_verbs, as
 * the caller's network namespace sees them.
 * Return: 0; -ENODEV when no such RDMA device exists, or it belongs to
 * another network namespace (exclusive mode, admin-guide.rst); -ENXIO when it has
 * no uverbs node (ib_uverbs not loaded); -EINVAL for a bad name.
 */
int xnic_device_lookup(const char *name, struct xnic_device_info *info);

/**
 * xnic_strerror() - message for an error returned by this library
 * @err: a negative errno returned by an xnic_* function
 * Return: a static string.
 */
const char *xnic_strerror(int err);

/**
 * xnic_wc_status_str() - name of a completion status
 * @status: enum xnic_wc_status (struct xnic_cqe.status)
 * Return: a static string, e.g. "remote access error".
 */
const char *xnic_wc_status_str(unsigned int status);

/**
 * xnic_wc_opcode_str() - name of a completion opcode
 * @opcode: enum xnic_wc_opcode (struct xnic_cqe.opcode)
 * Return: a static string, e.g. "RDMA_WRITE".
 */
const char *xnic_wc_opcode_str(unsigned int opcode);

/* ============================ objects ============================== */

struct xnic_ctx;
struct xnic_pd;

/* Memory region access flags (values of enum ib_uverbs_access_flags). */
#define XNIC_ACCESS_LOCAL_WRITE		(1U << 0)
#define XNIC_ACCESS_REMOTE_WRITE	(1U << 1)	/* needs LOCAL_WRITE */
#define XNIC_ACCESS_REMOTE_READ		(1U << 2)

/**
 * struct xnic_ctx_attr - what a context learnt from the kernel
 * @node_id: this device's node id on the fabric
 * @payload_mtu: payload bytes per frame on the smallest member link
 * @port_state: IB port state (4 = ACTIVE) when the context was opened
 * @active_mtu: IB path MTU of the port, bytes (256..4096)
 * @max_msg_size: largest message, bytes
 * @max_sge: SGEs per SQ WQE
 * @max_recv_sge: SGEs per RQ WQE
 * @max_inline: bytes of inline data per SQ WQE
 * @max_qp_wr: largest SQ or RQ, entries
 * @max_cqe: largest CQ, entries
 * @num_comp_vectors: completion vectors of the device
 */
struct xnic_ctx_attr {
	uint32_t node_id;
	uint32_t payload_mtu;
	uint32_t port_state;
	uint32_t active_mtu;
	uint32_t max_msg_size;
	uint32_t max_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	uint32_t max_qp_wr;
	uint32_t max_cqe;
	uint32_t num_comp_vectors;
};

/**
 * struct xnic_port_attr - result of xnic_query_port()
 * @state: IB port state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE
 * @phys_state: IB physical port state (5 = LINK_UP)
 * @active_mtu: path MTU, bytes
 * @max_mtu: largest path MTU, bytes
 * @max_msg_size: largest message, bytes
 */
struct xnic_port_attr {
	uint32_t state;
	uint32_t phys_state;
	uint32_t active_mtu;
	uint32_t max_mtu;
	uint32_t max_msg_size;
};

#define XNIC_PORT_ACTIVE	4

/**
 * struct xnic_mr - a registered memory region
 * @lkey: local key (struct xnic_sge.lkey)
 * @rkey: remote key (given to the peer for RDMA WRITE and READ)
 * @addr: first byte registered
 * @length: bytes registered
 * @access: XNIC_ACCESS_* flags
 *
 * The fields after @access are the library's.
 */
struct xnic_mr {
	uint32_t lkey;
	uint32_t rkey;
	void *addr;
	size_t length;
	unsigned int access;
	/* private */
	struct xnic_pd *pd;
	uint32_t handle;
	struct xnic_mr *prev, *next;
};

/**
 * struct xnic_cq - a completion queue
 *
 * The first fields are read and written by the inline datapath functions
 * below; do not touch them. The rest belongs to the library.
 */
struct xnic_cq {
	/* datapath */
	struct xnic_ring_hdr *hdr;	/* shared ring header */
	struct xnic_cqe *cqes;		/* shared entries */
	uint32_t mask;			/* entries - 1 */
	uint32_t head;			/* our consumer index */
	/* private */
	struct xnic_ctx *ctx;
	uint32_t handle;
	uint32_t cqn;
	uint32_t entries;
	int channel_fd;			/* completion channel, -1 if none */
	int armed;			/* REQ_NOTIFY_CQ sent, no event read */
	unsigned int users;		/* QPs using this CQ */
	void *map;
	size_t map_size;
	struct xnic_cq *prev, *next;
};

/**
 * struct xnic_qp_cap - queue sizes of a QP (in: wanted; out: granted)
 * @max_send_wr: SQ entries, rounded up to a power of two >= the request
 *	(64 gives 64, 65 gives 128); 1..max_qp_wr (0: 128)
 * @max_recv_wr: RQ entries, likewise (0: 128)
 * @max_send_sge: SGEs per SQ WQE (0: the device's maximum)
 * @max_recv_sge: SGEs per RQ WQE (0: the device's maximum)
 * @max_inline_data: inline bytes per SQ WQE (0: the device's maximum)
 *
 * Zero in any field means its default, so a zero-filled struct gets what
 * a NULL cap gets. The kernel may grant more than asked (the device's
 * maximum SGEs and inline bytes); xnic_create_qp() writes back what it
 * granted.
 */
struct xnic_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

/* One direction of a QP: a ring we produce into (datapath state). */
struct xnic_wq {
	struct xnic_ring_hdr *hdr;	/* shared ring header */
	void *wqes;			/* shared entries */
	uint32_t mask;			/* entries - 1 */
	uint32_t entries;
	uint32_t tail;			/* next entry we hand out */
	uint32_t published;		/* last producer value stored */
	uint32_t head_cache;		/* last consumer value seen */
	uint32_t max_sge;
};

/**
 * struct xnic_qp - a reliable connected queue pair
 * @qpn: QP number (give it to the peer)
 * @wakeups: wakeup syscalls made for this QP (xnic_qp_wakeup()), read-only:
 *	a datapath under load should make almost none
 *
 * Everything but @qpn and @wakeups belongs to the library and its inline
 * functions.
 */
struct xnic_qp {
	uint32_t qpn;
	uint64_t wakeups;
	/* datapath */
	struct xnic_wq sq;
	struct xnic_wq rq;
	uint32_t max_inline;
	const __u32 *scq_flags;		/* &send_cq->hdr->flags */
	const __u32 *rcq_flags;		/* &recv_cq->hdr->flags */
	__u64 *db_word;		/* &ctx_page->db_bits[db_index / 64] */
	__u64 db_bit;
	__u64 *db_summary;		/* &ctx_page->db_summary */
	__u64 db_summary_bit;
	__u32 *engine_flags;		/* &ctx_page->engine_flags */
	/* private */
	struct xnic_ctx *ctx;
	struct xnic_pd *pd;
	struct xnic_cq *send_cq, *recv_cq;
	uint32_t handle;
	uint32_t db_index;
	int state;
	void *sq_map, *rq_map;
	size_t sq_map_size, rq_map_size;
	struct xnic_qp *prev, *next;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
};

/* --------------------------- control path --------------------------- */

/**
 * xnic_open() - open an xnic device
 * @name: RDMA device name, e.g. "xnic0"
 * @ctxp: the new context on success
 *
 * Opens the device's uverbs node, creates the kernel context (GET_CONTEXT),
 * checks the ABI sizes the kernel reports, maps the doorbell page and
 * queries port 1.
 * Return: 0; -ENODEV, -ENXIO (see xnic_device_lookup()); -EPROTO when the
 * device does not speak this library's ABI (not an xnic device, or another
 * version); -ENOMEM; or the errno of a failed open(), write() or mmap().
 */
int xnic_open(const char *name, struct xnic_ctx **ctxp);

/**
 * xnic_close() - close a context and free everything it still has
 * @ctx: context (NULL is ignored)
 *
 * Unmaps every ring and closes the uverbs file: the kernel destroys every
 * QP, CQ, MR and PD of the context. All pointers to them become invalid.
 */
void xnic_close(struct xnic_ctx *ctx);

/**
 * xnic_ctx_info() - what the kernel told us about the device
 * @ctx: context
 * Return: a pointer into @ctx, valid until xnic_close().
 */
const struct xnic_ctx_attr *xnic_ctx_info(const struct xnic_ctx *ctx);

/**
 * xnic_query_port() - the port's current state (QUERY_PORT)
 * @ctx: context
 * @attr: filled on success
 * Return: 0 or -errno of the command.
 */
int xnic_query_port(struct xnic_ctx *ctx, struct xnic_port_attr *attr);

/**
 * struct xnic_async_event - an asynchronous event of the device
 * @type: enum ib_event_type value, see XNIC_EVENT_*
 * @qp: the QP it is about (QP events), or NULL
 * @cq: the CQ it is about (CQ events), or NULL
 * @port: the port it is about (port events), else 0
 */
struct xnic_async_event {
	uint32_t type;
	struct xnic_qp *qp;
	struct xnic_cq *cq;
	uint32_t port;
};

/* Values of enum ib_event_type. */
#define XNIC_EVENT_CQ_ERR		0
#define XNIC_EVENT_QP_FATAL		1
#define XNIC_EVENT_QP_REQ_ERR		2
#define XNIC_EVENT_QP_ACCESS_ERR	3
#define XNIC_EVENT_COMM_EST		4
#define XNIC_EVENT_SQ_DRAINED		5
#define XNIC_EVENT_DEVICE_FATAL		8
#define XNIC_EVENT_PORT_ACTIVE		9
#define XNIC_EVENT_PORT_ERR		10
#define XNIC_EVENT_QP_LAST_WQE_REACHED	16

/**
 * xnic_get_async_event() - read one asynchronous event, without blocking
 * @ctx: context
 * @ev: filled on success
 * Return: 0; -EAGAIN when none is pending; -errno of read().
 */
int xnic_get_async_event(struct xnic_ctx *ctx, struct xnic_async_event *ev);

/**
 * xnic_async_fd() - file descriptor that polls readable with an event
 * @ctx: context
 * Return: the descriptor (owned by @ctx).
 */
int xnic_async_fd(const struct xnic_ctx *ctx);

/**
 * xnic_event_str() - name of an asynchronous event type
 * @type: XNIC_EVENT_* value
 * Return: a static string.
 */
const char *xnic_event_str(unsigned int type);

/**
 * xnic_alloc_pd() - allocate a protection domain
 * @ctx: context
 * @pdp: the new PD on success
 * Return: 0, -ENOMEM or -errno of the command.
 */
int xnic_alloc_pd(struct xnic_ctx *ctx, struct xnic_pd **pdp);

/**
 * xnic_dealloc_pd() - free a protection domain
 * @pd: PD without MRs or QPs
 * Return: 0; -EBUSY when MRs or QPs still use it; -errno of the command.
 * On error @pd stays valid.
 */
int xnic_dealloc_pd(struct xnic_pd *pd);

/**
 * xnic_reg_mr() - pin and register memory
 * @pd: protection domain
 * @addr: first byte
 * @length: bytes (> 0)
 * @access: XNIC_ACCESS_* (REMOTE_WRITE needs LOCAL_WRITE)
 * @mrp: the new MR on success
 * Return: 0; -EINVAL for a zero length or bad flags; -ENOMEM; -errno of
 * the command (e.g. -EFAULT for unmapped memory).
 */
int xnic_reg_mr(struct xnic_pd *pd, void *addr, size_t length,
		unsigned int access, struct xnic_mr **mrp);

/**
 * xnic_dereg_mr() - unregister (and unpin) a memory region
 * @mr: MR; freed on success
 * Return: 0 or -errno of the command (the MR then stays valid).
 */
int xnic_dereg_mr(struct xnic_mr *mr);

/**
 * struct xnic_mr_cache_stats - what a registration cache did
 * @hits: gets answered with a cached MR
 * @misses: gets that registered
 * @uncached: misses whose MR the cache could not keep (every entry in
 *	use, the MR larger than the cache, or no XNIC_CAP_MR_WATCH)
 * @stale: cached MRs dropped because the mapping of their range changed
 * @evicted: cached MRs dropped to make room (least recently used first)
 * @entries: MRs cached now
 * @bytes: bytes they register
 */
struct xnic_mr_cache_stats {
	uint64_t hits;
	uint64_t misses;
	uint64_t uncached;
	uint64_t stale;
	uint64_t evicted;
	uint64_t entries;
	uint64_t bytes;
};

struct xnic_mr_cache;

/**
 * xnic_mr_cache_create() - a registration cache for one PD
 * @pd: the PD of its MRs
 * @max_entries: MRs it keeps registered at most (at most
 *	XNIC_MR_WATCH_SLOTS, shared by all caches of a context; 0: none)
 * @max_bytes: bytes they may pin at most
 * @cachep: the cache on success
 *
 * MRs stay registered after xnic_mr_cache_put() and are handed out again
 * by xnic_mr_cache_get() for memory they cover, until the mapping of their
 * range changes (munmap, mremap, madvise(MADV_DONTNEED), mprotect, fork):
 * the kernel watches each cached range (XNIC_REG_MR_REQ_WATCH,
 * uapi/xnic-abi.h) and a changed one is never reused. A module without
 * XNIC_CAP_MR_WATCH gets a cache that keeps nothing. Cached MRs with
 * XNIC_ACCESS_REMOTE_* stay open to the peers that learnt their rkey while
 * cached: cache only what may stay exposed. Not async-signal-safe; callable
 * from any thread.
 *
 * Return: 0; -EINVAL when @max_entries is too large; -ENOMEM.
 */
int xnic_mr_cache_create(struct xnic_pd *pd, unsigned int max_entries,
			 size_t max_bytes, struct xnic_mr_cache **cachep);

/**
 * xnic_mr_cache_get() - an MR covering memory, cached or new
 * @cache: the cache
 * @addr: first byte
 * @length: bytes (> 0)
 * @access: XNIC_ACCESS_* the MR needs (a cached MR may grant more)
 * @mrp: the MR on success, to be given back with xnic_mr_cache_put(); its
 *	addr and length may cover more than asked
 *
 * When the registration runs out of pinnable memory (RLIMIT_MEMLOCK,
 * setrlimit(2)), unused cached MRs are deregistered, least recently used
 * first, until it fits; none when the range alone is over the limit.
 *
 * Return: 0; -EINVAL; xnic_reg_mr()'s errors (-ENOMEM: over RLIMIT_MEMLOCK
 * with every unused MR of the cache deregistered, or the range alone over
 * it).
 */
int xnic_mr_cache_get(struct xnic_mr_cache *cache, void *addr,
		      size_t length, unsigned int access,
		      struct xnic_mr **mrp);

/**
 * xnic_mr_cache_put() - give back an MR of xnic_mr_cache_get()
 * @cache: the cache it came from
 * @mr: the MR; the cache keeps it or deregisters it
 */
void xnic_mr_cache_put(struct xnic_mr_cache *cache, struct xnic_mr *mr);

/**
 * xnic_mr_cache_stats() - read a cache's counters
 * @cache: the cache
 * @stats: filled in
 */
void xnic_mr_cache_stats(struct xnic_mr_cache *cache,
			 struct xnic_mr_cache_stats *stats);

/**
 * xnic_mr_cache_destroy() - deregister every cached MR and free the cache
 * @cache: the cache (before xnic_close() of its context)
 * Return: 0; -EBUSY while an MR of it has not been put (the cache stays).
 */
int xnic_mr_cache_destroy(struct xnic_mr_cache *cache);

/**
 * xnic_create_cq() - create a completion queue
 * @ctx: context
 * @entries: completions the CQ must hold, 1..max_cqe (XNIC_MAX_CQE, the
 *	device's xnic_ctx_attr.max_cqe); the ring gets the smallest power
 *	of two >= @entries, all usable (64 gives 64, 65 gives 128)
 * @cqp: the new CQ on success
 *
 * The CQ gets its own completion channel for xnic_cq_wait(). Its ring is
 * kernel memory charged to the caller's memory cgroup.
 * Return: 0; -EINVAL; -ENOMEM (also when the ring would take the caller's
 * memory cgroup past its memory.max); -EPROTO for a malformed kernel answer;
 * -errno of a command or mmap().
 */
int xnic_create_cq(struct xnic_ctx *ctx, unsigned int entries,
		   struct xnic_cq **cqp);

/**
 * xnic_destroy_cq() - destroy a completion queue
 * @cq: CQ; freed on success
 * Return: 0; -EBUSY when a QP still uses it; -errno of the command.
 */
int xnic_destroy_cq(struct xnic_cq *cq);

/**
 * xnic_cq_arm() - ask for one completion event (REQ_NOTIFY_CQ)
 * @cq: CQ
 * @solicited_only: only a solicited receive completion raises the event
 *
 * The event arrives on xnic_cq_fd() when the next completion is written.
 * Return: 0 or -errno of the command.
 */
int xnic_cq_arm(struct xnic_cq *cq, int solicited_only);

/**
 * xnic_cq_fd() - the CQ's completion channel, for poll(2) and epoll
 * @cq: CQ
 * Return: a non-blocking descriptor owned by @cq.
 */
int xnic_cq_fd(const struct xnic_cq *cq);

/**
 * xnic_cq_read_events() - consume the completion events pending on a CQ
 * @cq: CQ
 * Return: the number consumed (0 when none), or -errno of read().
 * Each event also disarms the CQ: call xnic_cq_arm() again.
 */
int xnic_cq_read_events(struct xnic_cq *cq);

/**
 * xnic_cq_wait() - block until the CQ has a completion or is in error
 * @cq: CQ
 * @timeout_ms: milliseconds; negative waits forever; 0 only checks
 *
 * Arms the CQ, re-checks the ring (so a completion written before arming
 * is not missed), and sleeps in poll(2) on the completion channel.
 * Return: 0 when xnic_poll_cq() has something to return (a completion,
 * -EOVERFLOW or -EIO); -ETIMEDOUT; -EINTR when a signal came; -errno of a command.
 */
int xnic_cq_wait(struct xnic_cq *cq, int timeout_ms);

/**
 * xnic_create_qp() - create a reliable connected QP (in the RESET state)
 * @pd: protection domain of its MRs
 * @send_cq: CQ of SQ completions
 * @recv_cq: CQ of RQ completions (may equal @send_cq)
 * @cap: wanted sizes, or NULL for defaults (128/128 WRs, all SGEs, full
 *	inline; a zero field also means its default); updated with the
 *	granted ones
 * @qpp: the new QP on success
 *
 * The QP's rings and transport state are kernel memory charged to the
 * caller's memory cgroup.
 * Return: 0; -EINVAL for sizes beyond the device limits; -ENOMEM (also when
 * they would take the caller's memory cgroup past its memory.max);
 * -EPROTO for a malformed kernel answer; -errno of the command or mmap().
 */
int xnic_create_qp(struct xnic_pd *pd, struct xnic_cq *send_cq,
		   struct xnic_cq *recv_cq, struct xnic_qp_cap *cap,
		   struct xnic_qp **qpp);

/* xnic_qp_attr.comp_mask bits */
#define XNIC_QP_ATTR_TCLASS		(1U << 0)	/* @tclass is valid */
#define XNIC_QP_ATTR_TIMEOUT		(1U << 1)	/* @timeout */
#define XNIC_QP_ATTR_RETRY_CNT		(1U << 2)	/* @retry_cnt */
#define XNIC_QP_ATTR_RNR_RETRY		(1U << 3)	/* @rnr_retry */
#define XNIC_QP_ATTR_MIN_RNR_TIMER	(1U << 4)	/* @min_rnr_timer */

/* Reliability defaults (IBTA 1.4 section 10.3 encodings). */
#define XNIC_QP_DEF_TIMEOUT		14	/* 4.096 us * 2^14 = 67 ms */
#define XNIC_QP_DEF_RETRY_CNT		7
#define XNIC_QP_DEF_RNR_RETRY		6	/* finite, see below */
#define XNIC_QP_DEF_MIN_RNR_TIMER	12	/* 0.64 ms */
#define XNIC_QP_RNR_INFINITE		7	/* rnr_retry: for ever */

/**
 * struct xnic_qp_attr - optional QP attributes
 * @comp_mask: XNIC_QP_ATTR_* bits naming the valid fields
 * @tclass: traffic class: XNIC_TCLASS_LATENCY (0, the default: served
 *	first) or XNIC_TCLASS_BULK (1: a weighted share while class 0 waits);
 *	creation only
 * @timeout: local ACK timeout, 4.096 us * 2^@timeout, 0..31 (0: the
 *	engine's own, 200 ms); the engine adapts it to measured round trips
 * @retry_cnt: resends of an unacknowledged request before the QP fails
 *	with XNIC_WC_RETRY_EXC_ERR, 0..7
 * @rnr_retry: resends after an RNR NAK (the peer had no receive posted)
 *	before the QP fails with XNIC_WC_RNR_RETRY_EXC_ERR, 0..6, counted
 *	since the last progress; 7 (XNIC_QP_RNR_INFINITE): for ever
 * @min_rnr_timer: how long a peer waits after our RNR NAK before it
 *	resends, IBTA encoding 0..31 (1: 0.01 ms .. 12: 0.64 ms .. 31:
 *	491.52 ms; 0: 655.36 ms); a sender waits what the receiver says
 *
 * Fields are only ever appended, each with a comp_mask bit; a field whose
 * bit is clear is ignored (its default applies), as in libibverbs.
 *
 * With the defaults a SEND (or RDMA WRITE with immediate) to a peer that
 * never posts a receive fails with XNIC_WC_RNR_RETRY_EXC_ERR after 7
 * tries and 6 waits of the peer's min_rnr_timer (6 x 0.64 ms = 3.84 ms)
 * plus 7 round trips: milliseconds (Documentation/libxnic.rst has the
 * measured time). A protocol that relies on the transport to hold a
 * message until the peer posts its receive sets rnr_retry 7.
 */
struct xnic_qp_attr {
	uint32_t comp_mask;
	uint32_t tclass;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
};

/**
 * xnic_create_qp_ex() - xnic_create_qp() with creation attributes
 * @pd: protection domain of its MRs
 * @send_cq: CQ of SQ completions
 * @recv_cq: CQ of RQ completions
 * @cap: wanted sizes or NULL (see xnic_create_qp())
 * @attr: optional attributes, or NULL for the defaults
 * @qpp: the new QP on success
 * Return: as xnic_create_qp(); -EINVAL for a traffic class that does not
 * exist or unknown comp_mask bits.
 */
int xnic_create_qp_ex(struct xnic_pd *pd, struct xnic_cq *send_cq,
		      struct xnic_cq *recv_cq, struct xnic_qp_cap *cap,
		      const struct xnic_qp_attr *attr, struct xnic_qp **qpp);

/**
 * xnic_destroy_qp() - destroy a QP
 * @qp: QP; freed on success
 * Return: 0 or -errno of the command.
 */
int xnic_destroy_qp(struct xnic_qp *qp);

/**
 * xnic_connect_qp() - take a QP from RESET to RTS, connected to a peer
 * @qp: QP in the RESET state
 * @remote_node: the peer device's node id (its xnic_ctx_attr.node_id)
 * @remote_qpn: the peer QP's number
 * @local_psn: first PSN this QP sends (24 bits)
 * @remote_psn: first PSN the peer sends (24 bits)
 *
 * Three EX_MODIFY_QP commands: INIT (remote write and read allowed),
 * RTR (carries @remote_node in struct xnic_modify_qp_req), RTS.
 * Return: 0 or -errno of the failed transition (the QP is then left in
 * the state it reached; xnic_modify_qp_err() or destroy it).
 */
int xnic_connect_qp(struct xnic_qp *qp, uint32_t remote_node,
		    uint32_t remote_qpn, uint32_t local_psn,
		    uint32_t remote_psn);

/**
 * xnic_modify_qp_err() - move a QP to the error state
 * @qp: QP
 *
 * Outstanding WQEs complete with XNIC_WC_WR_FLUSH_ERR. A QP the CM
 * connected is disconnected: the peer is told (see xnic_cm_disconnect()).
 * Return: 0 or -errno of the command.
 */
int xnic_modify_qp_err(struct xnic_qp *qp);

/**
 * xnic_qp_set_attr() - set reliability attributes of a QP
 * @qp: QP
 * @attr: the attributes its comp_mask names (not XNIC_QP_ATTR_TCLASS)
 *
 * In RESET or INIT the values are kept and used when the QP is connected
 * (xnic_connect_qp(), xnic_cm_connect(), xnic_cm_accept()). In RTR or RTS
 * only XNIC_QP_ATTR_MIN_RNR_TIMER can change (IBTA fixes the others at
 * the RTR to RTS transition): an EX_MODIFY_QP RTS to RTS.
 * Return: 0; -EOPNOTSUPP for unknown comp_mask bits; -EINVAL for a value
 * out of range, XNIC_QP_ATTR_TCLASS, an attribute the state does not
 * allow to change, or a QP in the error state; -errno of the command.
 */
int xnic_qp_set_attr(struct xnic_qp *qp, const struct xnic_qp_attr *attr);

/* QP states (enum ib_qp_state; struct xnic_qp_info.state) */
enum {
	XNIC_QPS_RESET,
	XNIC_QPS_INIT,
	XNIC_QPS_RTR,
	XNIC_QPS_RTS,
	XNIC_QPS_SQD,
	XNIC_QPS_SQE,
	XNIC_QPS_ERR,
};

/**
 * struct xnic_qp_info - what xnic_query_qp() reports
 * @state: XNIC_QPS_* as the kernel has it (a QP the peer disconnected, or
 *	that failed, is in XNIC_QPS_ERR even when the library did not
 *	move it)
 * @err_reason: in XNIC_QPS_ERR: XNIC_QP_ERR_* (uapi/xnic-abi.h), why;
 *	xnic_qp_err_str() names it; otherwise XNIC_QP_ERR_NONE
 * @dest_qpn: the peer's QP (connected states)
 * @attr: the attributes in force (comp_mask: all but XNIC_QP_ATTR_TCLASS)
 */
struct xnic_qp_info {
	int state;
	uint32_t err_reason;
	uint32_t dest_qpn;
	struct xnic_qp_attr attr;
};

/**
 * xnic_query_qp() - the kernel's state and attributes of a QP
 * @qp: QP
 * @info: filled
 * Return: 0 or -errno of the QUERY_QP command.
 */
int xnic_query_qp(struct xnic_qp *qp, struct xnic_qp_info *info);

/**
 * xnic_qp_err_reason() - why a QP is in the error state, without a syscall
 * @qp: QP
 * Return: XNIC_QP_ERR_* from the SQ ring header (XNIC_QP_ERR_NONE while
 * the QP is not in the error state).
 */
uint32_t xnic_qp_err_reason(const struct xnic_qp *qp);

/**
 * xnic_qp_err_str() - name of an XNIC_QP_ERR_* reason
 * @reason: the reason
 * Return: a static string.
 */
const char *xnic_qp_err_str(uint32_t reason);

/**
 * xnic_qp_wakeup() - wake the engine for a QP (the D1 syscall)
 * @qp: QP
 *
 * Called by xnic_sq_submit() when the engine sleeps; not needed otherwise.
 * Rings the context's doorbell file (ioctl XNIC_DB_RING, uapi/xnic-abi.h),
 * or makes a POST_SEND command with no work requests when the context has
 * none (XNIC_DB_SYSCALL=uverbs at xnic_open()). Counted in @qp->wakeups.
 * Return: 0 or -errno of the ioctl or of the POST_SEND command.
 */
int xnic_qp_wakeup(struct xnic_qp *qp);

/* ======================== connection manager ======================= */
/*
 * Connecting QPs by (node, service id) with no side channel: the kernel
 * exchanges QPN, PSN and private data in REQ/REP/RTU frames over the
 * fabric (Documentation/cm.rst). Passive side:
 *
 *	xnic_cm_listen(ctx, sid, &l);
 *	xnic_cm_get_request(l, &req, -1);	// a peer connects
 *	xnic_cm_accept(&req, qp, &mine, sizeof(mine), 5000);
 *						// qp is RTS, the peer's too
 * Active side:
 *	xnic_cm_connect(ctx, qp, node, sid, &mine, sizeof(mine), 5000, &rep);
 *
 * Both ends pick a random first PSN; private data (up to
 * XNIC_CM_PRIVATE_MAX bytes each way) carries what the application wants
 * the peer to know, e.g. an MR's address, rkey and length. Each listener
 * and each connect uses a netlink socket of its own: a listener belongs
 * to the process that holds it and goes away when it is closed or the
 * process exits. Errors are negative errnos (xnic_strerror()).
 *
 * Disconnecting (IBTA's DREQ/DREP): destroying a QP the CM connected,
 * moving it to the error state or to RESET (xnic_cm_disconnect()), or the
 * death of the process that holds it, sends a DREQ to the peer's kernel,
 * which answers DREP and moves the peer's QP to the error state: its
 * outstanding work requests complete with XNIC_WC_WR_FLUSH_ERR, the
 * context gets an XNIC_EVENT_QP_FATAL asynchronous event for it, and a
 * listener that accepted the connection gets a disconnect event
 * (xnic_cm_get_disconnect()).
 */

#define XNIC_CM_PRIVATE_MAX	64

/* REJ reasons (struct xnic_cm_reply.reject_reason) */
#define XNIC_CM_REJ_NO_LISTENER		1	/* nobody listens */
#define XNIC_CM_REJ_USER		2	/* the listener refused */
#define XNIC_CM_REJ_LISTENER_GONE	3	/* it went away first */
#define XNIC_CM_REJ_NO_RESOURCES	4	/* too many connections */
#define XNIC_CM_REJ_TIMEOUT		5	/* the peer gave up */

struct xnic_cm_listener;

/**
 * struct xnic_cm_req - a connection request (xnic_cm_get_request())
 * @listener: the listener it came to
 * @id: its communication id (kernel)
 * @remote_node: the connecting node
 * @service_id: the service id it asks for
 * @remote_qpn: the connecting QP
 * @remote_psn: the connecting QP's first PSN
 * @private_len: bytes of @private_data
 * @private_data: the connecting application's private data
 */
struct xnic_cm_req {
	struct xnic_cm_listener *listener;
	uint32_t id;
	uint32_t remote_node;
	uint64_t service_id;
	uint32_t remote_qpn;
	uint32_t remote_psn;
	uint32_t private_len;
	uint8_t private_data[XNIC_CM_PRIVATE_MAX];
};

/**
 * struct xnic_cm_reply - what the accepting side said (xnic_cm_connect())
 * @remote_qpn: its QP
 * @remote_psn: its QP's first PSN
 * @reject_reason: when refused: XNIC_CM_REJ_* (Documentation/cm.rst);
 *	0 otherwise
 * @private_len: bytes of @private_data
 * @private_data: its private data (REP, or REJ)
 */
struct xnic_cm_reply {
	uint32_t remote_qpn;
	uint32_t remote_psn;
	uint32_t reject_reason;
	uint32_t private_len;
	uint8_t private_data[XNIC_CM_PRIVATE_MAX];
};

/**
 * xnic_cm_listen() - listen on a service id of a device
 * @ctx: the device's context
 * @service_id: any 64-bit value both sides agree on
 * @lp: the new listener
 * Return: 0; -EADDRINUSE when someone listens on it already; -ENOMEM;
 * -ENOENT when the xnic netlink family is missing (module not loaded);
 * other -errno of netlink.
 */
int xnic_cm_listen(struct xnic_ctx *ctx, uint64_t service_id,
		   struct xnic_cm_listener **lp);

/**
 * xnic_cm_listener_fd() - file descriptor to poll() for requests
 * @l: listener
 * Return: a descriptor (an epoll set) readable while an event is pending,
 * on the listener's netlink socket or already read off it by another
 * call on the listener (xnic_cm_get_disconnect() reading a request, say);
 * xnic_cm_get_request() or xnic_cm_get_disconnect() with timeout 0 then
 * takes it. Owned by the listener.
 */
int xnic_cm_listener_fd(const struct xnic_cm_listener *l);

/**
 * xnic_cm_unlisten() - stop listening and free the listener
 * @l: listener (NULL is allowed)
 *
 * Requests received and not answered are refused (the connecting side
 * gets -ECONNREFUSED). Closing the process does the same.
 */
void xnic_cm_unlisten(struct xnic_cm_listener *l);

/**
 * xnic_cm_get_request() - wait for a connection request
 * @l: listener
 * @req: filled with the request
 * @timeout_ms: how long to wait; 0: do not wait; negative: for ever
 *
 * A request resent by the peer (its REQ lost or slow) is reported once.
 * Return: 0; -ETIMEDOUT when none arrived in time; -errno of netlink.
 */
int xnic_cm_get_request(struct xnic_cm_listener *l, struct xnic_cm_req *req,
			int timeout_ms);

/**
 * xnic_cm_accept() - accept a request with a QP, connected on return
 * @req: from xnic_cm_get_request()
 * @qp: a QP in the RESET state, taken to RTS connected to the peer
 * @priv: private data for the peer (may be NULL when @len is 0)
 * @len: bytes of @priv, at most XNIC_CM_PRIVATE_MAX
 * @timeout_ms: how long to wait for the peer's RTU; negative: as long as
 *	the kernel resends the REP
 *
 * Return: 0 once the peer's RTU arrived (both QPs are connected);
 * -EMSGSIZE: @len over XNIC_CM_PRIVATE_MAX; -EISCONN: @qp is connected
 * already; -EINVAL: @qp in another state than RESET; -ENOENT: the request
 * expired or was
 * answered; -ECONNREFUSED: the peer gave up (REJ); -ECONNRESET: the peer
 * disconnected before its RTU arrived; -ETIMEDOUT: no RTU;
 * -errno of the QP transitions or of netlink. On failure @qp is left in
 * the state it reached: move it to error or destroy it.
 */
int xnic_cm_accept(struct xnic_cm_req *req, struct xnic_qp *qp,
		   const void *priv, size_t len, int timeout_ms);

/**
 * xnic_cm_reject() - refuse a request
 * @req: from xnic_cm_get_request()
 * @priv: private data for the peer (may be NULL when @len is 0)
 * @len: bytes of @priv, at most XNIC_CM_PRIVATE_MAX
 * Return: 0; -ENOENT: expired or answered; -EMSGSIZE: @len too long;
 * -EINVAL; -errno of netlink.
 */
int xnic_cm_reject(struct xnic_cm_req *req, const void *priv, size_t len);

/**
 * xnic_cm_connect() - connect a QP to a service on a node
 * @ctx: the device's context
 * @qp: a QP in the RESET state, taken to RTS connected to the peer's
 * @node: the peer's node id
 * @service_id: the service
 * @priv: private data for the peer (may be NULL when @len is 0)
 * @len: bytes of @priv, at most XNIC_CM_PRIVATE_MAX
 * @timeout_ms: how long to try, 1..110000 ms: the REQ is sent, then
 *	resent up to 3 times (more for timeouts over 40 s) at equal
 *	intervals of at most 10 s
 * @reply: filled with the peer's answer (may be NULL)
 *
 * Thread safe: every call has a socket of its own. The arguments and the
 * QP's state (asked of the kernel) are checked before anything is sent.
 * Return: 0 when both QPs are connected; -ECONNREFUSED when refused
 * (nobody listens, the listener refused or went away; see
 * @reply->reject_reason and xnic_cm_reject_str()); -ETIMEDOUT when
 * nobody answered in time; -EMSGSIZE: @len over XNIC_CM_PRIVATE_MAX;
 * -ERANGE: @timeout_ms out of 1..110000; -EADDRNOTAVAIL: @node is this
 * device's own node id; -EISCONN: @qp is connected already (disconnect
 * and reset it first); -EINVAL: @qp in another state than RESET, @priv
 * NULL with @len, @node over 65534; -errno of the QP transitions or of
 * netlink.
 */
int xnic_cm_connect(struct xnic_ctx *ctx, struct xnic_qp *qp, uint32_t node,
		    uint64_t service_id, const void *priv, size_t len,
		    int timeout_ms, struct xnic_cm_reply *reply);

/**
 * xnic_cm_reject_str() - what a REJ reason means
 * @reason: struct xnic_cm_reply.reject_reason (XNIC_CM_REJ_*)
 * Return: a static string saying what happened and what to do.
 */
const char *xnic_cm_reject_str(unsigned int reason);

/**
 * xnic_cm_disconnect() - disconnect a QP the CM connected (rdma_disconnect)
 * @qp: a QP connected by xnic_cm_connect() or xnic_cm_accept()
 *
 * Moves @qp to the error state (its outstanding work requests complete
 * with XNIC_WC_WR_FLUSH_ERR) and has the kernel send a DREQ to the peer,
 * resent until its DREP comes (at the connection's REQ interval and
 * resend count). The peer's QP goes to the error state too, see above.
 * Does not wait for the DREP. Destroying the QP, or the process's death,
 * disconnects as well.
 * Return: 0; -EINVAL when @qp is in RESET (nothing to disconnect); -errno
 * of the command.
 */
int xnic_cm_disconnect(struct xnic_qp *qp);

/**
 * struct xnic_cm_disconnect - a connection the peer ended (DREQ)
 * @id: the connection's communication id, as in its struct xnic_cm_req
 * @remote_node: the peer's node
 * @service_id: the service id
 * @remote_qpn: the peer's QP (struct xnic_cm_req.remote_qpn)
 */
struct xnic_cm_disconnect {
	uint32_t id;
	uint32_t remote_node;
	uint64_t service_id;
	uint32_t remote_qpn;
};

/**
 * xnic_cm_get_disconnect() - wait for a connection of a listener to end
 * @l: the listener that accepted the connection
 * @d: filled with the connection
 * @timeout_ms: how long to wait; 0: do not wait; negative: for ever
 *
 * The peer destroyed or disconnected its QP, or its process died: the QP
 * that accepted is already in the error state or about to be (its
 * flushed completions follow). Events are queued on the listener until
 * taken; xnic_cm_listener_fd() polls readable for them too.
 * Return: 0; -ETIMEDOUT when none came in time; -errno of netlink.
 */
int xnic_cm_get_disconnect(struct xnic_cm_listener *l,
			   struct xnic_cm_disconnect *d, int timeout_ms);

/* ============================= datapath ============================ */
/*
 * Posting, liburing style:
 *
 *	wqe = xnic_sq_get_wqe(qp);		// NULL: SQ full
 *	xnic_prep_write(wqe, sge, 1, raddr, rkey, wr_id, XNIC_WQE_F_SIGNALED);
 *	... more get/prep ...
 *	xnic_sq_submit(qp);			// publish all, one doorbell
 *
 * or one call per WQE with xnic_post_write() and friends, or with
 * xnic_post_wr() / xnic_prep_wr() and a struct xnic_wr whose fields are
 * named (safer: rkey and imm cannot be swapped). A prep function
 * that fails (-EINVAL: too many SGEs, inline data too long) leaves its
 * WQE unusable: give it back with xnic_sq_unget() before submitting.
 *
 * Reaping: xnic_poll_cq() copies out up to max CQEs; xnic_cq_wait() sleeps
 * until there is something to reap.
 *
 * Memory ordering (uapi/xnic-abi.h rules R1, R2, D1): entries are written
 * before a store-release of the producer index; the kernel's indices are
 * read with load-acquire; the doorbell uses full fences and atomic ORs.
 */

static inline unsigned int xnic__wq_space(struct xnic_wq *wq)
{
	uint32_t used = wq->tail - wq->head_cache;

	if (used >= wq->entries) {
		wq->head_cache = __atomic_load_n(&wq->hdr->consumer,
						 __ATOMIC_ACQUIRE);
		used = wq->tail - wq->head_cache;
		/* A consumer ahead of us or too far behind: not trusted. */
		if (used > wq->entries)
			return 0;
	}
	return wq->entries - used;
}

/**
 * xnic_sq_space() - free SQ entries
 * @qp: QP
 * Return: entries xnic_sq_get_wqe() can still hand out.
 */
static inline unsigned int xnic_sq_space(struct xnic_qp *qp)
{
	uint32_t used;

	/* Refresh from the kernel every time: the caller wants a number. */
	qp->sq.head_cache = __atomic_load_n(&qp->sq.hdr->consumer,
					    __ATOMIC_ACQUIRE);
	used = qp->sq.tail - qp->sq.head_cache;
	return used > qp->sq.entries ? 0 : qp->sq.entries - used;
}

/**
 * xnic_sq_get_wqe() - reserve the next SQ entry
 * @qp: QP
 * Return: the entry to fill with an xnic_prep_*() function, or NULL when
 * the SQ is full (the kernel has not consumed enough yet).
 */
static inline struct xnic_sq_wqe *xnic_sq_get_wqe(struct xnic_qp *qp)
{
	struct xnic_sq_wqe *wqes = (struct xnic_sq_wqe *)qp->sq.wqes;

	if (!xnic__wq_space(&qp->sq))
		return NULL;
	return &wqes[qp->sq.tail++ & qp->sq.mask];
}

/**
 * xnic_sq_unget() - give back the last entry xnic_sq_get_wqe() returned
 * @qp: QP
 * Return: 0, or -EINVAL when there is no unsubmitted entry.
 */
static inline int xnic_sq_unget(struct xnic_qp *qp)
{
	if (qp->sq.tail == qp->sq.published)
		return -EINVAL;
	qp->sq.tail--;
	return 0;
}

/**
 * xnic_qp_doorbell() - rule D1: tell the engine the SQ has new entries
 * @qp: QP whose producer index was just published
 * Return: 0 or -errno of the wakeup syscall.
 */
static inline int xnic_qp_doorbell(struct xnic_qp *qp)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(qp->db_word, __ATOMIC_RELAXED) & qp->db_bit))
		__atomic_fetch_or(qp->db_word, qp->db_bit, __ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(qp->db_summary, __ATOMIC_RELAXED) &
	      qp->db_summary_bit))
		__atomic_fetch_or(qp->db_summary, qp->db_summary_bit,
				  __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(qp->engine_flags, __ATOMIC_ACQUIRE) &
	    XNIC_ENGINE_NEED_WAKEUP)
		return xnic_qp_wakeup(qp);
	return 0;
}

/**
 * xnic_sq_submit() - publish every prepared SQ entry and ring the doorbell
 * @qp: QP
 * Return: the number of entries published (0: nothing to do);
 * -EOVERFLOW when the QP's send CQ overflowed (nothing is published: the
 * completions would be lost); or -errno when the wakeup syscall failed
 * (the entries are published all the same).
 */
static inline int xnic_sq_submit(struct xnic_qp *qp)
{
	uint32_t n = qp->sq.tail - qp->sq.published;
	int err;

	if (!n)
		return 0;
	if (__atomic_load_n(qp->scq_flags, __ATOMIC_RELAXED) &
	    XNIC_RING_F_ERROR)
		return -EOVERFLOW;
	__atomic_store_n(&qp->sq.hdr->producer, qp->sq.tail, __ATOMIC_RELEASE);
	qp->sq.published = qp->sq.tail;
	err = xnic_qp_doorbell(qp);
	return err ? err : (int)n;
}

static inline int xnic__prep(struct xnic_sq_wqe *wqe, uint8_t opcode,
			     const struct xnic_sge *sg, unsigned int nsge,
			     uint64_t remote_addr, uint32_t rkey,
			     uint32_t imm, uint64_t wr_id, unsigned int flags)
{
	unsigned int i;

	if (nsge > XNIC_MAX_SGE ||
	    (flags & ~(unsigned int)(XNIC_WQE_F_SIGNALED | XNIC_WQE_F_INLINE |
				     XNIC_WQE_F_SOLICITED)))
		return -EINVAL;
	wqe->wr_id = wr_id;
	wqe->opcode = opcode;
	wqe->flags = (uint8_t)flags;
	wqe->reserved0 = 0;
	wqe->imm_data = imm;
	wqe->remote_addr = remote_addr;
	wqe->rkey = rkey;
	if (flags & XNIC_WQE_F_INLINE) {
		uint32_t len = 0;

		if (opcode == XNIC_WR_RDMA_READ)
			return -EINVAL;
		for (i = 0; i < nsge; i++) {
			if (sg[i].length > XNIC_MAX_INLINE - len)
				return -EINVAL;
			if (!sg[i].length)
				continue;
			memcpy(wqe->inline_data + len,
			       (const void *)(uintptr_t)sg[i].addr,
			       sg[i].length);
			len += sg[i].length;
		}
		wqe->num_sge = 0;
		wqe->inline_len = len;
		return 0;
	}
	wqe->num_sge = (uint8_t)nsge;
	wqe->inline_len = 0;
	for (i = 0; i < nsge; i++)
		wqe->sge[i] = sg[i];
	return 0;
}

/**
 * xnic_prep_write() - fill an SQ entry with an RDMA WRITE
 * @wqe: from xnic_sq_get_wqe()
 * @sg: local buffers, gathered in order
 * @nsge: entries of @sg (0..XNIC_MAX_SGE)
 * @remote_addr: target address in the peer's MR
 * @rkey: the peer MR's rkey
 * @wr_id: returned in the CQE
 * @flags: XNIC_WQE_F_SIGNALED, _INLINE (copy the data into the WQE now,
 *	at most XNIC_MAX_INLINE bytes), _SOLICITED
 * Return: 0 or -EINVAL.
 */
static inline int xnic_prep_write(struct xnic_sq_wqe *wqe,
				  const struct xnic_sge *sg, unsigned int nsge,
				  uint64_t remote_addr, uint32_t rkey,
				  uint64_t wr_id, unsigned int flags)
{
	return xnic__prep(wqe, XNIC_WR_RDMA_WRITE, sg, nsge, remote_addr,
			  rkey, 0, wr_id, flags);
}

/**
 * xnic_prep_write_imm() - fill an SQ entry with an RDMA WRITE with
 *	immediate data (consumes a receive WQE at the target)
 * @wqe: from xnic_sq_get_wqe()
 * @sg: local buffers
 * @nsge: entries of @sg
 * @remote_addr: target address
 * @rkey: target rkey
 * @imm: immediate data, network byte order (as in the target's CQE)
 * @wr_id: returned in the CQE
 * @flags: XNIC_WQE_F_*
 * Return: 0 or -EINVAL.
 */
static inline int xnic_prep_write_imm(struct xnic_sq_wqe *wqe,
				      const struct xnic_sge *sg,
				      unsigned int nsge, uint64_t remote_addr,
				      uint32_t rkey, uint32_t imm,
				      uint64_t wr_id, unsigned int flags)
{
	return xnic__prep(wqe, XNIC_WR_RDMA_WRITE_WITH_IMM, sg, nsge,
			  remote_addr, rkey, imm, wr_id, flags);
}

/**
 * xnic_prep_send() - fill an SQ entry with a SEND
 * @wqe: from xnic_sq_get_wqe()
 * @sg: local buffers
 * @nsge: entries of @sg
 * @wr_id: returned in the CQE
 * @flags: XNIC_WQE_F_*
 * Return: 0 or -EINVAL.
 */
static inline int xnic_prep_send(struct xnic_sq_wqe *wqe,
				 const struct xnic_sge *sg, unsigned int nsge,
				 uint64_t wr_id, unsigned int flags)
{
	return xnic__prep(wqe, XNIC_WR_SEND, sg, nsge, 0, 0, 0, wr_id, flags);
}

/**
 * xnic_prep_send_imm() - fill an SQ entry with a SEND with immediate data
 * @wqe: from xnic_sq_get_wqe()
 * @sg: local buffers
 * @nsge: entries of @sg
 * @imm: immediate data, network byte order
 * @wr_id: returned in the CQE
 * @flags: XNIC_WQE_F_*
 * Return: 0 or -EINVAL.
 */
static inline int xnic_prep_send_imm(struct xnic_sq_wqe *wqe,
				     const struct xnic_sge *sg,
				     unsigned int nsge, uint32_t imm,
				     uint64_t wr_id, unsigned int flags)
{
	return xnic__prep(wqe, XNIC_WR_SEND_WITH_IMM, sg, nsge, 0, 0, imm,
			  wr_id, flags);
}

/**
 * xnic_prep_read() - fill an SQ entry with an RDMA READ
 * @wqe: from xnic_sq_get_wqe()
 * @sg: local buffers the data is scattered into
 * @nsge: entries of @sg
 * @remote_addr: source address in the peer's MR
 * @rkey: the peer MR's rkey
 * @wr_id: returned in the CQE
 * @flags: XNIC_WQE_F_SIGNALED (INLINE is invalid for READ)
 * Return: 0 or -EINVAL.
 */
static inline int xnic_prep_read(struct xnic_sq_wqe *wqe,
				 const struct xnic_sge *sg, unsigned int nsge,
				 uint64_t remote_addr, uint32_t rkey,
				 uint64_t wr_id, unsigned int flags)
{
	return xnic__prep(wqe, XNIC_WR_RDMA_READ, sg, nsge, remote_addr, rkey,
			  0, wr_id, flags);
}

/* Checks the QP's own limits, then get, prep, submit. */
static inline int xnic__post(struct xnic_qp *qp, uint8_t opcode,
			     const struct xnic_sge *sg, unsigned int nsge,
			     uint64_t remote_addr, uint32_t rkey, uint32_t imm,
			     uint64_t wr_id, unsigned int flags)
{
	struct xnic_sq_wqe *wqe;
	unsigned int i;
	uint64_t len = 0;
	int err;

	/* Not connected: refused here, the QP is left as it is. */
	if (qp->state == XNIC_QPS_RESET || qp->state == XNIC_QPS_INIT ||
	    qp->state == XNIC_QPS_RTR)
		return -ENOTCONN;
	/* Its completion would be lost. */
	if (__atomic_load_n(qp->scq_flags, __ATOMIC_RELAXED) &
	    XNIC_RING_F_ERROR)
		return -EOVERFLOW;
	if (nsge > qp->sq.max_sge)
		return -EINVAL;
	if (flags & XNIC_WQE_F_INLINE) {
		for (i = 0; i < nsge; i++)
			len += sg[i].length;
		if (len > qp->max_inline)
			return -EINVAL;
	}
	wqe = xnic_sq_get_wqe(qp);
	if (!wqe)
		return -EAGAIN;
	err = xnic__prep(wqe, opcode, sg, nsge, remote_addr, rkey, imm, wr_id,
			 flags);
	if (err) {
		xnic_sq_unget(qp);
		return err;
	}
	err = xnic_sq_submit(qp);
	return err < 0 ? err : 0;
}

/**
 * xnic_post_write() - post one RDMA WRITE and ring the doorbell
 * @qp: connected QP
 * @sg: local buffers
 * @nsge: entries of @sg
 * @remote_addr: target address
 * @rkey: target rkey
 * @wr_id: returned in the CQE
 * @flags: XNIC_WQE_F_*
 * Return: 0; -ENOTCONN when the QP is not connected yet (RESET, INIT or
 * RTR: nothing is posted and the QP stays usable; connect it first; the
 * same for every xnic_post_*() but xnic_post_recv()); -EOVERFLOW when
 * the QP's send CQ overflowed (nothing is posted: its completion would be
 * lost; the QP and CQ cannot be used again); -EAGAIN when the SQ is full;
 * -EINVAL; -errno of the wakeup. A QP in the error state otherwise takes
 * the post and completes it with XNIC_WC_WR_FLUSH_ERR.
 */
static inline int xnic_post_write(struct xnic_qp *qp,
				  const struct xnic_sge *sg, unsigned int nsge,
				  uint64_t remote_addr, uint32_t rkey,
				  uint64_t wr_id, unsigned int flags)
{
	return xnic__post(qp, XNIC_WR_RDMA_WRITE, sg, nsge, remote_addr, rkey,
			  0, wr_id, flags);
}

/**
 * xnic_post_write_imm() - post one RDMA WRITE with immediate data
 * @qp: connected QP
 * @sg: local buffers
 * @nsge: entries of @sg
 * @remote_addr: target address
 * @rkey: target rkey
 * @imm: immediate data, network byte order
 * @wr_id: returned in the CQE
 * @flags: XNIC_WQE_F_*
 * Return: as xnic_post_write().
 */
static inline int xnic_post_write_imm(struct xnic_qp *qp,
				      const struct xnic_sge *sg,
				      unsigned int nsge, uint64_t remote_addr,
				      uint32_t rkey, uint32_t imm,
				      uint64_t wr_id, unsigned int flags)
{
	return xnic__post(qp, XNIC_WR_RDMA_WRITE_WITH_IMM, sg, nsge,
			  remote_addr, rkey, imm, wr_id, flags);
}

/**
 * xnic_post_write_inline() - post one RDMA WRITE of data copied into the WQE
 * @qp: connected QP
 * @data: bytes to write (may be reused as soon as this returns)
 * @len: at most the QP's max_inline_data
 * @remote_addr: target address
 * @rkey: target rkey
 * @wr_id: returned in the CQE
 * @flags: XNIC_WQE_F_* (INLINE is implied)
 * Return: as xnic_post_write().
 */
static inline int xnic_post_write_inline(struct xnic_qp *qp, const void *data,
					 uint32_t len, uint64_t remote_addr,
					 uint32_t rkey, uint64_t wr_id,
					 unsigned int flags)
{
	struct xnic_sge sge = {
		.addr = (uintptr_t)data, .length = len, .lkey = 0,
	};

	return xnic__post(qp, XNIC_WR_RDMA_WRITE, &sge, 1, remote_addr, rkey,
			  0, wr_id, flags | XNIC_WQE_F_INLINE);
}

/**
 * xnic_post_send() - post one SEND (consumes a receive WQE at the peer)
 * @qp: connected QP
 * @sg: local buffers
 * @nsge: entries of @sg
 * @wr_id: returned in the CQE
 * @flags: XNIC_WQE_F_*
 * Return: as xnic_post_write().
 */
static inline int xnic_post_send(struct xnic_qp *qp, const struct xnic_sge *sg,
				 unsigned int nsge, uint64_t wr_id,
				 unsigned int flags)
{
	return xnic__post(qp, XNIC_WR_SEND, sg, nsge, 0, 0, 0, wr_id, flags);
}

/**
 * xnic_post_send_imm() - post one SEND with immediate data
 * @qp: connected QP
 * @sg: local buffers
 * @nsge: entries of @sg
 * @imm: immediate data, network byte order
 * @wr_id: returned in the CQE
 * @flags: XNIC_WQE_F_*
 * Return: as xnic_post_write().
 */
static inline int xnic_post_send_imm(struct xnic_qp *qp,
				     const struct xnic_sge *sg,
				     unsigned int nsge, uint32_t imm,
				     uint64_t wr_id, unsigned int flags)
{
	return xnic__post(qp, XNIC_WR_SEND_WITH_IMM, sg, nsge, 0, 0, imm,
			  wr_id, flags);
}

/**
 * xnic_post_read() - post one RDMA READ
 * @qp: connected QP
 * @sg: local buffers the data lands in
 * @nsge: entries of @sg
 * @remote_addr: source address at the peer
 * @rkey: the peer MR's rkey (registered with REMOTE_READ)
 * @wr_id: returned in the CQE
 * @flags: XNIC_WQE_F_SIGNALED
 * Return: as xnic_post_write().
 */
static inline int xnic_post_read(struct xnic_qp *qp, const struct xnic_sge *sg,
				 unsigned int nsge, uint64_t remote_addr,
				 uint32_t rkey, uint64_t wr_id,
				 unsigned int flags)
{
	return xnic__post(qp, XNIC_WR_RDMA_READ, sg, nsge, remote_addr, rkey,
			  0, wr_id, flags);
}

/**
 * struct xnic_wr - one SQ work request, its arguments named
 * @wr_id: returned in the CQE
 * @sg: local buffers (gathered for WRITE and SEND, scattered into for
 *	READ); may be NULL when @nsge is 0
 * @nsge: entries of @sg (at most the QP's max_send_sge)
 * @opcode: enum xnic_wr_opcode: XNIC_WR_RDMA_WRITE (0),
 *	_RDMA_WRITE_WITH_IMM, _SEND, _SEND_WITH_IMM, _RDMA_READ
 * @flags: XNIC_WQE_F_SIGNALED, _INLINE, _SOLICITED
 * @imm: immediate data, network byte order (the _WITH_IMM opcodes; else
 *	ignored)
 * @remote_addr: target (WRITE) or source (READ) address in the peer's
 *	MR (ignored for SEND)
 * @rkey: the peer MR's rkey (ignored for SEND)
 *
 * For xnic_post_wr() and xnic_prep_wr(): filled with designated
 * initialisers, no two arguments of the same type can be swapped
 * unnoticed, and a field left out is zero:
 *
 *	err = xnic_post_wr(qp, &(struct xnic_wr){
 *		.opcode = XNIC_WR_RDMA_WRITE_WITH_IMM,
 *		.sg = &sge, .nsge = 1,
 *		.remote_addr = raddr, .rkey = rkey, .imm = htonl(7),
 *		.wr_id = 1, .flags = XNIC_WQE_F_SIGNALED,
 *	});
 */
struct xnic_wr {
	uint64_t wr_id;
	const struct xnic_sge *sg;
	unsigned int nsge;
	unsigned int opcode;
	unsigned int flags;
	uint32_t imm;
	uint64_t remote_addr;
	uint32_t rkey;
};

/*
 * The remote address, rkey and immediate data @wr's opcode uses (the others
 * zero, as the positional prep_*() calls write them); -EINVAL for an
 * unknown opcode.
 */
static inline int xnic__wr_fields(const struct xnic_wr *wr, uint64_t *raddr,
				  uint32_t *rkey, uint32_t *imm)
{
	unsigned int op = wr->opcode;
	int remote = op == XNIC_WR_RDMA_WRITE ||
		     op == XNIC_WR_RDMA_WRITE_WITH_IMM ||
		     op == XNIC_WR_RDMA_READ;
	int with_imm = op == XNIC_WR_RDMA_WRITE_WITH_IMM ||
		       op == XNIC_WR_SEND_WITH_IMM;

	if (op > XNIC_WR_RDMA_READ)
		return -EINVAL;
	*raddr = remote ? wr->remote_addr : 0;
	*rkey = remote ? wr->rkey : 0;
	*imm = with_imm ? wr->imm : 0;
	return 0;
}

/**
 * xnic_prep_wr() - fill an SQ entry from a struct xnic_wr
 * @wqe: from xnic_sq_get_wqe()
 * @wr: the work request (any opcode)
 * Return: 0 or -EINVAL (unknown opcode, too many SGEs, bad flags, inline
 * data too long or with READ): give the entry back with xnic_sq_unget().
 */
static inline int xnic_prep_wr(struct xnic_sq_wqe *wqe,
			       const struct xnic_wr *wr)
{
	uint64_t raddr;
	uint32_t rkey, imm;

	if (xnic__wr_fields(wr, &raddr, &rkey, &imm))
		return -EINVAL;
	return xnic__prep(wqe, (uint8_t)wr->opcode, wr->sg, wr->nsge, raddr,
			  rkey, imm, wr->wr_id, wr->flags);
}

/**
 * xnic_post_wr() - post one work request of any opcode and ring the
 *	doorbell: xnic_post_write() and friends with named arguments
 * @qp: connected QP
 * @wr: the work request (only read during the call; a compound literal
 *	is the usual way, see struct xnic_wr)
 *
 * Zero-syscall and inline like the positional xnic_post_*() calls, and
 * the same checks (the QP's max_send_sge and max_inline_data).
 * Return: as xnic_post_write(); -EINVAL also for an unknown opcode.
 */
static inline int xnic_post_wr(struct xnic_qp *qp, const struct xnic_wr *wr)
{
	uint64_t raddr;
	uint32_t rkey, imm;

	if (xnic__wr_fields(wr, &raddr, &rkey, &imm))
		return -EINVAL;
	return xnic__post(qp, (uint8_t)wr->opcode, wr->sg, wr->nsge, raddr,
			  rkey, imm, wr->wr_id, wr->flags);
}

/**
 * xnic_rq_get_wqe() - reserve the next RQ entry
 * @qp: QP
 * Return: the entry, or NULL when the RQ is full.
 */
static inline struct xnic_rq_wqe *xnic_rq_get_wqe(struct xnic_qp *qp)
{
	struct xnic_rq_wqe *wqes = (struct xnic_rq_wqe *)qp->rq.wqes;

	if (!xnic__wq_space(&qp->rq))
		return NULL;
	return &wqes[qp->rq.tail++ & qp->rq.mask];
}

/**
 * xnic_prep_recv() - fill an RQ entry
 * @wqe: from xnic_rq_get_wqe()
 * @sg: buffers an incoming SEND is scattered into
 * @nsge: entries of @sg (0..XNIC_MAX_RECV_SGE)
 * @wr_id: returned in the CQE
 * Return: 0 or -EINVAL (give the entry back with xnic_rq_unget()).
 */
static inline int xnic_prep_recv(struct xnic_rq_wqe *wqe,
				 const struct xnic_sge *sg, unsigned int nsge,
				 uint64_t wr_id)
{
	unsigned int i;

	if (nsge > XNIC_MAX_RECV_SGE)
		return -EINVAL;
	wqe->wr_id = wr_id;
	wqe->num_sge = (uint8_t)nsge;
	memset(wqe->reserved, 0, sizeof(wqe->reserved));
	for (i = 0; i < nsge; i++)
		wqe->sge[i] = sg[i];
	return 0;
}

/**
 * xnic_rq_unget() - give back the last entry xnic_rq_get_wqe() returned
 * @qp: QP
 * Return: 0, or -EINVAL when there is no unsubmitted entry.
 */
static inline int xnic_rq_unget(struct xnic_qp *qp)
{
	if (qp->rq.tail == qp->rq.published)
		return -EINVAL;
	qp->rq.tail--;
	return 0;
}

/**
 * xnic_rq_submit() - publish every prepared RQ entry (no doorbell needed)
 * @qp: QP
 * Return: the number of entries published; -EOVERFLOW when the QP's
 * receive CQ overflowed (nothing is published).
 */
static inline int xnic_rq_submit(struct xnic_qp *qp)
{
	uint32_t n = qp->rq.tail - qp->rq.published;

	if (n && (__atomic_load_n(qp->rcq_flags, __ATOMIC_RELAXED) &
		  XNIC_RING_F_ERROR))
		return -EOVERFLOW;
	if (n) {
		__atomic_store_n(&qp->rq.hdr->producer, qp->rq.tail,
				 __ATOMIC_RELEASE);
		qp->rq.published = qp->rq.tail;
	}
	return (int)n;
}

/**
 * xnic_post_recv() - post one receive buffer list
 * @qp: QP (receives may be posted before it is connected)
 * @sg: buffers
 * @nsge: entries of @sg (at most the QP's max_recv_sge)
 * @wr_id: returned in the CQE
 * A slot comes free when the kernel's RQ consumer index passes it, which
 * may be a little after its completion is visible: a program that reposts
 * on each receive completion into a full RQ must retry on -EAGAIN.
 * Return: 0; -EAGAIN when the RQ is full; -EOVERFLOW when the QP's
 * receive CQ overflowed (nothing is posted); -EINVAL.
 */
static inline int xnic_post_recv(struct xnic_qp *qp, const struct xnic_sge *sg,
				 unsigned int nsge, uint64_t wr_id)
{
	struct xnic_rq_wqe *wqe;

	if (nsge > qp->rq.max_sge)
		return -EINVAL;
	if (__atomic_load_n(qp->rcq_flags, __ATOMIC_RELAXED) &
	    XNIC_RING_F_ERROR)
		return -EOVERFLOW;
	wqe = xnic_rq_get_wqe(qp);
	if (!wqe)
		return -EAGAIN;
	if (xnic_prep_recv(wqe, sg, nsge, wr_id)) {
		xnic_rq_unget(qp);
		return -EINVAL;
	}
	xnic_rq_submit(qp);
	return 0;
}

/*
 * Entries ready in a CQ, checked: 0..entries; -EOVERFLOW when the CQ
 * overflowed (its error state) and is drained; -EIO when the producer is
 * beyond anything valid.
 */
static inline int xnic__cq_ready(struct xnic_cq *cq)
{
	uint32_t prod, avail;

	prod = __atomic_load_n(&cq->hdr->producer, __ATOMIC_ACQUIRE);
	avail = prod - cq->head;
	if (!avail) {
		if (!(__atomic_load_n(&cq->hdr->flags, __ATOMIC_ACQUIRE) &
		      XNIC_RING_F_ERROR))
			return 0;
		/* CQEs written before the flag are still to be reaped. */
		prod = __atomic_load_n(&cq->hdr->producer, __ATOMIC_ACQUIRE);
		avail = prod - cq->head;
		if (!avail)
			return -EOVERFLOW;
	}
	if (avail > cq->mask + 1)
		return -EIO;
	return (int)avail;
}

/**
 * xnic_poll_cq() - reap completions
 * @cq: CQ
 * @cqes: array the completions are copied to
 * @max: its length
 * Return: the number of completions copied (0: none); -EOVERFLOW when
 * the CQ overflowed and every completion written before has been reaped
 * (the kernel could not write a completion: it is lost, the QP it belonged
 * to is in the error state with XNIC_QP_ERR_CQ_OVERFLOW, and posts on the
 * CQ's QPs return -EOVERFLOW; the CQ stays in this state: destroy it and
 * its QPs); -EIO when the CQ's producer index is invalid (the shared ring
 * is corrupt); -EINVAL for @max < 0.
 */
static inline int xnic_poll_cq(struct xnic_cq *cq, struct xnic_cqe *cqes,
			       int max)
{
	int n, i;

	if (max < 0)
		return -EINVAL;
	n = xnic__cq_ready(cq);
	if (n <= 0)
		return n;
	if (n > max)
		n = max;
	for (i = 0; i < n; i++)
		memcpy(&cqes[i], &cq->cqes[(cq->head + (uint32_t)i) & cq->mask],
		       sizeof(*cqes));
	cq->head += (uint32_t)n;
	__atomic_store_n(&cq->hdr->consumer, cq->head, __ATOMIC_RELEASE);
	return n;
}

/**
 * xnic_cq_count_qp() - completions of one QP still in a CQ
 * @cq: CQ
 * @qpn: the QP's number
 *
 * Counts the CQEs naming @qpn that xnic_poll_cq() has not returned yet,
 * without reaping anything. The kernel writes no CQE of a QP after
 * xnic_destroy_qp() (its WQEs still outstanding get none), so after that
 * this is how many of its completions later polls will still return.
 * Return: the count, 0..entries; -EIO when the CQ's producer index is
 * invalid.
 */
static inline int xnic_cq_count_qp(struct xnic_cq *cq, uint32_t qpn)
{
	int avail = xnic__cq_ready(cq), i, n = 0;

	if (avail == -EOVERFLOW)	/* drained, in its error state */
		return 0;
	for (i = 0; i < avail; i++)
		n += cq->cqes[(cq->head + (uint32_t)i) & cq->mask].qp_num == qpn;
	return avail < 0 ? avail : n;
}

#ifdef __cplusplus
}
#endif

#endif /* XNIC_LIB_H */
