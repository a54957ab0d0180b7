// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - thermal awareness of member links: a link's temperature against
 * its warn and critical thresholds (netlink LINK_SET) gives its thermal
 * state (uapi enum xnic_thermal_state). WARN divides the link's spray
 * weight by 4 (bond_path.c); CRIT isolates it as the health patrol isolates
 * a DEGRADED link (bond.c: drained, its unacknowledged PSNs resent on the
 * others, heartbeats only, the peer told through the heartbeat's health
 * flag). A state is entered at once and left only the link's hysteresis
 * (temp_hyst_mc) below its threshold, after staying there for the bond
 * hold time.
 *
 * The temperature comes from userspace: a sensor reader
 * (thermal/xnic-tempd) reads the hwmon sensor of the member netdev's
 * parent device and the pluggable module's EEPROM diagnostics and reports
 * them with LINK_SET (TEMP_SOURCE, TEMP_SENSOR_MC, TEMP_READ_ERROR); a
 * reading stands for XNIC_TEMP_STALE_MS. A test may inject one
 * (TEMP_INJECT_MC), which overrides the sensor. A link with no known
 * temperature is THERMAL_OK: a missing or failing sensor never trips the
 * policy. Evaluated at every heartbeat tick (bond.c), under
 * xnic_bond_link.lock.
 */
#include <linux/jiffies.h>
#include <net/netlink.h>

#include "bond.h"
#include "../uapi/xnic-netlink.h"

/**
 * xnic_bond_temp() - a member link's temperature and where it comes from
 * @bl: the link's bond state
 * @mc: set to the temperature, millidegrees Celsius, when known
 *
 * The injected temperature if a test set one, else the sensor reading a
 * reader reported in the last XNIC_TEMP_STALE_MS.
 *
 * Context: any; without @bl->lock a racy snapshot (for display).
 * Return: enum xnic_temp_source; XNIC_TEMP_SRC_NONE (0): unknown, @mc
 * untouched.
 */
u8 xnic_bond_temp(struct xnic_bond_link *bl, s32 *mc)
{
	s32 t = READ_ONCE(bl->temp_inject_mc);
	u8 src;

	if (t != XNIC_TEMP_INJECT_OFF) {
		*mc = t;
		return XNIC_TEMP_SRC_INJECTED;
	}
	src = READ_ONCE(bl->sensor_src);
	if (src == XNIC_TEMP_SRC_NONE ||
	    time_after(jiffies, READ_ONCE(bl->sensor_at) +
			       msecs_to_jiffies(XNIC_TEMP_STALE_MS)))
		return XNIC_TEMP_SRC_NONE;
	*mc = READ_ONCE(bl->sensor_mc);
	return src;
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
 * stayed @bl->temp_hyst_mc below the current state's threshold for
 * bond_hold_ms. An unknown temperature counts as cool.
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
		keep = xnic_bond_thermal_want(bl, t, bl->temp_hyst_mc);
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

/* LINK_SET's sensor report: TEMP_SOURCE [TEMP_SENSOR_MC], TEMP_READ_ERROR. */
static int xnic_bond_sensor_check(struct nlattr **tb,
				  struct netlink_ext_ack *extack)
{
	u8 src = tb[XNIC_LINK_A_TEMP_SOURCE] ?
		 nla_get_u8(tb[XNIC_LINK_A_TEMP_SOURCE]) : XNIC_TEMP_SRC_NONE;

	if (tb[XNIC_LINK_A_TEMP_SENSOR_MC] && src == XNIC_TEMP_SRC_NONE) {
		NL_SET_ERR_MSG(extack,
			       "a sensor reading needs its source (hwmon or module)");
		return -EINVAL;
	}
	if (!tb[XNIC_LINK_A_TEMP_SENSOR_MC] && src != XNIC_TEMP_SRC_NONE) {
		NL_SET_ERR_MSG(extack, "a sensor source needs its reading");
		return -EINVAL;
	}
	return 0;
}

/**
 * xnic_bond_thermal_set() - netlink LINK_SET: thresholds, hysteresis,
 *	sensor reports and test injection
 * @link: the member link
 * @tb: the XNIC_A_LINK nest, parsed (uapi/xnic-netlink.h, each optional):
 *	TEMP_WARN_MC, TEMP_CRIT_MC (u32, millidegrees Celsius, 0: off),
 *	TEMP_HYST_MC (u32, millidegrees Celsius, range checked by the
 *	policy), TEMP_INJECT_MC (s32, for tests; XNIC_TEMP_INJECT_OFF ends
 *	it); from a sensor reader: TEMP_SOURCE (HWMON or MODULE) with
 *	TEMP_SENSOR_MC (s32, the reading), or TEMP_SOURCE NONE alone (no
 *	sensor: forget the reading), and TEMP_READ_ERROR (flag, counted)
 * @extack: error report
 *
 * All or nothing. Acts at the next heartbeat tick.
 *
 * Context: RTNL held.
 * Return: 0; -EINVAL when both thresholds are set and warn is not below
 * critical, or a sensor report is malformed; -ENOENT when the link has no
 * bond state.
 */
int xnic_bond_thermal_set(struct xnic_link *link, struct nlattr **tb,
			  struct netlink_ext_ack *extack)
{
	struct xnic_bond_link *bl = link->bond;
	u32 warn, crit;
	int err;

	ASSERT_RTNL();
	if (!bl)
		return -ENOENT;
	err = xnic_bond_sensor_check(tb, extack);
	if (err)
		return err;
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
	if (tb[XNIC_LINK_A_TEMP_HYST_MC])
		WRITE_ONCE(bl->temp_hyst_mc,
			   nla_get_u32(tb[XNIC_LINK_A_TEMP_HYST_MC]));
	if (tb[XNIC_LINK_A_TEMP_INJECT_MC])
		WRITE_ONCE(bl->temp_inject_mc,
			   nla_get_s32(tb[XNIC_LINK_A_TEMP_INJECT_MC]));
	if (tb[XNIC_LINK_A_TEMP_SENSOR_MC]) {
		WRITE_ONCE(bl->sensor_mc,
			   nla_get_s32(tb[XNIC_LINK_A_TEMP_SENSOR_MC]));
		WRITE_ONCE(bl->sensor_at, jiffies);
	}
	if (tb[XNIC_LINK_A_TEMP_SOURCE])
		WRITE_ONCE(bl->sensor_src,
			   nla_get_u8(tb[XNIC_LINK_A_TEMP_SOURCE]));
	if (nla_get_flag(tb[XNIC_LINK_A_TEMP_READ_ERROR]))
		xnic_bl_inc(bl, XNIC_BL_TEMP_READ_ERRORS);
	spin_unlock_bh(&bl->lock);
	return 0;
}
