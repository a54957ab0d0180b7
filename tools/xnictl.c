// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnictl - control and inspect xnic devices, in the manner of ethtool and
 * iproute2, over the "xnic" generic netlink family (uapi/xnic-netlink.h)
 * with libnl-3 and libnl-genl-3. Documentation/xnictl.rst is its manual.
 *
 * Exit status: 0 success; 1 the kernel refused (its extended ACK message
 * is printed as "xnictl: <message>") or netlink failed; 2 bad usage (the
 * message names the bad argument).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "uapi/xnic-netlink.h"
#include "xnic_tool.h"

#define XNICTL_VERSION	"0.1.0"
#define EXIT_KERNEL	1
#define EXIT_USAGE	2
/* Attributes of a request whose position an error may point at. */
#define MAX_REQ_ATTRS	16

static const char *prog = "xnictl";
static bool json, pretty;

/* ------------------------------------------------------------ errors -- */

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", prog);
	exit(EXIT_USAGE);
}

#define fail(...)	xnic_tool_die(EXIT_KERNEL, __VA_ARGS__)

/* ------------------------------------------------------------ params -- */

static const struct param {
	const char *name;
	int attr;
	const char *range;
} params[] = {
	{ "node_id", XNIC_PARAM_A_NODE_ID,
	  "0..65534 (65535 is the broadcast id), only while the device has no QP" },
	{ "idle_us", XNIC_PARAM_A_IDLE_US, "0..10000000" },
	{ "hb_interval_ms", XNIC_PARAM_A_HB_INTERVAL_MS, "1..10000" },
	{ "hb_miss", XNIC_PARAM_A_HB_MISS, "1..255" },
	{ "credit_window", XNIC_PARAM_A_CREDIT_WINDOW, "8..1024" },
	{ "class0_weight", XNIC_PARAM_A_CLASS0_WEIGHT, "1..255" },
	{ "class1_weight", XNIC_PARAM_A_CLASS1_WEIGHT, "1..255" },
	{ "bond_policy", XNIC_PARAM_A_BOND_POLICY,
	  "0 spray, 1 active-backup, 2 flow-hash" },
	{ "peer_timeout_ms", XNIC_PARAM_A_PEER_TIMEOUT_MS, "0..600000" },
	{ "bond_hold_ms", XNIC_PARAM_A_BOND_HOLD_MS, "0..600000" },
	{ "max_peers", XNIC_PARAM_A_MAX_PEERS, "1..65534" },
};

#define NR_PARAMS	(sizeof(params) / sizeof(params[0]))

static const struct param *param_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < NR_PARAMS; i++)
		if (!strcmp(params[i].name, name))
			return &params[i];
	return NULL;
}

static const struct param *param_by_attr(int attr)
{
	size_t i;

	for (i = 0; i < NR_PARAMS; i++)
		if (params[i].attr == attr)
			return &params[i];
	return NULL;
}

static void __attribute__((noreturn)) unknown_param(const char *name)
{
	char list[512] = "";
	size_t i;

	for (i = 0; i < NR_PARAMS; i++) {
		strcat(list, " ");
		strcat(list, params[i].name);
	}
	usage_error("unknown parameter '%s' (known:%s)", name, list);
}

/* ------------------------------------------------------------ JSON -- */

/*
 * A small JSON writer: objects and arrays nest; in pretty mode every
 * member goes on its own line, indented by 4 spaces per level.
 */
static struct {
	int depth;
	bool need_comma[16];
} jw;

static void j_indent(void)
{
	int i;

	if (!pretty)
		return;
	putchar('\n');
	for (i = 0; i < jw.depth; i++)
		fputs("    ", stdout);
}

static void j_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* Start a member (@key in an object, NULL in an array). */
static void j_key(const char *key)
{
	if (jw.depth && jw.need_comma[jw.depth])
		putchar(',');
	if (jw.depth) {
		jw.need_comma[jw.depth] = true;
		j_indent();
	}
	if (key) {
		j_string(key);
		fputs(pretty ? ": " : ":", stdout);
	}
}

static void j_open(const char *key, char c)
{
	j_key(key);
	putchar(c);
	jw.depth++;
	jw.need_comma[jw.depth] = false;
}

static void j_close(char c)
{
	bool empty = !jw.need_comma[jw.depth];

	jw.depth--;
	if (!empty)
		j_indent();
	putchar(c);
	if (!jw.depth) {
		putchar('\n');
		fflush(stdout);
	}
}

static void j_obj(const char *key) { j_open(key, '{'); }
static void j_obj_end(void) { j_close('}'); }
static void j_arr(const char *key) { j_open(key, '['); }
static void j_arr_end(void) { j_close(']'); }

static void j_str(const char *key, const char *val)
{
	j_key(key);
	j_string(val);
}

static void j_u64(const char *key, uint64_t val)
{
	j_key(key);
	printf("%" PRIu64, val);
}

static void j_bool(const char *key, bool val)
{
	j_key(key);
	fputs(val ? "true" : "false", stdout);
}

/* ------------------------------------------------------------ netlink -- */

static struct nl_sock *sk;
static int family;

/* Where the attributes of the request in flight are, for error reports. */
static struct {
	unsigned int off;
	const char *what;
	char value[64];
} req_attr[MAX_REQ_ATTRS];
static int nr_req_attrs;
/* What the request is about, named when the kernel points at no attribute */
static char req_subject[96];

/* State of one request: its replies go to @fn. */
struct req {
	int (*fn)(struct nlattr **tb, void *arg);
	void *arg;
	uint32_t seq;		/* of the request; 0: take any */
	bool done;
	int error;		/* negative errno from the kernel */
	char msg[256];		/* its extended ACK message */
	int bad_attr;		/* req_attr[] it pointed at, or -1 */
	bool has_range;
	uint64_t min, max;
	int miss_type;
};

static void nl_open(void)
{
	int one = 1, fd;

	sk = nl_socket_alloc();
	if (!sk)
		fail("out of memory");
	if (genl_connect(sk))
		fail("cannot open a generic netlink socket: %s",
		     strerror(errno));
	fd = nl_socket_get_fd(sk);
	/* Error messages, without the request echoed back. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	family = genl_ctrl_resolve(sk, XNIC_GENL_NAME);
	if (family < 0)
		fail("generic netlink family '%s' not found: is the xnic module loaded?",
		     XNIC_GENL_NAME);
}

static struct nl_msg *req_new(int cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg ||
	    !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd,
			 XNIC_GENL_VERSION))
		fail("out of memory");
	nr_req_attrs = 0;
	req_subject[0] = '\0';
	return msg;
}

/*
 * Remember where the next attribute of @msg goes, what it is and the value
 * the user gave (or ""), for error reports.
 */
static void req_note(struct nl_msg *msg, const char *what, const char *value)
{
	if (nr_req_attrs == MAX_REQ_ATTRS)
		return;
	req_attr[nr_req_attrs].off = NLMSG_ALIGN(nlmsg_hdr(msg)->nlmsg_len);
	req_attr[nr_req_attrs].what = what;
	snprintf(req_attr[nr_req_attrs].value,
		 sizeof(req_attr[nr_req_attrs].value), "%s", value);
	nr_req_attrs++;
}

static void put_dev(struct nl_msg *msg, const char *dev)
{
	req_note(msg, "device", dev);
	if (nla_put_string(msg, XNIC_A_DEV_NAME, dev))
		fail("out of memory");
}

/*
 * What the kernel's replies carry (uapi/xnic-netlink.h): libnl checks
 * each attribute's size against these (and that a string ends in its
 * NUL) before anything reads it. A message that fails is skipped.
 */
static struct nla_policy xnic_policy[XNIC_A_MAX + 1] = {
	[XNIC_A_DEV_INDEX] = { .type = NLA_U32 },
	[XNIC_A_DEV_NAME] = { .type = NLA_STRING },
	[XNIC_A_NODE_ID] = { .type = NLA_U32 },
	[XNIC_A_NODE_GUID] = { .type = NLA_U64 },
	[XNIC_A_PORT_STATE] = { .type = NLA_U8 },
	[XNIC_A_NR_LINKS] = { .type = NLA_U32 },
	[XNIC_A_PAYLOAD_MTU] = { .type = NLA_U32 },
	[XNIC_A_DRV_NAME] = { .type = NLA_STRING },
	[XNIC_A_DRV_VERSION] = { .type = NLA_STRING },
	[XNIC_A_FW_VERSION] = { .type = NLA_STRING },
	[XNIC_A_NR_PEERS] = { .type = NLA_U32 },
	[XNIC_A_LINK] = { .type = NLA_NESTED },
	[XNIC_A_PEER] = { .type = NLA_NESTED },
	[XNIC_A_PARAMS] = { .type = NLA_NESTED },
	[XNIC_A_STATS] = { .type = NLA_NESTED },
	[XNIC_A_EVENT] = { .type = NLA_U8 },
};

static struct nla_policy link_policy[XNIC_LINK_A_MAX + 1] = {
	[XNIC_LINK_A_IFNAME] = { .type = NLA_STRING },
	[XNIC_LINK_A_IFINDEX] = { .type = NLA_U32 },
	[XNIC_LINK_A_UP] = { .type = NLA_U8 },
	[XNIC_LINK_A_CARRIER] = { .type = NLA_U8 },
	[XNIC_LINK_A_MTU] = { .type = NLA_U32 },
	[XNIC_LINK_A_PEERS] = { .type = NLA_NESTED },
	[XNIC_LINK_A_STATE] = { .type = NLA_U8 },
	[XNIC_LINK_A_RTT_US] = { .type = NLA_U32 },
	[XNIC_LINK_A_JITTER_US] = { .type = NLA_U32 },
	[XNIC_LINK_A_HB_SENT] = { .type = NLA_U64 },
	[XNIC_LINK_A_HB_RCVD] = { .type = NLA_U64 },
	[XNIC_LINK_A_HB_MISSED] = { .type = NLA_U64 },
	[XNIC_LINK_A_CRC_ERRORS] = { .type = NLA_U64 },
	[XNIC_LINK_A_FAILOVERS] = { .type = NLA_U64 },
	[XNIC_LINK_A_TX_FRAMES] = { .type = NLA_U64 },
	[XNIC_LINK_A_TX_BYTES] = { .type = NLA_U64 },
	[XNIC_LINK_A_RX_FRAMES] = { .type = NLA_U64 },
	[XNIC_LINK_A_STATE_CHANGES] = { .type = NLA_U64 },
	[XNIC_LINK_A_FAILOVER_US] = { .type = NLA_U32 },
	[XNIC_LINK_A_LOSS_PPM] = { .type = NLA_U32 },
	[XNIC_LINK_A_RESENT] = { .type = NLA_U64 },
	[XNIC_LINK_A_TEMP_MC] = { .type = NLA_U32 },
	[XNIC_LINK_A_TEMP_WARN_MC] = { .type = NLA_U32 },
	[XNIC_LINK_A_TEMP_CRIT_MC] = { .type = NLA_U32 },
	[XNIC_LINK_A_THERMAL] = { .type = NLA_U8 },
	[XNIC_LINK_A_THERMAL_WARNS] = { .type = NLA_U64 },
	[XNIC_LINK_A_THERMAL_CRITS] = { .type = NLA_U64 },
	[XNIC_LINK_A_TEMP_HYST_MC] = { .type = NLA_U32 },
	[XNIC_LINK_A_TEMP_SOURCE] = { .type = NLA_U8 },
	[XNIC_LINK_A_TEMP_READ_ERRORS] = { .type = NLA_U64 },
};

static struct nla_policy peer_policy[XNIC_PEER_A_MAX + 1] = {
	[XNIC_PEER_A_NODE_ID] = { .type = NLA_U32 },
	[XNIC_PEER_A_NODE_GUID] = { .type = NLA_U64 },
	[XNIC_PEER_A_IFNAME] = { .type = NLA_STRING },
	[XNIC_PEER_A_IFINDEX] = { .type = NLA_U32 },
	[XNIC_PEER_A_LAST_SEEN_MS] = { .type = NLA_U32 },
	[XNIC_PEER_A_PATH_STATE] = { .type = NLA_U8 },
	[XNIC_PEER_A_ANSWERED] = { .type = NLA_U8 },
	[XNIC_PEER_A_RTT_US] = { .type = NLA_U32 },
	[XNIC_PEER_A_DOWN_MS] = { .type = NLA_U32 },
};

static struct nla_policy stat_policy[XNIC_STAT_A_MAX + 1] = {
	[XNIC_STAT_A_NAME] = { .type = NLA_STRING },
	[XNIC_STAT_A_VALUE] = { .type = NLA_U64 },
};

static struct nla_policy ext_ack_policy[NLMSGERR_ATTR_MAX + 1] = {
	[NLMSGERR_ATTR_MSG] = { .type = NLA_STRING },
	[NLMSGERR_ATTR_OFFS] = { .type = NLA_U32 },
	[NLMSGERR_ATTR_POLICY] = { .type = NLA_NESTED },
	[NLMSGERR_ATTR_MISS_TYPE] = { .type = NLA_U32 },
};

static struct nla_policy range_policy[NL_POLICY_TYPE_ATTR_MAX + 1] = {
	[NL_POLICY_TYPE_ATTR_MIN_VALUE_U] = { .type = NLA_U64 },
	[NL_POLICY_TYPE_ATTR_MAX_VALUE_U] = { .type = NLA_U64 },
};

/* Pick up the extended ACK attributes after an error or a dump's end. */
static void req_ext_ack(struct req *r, struct nlattr *tlvs, int len)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct nlattr *pol[NL_POLICY_TYPE_ATTR_MAX + 1];
	unsigned int off;
	int i;

	if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX, tlvs, len,
				  ext_ack_policy))
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(r->msg, sizeof(r->msg), "%s",
			 nla_get_string(tb[NLMSGERR_ATTR_MSG]));
	if (tb[NLMSGERR_ATTR_OFFS]) {
		off = nla_get_u32(tb[NLMSGERR_ATTR_OFFS]);
		for (i = 0; i < nr_req_attrs; i++)
			if (req_attr[i].off == off)
				r->bad_attr = i;
	}
	if (tb[NLMSGERR_ATTR_POLICY] &&
	    !nla_parse_nested(pol, NL_POLICY_TYPE_ATTR_MAX,
			      tb[NLMSGERR_ATTR_POLICY], range_policy) &&
	    pol[NL_POLICY_TYPE_ATTR_MIN_VALUE_U] &&
	    pol[NL_POLICY_TYPE_ATTR_MAX_VALUE_U]) {
		r->has_range = true;
		r->min = nla_get_u64(pol[NL_POLICY_TYPE_ATTR_MIN_VALUE_U]);
		r->max = nla_get_u64(pol[NL_POLICY_TYPE_ATTR_MAX_VALUE_U]);
	}
	if (tb[NLMSGERR_ATTR_MISS_TYPE])
		r->miss_type = (int)nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]);
}

/*
 * NLMSG_ERROR: an ACK (error 0) or the request's error, then, with
 * NLM_F_ACK_TLVS, extended ACK attributes after the echoed request (its
 * header only with NLM_F_CAPPED). @len: payload bytes, at least *@e.
 */
static void req_error(struct req *r, const struct nlmsghdr *nlh,
		      const struct nlmsgerr *e, int len)
{
	int ack_len = sizeof(*e);

	r->done = true;
	if (!e->error)
		return;
	/* A positive error (or one without a negative) is no errno. */
	r->error = e->error < 0 && e->error > -4096 ? e->error : -EPROTO;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < NLMSG_HDRLEN ||
		    e->msg.nlmsg_len - NLMSG_HDRLEN > (uint32_t)(len - ack_len))
			return;
		ack_len += (int)(e->msg.nlmsg_len - NLMSG_HDRLEN);
	}
	req_ext_ack(r, (struct nlattr *)((char *)e + NLMSG_ALIGN(ack_len)),
		    len - (int)NLMSG_ALIGN(ack_len));
}

/*
 * One message of the kernel's answer to request @r, @len bytes at @nlh:
 * NLMSG_ERROR (an ACK, or the request's error and extended ACK) and
 * NLMSG_DONE (a dump's end, with an error perhaps) end the request; any
 * other message is a reply, its attributes checked against xnic_policy
 * and handed to r->fn. What is malformed, too short or of another
 * request (sequence number) is skipped; a malformed NLMSG_ERROR ends the
 * request with EPROTO. Any bytes are safe here: the fuzz target
 * selftests/fuzz/fuzz_xnictl.c feeds it arbitrary ones.
 * Return: NL_STOP when the request is done (or r->fn said stop), else
 * NL_SKIP.
 */
static int req_reply(struct req *r, struct nlmsghdr *nlh, size_t len)
{
	struct nlattr *tb[XNIC_A_MAX + 1];
	int plen;

	if (len < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN ||
	    nlh->nlmsg_len > len || (r->seq && nlh->nlmsg_seq != r->seq))
		return NL_SKIP;
	plen = (int)(nlh->nlmsg_len - NLMSG_HDRLEN);
	switch (nlh->nlmsg_type) {
	case NLMSG_NOOP:
	case NLMSG_OVERRUN:
		return NL_SKIP;
	case NLMSG_ERROR:
		if (plen < (int)sizeof(struct nlmsgerr)) {
			r->done = true;
			r->error = -EPROTO;
		} else {
			req_error(r, nlh, nlmsg_data(nlh), plen);
		}
		return NL_STOP;
	case NLMSG_DONE:
		r->done = true;
		if (plen >= (int)sizeof(int) && *(int *)nlmsg_data(nlh) < 0) {
			r->error = *(int *)nlmsg_data(nlh) > -4096 ?
				   *(int *)nlmsg_data(nlh) : -EPROTO;
			if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
				req_ext_ack(r, (struct nlattr *)
					    ((int *)nlmsg_data(nlh) + 1),
					    plen - (int)sizeof(int));
		}
		return NL_STOP;
	}
	if (genlmsg_parse(nlh, 0, tb, XNIC_A_MAX, xnic_policy))
		return NL_SKIP;
	return r->fn && r->fn(tb, r->arg) ? NL_STOP : NL_SKIP;
}

/* libnl hands every message it receives here first (NL_CB_MSG_IN). */
static int req_msg_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	return req_reply(arg, nlh, nlh->nlmsg_len);
}

/* Print why request @r failed, as "xnictl: <message>". */
static void __attribute__((noreturn)) req_fail(const struct req *r)
{
	char ctx[192] = "", range[64] = "";
	int err = -r->error;

	if (r->has_range)
		snprintf(range, sizeof(range), ": valid range %" PRIu64 "..%" PRIu64,
			 r->min, r->max);
	if (r->bad_attr >= 0)
		snprintf(ctx, sizeof(ctx), " (%s%s%s%s)",
			 req_attr[r->bad_attr].what,
			 req_attr[r->bad_attr].value[0] ? " " : "",
			 req_attr[r->bad_attr].value, range);
	else if (req_subject[0])
		snprintf(ctx, sizeof(ctx), " (%s)", req_subject);

	if (r->msg[0])
		fail("%s%s", r->msg, ctx);
	if (err == EPERM)
		fail("%s: changing xnic settings needs CAP_NET_ADMIN",
		     strerror(err));
	fail("%s%s", strerror(err), ctx);
}

/*
 * Send @msg (freed) and hand every reply to @fn until the kernel's ACK or
 * the end of the dump. Exits with the kernel's error on failure.
 */
static void req_run(struct nl_msg *msg, int (*fn)(struct nlattr **, void *),
		    void *arg)
{
	struct req r = { .fn = fn, .arg = arg, .bad_attr = -1 };
	struct nl_cb *cb;
	int err;

	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		fail("out of memory");
	/* Every message to req_reply(), before libnl's own handling. */
	nl_cb_set(cb, NL_CB_MSG_IN, NL_CB_CUSTOM, req_msg_cb, &r);

	err = nl_send_auto(sk, msg);
	r.seq = nlmsg_hdr(msg)->nlmsg_seq;
	nlmsg_free(msg);
	if (err < 0)
		fail("cannot send a netlink request: %s", nl_geterror(err));
	while (!r.done) {
		err = nl_recvmsgs(sk, cb);
		if (err < 0 && !r.done)
			fail("netlink: %s", nl_geterror(err));
	}
	nl_cb_put(cb);
	if (r.error)
		req_fail(&r);
}

/* ------------------------------------------------------------ output -- */

static const char *port_state_name(unsigned int s)
{
	switch (s) {
	case XNIC_PORT_STATE_ACTIVE:
		return "ACTIVE";
	case XNIC_PORT_STATE_DOWN:
		return "DOWN";
	default:
		return "UNKNOWN";
	}
}

static void fmt_guid(char *buf, size_t len, uint64_t g)
{
	snprintf(buf, len, "%04x:%04x:%04x:%04x",
		 (unsigned int)(g >> 48) & 0xffff,
		 (unsigned int)(g >> 32) & 0xffff,
		 (unsigned int)(g >> 16) & 0xffff, (unsigned int)g & 0xffff);
}

static void fmt_mac(char *buf, size_t len, const struct nlattr *a)
{
	const uint8_t *m = nla_data(a);

	if (nla_len(a) != 6) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
}

static const char *str_attr(struct nlattr *a)
{
	return a ? nla_get_string(a) : "";
}

static uint64_t u32_attr(struct nlattr *a)
{
	return a ? nla_get_u32(a) : 0;
}

/* Output shape of the device commands. */
enum dev_style { DEV_LIST, DEV_SHOW, DEV_INFO };

static int dev_cb(struct nlattr **tb, void *arg)
{
	enum dev_style style = *(enum dev_style *)arg;
	const char *name = str_attr(tb[XNIC_A_DEV_NAME]);
	const char *state = port_state_name(tb[XNIC_A_PORT_STATE] ?
					    nla_get_u8(tb[XNIC_A_PORT_STATE]) : 0);
	uint64_t guid = tb[XNIC_A_NODE_GUID] ?
			nla_get_u64(tb[XNIC_A_NODE_GUID]) : 0;
	char g[32];

	fmt_guid(g, sizeof(g), guid);
	if (style == DEV_INFO) {
		if (json) {
			j_obj(NULL);
			j_str("dev", name);
			j_str("driver", str_attr(tb[XNIC_A_DRV_NAME]));
			j_str("version", str_attr(tb[XNIC_A_DRV_VERSION]));
			j_str("firmware-version",
			      str_attr(tb[XNIC_A_FW_VERSION]));
			j_str("bus-info", "");
			j_bool("supports-statistics", true);
			j_obj_end();
		} else {
			printf("driver: %s\n", str_attr(tb[XNIC_A_DRV_NAME]));
			printf("version: %s\n",
			       str_attr(tb[XNIC_A_DRV_VERSION]));
			printf("firmware-version: %s\n",
			       str_attr(tb[XNIC_A_FW_VERSION]));
			printf("bus-info: \n");
			printf("supports-statistics: yes\n");
		}
		return 0;
	}
	if (json) {
		j_obj(NULL);
		j_str("dev", name);
		j_u64("index", u32_attr(tb[XNIC_A_DEV_INDEX]));
		j_u64("node_id", u32_attr(tb[XNIC_A_NODE_ID]));
		j_str("node_guid", g);
		j_str("port_state", state);
		j_u64("links", u32_attr(tb[XNIC_A_NR_LINKS]));
		j_u64("peers", u32_attr(tb[XNIC_A_NR_PEERS]));
		j_u64("payload_mtu", u32_attr(tb[XNIC_A_PAYLOAD_MTU]));
		if (style == DEV_SHOW) {
			j_str("driver", str_attr(tb[XNIC_A_DRV_NAME]));
			j_str("version", str_attr(tb[XNIC_A_DRV_VERSION]));
			j_str("firmware_version",
			      str_attr(tb[XNIC_A_FW_VERSION]));
		}
		j_obj_end();
	} else if (style == DEV_LIST) {
		printf("%s: index %" PRIu64 " node_id %" PRIu64
		       " node_guid %s port_state %s links %" PRIu64
		       " peers %" PRIu64 " payload_mtu %" PRIu64 "\n",
		       name, u32_attr(tb[XNIC_A_DEV_INDEX]),
		       u32_attr(tb[XNIC_A_NODE_ID]), g, state,
		       u32_attr(tb[XNIC_A_NR_LINKS]),
		       u32_attr(tb[XNIC_A_NR_PEERS]),
		       u32_attr(tb[XNIC_A_PAYLOAD_MTU]));
	} else {
		printf("%s:\n", name);
		printf("\tindex: %" PRIu64 "\n", u32_attr(tb[XNIC_A_DEV_INDEX]));
		printf("\tnode_id: %" PRIu64 "\n", u32_attr(tb[XNIC_A_NODE_ID]));
		printf("\tnode_guid: %s\n", g);
		printf("\tport_state: %s\n", state);
		printf("\tlinks: %" PRIu64 "\n", u32_attr(tb[XNIC_A_NR_LINKS]));
		printf("\tpeers: %" PRIu64 "\n", u32_attr(tb[XNIC_A_NR_PEERS]));
		printf("\tpayload_mtu: %" PRIu64 "\n",
		       u32_attr(tb[XNIC_A_PAYLOAD_MTU]));
		printf("\tdriver: %s\n", str_attr(tb[XNIC_A_DRV_NAME]));
		printf("\tversion: %s\n", str_attr(tb[XNIC_A_DRV_VERSION]));
		printf("\tfirmware_version: %s\n",
		       str_attr(tb[XNIC_A_FW_VERSION]));
	}
	return 0;
}

/* `xnictl`, `xnictl show [DEV]`, `xnictl -i DEV` */
static void cmd_dev(const char *dev, enum dev_style style)
{
	struct nl_msg *msg;

	msg = req_new(XNIC_CMD_DEV_GET, dev ? 0 : NLM_F_DUMP);
	if (dev)
		put_dev(msg, dev);
	if (json)
		j_arr(NULL);
	req_run(msg, dev_cb, &style);
	if (json)
		j_arr_end();
}

static int stats_cb(struct nlattr **tb, void *arg)
{
	struct nlattr *e[XNIC_STAT_A_MAX + 1], *a;
	const char *name = str_attr(tb[XNIC_A_DEV_NAME]);
	int rem;

	(void)arg;
	if (json) {
		j_obj(NULL);
		j_str("dev", name);
		j_obj("statistics");
	} else {
		printf("%s statistics:\n", name);
	}
	if (tb[XNIC_A_STATS]) {
		nla_for_each_nested(a, tb[XNIC_A_STATS], rem) {
			if (nla_type(a) != XNIC_A_STATS_ENTRY ||
			    nla_parse_nested(e, XNIC_STAT_A_MAX, a, stat_policy) ||
			    !e[XNIC_STAT_A_NAME] || !e[XNIC_STAT_A_VALUE])
				continue;
			if (json)
				j_u64(nla_get_string(e[XNIC_STAT_A_NAME]),
				      nla_get_u64(e[XNIC_STAT_A_VALUE]));
			else
				printf("     %s: %" PRIu64 "\n",
				       nla_get_string(e[XNIC_STAT_A_NAME]),
				       nla_get_u64(e[XNIC_STAT_A_VALUE]));
		}
	}
	if (json) {
		j_obj_end();
		j_obj_end();
	}
	return 0;
}

/* `xnictl -S DEV` */
static void cmd_stats(const char *dev)
{
	struct nl_msg *msg = req_new(XNIC_CMD_STATS_GET, 0);

	put_dev(msg, dev);
	if (json)
		j_arr(NULL);
	req_run(msg, stats_cb, NULL);
	if (json)
		j_arr_end();
}

static const char *bond_state_name(struct nlattr *a)
{
	return xnic_bond_state_name(a ? nla_get_u8(a) :
				    XNIC_LINK_STATE_UNSPEC);
}

static uint64_t u64_attr(struct nlattr *a)
{
	return a ? nla_get_u64(a) : 0;
}

/* Bond state and health of a link: name, attribute, 64 bit. */
static const struct {
	const char *name;
	int attr;
	bool wide;
} link_health[] = {
	{ "rtt_us", XNIC_LINK_A_RTT_US, false },
	{ "jitter_us", XNIC_LINK_A_JITTER_US, false },
	{ "loss_ppm", XNIC_LINK_A_LOSS_PPM, false },
	{ "hb_sent", XNIC_LINK_A_HB_SENT, true },
	{ "hb_rcvd", XNIC_LINK_A_HB_RCVD, true },
	{ "hb_missed", XNIC_LINK_A_HB_MISSED, true },
	{ "crc_errors", XNIC_LINK_A_CRC_ERRORS, true },
	{ "failovers", XNIC_LINK_A_FAILOVERS, true },
	{ "failover_us", XNIC_LINK_A_FAILOVER_US, false },
	{ "resent", XNIC_LINK_A_RESENT, true },
	{ "state_changes", XNIC_LINK_A_STATE_CHANGES, true },
	{ "tx_frames", XNIC_LINK_A_TX_FRAMES, true },
	{ "tx_bytes", XNIC_LINK_A_TX_BYTES, true },
	{ "rx_frames", XNIC_LINK_A_RX_FRAMES, true },
	{ "temp_warn_mc", XNIC_LINK_A_TEMP_WARN_MC, false },
	{ "temp_crit_mc", XNIC_LINK_A_TEMP_CRIT_MC, false },
	{ "temp_hyst_mc", XNIC_LINK_A_TEMP_HYST_MC, false },
	{ "thermal_warns", XNIC_LINK_A_THERMAL_WARNS, true },
	{ "thermal_crits", XNIC_LINK_A_THERMAL_CRITS, true },
	{ "temp_read_errors", XNIC_LINK_A_TEMP_READ_ERRORS, true },
};

/* enum xnic_temp_source */
static const char *temp_source_name(struct nlattr *a)
{
	static const char *const names[] = {
		"none", "hwmon", "module", "injected"
	};
	unsigned int t = a ? nla_get_u8(a) : 0;

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

static const char *thermal_name(struct nlattr *a)
{
	static const char *const names[] = { "ok", "warn", "crit" };
	unsigned int t = a ? nla_get_u8(a) : 0;

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

static uint64_t health_val(struct nlattr **l, size_t i)
{
	struct nlattr *a = l[link_health[i].attr];

	return link_health[i].wide ? u64_attr(a) : u32_attr(a);
}

/* An entry of XNIC_LINK_A_PEERS that is a node id. */
static bool is_peer_node(const struct nlattr *a)
{
	return nla_type(a) == XNIC_LINK_A_PEER_NODE &&
	       nla_len(a) >= (int)sizeof(uint32_t);
}

/* One link, for `link show` and for `monitor`. */
static void print_link(struct nlattr **tb, const char *event)
{
	size_t i;
	struct nlattr *l[XNIC_LINK_A_MAX + 1], *a;
	const char *name = str_attr(tb[XNIC_A_DEV_NAME]);
	bool up, carrier;
	int rem, n = 0;

	if (!tb[XNIC_A_LINK] ||
	    nla_parse_nested(l, XNIC_LINK_A_MAX, tb[XNIC_A_LINK],
			     link_policy))
		return;
	up = l[XNIC_LINK_A_UP] && nla_get_u8(l[XNIC_LINK_A_UP]);
	carrier = l[XNIC_LINK_A_CARRIER] && nla_get_u8(l[XNIC_LINK_A_CARRIER]);
	if (json) {
		j_obj(NULL);
		j_str("dev", name);
		if (event)
			j_str("event", event);
		j_str("netdev", str_attr(l[XNIC_LINK_A_IFNAME]));
		j_u64("ifindex", u32_attr(l[XNIC_LINK_A_IFINDEX]));
		j_str("state", up ? "up" : "down");
		j_bool("carrier", carrier);
		j_u64("mtu", u32_attr(l[XNIC_LINK_A_MTU]));
		j_str("bond_state", bond_state_name(l[XNIC_LINK_A_STATE]));
		j_str("thermal", thermal_name(l[XNIC_LINK_A_THERMAL]));
		j_str("temp_source", temp_source_name(l[XNIC_LINK_A_TEMP_SOURCE]));
		if (l[XNIC_LINK_A_TEMP_MC]) {
			j_key("temp_mc");
			printf("%d", (int)nla_get_u32(l[XNIC_LINK_A_TEMP_MC]));
		}
		for (i = 0; i < sizeof(link_health) / sizeof(link_health[0]);
		     i++)
			j_u64(link_health[i].name, health_val(l, i));
		if (!event) {
			j_arr("peers");
			if (l[XNIC_LINK_A_PEERS])
				nla_for_each_nested(a, l[XNIC_LINK_A_PEERS],
						    rem)
					if (is_peer_node(a))
						j_u64(NULL, nla_get_u32(a));
			j_arr_end();
		}
		j_obj_end();
		return;
	}
	if (event)
		printf("%s: %s ", name, event);
	else
		printf("%s ", name);
	printf("%s: ifindex %" PRIu64 " state %s carrier %s mtu %" PRIu64,
	       str_attr(l[XNIC_LINK_A_IFNAME]), u32_attr(l[XNIC_LINK_A_IFINDEX]),
	       up ? "up" : "down", carrier ? "on" : "off",
	       u32_attr(l[XNIC_LINK_A_MTU]));
	if (!event) {
		fputs(" peers ", stdout);
		if (l[XNIC_LINK_A_PEERS])
			nla_for_each_nested(a, l[XNIC_LINK_A_PEERS], rem)
				if (is_peer_node(a))
					printf("%s%u", n++ ? "," : "",
					       nla_get_u32(a));
		if (!n)
			putchar('-');
	}
	printf("\n    bond %s", bond_state_name(l[XNIC_LINK_A_STATE]));
	for (i = 0; i < sizeof(link_health) / sizeof(link_health[0]); i++)
		printf(" %s %" PRIu64, link_health[i].name, health_val(l, i));
	printf("\n    thermal %s temp ", thermal_name(l[XNIC_LINK_A_THERMAL]));
	if (l[XNIC_LINK_A_TEMP_MC])
		printf("%.1fC source %s\n",
		       (int)nla_get_u32(l[XNIC_LINK_A_TEMP_MC]) / 1000.0,
		       temp_source_name(l[XNIC_LINK_A_TEMP_SOURCE]));
	else
		puts("- no sensor");
}


static uint32_t parse_u32(const char *what, const char *s);
static int32_t parse_s32(const char *what, const char *s);

/* The u32 a `link set` KEY VALUE puts, or a usage error. */
static uint32_t link_set_value(const char *k, const char *v)
{
	if (strcmp(k, "temp_inject_mc"))
		return parse_u32(k, v);
	if (!strcmp(v, "off"))
		return (uint32_t)XNIC_TEMP_INJECT_OFF;
	return (uint32_t)parse_s32(k, v);
}

/* `link set` keys and values, checked before any netlink traffic. */
static void check_link_set(int argc, char **argv)
{
	int i;

	if (!argc)
		usage_error("link set: missing KEY VALUE");
	for (i = 0; i < argc; i += 2) {
		if (strcmp(argv[i], "temp_warn_mc") &&
		    strcmp(argv[i], "temp_crit_mc") &&
		    strcmp(argv[i], "temp_hyst_mc") &&
		    strcmp(argv[i], "temp_inject_mc"))
			usage_error("link set: unknown key '%s' (known: temp_warn_mc temp_crit_mc temp_hyst_mc temp_inject_mc)",
				    argv[i]);
		if (i + 1 >= argc)
			usage_error("link set: missing value for '%s'",
				    argv[i]);
		link_set_value(argv[i], argv[i + 1]);
	}
}

/* `link add|del|set DEV NETDEV [KEY VALUE]...` */
static void cmd_link_mod(int cmd, const char *dev, const char *netdev,
			 int argc, char **argv)
{
	struct nl_msg *msg = req_new(cmd, 0);
	struct nlattr *nest;

	put_dev(msg, dev);
	req_note(msg, "member link", "");
	nest = nla_nest_start(msg, XNIC_A_LINK | NLA_F_NESTED);
	if (!nest)
		fail("out of memory");
	req_note(msg, "netdev", netdev);
	snprintf(req_subject, sizeof(req_subject), "netdev %s", netdev);
	if (nla_put_string(msg, XNIC_LINK_A_IFNAME, netdev))
		fail("out of memory");
	for (; cmd == XNIC_CMD_LINK_SET && argc >= 2; argc -= 2, argv += 2) {
		const char *k = argv[0], *v = argv[1];
		int attr = !strcmp(k, "temp_warn_mc") ? XNIC_LINK_A_TEMP_WARN_MC :
			   !strcmp(k, "temp_crit_mc") ? XNIC_LINK_A_TEMP_CRIT_MC :
			   !strcmp(k, "temp_hyst_mc") ? XNIC_LINK_A_TEMP_HYST_MC :
			   XNIC_LINK_A_TEMP_INJECT_MC;

		req_note(msg, k, v);
		if (nla_put_u32(msg, attr, link_set_value(k, v)))
			fail("out of memory");
	}
	nla_nest_end(msg, nest);
	req_run(msg, NULL, NULL);
}

/* One peer path, for `peer show` and for `monitor`. */
static void print_peer(struct nlattr **tb, const char *event)
{
	struct nlattr *p[XNIC_PEER_A_MAX + 1];
	const char *name = str_attr(tb[XNIC_A_DEV_NAME]);
	char g[32], mac[32] = "";

	if (!tb[XNIC_A_PEER] ||
	    nla_parse_nested(p, XNIC_PEER_A_MAX, tb[XNIC_A_PEER],
			     peer_policy))
		return;
	fmt_guid(g, sizeof(g), p[XNIC_PEER_A_NODE_GUID] ?
		 nla_get_u64(p[XNIC_PEER_A_NODE_GUID]) : 0);
	if (p[XNIC_PEER_A_MAC])
		fmt_mac(mac, sizeof(mac), p[XNIC_PEER_A_MAC]);
	if (json) {
		j_obj(NULL);
		j_str("dev", name);
		if (event)
			j_str("event", event);
		j_u64("node_id", u32_attr(p[XNIC_PEER_A_NODE_ID]));
		j_str("node_guid", g);
		if (p[XNIC_PEER_A_MAC])
			j_str("mac", mac);
		if (p[XNIC_PEER_A_IFNAME])
			j_str("netdev", str_attr(p[XNIC_PEER_A_IFNAME]));
		if (p[XNIC_PEER_A_IFINDEX])
			j_u64("ifindex", u32_attr(p[XNIC_PEER_A_IFINDEX]));
		if (p[XNIC_PEER_A_LAST_SEEN_MS])
			j_u64("last_seen_ms",
			      u32_attr(p[XNIC_PEER_A_LAST_SEEN_MS]));
		if (p[XNIC_PEER_A_PATH_STATE])
			j_str("state", xnic_bond_state_name(
			      nla_get_u8(p[XNIC_PEER_A_PATH_STATE])));
		if (p[XNIC_PEER_A_ANSWERED])
			j_bool("answered", nla_get_u8(p[XNIC_PEER_A_ANSWERED]));
		if (p[XNIC_PEER_A_RTT_US])
			j_u64("rtt_us", u32_attr(p[XNIC_PEER_A_RTT_US]));
		if (p[XNIC_PEER_A_DOWN_MS])
			j_u64("down_ms", u32_attr(p[XNIC_PEER_A_DOWN_MS]));
		j_obj_end();
		return;
	}
	if (event)
		printf("%s: %s ", name, event);
	else
		printf("%s ", name);
	printf("node %" PRIu64 ": node_guid %s", u32_attr(p[XNIC_PEER_A_NODE_ID]),
	       g);
	if (p[XNIC_PEER_A_MAC])
		printf(" mac %s", mac);
	if (p[XNIC_PEER_A_IFNAME])
		printf(" netdev %s", str_attr(p[XNIC_PEER_A_IFNAME]));
	if (p[XNIC_PEER_A_IFINDEX])
		printf(" ifindex %" PRIu64, u32_attr(p[XNIC_PEER_A_IFINDEX]));
	if (p[XNIC_PEER_A_LAST_SEEN_MS])
		printf(" last_seen_ms %" PRIu64,
		       u32_attr(p[XNIC_PEER_A_LAST_SEEN_MS]));
	if (p[XNIC_PEER_A_PATH_STATE])
		printf(" state %s",
		       xnic_bond_state_name(nla_get_u8(p[XNIC_PEER_A_PATH_STATE])));
	if (p[XNIC_PEER_A_ANSWERED] && nla_get_u8(p[XNIC_PEER_A_ANSWERED]))
		printf(" answered");
	if (p[XNIC_PEER_A_RTT_US])
		printf(" rtt_us %" PRIu64, u32_attr(p[XNIC_PEER_A_RTT_US]));
	if (p[XNIC_PEER_A_DOWN_MS])
		printf(" down_ms %" PRIu64, u32_attr(p[XNIC_PEER_A_DOWN_MS]));
	putchar('\n');
}

typedef void (*print_fn)(struct nlattr **tb, const char *event);

static int dump_cb(struct nlattr **tb, void *arg)
{
	(*(print_fn *)arg)(tb, NULL);
	return 0;
}

/* `link show` and `peer show`: dump CMD (of DEV, or of every device). */
static void cmd_dump_show(int cmd, const char *dev, print_fn print)
{
	struct nl_msg *msg = req_new(cmd, NLM_F_DUMP);

	if (dev)
		put_dev(msg, dev);
	if (json)
		j_arr(NULL);
	req_run(msg, dump_cb, &print);
	if (json)
		j_arr_end();
}


static int param_cb(struct nlattr **tb, void *arg)
{
	const struct param *only = arg, *pa;
	struct nlattr *a;
	int rem;

	if (json) {
		j_obj(NULL);
		j_str("dev", str_attr(tb[XNIC_A_DEV_NAME]));
	}
	if (tb[XNIC_A_PARAMS]) {
		nla_for_each_nested(a, tb[XNIC_A_PARAMS], rem) {
			pa = param_by_attr(nla_type(a));
			if (!pa || (only && only != pa) ||
			    nla_len(a) != sizeof(uint32_t))
				continue;
			if (json)
				j_u64(pa->name, nla_get_u32(a));
			else
				printf("%s: %u\n", pa->name, nla_get_u32(a));
		}
	}
	if (json)
		j_obj_end();
	return 0;
}

/* `xnictl get DEV [KEY]` */
static void cmd_get(const char *dev, const char *key)
{
	const struct param *only = NULL;
	struct nl_msg *msg;

	if (key) {
		only = param_by_name(key);
		if (!only)
			unknown_param(key);
	}
	msg = req_new(XNIC_CMD_PARAM_GET, 0);
	put_dev(msg, dev);
	if (json)
		j_arr(NULL);
	req_run(msg, param_cb, (void *)only);
	if (json)
		j_arr_end();
}

/* Decimal, or hexadecimal after 0x (a leading 0 does not mean octal). */
static uint32_t parse_u32(const char *what, const char *s)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	int first = (unsigned char)s[hex ? 2 : 0];
	unsigned long long v;
	char *end;

	errno = 0;
	if (hex ? !isxdigit(first) : !isdigit(first))
		usage_error("invalid value '%s' for %s: expected a number",
			    s, what);
	v = strtoull(s, &end, hex ? 16 : 10);
	if (*end)
		usage_error("invalid value '%s' for %s: expected a number",
			    s, what);
	if (errno || v > UINT32_MAX)
		usage_error("invalid value '%s' for %s: larger than %u", s,
			    what, UINT32_MAX);
	return (uint32_t)v;
}

/* Signed decimal. */
static int32_t parse_s32(const char *what, const char *s)
{
	long long v;
	char *end;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (!*s || *end || errno || v < INT32_MIN || v > INT32_MAX)
		usage_error("invalid value '%s' for %s: expected a number",
			    s, what);
	return (int32_t)v;
}

/* `xnictl set DEV KEY VALUE [KEY VALUE]...` */
static void cmd_set(const char *dev, int argc, char **argv)
{
	const struct param *pa;
	struct nl_msg *msg;
	struct nlattr *nest;
	uint32_t v;
	int i;

	if (!argc)
		usage_error("set: missing KEY VALUE after '%s'", dev);
	msg = req_new(XNIC_CMD_PARAM_SET, 0);
	put_dev(msg, dev);
	req_note(msg, "parameters", "");
	nest = nla_nest_start(msg, XNIC_A_PARAMS | NLA_F_NESTED);
	if (!nest)
		fail("out of memory");
	for (i = 0; i < argc; i += 2) {
		pa = param_by_name(argv[i]);
		if (!pa)
			unknown_param(argv[i]);
		if (i + 1 >= argc)
			usage_error("set: missing value for '%s'", argv[i]);
		v = parse_u32(argv[i], argv[i + 1]);
		req_note(msg, pa->name, argv[i + 1]);
		if (nla_put_u32(msg, pa->attr, v))
			fail("out of memory");
	}
	nla_nest_end(msg, nest);
	req_run(msg, NULL, NULL);
}

/* ------------------------------------------------------------ monitor -- */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const char *event_name(int ev)
{
	switch (ev) {
	case XNIC_EVENT_LINK_UP:
		return "link_up";
	case XNIC_EVENT_LINK_DOWN:
		return "link_down";
	case XNIC_EVENT_LINK_ADDED:
		return "link_added";
	case XNIC_EVENT_LINK_REMOVED:
		return "link_removed";
	case XNIC_EVENT_PEER_JOIN:
		return "peer_join";
	case XNIC_EVENT_PEER_LEAVE:
		return "peer_leave";
	case XNIC_EVENT_LINK_DEGRADED:
		return "link_degraded";
	default:
		return "unknown";
	}
}

/*
 * One event message: a link's or a peer's, printed; anything else or
 * malformed skipped (as req_reply(); libnl checked @nlh's length).
 */
static int event_reply(struct nlmsghdr *nlh)
{
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *tb[XNIC_A_MAX + 1];
	const char *ev;

	if (genlmsg_parse(nlh, 0, tb, XNIC_A_MAX, xnic_policy))
		return NL_SKIP;
	ev = event_name(tb[XNIC_A_EVENT] ? nla_get_u8(tb[XNIC_A_EVENT]) : 0);
	if (gh->cmd == XNIC_CMD_LINK_NTF)
		print_link(tb, ev);
	else if (gh->cmd == XNIC_CMD_PEER_NTF)
		print_peer(tb, ev);
	fflush(stdout);
	return NL_OK;
}

static int monitor_cb(struct nl_msg *msg, void *arg)
{
	(void)arg;
	return event_reply(nlmsg_hdr(msg));
}

/* `xnictl monitor`: print events until SIGINT or SIGTERM. */
static void cmd_monitor(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct pollfd pfd;
	int grp, err;

	grp = genl_ctrl_resolve_grp(sk, XNIC_GENL_NAME, XNIC_GENL_MCGRP_EVENTS);
	if (grp < 0)
		fail("multicast group '%s' not found: %s",
		     XNIC_GENL_MCGRP_EVENTS, nl_geterror(grp));
	nl_socket_disable_seq_check(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, monitor_cb, NULL);
	err = nl_socket_add_membership(sk, grp);
	if (err < 0)
		fail("cannot join multicast group '%s': %s",
		     XNIC_GENL_MCGRP_EVENTS, nl_geterror(err));
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!json)
		fprintf(stderr, "%s: monitoring xnic events (Ctrl-C stops)\n",
			prog);

	pfd.fd = nl_socket_get_fd(sk);
	pfd.events = POLLIN;
	while (!stop) {
		if (poll(&pfd, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			fail("poll: %s", strerror(errno));
		}
		err = nl_recvmsgs_default(sk);
		if (err < 0 && err != -NLE_INTR)
			fail("netlink: %s", nl_geterror(err));
	}
}

/* ------------------------------------------------------------ main -- */

static void usage(void)
{
	size_t i;

	printf("Usage: %s [OPTIONS] [COMMAND]\n"
	       "Control and inspect xnic RDMA devices.\n\n"
	       "Commands:\n"
	       "  (none)                      list the xnic devices\n"
	       "  show [DEV]                  device details\n"
	       "  -S, --statistics DEV        device counters\n"
	       "  -i, --driver DEV            driver information\n"
	       "  link show [DEV]             member links\n"
	       "  link add DEV NETDEV...      add member links\n"
	       "  link del DEV NETDEV...      remove member links (not the last)\n"
	       "  link set DEV NETDEV KEY VALUE...\n"
	       "                              temp_warn_mc, temp_crit_mc (0: off);\n"
	       "                              temp_hyst_mc (0..50000, default 2000);\n"
	       "                              temp_inject_mc MC|off (tests only)\n"
	       "  peer show [DEV]             peer table\n"
	       "  get DEV [KEY]               parameters\n"
	       "  set DEV KEY VALUE...        change parameters\n"
	       "  monitor                     print link and peer events until Ctrl-C\n\n"
	       "Options:\n"
	       "  -j, --json                  JSON output\n"
	       "  -p, --pretty                indented JSON output (implies -j)\n"
	       "  -h, --help                  this text\n"
	       "  -V, --version               print the version\n\n"
	       "Parameters (KEY):\n", prog);
	for (i = 0; i < NR_PARAMS; i++)
		printf("  %-16s %s\n", params[i].name, params[i].range);
	printf("\nExit status: 0 success, 1 the kernel refused (its reason is printed),\n"
	       "2 bad usage. Changing anything needs CAP_NET_ADMIN.\n");
}

/* Fail unless exactly @min..@max arguments are left. */
static void want_args(const char *cmd, int argc, char **argv, int min,
		      int max, const char *what)
{
	if (argc < min)
		usage_error("%s: missing %s", cmd, what);
	if (argc > max)
		usage_error("%s: unexpected argument '%s'", cmd, argv[max]);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "statistics", required_argument, NULL, 'S' },
		{ "driver", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	const char *stats_dev = NULL, *info_dev = NULL, *cmd;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:jpS:i:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'p':
			json = pretty = true;
			break;
		case 'S':
			stats_dev = optarg;
			break;
		case 'i':
			info_dev = optarg;
			break;
		case 'h':
			usage();
			return 0;
		case 'V':
			printf("%s %s\n", prog, XNICTL_VERSION);
			return 0;
		case ':':
			usage_error("option '%s' needs a device name",
				    argv[optind - 1]);
		default:
			if (optopt)
				usage_error("unknown option '-%c'", optopt);
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	argc -= optind;
	argv += optind;

	if (stats_dev || info_dev) {
		if (stats_dev && info_dev)
			usage_error("-S and -i cannot be used together");
		if (argc)
			usage_error("unexpected argument '%s'", argv[0]);
		nl_open();
		if (stats_dev)
			cmd_stats(stats_dev);
		else
			cmd_dev(info_dev, DEV_INFO);
		return 0;
	}
	if (!argc) {
		nl_open();
		cmd_dev(NULL, DEV_LIST);
		return 0;
	}

	cmd = argv[0];
	argc--;
	argv++;
	if (!strcmp(cmd, "show")) {
		want_args(cmd, argc, argv, 0, 1, "");
		nl_open();
		cmd_dev(argc ? argv[0] : NULL, DEV_SHOW);
	} else if (!strcmp(cmd, "link") || !strcmp(cmd, "peer")) {
		const char *sub = argc ? argv[0] : "show";
		bool link = !strcmp(cmd, "link");

		if (argc) {
			argc--;
			argv++;
		}
		if (!strcmp(sub, "show") || !strcmp(sub, "list")) {
			want_args(cmd, argc, argv, 0, 1, "");
			nl_open();
			cmd_dump_show(link ? XNIC_CMD_LINK_GET : XNIC_CMD_PEER_GET,
				      argc ? argv[0] : NULL,
				      link ? print_link : print_peer);
		} else if (link && (!strcmp(sub, "add") || !strcmp(sub, "del") ||
				    !strcmp(sub, "delete"))) {
			int c = !strcmp(sub, "add") ? XNIC_CMD_LINK_ADD :
						      XNIC_CMD_LINK_DEL, k;

			want_args("link", argc, argv, 2, INT_MAX,
				  argc ? "NETDEV" : "DEV and NETDEV");
			nl_open();
			/* in order; the first refused ends the run */
			for (k = 1; k < argc; k++)
				cmd_link_mod(c, argv[0], argv[k], 0, NULL);
		} else if (link && !strcmp(sub, "set")) {
			want_args("link", argc, argv, 2, INT_MAX,
				  argc ? "NETDEV" : "DEV and NETDEV");
			check_link_set(argc - 2, argv + 2);
			nl_open();
			cmd_link_mod(XNIC_CMD_LINK_SET, argv[0], argv[1],
				     argc - 2, argv + 2);
		} else {
			usage_error("%s: unknown subcommand '%s'", cmd, sub);
		}
	} else if (!strcmp(cmd, "get")) {
		want_args(cmd, argc, argv, 1, 2, "DEV");
		nl_open();
		cmd_get(argv[0], argc > 1 ? argv[1] : NULL);
	} else if (!strcmp(cmd, "set")) {
		want_args(cmd, argc, argv, 1, INT_MAX, "DEV");
		if (!argc || argc == 1)
			usage_error("set: missing KEY VALUE");
		/* Usage errors before any netlink traffic. */
		for (c = 1; c < argc; c += 2) {
			if (!param_by_name(argv[c]))
				unknown_param(argv[c]);
			if (c + 1 >= argc)
				usage_error("set: missing value for '%s'",
					    argv[c]);
			parse_u32(argv[c], argv[c + 1]);
		}
		nl_open();
		cmd_set(argv[0], argc - 1, argv + 1);
	} else if (!strcmp(cmd, "monitor")) {
		want_args(cmd, argc, argv, 0, 0, "");
		nl_open();
		cmd_monitor();
	} else {
		usage_error("unknown command '%s'", cmd);
	}
	if (sk)
		nl_socket_free(sk);
	return 0;
}
