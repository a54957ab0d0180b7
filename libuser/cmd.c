// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxnic - the ib_uverbs write() command ABI (drivers/infiniband/core/
 * uverbs_main.c, ib_uverbs_write()):
 *
 * Legacy command: struct ib_uverbs_cmd_hdr, the core request, the driver
 * input. in_words counts 4-byte words of all three; out_words counts
 * 4-byte words of the response buffer, whose address is the request's
 * first field (u64 response). The kernel writes the core response at its
 * start and the driver output right after the core response.
 *
 * Extended command: command | IB_USER_VERBS_CMD_FLAG_EXTENDED, then struct
 * ib_uverbs_ex_cmd_hdr (response pointer, provider word counts), the core
 * request, the driver input. Here the counts are 8-byte words and exclude
 * both headers.
 *
 * The write must be exactly the size the header announces; it returns
 * that size on success.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "priv.h"

/* Largest command or response this library sends or expects, bytes. */
#define XNIC_CMD_MAX	512

static int xnic_write(int fd, const void *buf, size_t len)
{
	ssize_t n;

	do {
		n = write(fd, buf, len);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/**
 * xnic_cmd() - run a legacy uverbs command
 * @fd: uverbs file
 * @command: IB_USER_VERBS_CMD_*
 * @req: core request; when a response is expected its first field is the
 *	u64 response pointer, which this function fills
 * @req_len: bytes of @req (a multiple of 4)
 * @drv_in: driver input, or NULL
 * @drv_in_len: its bytes (a multiple of 4)
 * @resp: core response buffer, or NULL for commands without one
 * @resp_len: its bytes (a multiple of 4)
 * @drv_out: driver output buffer, or NULL
 * @drv_out_len: its bytes (a multiple of 4)
 *
 * Return: 0 or -errno of write(); -EINVAL for sizes this helper can't send.
 */
int xnic_cmd(int fd, uint32_t command, void *req, size_t req_len,
	     const void *drv_in, size_t drv_in_len, void *resp,
	     size_t resp_len, void *drv_out, size_t drv_out_len)
{
	uint64_t in[XNIC_CMD_MAX / 8], out[XNIC_CMD_MAX / 8];
	struct ib_uverbs_cmd_hdr hdr;
	size_t in_len = sizeof(hdr) + req_len + drv_in_len;
	size_t out_len = resp_len + drv_out_len;
	int err;

	if (in_len > sizeof(in) || out_len > sizeof(out) || in_len % 4 ||
	    out_len % 4)
		return -EINVAL;
	if (out_len) {
		uint64_t ptr = (uintptr_t)out;

		memcpy(req, &ptr, sizeof(ptr));
		memset(out, 0, out_len);
	}
	hdr.command = command;
	hdr.in_words = (uint16_t)(in_len / 4);
	hdr.out_words = (uint16_t)(out_len / 4);
	memcpy(in, &hdr, sizeof(hdr));
	memcpy((char *)in + sizeof(hdr), req, req_len);
	if (drv_in_len)
		memcpy((char *)in + sizeof(hdr) + req_len, drv_in, drv_in_len);

	err = xnic_write(fd, in, in_len);
	if (err)
		return err;
	if (resp_len)
		memcpy(resp, out, resp_len);
	if (drv_out_len)
		memcpy(drv_out, (char *)out + resp_len, drv_out_len);
	return 0;
}

/**
 * xnic_cmd_ex() - run an extended uverbs command
 * @fd: uverbs file
 * @command: IB_USER_VERBS_EX_CMD_* (the EXTENDED flag is added here)
 * @req: core request (has no response field)
 * @req_len: its bytes (a multiple of 8)
 * @drv_in: driver input, or NULL
 * @drv_in_len: its bytes (a multiple of 8)
 * @resp: core response buffer
 * @resp_len: its bytes (a multiple of 8)
 * @drv_out: driver output buffer, or NULL
 * @drv_out_len: its bytes (a multiple of 8)
 *
 * Return: 0 or -errno of write(); -EINVAL for sizes this helper can't send.
 */
int xnic_cmd_ex(int fd, uint32_t command, const void *req, size_t req_len,
		const void *drv_in, size_t drv_in_len, void *resp,
		size_t resp_len, void *drv_out, size_t drv_out_len)
{
	uint64_t in[XNIC_CMD_MAX / 8], out[XNIC_CMD_MAX / 8];
	struct ib_uverbs_ex_cmd_hdr ex = { 0 };
	struct ib_uverbs_cmd_hdr hdr;
	size_t hdrs = sizeof(hdr) + sizeof(ex);
	size_t in_len = hdrs + req_len + drv_in_len;
	size_t out_len = resp_len + drv_out_len;
	int err;

	if (in_len > sizeof(in) || out_len > sizeof(out) || req_len % 8 ||
	    drv_in_len % 8 || resp_len % 8 || drv_out_len % 8)
		return -EINVAL;
	hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | command;
	hdr.in_words = (uint16_t)(req_len / 8);
	hdr.out_words = (uint16_t)(resp_len / 8);
	ex.provider_in_words = (uint16_t)(drv_in_len / 8);
	ex.provider_out_words = (uint16_t)(drv_out_len / 8);
	if (out_len) {
		ex.response = (uintptr_t)out;
		memset(out, 0, out_len);
	}
	memcpy(in, &hdr, sizeof(hdr));
	memcpy((char *)in + sizeof(hdr), &ex, sizeof(ex));
	memcpy((char *)in + hdrs, req, req_len);
	if (drv_in_len)
		memcpy((char *)in + hdrs + req_len, drv_in, drv_in_len);

	err = xnic_write(fd, in, in_len);
	if (err)
		return err;
	if (resp_len)
		memcpy(resp, out, resp_len);
	if (drv_out_len)
		memcpy(drv_out, (char *)out + resp_len, drv_out_len);
	return 0;
}

/**
 * xnic_map() - map an object the kernel created (MAP_SHARED, read/write)
 * @fd: uverbs file
 * @key: mmap offset the kernel returned
 * @size: exact mapping size the kernel returned
 * @err: set to -errno on failure
 * Return: the mapping, or NULL.
 */
void *xnic_map(int fd, uint64_t key, size_t size, int *err)
{
	void *p;

	if (!size || key > (uint64_t)INT64_MAX) {
		*err = -EPROTO;
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)key);
	if (p == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	return p;
}

/**
 * xnic_mtu_bytes() - bytes of an enum ib_mtu value
 * @ib_mtu: 1 (256) .. 5 (4096)
 * Return: bytes, or 0 for an unknown value.
 */
uint32_t xnic_mtu_bytes(unsigned int ib_mtu)
{
	return ib_mtu >= 1 && ib_mtu <= 5 ? 128U << ib_mtu : 0;
}
