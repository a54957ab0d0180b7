// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic_lib - helpers shared by the datapath selftests; see xnic_lib.h.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "rdma_nl.h"
#include "xnic_lib.h"
#include "priv.h"	/* libuser internals: raw EX_MODIFY_QP */
#include "kmod/wire.h"

static char xt_err_buf[512];

static void __attribute__((format(printf, 1, 2))) xt_errf(const char *fmt,
							  ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(xt_err_buf, sizeof(xt_err_buf), fmt, ap);
	va_end(ap);
}

/** xt_error() - what the last failing helper said. */
const char *xt_error(void)
{
	return xt_err_buf;
}

long long xt_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

long long xt_now_ms(void)
{
	return xt_now_us() / 1000;
}

void xt_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * @quiet: the whole command is a group whose output is discarded, so that
 * a redirection of its own (echo 1 > /sys/...) still applies.
 */
static int xt_vsh(bool quiet, const char *fmt, va_list ap)
{
	char body[1024], cmd[sizeof(body) + 24];
	int st, n;

	n = vsnprintf(body, sizeof(body), fmt, ap);
	if (n < 0 || n >= (int)sizeof(body))
		return -1;
	snprintf(cmd, sizeof(cmd), quiet ? "{ %s\n} >/dev/null 2>&1" : "%s",
		 body);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Run a shell command, output discarded. Return: its exit status or -1. */
int xt_sh(const char *fmt, ...)
{
	va_list ap;
	int st;

	va_start(ap, fmt);
	st = xt_vsh(true, fmt, ap);
	va_end(ap);
	return st;
}

/* Run a shell command, output shown. Return: its exit status or -1. */
int xt_sh_show(const char *fmt, ...)
{
	va_list ap;
	int st;

	va_start(ap, fmt);
	st = xt_vsh(false, fmt, ap);
	va_end(ap);
	return st;
}

/**
 * xt_set_param() - set a device parameter with tools/xnictl (netlink)
 * @d: the device
 * @key: parameter name (xnictl set's KEY)
 * @val: its value
 *
 * xnictl is found next to this program's directory: ../tools/xnictl.
 * Return: xnictl's exit status (0 on success), -1 when it did not run.
 */
int xt_set_param(const struct xt_dev *d, const char *key, const char *val)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return xt_sh("'%s/../tools/xnictl' set '%s' '%s' '%s'", exe, d->name,
		     key, val);
}

/*
 * The value of the "@key: N kB" line of a /proc file (/proc/meminfo,
 * /proc/self/status), in KiB; -1 when there is none.
 */
long long xt_proc_kb(const char *path, const char *key)
{
	size_t klen = strlen(key);
	long long kb = -1;
	char line[256];
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (kb < 0 && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':' &&
		    sscanf(line + klen + 1, "%lld kB", &kb) != 1)
			kb = -1;
	fclose(f);
	return kb;
}

/* Read a one-line file without its newline. Return: 0 or -errno. */
int xt_read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int err = 0;

	buf[0] = '\0';
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		err = ferror(f) ? -EIO : 0;
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return err;
}

int xt_write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "we");
	int err = 0;

	if (!f)
		return -errno;
	if (fputs(val, f) < 0)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/**
 * xt_packet_socket() - a packet socket bound to the xnic ethertype on a
 * netdev: what it sends leaves there, and it sees the xnic frames the
 * netdev sends and receives, each skb (a burst too) as one packet
 * @ifindex: the netdev
 * @rcvbuf: receive buffer, bytes (SO_RCVBUFFORCE: skbs are charged their
 *	truesize); 0 for the default
 *
 * Return: its fd, or -errno.
 */
int xt_packet_socket(int ifindex, int rcvbuf)
{
	struct sockaddr_ll sll = { 0 };
	int fd = socket(AF_PACKET, SOCK_RAW, htons(XNIC_ETH_P)), err;

	if (fd < 0)
		return -errno;
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(XNIC_ETH_P);
	sll.sll_ifindex = ifindex;
	if ((rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
				  sizeof(rcvbuf))) ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* ------------------------------------------------------- environment -- */

static int xt_mac_of(const char *netdev, uint8_t mac[6], int *ifindex)
{
	char path[128], buf[64];
	unsigned int m[6];
	int err, k;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", netdev);
	err = xt_read_file(path, buf, sizeof(buf));
	if (err)
		return err;
	if (sscanf(buf, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
		   &m[4], &m[5]) != 6)
		return -EINVAL;
	for (k = 0; k < 6; k++)
		mac[k] = (uint8_t)m[k];
	*ifindex = (int)if_nametoindex(netdev);
	return *ifindex ? 0 : -ENODEV;
}

static int xt_dev_open(struct xt_dev *d)
{
	struct xnic_device_info info;
	const struct xnic_ctx_attr *a;
	long long end = xt_now_ms() + 5000;
	int err;

	/* The uverbs node appears asynchronously. */
	while ((err = xnic_device_lookup(d->name, &info)) &&
	       xt_now_ms() < end)
		xt_sleep_ms(20);
	if (err) {
		xt_errf("%s: xnic_device_lookup: %s", d->name,
			xnic_strerror(err));
		return err;
	}
	err = xnic_open(d->name, &d->ctx);
	if (err) {
		xt_errf("%s: xnic_open: %s", d->name, xnic_strerror(err));
		return err;
	}
	err = xnic_alloc_pd(d->ctx, &d->pd);
	if (err) {
		xt_errf("%s: xnic_alloc_pd: %s", d->name, xnic_strerror(err));
		return err;
	}
	a = xnic_ctx_info(d->ctx);
	d->node_id = a->node_id;
	d->payload_mtu = a->payload_mtu;
	return 0;
}

/* Whether @dev's debugfs peer table has a line for @node. */
static bool xt_knows_peer(const char *dev, uint32_t node)
{
	char path[160], line[256];
	bool found = false;
	unsigned int n;
	FILE *f;

	snprintf(path, sizeof(path), XT_DEBUGFS "/%s/peers", dev);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u ", &n) == 1 && n == node)
			found = true;
	fclose(f);
	return found;
}

/**
 * xt_wait_peers() - wait until both devices learned each other by HELLO
 * @e: environment
 * @timeout_ms: deadline
 * Return: 0 or -ETIMEDOUT.
 */
int xt_wait_peers(struct xt_env *e, int timeout_ms)
{
	long long end = xt_now_ms() + timeout_ms;

	for (;;) {
		if (xt_knows_peer(e->dev[0].name, e->dev[1].node_id) &&
		    xt_knows_peer(e->dev[1].name, e->dev[0].node_id))
			return 0;
		if (xt_now_ms() >= end)
			break;
		xt_sleep_ms(10);
	}
	xt_errf("no HELLO discovery within %d ms (%s/%s/peers knows node %u: %d, %s knows node %u: %d)",
		timeout_ms, XT_DEBUGFS, e->dev[0].name, e->dev[1].node_id,
		xt_knows_peer(e->dev[0].name, e->dev[1].node_id),
		e->dev[1].name, e->dev[0].node_id,
		xt_knows_peer(e->dev[1].name, e->dev[0].node_id));
	return -ETIMEDOUT;
}

/**
 * xt_env_setup() - two xnic devices on a fresh veth pair, opened, peered
 * @e: environment to fill (zeroed here)
 * @tag: up to 4 characters naming the netdevs and devices
 * Return: 0 or -errno (xt_error() says more). Call xt_env_teardown()
 * whatever the result.
 */
int xt_env_setup(struct xt_env *e, const char *tag)
{
	int k, err;

	memset(e, 0, sizeof(*e));
	snprintf(e->tag, sizeof(e->tag), "%s", tag);
	for (k = 0; k < 2; k++) {
		snprintf(e->dev[k].netdev, IFNAMSIZ, "xt%s%c", e->tag, 'a' + k);
		snprintf(e->dev[k].name, sizeof(e->dev[k].name), "xt%s%d",
			 e->tag, k);
	}
	/* Leftovers of a run that died. */
	xnic_nl_link_del(e->dev[0].name);
	xnic_nl_link_del(e->dev[1].name);
	/* One shell, one ip: under TCG every program started costs ~0.2 s. */
	e->veth = true;
	if (xt_sh("ip link del %s 2>/dev/null; [ -d /sys/module/veth ] || modprobe veth\n"
		  "ip -batch - <<'EOF'\n"
		  "link add %s address 02:00:00:00:00:%02x mtu %d type veth peer name %s address 02:00:00:00:00:%02x mtu %d\n"
		  "link set %s up\nlink set %s up\nEOF",
		  e->dev[0].netdev, e->dev[0].netdev, XT_NODE0, XT_MTU,
		  e->dev[1].netdev, XT_NODE1, XT_MTU, e->dev[0].netdev,
		  e->dev[1].netdev)) {
		xt_errf("cannot create veth pair %s/%s and set it up",
			e->dev[0].netdev, e->dev[1].netdev);
		return -EIO;
	}
	for (k = 0; k < 2; k++) {
		err = xt_mac_of(e->dev[k].netdev, e->dev[k].mac,
				&e->dev[k].ifindex);
		if (err) {
			xt_errf("%s: no MAC/ifindex", e->dev[k].netdev);
			return err;
		}
		err = xnic_nl_link_add(e->dev[k].name, "xnic",
				       e->dev[k].netdev);
		if (err) {
			xt_errf("rdma link add %s type xnic netdev %s: %s",
				e->dev[k].name, e->dev[k].netdev,
				strerror(-err));
			return err;
		}
		e->linked[k] = true;
	}
	for (k = 0; k < 2; k++) {
		err = xt_dev_open(&e->dev[k]);
		if (err)
			return err;
	}
	if (e->dev[0].node_id != XT_NODE0 || e->dev[1].node_id != XT_NODE1) {
		xt_errf("node ids %u and %u, want %u and %u",
			e->dev[0].node_id, e->dev[1].node_id, XT_NODE0,
			XT_NODE1);
		return -EPROTO;
	}
	return xt_wait_peers(e, 10000);
}

/** xt_env_teardown() - close the contexts, delete devices and veths. */
void xt_env_teardown(struct xt_env *e)
{
	int k;

	for (k = 0; k < 2; k++) {
		xnic_close(e->dev[k].ctx);
		e->dev[k].ctx = NULL;
		e->dev[k].pd = NULL;
	}
	for (k = 0; k < 2; k++) {
		if (e->linked[k])
			xnic_nl_link_del(e->dev[k].name);
		e->linked[k] = false;
	}
	if (e->veth)
		xt_sh("ip link del %s", e->dev[0].netdev);
	e->veth = false;
}

/* ----------------------------------------------------------- buffers -- */

int xt_buf_alloc(struct xt_dev *d, struct xt_buf *b, size_t len,
		 unsigned int access)
{
	size_t map = (len + 4095) & ~(size_t)4095;
	int err;

	memset(b, 0, sizeof(*b));
	b->p = mmap(NULL, map, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (b->p == MAP_FAILED) {
		err = -errno;
		b->p = NULL;
		xt_errf("mmap of %zu bytes: %s", map, strerror(-err));
		return err;
	}
	b->len = len;
	err = xnic_reg_mr(d->pd, b->p, len, access, &b->mr);
	if (err) {
		xt_errf("%s: xnic_reg_mr of %zu bytes: %s", d->name, len,
			xnic_strerror(err));
		munmap(b->p, map);
		b->p = NULL;
		return err;
	}
	return 0;
}

void xt_buf_free(struct xt_buf *b)
{
	if (b->mr)
		xnic_dereg_mr(b->mr);
	if (b->p)
		munmap(b->p, (b->len + 4095) & ~(size_t)4095);
	memset(b, 0, sizeof(*b));
}

/* ---------------------------------------------------------- QP pairs -- */

int xt_conn_create(struct xt_env *e, struct xt_conn *c, unsigned int cqe,
		   const struct xnic_qp_cap *cap)
{
	/* rnr_retry 7, as these tests were written for: a SEND waits. */
	struct xnic_qp_attr attr = {
		.comp_mask = XNIC_QP_ATTR_RNR_RETRY,
		.rnr_retry = XNIC_QP_RNR_INFINITE,
	};
	struct xnic_qp_cap cp;
	int k, err;

	memset(c, 0, sizeof(*c));
	for (k = 0; k < 2; k++) {
		err = xnic_create_cq(e->dev[k].ctx, cqe, &c->cq[k]);
		if (err) {
			xt_errf("%s: xnic_create_cq(%u): %s", e->dev[k].name,
				cqe, xnic_strerror(err));
			return err;
		}
		if (cap)
			cp = *cap;
		err = xnic_create_qp_ex(e->dev[k].pd, c->cq[k], c->cq[k],
					cap ? &cp : NULL, &attr, &c->qp[k]);
		if (err) {
			xt_errf("%s: xnic_create_qp: %s", e->dev[k].name,
				xnic_strerror(err));
			return err;
		}
	}
	c->psn[0] = 0x100000 + (c->qp[0]->qpn & 0xfff);
	c->psn[1] = 0xfffff0;	/* wraps at 2^24 soon */
	err = xnic_connect_qp(c->qp[0], e->dev[1].node_id, c->qp[1]->qpn,
			      c->psn[0], c->psn[1]);
	if (!err)
		err = xnic_connect_qp(c->qp[1], e->dev[0].node_id,
				      c->qp[0]->qpn, c->psn[1], c->psn[0]);
	if (err)
		xt_errf("xnic_connect_qp: %s", xnic_strerror(err));
	return err;
}

void xt_conn_destroy(struct xt_conn *c)
{
	int k;

	for (k = 0; k < 2; k++) {
		if (c->qp[k])
			xnic_destroy_qp(c->qp[k]);
		if (c->cq[k])
			xnic_destroy_cq(c->cq[k]);
	}
	memset(c, 0, sizeof(*c));
}

/**
 * xt_qp_to_init() - RESET -> INIT only (EX_MODIFY_QP through libuser's
 *	internal command helper; libxnic only offers the whole connect)
 * @qp: QP in RESET
 * Return: 0 or -errno of the command.
 */
int xt_qp_to_init(struct xnic_qp *qp)
{
	struct ib_uverbs_ex_modify_qp req;
	struct ib_uverbs_ex_modify_qp_resp resp;
	int err;

	memset(&req, 0, sizeof(req));
	req.base.qp_handle = qp->handle;
	req.base.attr_mask = XNIC_QP_STATE | XNIC_QP_PKEY_INDEX |
			     XNIC_QP_PORT | XNIC_QP_ACCESS_FLAGS;
	req.base.qp_state = XNIC_QPS_INIT;
	req.base.port_num = XNIC_PORT_NUM;
	req.base.qp_access_flags = XNIC_ACCESS_LOCAL_WRITE |
				   XNIC_ACCESS_REMOTE_WRITE |
				   XNIC_ACCESS_REMOTE_READ;
	err = xnic_cmd_ex(qp->ctx->fd, IB_USER_VERBS_EX_CMD_MODIFY_QP, &req,
			  sizeof(req), NULL, 0, &resp, sizeof(resp), NULL, 0);
	if (!err)
		qp->state = XNIC_QPS_INIT;
	else
		xt_errf("EX_MODIFY_QP to INIT: %s", xnic_strerror(err));
	return err;
}

/* ------------------------------------------------------- completions -- */

int xt_reap(struct xnic_cq *cq, struct xnic_cqe *out, int n, int timeout_ms)
{
	long long end = xt_now_ms() + timeout_ms;
	unsigned int spins = 0;
	int got = 0, r, err;

	while (got < n) {
		r = xnic_poll_cq(cq, out + got, n - got);
		if (r < 0) {
			xt_errf("xnic_poll_cq: %s after %d of %d CQEs",
				xnic_strerror(r), got, n);
			return got ? got : r;
		}
		got += r;
		if (got >= n)
			break;
		if (r) {
			spins = 0;
			continue;
		}
		if (++spins < 2000)
			continue;
		if (xt_now_ms() >= end) {
			xt_errf("timeout: %d of %d CQEs in %d ms", got, n,
				timeout_ms);
			return got;
		}
		err = xnic_cq_wait(cq, 50);
		if (err && err != -ETIMEDOUT && err != -EINTR) {
			xt_errf("xnic_cq_wait: %s", xnic_strerror(err));
			return got ? got : err;
		}
	}
	return got;
}

int xt_reap_one(struct xnic_cq *cq, struct xnic_cqe *out, int timeout_ms)
{
	int r = xt_reap(cq, out, 1, timeout_ms);

	if (r == 1)
		return 0;
	return r < 0 ? r : -ETIMEDOUT;
}

int xt_quiet(struct xnic_cq *cq, struct xnic_cqe *out, int max, int ms)
{
	long long end = xt_now_ms() + ms;
	struct xnic_cqe junk;
	int got = 0, r;

	do {
		r = xnic_poll_cq(cq, got < max ? out + got : &junk, 1);
		if (r < 0)
			break;
		got += r;
		if (!r)
			xt_sleep_ms(5);
	} while (xt_now_ms() < end);
	return got;
}

int xt_wait_async(struct xnic_ctx *ctx, uint32_t type, struct xnic_qp *qp,
		  struct xnic_cq *cq, int timeout_ms)
{
	long long end = xt_now_ms() + timeout_ms;
	struct xnic_async_event ev;
	struct pollfd pfd;
	char seen[256] = "";
	size_t used = 0;
	int err, left;

	for (;;) {
		err = xnic_get_async_event(ctx, &ev);
		if (!err) {
			if (ev.type == type && (!qp || ev.qp == qp) &&
			    (!cq || ev.cq == cq))
				return 0;
			if (used + 40 < sizeof(seen))
				used += (size_t)snprintf(seen + used,
							 sizeof(seen) - used,
							 " %s(qp %p cq %p)",
							 xnic_event_str(ev.type),
							 (void *)ev.qp,
							 (void *)ev.cq);
			continue;
		}
		if (err != -EAGAIN) {
			xt_errf("xnic_get_async_event: %s", xnic_strerror(err));
			return err;
		}
		left = (int)(end - xt_now_ms());
		if (left <= 0)
			break;
		pfd.fd = xnic_async_fd(ctx);
		pfd.events = POLLIN;
		poll(&pfd, 1, left);
	}
	xt_errf("no %s event about qp %p / cq %p within %d ms; other events:%s",
		xnic_event_str(type), (void *)qp, (void *)cq, timeout_ms,
		used ? seen : " none");
	return -ETIMEDOUT;
}

const char *xt_cqe_str(const struct xnic_cqe *c)
{
	static char buf[256];

	snprintf(buf, sizeof(buf),
		 "wr_id %llu status %u (%s) opcode %u (%s) flags %#x byte_len %u imm %#x qp %u src_qp %u src_node %u",
		 (unsigned long long)c->wr_id, c->status,
		 xnic_wc_status_str(c->status), c->opcode,
		 xnic_wc_opcode_str(c->opcode), c->flags, c->byte_len,
		 c->imm_data, c->qp_num, c->src_qp, c->src_node);
	return buf;
}

/* ---------------------------------------------------------- patterns -- */

static inline uint64_t xt_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Byte i of the pattern of @seed: differs from its neighbours and seeds. */
static inline uint8_t xt_pat(size_t i, uint64_t seed)
{
	return (uint8_t)(xt_mix((i >> 3) ^ (seed << 40)) >> ((i & 7) * 8));
}

void xt_fill(uint8_t *p, size_t len, uint64_t seed)
{
	size_t i = 0;

	for (; i < len && (i & 7); i++)
		p[i] = xt_pat(i, seed);
	for (; i + 8 <= len; i += 8) {
		uint64_t w = xt_mix((i >> 3) ^ (seed << 40));

		memcpy(p + i, &w, 8);
	}
	for (; i < len; i++)
		p[i] = xt_pat(i, seed);
}

ssize_t xt_check_pattern(const uint8_t *p, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != xt_pat(i, seed))
			return (ssize_t)i;
	return -1;
}

void xt_fill_byte(uint8_t *p, size_t len, uint8_t v)
{
	memset(p, v, len);
}

/* Index of the first byte that differs, or -1. */
ssize_t xt_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t i, chunk;

	for (i = 0; i < len; i += chunk) {
		chunk = len - i < 65536 ? len - i : 65536;
		if (memcmp(a + i, b + i, chunk))
			break;
	}
	for (; i < len; i++)
		if (a[i] != b[i])
			return (ssize_t)i;
	return -1;
}

/* Index of the first byte that is not @v, or -1. */
ssize_t xt_check_byte(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return (ssize_t)i;
	return -1;
}

/* ----------------------------------------------------- observability -- */

/**
 * xt_counters() - transport counters of a device, read at one instant
 * @dev: RDMA device name
 * @names: @n counter names as in /sys/kernel/debug/xnic/<dev>/counters
 * @vals: their values
 * @n: counters
 *
 * The file is produced in one go when opened, so the values form one
 * snapshot (two counters read from two opens differ by what moved in
 * between: tens of frames under load).
 *
 * Return: 0; -ENOENT when the file or a counter does not exist.
 */
int xt_counters(const char *dev, const char *const *names, uint64_t *vals,
		int n)
{
	char path[160], line[256], key[128];
	unsigned long long v;
	int k, found = 0;
	FILE *f;

	snprintf(path, sizeof(path), XT_DEBUGFS "/%s/counters", dev);
	f = fopen(path, "re");
	if (!f) {
		xt_errf("%s: %s", path, strerror(errno));
		return -ENOENT;
	}
	while (found < n && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %llu", key, &v) != 2)
			continue;
		for (k = 0; k < n; k++)
			if (!strcmp(key, names[k])) {
				vals[k] = v;
				found++;
			}
	}
	fclose(f);
	if (found < n) {
		xt_errf("%s lacks some of %d counters, first %s", path, n,
			names[0]);
		return -ENOENT;
	}
	return 0;
}

/**
 * xt_counter() - one transport counter of a device (debugfs)
 * @dev: RDMA device name
 * @name: counter name as in /sys/kernel/debug/xnic/<dev>/counters
 * @val: its value
 * Return: 0; -ENOENT when the file or the counter does not exist.
 */
int xt_counter(const char *dev, const char *name, uint64_t *val)
{
	return xt_counters(dev, &name, val, 1);
}

/**
 * xt_hw_counter() - one counter of a device's port (hw_counters)
 * @dev: RDMA device name
 * @name: counter name, a file of /sys/class/infiniband/<dev>/ports/1/
 *	hw_counters (every counter is there; the engine's and the CM's only
 *	there). ib_core caches the values for 10 ms.
 * Return: its value; UINT64_MAX when it cannot be read.
 */
uint64_t xt_hw_counter(const char *dev, const char *name)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev, name);
	if (xt_read_file(path, buf, sizeof(buf)) < 0)
		return UINT64_MAX;
	return strtoull(buf, NULL, 10);
}

/*
 * How many link credit paths of @dev have no credit to send with (debugfs
 * link_credit, first line); -1 when it cannot be read.
 */
int xt_lcr_paths_empty(const char *dev)
{
	char path[160], line[512];
	int n = -1;
	FILE *f;

	snprintf(path, sizeof(path), XT_DEBUGFS "/%s/link_credit", dev);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "window %*u paths_empty %d", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/* The whole counters file on one line, for failure messages. */
int xt_counters_str(const char *dev, char *buf, size_t len)
{
	char path[160], line[256];
	size_t used = 0;
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), XT_DEBUGFS "/%s/counters", dev);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && used + 1 < len) {
		char key[128];
		unsigned long long v;

		if (sscanf(line, "%127s %llu", key, &v) != 2 || !v)
			continue;	/* zero counters say nothing */
		used += (size_t)snprintf(buf + used, len - used, "%s%s %llu",
					 used ? ", " : "", key, v);
		if (used >= len)
			break;
	}
	fclose(f);
	return 0;
}

/**
 * xt_engine_pid() - pid of a device's engine thread "xnic_eng/<dev>"
 * @dev: RDMA device name (the comm is cut at 15 characters)
 * Return: the pid, or -1 when not found.
 */
pid_t xt_engine_pid(const char *dev)
{
	char want[16], path[300], comm[64];
	struct dirent *de;
	pid_t pid = -1;
	DIR *d;

	snprintf(want, sizeof(want), "xnic_eng/%s", dev);
	d = opendir("/proc");
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (xt_read_file(path, comm, sizeof(comm)))
			continue;
		if (!strcmp(comm, want)) {
			pid = (pid_t)atoi(de->d_name);
			break;
		}
	}
	closedir(d);
	return pid;
}

/**
 * xt_task_cpu_ns() - CPU time a task has used, nanoseconds
 * @pid: the task
 * @ns: its sum_exec_runtime (/proc/PID/schedstat), or utime + stime
 *	from /proc/PID/stat when schedstat is missing
 * Return: 0 or -errno.
 */
int xt_task_cpu_ns(pid_t pid, uint64_t *ns)
{
	char path[64], buf[1024], *p;
	unsigned long long run, ut, st;
	long hz = sysconf(_SC_CLK_TCK);
	int k;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if (!xt_read_file(path, buf, sizeof(buf)) &&
	    sscanf(buf, "%llu", &run) == 1) {
		*ns = run;
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (xt_read_file(path, buf, sizeof(buf)))
		return -ENOENT;
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	/* Fields after the comm: state is 3; utime 14, stime 15. */
	for (k = 2; k < 14 && p; k++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu %llu", &ut, &st) != 2)
		return -EINVAL;
	*ns = (ut + st) * (1000000000ULL / (unsigned long long)hz);
	return 0;
}

/**
 * xt_res_count() - a resource count of `rdma resource show` for a device
 * @dev: RDMA device name
 * @kind: "pd", "cq", "qp", "mr", "ctx", ...
 * @val: the count
 * Return: 0; -ENOENT when the device or the kind is not listed.
 */
int xt_res_count(const char *dev, const char *kind, long *val)
{
	char line[512], want[64], *p, *tok;
	int err = -ENOENT;
	FILE *f;

	f = popen("rdma resource show 2>/dev/null", "r");
	if (!f)
		return -errno;
	snprintf(want, sizeof(want), " %s: ", dev);
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, want);
		if (!p)
			continue;
		p += strlen(want);
		for (tok = strtok(p, " \n"); tok; tok = strtok(NULL, " \n")) {
			char *v = strtok(NULL, " \n");

			if (!v)
				break;
			if (!strcmp(tok, kind)) {
				*val = strtol(v, NULL, 10);
				err = 0;
				break;
			}
		}
	}
	pclose(f);
	if (err)
		xt_errf("rdma resource show: no '%s' count for %s", kind, dev);
	return err;
}
