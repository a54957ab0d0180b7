/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxniccoll - collectives (all-reduce, broadcast, barrier) over a full
 * mesh of xnic RC QPs. Documentation/collective.rst describes the API and
 * the algorithms.
 *
 * A communicator joins nranks processes, each with its own xnic device
 * (its own node id on the fabric). xnic_comm_init() creates one RC QP per
 * peer and one registered scratch region; the ranks swap QP numbers, PSNs,
 * node ids and buffer addresses through a bootstrap (struct
 * xnic_bootstrap): over TCP (xnic_bootstrap_tcp()) or over the fabric
 * with the connection manager (xnic_bootstrap_cm()), which needs no IP.
 *
 * Collectives are called by every rank of the communicator, in the same
 * order, with the same arguments (count, dtype, op, root); buffers are
 * the caller's ordinary memory (no registration needed).
 *
 * Errors: functions returning int return 0 or a negative errno and never
 * print; xnic_comm_strerror() returns a message that says what failed
 * (which peer, which completion, which bootstrap step). No call waits
 * forever: every wait is bounded by xnic_comm_cfg.timeout_ms without
 * progress, after which the call returns -ETIMEDOUT. After a collective
 * failed, the communicator is unusable: later collectives return the
 * same error; destroy it.
 *
 * Threads: a communicator is used by one thread at a time. Different
 * communicators are independent.
 *
 * Non-blocking collectives: xnic_allreduce_start() and its kin return a
 * request at once; xnic_coll_test() advances it without blocking,
 * xnic_coll_wait() and xnic_coll_waitall() block until done. Collectives
 * started on one communicator run one after the other, in start order;
 * collectives on different communicators (each with its own QPs, e.g.
 * one per traffic class) are in flight at the same time.
 */
#ifndef XNIC_COLL_H
#define XNIC_COLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest communicator (the immediate data carries the sender in 8 bits). */
#define XNIC_COLL_MAX_RANKS	256

/* Defaults of struct xnic_comm_cfg fields left zero. */
#define XNIC_COLL_DEF_CHUNK	(1U << 20)	/* bytes per pipelined chunk */
#define XNIC_COLL_DEF_SLOTS	2		/* chunks in flight per channel */
#define XNIC_COLL_DEF_TIMEOUT	30000		/* ms without progress */
#define XNIC_COLL_DEF_INFLIGHT	(4U << 20)	/* bytes of writes in flight */

/**
 * enum xnic_coll_dtype - element types
 * @XNIC_COLL_FLOAT32: IEEE 754 binary32 (float)
 * @XNIC_COLL_BFLOAT16: bfloat16, stored as uint16_t (the upper half of a
 *	binary32); sums are computed in float32 and rounded to nearest,
 *	ties to even, once per element
 */
enum xnic_coll_dtype {
	XNIC_COLL_FLOAT32 = 0,
	XNIC_COLL_BFLOAT16 = 1,
};

/**
 * enum xnic_coll_op - reduction operations
 * @XNIC_COLL_SUM: element-wise sum
 */
enum xnic_coll_op {
	XNIC_COLL_SUM = 0,
};

/**
 * enum xnic_coll_algo - all-reduce algorithms (Documentation/collective.rst)
 * @XNIC_COLL_ALGO_AUTO: hierarchical when the ranks sit on two or more
 *	appliances of equally many (>= 2) ranks, else flat; the environment
 *	variable XNIC_COLL_ALGO ("flat", "hier" or "auto") overrides it
 * @XNIC_COLL_ALGO_FLAT: direct reduce-scatter + all-gather among all ranks
 * @XNIC_COLL_ALGO_HIER: reduce-scatter inside each appliance over its
 *	mesh, all-reduce of each shard across the appliances among the ranks
 *	that own it, all-gather inside each appliance
 */
enum xnic_coll_algo {
	XNIC_COLL_ALGO_AUTO = 0,
	XNIC_COLL_ALGO_FLAT = 1,
	XNIC_COLL_ALGO_HIER = 2,
};

/* ============================ bootstrap ============================ */

struct xnic_bootstrap;

/**
 * struct xnic_bootstrap_ops - how a bootstrap exchanges data
 * @allgather: every rank passes @len bytes at @mine; on return @all holds
 *	nranks * @len bytes, rank r's at offset r * @len (ours included).
 *	@len is the same on every rank. Returns 0 or a negative errno;
 *	-ETIMEDOUT when not every rank took part within @timeout_ms.
 * @close: free the bootstrap (may be NULL).
 */
struct xnic_bootstrap_ops {
	int (*allgather)(struct xnic_bootstrap *bs, const void *mine,
			 void *all, size_t len, int timeout_ms);
	void (*close)(struct xnic_bootstrap *bs);
};

/**
 * struct xnic_bootstrap - out-of-band exchange between the ranks
 * @ops: its operations
 *
 * Implementations embed this struct in their own. xnic_comm_init() uses
 * the bootstrap only while it runs (to swap connection details and to
 * agree that every rank is connected); the caller owns it and closes it
 * with xnic_bootstrap_close() when it likes.
 */
struct xnic_bootstrap {
	const struct xnic_bootstrap_ops *ops;
};

/**
 * xnic_bootstrap_tcp() - a bootstrap over TCP, for ranks of one host
 * @rank: this rank (0..@nranks-1)
 * @nranks: number of ranks
 * @addr: IPv4 address rank 0 listens on and the others connect to
 *	(NULL: "127.0.0.1")
 * @port: TCP port
 * @timeout_ms: how long to wait for every rank to connect (<= 0: the
 *	default of 30 s)
 * @bsp: the new bootstrap on success
 *
 * Rank 0 listens and waits for the @nranks - 1 others; they connect
 * (retrying while rank 0 is not yet listening). All-gathers then go
 * through rank 0.
 * Return: 0; -EINVAL for bad arguments; -ETIMEDOUT; -EPROTO when a peer
 * says something unexpected; -errno of a socket call.
 */
int xnic_bootstrap_tcp(int rank, int nranks, const char *addr,
		       uint16_t port, int timeout_ms,
		       struct xnic_bootstrap **bsp);

/**
 * xnic_bootstrap_cm() - a bootstrap over the xnic fabric (no TCP, no IP)
 * @rank: this rank (0..@nranks-1)
 * @nranks: number of ranks
 * @device: this rank's xnic device, e.g. "xnic0" (the bootstrap opens a
 *	context of its own on it)
 * @nodes: @nranks node ids, rank r's device at @nodes[r]; the same list
 *	on every rank
 * @service: CM service id rank 0 listens on (any value the ranks agree
 *	on; one communicator at a time per service id and node)
 * @timeout_ms: how long to wait for every rank to connect (<= 0: the
 *	default of 30 s)
 * @bsp: the new bootstrap on success
 *
 * Rank 0 listens on @service with the connection manager
 * (Documentation/cm.rst) and accepts one RC QP from every other rank,
 * checking its rank and node; the others connect to (@nodes[0],
 * @service), retrying while rank 0 does not listen yet. All-gathers then
 * go through rank 0 as SEND/RECV on those QPs (at most 64 MiB in all).
 * Return: 0; -EINVAL for bad arguments or when @device is not
 * @nodes[@rank]; -ETIMEDOUT when rank 0 never accepted, or not every
 * rank connected in time; -ECONNREFUSED when rank 0 refused us (another
 * rank, node or number of ranks); -EPROTO; -errno of the device or the
 * connection manager.
 */
int xnic_bootstrap_cm(int rank, int nranks, const char *device,
		      const uint32_t *nodes, uint64_t service, int timeout_ms,
		      struct xnic_bootstrap **bsp);

/**
 * xnic_bootstrap_close() - close a bootstrap
 * @bs: bootstrap (NULL is ignored)
 */
void xnic_bootstrap_close(struct xnic_bootstrap *bs);

/* ========================== communicator =========================== */

struct xnic_comm;

/**
 * struct xnic_comm_cfg - what xnic_comm_init() needs
 * @rank: this process's rank, 0..@nranks-1
 * @nranks: number of ranks, 1..XNIC_COLL_MAX_RANKS
 * @device: this rank's xnic device, e.g. "xnic0" (each rank needs its own
 *	device: ranks are told apart by node id on the fabric)
 * @bootstrap: exchange between the ranks (not needed when @nranks is 1)
 * @chunk_bytes: pipeline chunk, bytes (0: XNIC_COLL_DEF_CHUNK; rounded
 *	down to a multiple of 4; at least 4). Same on every rank.
 * @slots: chunks in flight per peer and channel (0: XNIC_COLL_DEF_SLOTS;
 *	at most 64). Same on every rank. The scratch region is
 *	(3 * (nranks - 1) + 1) * @slots * @chunk_bytes bytes.
 * @timeout_ms: a call fails with -ETIMEDOUT after this long without
 *	progress (0: XNIC_COLL_DEF_TIMEOUT)
 * @spin_us: busy-poll the CQ this long before sleeping on it (0: sleep
 *	at once; spinning helps only with cores to spare)
 * @max_inflight: most bytes of this rank's RDMA writes not yet
 *	completed, over all peers (0: XNIC_COLL_DEF_INFLIGHT; SIZE_MAX: only
 *	the slots limit it, to 2 * (nranks - 1) * @slots * @chunk_bytes).
 *	One write always goes, whatever its size. Keeps the transport out
 *	of retransmission storms when the fabric, or the CPU that plays the
 *	NIC, is slower than the transport's window (see
 *	Documentation/collective.rst).
 * @tclass: traffic class of the communicator's QPs (libxnic's
 *	XNIC_TCLASS_LATENCY 0, the default, served first; or
 *	XNIC_TCLASS_BULK 1); xnic_comm_init() fails with -EINVAL for a class
 *	the device does not have. Communicators of one process on separate
 *	classes let urgent collectives pass bulk ones on the links.
 * @algo: enum xnic_coll_algo for all-reduces (0: AUTO). Same on every
 *	rank. Appliances are found from the kernel: two ranks share one when
 *	each reaches the other's node over a mesh link (a member link on
 *	which that node alone is heard). HIER on ranks that do not form
 *	equal appliances fails with -EINVAL.
 */
struct xnic_comm_cfg {
	int rank;
	int nranks;
	const char *device;
	struct xnic_bootstrap *bootstrap;
	size_t chunk_bytes;
	unsigned int slots;
	int timeout_ms;
	unsigned int spin_us;
	size_t max_inflight;
	unsigned int tclass;
	int algo;
};

/**
 * xnic_comm_init() - create a communicator (collective over all ranks)
 * @commp: the new communicator on success, NULL on failure
 * @cfg: configuration
 *
 * Opens @cfg->device, registers the scratch region, creates one RC QP per
 * peer, exchanges connection details through the bootstrap, connects the
 * QPs, and waits (through the bootstrap) until every rank is connected.
 * A rank that fails still takes part in the exchanges when it can, so
 * the others fail at once instead of timing out.
 * Return: 0; -EINVAL for a bad @cfg or ranks that disagree on it (the
 * message names the rank); -ENOMEM; -ETIMEDOUT; -ECONNABORTED when
 * another rank failed; -errno of the device or the bootstrap. The message
 * of a failed init is in xnic_comm_strerror(NULL).
 */
int xnic_comm_init(struct xnic_comm **commp, const struct xnic_comm_cfg *cfg);

/**
 * xnic_comm_destroy() - free a communicator
 * @comm: communicator (NULL is ignored)
 *
 * Waits (at most the timeout) for this rank's RDMA writes still in
 * flight, then closes the device. Call xnic_barrier() first when peers
 * may still be sending. Requests of @comm not done yet end with
 * -ECANCELED; its requests may be tested, waited for and freed after it.
 */
void xnic_comm_destroy(struct xnic_comm *comm);

/**
 * xnic_comm_rank() - this process's rank
 * @comm: communicator
 * Return: the rank.
 */
int xnic_comm_rank(const struct xnic_comm *comm);

/**
 * xnic_comm_nranks() - the communicator's size
 * @comm: communicator
 * Return: the number of ranks.
 */
int xnic_comm_nranks(const struct xnic_comm *comm);

/**
 * xnic_comm_algo() - the all-reduce algorithm a communicator runs
 * @comm: communicator
 * @appliances: if not NULL, set to the number of appliances its ranks
 *	were found on (a rank without mesh peers counts as one); 0 when not
 *	known: the kernel was not asked (fewer than 4 ranks, or the flat
 *	algorithm forced), could not answer, or the mesh links do not group
 *	the ranks (a partial mesh, a mesh link down on one side)
 * Return: XNIC_COLL_ALGO_FLAT or XNIC_COLL_ALGO_HIER.
 */
int xnic_comm_algo(const struct xnic_comm *comm, int *appliances);

/**
 * xnic_comm_strerror() - what the last failure was
 * @comm: communicator, or NULL for the calling thread's last failure
 *	(the only way to learn why xnic_comm_init() failed)
 *
 * Return: a message, "" when nothing failed; valid until the next call
 * on @comm (or, for NULL, the thread's next failing call).
 */
const char *xnic_comm_strerror(const struct xnic_comm *comm);

/**
 * xnic_coll_dtype_size() - bytes per element
 * @dtype: enum xnic_coll_dtype
 * Return: 4, 2, or 0 for an unknown type.
 */
size_t xnic_coll_dtype_size(int dtype);

/* =========================== collectives =========================== */

/**
 * xnic_allreduce() - every rank gets the element-wise reduction of all
 *	ranks' inputs
 * @comm: communicator
 * @sendbuf: @count elements of this rank's input
 * @recvbuf: @count elements, the result; may equal @sendbuf (in place),
 *	must not overlap it otherwise
 * @count: elements (0 returns at once)
 * @dtype: enum xnic_coll_dtype
 * @op: enum xnic_coll_op
 *
 * Flat (XNIC_COLL_ALGO_FLAT): direct reduce-scatter + all-gather over
 * the full mesh, pipelined in chunks: rank j owns the j-th of nranks
 * near-equal shards, every rank RDMA-writes its part of shard j to rank
 * j, rank j sums the parts (in rank order, in float32) and writes the
 * result to every rank. Hierarchical (XNIC_COLL_ALGO_HIER): the same
 * inside each appliance without the all-gather (partial sums in rank
 * order, rounded to the data type), then the same among the ranks that
 * own one shard in each appliance (partials summed in appliance order),
 * then an all-gather inside each appliance. Every rank ends with
 * bit-identical results. Buffers must be aligned to the element size.
 * Return: 0; -EINVAL for bad arguments; -ETIMEDOUT; -EPROTO when the
 * ranks' calls do not match; -EIO for a failed completion; -errno of a
 * post or wait.
 */
int xnic_allreduce(struct xnic_comm *comm, const void *sendbuf,
		   void *recvbuf, size_t count, int dtype, int op);

/**
 * xnic_broadcast() - copy @root's buffer to every rank
 * @comm: communicator
 * @buf: @bytes bytes: the data at @root, overwritten at the others
 * @bytes: length (0 returns at once)
 * @root: the sending rank
 * Return: as xnic_allreduce().
 */
int xnic_broadcast(struct xnic_comm *comm, void *buf, size_t bytes,
		   int root);

/**
 * xnic_barrier() - return only when every rank has entered the barrier
 * @comm: communicator
 * Return: as xnic_allreduce().
 */
int xnic_barrier(struct xnic_comm *comm);

/* ===================== non-blocking collectives ==================== */

struct xnic_coll_req;

/**
 * xnic_allreduce_start() - start an all-reduce, return at once
 * @comm: communicator
 * @sendbuf: as xnic_allreduce(); must stay unchanged until the request
 *	is done
 * @recvbuf: as xnic_allreduce(); its contents are undefined until done
 * @count: elements
 * @dtype: enum xnic_coll_dtype
 * @op: enum xnic_coll_op
 * @reqp: the new request on success (NULL on failure)
 *
 * The request is queued behind the collectives already started on @comm
 * and runs when they are done; nothing moves unless this thread calls
 * xnic_coll_test(), xnic_coll_wait() or xnic_coll_waitall() (on any
 * request of @comm) or a blocking collective of @comm. Every rank starts
 * the same collectives on each communicator in the same order.
 * Return: 0; -EINVAL for bad arguments (checked here, as
 * xnic_allreduce() does); -ENOMEM; the error of a communicator that
 * failed earlier. Errors found while it runs come from test or wait.
 */
int xnic_allreduce_start(struct xnic_comm *comm, const void *sendbuf,
			 void *recvbuf, size_t count, int dtype, int op,
			 struct xnic_coll_req **reqp);

/**
 * xnic_broadcast_start() - start a broadcast, return at once
 * @comm: communicator
 * @buf: as xnic_broadcast(); at the root unchanged, at the others
 *	undefined, until the request is done
 * @bytes: length
 * @root: the sending rank
 * @reqp: the new request on success
 * Return: as xnic_allreduce_start().
 */
int xnic_broadcast_start(struct xnic_comm *comm, void *buf, size_t bytes,
			 int root, struct xnic_coll_req **reqp);

/**
 * xnic_barrier_start() - start a barrier, return at once
 * @comm: communicator
 * @reqp: the new request on success; it is done once every rank has
 *	started the barrier (and every earlier collective of @comm is done)
 * Return: as xnic_allreduce_start().
 */
int xnic_barrier_start(struct xnic_comm *comm, struct xnic_coll_req **reqp);

/**
 * xnic_coll_test() - advance a request's communicator, without blocking
 * @req: request
 *
 * Reaps the communicator's completions and runs its collectives (this
 * one and those started before it on the same communicator) as far as
 * they go without waiting.
 * Return: 1 when @req is done and succeeded; 0 when not done yet; a
 * negative errno when it failed (xnic_comm_strerror() says why), as the
 * blocking calls return; -ETIMEDOUT once the communicator made no
 * progress for timeout_ms. The request stays valid: free it with
 * xnic_coll_req_free().
 */
int xnic_coll_test(struct xnic_coll_req *req);

/**
 * xnic_coll_wait() - block until a request is done, then free it
 * @req: request (freed on return, whatever the result)
 *
 * Return: 0 or the collective's negative errno (as xnic_allreduce()).
 */
int xnic_coll_wait(struct xnic_coll_req *req);

/**
 * xnic_coll_waitall() - block until every request is done, then free them
 * @reqs: @n requests, of one or several communicators (NULL entries are
 *	skipped); all freed on return
 * @n: number of entries
 *
 * Advances every communicator in turn, so collectives of different
 * communicators run concurrently; when none can move it sleeps on one
 * unfinished request's CQ for at most 1 ms (busy-polls first for the
 * communicators' spin_us).
 * Return: 0 when every request succeeded, else the error of the first
 * (in @reqs order) that failed; -EINVAL, with nothing waited for or
 * freed, when @reqs is NULL with @n > 0 or holds one request twice.
 */
int xnic_coll_waitall(struct xnic_coll_req **reqs, int n);

/**
 * xnic_coll_waitany() - block until one of several requests is done, or
 *	for at most a while
 * @reqs: @n requests, of one or several communicators (NULL entries are
 *	skipped); none is freed
 * @n: number of entries
 * @timeout_ms: longest wait, milliseconds (<= 0: one pass, as
 *	xnic_coll_test() on each)
 *
 * Advances every request's communicator in turn until a request is done;
 * when none can move it sleeps in poll(2) on all their CQs' completion
 * channels at once, so a completion on any of them wakes it at once. For a thread that drives several
 * communicators and starts new collectives as earlier ones finish.
 * Return: the index of the first done request in @reqs (its result is
 * xnic_coll_test()'s: success or its errno; free it with
 * xnic_coll_req_free()); -EAGAIN when none was done within @timeout_ms;
 * -EINVAL when @reqs is NULL with @n > 0.
 */
int xnic_coll_waitany(struct xnic_coll_req **reqs, int n, int timeout_ms);

/**
 * xnic_coll_req_free() - free a request
 * @req: request (NULL is ignored); one not done yet is waited for first
 */
void xnic_coll_req_free(struct xnic_coll_req *req);

#ifdef __cplusplus
}
#endif

#endif /* XNIC_COLL_H */
