// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - thermal awareness of member links: a link's temperature against
 * its warn and critical thresholds (netlink LINK_SET) gives its thermal
 * state (uapi enum xnic_thermal_state). WARN divides the link's spray
 * weight by 4 (bond_path.c); CRIT isolates it as the health patrol isolates
 * a DEGRADED link (bond.c: drained, its unacknowledged PSNs resent on the
 * others, heartbeats only, the peer told through the heartbeat's health
 * flag). A state is entered at once and left only XNIC_THERMAL_HYST_MC
 * below its threshold, after staying there for the bond hold time.
 *
 * The temperature is, for now, only the one a test injects
 * (XNIC_LINK_A_TEMP_INJECT_MC); a link without one is THERMAL_OK.
 * Evaluated at every heartbeat tick (bond.c), under xnic_bond_link.lock.
 */
#include <net/netlink.h>

#include "bond.h"
#include "../uapi/xnic-netlink.h"

/**
 * xnic_bond_temp() - a member link's temperature
 * @bl: the link's bond state
 * @mc: set to the temperature, millidegrees Celsius, when known
 *
 * Context: any (a lockless read).
 * Return: true when a temperature is known.
 */
bool xnic_bond_temp(struct xnic_bond_link *bl, s32 *mc)
{
	s32 t = READ_ONCE(bl->temp_inject_mc);

	if (t == XNIC_TEMP_INJECT_OFF)
		return false;
	*mc = t;
	return true;
}

/* The state @t asks for when the thresholds are lowered by @margin. */
static u8 xnic_bond_thermal_want(const struct xnic_bond_link *bl, s32 t,
				 s64 margin)
{
	if (bl->temp_crit_mc && t >= (s64)bl->temp_crit_mc - margin)
		return XNIC_THERMAL_CRIT;
	if (bl->temp_warn_mc && t >= (s64)bl->temp_warn_mc - margin)
		return XNIC_THERMAL_WARN;
	return XNIC_THERMAL_OK;
}

/**
 * xnic_bond_thermal_eval() - move a link's thermal state (heartbeat tick)
 * @bl: the link's bond state
 * @now: local_clock()
 *
 * Hotter states are entered at once; a cooler one once the temperature has
 * stayed XNIC_THERMAL_HYST_MC below the current state's threshold for
 * bond_hold_ms.
 *
 * Context: softirq, @bl->lock held.
 * Return: true when the state changed and the link's work is to announce
 * it.
 */
bool xnic_bond_thermal_eval(struct xnic_bond_link *bl, u64 now)
{
	u64 hold = (u64)READ_ONCE(bl->xdev->params.bond_hold_ms) *
		   NSEC_PER_MSEC;
	u8 old = bl->thermal, hot = XNIC_THERMAL_OK, keep = XNIC_THERMAL_OK;
	s32 t;

	if (xnic_bond_temp(bl, &t)) {
		hot = xnic_bond_thermal_want(bl, t, 0);
		keep = xnic_bond_thermal_want(bl, t, XNIC_THERMAL_HYST_MC);
	}
	if (hot > old) {
		WRITE_ONCE(bl->thermal, hot);
		bl->cool_since_ns = 0;
		if (old == XNIC_THERMAL_OK)
			xnic_bl_inc(bl, XNIC_BL_THERMAL_WARNS);
		if (hot == XNIC_THERMAL_CRIT)
			xnic_bl_inc(bl, XNIC_BL_THERMAL_CRITS);
		return !bl->dead;
	}
	if (keep >= old) {
		bl->cool_since_ns = 0;
		return false;
	}
	if (!bl->cool_since_ns)
		bl->cool_since_ns = now;
	if (now - bl->cool_since_ns < hold)
		return false;
	WRITE_ONCE(bl->thermal, keep);
	bl->cool_since_ns = 0;
	return !bl->dead;
}

/**
 * xnic_bond_thermal_set() - netlink LINK_SET: thresholds and injection
 * @link: the member link
 * @tb: the XNIC_A_LINK nest, parsed: TEMP_WARN_MC, TEMP_CRIT_MC (u32,
 *	millidegrees Celsius, 0: off), TEMP_INJECT_MC (s32, for tests;
 *	XNIC_TEMP_INJECT_OFF ends it), each optional
 * @extack: error report
 *
 * All or nothing. Acts at the next heartbeat tick.
 *
 * Context: RTNL held.
 * Return: 0; -EINVAL when both thresholds are set and warn is not below
 * critical; -ENOENT when the link has no bond state.
 */
int xnic_bond_thermal_set(struct xnic_link *link, struct nlattr **tb,
			  struct netlink_ext_ack *extack)
{
	struct xnic_bond_link *bl = link->bond;
	u32 warn, crit;

	ASSERT_RTNL();
	if (!bl)
		return -ENOENT;
	spin_lock_bh(&bl->lock);
	warn = tb[XNIC_LINK_A_TEMP_WARN_MC] ?
	       nla_get_u32(tb[XNIC_LINK_A_TEMP_WARN_MC]) : bl->temp_warn_mc;
	crit = tb[XNIC_LINK_A_TEMP_CRIT_MC] ?
	       nla_get_u32(tb[XNIC_LINK_A_TEMP_CRIT_MC]) : bl->temp_crit_mc;
	if (warn && crit && warn >= crit) {
		spin_unlock_bh(&bl->lock);
		NL_SET_ERR_MSG(extack,
			       "warn threshold must be below the critical one");
		return -EINVAL;
	}
	bl->temp_warn_mc = warn;
	bl->temp_crit_mc = crit;
	if (tb[XNIC_LINK_A_TEMP_INJECT_MC])
		WRITE_ONCE(bl->temp_inject_mc,
			   nla_get_s32(tb[XNIC_LINK_A_TEMP_INJECT_MC]));
	spin_unlock_bh(&bl->lock);
	return 0;
}
