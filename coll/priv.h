/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxniccoll internals: the communicator, its per-peer channel state,
 * and the functions the source files share.
 *
 * Channels. Between every ordered pair of ranks (sender s, receiver r)
 * there are two data channels on the RC QP of the pair, each a ring of
 * `slots` chunk-sized slots in r's scratch region:
 *   RS   reduce-scatter parts; r holds a slot until it has reduced the
 *        chunk (it needs every rank's part first);
 *   COPY all-gather and broadcast chunks; r copies a slot out as soon as
 *        the chunk lands.
 * Message number m of a channel goes to slot m % slots. The sender may
 * post message m once the receiver has consumed message m - slots: the
 * receiver reports what it consumed with CREDIT messages (zero-length
 * WRITE WITH IMM carrying the consumed count). Completions of an RC QP
 * are in order, so each side just counts. The counters run across
 * collectives: a fast rank may already send for the next collective,
 * and its messages wait in their slots until the slow rank gets there.
 * Barriers use CTRL messages, which take no slot.
 *
 * All counters are 64-bit and never wrap in practice; the immediates
 * carry only their low bits, for checking (see coll_logic.h).
 */
#ifndef XNIC_COLL_PRIV_H
#define XNIC_COLL_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "xnic.h"
#include "xnic_coll.h"
#include "coll_logic.h"

#define XNIC_COLL_MAGIC		0x58434f4cU	/* "XCOL" */
#define XNIC_COLL_VERSION	3U
#define XNIC_COLL_MAX_SLOTS	64U
#define XNIC_COLL_SQ_DEPTH	64U
#define XNIC_COLL_RQ_DEPTH	64U
#define XNIC_COLL_CTRL_RING	8U	/* CTRL messages a peer can be ahead */
#define XNIC_COLL_ERRLEN	256

/*
 * wr_id of a write: kind << 56 | peer rank << 40 | local slot << 32 |
 * bytes. The completion thus says which outbox slot is free again and
 * how much data left the in-flight budget.
 */
#define XNIC_COLL_WRID(kind, peer, slot, bytes) \
	((uint64_t)(kind) << 56 | (uint64_t)((peer) & 0xffff) << 40 | \
	 (uint64_t)((slot) & 0xff) << 32 | (uint32_t)(bytes))
#define XNIC_COLL_WRID_KIND(id)		((unsigned int)((id) >> 56))
#define XNIC_COLL_WRID_PEER(id)		((unsigned int)((id) >> 40) & 0xffffU)
#define XNIC_COLL_WRID_SLOT(id)		((unsigned int)((id) >> 32) & 0xffU)
#define XNIC_COLL_WRID_BYTES(id)	((uint32_t)(id))

/**
 * struct xnic_coll_chan_rx - our end of a peer's channel into us
 * @arrived: messages landed
 * @consumed: messages we are done with (their slots may be reused)
 * @credited: @consumed as last reported to the peer
 * @imm: immediate of each message in a slot, host order, [slots]
 * @len: byte length of each message in a slot, [slots]
 */
struct xnic_coll_chan_rx {
	uint64_t arrived;
	uint64_t consumed;
	uint64_t credited;
	uint32_t *imm;
	uint32_t *len;
};

/**
 * struct xnic_coll_chan_tx - our end of our channel into a peer
 * @posted: messages posted
 * @credit: messages the peer reported consumed
 * @done: messages whose local completion we reaped (RS only: frees our
 *	outbox slot)
 * @raddr: the peer's inbox for us, slot 0
 */
struct xnic_coll_chan_tx {
	uint64_t posted;
	uint64_t credit;
	uint64_t done;
	uint64_t raddr;
};

/**
 * struct xnic_coll_peer - everything about one peer rank
 * @qp: the RC QP to it
 * @node: its node id
 * @rkey: rkey of its scratch region
 * @pi: its compact index (see struct xnic_coll_layout)
 * @tx: our channels into it, by XNIC_COLL_CH_*
 * @rx: its channels into us, by XNIC_COLL_CH_*
 * @ctrl_arrived: CTRL messages landed
 * @ctrl_consumed: CTRL messages a barrier used
 * @ctrl_imm: immediates of unused CTRL messages
 * @owed_recvs: receive WQEs reaped and not yet reposted
 * @rs_sent: this collective: RS parts posted to it
 * @cp_sent: this collective: COPY chunks posted to it
 * @cp_recvd: this collective: COPY chunks from it copied out
 * @ctrl_sent: this barrier: CTRL posted to it
 * @gone: it disconnected (its process died, or its communicator was
 *	destroyed or failed): its QP is in the error state
 */
struct xnic_coll_peer {
	struct xnic_qp *qp;
	uint32_t node;
	uint32_t rkey;
	unsigned int pi;
	struct xnic_coll_chan_tx tx[2];
	struct xnic_coll_chan_rx rx[2];
	uint64_t ctrl_arrived;
	uint64_t ctrl_consumed;
	uint32_t ctrl_imm[XNIC_COLL_CTRL_RING];
	unsigned int owed_recvs;
	size_t rs_sent;
	size_t cp_sent;
	size_t cp_recvd;
	bool ctrl_sent;
	bool gone;
};

/**
 * struct xnic_coll_job - one all-reduce or broadcast in progress
 * @bcast: a broadcast (no RS step; the root produces by copying)
 * @hier: a hierarchical all-reduce (three phases, see ops.c)
 * @dtype: enum xnic_coll_dtype (all-reduce)
 * @esize: bytes per element (1 for a broadcast)
 * @count: elements (all-reduce) or bytes (broadcast)
 * @root: the broadcast's root
 * @send: input (all-reduce) or the root's buffer
 * @recv: output
 * @ce: elements per chunk
 * @phase: the phase running (0 for the one-phase collectives)
 * @rs: this phase reduces (RS parts in, our shard reduced)
 * @ag: this phase all-gathers (our shard out, the others' in)
 * @src: this phase's input: @send, or @recv once it holds partial sums
 * @produced: chunks of our shard reduced (or copied, at the root)
 * @ag_base: c->ag_produced when the phase began
 */
struct xnic_coll_job {
	bool bcast;
	bool hier;
	int dtype;
	size_t esize;
	size_t count;
	int root;
	const char *send;
	char *recv;
	size_t ce;
	int phase;
	bool rs;
	bool ag;
	const char *src;
	size_t produced;
	uint64_t ag_base;
};

/**
 * struct xnic_coll_waiter - what runs a collective (see request.c)
 * @begin: set the communicator up for it when it becomes active
 * @step: make what progress can be made without waiting; return 1 when
 *	finished, 0 when not yet, or a negative errno (message set)
 * @describe: write what is being waited for (for the timeout message)
 * @needs: whether it still needs anything from or to a peer (a peer that
 *	left once it had all it needed from us is no error)
 */
struct xnic_coll_waiter {
	void (*begin)(struct xnic_comm *c, struct xnic_coll_req *q);
	int (*step)(struct xnic_comm *c, struct xnic_coll_req *q);
	void (*describe)(struct xnic_comm *c, struct xnic_coll_req *q,
			 char *buf, size_t size);
	bool (*needs)(struct xnic_comm *c, struct xnic_coll_req *q, int r);
};

/* States of a request */
enum {
	XNIC_COLL_REQ_QUEUED,	/* behind another of its communicator */
	XNIC_COLL_REQ_ACTIVE,	/* the communicator runs it */
	XNIC_COLL_REQ_DONE,	/* finished (err says how) */
};

/**
 * struct xnic_coll_req - a collective started (struct xnic_coll_req of
 *	xnic_coll.h)
 * @comm: its communicator
 * @next: the next request queued on @comm
 * @name: the collective, for messages
 * @w: how it runs
 * @job: all-reduce and broadcast state
 * @state: XNIC_COLL_REQ_*
 * @err: when done: 0 or the negative errno it failed with
 * @msg: when failed: why (its own copy: @comm may be destroyed first)
 */
struct xnic_coll_req {
	struct xnic_comm *comm;
	struct xnic_coll_req *next;
	const char *name;
	const struct xnic_coll_waiter *w;
	struct xnic_coll_job job;
	int state;
	int err;
	char msg[XNIC_COLL_ERRLEN];
};

/**
 * struct xnic_comm - a communicator
 * @rank: our rank
 * @nranks: number of ranks
 * @ctx: the device (NULL when @nranks is 1)
 * @listener: while connecting: where the peers above us connect to
 * @service: its service id
 * @pd: protection domain
 * @cq: the one CQ of every QP, send and receive
 * @mr: the scratch region's MR
 * @region: the scratch region
 * @region_len: its size
 * @lay: its layout
 * @timeout_ms: longest wait without progress
 * @spin_us: busy-poll time before sleeping
 * @max_inline: inline bytes per WQE of our QPs
 * @peers: by rank; our own entry is unused
 * @ag_produced: chunks produced into the AG outbox, ever
 * @ag_ref: per AG outbox slot, writes from it not yet completed
 * @outstanding: signaled writes not yet completed
 * @inflight: bytes of data writes not yet completed
 * @max_inflight: limit of @inflight; one write always goes
 * @seq: collectives started (all kinds)
 * @barriers: barriers started
 * @want_algo: the enum xnic_coll_algo asked for (cfg or environment)
 * @algo: XNIC_COLL_ALGO_FLAT or XNIC_COLL_ALGO_HIER (all-reduce)
 * @nappl: appliances the ranks are on (0: not known)
 * @all: every rank, in order (the group of the one-phase collectives)
 * @local: hierarchical: the ranks of our appliance, in rank order
 * @across: hierarchical: the rank at our index of @local in each
 *	appliance, in appliance order (ours included)
 * @nlocal: ranks in @local
 * @li: our index in @local
 * @grp: this phase: the ranks taking part (@all, @local or @across)
 * @ngrp: their number
 * @gi: our index in @grp
 * @off: this phase: first element of each rank's shard (0 outside @grp)
 * @len: this phase: elements of each rank's shard (0 outside @grp)
 * @nch: this phase: chunks of each rank's shard
 * @srcs: reduction sources, one per member of @grp
 * @head: the active request, then the queued ones in start order
 * @tail: the last queued request
 * @last_ns: when the active request last made progress
 * @seen_ns: when the communicator was last advanced
 * @progress: set by whatever did something in this loop iteration
 * @need_poll: something we wait for raises no completion (a full SQ or
 *	RQ): do not sleep long
 * @gone: peers gone (struct xnic_coll_peer.gone)
 * @first_gone: the rank that went first (named in the error: the others
 *	may have left because of it)
 * @failed: the error that broke the communicator, 0 while healthy
 * @err: message of the last error
 */
struct xnic_comm {
	int rank;
	int nranks;
	struct xnic_ctx *ctx;
	struct xnic_cm_listener *listener;
	uint64_t service;
	struct xnic_pd *pd;
	struct xnic_cq *cq;
	struct xnic_mr *mr;
	char *region;
	size_t region_len;
	struct xnic_coll_layout lay;
	int timeout_ms;
	unsigned int spin_us;
	uint32_t max_inline;
	struct xnic_coll_peer *peers;
	uint64_t ag_produced;
	uint32_t *ag_ref;
	uint64_t outstanding;
	uint64_t inflight;
	uint64_t max_inflight;
	unsigned int seq;
	uint64_t barriers;
	int want_algo;
	int algo;
	int nappl;
	int *all;
	int *local;
	int *across;
	int nlocal;
	int li;
	const int *grp;
	int ngrp;
	int gi;
	size_t *off;
	size_t *len;
	size_t *nch;
	const void **srcs;
	struct xnic_coll_req *head;
	struct xnic_coll_req *tail;
	uint64_t last_ns;
	uint64_t seen_ns;
	bool progress;
	bool need_poll;
	int gone;
	int first_gone;
	int failed;
	char err[XNIC_COLL_ERRLEN];
};

/* error.c */
int xnic_coll_seterr(struct xnic_comm *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void xnic_coll_clear_tls_error(void);
const char *xnic_coll_tls_error(void);

/* progress.c */
int xnic_coll_poll(struct xnic_comm *c);
int xnic_coll_post(struct xnic_comm *c, int peer, unsigned int kind,
		   unsigned int lslot, const void *data, uint32_t bytes,
		   uint64_t raddr, uint32_t imm);
int xnic_coll_flush_credits(struct xnic_comm *c, int peer);
bool xnic_coll_may_send(struct xnic_comm *c, size_t bytes);
void xnic_coll_drain(struct xnic_comm *c);
int xnic_coll_fail(struct xnic_comm *c, int err);
int xnic_coll_check_msg(struct xnic_comm *c, int peer, const char *what,
			unsigned int kind, uint32_t imm, uint64_t idx,
			uint32_t len, uint32_t want_len);

/* mesh_nl.c */
int xnic_coll_mesh_nodes(const char *device, uint32_t *nodes,
			 unsigned int max);

/* hier.c */
int xnic_coll_pick_algo(struct xnic_comm *c, int want, const uint8_t *mesh);
void xnic_coll_mesh_row(struct xnic_comm *c, const char *device,
			uint8_t *row);

/* connect.c */
int xnic_coll_listen(struct xnic_comm *c, uint64_t *service);
int xnic_coll_connect_peers(struct xnic_comm *c, const uint64_t *services,
			    const uint32_t *qpns);
int xnic_coll_gone_check(struct xnic_comm *c, struct xnic_coll_req *q);

/* request.c */
int xnic_coll_submit(struct xnic_comm *c, struct xnic_coll_req *q,
		     struct xnic_coll_req **reqp);
struct xnic_coll_req *xnic_coll_req_new(struct xnic_comm *c,
					const char *name,
					const struct xnic_coll_waiter *w);
void xnic_coll_cancel_all(struct xnic_comm *c);

/* Monotonic clock, nanoseconds. */
static inline uint64_t xnic_coll_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* XNIC_COLL_PRIV_H */
