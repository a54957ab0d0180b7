// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * seeds_nl DIR - the starting corpora of the netlink fuzz targets: in
 * DIR/xnictl/ (fuzz_xnictl) and DIR/cm_reply/ (fuzz_cm_reply), answers
 * shaped as the kernel sends them (kmod/netlink.c, uapi/xnic-netlink.h),
 * built with libnl: every reply and event kind with each of its
 * attributes, ACKs, errors with extended ACKs, ends of dumps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "uapi/xnic-netlink.h"
#include "selftests/fuzz/seeds_nl.h"

static const char *dir;
static unsigned char out[65536];
static size_t out_len;

static void start(unsigned char kind)
{
	out[0] = kind;
	out_len = 1;
}

static void start_raw(void)
{
	out_len = 0;
}

/* Append @msg (freed) to the buffer. */
static void add(struct nl_msg *msg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	size_t n = NLMSG_ALIGN(nlh->nlmsg_len);

	if (out_len + n > sizeof(out))
		abort();
	memcpy(out + out_len, nlh, nlh->nlmsg_len);
	memset(out + out_len + nlh->nlmsg_len, 0, n - nlh->nlmsg_len);
	out_len += n;
	nlmsg_free(msg);
}

static void put(const char *sub, const char *name)
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
	if (!f || fwrite(out, 1, out_len, f) != out_len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static struct nl_msg *genl(int cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg || !genlmsg_put(msg, 1234, 7, XNIC_FUZZ_FAMILY, 0, flags, cmd,
				 XNIC_GENL_VERSION))
		abort();
	nla_put_u32(msg, XNIC_A_DEV_INDEX, 3);
	nla_put_string(msg, XNIC_A_DEV_NAME, "xnic0");
	return msg;
}

static struct nl_msg *dev_reply(void)
{
	struct nl_msg *msg = genl(XNIC_CMD_DEV_GET, NLM_F_MULTI);

	nla_put_u32(msg, XNIC_A_NODE_ID, 0x0c01);
	nla_put_u64(msg, XNIC_A_NODE_GUID, 0x0200000000000c01ULL);
	nla_put_u8(msg, XNIC_A_PORT_STATE, XNIC_PORT_STATE_ACTIVE);
	nla_put_u32(msg, XNIC_A_NR_LINKS, 2);
	nla_put_u32(msg, XNIC_A_PAYLOAD_MTU, 4096);
	nla_put_string(msg, XNIC_A_DRV_NAME, "xnic");
	nla_put_string(msg, XNIC_A_DRV_VERSION, "0.1.0");
	nla_put_string(msg, XNIC_A_FW_VERSION, "engine 1");
	nla_put_u32(msg, XNIC_A_NR_PEERS, 3);
	return msg;
}

static void link_nest(struct nl_msg *msg, int peers)
{
	struct nlattr *l = nla_nest_start(msg, XNIC_A_LINK), *p;
	int a, i;

	nla_put_string(msg, XNIC_LINK_A_IFNAME, "m0x0y1");
	nla_put_u32(msg, XNIC_LINK_A_IFINDEX, 7);
	nla_put_u8(msg, XNIC_LINK_A_UP, 1);
	nla_put_u8(msg, XNIC_LINK_A_CARRIER, 1);
	nla_put_u32(msg, XNIC_LINK_A_MTU, 9000);
	nla_put_u8(msg, XNIC_LINK_A_STATE, XNIC_LINK_STATE_UP);
	for (a = XNIC_LINK_A_RTT_US; a <= XNIC_LINK_A_THERMAL_CRITS; a++) {
		if (a == XNIC_LINK_A_THERMAL)
			nla_put_u8(msg, a, XNIC_THERMAL_WARN);
		else if (a == XNIC_LINK_A_RTT_US || a == XNIC_LINK_A_JITTER_US ||
			 a == XNIC_LINK_A_FAILOVER_US || a == XNIC_LINK_A_LOSS_PPM ||
			 (a >= XNIC_LINK_A_TEMP_MC && a <= XNIC_LINK_A_TEMP_INJECT_MC))
			nla_put_u32(msg, a, 1000u * a);
		else
			nla_put_u64(msg, a, 1000u * a);
	}
	if (peers) {
		p = nla_nest_start(msg, XNIC_LINK_A_PEERS);
		for (i = 0; i < peers; i++)
			nla_put_u32(msg, XNIC_LINK_A_PEER_NODE, 0x0c02 + i);
		nla_nest_end(msg, p);
	}
	nla_nest_end(msg, l);
}

static void peer_nest(struct nl_msg *msg)
{
	static const unsigned char mac[6] = { 2, 0, 0, 0, 0x0c, 2 };
	struct nlattr *p = nla_nest_start(msg, XNIC_A_PEER);

	nla_put_u32(msg, XNIC_PEER_A_NODE_ID, 0x0c02);
	nla_put_u64(msg, XNIC_PEER_A_NODE_GUID, 0x0200000000000c02ULL);
	nla_put(msg, XNIC_PEER_A_MAC, sizeof(mac), mac);
	nla_put_string(msg, XNIC_PEER_A_IFNAME, "m0x0y1");
	nla_put_u32(msg, XNIC_PEER_A_IFINDEX, 7);
	nla_put_u32(msg, XNIC_PEER_A_LAST_SEEN_MS, 12);
	nla_put_u8(msg, XNIC_PEER_A_PATH_STATE, XNIC_LINK_STATE_DOWN);
	nla_put_u8(msg, XNIC_PEER_A_ANSWERED, 1);
	nla_put_u32(msg, XNIC_PEER_A_RTT_US, 41);
	nla_put_u32(msg, XNIC_PEER_A_DOWN_MS, 1500);
	nla_nest_end(msg, p);
}

/* NLMSG_ERROR: @error, the request's header echoed (capped), TLVs. */
static struct nl_msg *error_msg(int error, int tlvs)
{
	struct nl_msg *msg = nlmsg_alloc_simple(NLMSG_ERROR,
						tlvs ? NLM_F_ACK_TLVS | NLM_F_CAPPED : 0);
	struct nlmsgerr e = { .error = error };
	struct nlattr *pol;

	e.msg.nlmsg_len = 36;
	e.msg.nlmsg_type = XNIC_FUZZ_FAMILY;
	e.msg.nlmsg_seq = 7;
	if (!msg || nlmsg_append(msg, &e, sizeof(e), NLMSG_ALIGNTO))
		abort();
	if (tlvs) {
		nla_put_string(msg, NLMSGERR_ATTR_MSG, "node id 65535 is the broadcast id");
		nla_put_u32(msg, NLMSGERR_ATTR_OFFS, 28);
		pol = nla_nest_start(msg, NLMSGERR_ATTR_POLICY);
		nla_put_u64(msg, NL_POLICY_TYPE_ATTR_MIN_VALUE_U, 0);
		nla_put_u64(msg, NL_POLICY_TYPE_ATTR_MAX_VALUE_U, 65534);
		nla_nest_end(msg, pol);
		nla_put_u32(msg, NLMSGERR_ATTR_MISS_TYPE, XNIC_A_DEV_NAME);
	}
	return msg;
}

static struct nl_msg *done_msg(int error)
{
	struct nl_msg *msg = nlmsg_alloc_simple(NLMSG_DONE,
						error ? NLM_F_ACK_TLVS : 0);

	if (!msg || nlmsg_append(msg, &error, sizeof(error), NLMSG_ALIGNTO))
		abort();
	if (error)
		nla_put_string(msg, NLMSGERR_ATTR_MSG, "no such device");
	return msg;
}

static void xnictl(void)
{
	struct nl_msg *msg;
	struct nlattr *n, *e;
	int j, i;

	for (j = 0; j < 2; j++) {	/* text, then JSON */
		unsigned char f = j ? 0x80 : 0;
		char name[32];

		start(f | 0);
		add(dev_reply());
		add(dev_reply());
		add(done_msg(0));
		put("xnictl", j ? "dev_list_json" : "dev_list");

		for (i = 1; i <= 2; i++) {
			start(f | i);
			add(dev_reply());
			add(error_msg(0, 0));
			snprintf(name, sizeof(name), "dev_style%d%s", i, j ? "_json" : "");
			put("xnictl", name);
		}

		start(f | 3);
		msg = genl(XNIC_CMD_STATS_GET, 0);
		n = nla_nest_start(msg, XNIC_A_STATS);
		for (i = 0; i < 3; i++) {
			e = nla_nest_start(msg, XNIC_A_STATS_ENTRY);
			nla_put_string(msg, XNIC_STAT_A_NAME, i ? "tx_frames" : "rx_\"quoted\"");
			nla_put_u64(msg, XNIC_STAT_A_VALUE, 100 + i);
			nla_nest_end(msg, e);
		}
		nla_nest_end(msg, n);
		add(msg);
		add(error_msg(0, 0));
		put("xnictl", j ? "stats_json" : "stats");

		start(f | 4);
		msg = genl(XNIC_CMD_LINK_GET, NLM_F_MULTI);
		link_nest(msg, 3);
		add(msg);
		msg = genl(XNIC_CMD_LINK_GET, NLM_F_MULTI);
		link_nest(msg, 0);
		add(msg);
		add(done_msg(0));
		put("xnictl", j ? "link_show_json" : "link_show");

		start(f | 5);
		msg = genl(XNIC_CMD_PEER_GET, NLM_F_MULTI);
		peer_nest(msg);
		add(msg);
		add(done_msg(0));
		put("xnictl", j ? "peer_show_json" : "peer_show");

		start(f | 6);
		msg = genl(XNIC_CMD_PARAM_GET, 0);
		n = nla_nest_start(msg, XNIC_A_PARAMS);
		for (i = XNIC_PARAM_A_NODE_ID; i <= XNIC_PARAM_A_MAX; i++)
			nla_put_u32(msg, i, 10 * i);
		nla_nest_end(msg, n);
		add(msg);
		add(error_msg(0, 0));
		put("xnictl", j ? "params_json" : "params");

		start(f | 7);
		add(error_msg(-EINVAL, 1));
		put("xnictl", j ? "error_ext_ack_json" : "error_ext_ack");

		start(f | 0);
		add(done_msg(-ENODEV));
		put("xnictl", j ? "dump_error_json" : "dump_error");

		start(f | 8);
		msg = genl(XNIC_CMD_LINK_NTF, 0);
		nla_put_u8(msg, XNIC_A_EVENT, XNIC_EVENT_LINK_DOWN);
		link_nest(msg, 0);
		add(msg);
		msg = genl(XNIC_CMD_PEER_NTF, 0);
		nla_put_u8(msg, XNIC_A_EVENT, XNIC_EVENT_PEER_JOIN);
		peer_nest(msg);
		add(msg);
		put("xnictl", j ? "monitor_json" : "monitor");
	}
}

static struct nl_msg *cm_msg(int cmd)
{
	struct nl_msg *msg = genl(cmd, 0);

	return msg;
}

static void cm_reply(void)
{
	static const char priv[] = "XPRF private data of a REQ";
	struct nl_msg *msg;
	struct nlattr *n;
	int ev;

	start_raw();
	msg = cm_msg(XNIC_CMD_CM_CONNECT);
	n = nla_nest_start(msg, XNIC_A_CM);
	nla_put_u32(msg, XNIC_CM_A_ID, 42);
	nla_nest_end(msg, n);
	add(msg);
	add(error_msg(0, 0));
	put("cm_reply", "connect");

	start_raw();
	for (ev = XNIC_CM_EVENT_REQ; ev <= XNIC_CM_EVENT_DISCONNECTED; ev++) {
		msg = cm_msg(XNIC_CMD_CM_EVENT);
		n = nla_nest_start(msg, XNIC_A_CM);
		nla_put_u8(msg, XNIC_CM_A_EVENT, ev);
		nla_put_u32(msg, XNIC_CM_A_ID, 42);
		nla_put_u32(msg, XNIC_CM_A_NODE, 0x0c02);
		nla_put_u64(msg, XNIC_CM_A_SERVICE_ID, 0x5850455246000000ULL);
		nla_put_u32(msg, XNIC_CM_A_QPN, 0x11);
		nla_put_u32(msg, XNIC_CM_A_PSN, 0x123456);
		nla_put_u8(msg, XNIC_CM_A_REASON, 1);
		nla_put(msg, XNIC_CM_A_PRIVATE, sizeof(priv), priv);
		nla_nest_end(msg, n);
		add(msg);
	}
	put("cm_reply", "events");

	start_raw();
	msg = cm_msg(XNIC_CMD_CM_LISTEN);
	n = nla_nest_start(msg, XNIC_A_CM);
	nla_put_u64(msg, XNIC_CM_A_SERVICE_ID, 7);
	nla_nest_end(msg, n);
	add(msg);
	add(error_msg(-EADDRINUSE, 1));
	put("cm_reply", "listen_error");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: seeds_nl DIR\n");
		return 2;
	}
	dir = argv[1];
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	xnictl();
	cm_reply();
	return 0;
}
