/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic - transport internals shared by wire.c, peer.c, tx*.c and rx*.c.
 * Not for use outside the transport; the API is transport.h.
 *
 * Execution model: the per-QP state (struct xnic_tp_qp) is used from
 *  - softirq: the member links' packet handler (xnic_tp_rx(): responder,
 *    ACK processing, READ responses, and the transmissions an ACK makes
 *    possible), and the QP's retransmission timer;
 *  - process context: the wakeup syscall (xnic_tp_qp_process() inline),
 *    and the engine thread (xnic_tp_qp_process(), xnic_tp_qp_flush(), the
 *    reset and release of the state).
 * They serialise on the QP's tp lock (struct xnic_tp_qp.lock).
 *
 * Lock order (no lockdep here: keep to it):
 *   tp lock (BH)
 *     -> qp->state_lock (BH)       (xnic_tx_start(), xnic_qp_to_error())
 *     -> cq->lock (BH)             (xnic_cq_post())
 *     -> the engine's lock (BH)    (xnic_engine_activate_qp())
 *     -> the xarray lock of uverbs' event queues (QP and CQ events)
 * Nothing takes the tp lock while holding any of these. The tp lock is
 * taken with spin_lock_bh() everywhere (a no-op nesting in softirq), so a
 * transmission made under it runs the receive softirq it raises (veth)
 * only after the lock is dropped: a QP's own ACK never finds the lock held
 * by its own CPU. The responder's ACKs from the packet handler are the one
 * transmission made after the lock (xnic_tp_send_ack()).
 *
 * Lifetime: xnic_qp.tp.priv is published with RCU. Users take the lock
 * through xnic_tp_lock(), which fails once the state is marked dead;
 * xnic_tp_qp_release() marks it dead under the lock, stops the timer,
 * frees the tables and frees the struct after a grace period.
 */
#ifndef XNIC_TRANSPORT_PRIV_H
#define XNIC_TRANSPORT_PRIV_H

#include <linux/atomic.h>
#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <linux/ratelimit.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "xnic.h"
#include "verbs.h"
#include "transport.h"
#include "wire.h"
#include "credit.h"
#include "bond.h"
#include "link_credit.h"
#include "cwnd_logic.h"
#include "reorder_logic.h"

/* ------------------------------ tunables ------------------------------ */

/* PSNs a requester keeps unacknowledged per QP. */
#define XNIC_TX_WINDOW		256
/* Most WQEs a requester has copied out of the SQ and not completed. */
#define XNIC_TX_MAX_WQE		256
/* Most READ_REQs a requester has outstanding (each up to 64 frames). */
#define XNIC_TX_MAX_READS	4
/* RNR retry count that means "retry for ever" (IBTA) */
#define XNIC_RNR_INFINITE	7
/* Frames xnic_tp_qp_process() sends before yielding to other QPs. */
#define XNIC_TX_BUDGET		32
/* Payload bytes from which data frames are built zero copy (page frags). */
#define XNIC_TX_ZC_MIN		1024
/* Frames an ACK may send inline (softirq) once it opened the window. */
#define XNIC_TX_ACK_BUDGET	32
/* READ_RESP frames a READ_REQ may send inline (softirq); the rest later. */
#define XNIC_RX_READ_BUDGET	16
/* A requester asks for an ACK at least every this many PSNs. */
#define XNIC_TX_ACKREQ_EVERY	16
/*
 * Retransmission timeout (ms) when the QP's IBTA timeout attribute is 0.
 * Once round trips are measured the timeout is SRTT + 4 * RTTVAR
 * (RFC 6298, rto_logic.h), never below the module parameter rto_min_us
 * (default XNIC_TX_RTO_MIN_US) nor above XNIC_RTO_MAX_NS, the ceiling of
 * the exponential backoff too. The floor: a CPU that stalls (an emulated
 * one, descheduled for 10-20 ms now and then) delays an ACK past any
 * estimate made of idle round trips; at 10 ms a 4-node all-reduce of 64
 * MiB resent 3-46 frames per run, every one spurious (D-SACK), at 30 ms
 * none (Documentation/design.rst, the transport). RoCE NICs' local ACK
 * timeout is commonly 4.096 us x 2^14 = 67 ms; TCP's floor is 200 ms.
 */
#define XNIC_TX_RTO_MS		20
#define XNIC_TX_RTO_MIN_US	30000
/* Most receive WQEs a responder has copied out and not completed. */
#define XNIC_RX_MAX_MSG		256
/* Most READ_REQs a responder holds until the PSNs before them arrive. */
#define XNIC_RX_MAX_READS	16
/* A responder ACKs at least every this many new frames. */
#define XNIC_RX_ACK_EVERY	16
/*
 * Frames that asked for no ACK are acknowledged this many jiffies later
 * at the latest (the next tick): far below any retransmission timeout.
 */
#define XNIC_RX_ACK_DELAY	1
/* Headroom reserved in frames we build (link layer header and more). */
#define XNIC_TX_HEADROOM	(LL_MAX_HEADER + ETH_HLEN)
/* HELLO period, ms */
#define XNIC_HELLO_MS		1000
/* A path not heard from for this long (ms) may be relearned differently. */
#define XNIC_PEER_STALE_MS	(5 * XNIC_HELLO_MS)
/* A peer no link heard from for this long (ms) is forgotten. */
#define XNIC_PEER_EXPIRE_MS	(60 * XNIC_HELLO_MS)
/* Frames per second a device sends to paths that never answered. */
#define XNIC_UNANSWERED_PER_S	100
/*
 * How long after the transport starts or a member link attaches or comes
 * up the peer table may still be learning (HELLOs are answered at once
 * and sent every XNIC_HELLO_MS): before, a node missing from it may yet
 * come; after, it is unreachable.
 */
#define XNIC_PEER_LEARN_MS	(3 * XNIC_HELLO_MS)

/* ------------------------------ counters ------------------------------ */

/*
 * Per-device transport counters. Their names are in
 * xnic_tp_counter_names[] (peer.c); Documentation/wire-protocol.rst says
 * what each counts.
 */
enum xnic_tp_counter {
	XNIC_CNT_RX_FRAMES,
	XNIC_CNT_RX_BYTES,
	XNIC_CNT_TX_FRAMES,
	XNIC_CNT_TX_BYTES,
	XNIC_CNT_TX_DROPS,
	XNIC_CNT_CRC_ERRORS,
	XNIC_CNT_MALFORMED,
	XNIC_CNT_MISDIRECTED,
	XNIC_CNT_FORGED,
	XNIC_CNT_UNKNOWN_QPN,
	XNIC_CNT_BAD_QP_STATE,
	XNIC_CNT_DUPLICATES,
	XNIC_CNT_OUT_OF_WINDOW,
	XNIC_CNT_RETRANSMITS,
	XNIC_CNT_TIMEOUTS,
	XNIC_CNT_ACKS_SENT,
	XNIC_CNT_ACKS_RCVD,
	XNIC_CNT_NAKS_SENT,
	XNIC_CNT_NAKS_RCVD,
	XNIC_CNT_RNR_NAKS_SENT,
	XNIC_CNT_RNR_NAKS_RCVD,
	XNIC_CNT_HELLO_SENT,
	XNIC_CNT_HELLO_RCVD,
	XNIC_CNT_PEERS_REFUSED,
	XNIC_CNT_UNANSWERED_LIMITED,
	XNIC_CNT_CWND_CUTS,
	XNIC_CNT_SPURIOUS_RETX,
	XNIC_CNT_TX_BURSTS,
	XNIC_CNT_MAX,
};

static_assert(XNIC_CNT_MAX == XNIC_TP_NR_COUNTERS);

/* ------------------------------ peers ------------------------------ */

/**
 * struct xnic_path - how one member link reaches a peer
 * @ifindex: the member netdev's ifindex; 0 for an unused slot
 * @mac: the peer's MAC address on that link
 * @answered: the peer answered a heartbeat over this path (echoing our
 *	keyed time stamp): it gets every heartbeat. Until then it gets only
 *	probes, within the device's XNIC_UNANSWERED_PER_S (written in place)
 * @last_seen: jiffies of the last frame accepted over this path
 * @hb_ns: last heartbeat answer over this path, local_clock() ns
 * @srtt_ns: smoothed heartbeat round trip over this path, ns
 * @down_ns: 0, or since when the path is down: on a switched link
 *	(xnic_bond_link.switched) the peer stopped answering heartbeats
 *	while the link stays UP for its other peers (bond.c)
 *
 * @hb_ns, @srtt_ns and @down_ns are written in place (bond.c).
 */
struct xnic_path {
	int ifindex;
	u8 mac[ETH_ALEN];
	bool answered;
	unsigned long last_seen;
	u64 hb_ns;
	u64 srtt_ns;
	u64 down_ns;
};

/**
 * struct xnic_peer - a node learned by HELLO
 * @node: its node id
 * @guid: its node GUID
 * @path: links it was heard on; replaced as a whole (RCU) when a slot
 *	changes, @last_seen is updated in place
 * @rcu: deferred free
 */
struct xnic_peer {
	u16 node;
	u64 guid;
	struct xnic_path path[XNIC_MAX_LINKS];
	struct rcu_head rcu;
};

/**
 * struct xnic_peers - per-device transport state (xnic_dev.peers)
 * @xdev: the device
 * @lock: serialises writers of @table (readers use RCU)
 * @table: node id -> struct xnic_peer (readers under RCU)
 * @hello: periodic HELLO on every member link
 * @next_hello: when @hello sends the next HELLOs, jiffies (@hello only)
 * @learn_since: when the transport started or a member link last came,
 *	jiffies (written under RTNL, read with READ_ONCE())
 * @hello_now: non-zero: send HELLOs at the next run of @hello
 * @nr_peers: entries of @table (@lock), at most params.max_peers
 * @unanswered: rate of the frames sent to paths that never answered
 *	(HELLO replies, heartbeat probes): forged HELLOs cannot make the
 *	device amplify them
 * @dbg: debugfs directory of the device, or NULL
 * @cnt: counters, enum xnic_tp_counter
 * @credit: flow control state (credit.c)
 */
struct xnic_peers {
	struct xnic_dev *xdev;
	spinlock_t lock; /* writers of @table */
	struct xarray table;
	struct delayed_work hello;
	unsigned long next_hello;
	unsigned long learn_since;
	atomic_t hello_now;
	unsigned int nr_peers;
	struct ratelimit_state unanswered;
	struct dentry *dbg;
	atomic64_t cnt[XNIC_CNT_MAX];
	struct xnic_credit_dev credit;
};

static inline void xnic_cnt_add(struct xnic_dev *xdev,
				enum xnic_tp_counter c, s64 v)
{
	atomic64_add(v, &xdev->peers->cnt[c]);
}

static inline void xnic_cnt_inc(struct xnic_dev *xdev, enum xnic_tp_counter c)
{
	atomic64_inc(&xdev->peers->cnt[c]);
}

/* ------------------------------ requester ------------------------------ */

/*
 * What a resend sends of the PSNs not done, in increasing order of width:
 * the first only (a probe, at the first timeout); the first and those
 * last sent a timeout ago or more (repeated timeouts); all of them (RNR
 * wait over, PSN sequence NAK).
 */
enum xnic_retx {
	XNIC_RETX_PROBE,
	XNIC_RETX_OLD,
	XNIC_RETX_ALL,
};

/**
 * struct xnic_tx_wqe - a WQE copied out of the SQ, until it completes
 * @wqe: the validated copy; only this is used
 * @len: message length, bytes
 * @first_psn: PSN of its first frame (READ: first READ_REQ)
 * @nsent: PSNs assigned so far (frames may differ in size: the WQE is
 *	segmented when @next_off reaches @len)
 * @ndone: PSNs acknowledged (READ: chunks fully received)
 * @next_off: next message byte to segment
 * @msn: receive sequence number (meaningful for RQ-consuming opcodes)
 * @status: XNIC_WC_* it completes with when it fails before sending
 */
struct xnic_tx_wqe {
	struct xnic_sq_wqe wqe;
	u32 len;
	u32 first_psn;
	u32 nsent;
	u32 ndone;
	u32 next_off;
	u32 msn;
	u8 status;
};

/**
 * struct xnic_tx_slot - one unacknowledged PSN
 * @widx: index of its WQE in xnic_tx.wqes
 * @done: acknowledged (READ_REQ: every response segment received)
 * @offset: message offset of its data (READ_REQ: of the chunk asked for)
 * @len: bytes of data (READ_REQ: bytes asked for)
 * @retx: sent more than once (no round trip sample from it: Karn)
 * @resends: resends the responder has not reported spurious (D-SACK),
 *	at most U8_MAX
 * @link: index of the member link it last left on (XNIC_BOND_NO_LINK:
 *	none); a failure of that link resends it at once (bond.c)
 * @segs: READ_REQ: bitmap of response segments received
 * @sent: local_clock() of its last transmission, ns
 */
struct xnic_tx_slot {
	u16 widx;
	bool done;
	bool retx;
	u8 resends;
	u8 link;
	u32 offset;
	u32 len;
	u64 segs;
	u64 sent;
};

/**
 * struct xnic_tx - requester state of a QP
 * @started: set up from the QP's attributes on entering RTS
 * @remote_node: peer node id (copied at start)
 * @dest_qpn: peer QPN (copied at start)
 * @mtu: payload bytes per frame (copied at start)
 * @fetch: SQ index of the next WQE to copy out
 * @cur: SQ index of the WQE being segmented
 * @next_psn: next PSN to assign
 * @una: oldest PSN not done
 * @msn: next receive sequence number to assign
 * @reads: READ_REQs not done
 * @stopped: a fetched WQE failed validation: fetch nothing more
 * @timer_on: @deadline is armed
 * @rnr_wait: waiting for @rnr_until after an RNR NAK
 * @retries: timeouts since the last progress
 * @rnr_retries: RNR NAKs since the last progress
 * @retry_limit: timeouts allowed (the QP's retry_cnt)
 * @rnr_limit: RNR NAKs allowed (rnr_retry; XNIC_RNR_INFINITE: no limit)
 * @max_reads: READ_REQs allowed outstanding
 * @resending: a resend is under way (timeout, RNR, PSN sequence NAK):
 *	PSNs not done from @retx_next on, see xnic_tx_resend_from()
 * @retx_mode: what the resend sends, enum xnic_retx
 * @retx_first: the next PSN not done is sent whatever its age
 * @retx_next: next PSN the resend looks at
 * @srtt: smoothed round trip time, ns (0: no sample yet)
 * @clock_ns: the wakeup syscall's local_clock() while its pass runs
 *	(xnic_tp_qp_post(): one clock read for its stream check and its
 *	frames' send times), else 0
 * @rttvar: round trip time variation, ns
 * @rto_base: first retransmission timeout, jiffies (the QP's timeout)
 * @rto: current retransmission timeout, jiffies
 * @deadline: retransmission deadline, jiffies
 * @rnr_until: end of the RNR wait, jiffies
 * @nr_wqe: entries of @wqes, a power of two
 * @wqes: WQEs indexed by SQ index & (@nr_wqe - 1)
 * @slots: unacknowledged PSNs indexed by PSN % XNIC_TX_WINDOW
 * @cw: congestion window (cwnd_logic.h): at most @cw.cwnd PSNs from @una
 *	on are sent
 * @reo: fast retransmit's reordering allowance (reorder_logic.h)
 * @last_link: member link xnic_tp_send() last sent a frame of the QP on
 */
struct xnic_tx {
	bool started;
	u16 remote_node;
	u32 dest_qpn;
	u32 mtu;
	u32 fetch;
	u32 cur;
	u32 next_psn;
	u32 una;
	u32 msn;
	unsigned int reads;
	bool stopped;
	bool timer_on;
	bool rnr_wait;
	u8 retries;
	u8 rnr_retries;
	u8 retry_limit;
	u8 rnr_limit;
	unsigned int max_reads;
	bool resending;
	u8 retx_mode;
	bool retx_first;
	u32 retx_next;
	u64 srtt;
	u64 clock_ns;
	u64 rttvar;
	unsigned long rto_base;
	unsigned long rto;
	unsigned long deadline;
	unsigned long rnr_until;
	u32 nr_wqe;
	struct xnic_tx_wqe *wqes;
	struct xnic_tx_slot slots[XNIC_TX_WINDOW];
	struct xnic_cwnd cw;
	struct xnic_reo reo;
	u8 last_link;
};

/* ------------------------------ responder ------------------------------ */

/**
 * struct xnic_rx_msg - a receive WQE in use by an incoming message
 * @wqe: validated copy of the receive WQE
 * @active: @wqe is valid
 * @end_seen: the message's last frame arrived, at @end_psn
 * @imm_op: WRITE with immediate (else SEND)
 * @solicited: the sender asked for a solicited event
 * @has_imm: @imm is valid
 * @status: XNIC_WC_* the receive WQE failed validation with, 0 when good
 * @msg_len: message length, bytes
 * @end_psn: PSN of the message's last frame
 * @imm: immediate data, network order
 */
struct xnic_rx_msg {
	struct xnic_rq_wqe wqe;
	bool active;
	bool end_seen;
	bool imm_op;
	bool solicited;
	bool has_imm;
	u8 status;
	u32 msg_len;
	u32 end_psn;
	__be32 imm;
};

/**
 * struct xnic_rx_read - a READ_REQ not answered in full yet: waiting for
 *	the PSNs before it, or with responses left to send (runnable once
 *	epsn passed @psn)
 * @used: slot in use
 * @dup: a repeated READ_REQ: dropped rather than NAKed when it fails
 * @psn: its PSN
 * @info: its header; @info.offset is the next byte to send
 * @length: bytes left to send
 * @seg: response segment size
 */
struct xnic_rx_read {
	bool used;
	bool dup;
	u32 psn;
	struct xnic_wire_info info;
	u32 length;
	u32 seg;
};

/**
 * struct xnic_rx - responder state of a QP
 * @started: set up from the QP's attributes on the first frame in RTR/RTS
 * @remote_node: peer node id (copied at start)
 * @dest_qpn: peer QPN (copied at start)
 * @win: received PSNs
 * @rmsn: receive sequence number of the oldest receive WQE not completed
 * @unacked: new frames since the last ACK
 * @ack_due: a delayed ACK is due at @ack_at (frames arrived that asked
 *	for none)
 * @ack_at: when the delayed ACK goes out, jiffies
 * @err_pending: an error was found at @err_psn; reported once every PSN
 *	before it has arrived (so that earlier messages complete first)
 * @err_psn: PSN of the error
 * @err_syndrome: NAK syndrome to send
 * @err_status: XNIC_WC_* for the receive WQE of @err_msn, 0 for none
 * @err_msn: receive WQE the error completes
 * @rnr_timer: the QP's min_rnr_timer, sent in RNR NAKs (IBTA encoding)
 * @fatal: the NAK (@err_syndrome, @err_psn) was sent and the QP moved to
 *	error; the NAK is repeated to retransmissions
 * @seq_nak_epsn: epsn of the last PSN sequence NAK (one per epsn)
 * @nak_sent: jiffies of the last RNR or repeated NAK (one per jiffy)
 * @nr_msg: entries of @msgs, a power of two
 * @msgs: receive WQEs in use, indexed by msn & (@nr_msg - 1)
 * @reads: deferred READ_REQs
 */
struct xnic_rx {
	bool started;
	u16 remote_node;
	u32 dest_qpn;
	struct xnic_psn_win win;
	u32 rmsn;
	unsigned int unacked;
	bool ack_due;
	unsigned long ack_at;
	bool err_pending;
	u32 err_psn;
	u8 err_syndrome;
	u8 err_status;
	u32 err_msn;
	u8 rnr_timer;
	bool fatal;
	u32 seq_nak_epsn;
	unsigned long nak_sent;
	u32 nr_msg;
	struct xnic_rx_msg *msgs;
	struct xnic_rx_read reads[XNIC_RX_MAX_READS];
};

/**
 * struct xnic_tp_qp - transport state of a QP (xnic_qp.tp.priv)
 * @lock: the tp lock: guards everything below, and the QP's ring indices
 *	the transport owns (sq.kidx, rq.kidx); see the lock order above
 * @dead: being released: xnic_tp_lock() fails (@lock)
 * @activate: xnic_tp_unlock() hands the QP to the engine (work left over),
 *	once the lock is dropped and this context's frames are out
 * @ack_hold: the responder's ACKs and NAKs wait in @acks until the lock
 *	is dropped (xnic_tp_send_ack())
 * @acks: those ACKs and NAKs, sent by xnic_tp_unlock()
 * @qp: the QP
 * @timer: retransmission and RNR timer; hands the QP to the engine
 * @rcu: deferred free (xnic_tp_lock() looks the state up under RCU)
 * @tx: requester
 * @rx: responder
 * @cr: flow control (credit.c)
 */
struct xnic_tp_qp {
	spinlock_t lock;	/* the tp lock */
	bool dead;
	bool activate;
	bool ack_hold;
	struct sk_buff_head acks;
	struct xnic_qp *qp;
	struct timer_list timer;
	struct rcu_head rcu;
	struct xnic_tx tx;
	struct xnic_rx rx;
	struct xnic_credit_qp cr;
};

/* The transport state of a QP whose tp lock the caller holds. */
static inline struct xnic_tp_qp *xnic_tp(struct xnic_qp *qp)
{
	/* The holder of the lock keeps the state from being released. */
	return rcu_dereference_protected(qp->tp.priv, true);
}

struct xnic_tp_qp *xnic_tp_lock(struct xnic_qp *qp);
struct xnic_tp_qp *xnic_tp_lock_within(struct xnic_qp *qp, u64 ns, bool *busy);
void xnic_tp_unlock(struct xnic_tp_qp *tp);
int xnic_tp_send(struct xnic_qp *qp, u16 node, struct sk_buff *skb,
		 const struct xnic_wire_info *i);
void xnic_tp_send_ack(struct xnic_qp *qp, struct sk_buff *skb,
		      const struct xnic_wire_info *i);

static inline u32 xnic_qpn(const struct xnic_qp *qp)
{
	return qp->ibqp.qp_num;
}

/* The QP's state; its attributes are visible once the state is. */
static inline enum ib_qp_state xnic_qp_state(struct xnic_qp *qp)
{
	/* Pairs with modify_qp's smp_store_release() of the state. */
	return smp_load_acquire(&qp->state);
}

/* A ring's producer index, as the user published it (hostile). */
static inline u32 xnic_ring_producer(struct xnic_ring *ring)
{
	/* Rule R2: pairs with the user's store-release (R1): entries below
	 * the index are written.
	 */
	return smp_load_acquire(&ring->hdr->producer);
}

/* Give the entries below ring->kidx back to the user. */
static inline void xnic_ring_release(struct xnic_ring *ring)
{
	/* Rule R2: our reads of the entries happen before the user reuses
	 * them.
	 */
	smp_store_release(&ring->hdr->consumer, ring->kidx);
}

/* wire.c */
struct sk_buff *xnic_frame_alloc(unsigned int payload_len, gfp_t gfp);
int xnic_frame_add_mr(struct sk_buff *skb, struct xnic_mr *mr, u64 addr,
		      u32 len);
void xnic_frame_seal(struct sk_buff *skb);
void xnic_frame_seal_link(struct sk_buff *skb, const struct net_device *ndev);
void xnic_frame_finish(struct sk_buff *skb, const struct xnic_wire_info *i);
bool xnic_frame_check_ok(const struct sk_buff *skb,
			 const struct xnic_wire_hdr *hdr);

/* link_burst.c */
bool xnic_link_burst_begin(struct xnic_dev *xdev);
unsigned int xnic_link_burst_end(bool began);
bool xnic_link_burst_add(struct xnic_dev *xdev, struct sk_buff *skb);

/* peer.c */
int xnic_tp_xmit(struct xnic_dev *xdev, u16 node, struct sk_buff *skb);
int xnic_tp_xmit_link(struct xnic_dev *xdev, u16 node, struct sk_buff *skb,
		      u8 *link, bool seal);
int xnic_link_xmit(struct xnic_dev *xdev, struct net_device *ndev,
		   const u8 *dst, struct sk_buff *skb);
int xnic_link_send(struct xnic_dev *xdev, struct sk_buff *skb,
		   unsigned int frames, unsigned int bytes);
bool xnic_peer_unreachable(struct xnic_dev *xdev, u16 node);
bool xnic_peer_may_send_unanswered(struct xnic_dev *xdev,
				   const struct xnic_peer *peer);
struct xnic_path *xnic_peer_answered(struct xnic_dev *xdev, u16 node,
				     int ifindex);
bool xnic_peer_check_src(struct xnic_dev *xdev, u16 node,
			 const struct sk_buff *skb);
void xnic_peer_hello_rx(struct xnic_dev *xdev, struct sk_buff *skb,
			const struct xnic_wire_info *i);
u32 xnic_tp_max_payload(struct xnic_dev *xdev);

/* tx_ack.c */
void xnic_tx_ack_rx(struct xnic_qp *qp, const struct xnic_wire_info *i,
		    const struct xnic_wire_ack *ack);
void xnic_tx_read_resp_rx(struct xnic_qp *qp, const struct xnic_wire_info *i,
			  struct sk_buff *skb);

/* tx_recovery.c */
void xnic_tx_flush(struct xnic_qp *qp);
void xnic_tx_timer(struct timer_list *t);
unsigned int xnic_tx_bond_event(struct xnic_qp *qp, u8 link, bool expire);

/* tp.c */
void __xnic_tp_qp_flush(struct xnic_qp *qp);
void xnic_tp_arm(struct xnic_tp_qp *tp, unsigned long when);

/* rx.c */
void xnic_rx_flush(struct xnic_qp *qp);
void xnic_rx_timer(struct xnic_qp *qp);
void xnic_rx_fatal(struct xnic_qp *qp, u8 syndrome, u32 psn);
int xnic_rx_error(struct xnic_rx *rx, u32 psn, u8 syndrome, u8 status,
		  u32 msn);

/* rx_read.c */
bool xnic_rx_run_reads(struct xnic_qp *qp, unsigned int *budget);
bool xnic_rx_reads_pending(struct xnic_qp *qp);
int xnic_rx_read_req(struct xnic_qp *qp, const struct xnic_wire_info *i,
		     struct sk_buff *skb);
bool xnic_rx_reads_inline(struct xnic_qp *qp);
void xnic_rx_read_dup(struct xnic_qp *qp, const struct xnic_wire_info *i,
		      struct sk_buff *skb);

#endif /* XNIC_TRANSPORT_PRIV_H */
