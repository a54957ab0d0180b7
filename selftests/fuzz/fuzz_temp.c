// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the temperature decoders (thermal/temp_decode.c) on
 * what a pluggable module or an hwmon driver hands us. The input is a
 * module's memory map: bytes 0-255 are address 0x50 with page 00h
 * selected, 256-511 page 01h, 512-767 address 0x51; a shorter input is a
 * module whose reads past its end fail. The whole input is also an hwmon
 * tempN_input file.
 *
 * Invariants (abort() is a finding): every read the decoder asks for is
 * 1-4 bytes at address 0x50 or 0x51 that stays within 0-127 or 128-255;
 * a success gives a temperature within XNIC_TEMP_MIN_MC..XNIC_TEMP_MAX_MC
 * (hwmon: -273.15..1000 C); a failure is one of the documented errors.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "thermal/temp_decode.c"

struct input {
	const uint8_t *data;
	size_t size;
};

static int fuzz_read(void *ctx, uint8_t addr, uint8_t page, uint8_t off,
		     uint8_t len, uint8_t *buf)
{
	const struct input *in = ctx;
	size_t base;

	if (!len || len > 4 || (addr != XNIC_I2C_ID && addr != XNIC_I2C_DIAG) ||
	    (off < 128 && off + len > 128) || off + len > 256 ||
	    (off < 128 && page))
		abort();
	base = addr == XNIC_I2C_DIAG ? 512 : page == 1 ? 256 : page ? 768 : 0;
	if (base == 768 || base + off + len > in->size)
		return -EIO;
	memcpy(buf, in->data + base + off, len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	int32_t mc = INT32_MIN;
	int err;

	err = xnic_module_temp(fuzz_read, &in, &mc);
	if (!err && (mc < XNIC_TEMP_MIN_MC || mc > XNIC_TEMP_MAX_MC))
		abort();
	if (err && (err != -ENODATA && err != -ERANGE && err != -EIO))
		abort();
	if (err && mc != INT32_MIN)
		abort();
	mc = INT32_MIN;
	err = xnic_hwmon_temp_parse((const char *)data, size, &mc);
	if (!err && (mc < -273150 || mc > 1000000))
		abort();
	if (err && (err != -EBADMSG && err != -ERANGE))
		abort();
	return 0;
}
