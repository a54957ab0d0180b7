// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * seeds DIR - write the fuzzers' starting corpora: DIR/wire/ one sealed
 * frame of every opcode as a peer (node 2) sends it to node 1, built by
 * the kernel's own encoder (kmod/wire.h), DIR/cm/ one message of every CM
 * type (kmod/cm_wire.h), DIR/credit/ a few step programs.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kmod/cm_wire.h"

static const char *dir;

static void put(const char *sub, const char *name, const void *p, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void frame(const char *name, struct xnic_wire_info *i,
		  const void *payload, size_t plen)
{
	static uint8_t buf[XNIC_WIRE_HDR_LEN + 4096];
	struct xnic_wire_hdr *h = (struct xnic_wire_hdr *)buf;

	i->src_node = 2;
	if (!i->dst_node)
		i->dst_node = 1;
	i->payload_len = plen;
	xnic_wire_encode(h, i);
	if (payload)
		memcpy(buf + XNIC_WIRE_HDR_LEN, payload, plen);
	else
		memset(buf + XNIC_WIRE_HDR_LEN, 0x5a, plen);
	xnic_wire_seal(h, XNIC_WIRE_HDR_LEN + plen);
	put("wire", name, buf, XNIC_WIRE_HDR_LEN + plen);
}

static void wire(void)
{
	struct xnic_wire_hello hello = { .node_guid = htobe64(0x0200000000000002ULL),
					 .link_mtu = htonl(9000) };
	struct xnic_wire_read_req rr = { .length = htonl(4096),
					 .seg_size = htonl(2048) };
	struct xnic_wire_heartbeat hb = { .seq = htonl(7) };
	struct xnic_wire_ack ack = { .sack = { htobe64(0x5) } };
	struct xnic_wire_cm cm;
	struct xnic_cm_info ci = { .type = XNIC_CM_REQ, .local_id = 9,
				   .qpn = 17, .psn = 100, .timeout_ms = 250,
				   .retries = 3, .service_id = 42 };
	struct xnic_wire_info i;

	memset(&i, 0, sizeof(i));
	i.opcode = XNIC_OP_HELLO;
	i.dst_node = XNIC_NODE_BROADCAST;
	frame("hello", &i, &hello, sizeof(hello));
	memset(&i, 0, sizeof(i));
	i.opcode = XNIC_OP_WRITE;
	i.flags = XNIC_WF_ACKREQ;
	i.src_qpn = 17;
	i.dst_qpn = 16;
	i.psn = 100;
	i.msg_len = 4096;
	i.raddr = 0x7f0000001000ULL;
	i.rkey = 0x1234;
	frame("write", &i, NULL, 2048);
	i.opcode = XNIC_OP_SEND;
	i.offset = 2048;
	i.flags = XNIC_WF_IMM;
	frame("send_imm", &i, NULL, 2048);
	memset(&i, 0, sizeof(i));
	i.opcode = XNIC_OP_READ_REQ;
	i.src_qpn = 17;
	i.dst_qpn = 16;
	i.psn = 101;
	i.msg_len = 4096;
	i.raddr = 0x7f0000002000ULL;
	i.rkey = 0x1234;
	frame("read_req", &i, &rr, sizeof(rr));
	i.opcode = XNIC_OP_READ_RESP;
	i.offset = 2048;
	frame("read_resp", &i, NULL, 2048);
	memset(&i, 0, sizeof(i));
	i.opcode = XNIC_OP_ACK;
	i.src_qpn = 17;
	i.dst_qpn = 16;
	i.psn = 102;
	i.credits = 64;
	frame("ack", &i, &ack, sizeof(ack));
	i.opcode = XNIC_OP_NAK;
	ack.syndrome = 1;
	ack.nak_psn = htonl(102);
	frame("nak", &i, &ack, sizeof(ack));
	i.opcode = XNIC_OP_CREDIT;
	frame("credit", &i, NULL, 0);
	memset(&i, 0, sizeof(i));
	i.opcode = XNIC_OP_HEARTBEAT;
	frame("heartbeat", &i, &hb, sizeof(hb));
	i.opcode = XNIC_OP_CM;
	xnic_cm_encode(&cm, &ci);
	frame("cm_req", &i, &cm, sizeof(cm));
}

static void cm(void)
{
	static const char *const names[] = {
		[XNIC_CM_REQ] = "req", [XNIC_CM_REP] = "rep",
		[XNIC_CM_RTU] = "rtu", [XNIC_CM_REJ] = "rej",
		[XNIC_CM_DREQ] = "dreq", [XNIC_CM_DREP] = "drep",
	};
	struct xnic_wire_cm w;
	int t;

	for (t = XNIC_CM_REQ; t < XNIC_CM_TYPE_MAX; t++) {
		struct xnic_cm_info c = {
			.type = t, .local_id = 5, .remote_id = 9,
			.service_id = 42, .private_len = 8,
			.private_data = "abcdefgh",
		};

		if (t == XNIC_CM_REQ) {
			c.remote_id = 0;
			c.timeout_ms = 250;
			c.retries = 3;
		}
		if (t == XNIC_CM_REQ || t == XNIC_CM_REP || t == XNIC_CM_DREQ)
			c.qpn = 17;
		if (t == XNIC_CM_REQ || t == XNIC_CM_REP)
			c.psn = 100;
		if (t == XNIC_CM_REJ)
			c.reason = XNIC_CM_REASON_USER;
		if (t >= XNIC_CM_RTU && t != XNIC_CM_REJ)
			c.private_len = 0;
		xnic_cm_encode(&w, &c);
		put("cm", names[t], &w, sizeof(w));
	}
}

static void credit(void)
{
	/* Start, send, grant, send, stop; then the link: take, grant, sync. */
	static const uint8_t prog[] = {
		0, 0, 64, 0, 100, 0, 0, 0,	1, 0, 0, 0, 0, 0, 0, 0,
		2, 0, 32, 0, 101, 0, 0, 0,	1, 0, 0, 0, 0, 0, 0, 0,
		3, 0, 0, 0, 0, 0, 0, 0,		4, 0, 0, 0, 0, 0, 0, 0,
		5, 1, 0, 0, 96, 0, 0, 0,	7, 1, 1, 0, 10, 0, 0, 0,
		6, 0, 10, 0, 0, 0, 0, 0,	8, 0, 64, 0, 0, 0, 0, 0,
	};

	put("credit", "program", prog, sizeof(prog));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: seeds DIR\n");
		return 2;
	}
	dir = argv[1];
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	wire();
	cm();
	credit();
	return 0;
}
