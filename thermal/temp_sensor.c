// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * temp_sensor.c - a netdev's temperature sensors (temp_sensor.h): hwmon
 * from sysfs, the module EEPROM through ethtool netlink (the kernel takes
 * RTNL and calls the driver's get_module_eeprom_by_page), or a directory
 * standing in for both (tests).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/ethtool_netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "temp_decode.h"
#include "temp_sensor.h"

struct xnic_temp_sensors {
	const char *root;		/* NULL: the hardware */
	struct nl_sock *sk;		/* ethtool netlink */
	int family;
};

/* What eeprom_read() needs: the handle and the netdev. */
struct eeprom_ctx {
	struct xnic_temp_sensors *s;
	const char *ifname;
};

struct xfer {
	int (*valid)(struct nl_msg *, void *);
	void *arg;
	int error;
	int done;
};

static int xfer_valid(struct nl_msg *msg, void *arg)
{
	struct xfer *x = arg;

	return x->valid ? x->valid(msg, x->arg) : NL_OK;
}

static int xfer_done(struct nl_msg *msg, void *arg)
{
	(void)msg;
	((struct xfer *)arg)->done = 1;
	return NL_STOP;
}

static int xfer_err(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct xfer *x = arg;

	(void)nla;
	x->error = e->error;
	x->done = 1;
	return NL_STOP;
}

int xnic_nl_xfer(struct nl_sock *sk, struct nl_msg *msg,
		 int (*valid)(struct nl_msg *, void *), void *arg)
{
	struct xfer x = { .valid = valid, .arg = arg };
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int err;

	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, xfer_valid, &x);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, xfer_done, &x);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, xfer_done, &x);
	nl_cb_err(cb, NL_CB_CUSTOM, xfer_err, &x);
	err = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	while (err >= 0 && !x.done)
		err = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	if (x.done)
		return x.error;
	return -EIO;
}

struct xnic_temp_sensors *xnic_temp_open(const char *root)
{
	struct xnic_temp_sensors *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->root = root;
	if (root)
		return s;
	s->sk = nl_socket_alloc();
	if (!s->sk || genl_connect(s->sk))
		goto fail;
	s->family = genl_ctrl_resolve(s->sk, ETHTOOL_GENL_NAME);
	if (s->family < 0) {
		nl_socket_free(s->sk);
		free(s);
		errno = ENOENT;
		return NULL;
	}
	return s;
fail:
	if (s->sk)
		nl_socket_free(s->sk);
	free(s);
	errno = EIO;
	return NULL;
}

void xnic_temp_close(struct xnic_temp_sensors *s)
{
	if (!s)
		return;
	if (s->sk)
		nl_socket_free(s->sk);
	free(s);
}

/* Read up to @len bytes of @path at @off; -errno, or the count. */
static ssize_t read_file(const char *path, off_t off, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len, off);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

/* "hwmonN" -> N, or -1. */
static long hwmon_index(const char *name)
{
	char *end;
	long n;

	if (strncmp(name, "hwmon", 5) || !name[5])
		return -1;
	n = strtol(name + 5, &end, 10);
	return *end || n < 0 ? -1 : n;
}

int xnic_temp_hwmon(struct xnic_temp_sensors *s, const char *ifname,
		    int32_t *mc)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], buf[32];
	struct dirent *d;
	long best = -1, k;
	ssize_t n;
	DIR *dp;

	if (snprintf(dir, sizeof(dir), "%s/sys/class/net/%s/device/hwmon",
		     s->root ? s->root : "", ifname) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	dp = opendir(dir);
	if (!dp)
		return errno == ENOENT || errno == ENOTDIR ? -ENODATA : -errno;
	while ((d = readdir(dp))) {
		k = hwmon_index(d->d_name);
		if (k >= 0 && (best < 0 || k < best))
			best = k;
	}
	closedir(dp);
	if (best < 0)
		return -ENODATA;
	snprintf(path, sizeof(path), "%s/hwmon%ld/temp1_input", dir, best);
	n = read_file(path, 0, buf, sizeof(buf));
	if (n == -ENOENT)
		return -ENODATA;
	if (n == -ENODATA)	/* the driver's "no value now": a failure */
		return -EIO;
	if (n < 0)
		return (int)n;
	return xnic_hwmon_temp_parse(buf, (size_t)n, mc);
}

/* The test stand-in: ROOT/module/IF/AA-PP. */
static int fake_read(struct eeprom_ctx *c, uint8_t addr, uint8_t page,
		     uint8_t off, uint8_t len, uint8_t *buf)
{
	char path[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/module/%s", c->s->root, c->ifname);
	if (access(path, F_OK))
		return -EOPNOTSUPP;
	snprintf(path, sizeof(path), "%s/module/%s/%02x-%02x", c->s->root,
		 c->ifname, addr, page);
	n = read_file(path, off, buf, len);
	if (n < 0)
		return (int)n;
	return n == len ? 0 : -EIO;
}

struct eeprom_reply {
	uint8_t *buf;
	uint8_t len;
	int got;
};

static int eeprom_reply_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[ETHTOOL_A_MODULE_EEPROM_MAX + 1];
	struct eeprom_reply *r = arg;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, ETHTOOL_A_MODULE_EEPROM_MAX,
			  NULL) ||
	    !tb[ETHTOOL_A_MODULE_EEPROM_DATA] ||
	    nla_len(tb[ETHTOOL_A_MODULE_EEPROM_DATA]) != r->len)
		return NL_SKIP;
	memcpy(r->buf, nla_data(tb[ETHTOOL_A_MODULE_EEPROM_DATA]), r->len);
	r->got = 1;
	return NL_OK;
}

/* xnic_eeprom_read_t over ethtool netlink, or over the test stand-in. */
static int eeprom_read(void *ctx, uint8_t addr, uint8_t page, uint8_t off,
		       uint8_t len, uint8_t *buf)
{
	struct eeprom_ctx *c = ctx;
	struct eeprom_reply r = { .buf = buf, .len = len };
	struct nl_msg *msg;
	struct nlattr *hdr;
	int err;

	if (c->s->root)
		return fake_read(c, addr, page, off, len, buf);
	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->s->family, 0, 0,
			 ETHTOOL_MSG_MODULE_EEPROM_GET, ETHTOOL_GENL_VERSION))
		goto nomem;
	hdr = nla_nest_start(msg, ETHTOOL_A_MODULE_EEPROM_HEADER);
	if (!hdr || nla_put_string(msg, ETHTOOL_A_HEADER_DEV_NAME, c->ifname))
		goto nomem;
	nla_nest_end(msg, hdr);
	if (nla_put_u32(msg, ETHTOOL_A_MODULE_EEPROM_OFFSET, off) ||
	    nla_put_u32(msg, ETHTOOL_A_MODULE_EEPROM_LENGTH, len) ||
	    nla_put_u8(msg, ETHTOOL_A_MODULE_EEPROM_PAGE, page) ||
	    nla_put_u8(msg, ETHTOOL_A_MODULE_EEPROM_BANK, 0) ||
	    nla_put_u8(msg, ETHTOOL_A_MODULE_EEPROM_I2C_ADDRESS, addr))
		goto nomem;
	err = xnic_nl_xfer(c->s->sk, msg, eeprom_reply_cb, &r);
	if (err)
		return err;
	return r.got ? 0 : -EIO;
nomem:
	nlmsg_free(msg);
	return -ENOMEM;
}

int xnic_temp_module(struct xnic_temp_sensors *s, const char *ifname,
		     int32_t *mc)
{
	struct eeprom_ctx c = { .s = s, .ifname = ifname };
	int err = xnic_module_temp(eeprom_read, &c, mc);

	return err == -EOPNOTSUPP || err == -ENODEV ? -ENODATA : err;
}
