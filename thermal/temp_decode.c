// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * temp_decode.c - decode a member link's temperature from module EEPROM
 * bytes and hwmon text (temp_decode.h). Byte positions are those of
 * SFF-8024 (identifiers), SFF-8472 rev 12 (SFP), SFF-8636 rev 2.10
 * (QSFP) and OIF CMIS 5 (QSFP-DD/OSFP).
 */
#include <errno.h>
#include <stdbool.h>

#include "temp_decode.h"

/* SFF-8024 identifiers (byte 0). */
#define ID_SFP_SOLDERED		0x02
#define ID_SFP			0x03
#define ID_QSFP			0x0c
#define ID_QSFP_PLUS		0x0d
#define ID_QSFP28		0x11
#define ID_QSFP_DD		0x18
#define ID_OSFP			0x19
#define ID_DSFP			0x1b
#define ID_QSFP_PLUS_CMIS	0x1e

/* SFF-8472: A0h byte 92 (diagnostic monitoring type), 94 (compliance). */
#define SFF8472_DIAGMON		92
#define SFF8472_DIAGMON_DDM	0x40
#define SFF8472_DIAGMON_EXT_CAL	0x10
#define SFF8472_DIAGMON_ADDRMODE 0x04
#define SFF8472_COMPLIANCE	94
/* A2h: external calibration T_slope (84-85), T_offset (86-87); 96-97. */
#define SFF8472_CAL_T_SLOPE	84
#define SFF8472_TEMP		96
/* SFF-8636 lower page. */
#define SFF8636_TEMP		22
/* CMIS: byte 2 bit 7 flat memory; page 01h byte 159 bit 0; 14-15. */
#define CMIS_MEMORY_MODEL	2
#define CMIS_FLAT_MEM		0x80
#define CMIS_MON_SUPPORT	159
#define CMIS_TEMP_MON		0x01
#define CMIS_TEMP		14

static int32_t be16s(const uint8_t *b)
{
	return (int16_t)(uint16_t)(b[0] << 8 | b[1]);
}

/* @v in 1/256 degree C to millidegrees, rounded half away from zero. */
static int to_mc(int64_t v, int32_t *mc)
{
	int64_t x = v * 1000;

	x = (x >= 0 ? x + 128 : x - 128) / 256;
	if (x < XNIC_TEMP_MIN_MC || x > XNIC_TEMP_MAX_MC)
		return -ERANGE;
	*mc = (int32_t)x;
	return 0;
}

static int sff8472_temp(xnic_eeprom_read_t rd, void *ctx, int32_t *mc)
{
	uint8_t id[3], t[2], cal[4];
	int64_t v;
	int err;

	err = rd(ctx, XNIC_I2C_ID, 0, SFF8472_DIAGMON, 3, id);
	if (err)
		return err;
	if (!id[SFF8472_COMPLIANCE - SFF8472_DIAGMON] ||
	    !(id[0] & SFF8472_DIAGMON_DDM) ||
	    (id[0] & SFF8472_DIAGMON_ADDRMODE))
		return -ENODATA;
	err = rd(ctx, XNIC_I2C_DIAG, 0, SFF8472_TEMP, 2, t);
	if (err)
		return err;
	v = be16s(t);
	if (id[0] & SFF8472_DIAGMON_EXT_CAL) {
		err = rd(ctx, XNIC_I2C_DIAG, 0, SFF8472_CAL_T_SLOPE, 4, cal);
		if (err)
			return err;
		/* slope: unsigned, binary point between its two bytes */
		v = v * (cal[0] << 8 | cal[1]);
		v = (v >= 0 ? v + 128 : v - 128) / 256 + be16s(cal + 2);
	}
	return to_mc(v, mc);
}

static int cmis_temp(xnic_eeprom_read_t rd, void *ctx, int32_t *mc)
{
	uint8_t b[2];
	int err;

	err = rd(ctx, XNIC_I2C_ID, 0, CMIS_MEMORY_MODEL, 1, b);
	if (err)
		return err;
	/* Flat memory: no page 01h to advertise the monitor. */
	if (b[0] & CMIS_FLAT_MEM)
		return -ENODATA;
	err = rd(ctx, XNIC_I2C_ID, 1, CMIS_MON_SUPPORT, 1, b);
	if (err)
		return err;
	if (!(b[0] & CMIS_TEMP_MON))
		return -ENODATA;
	err = rd(ctx, XNIC_I2C_ID, 0, CMIS_TEMP, 2, b);
	return err ? err : to_mc(be16s(b), mc);
}

int xnic_module_temp(xnic_eeprom_read_t rd, void *ctx, int32_t *mc)
{
	uint8_t b[2];
	int err;

	err = rd(ctx, XNIC_I2C_ID, 0, 0, 1, b);
	if (err)
		return err;
	switch (b[0]) {
	case ID_SFP_SOLDERED:
	case ID_SFP:
		return sff8472_temp(rd, ctx, mc);
	case ID_QSFP:
	case ID_QSFP_PLUS:
	case ID_QSFP28:
		err = rd(ctx, XNIC_I2C_ID, 0, SFF8636_TEMP, 2, b);
		return err ? err : to_mc(be16s(b), mc);
	case ID_QSFP_DD:
	case ID_OSFP:
	case ID_DSFP:
	case ID_QSFP_PLUS_CMIS:
		return cmis_temp(rd, ctx, mc);
	default:
		return -ENODATA;
	}
}

int xnic_hwmon_temp_parse(const char *buf, size_t len, int32_t *mc)
{
	int64_t v = 0;
	size_t i = 0;
	bool neg;

	if (len && buf[len - 1] == '\n')
		len--;
	neg = len && buf[0] == '-';
	i = neg;
	if (i == len)
		return -EBADMSG;
	for (; i < len; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return -EBADMSG;
		v = v * 10 + (buf[i] - '0');
		if (v > 1000000000)
			return -ERANGE;
	}
	if (neg)
		v = -v;
	if (v < -273150 || v > 1000000)
		return -ERANGE;
	*mc = (int32_t)v;
	return 0;
}
