/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The native FI_EP_RDM endpoint (private to fi_xnic_rdm*.c, fi_xnic_av.c
 * and the CQ): reliable unconnected messages and tagged messages over one
 * reliable connected xnic QP per peer and direction.
 *
 * - Connections: one reliable connected QP per pair of endpoints, used
 *   both ways (so a reply goes on the QP its request came on, and all
 *   messages to one peer stay in order, FI_ORDER_SAS). An RDM endpoint
 *   listens on its address's service id; the first send to a peer
 *   connects (the REQ's private data names our port) and the peer's CM
 *   thread accepts. When both ends connect at once, the connection of the
 *   lower address (node, then port) wins: its owner refuses the other REQ
 *   (FI_XNIC_RDM_COLLISION), the other end accepts it and drops its own.
 *   A connection that failed is retired at once, and the next send to
 *   that peer connects again (a reconnection); a REQ from a new endpoint
 *   at a known address (its incarnation differs), one marked as a
 *   reconnection, or one for a connection whose QP failed replaces the
 *   connection we have. A retired connection stays, found by no lookup,
 *   until nothing refers to it (fi_xnic_rdm_reap()), so that the room of
 *   a peer gone for good comes back.
 * - Protocol (our own, inside SEND payloads; struct fi_xnic_rdm_hdr):
 *   EAGER carries a message of up to FI_XNIC_RDM_EAGER bytes after its
 *   header, into the receiver's bounce buffers; larger messages send an
 *   RTS naming the sender's buffer (registered for the message), the
 *   receiver RDMA READs it into the matched receive buffer and answers
 *   FIN, which completes the send. Eager credits bound what a peer can
 *   make us hold: an EAGER message too large to go inline takes one of
 *   the connection's FI_XNIC_RDM_CREDITS (FI_XNIC_RDM_F_CREDIT); the
 *   receiver returns them in a CREDIT message once half have been
 *   consumed (matched, or discarded); without a credit the message goes
 *   as an RTS (an FI_INJECT one from a registered copy), so a receiver
 *   that does not receive holds at most FI_XNIC_RDM_CREDITS bounce-sized
 *   copies per peer, and no sender ever waits for credits (a wait could
 *   deadlock a legal program). A peer is input like the wire: a
 *   header that does not parse is dropped and counted, a FIN that names no
 *   pending send is ignored.
 * - Matching: posted receives and unexpected messages, each a FIFO, one
 *   pair for FI_MSG and one for FI_TAGGED (fi_tagged(3): tag, ignore,
 *   source when the receive names one; FI_PEEK, FI_CLAIM, FI_DISCARD).
 * - Progress: manual, in fi_cq_read of a CQ the endpoint is bound to, in
 *   a send short of bounce buffers, eager credits or SQ room, and in an
 *   FI_PEEK receive (a plain receive needs none: what is still in the CQ
 *   meets the posted queue when progress reaches it, in arrival order);
 *   connections are accepted by a thread.
 *   Completions the provider makes are queued in the user CQ's software
 *   ring (struct fi_xnic_cq.sw).
 */
#ifndef FI_XNIC_RDM_H
#define FI_XNIC_RDM_H

#include "fi_xnic.h"
#include <rdma/fi_tagged.h>

#define FI_XNIC_RDM_BUF		16384	/* receive bounce buffer, bytes */
#define FI_XNIC_RDM_EAGER	(FI_XNIC_RDM_BUF - \
				 (int)sizeof(struct fi_xnic_rdm_hdr))
#define FI_XNIC_RDM_RX_BUFS	32	/* bounce buffers per QP */
#define FI_XNIC_RDM_TX_BUFS	64	/* send bounce buffers per endpoint */
#define FI_XNIC_RDM_SQ		128	/* SQ entries per QP */
#define FI_XNIC_RDM_CREDITS	64	/* eager credits per connection */
#define FI_XNIC_RDM_CQ		16384	/* CQ entries of an endpoint's QPs */
#define FI_XNIC_RDM_SPARE	64	/* freed requests kept for reuse */
#define FI_XNIC_RDM_MAGIC	0x78726d31U	/* "xrm1": REQ private data */
#define FI_XNIC_RDM_COLLISION	0x78726d43U	/* REJ: use my connection */

enum fi_xnic_rdm_op {
	FI_XNIC_RDM_EAGER_OP = 1,
	FI_XNIC_RDM_RTS,
	FI_XNIC_RDM_FIN,
	FI_XNIC_RDM_CREDIT,
};

#define FI_XNIC_RDM_F_TAGGED	0x1
#define FI_XNIC_RDM_F_DATA	0x2
#define FI_XNIC_RDM_F_CREDIT	0x4	/* took an eager credit */

/**
 * struct fi_xnic_rdm_hdr - the header of every message between RDM
 * endpoints (host byte order: both ends are this provider on one fabric)
 * @op: enum fi_xnic_rdm_op
 * @flags: FI_XNIC_RDM_F_*
 * @rsvd: zero
 * @data: remote CQ data (cq_data_size 4) when FI_XNIC_RDM_F_DATA
 * @tag: the tag (FI_TAGGED); FIN: the id of the send it completes;
 *	CREDIT: how many eager credits it returns
 */
struct fi_xnic_rdm_hdr {
	uint8_t op;
	uint8_t flags;
	uint16_t rsvd;
	uint32_t data;
	uint64_t tag;
};

/**
 * struct fi_xnic_rdm_rts - what follows an RTS header
 * @len: message length, bytes
 * @addr: the sender's buffer (its MR is registered with FI_REMOTE_READ)
 * @rkey: its rkey
 * @rsvd: zero
 * @id: the send's id, echoed by the FIN
 */
struct fi_xnic_rdm_rts {
	uint64_t len;
	uint64_t addr;
	uint32_t rkey;
	uint32_t rsvd;
	uint64_t id;
};

/*
 * This REQ replaces a connection of ours that failed (creq.flags), the
 * one to the peer's QP creq.replaces.
 */
#define FI_XNIC_RDM_CREQ_RECONNECT	0x1

/*
 * What the REQ of a connection carries (private data), and the REP of an
 * accepted one: the endpoint's port and incarnation (a random number
 * drawn at fi_enable), so that a peer can tell a new endpoint at an old
 * address, or a reconnection, from a second REQ of a live connection;
 * and which connection a reconnection replaces, so that one crossing a
 * newer connection the peer made meanwhile is refused as a collision.
 */
struct fi_xnic_rdm_creq {
	uint32_t magic;
	uint16_t port;		/* the connecting endpoint's port */
	uint16_t flags;		/* FI_XNIC_RDM_CREQ_* */
	uint32_t inc;		/* its incarnation */
	uint32_t replaces;	/* RECONNECT: the peer's QPN it had */
};

struct fi_xnic_rdm_ep;
struct fi_xnic_rdm_conn;

/* A bounce buffer posted on a QP's RQ (wr_id). */
struct fi_xnic_rdm_rxbuf {
	uint8_t kind;			/* FI_XNIC_RDM_K_RXBUF */
	struct fi_xnic_rdm_conn *conn;
	void *buf;
};

/* What an internal wr_id points to: its first byte says which. */
enum {
	FI_XNIC_RDM_K_RXBUF = 1,
	FI_XNIC_RDM_K_OP,
};

/* A FIFO of requests. */
struct fi_xnic_rdm_queue {
	struct fi_xnic_rdm_req *head, *tail;
};

/* How far a connection got (struct fi_xnic_rdm_conn.state). */
enum fi_xnic_rdm_conn_state {
	FI_XNIC_RDM_CONNECTING,		/* our REQ is out */
	FI_XNIC_RDM_ACCEPTING,		/* the peer's REQ is being accepted */
	FI_XNIC_RDM_READY,
};

/**
 * struct fi_xnic_rdm_conn - the QP to a peer endpoint
 * @qp: the QP (RTS once connected)
 * @ep: its endpoint
 * @peer: the peer's fi_addr (FI_ADDR_NOTAVAIL: not in the AV yet)
 * @node: the peer's node id
 * @port: the peer endpoint's port
 * @state: enum fi_xnic_rdm_conn_state
 * @dead: its QP failed, or it never connected: nothing is posted on it
 * @superseded: the peer's connection won a collision: this one (ours,
 *	connecting) is dropped when its REQ returns
 * @stale: retired (it failed, or the peer connected again): found by no
 *	lookup, freed by fi_xnic_rdm_reap() once nothing refers to it
 * @qp_gone: its QP was destroyed (@qp NULL); its CQ entries stay taken
 *	until it is freed
 * @peer_inc: the peer endpoint's incarnation (struct fi_xnic_rdm_creq)
 * @peer_qpn: the peer's QP
 * @bufs: the bounce buffers of its RQ
 * @nbufs: how many
 * @repost: buffers to post again when the RQ has room (@nrepost), see
 *	xnic_repost()
 * @nrepost: see @repost
 * @mem: their memory, @mr its registration
 * @mr: see @mem
 * @pend: READs, FINs and CREDITs waiting for room in the SQ, in order
 * @credit: eager messages above the inline size we may still send before
 *	the peer returns credits (then we send an RTS instead)
 * @owed: eager credits of the peer's messages consumed, not returned yet
 * @next: the endpoint's list
 */
struct fi_xnic_rdm_conn {
	struct xnic_qp *qp;
	struct fi_xnic_rdm_ep *ep;
	fi_addr_t peer;
	uint32_t node;
	uint16_t port;
	uint8_t state;
	bool dead;
	bool superseded;
	bool stale;
	bool qp_gone;
	uint32_t peer_inc;
	uint32_t peer_qpn;
	struct fi_xnic_rdm_rxbuf *bufs;
	unsigned int nbufs;
	struct fi_xnic_rdm_rxbuf **repost;
	unsigned int nrepost;
	void *mem;
	struct xnic_mr *mr;
	struct fi_xnic_rdm_queue pend;
	unsigned int credit;
	unsigned int owed;
	struct fi_xnic_rdm_conn *next;
};

/* What a struct fi_xnic_rdm_req is doing. */
enum fi_xnic_rdm_req_type {
	FI_XNIC_RDM_REQ_SEND,		/* an EAGER send, waits for its CQE */
	FI_XNIC_RDM_REQ_RTS,		/* a large send, waits for its FIN */
	FI_XNIC_RDM_REQ_RECV,		/* a posted receive */
	FI_XNIC_RDM_REQ_READ,		/* a matched RTS: READ in flight */
	FI_XNIC_RDM_REQ_FIN,		/* a FIN waiting for room in the SQ */
	FI_XNIC_RDM_REQ_CREDIT,		/* a CREDIT waiting likewise */
	FI_XNIC_RDM_REQ_UNEXP,		/* an unexpected message */
};

/**
 * struct fi_xnic_rdm_req - a send, a receive or an unexpected message
 * @kind: FI_XNIC_RDM_K_OP (first: it may be a wr_id)
 * @type: enum fi_xnic_rdm_req_type
 * @flags: FI_MSG or FI_TAGGED, FI_SEND or FI_RECV, and the operation's
 *	flags (FI_COMPLETION, FI_REMOTE_CQ_DATA, ...)
 * @context: the user's context
 * @conn: the connection it travels or came on (NULL: loopback)
 * @addr: receive: the source it accepts (FI_ADDR_UNSPEC: any);
 *	unexpected: where it came from
 * @tag: tag
 * @ignore: receive: tag bits that do not matter
 * @data: remote CQ data
 * @buf: the user's buffer (iov_limit is 1)
 * @size: its size, bytes
 * @len: the message's length (unexpected, RTS, matched receive)
 * @mr: the MR registered for this request, or NULL
 * @txbuf: send bounce buffer index, or -1
 * @id: RTS send: its id; unexpected RTS and READ: the sender's id
 * @raddr: unexpected RTS and READ: the sender's buffer
 * @rkey: its rkey
 * @payload: unexpected EAGER: a copy of the message; rendezvous
 *	FI_INJECT send: the copy the peer READs
 * @credit: unexpected EAGER: it took an eager credit of @conn
 * @claim: FI_CLAIM: the context that claimed this unexpected message
 * @next: the queue it is on
 * @iprev: the endpoint's in-flight list (requests the QPs hold)
 * @inext: see @iprev
 */
struct fi_xnic_rdm_req {
	uint8_t kind;
	uint8_t type;
	uint64_t flags;
	void *context;
	struct fi_xnic_rdm_conn *conn;
	fi_addr_t addr;
	uint64_t tag;
	uint64_t ignore;
	uint64_t data;
	void *buf;
	size_t size;
	uint64_t len;
	struct xnic_mr *mr;
	int txbuf;
	uint64_t id;
	uint64_t raddr;
	uint32_t rkey;
	void *payload;
	bool credit;
	void *claim;
	struct fi_xnic_rdm_req *next;
	struct fi_xnic_rdm_req *iprev, *inext;
};

/**
 * struct fi_xnic_rdm_ep - an FI_EP_RDM endpoint
 * @ep_fid: the libfabric object
 * @domain: its domain
 * @info: its fi_info
 * @av: the bound AV
 * @tx_cq: CQ of sends, @rx_cq of receives
 * @rx_cq: see @tx_cq
 * @tx_selective: FI_SELECTIVE_COMPLETION on the send side
 * @rx_selective: the same on the receive side
 * @xcq: the xnic CQ of all its QPs (internal)
 * @addr: its address (node, port)
 * @lock: everything below (progress, matching, connections)
 * @conns: every connection (made or accepted)
 * @conn_cond: signalled when a connection gets ready or fails
 * @tx: ready connections by fi_addr (@ntx entries): a cache of @conns
 * @ntx: see @tx
 * @av_removed: @av's removed count when @tx, the connections' @peer and
 *	the unexpected messages' @addr were last checked against the AV
 * @posted: posted receives, [0] FI_MSG, [1] FI_TAGGED
 * @unexp: unexpected messages, [0] FI_MSG, [1] FI_TAGGED
 * @txmem: send bounce buffers (@txmr), @txfree their free list
 * @txmr: see @txmem
 * @txfree: a stack of free buffer indices (@ntxfree)
 * @ntxfree: see @txfree
 * @inflight: requests the QPs hold (SEND, RTS, READ)
 * @spare: freed requests kept for reuse (@nspare, at most
 *	FI_XNIC_RDM_SPARE), linked by @next: a receive or a send then
 *	costs no malloc/free
 * @nspare: see @spare
 * @cqe_budget: @xcq entries not yet promised to a QP
 * @directed: FI_DIRECTED_RECV: receives match the source they name
 * @next_id: the next RTS id
 * @nrepost: connections with buffers to post again
 * @npend: connections with READs or FINs to post
 * @nstale: connections replaced, not freed yet
 * @inc: this endpoint's incarnation (struct fi_xnic_rdm_creq)
 * @bad_hdr: messages dropped because their header did not parse
 * @listener: CM listener of @addr's service id
 * @cm_thread: accepts connections
 * @cm_stop_fd: eventfd that stops @cm_thread
 * @enabled: fi_enable done
 */
struct fi_xnic_rdm_ep {
	struct fid_ep ep_fid;
	struct fi_xnic_domain *domain;
	struct fi_info *info;
	struct fi_xnic_av *av;
	struct fi_xnic_cq *tx_cq, *rx_cq;
	bool tx_selective, rx_selective;
	struct xnic_cq *xcq;
	struct fi_xnic_addr addr;
	pthread_mutex_t lock;
	struct fi_xnic_rdm_conn *conns;
	pthread_cond_t conn_cond;
	struct fi_xnic_rdm_conn **tx;
	size_t ntx;
	unsigned long av_removed;
	struct fi_xnic_rdm_queue posted[2], unexp[2];
	void *txmem;
	struct xnic_mr *txmr;
	int txfree[FI_XNIC_RDM_TX_BUFS];
	int ntxfree;
	struct fi_xnic_rdm_req *inflight;
	struct fi_xnic_rdm_req *spare;
	unsigned int nspare;
	unsigned int cqe_budget;
	bool directed;
	uint64_t next_id;
	unsigned int nrepost;
	unsigned int npend;
	unsigned int nstale;
	uint32_t inc;
	uint64_t bad_hdr;
	struct xnic_cm_listener *listener;
	pthread_t cm_thread;
	int cm_stop_fd;
	bool enabled;
};

/* fi_xnic_rdm.c: the object, connections */
int fi_xnic_rdm_endpoint(struct fid_domain *domain, struct fi_info *info,
			 struct fid_ep **ep, void *context);
int fi_xnic_rdm_conn_get(struct fi_xnic_rdm_ep *ep, fi_addr_t dest,
			 struct fi_xnic_rdm_conn **connp);
void fi_xnic_rdm_av_sync(struct fi_xnic_rdm_ep *ep);
void fi_xnic_rdm_reap(struct fi_xnic_rdm_ep *ep);
void fi_xnic_rdm_conn_retire(struct fi_xnic_rdm_ep *ep,
			     struct fi_xnic_rdm_conn *c);

#define XNIC_HDR	sizeof(struct fi_xnic_rdm_hdr)

/* fi_xnic_rdm_proto.c: the protocol, under the endpoint's lock */
struct fi_xnic_rdm_req *fi_xnic_rdm_req_new(struct fi_xnic_rdm_ep *ep,
					    uint8_t type);
void fi_xnic_rdm_req_free(struct fi_xnic_rdm_ep *ep,
			  struct fi_xnic_rdm_req *r);
void fi_xnic_rdm_spare_free(struct fi_xnic_rdm_ep *ep);
/* @r is held by a QP (or waits for one): freed by fi_xnic_rdm_flush(). */
void fi_xnic_rdm_inflight_add(struct fi_xnic_rdm_ep *ep,
			      struct fi_xnic_rdm_req *r);
void fi_xnic_rdm_queue_add(struct fi_xnic_rdm_queue *q,
			   struct fi_xnic_rdm_req *r);
/* Unlink @r, which follows @prev (NULL: the head). */
void fi_xnic_rdm_queue_del(struct fi_xnic_rdm_queue *q,
			   struct fi_xnic_rdm_req *prev,
			   struct fi_xnic_rdm_req *r);
/* Report @r: @err 0, or a positive FI_ errno (fi_xnic_cq_put()). */
void fi_xnic_rdm_complete(struct fi_xnic_rdm_ep *ep,
			  struct fi_xnic_rdm_req *r, int err, int prov_errno,
			  size_t olen);
/* An inline SEND of @a and @b (@wr_id 0: unsignaled). */
int fi_xnic_rdm_send_inline(struct fi_xnic_rdm_conn *c, const void *a,
			    size_t alen, const void *b, size_t blen,
			    uint64_t wr_id);
void fi_xnic_rdm_send_fin(struct fi_xnic_rdm_ep *ep,
			  struct fi_xnic_rdm_conn *c, uint64_t id);
void fi_xnic_rdm_consumed(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_req *u);
/* A message (EAGER payload, or @rts) from @c (NULL: loopback) arrived. */
void fi_xnic_rdm_arrived(struct fi_xnic_rdm_ep *ep,
			 struct fi_xnic_rdm_conn *c,
			 const struct fi_xnic_rdm_hdr *h,
			 const struct fi_xnic_rdm_rts *rts, const void *payload,
			 uint64_t len);
/* Deliver unexpected message @u into receive @r; frees @u. */
void fi_xnic_rdm_deliver(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_req *r,
			 struct fi_xnic_rdm_req *u);
bool fi_xnic_rdm_match(const struct fi_xnic_rdm_req *r, fi_addr_t src,
		       uint64_t tag);
/*
 * The fi_addr of what arrives on @c (NULL: this endpoint), as the AV has
 * it now: FI_ADDR_NOTAVAIL when not (or no longer) there.
 */
fi_addr_t fi_xnic_rdm_src(struct fi_xnic_rdm_ep *ep,
			  struct fi_xnic_rdm_conn *c);
void fi_xnic_rdm_progress(struct fi_xnic_rdm_ep *ep);
/* @c's QP failed (@status: an xnic CQE status): its RTS sends fail. */
void fi_xnic_rdm_conn_failed(struct fi_xnic_rdm_ep *ep,
			     struct fi_xnic_rdm_conn *c, unsigned int status);
void fi_xnic_rdm_flush(struct fi_xnic_rdm_ep *ep);

/* fi_xnic_rdm_ops.c: the operations */
extern struct fi_ops_msg fi_xnic_rdm_msg_ops;
extern struct fi_ops_tagged fi_xnic_rdm_tagged_ops;

/* fi_xnic_av.c */
struct fi_xnic_av {
	struct fid_av av_fid;
	struct fi_xnic_domain *domain;
	pthread_mutex_t lock;
	struct fi_xnic_addr *addrs;	/* by fi_addr; family 0: free */
	size_t count, size;
	unsigned int refs;		/* bound endpoints */
	/* fi_av_remove calls that removed something: endpoints compare it
	 * with what they cached (fi_xnic_rdm_av_sync()) */
	unsigned long removed;
};

int fi_xnic_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		    struct fid_av **av, void *context);
int fi_xnic_av_get(struct fi_xnic_av *av, fi_addr_t fi_addr,
		   struct fi_xnic_addr *addr);
fi_addr_t fi_xnic_av_find(struct fi_xnic_av *av, uint32_t node,
			  uint16_t port);

/* fi_xnic_cq.c: the software ring of provider-made completions */
int fi_xnic_cq_put(struct fi_xnic_cq *cq, const struct fi_cq_tagged_entry *e,
		   fi_addr_t src, int err, int prov_errno, size_t olen);
int fi_xnic_cq_add_rdm(struct fi_xnic_cq *cq, struct fi_xnic_rdm_ep *ep);
void fi_xnic_cq_del_rdm(struct fi_xnic_cq *cq, struct fi_xnic_rdm_ep *ep);

#endif /* FI_XNIC_RDM_H */
