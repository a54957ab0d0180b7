// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic-hello-flood - send forged HELLOs on a netdev, as a hostile node on a
 * member link would (`make bench`: what a flood costs a real pair).
 *
 *   xnic-hello-flood -i IFNAME [-n NODES] [-r PER_SECOND] [-t SECONDS]
 *
 * Each HELLO names one of NODES (default 100000) node ids from 1000 on
 * (wrapping below 65535), with a node GUID and a random locally
 * administered source MAC of its own, sealed with the real frame check
 * (kmod/wire.h), so the receiving device takes it as a new node. Sends
 * PER_SECOND (default 20000) for SECONDS (default: until SIGTERM), then
 * prints "sent N". Needs CAP_NET_RAW. Exit: 0, 1 on a socket error, 2 on
 * bad arguments.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kmod/wire.h"
#include "xnic_tool.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* -t SECONDS: 0 (no limit) to a day, fractions allowed. */
static double parse_secs(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v >= 0 && v <= 86400))
		xnic_tool_die(2, "bad -t '%s' (expected 0..86400 seconds)", s);
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: xnic-hello-flood -i IFNAME [-n NODES] [-r PER_SECOND] [-t SECONDS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long nodes = 100000, rate = 20000, sent = 0;
	uint8_t frame[14 + XNIC_WIRE_HDR_LEN + sizeof(struct xnic_wire_hello)];
	struct xnic_wire_hdr *h = (struct xnic_wire_hdr *)(frame + 14);
	struct xnic_wire_hello hello = { .link_mtu = htonl(9000) };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct xnic_wire_info i = {
		.opcode = XNIC_OP_HELLO,
		.dst_node = XNIC_NODE_BROADCAST,
		.payload_len = sizeof(hello),
	};
	const char *ifname = NULL;
	double secs = 0, start;
	int c, fd;

	while ((c = getopt(argc, argv, "i:n:r:t:")) != -1) {
		switch (c) {
		case 'i':
			ifname = optarg;
			break;
		case 'n':
			nodes = xnic_tool_num(2, "-n", optarg, 1, UINT32_MAX,
					      false);
			break;
		case 'r':
			rate = xnic_tool_num(2, "-r", optarg, 1, UINT32_MAX,
					     false);
			break;
		case 't':
			secs = parse_secs(optarg);
			break;
		default:
			usage();
		}
	}
	if (!ifname || optind != argc)
		usage();
	sll.sll_ifindex = if_nametoindex(ifname);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "xnic-hello-flood: no netdev %s\n", ifname);
		return 2;
	}
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		perror("xnic-hello-flood: AF_PACKET socket");
		return 1;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	srandom(getpid());
	memset(frame, 0xff, 6);			/* broadcast, as HELLOs go */
	frame[12] = XNIC_ETH_P >> 8;
	frame[13] = XNIC_ETH_P & 0xff;
	start = now_s();
	while (!stop && (!secs || now_s() - start < secs)) {
		unsigned long k = sent % nodes;

		/* Pace: never ahead of rate x elapsed. */
		if (sent >= (now_s() - start) * rate) {
			usleep(200);
			continue;
		}
		i.src_node = 1000 + k % (XNIC_NODE_BROADCAST - 1000);
		hello.node_guid = htobe64(0x06f1000000000000ULL | k);
		frame[6] = 0x06;		/* local, unicast */
		frame[7] = random();
		frame[8] = random();
		frame[9] = random();
		frame[10] = random();
		frame[11] = random() | 1;
		xnic_wire_encode(h, &i);
		memcpy(frame + 14 + XNIC_WIRE_HDR_LEN, &hello, sizeof(hello));
		xnic_wire_seal(h, XNIC_WIRE_HDR_LEN + sizeof(hello));
		if (send(fd, frame, sizeof(frame), 0) < 0) {
			if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR)
				continue;
			perror("xnic-hello-flood: send");
			return 1;
		}
		sent++;
	}
	printf("sent %lu\n", sent);
	return 0;
}
