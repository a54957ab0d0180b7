// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: xnictl's handling of what the kernel answers on its
 * netlink socket (tools/xnictl.c): req_reply() (errors, extended ACKs,
 * the end of a dump, replies checked against the attribute policies) and
 * event_reply() (`xnictl monitor`), with the printers they feed.
 *
 * Input: byte 0 picks the command whose answer this is (low 4 bits:
 * `xnictl`, `show`, `-i`, `-S`, `link show`, `peer show`, `get`, `set`
 * or `monitor`) and the output (0x80 JSON, 0x40 pretty); the rest is one
 * receive buffer of netlink messages, walked as libnl walks it. xnictl.c
 * is included with its main() renamed; its output is discarded.
 *
 * Invariants (abort() is a finding): the request's error is 0 or a
 * negative errno; a request with an error is done.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define main xnictl_main
#include "tools/xnictl.c"
#undef main

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Output goes nowhere, without a system call. */
static ssize_t discard(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	(void)buf;
	return (ssize_t)n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	cookie_io_functions_t io = { .write = discard };

	(void)argc;
	(void)argv;
	stdout = fopencookie(NULL, "w", io);
	if (!stdout)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t *buf;	/* malloc()ed: aligned, and ASan sees its end */
	struct req r = { .bad_attr = -1 };
	enum dev_style style = DEV_LIST;
	struct nlmsghdr *nlh;
	print_fn print;
	int rem, kind;

	if (size < 1 || size - 1 > 65536)
		return 0;
	kind = data[0] & 0xf;
	json = data[0] & 0x80;
	pretty = data[0] & 0x40;
	buf = malloc(size - 1 ? size - 1 : 1);
	if (!buf)
		abort();
	memcpy(buf, data + 1, size - 1);
	/* A request with two attributes, for NLMSGERR_ATTR_OFFS to name. */
	nr_req_attrs = 2;
	req_attr[0].off = 20;
	req_attr[1].off = 28;
	switch (kind) {
	case 0: case 1: case 2:
		style = (enum dev_style)kind;
		r.fn = dev_cb;
		r.arg = &style;
		break;
	case 3:
		r.fn = stats_cb;
		break;
	case 4: case 5:
		print = kind == 4 ? print_link : print_peer;
		r.fn = dump_cb;
		r.arg = &print;
		break;
	case 6:
		r.fn = param_cb;
		r.arg = (void *)(data[0] & 0x20 ? &params[0] : NULL);
		break;
	case 7:
		break;
	default:
		break;
	}
	if (json)
		j_arr(NULL);
	nlh = (struct nlmsghdr *)buf;
	rem = (int)(size - 1);
	while (nlmsg_ok(nlh, rem)) {
		if (kind >= 8)
			event_reply(nlh);
		else if (req_reply(&r, nlh, (size_t)rem) == NL_STOP)
			break;
		nlh = nlmsg_next(nlh, &rem);
	}
	if (json)
		j_arr_end();
	free(buf);
	if (r.error > 0 || r.error < -4095 || (r.error && !r.done))
		abort();
	return 0;
}
