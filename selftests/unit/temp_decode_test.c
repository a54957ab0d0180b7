// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the temperature decoders (thermal/temp_decode.c), run on
 * the host: module EEPROM maps shaped as real SFP (SFF-8472), QSFP28
 * (SFF-8636) and QSFP-DD (CMIS) modules give their temperature, negative
 * ones too; modules without diagnostics, with an address change sequence,
 * flat CMIS memory, unknown identifiers, short maps and failing reads give
 * the right error; hwmon text is parsed strictly.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "thermal/temp_decode.c"

/*
 * A module's memory map: the 256 bytes of address 0x50 with page 00h
 * selected, page 01h's upper half, and address 0x51 (SFP only). A read
 * past @len of its area, or into a missing area, fails with -EIO.
 */
struct map {
	uint8_t a0[256], p1[256], a2[256];
	size_t a0_len, p1_len, a2_len;
	int fail;		/* nonzero: every read returns it */
	int reads;
};

static int map_read(void *ctx, uint8_t addr, uint8_t page, uint8_t off,
		    uint8_t len, uint8_t *buf)
{
	struct map *m = ctx;
	const uint8_t *area;
	size_t n;

	m->reads++;
	if (m->fail)
		return m->fail;
	if (addr == XNIC_I2C_DIAG) {
		area = m->a2;
		n = m->a2_len;
	} else if (page == 1 && off >= 128) {
		area = m->p1;
		n = m->p1_len;
	} else if (page == 0) {
		area = m->a0;
		n = m->a0_len;
	} else {
		return -EIO;
	}
	if ((size_t)off + len > n)
		return -EIO;
	memcpy(buf, area + off, len);
	return 0;
}

static void put16(uint8_t *p, int v)
{
	p[0] = (uint8_t)((unsigned int)v >> 8);
	p[1] = (uint8_t)v;
}

/* A 10G-SR SFP+ as such modules come: DDM, internally calibrated. */
static void sfp(struct map *m, int temp256)
{
	memset(m, 0, sizeof(*m));
	m->a0_len = m->a2_len = 256;
	m->a0[0] = 0x03;		/* SFP */
	m->a0[1] = 0x04;		/* defined by two-wire ID */
	m->a0[2] = 0x07;		/* LC */
	memcpy(m->a0 + 20, "FINISAR CORP.   ", 16);
	m->a0[92] = 0x68;		/* DDM, internal cal, avg power */
	m->a0[93] = 0xf0;
	m->a0[94] = 0x08;		/* SFF-8472 rev 12.0 */
	put16(m->a2 + 0, 75 * 256);	/* temp high alarm */
	put16(m->a2 + 96, temp256);
	put16(m->a2 + 98, 33000);	/* Vcc 3.3 V */
}

/* A QSFP28 100G-SR4. */
static void qsfp28(struct map *m, int temp256)
{
	memset(m, 0, sizeof(*m));
	m->a0_len = 256;
	m->a0[0] = 0x11;
	m->a0[1] = 0x07;		/* SFF-8636 rev 2.5+ */
	m->a0[2] = 0x00;		/* paged */
	put16(m->a0 + 22, temp256);
	put16(m->a0 + 26, 32900);
	m->a0[128] = 0x11;
	memcpy(m->a0 + 148, "Mellanox        ", 16);
}

/* A QSFP-DD 400G module: CMIS 4.0, paged, temperature monitor. */
static void qsfp_dd(struct map *m, int temp256)
{
	memset(m, 0, sizeof(*m));
	m->a0_len = 256;
	m->p1_len = 256;
	m->a0[0] = 0x18;
	m->a0[1] = 0x40;		/* CMIS 4.0 */
	m->a0[2] = 0x00;		/* paged */
	m->a0[3] = 0x06;		/* module ready */
	put16(m->a0 + 14, temp256);
	put16(m->a0 + 16, 33100);
	m->a0[128] = 0x18;
	m->p1[159] = 0x03;		/* temperature and Vcc monitors */
}

TEST(sfp_internal_cal)
{
	struct map m;
	int32_t mc = 0;

	sfp(&m, 0x2a80);		/* 42.5 C */
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(42500, mc);
	sfp(&m, 0x1901);		/* 25 + 1/256 C: 25.0039 */
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(25004, mc);
}

TEST(sfp_negative)
{
	struct map m;
	int32_t mc = 0;

	sfp(&m, -10 * 256 - 128);	/* -10.5 C */
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(-10500, mc);
	sfp(&m, -1);			/* -1/256 C */
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(-4, mc);
	sfp(&m, -32768);		/* -128 C: the bottom */
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(-128000, mc);
	sfp(&m, 32767);			/* 127.996 C: the top */
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(127996, mc);
}

TEST(sfp_external_cal)
{
	struct map m;
	int32_t mc = 0;

	sfp(&m, 40 * 256);
	m.a0[92] = 0x58;		/* DDM, external cal */
	put16(m.a2 + 84, 0x0200);	/* slope 2.0 */
	put16(m.a2 + 86, -5 * 256);	/* offset -5 C */
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(75000, mc);		/* 2 * 40 - 5 */
	/* slope 0.5, offset 0 */
	put16(m.a2 + 84, 0x0080);
	put16(m.a2 + 86, 0);
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(20000, mc);
	/* calibration that leaves the range: garbage */
	put16(m.a2 + 84, 0xff00);
	EXPECT_EQ(-ERANGE, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(20000, mc);		/* untouched */
}

TEST(sfp_no_ddm)
{
	struct map m;
	int32_t mc = 7;

	sfp(&m, 30 * 256);
	m.a0[92] = 0x00;		/* a passive DAC: no diagnostics */
	EXPECT_EQ(-ENODATA, xnic_module_temp(map_read, &m, &mc));
	sfp(&m, 30 * 256);
	m.a0[94] = 0x00;		/* SFF-8472 not complied with */
	EXPECT_EQ(-ENODATA, xnic_module_temp(map_read, &m, &mc));
	sfp(&m, 30 * 256);
	m.a0[92] = 0x44;		/* DDM but address change needed */
	EXPECT_EQ(-ENODATA, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(7, mc);
	/* diagnostics claimed but A2h does not answer: a read error */
	sfp(&m, 30 * 256);
	m.a2_len = 0;
	EXPECT_EQ(-EIO, xnic_module_temp(map_read, &m, &mc));
	/* the soldered-down variant (0x02) reads the same */
	sfp(&m, 30 * 256);
	m.a0[0] = 0x02;
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(30000, mc);
}

TEST(sff8636_qsfp)
{
	struct map m;
	int32_t mc = 0;

	qsfp28(&m, 0x3100);		/* 49 C */
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(49000, mc);
	qsfp28(&m, -256 * 20);		/* -20 C */
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(-20000, mc);
	qsfp28(&m, 0x2000);
	m.a0[0] = 0x0c;			/* QSFP */
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(32000, mc);
	m.a0[0] = 0x0d;			/* QSFP+ */
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(32000, mc);
	/* no address 0x51 needed */
	EXPECT_EQ(0, m.a2_len);
}

TEST(cmis_qsfp_dd)
{
	static const uint8_t ids[] = { 0x18, 0x19, 0x1b, 0x1e };
	struct map m;
	int32_t mc = 0;
	size_t i;

	for (i = 0; i < sizeof(ids); i++) {
		qsfp_dd(&m, 0x3780);	/* 55.5 C */
		m.a0[0] = ids[i];
		EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
		EXPECT_EQ(55500, mc);
	}
	qsfp_dd(&m, -5 * 256);
	EXPECT_EQ(0, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(-5000, mc);
}

TEST(cmis_not_advertised)
{
	struct map m;
	int32_t mc = 1;

	qsfp_dd(&m, 50 * 256);
	m.p1[159] = 0x02;		/* Vcc monitor only */
	EXPECT_EQ(-ENODATA, xnic_module_temp(map_read, &m, &mc));
	qsfp_dd(&m, 50 * 256);
	m.a0[2] = 0x80;			/* flat memory (passive copper) */
	m.p1_len = 0;
	EXPECT_EQ(-ENODATA, xnic_module_temp(map_read, &m, &mc));
	qsfp_dd(&m, 50 * 256);
	m.p1_len = 0;			/* page 01h does not answer */
	EXPECT_EQ(-EIO, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(1, mc);
}

TEST(unknown_short_and_failing)
{
	struct map m;
	int32_t mc = 3;

	qsfp28(&m, 0x2000);
	m.a0[0] = 0x00;			/* unknown / unspecified */
	EXPECT_EQ(-ENODATA, xnic_module_temp(map_read, &m, &mc));
	m.a0[0] = 0xff;
	EXPECT_EQ(-ENODATA, xnic_module_temp(map_read, &m, &mc));
	m.a0[0] = 0x01;			/* GBIC */
	EXPECT_EQ(-ENODATA, xnic_module_temp(map_read, &m, &mc));
	/* a map that ends before the temperature */
	qsfp28(&m, 0x2000);
	m.a0_len = 20;
	EXPECT_EQ(-EIO, xnic_module_temp(map_read, &m, &mc));
	sfp(&m, 0x2000);
	m.a0_len = 93;
	EXPECT_EQ(-EIO, xnic_module_temp(map_read, &m, &mc));
	qsfp28(&m, 0x2000);
	m.a0_len = 0;
	EXPECT_EQ(-EIO, xnic_module_temp(map_read, &m, &mc));
	/* the driver cannot read modules at all */
	qsfp28(&m, 0x2000);
	m.fail = -EOPNOTSUPP;
	EXPECT_EQ(-EOPNOTSUPP, xnic_module_temp(map_read, &m, &mc));
	EXPECT_EQ(1, m.reads);
	EXPECT_EQ(3, mc);
}

TEST(hwmon_text)
{
	int32_t mc = 0;

	EXPECT_EQ(0, xnic_hwmon_temp_parse("54000\n", 6, &mc));
	EXPECT_EQ(54000, mc);
	EXPECT_EQ(0, xnic_hwmon_temp_parse("-2500", 5, &mc));
	EXPECT_EQ(-2500, mc);
	EXPECT_EQ(0, xnic_hwmon_temp_parse("0\n", 2, &mc));
	EXPECT_EQ(0, mc);
	mc = 9;
	EXPECT_EQ(-EBADMSG, xnic_hwmon_temp_parse("", 0, &mc));
	EXPECT_EQ(-EBADMSG, xnic_hwmon_temp_parse("\n", 1, &mc));
	EXPECT_EQ(-EBADMSG, xnic_hwmon_temp_parse("-", 1, &mc));
	EXPECT_EQ(-EBADMSG, xnic_hwmon_temp_parse("12a00", 5, &mc));
	EXPECT_EQ(-EBADMSG, xnic_hwmon_temp_parse("54000\n\n", 7, &mc));
	EXPECT_EQ(-EBADMSG, xnic_hwmon_temp_parse(" 54000", 6, &mc));
	EXPECT_EQ(-EBADMSG, xnic_hwmon_temp_parse("+5", 2, &mc));
	EXPECT_EQ(-ERANGE, xnic_hwmon_temp_parse("-300000", 7, &mc));
	EXPECT_EQ(-ERANGE, xnic_hwmon_temp_parse("1000001", 7, &mc));
	EXPECT_EQ(-ERANGE,
		  xnic_hwmon_temp_parse("99999999999999999999", 20, &mc));
	EXPECT_EQ(9, mc);
	/* not NUL-terminated: only @len bytes count */
	EXPECT_EQ(0, xnic_hwmon_temp_parse("4100099", 5, &mc));
	EXPECT_EQ(41000, mc);
}

TEST_HARNESS_MAIN
