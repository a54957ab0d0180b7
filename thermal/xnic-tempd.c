// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic-tempd - the temperature reader of an xnic device's member links.
 * Every interval it reads each member link's sensors (temp_sensor.c: the
 * hwmon sensor of the netdev's parent device and the pluggable module's
 * EEPROM diagnostics) and reports them to the kernel's thermal policy
 * with XNIC_CMD_LINK_SET: the hotter reading and its source, "no sensor",
 * or a read error (counted by the kernel; its last reading stands until
 * XNIC_TEMP_STALE_MS). Prints a line per link when what it reports
 * changes. README tells why this is userspace.
 *
 * Exit status: 0 after -n rounds or SIGINT/SIGTERM; 1 the device or the
 * xnic family is gone; 2 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <net/if.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "uapi/xnic-netlink.h"
#include "temp_sensor.h"

#define TEMPD_LINKS	64	/* member links followed at most */

struct link {
	char ifname[IF_NAMESIZE];
	char last[128];		/* the last line printed */
};

static struct link links[TEMPD_LINKS];
static int nr_links;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void __attribute__((noreturn)) usage(int status)
{
	fprintf(status ? stderr : stdout,
		"Usage: xnic-tempd [-i MS] [-n ROUNDS] DEV\n"
		"Read the temperature sensors of the xnic device DEV's member links\n"
		"(hwmon of the parent device, module EEPROM diagnostics) every MS ms\n"
		"(100..5000, default 1000) and report them to the kernel's thermal\n"
		"policy; stop after ROUNDS rounds (default: at SIGINT or SIGTERM).\n"
		"FOR TESTS ONLY: XNIC_TEMP_ROOT=DIR reads DIR instead of the hardware\n"
		"(thermal/README).\n");
	exit(status);
}

static long parse_num(const char *what, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < min || v > max) {
		fprintf(stderr, "xnic-tempd: invalid %s '%s' (%ld..%ld)\n",
			what, s, min, max);
		exit(2);
	}
	return v;
}

/* LINK_GET dump reply: remember the netdev (keeping its last line). */
static int link_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[XNIC_A_MAX + 1], *l[XNIC_LINK_A_MAX + 1];
	struct link *old = arg;
	const char *name;
	int i;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, XNIC_A_MAX, NULL) ||
	    !tb[XNIC_A_LINK] ||
	    nla_parse_nested(l, XNIC_LINK_A_MAX, tb[XNIC_A_LINK], NULL) ||
	    !l[XNIC_LINK_A_IFNAME] || nr_links == TEMPD_LINKS)
		return NL_SKIP;
	name = nla_get_string(l[XNIC_LINK_A_IFNAME]);
	links[nr_links] = (struct link){ 0 };
	snprintf(links[nr_links].ifname, IF_NAMESIZE, "%s", name);
	for (i = 0; i < TEMPD_LINKS && old[i].ifname[0]; i++)
		if (!strcmp(old[i].ifname, name))
			memcpy(links[nr_links].last, old[i].last,
			       sizeof(old[i].last));
	nr_links++;
	return NL_OK;
}

static int list_links(struct nl_sock *sk, int family, const char *dev)
{
	static struct link old[TEMPD_LINKS];
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
				 NLM_F_DUMP, XNIC_CMD_LINK_GET,
				 XNIC_GENL_VERSION) ||
	    nla_put_string(msg, XNIC_A_DEV_NAME, dev)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	memset(old, 0, sizeof(old));
	memcpy(old, links, sizeof(links[0]) * nr_links);
	nr_links = 0;
	return xnic_nl_xfer(sk, msg, link_cb, old);
}

/* What one round found on a link, and its report to the kernel. */
struct reading {
	int src;		/* enum xnic_temp_source */
	int32_t mc;
	int hwmon_err, module_err;	/* 0, -ENODATA or a failure */
};

static void read_link(struct xnic_temp_sensors *ts, const char *ifname,
		      struct reading *r)
{
	int32_t h = 0, m = 0;

	r->hwmon_err = xnic_temp_hwmon(ts, ifname, &h);
	r->module_err = xnic_temp_module(ts, ifname, &m);
	r->src = XNIC_TEMP_SRC_NONE;
	r->mc = 0;
	if (!r->module_err) {
		r->src = XNIC_TEMP_SRC_MODULE;
		r->mc = m;
	}
	if (!r->hwmon_err && (r->src == XNIC_TEMP_SRC_NONE || h > r->mc)) {
		r->src = XNIC_TEMP_SRC_HWMON;
		r->mc = h;
	}
}

static bool failed(int err)
{
	return err && err != -ENODATA;
}

static int report(struct nl_sock *sk, int family, const char *dev,
		  const char *ifname, const struct reading *r)
{
	bool error = failed(r->hwmon_err) || failed(r->module_err);
	struct nl_msg *msg = nlmsg_alloc();
	struct nlattr *nest;

	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
				 XNIC_CMD_LINK_SET, XNIC_GENL_VERSION) ||
	    nla_put_string(msg, XNIC_A_DEV_NAME, dev))
		goto nomem;
	nest = nla_nest_start(msg, XNIC_A_LINK | NLA_F_NESTED);
	if (!nest || nla_put_string(msg, XNIC_LINK_A_IFNAME, ifname))
		goto nomem;
	/* A failed read with nothing else read leaves the last reading. */
	if ((r->src != XNIC_TEMP_SRC_NONE || !error) &&
	    nla_put_u8(msg, XNIC_LINK_A_TEMP_SOURCE, r->src))
		goto nomem;
	if (r->src != XNIC_TEMP_SRC_NONE &&
	    nla_put_s32(msg, XNIC_LINK_A_TEMP_SENSOR_MC, r->mc))
		goto nomem;
	if (error && nla_put_flag(msg, XNIC_LINK_A_TEMP_READ_ERROR))
		goto nomem;
	nla_nest_end(msg, nest);
	return xnic_nl_xfer(sk, msg, NULL, NULL);
nomem:
	nlmsg_free(msg);
	return -ENOMEM;
}

/* Print @l's outcome if it changed. */
static void show(struct link *l, const struct reading *r, int err)
{
	static const char *const src[] = { "none", "hwmon", "module" };
	char line[sizeof(l->last)];
	int n;

	if (r->src != XNIC_TEMP_SRC_NONE)
		n = snprintf(line, sizeof(line), "%s %s %.1fC", l->ifname,
			     src[r->src], r->mc / 1000.0);
	else
		n = snprintf(line, sizeof(line), "%s %s", l->ifname,
			     failed(r->hwmon_err) || failed(r->module_err) ?
			     "no reading" : "no sensor");
	if (failed(r->hwmon_err) && n < (int)sizeof(line))
		n += snprintf(line + n, sizeof(line) - n,
			      ", hwmon read error: %s",
			      strerror(-r->hwmon_err));
	if (failed(r->module_err) && n < (int)sizeof(line))
		n += snprintf(line + n, sizeof(line) - n,
			      ", module read error: %s",
			      strerror(-r->module_err));
	if (err && n < (int)sizeof(line))
		snprintf(line + n, sizeof(line) - n, ", not reported: %s",
			 strerror(-err));
	if (strcmp(line, l->last)) {
		printf("%s\n", line);
		fflush(stdout);
		memcpy(l->last, line, sizeof(line));
	}
}

int main(int argc, char **argv)
{
	struct timespec ts = { 0 };
	struct xnic_temp_sensors *sensors;
	long interval = 1000, rounds = 0, round;
	struct nl_sock *sk;
	int c, family, err, i;
	const char *dev;

	while ((c = getopt(argc, argv, "i:n:h")) != -1) {
		switch (c) {
		case 'i':
			interval = parse_num("interval", optarg, 100, 5000);
			break;
		case 'n':
			rounds = parse_num("rounds", optarg, 1, 1000000000);
			break;
		case 'h':
			usage(0);
		default:
			usage(2);
		}
	}
	if (optind != argc - 1)
		usage(2);
	dev = argv[optind];
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	sk = nl_socket_alloc();
	if (!sk || genl_connect(sk)) {
		fprintf(stderr, "xnic-tempd: cannot open a netlink socket\n");
		return 1;
	}
	family = genl_ctrl_resolve(sk, XNIC_GENL_NAME);
	if (family < 0) {
		fprintf(stderr, "xnic-tempd: no '%s' netlink family: is the xnic module loaded?\n",
			XNIC_GENL_NAME);
		return 1;
	}
	sensors = xnic_temp_open(getenv("XNIC_TEMP_ROOT"));
	if (!sensors) {
		fprintf(stderr, "xnic-tempd: cannot read module EEPROMs (ethtool netlink): %s\n",
			strerror(errno));
		return 1;
	}
	for (round = 0; !stop && (!rounds || round < rounds); round++) {
		if (round) {
			ts.tv_sec = interval / 1000;
			ts.tv_nsec = interval % 1000 * 1000000;
			nanosleep(&ts, NULL);
			if (stop)
				break;
		}
		err = list_links(sk, family, dev);
		if (err) {
			fprintf(stderr, "xnic-tempd: %s: %s\n", dev,
				strerror(-err));
			xnic_temp_close(sensors);
			nl_socket_free(sk);
			return 1;
		}
		for (i = 0; i < nr_links; i++) {
			struct reading r;

			read_link(sensors, links[i].ifname, &r);
			err = report(sk, family, dev, links[i].ifname, &r);
			show(&links[i], &r, err);
		}
	}
	xnic_temp_close(sensors);
	nl_socket_free(sk);
	return 0;
}
