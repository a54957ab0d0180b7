// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - link bonding, the readout: a member link's bond state and health
 * for netlink (LINK_GET, LINK_NTF) and debugfs
 * (/sys/kernel/debug/xnic/<dev>/links).
 */
#include <linux/seq_file.h>

#include "bond.h"
#include "../uapi/xnic-netlink.h"

static const char *const xnic_bond_cnt_str[XNIC_BL_NR] = {
	[XNIC_BL_HB_SENT]	= "hb_sent",
	[XNIC_BL_HB_RCVD]	= "hb_rcvd",
	[XNIC_BL_HB_REQ_RCVD]	= "hb_req_rcvd",
	[XNIC_BL_HB_MISSED]	= "hb_missed",
	[XNIC_BL_CRC_ERRORS]	= "crc_errors",
	[XNIC_BL_RX_FRAMES]	= "rx_frames",
	[XNIC_BL_TX_FRAMES]	= "tx_frames",
	[XNIC_BL_TX_BYTES]	= "tx_bytes",
	[XNIC_BL_FAILOVERS]	= "failovers",
	[XNIC_BL_RESENT]	= "resent",
	[XNIC_BL_STATE_CHANGES]	= "state_changes",
	[XNIC_BL_THERMAL_WARNS]	= "thermal_warns",
	[XNIC_BL_THERMAL_CRITS]	= "thermal_crits",
	[XNIC_BL_TEMP_READ_ERRORS] = "temp_read_errors",
	[XNIC_BL_HB_CONGESTED]	= "hb_congested",
};

/**
 * xnic_bond_link_state() - a member link's bond state
 * @link: the link
 *
 * Return: enum xnic_link_state (XNIC_LINK_STATE_UNSPEC without bond state).
 */
u8 xnic_bond_link_state(struct xnic_link *link)
{
	return link->bond ? READ_ONCE(link->bond->state) :
			    XNIC_LINK_STATE_UNSPEC;
}

/**
 * xnic_bond_nl_put() - put a member link's bond state and health into a
 *	netlink message (inside its XNIC_A_LINK nest)
 * @skb: the message
 * @link: the link
 *
 * Context: RTNL held, or the link is otherwise kept attached.
 * Return: 0 or -EMSGSIZE.
 */
int xnic_bond_nl_put(struct sk_buff *skb, struct xnic_link *link)
{
	static const struct {
		u16 attr;
		u8 cnt;
	} c64[] = {
		{ XNIC_LINK_A_HB_SENT, XNIC_BL_HB_SENT },
		{ XNIC_LINK_A_HB_RCVD, XNIC_BL_HB_RCVD },
		{ XNIC_LINK_A_HB_MISSED, XNIC_BL_HB_MISSED },
		{ XNIC_LINK_A_CRC_ERRORS, XNIC_BL_CRC_ERRORS },
		{ XNIC_LINK_A_FAILOVERS, XNIC_BL_FAILOVERS },
		{ XNIC_LINK_A_TX_FRAMES, XNIC_BL_TX_FRAMES },
		{ XNIC_LINK_A_TX_BYTES, XNIC_BL_TX_BYTES },
		{ XNIC_LINK_A_RX_FRAMES, XNIC_BL_RX_FRAMES },
		{ XNIC_LINK_A_STATE_CHANGES, XNIC_BL_STATE_CHANGES },
		{ XNIC_LINK_A_RESENT, XNIC_BL_RESENT },
		{ XNIC_LINK_A_THERMAL_WARNS, XNIC_BL_THERMAL_WARNS },
		{ XNIC_LINK_A_THERMAL_CRITS, XNIC_BL_THERMAL_CRITS },
		{ XNIC_LINK_A_TEMP_READ_ERRORS, XNIC_BL_TEMP_READ_ERRORS },
	};
	struct xnic_bond_link *bl = link->bond;
	unsigned int k;
	s32 t = 0;
	u8 src;

	if (!bl)
		return 0;
	src = xnic_bond_temp(bl, &t);
	if (nla_put_u8(skb, XNIC_LINK_A_STATE, READ_ONCE(bl->state)) ||
	    nla_put_u32(skb, XNIC_LINK_A_RTT_US,
			div_u64(READ_ONCE(bl->srtt_ns), NSEC_PER_USEC)) ||
	    nla_put_u32(skb, XNIC_LINK_A_JITTER_US,
			div_u64(READ_ONCE(bl->rttvar_ns), NSEC_PER_USEC)) ||
	    nla_put_u32(skb, XNIC_LINK_A_FAILOVER_US,
			READ_ONCE(bl->failover_us)) ||
	    nla_put_u32(skb, XNIC_LINK_A_LOSS_PPM, READ_ONCE(bl->loss_ppm)) ||
	    nla_put_u8(skb, XNIC_LINK_A_THERMAL, READ_ONCE(bl->thermal)) ||
	    nla_put_u32(skb, XNIC_LINK_A_TEMP_WARN_MC,
			READ_ONCE(bl->temp_warn_mc)) ||
	    nla_put_u32(skb, XNIC_LINK_A_TEMP_CRIT_MC,
			READ_ONCE(bl->temp_crit_mc)) ||
	    nla_put_u32(skb, XNIC_LINK_A_TEMP_HYST_MC,
			READ_ONCE(bl->temp_hyst_mc)) ||
	    nla_put_u8(skb, XNIC_LINK_A_TEMP_SOURCE, src) ||
	    (src && nla_put_s32(skb, XNIC_LINK_A_TEMP_MC, t)))
		return -EMSGSIZE;
	for (k = 0; k < ARRAY_SIZE(c64); k++)
		if (nla_put_u64_64bit(skb, c64[k].attr,
				      xnic_bl_cnt(bl, c64[k].cnt),
				      XNIC_LINK_A_PAD))
			return -EMSGSIZE;
	return 0;
}

/**
 * xnic_bond_links_show() - the bond state of a device's links, for debugfs
 * @s: the seq_file
 * @xdev: the device
 *
 * Context: process context; takes the RCU read lock.
 * Return: 0.
 */
int xnic_bond_links_show(struct seq_file *s, struct xnic_dev *xdev)
{
	struct xnic_link *link;

	seq_printf(s, "policy %u hb_interval_ms %u hb_miss %u hold_ms %u peer_timeout_ms %u\n",
		   READ_ONCE(xdev->params.bond_policy),
		   READ_ONCE(xdev->params.hb_interval_ms),
		   READ_ONCE(xdev->params.hb_miss),
		   READ_ONCE(xdev->params.bond_hold_ms),
		   READ_ONCE(xdev->params.peer_timeout_ms));
	rcu_read_lock();
	list_for_each_entry_rcu(link, &xdev->links, list) {
		struct xnic_bond_link *bl = link->bond;
		int k;

		if (!bl)
			continue;
		seq_printf(s, "link %s index %u state %s weight %u rtt_us %llu jitter_us %llu loss_ppm %u failover_us %u detect_us %u detect_late_us %u",
			   link->ndev->name, link->index,
			   xnic_bond_state_name(READ_ONCE(bl->state)),
			   READ_ONCE(bl->cap_w) * READ_ONCE(bl->health_w),
			   div_u64(READ_ONCE(bl->srtt_ns), NSEC_PER_USEC),
			   div_u64(READ_ONCE(bl->rttvar_ns), NSEC_PER_USEC),
			   READ_ONCE(bl->loss_ppm), READ_ONCE(bl->failover_us),
			   READ_ONCE(bl->detect_us),
			   READ_ONCE(bl->detect_late_us));
		for (k = 0; k < XNIC_BL_NR; k++)
			seq_printf(s, " %s %llu", xnic_bond_cnt_str[k],
				   xnic_bl_cnt(bl, k));
		seq_putc(s, '\n');
	}
	rcu_read_unlock();
	return 0;
}
