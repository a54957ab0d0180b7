/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * temp_decode.h - a member link's temperature from the bytes its hardware
 * gives: the pluggable module's EEPROM diagnostics (SFF-8472 SFP,
 * SFF-8636 QSFP, CMIS QSFP-DD/OSFP) and the text of an hwmon
 * tempN_input file. Pure functions (no I/O but through the caller's read
 * callback): unit-tested on the host (selftests/unit/temp_decode_test.c)
 * and fuzzed (selftests/fuzz/fuzz_temp.c). The bytes are untrusted: any
 * content gives a temperature or an error, never more.
 */
#ifndef XNIC_TEMP_DECODE_H
#define XNIC_TEMP_DECODE_H

#include <stddef.h>
#include <stdint.h>

/* Two-wire (I2C) addresses of a module's memory map (7-bit, as ethtool). */
#define XNIC_I2C_ID	0x50	/* SFF-8472 A0h; the whole map of QSFP/CMIS */
#define XNIC_I2C_DIAG	0x51	/* SFF-8472 A2h: diagnostics */

/* Decoded temperatures outside this range (millidegrees C) are garbage. */
#define XNIC_TEMP_MIN_MC	(-128000)
#define XNIC_TEMP_MAX_MC	127996

/**
 * typedef xnic_eeprom_read_t - read bytes of a module's memory map
 * @ctx: the caller's context
 * @addr: I2C address, XNIC_I2C_ID or XNIC_I2C_DIAG
 * @page: page selected for the upper half (offsets 128..255); 0 below 128
 * @offset: first byte, 0..255 (a read never crosses offset 128)
 * @len: bytes, 1..4
 * @buf: filled with @len bytes on success
 *
 * Return: 0, or a negative errno: -EOPNOTSUPP or -ENODEV when the netdev
 * has no module memory to read (no sensor), anything else is a read error.
 */
typedef int (*xnic_eeprom_read_t)(void *ctx, uint8_t addr, uint8_t page,
				  uint8_t offset, uint8_t len, uint8_t *buf);

/**
 * xnic_module_temp() - the temperature of a pluggable module
 * @rd: reads the module's memory map
 * @ctx: passed to @rd
 * @mc: set to the temperature, millidegrees Celsius, on success
 *
 * The SFF-8024 identifier (byte 0) says which map: 0x02/0x03 SFF-8472
 * (SFP): A2h bytes 96-97 if byte 94 (SFF-8472 compliance) is not 0 and
 * byte 92 says digital diagnostics are implemented (bit 6) without an
 * address change sequence (bit 2, not supported, as the kernel's sfp.c);
 * externally calibrated (byte 92 bit 4): T = slope * T_AD + offset with
 * A2h bytes 84-85 (unsigned 8.8 slope) and 86-87 (signed offset).
 * 0x0C/0x0D/0x11 SFF-8636 (QSFP/QSFP+/QSFP28): lower page bytes 22-23
 * (no flag tells whether they are implemented; read as ethtool does).
 * 0x18/0x19/0x1B/0x1E CMIS (QSFP-DD, OSFP, DSFP, QSFP+ with CMIS): lower
 * page bytes 14-15 if the memory is paged (byte 2 bit 7 clear) and page
 * 01h byte 159 bit 0 advertises the temperature monitor. Each a signed
 * 16-bit big-endian value in 1/256 degree Celsius, rounded to the
 * nearest millidegree.
 *
 * Return: 0; -ENODATA: the module has no temperature sensor (unknown
 * identifier, diagnostics not implemented or not advertised); -ERANGE:
 * the value is outside XNIC_TEMP_MIN_MC..XNIC_TEMP_MAX_MC (garbage); or
 * the error of @rd.
 */
int xnic_module_temp(xnic_eeprom_read_t rd, void *ctx, int32_t *mc);

/**
 * xnic_hwmon_temp_parse() - the value of an hwmon tempN_input file
 * @buf: the file's bytes (not NUL-terminated)
 * @len: their number
 * @mc: set to the temperature, millidegrees Celsius (the hwmon unit), on
 *	success
 *
 * A decimal integer with an optional minus sign and one optional trailing
 * newline (Documentation/hwmon/sysfs-interface.rst), nothing else.
 *
 * Return: 0; -EBADMSG: not such a number; -ERANGE: below absolute zero
 * or above 1000 degrees Celsius.
 */
int xnic_hwmon_temp_parse(const char *buf, size_t len, int32_t *mc);

#endif
