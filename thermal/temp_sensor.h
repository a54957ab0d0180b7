/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * temp_sensor.h - read a netdev's temperature sensors: the hwmon device
 * of its parent device (sysfs) and its pluggable module's EEPROM
 * diagnostics (ethtool netlink ETHTOOL_MSG_MODULE_EEPROM_GET), decoded by
 * temp_decode.c. For tests, a directory may stand in for the hardware
 * (xnic_temp_open()).
 */
#ifndef XNIC_TEMP_SENSOR_H
#define XNIC_TEMP_SENSOR_H

#include <stdint.h>

#include <netlink/netlink.h>

struct xnic_temp_sensors;

/**
 * xnic_temp_open() - get ready to read sensors
 * @root: NULL: the hardware. FOR TESTS ONLY, a directory that stands in
 *	for it: ROOT/sys/class/net/IF/device/hwmon/hwmonN/temp1_input, and
 *	ROOT/module/IF/AA-PP, the 256 bytes of I2C address AA (hex, 50 or
 *	51) with page PP (hex) selected (no ROOT/module/IF: no module)
 *
 * Return: the handle, or NULL with errno set (no ethtool netlink family:
 * ENOENT).
 */
struct xnic_temp_sensors *xnic_temp_open(const char *root);
void xnic_temp_close(struct xnic_temp_sensors *s);

/**
 * xnic_temp_hwmon() - the temperature of a netdev's parent device
 * @s: the handle
 * @ifname: the netdev
 * @mc: set to the temperature, millidegrees Celsius, on success
 *
 * Reads temp1_input of the first hwmon device (lowest N) of
 * /sys/class/net/@ifname/device/hwmon/.
 *
 * Return: 0; -ENODATA: no such sensor (no parent device, no hwmon, no
 * temp1_input); another negative errno: the read failed (-EIO for a
 * driver's -ENODATA) or gave garbage (-EBADMSG, -ERANGE).
 */
int xnic_temp_hwmon(struct xnic_temp_sensors *s, const char *ifname,
		    int32_t *mc);

/**
 * xnic_temp_module() - the temperature of a netdev's pluggable module
 * @s: the handle
 * @ifname: the netdev
 * @mc: set to the temperature, millidegrees Celsius, on success
 *
 * Return: 0; -ENODATA: no module or no temperature diagnostics (the
 * driver cannot read modules: EOPNOTSUPP or ENODEV); another negative
 * errno: the read failed or gave garbage (xnic_module_temp()).
 */
int xnic_temp_module(struct xnic_temp_sensors *s, const char *ifname,
		     int32_t *mc);

/**
 * xnic_nl_xfer() - send a generic netlink request and take its replies
 * @sk: a connected generic netlink socket
 * @msg: the request (freed)
 * @valid: called with each reply (may be NULL)
 * @arg: its argument
 *
 * Return: 0 once acknowledged or the dump is done; the kernel's negative
 * errno; -EIO when netlink itself fails.
 */
int xnic_nl_xfer(struct nl_sock *sk, struct nl_msg *msg,
		 int (*valid)(struct nl_msg *, void *), void *arg);

#endif
