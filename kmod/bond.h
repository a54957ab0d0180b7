/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic - link bonding: the member links that reach a peer form its bond.
 * Every member link runs a heartbeat (an hrtimer, down to 1 ms) that
 * measures round trips and loss; a health patrol turns the measurements
 * and the CRC errors seen on the link into a state (UP, DEGRADED, DOWN,
 * uapi enum xnic_link_state); xnic_tp_xmit() spreads a peer's frames over
 * its UP links by the device's policy (enum xnic_bond_policy); a link that
 * leaves UP has its unacknowledged frames resent on the others at once.
 * Documentation/design.rst ("Link bonding") has the rules and thresholds.
 *
 * Execution model: the heartbeat timer runs in softirq (HRTIMER_MODE_SOFT)
 * and sends the heartbeats; received heartbeats and frames are counted in
 * the member link's packet handler (softirq); carrier changes come from
 * the netdev notifier (RTNL). All three update the state machine under
 * xnic_bond_link.lock; what a state change entails beyond that (failover
 * of the QPs, netlink event, log) runs in xnic_bond_link.work (process
 * context, no RTNL: xnic_bond_link_fini() waits for it under RTNL).
 * The datapath reads xnic_bond_link.state locklessly (READ_ONCE()).
 *
 * Lock order: xnic_bond_link.lock is innermost; nothing is taken under it.
 * The work takes the QPs' tp locks, one at a time, holding nothing else.
 */
#ifndef XNIC_BOND_H
#define XNIC_BOND_H

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "xnic.h"

/* xnic_tx_slot.link of a PSN no link carried (dropped on the way out). */
#define XNIC_BOND_NO_LINK	0xff
/* Heartbeat intervals in one health patrol window. */
#define XNIC_BOND_WINDOW	32
/*
 * Unanswered heartbeats in a window that make the link bad (12.5 %; on a
 * switched link that many per peer heartbeated every interval).
 */
#define XNIC_BOND_LOSS_MAX	4
/*
 * A window is congested when the smoothed heartbeat round trip is over
 * XNIC_BOND_QUEUE_MULT times the link's base round trip plus
 * XNIC_BOND_QUEUE_MIN_NS, or the longest round trip sampled in the window
 * (a queue that filled within it) over that plus XNIC_BOND_QUEUE_PEAK_NS
 * (one sample's jitter on a loaded CPU reaches milliseconds): its
 * heartbeats then wait in queues, and those lost are put down to the
 * queues, not held against the link. The base is the lowest sample of the
 * last XNIC_BOND_BASE_WINDOWS to 2 x XNIC_BOND_BASE_WINDOWS windows, taken
 * only from epochs that lost no heartbeat.
 */
#define XNIC_BOND_QUEUE_MULT	4
#define XNIC_BOND_QUEUE_MIN_NS	(1 * NSEC_PER_MSEC)
#define XNIC_BOND_QUEUE_PEAK_NS	(5 * NSEC_PER_MSEC)
#define XNIC_BOND_BASE_WINDOWS	8
/* CRC errors in a window that make the link bad: at least this many... */
#define XNIC_BOND_CRC_MIN	2
/* ...and at least this share of the frames received, parts per million. */
#define XNIC_BOND_CRC_PPM	10000
/* Largest weight a link's capacity (Mb/s / 1000) gives it. */
#define XNIC_BOND_MAX_CAP_W	400
/* Capacity weight of a link whose speed is unknown (10 Gb/s). */
#define XNIC_BOND_DEF_CAP_W	10
/* Health weight of a link with no loss and no CRC error last window. */
#define XNIC_BOND_MAX_HEALTH_W	4

/**
 * enum xnic_bond_counter - per-link counters (xnic_bond_link.cnt)
 * @XNIC_BL_HB_SENT: heartbeat requests sent
 * @XNIC_BL_HB_RCVD: heartbeat replies received
 * @XNIC_BL_HB_REQ_RCVD: heartbeat requests received (and answered)
 * @XNIC_BL_HB_MISSED: intervals in which nothing was heard on the link
 * @XNIC_BL_CRC_ERRORS: frames received that failed the frame check
 * @XNIC_BL_RX_FRAMES: xnic frames received
 * @XNIC_BL_TX_FRAMES: transport frames sent (xnic_tp_xmit())
 * @XNIC_BL_TX_BYTES: their bytes
 * @XNIC_BL_FAILOVERS: failovers away from the link
 * @XNIC_BL_RESENT: PSNs the failovers marked for resending
 * @XNIC_BL_STATE_CHANGES: changes of the state
 * @XNIC_BL_THERMAL_WARNS: entries into THERMAL_WARN or _CRIT from cooler
 * @XNIC_BL_THERMAL_CRITS: entries into THERMAL_CRIT
 * @XNIC_BL_TEMP_READ_ERRORS: sensor read failures a reader reported
 * @XNIC_BL_HB_CONGESTED: patrol windows whose heartbeat loss was put down
 *	to congestion (round trips far over the base) and not held against
 *	the link
 * @XNIC_BL_NR: number of counters
 */
enum xnic_bond_counter {
	XNIC_BL_HB_SENT,
	XNIC_BL_HB_RCVD,
	XNIC_BL_HB_REQ_RCVD,
	XNIC_BL_HB_MISSED,
	XNIC_BL_CRC_ERRORS,
	XNIC_BL_RX_FRAMES,
	XNIC_BL_TX_FRAMES,
	XNIC_BL_TX_BYTES,
	XNIC_BL_FAILOVERS,
	XNIC_BL_RESENT,
	XNIC_BL_STATE_CHANGES,
	XNIC_BL_THERMAL_WARNS,
	XNIC_BL_THERMAL_CRITS,
	XNIC_BL_TEMP_READ_ERRORS,
	XNIC_BL_HB_CONGESTED,
	XNIC_BL_NR,
};

/**
 * struct xnic_bond_link - bond state of a member link (xnic_link.bond)
 * @link: the member link
 * @xdev: its device
 * @lock: guards the state machine (everything down to @fail_start_ns)
 * @timer: heartbeat and patrol tick, every hb_interval_ms (softirq)
 * @silence: fires when the link has been silent for hb_miss intervals
 *	between two ticks (armed by the tick before)
 * @work: failover, announcement and log of state changes
 * @peer_work: runs peer_timeout_ms after the link went down: QPs of
 *	peers left with no usable link fail their outstanding work
 * @state: enum xnic_link_state (read locklessly by the datapath)
 * @dead: being detached: the timer does not re-arm, work is not queued
 * @carrier: the netdev is running with carrier (as last told by the
 *	notifier)
 * @probing: heartbeats went to at least one peer at the last tick
 * @heard: a frame was received on the link since the last tick
 * @win_bad: the last patrol window was over a threshold
 * @remote_bad: the peer's last heartbeat said its measurements find the
 *	link bad
 * @fail_pending: a failover is due (@work)
 * @switched: more than one peer was heard on the link (a switched
 *	segment): paths over it are judged per peer, and a peer's paths over
 *	links that are not switched are preferred (sticky until detached)
 * @path_fail: a path over the link went down: its peer's PSNs on the link
 *	are to be resent (@work)
 * @path_kick_ns: paths that went down after this were not failed over yet
 * @cap_w: weight from the link's speed (RTNL writes, datapath reads)
 * @health_w: weight from the last window, 1..XNIC_BOND_MAX_HEALTH_W
 * @seq: sequence number of the next heartbeat request
 * @hb_key: random key our heartbeat time stamps are XORed with: only a
 *	peer that received one can echo it (struct xnic_path.answered)
 * @miss_run: consecutive intervals in which nothing was heard
 * @rx_seen: XNIC_BL_RX_FRAMES at the last tick
 * @reason: why the state last changed (bond.c's enum xnic_bond_reason)
 * @win_ticks: ticks into the current patrol window
 * @win_base: counters at the start of the current window
 * @loss_ppm: heartbeat loss over the last window, parts per million
 * @good_since_ns: healthy without a break since (0: not healthy now)
 * @down_since_ns: entered DOWN at (0: not DOWN)
 * @fail_start_ns: the failure the pending failover reacts to started at
 *	(the last frame heard, or the carrier event)
 * @last_heard_ns: last frame received on the link (written locklessly)
 * @announced: state last announced (@work)
 * @srtt_ns: smoothed heartbeat round trip, ns (RFC 6298 weights)
 * @rttvar_ns: its variation (jitter), ns
 * @rtt_base_ns: the link's base round trip, ns (0: no sample yet)
 * @rtt_next_ns: lowest sample of the current base epoch, ns (0: none)
 * @rtt_win_max_ns: longest sample of the current patrol window, ns
 * @base_windows: windows into the current base epoch
 * @base_lossy: the current base epoch lost heartbeats
 * @failover_us: duration of the last failover, us
 * @detect_us: of which detection (to the state change), us
 * @silent_late_ns: the longest the link's heartbeat or silence timer ran
 *	late (its expiry, or the last frame heard if later, to its verdict)
 *	since a frame was last heard, ns
 * @detect_late_us: @silent_late_ns when the link was last declared DOWN
 *	for silence: the part of @detect_us a stalled CPU, not the detector,
 *	took (a stalled tick counts one miss late, the next decides), us
 * @changed_ns: when the state last changed
 * @temp_inject_mc: injected temperature, m°C (tests), or
 *	XNIC_TEMP_INJECT_OFF
 * @temp_warn_mc: warn threshold, m°C, 0: off (netlink LINK_SET)
 * @temp_crit_mc: critical threshold, m°C, 0: off
 * @temp_hyst_mc: hysteresis, m°C (XNIC_THERMAL_HYST_MC by default)
 * @sensor_mc: the last sensor reading a reader reported, m°C
 * @sensor_src: its enum xnic_temp_source (XNIC_TEMP_SRC_NONE: none)
 * @sensor_at: when it was reported, jiffies
 * @thermal: enum xnic_thermal_state (read locklessly by the datapath)
 * @thermal_announced: thermal state last announced (@work)
 * @cool_since_ns: below the current thermal state's threshold minus
 *	@temp_hyst_mc since (0: not)
 * @cnt: enum xnic_bond_counter
 * @lcr: link credit paths, node id -> struct xnic_lcr_path (link_credit.c)
 * @rcu: deferred free (the datapath reads it under RCU)
 */
struct xnic_bond_link {
	struct xnic_link *link;
	struct xnic_dev *xdev;
	spinlock_t lock; /* the state machine */
	struct hrtimer timer;
	struct hrtimer silence;
	struct work_struct work;
	struct delayed_work peer_work;
	u8 state;
	bool dead;
	bool carrier;
	bool probing;
	bool heard;
	bool win_bad;
	bool remote_bad;
	bool fail_pending;
	bool switched;
	atomic_t path_fail;
	u64 path_kick_ns;
	u32 cap_w;
	u32 health_w;
	u32 seq;
	u64 hb_key;
	u32 miss_run;
	u64 rx_seen;
	u8 reason;
	u32 win_ticks;
	u64 win_base[XNIC_BL_NR];
	u32 loss_ppm;
	u64 good_since_ns;
	u64 down_since_ns;
	u64 fail_start_ns;
	u64 last_heard_ns;
	u8 announced;
	u64 srtt_ns;
	u64 rttvar_ns;
	u64 rtt_base_ns;
	u64 rtt_next_ns;
	u64 rtt_win_max_ns;
	u32 base_windows;
	bool base_lossy;
	u32 failover_us;
	u32 detect_us;
	u64 silent_late_ns;
	u32 detect_late_us;
	u64 changed_ns;
	s32 temp_inject_mc;
	u32 temp_warn_mc;
	u32 temp_crit_mc;
	u32 temp_hyst_mc;
	s32 sensor_mc;
	u8 sensor_src;
	unsigned long sensor_at;
	u8 thermal;
	u8 thermal_announced;
	u64 cool_since_ns;
	atomic64_t cnt[XNIC_BL_NR];
	struct xarray lcr;
	struct rcu_head rcu;
};

struct xnic_peer;
struct xnic_wire_info;
struct seq_file;
struct nlattr;
struct netlink_ext_ack;

static inline u64 xnic_bl_cnt(struct xnic_bond_link *bl,
			      enum xnic_bond_counter c)
{
	return atomic64_read(&bl->cnt[c]);
}

static inline void xnic_bl_inc(struct xnic_bond_link *bl,
			       enum xnic_bond_counter c)
{
	atomic64_inc(&bl->cnt[c]);
}

/* bond.c: heartbeat, health patrol, state machine, lifetime */

int xnic_bond_link_init(struct xnic_link *link);
void xnic_bond_link_fini(struct xnic_link *link);
void xnic_bond_link_changed(struct xnic_link *link);
void xnic_bond_rx(struct xnic_link *link);
void xnic_bond_crc_error(struct xnic_dev *xdev, const struct sk_buff *skb);
void xnic_bond_hb_rx(struct xnic_dev *xdev, struct sk_buff *skb,
		     const struct xnic_wire_info *i);
void xnic_bond_params_changed(struct xnic_dev *xdev);
/* bond_thermal.c: thermal state */
u8 xnic_bond_temp(struct xnic_bond_link *bl, s32 *mc);
bool xnic_bond_thermal_eval(struct xnic_bond_link *bl, u64 now);
int xnic_bond_thermal_set(struct xnic_link *link, struct nlattr **tb,
			  struct netlink_ext_ack *extack);
/* bond_path.c: path selection, failover, peer timeout */
struct xnic_link *xnic_bond_select(struct xnic_dev *xdev,
				   const struct xnic_peer *peer,
				   const struct sk_buff *skb, bool need,
				   int *path);
void xnic_bond_tx_done(struct xnic_link *link, unsigned int len);
bool xnic_bond_peer_lost(struct xnic_dev *xdev, u16 node);
unsigned int xnic_bond_kick_qps(struct xnic_dev *xdev, u8 index,
				bool expire, int node);
/* bond_show.c: netlink and debugfs readout */
int xnic_bond_nl_put(struct sk_buff *skb, struct xnic_link *link);
int xnic_bond_links_show(struct seq_file *s, struct xnic_dev *xdev);
u8 xnic_bond_link_state(struct xnic_link *link);

#endif /* XNIC_BOND_H */
