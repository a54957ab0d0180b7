// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic-perf - latency and bandwidth of RDMA WRITE, READ and SEND over xnic,
 * in the manner of perftest (ib_write_lat, ib_write_bw, ...).
 *
 *   server:  xnic-perf write_lat -d xnic1
 *   client:  xnic-perf write_lat -d xnic0 127.0.0.1
 *
 * The two sides meet over TCP (default port 18515, as perftest) to swap
 * node id, QPN, PSN, buffer address and rkey, or, with --cm, through the
 * fabric's connection manager with no IP at all:
 *
 *   server:  xnic-perf write_bw -d xnic1 --cm
 *   client:  xnic-perf write_bw -d xnic0 --cm NODE_ID_OF_XNIC1
 *
 * (the test's QP is connected by the CM with the buffer's address, rkey
 * and length and the test parameters in the private data; a second QP,
 * also connected by the CM, carries the control messages that TCP carries
 * otherwise: xnic-perf-ctl.c). Then data moves with libxnic's
 * zero-syscall datapath. The server takes the test parameters from the
 * client; the client prints the results.
 *
 * Latency tests are ping-pong: write_lat writes to the peer, which spins on
 * the last byte of its buffer and writes back (one-way latency = RTT / 2);
 * send_lat does the same with SEND and RECV completions; read_lat reads
 * from the passive server (latency = the READ's round trip). Bandwidth
 * tests keep a window of WQEs outstanding, signal every Nth and poll the CQ.
 *
 * --verify (bandwidth tests, for the fault soak: tools/xnic-soak) checks
 * every byte instead of measuring: one message at a time, its contents a
 * pattern of its sequence number (verify_fill()). write_bw WRITEs message
 * n to the server's buffer and READs it back; read_bw WRITEs one pattern
 * once, then READs it over and over into a cleared buffer; both compare
 * what came back. send_bw's server receives into one slot per receive WQE
 * and compares message n with its pattern. A mismatch prints
 * "verify: MISMATCH ..." and exits 3; the client prints
 * "verify: BYTES bytes MSGS messages" every second and at the end.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "xnic.h"
#include "xnic-perf-ctl.h"
#include "xnic_tool.h"

#define PERF_MAGIC		0x584e4943504552ULL	/* "XNICPER" */
#define PERF_VERSION		1
#define DEF_PORT		18515
#define DEF_LAT_ITERS		1000
#define DEF_BW_ITERS		5000
#define DEF_LAT_SIZE		2
#define DEF_BW_SIZE		65536
#define DEF_TX_DEPTH		128
#define DEF_RX_DEPTH		512
#define ALL_MIN_SIZE		2
#define ALL_MAX_SIZE		(8U << 20)
#define PROGRESS_TIMEOUT_NS	(10ULL * 1000000000ULL)
#define MAX_SAMPLES		(16U << 20)
#define CONNECT_RETRY_MS	10000	/* a client waits this long for its server */
/* --cm: the service id is this plus the port number (-p) */
#define PERF_CM_SID_BASE	0x5850455246000000ULL	/* "XPERF" */
#define PERF_CM_MAGIC		0x58505246U		/* "XPRF" */

enum verb { VERB_WRITE, VERB_READ, VERB_SEND };

struct test_def {
	const char *name;
	const char *title;
	enum verb verb;
	bool lat;
};

static const struct test_def tests[] = {
	{ "write_lat", "RDMA_Write Latency Test", VERB_WRITE, true },
	{ "write_bw", "RDMA_Write BW Test", VERB_WRITE, false },
	{ "read_lat", "RDMA_Read Latency Test", VERB_READ, true },
	{ "read_bw", "RDMA_Read BW Test", VERB_READ, false },
	{ "send_lat", "Send Latency Test", VERB_SEND, true },
	{ "send_bw", "Send BW Test", VERB_SEND, false },
};

#define NTESTS	(sizeof(tests) / sizeof(tests[0]))

struct opts {
	const struct test_def *test;
	const char *dev;
	const char *server;
	uint64_t size;
	uint64_t iters;
	unsigned int duration;
	unsigned int port;
	unsigned int tx_depth;
	unsigned int rx_depth;
	bool all;
	bool json;
	bool events;
	bool busy_poll;
	bool size_set;
	bool iters_set;
	unsigned int tclass;
	bool cm;
	bool verify;
	uint32_t node;
};

/* Exchanged once each way at connection time; every field big-endian. */
struct wire_hello {
	uint64_t magic;
	uint32_t version;
	uint32_t test;
	uint32_t node_id;
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t addr;		/* the buffer the peer writes to / reads */
	uint64_t buf_size;
	uint64_t size;		/* client's parameters follow */
	uint64_t iters;
	uint32_t duration;
	uint32_t all;
	uint32_t tx_depth;
	uint32_t rx_depth;
	uint32_t events;
	uint32_t verify;
};

/*
 * --cm: private data of the test QP's REQ (client: its parameters and
 * buffer) and REP (server: its buffer), and of the control QP's REQ.
 * Big-endian; 52 bytes of the CM's 64.
 */
struct wire_cm {
	uint32_t magic;
	uint8_t version;
	uint8_t test;
	uint8_t kind;		/* CM_KIND_* */
	uint8_t flags;		/* CM_F_* */
	uint64_t addr;		/* the buffer the peer writes to / reads */
	uint64_t buf_size;
	uint32_t rkey;
	uint32_t duration;
	uint64_t size;
	uint64_t iters;
	uint16_t tx_depth;
	uint16_t rx_depth;
} __attribute__((packed));

_Static_assert(sizeof(struct wire_cm) <= XNIC_CM_PRIVATE_MAX,
	       "struct wire_cm does not fit the CM's private data");

enum { CM_KIND_TEST = 1, CM_KIND_CTL };
#define CM_F_ALL	0x1
#define CM_F_EVENTS	0x2
#define CM_F_VERIFY	0x4
/* --verify: a process that sees no completion this long gives up */
#define VERIFY_TIMEOUT_NS	(300ULL * 1000000000ULL)
#define VERIFY_EXIT		3

enum msg_type { MSG_RUN = 1, MSG_READY, MSG_DONE, MSG_ACK, MSG_BYE };

/* Control messages, big-endian. */
struct wire_msg {
	uint32_t type;
	uint32_t pad;
	uint64_t a;	/* RUN: size; DONE: messages sent; ACK: received */
	uint64_t b;	/* RUN: iterations (0: duration mode) */
};

struct perf {
	const struct opts *o;
	bool server;
	struct xnic_ctx *ctx;
	const struct xnic_ctx_attr *attr;
	struct xnic_pd *pd;
	struct xnic_mr *mr;
	struct xnic_cq *cq;
	struct xnic_qp *qp;
	uint8_t *buf;		/* [0, half): peer writes here; [half, 2 half): source */
	uint8_t *expect;	/* --verify: the pattern to compare with */
	unsigned int nslots;	/* receive slots in [0, half): 1, or (--verify */
	size_t slot_len;	/* send_bw) one per receive WQE */
	uint64_t rq_posted;	/* receive WQEs posted so far */
	size_t buf_len;
	size_t half;
	uint64_t remote_addr;
	uint32_t remote_rkey;
	struct perf_ctl ctl;
	unsigned int window;
	unsigned int cq_mod;
	/* per run */
	uint64_t size;
	uint64_t posted;
	uint64_t completed;	/* highest signaled wr_id completed */
	uint64_t recvs;
	uint64_t idle_since;	/* ns of the first empty poll in a row, or 0 */
	unsigned int owed_recvs;	/* reaped, not yet reposted */
	uint64_t verified;	/* --verify: bytes compared */
	uint64_t vmsgs;		/* --verify: messages done */
	double *samples;	/* latency, usec */
	size_t nsamples, samples_cap;
	uint64_t *bw_cnt;	/* bandwidth samples: messages completed ... */
	uint64_t *bw_ns;	/* ... at this time */
	size_t nbw, bw_cap;
};

static const char *prog = "xnic-perf";
/*
 * Wait strategy. We spin, as perftest does, but on a small machine the
 * work our peer, the kernel's softirqs and the engine threads must do
 * competes with the spinning for the same CPUs: give the CPU away
 * (sched_yield(), a no-op when nothing else is runnable here) after
 * YIELD_MASK + 1 empty polls in latency tests and IDLE_YIELD_MASK + 1 in
 * bandwidth tests, where a poll is cheaper than the work it waits for.
 * Clocks are read only when something happened, or every CLOCK_MASK + 1
 * empty polls: without a TSC clocksource clock_gettime() is a system
 * call costing microseconds.
 */
#define YIELD_MASK	255
#define IDLE_YIELD_MASK	15
#define CLOCK_MASK	4095
/*
 * Bandwidth tests poll the CQ for at most this long after the last
 * completion, then sleep on its completion channel (unless --busy-poll):
 * the "NIC" here is the kernel's engine, which runs on the same CPUs, so
 * a poller that never sleeps takes cycles from the work it waits for.
 * Under load completions come closer together than this and the test
 * never sleeps. (NAPI's busy polling and io_uring's SQPOLL idle work the
 * same way.)
 */
#define HYBRID_SPIN_NS	50000

#define die(...)	xnic_tool_die(1, __VA_ARGS__)

#define check(err, what)	perf_check(err, what)
#define now_ns()		perf_now_ns()

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* ------------------------------ options ------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s TEST [options] [SERVER_ADDR]\n"
"       %s TEST [options] --cm [SERVER_NODE]\n"
"  TEST: write_lat write_bw read_lat read_bw send_lat send_bw\n"
"  Without SERVER_ADDR (SERVER_NODE): server (waits for one client); with\n"
"  it: client. The sides meet over TCP, or with --cm through the fabric's\n"
"  connection manager (no IP: the client names the server's node id).\n"
"options:\n"
"  -d, --dev DEV        xnic device (default xnic0)\n"
"  -s, --size BYTES     message size (default 2 for *_lat, 65536 for *_bw;\n"
"                       K, M, G suffixes allowed)\n"
"  -n, --iters N        iterations per size (default 1000 lat, 5000 bw)\n"
"  -a, --all            all sizes from 2 to 8 MiB by powers of 2\n"
"  -D, --duration SEC   run each size for SEC seconds instead of -n\n"
"  -p, --port PORT      TCP port of the out-of-band exchange (default %u);\n"
"                       with --cm the CM service id is %#llx + PORT\n"
"      --cm             connect through the fabric's connection manager\n"
"  -t, --tx-depth N     outstanding WQEs in bandwidth tests (default %u)\n"
"  -r, --rx-depth N     receive WQEs posted in send tests (default %u)\n"
"  -e, --events         sleep on completion events (xnic_cq_wait) instead\n"
"                       of polling the CQ (not with write_lat)\n"
"      --busy-poll      bandwidth tests: never sleep (by default they poll\n"
"                       for 50 us after a completion, then sleep)\n"
"      --json           one JSON object per size instead of the table\n"
"      --tclass C       traffic class of this side's QP: 0 latency-critical\n"
"                       (default), 1 bulk\n"
"      --verify         *_bw: check every byte, one message at a time, no\n"
"                       figures; a mismatch exits 3 (see the source's head)\n"
"  -h, --help           this text\n"
"The server takes -s, -n, -a, -D, -t, -r, -e and --verify from the client\n"
"(not --tclass: give it to each side).\n",
		prog, prog, DEF_PORT, (unsigned long long)PERF_CM_SID_BASE,
		DEF_TX_DEPTH, DEF_RX_DEPTH);
}

static uint64_t opt_num(const char *name, const char *arg, uint64_t min,
			uint64_t max, bool suffix)
{
	return xnic_tool_num(1, name, arg, min, max, suffix);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "all", no_argument, NULL, 'a' },
		{ "duration", required_argument, NULL, 'D' },
		{ "port", required_argument, NULL, 'p' },
		{ "tx-depth", required_argument, NULL, 't' },
		{ "rx-depth", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'J' },
		{ "events", no_argument, NULL, 'e' },
		{ "tclass", required_argument, NULL, 'C' },
		{ "cm", no_argument, NULL, 'M' },
		{ "busy-poll", no_argument, NULL, 'B' },
		{ "verify", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *name;
	size_t i;
	int c;

	memset(o, 0, sizeof(*o));
	o->dev = "xnic0";
	o->port = DEF_PORT;
	o->tx_depth = DEF_TX_DEPTH;
	o->rx_depth = DEF_RX_DEPTH;

	while ((c = getopt_long(argc, argv, "d:s:n:aD:p:t:r:eh", lopts,
				NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dev = optarg;
			break;
		case 's':
			o->size = opt_num("size", optarg, 1, 1ULL << 31, true);
			o->size_set = true;
			break;
		case 'n':
			o->iters = opt_num("iteration count", optarg, 1,
					   1ULL << 40, false);
			o->iters_set = true;
			break;
		case 'a':
			o->all = true;
			break;
		case 'D':
			o->duration = (unsigned int)opt_num("duration", optarg,
							    1, 86400, false);
			break;
		case 'p':
			o->port = (unsigned int)opt_num("port", optarg, 1,
							65535, false);
			break;
		case 't':
			o->tx_depth = (unsigned int)opt_num("tx depth", optarg,
							    1, XNIC_MAX_QP_WR,
							    false);
			break;
		case 'r':
			o->rx_depth = (unsigned int)opt_num("rx depth", optarg,
							    1, XNIC_MAX_QP_WR,
							    false);
			break;
		case 'J':
			o->json = true;
			break;
		case 'e':
			o->events = true;
			break;
		case 'C':
			o->tclass = (unsigned int)opt_num("traffic class",
							  optarg, 0,
							  XNIC_TCLASS_BULK,
							  false);
			break;
		case 'M':
			o->cm = true;
			break;
		case 'B':
			o->busy_poll = true;
			break;
		case 'V':
			o->verify = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		die("no TEST given");
	}
	name = argv[optind++];
	for (i = 0; i < NTESTS; i++)
		if (!strcmp(name, tests[i].name))
			o->test = &tests[i];
	if (!o->test)
		die("unknown test '%s' (try -h)", name);
	if (optind < argc)
		o->server = argv[optind++];
	if (o->cm && o->server)
		o->node = (uint32_t)opt_num("node id", o->server, 0, 0xfffe,
					    false);
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);
	if (o->all && o->size_set)
		die("-a and -s exclude each other");
	if (o->duration && o->iters_set)
		die("-D and -n exclude each other");
	if (o->events && o->test->lat && o->test->verb == VERB_WRITE)
		die("-e does not apply to write_lat (it polls memory)");
	if (o->verify && (o->test->lat || o->all))
		die("--verify applies to the *_bw tests, one size (not -a)");
	if (!o->size_set)
		o->size = o->test->lat ? DEF_LAT_SIZE : DEF_BW_SIZE;
	if (!o->iters_set)
		o->iters = o->test->lat ? DEF_LAT_ITERS : DEF_BW_ITERS;
}

/* -------------------------- control messages ------------------------ */

static void send_msg(struct perf_ctl *c, uint32_t type, uint64_t a, uint64_t b)
{
	struct wire_msg m = {
		.type = htonl(type),
		.a = htobe64(a),
		.b = htobe64(b),
	};

	perf_ctl_write(c, &m, sizeof(m), "a control message");
}

static uint32_t recv_msg(struct perf_ctl *c, uint64_t *a, uint64_t *b)
{
	struct wire_msg m;

	perf_ctl_read(c, &m, sizeof(m), "a control message");
	if (a)
		*a = be64toh(m.a);
	if (b)
		*b = be64toh(m.b);
	return ntohl(m.type);
}

static void expect_msg(struct perf_ctl *c, uint32_t type, uint64_t *a,
		       uint64_t *b)
{
	uint32_t got = recv_msg(c, a, b);

	if (got != type)
		die("protocol error: control message %u, expected %u", got,
		    type);
}

/* ------------------------------ verbs ------------------------------- */

static void setup_device(struct perf *p, size_t max_size,
			 unsigned int tx_depth, unsigned int rx_depth)
{
	const struct opts *o = p->o;
	struct xnic_qp_cap cap = { 0 };
	struct xnic_qp_attr qattr = { 0 };
	char what[160];
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int err;

	err = xnic_open(o->dev, &p->ctx);
	snprintf(what, sizeof(what), "opening device %s", o->dev);
	check(err, what);
	p->attr = xnic_ctx_info(p->ctx);
	if (p->attr->port_state != XNIC_PORT_ACTIVE)
		fprintf(stderr, "%s: warning: port of %s is not ACTIVE (state %u)\n",
			prog, o->dev, p->attr->port_state);
	if (max_size > p->attr->max_msg_size)
		die("message size %zu exceeds the device's maximum %u",
		    max_size, p->attr->max_msg_size);

	check(xnic_alloc_pd(p->ctx, &p->pd), "allocating a PD");
	p->half = (max_size + pg - 1) / pg * pg;
	p->slot_len = p->half;
	p->nslots = 1;
	if (o->verify && o->test->verb == VERB_SEND) {
		/* One slot per receive WQE: the RQ rounds up to a power of 2. */
		while (p->nslots < rx_depth)
			p->nslots *= 2;
		p->half *= p->nslots;
	}
	p->buf_len = 2 * p->half;
	if (o->verify) {
		p->expect = malloc(max_size);
		if (!p->expect)
			die("out of memory for the --verify pattern");
	}
	p->buf = mmap(NULL, p->buf_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->buf == MAP_FAILED)
		die("allocating %zu bytes of buffer: %s", p->buf_len,
		    strerror(errno));
	memset(p->buf, 0, p->buf_len);
	err = xnic_reg_mr(p->pd, p->buf, p->buf_len,
			  XNIC_ACCESS_LOCAL_WRITE | XNIC_ACCESS_REMOTE_WRITE |
			  XNIC_ACCESS_REMOTE_READ, &p->mr);
	check(err, "registering the buffer (REG_MR)");

	cap.max_send_wr = tx_depth;
	cap.max_recv_wr = o->test->verb == VERB_SEND ? rx_depth : 1;
	cap.max_send_sge = 1;
	cap.max_recv_sge = 1;
	cap.max_inline_data = p->attr->max_inline;
	err = xnic_create_cq(p->ctx, cap.max_send_wr + cap.max_recv_wr + 16,
			     &p->cq);
	check(err, "creating the CQ");
	/* Like perftest: a SEND waits for the receiver's repost (RNR). */
	qattr.comp_mask = XNIC_QP_ATTR_TCLASS | XNIC_QP_ATTR_RNR_RETRY;
	qattr.tclass = o->tclass;
	qattr.rnr_retry = XNIC_QP_RNR_INFINITE;
	err = xnic_create_qp_ex(p->pd, p->cq, p->cq, &cap, &qattr, &p->qp);
	check(err, "creating the QP");
	if (o->verify && o->test->verb == VERB_SEND &&
	    p->qp->rq.entries > p->nslots)
		die("the RQ has %u entries, more than the %u receive slots",
		    p->qp->rq.entries, p->nslots);
	p->window = tx_depth < cap.max_send_wr ? tx_depth : cap.max_send_wr;
	if (o->test->verb == VERB_SEND && !o->test->lat &&
	    p->window > rx_depth)
		p->window = rx_depth;
	p->cq_mod = p->window >= 16 ? p->window / 8 : 1;
}

/*
 * One receive WQE; with --verify send_bw each into its own slot: the RQ is
 * a FIFO, so message k lands in slot (k - 1) % nslots.
 */
static int post_recv_one(struct perf *p)
{
	size_t slot = p->rq_posted % p->nslots;
	struct xnic_sge sge = {
		.addr = (uintptr_t)(p->buf + slot * p->slot_len),
		.length = (uint32_t)p->slot_len,
		.lkey = p->mr->lkey,
	};
	int err;

	err = xnic_post_recv(p->qp, &sge, 1, p->rq_posted);
	if (!err)
		p->rq_posted++;
	return err;
}

static void post_recvs(struct perf *p, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		check(post_recv_one(p), "posting a receive");
}

/* --verify: the contents of message @n, @len bytes, into @dst. */
static void verify_fill(uint8_t *dst, uint64_t n, size_t len)
{
	uint64_t x = (n + 1) * 0x9e3779b97f4a7c15ULL;
	size_t i;

	for (i = 0; i < len; i += sizeof(x)) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(dst + i, &x, len - i < sizeof(x) ? len - i : sizeof(x));
	}
}

/* --verify: @got must be message @n; else say where it differs, exit 3. */
static void verify_check(struct perf *p, const char *what, const uint8_t *got,
			 uint64_t n, size_t len)
{
	size_t i;

	verify_fill(p->expect, n, len);
	if (!memcmp(got, p->expect, len)) {
		p->verified += len;
		return;
	}
	for (i = 0; got[i] == p->expect[i]; i++)
		;
	printf("verify: MISMATCH in %s message %" PRIu64 " (%zu bytes): byte %zu is 0x%02x, expected 0x%02x\n",
	       what, n, len, i, got[i], p->expect[i]);
	fflush(stdout);
	xnic_tool_die(VERIFY_EXIT, "%s message %" PRIu64 ": wrong bytes from offset %zu",
		      what, n, i);
}

/*
 * Give back the receive WQEs whose completions we reaped. A slot is free
 * only once the kernel's RQ consumer index has passed it, which may be a
 * little after its completion is visible: what does not fit now stays
 * owed.
 */
static void repost_recvs(struct perf *p)
{
	int err;

	while (p->owed_recvs) {
		err = post_recv_one(p);
		if (err == -EAGAIN)
			return;
		check(err, "reposting a receive");
		p->owed_recvs--;
	}
}

/* Reap completions; receive completions are counted and reposted. */
static int reap(struct perf *p)
{
	struct xnic_cqe c[32];
	int n, i;

	if (p->owed_recvs)
		repost_recvs(p);
	n = xnic_poll_cq(p->cq, c, 32);
	check(n, "polling the CQ");	/* -EOVERFLOW says it all */
	if (n)
		p->idle_since = 0;
	for (i = 0; i < n; i++) {
		if (c[i].status != XNIC_WC_SUCCESS)
			die("%s completion error: %s (status %u, wr_id %" PRIu64 ")",
			    xnic_wc_opcode_str(c[i].opcode),
			    xnic_wc_status_str(c[i].status), c[i].status,
			    (uint64_t)c[i].wr_id);
		if (c[i].opcode & XNIC_WC_RECV) {
			if (c[i].byte_len != p->size)
				die("received %u bytes, expected %" PRIu64,
				    c[i].byte_len, p->size);
			if (p->o->verify)
				verify_check(p, "SEND", p->buf + (p->recvs % p->nslots) * p->slot_len,
					     p->recvs + 1, p->size);
			p->recvs++;
			p->owed_recvs++;
		} else if (c[i].wr_id > p->completed) {
			p->completed = c[i].wr_id;
		}
	}
	if (p->owed_recvs)
		repost_recvs(p);
	return n;
}

/*
 * Should an empty poll sleep on the CQ? Always with -e; in bandwidth
 * tests once HYBRID_SPIN_NS passed since the first empty poll in a row
 * (the clock starts here), unless --busy-poll; never in latency tests.
 */
static bool spun_enough(struct perf *p)
{
	if (p->o->events)
		return true;
	if (p->o->test->lat || p->o->busy_poll)
		return false;
	if (!p->idle_since) {
		p->idle_since = now_ns();
		return false;
	}
	if (now_ns() - p->idle_since < HYBRID_SPIN_NS)
		return false;
	p->idle_since = 0;
	return true;
}

/*
 * Nothing to reap: sleep until the CQ has something (or a short timeout,
 * so the caller can look at its clock and socket) when spun_enough();
 * else spin.
 */
static void idle_wait(struct perf *p)
{
	int err;

	if (!spun_enough(p)) {
		cpu_relax();
		return;
	}
	err = xnic_cq_wait(p->cq, 20);
	if (err && err != -ETIMEDOUT && err != -EINTR)
		check(err, "waiting for a completion event");
}

/* Post one operation of the test's verb; spins while the SQ is full. */
/* Post one WQE of @verb with one SGE of -s bytes at @addr in the MR. */
static int post_wqe(struct perf *p, enum verb verb, uint8_t *addr,
		    uint64_t wr_id, unsigned int flags)
{
	struct xnic_sge sge = {
		.addr = (uintptr_t)addr,
		.length = (uint32_t)p->size,
		.lkey = p->mr->lkey,
	};

	switch (verb) {
	case VERB_WRITE:
		return xnic_post_write(p->qp, &sge, 1, p->remote_addr,
				       p->remote_rkey, wr_id, flags);
	case VERB_READ:
		return xnic_post_read(p->qp, &sge, 1, p->remote_addr,
				      p->remote_rkey, wr_id, flags);
	default:
		return xnic_post_send(p->qp, &sge, 1, wr_id, flags);
	}
}

static void post_one(struct perf *p, uint64_t wr_id, bool signaled)
{
	const struct test_def *t = p->o->test;
	unsigned int flags = signaled ? XNIC_WQE_F_SIGNALED : 0;
	unsigned int spins = 0;
	uint64_t start = 0;
	int err;

	if (t->verb != VERB_READ && p->size <= p->attr->max_inline)
		flags |= XNIC_WQE_F_INLINE;
	while ((err = post_wqe(p, t->verb, p->buf + p->half, wr_id,
			       flags)) == -EAGAIN) {
		if (!(spins++ & CLOCK_MASK)) {
			if (!start)
				start = now_ns();
			else if (now_ns() - start > PROGRESS_TIMEOUT_NS)
				die("timeout: the SQ stayed full for 10 s (is the engine running?)");
		}
		if (!reap(p) && !(spins & IDLE_YIELD_MASK))
			sched_yield();
		cpu_relax();
	}
	check(err, "posting a work request");
	p->posted++;
}

/* ------------------------------ latency ----------------------------- */

static void add_sample(struct perf *p, double usec)
{
	if (p->nsamples == p->samples_cap) {
		size_t cap = p->samples_cap ? p->samples_cap * 2 : 4096;
		double *s;

		if (cap > MAX_SAMPLES)
			return;
		s = realloc(p->samples, cap * sizeof(*s));
		if (!s)
			die("out of memory for latency samples");
		p->samples = s;
		p->samples_cap = cap;
	}
	p->samples[p->nsamples++] = usec;
}

enum wait_kind {
	WAIT_BYTE,		/* *byte == v (write_lat) */
	WAIT_RECV,		/* more than n receives (send_lat) */
	WAIT_COMPLETION,	/* wr_id n completed (read_lat) */
};

/*
 * Spin until the condition holds, reaping completions as we go. Returns
 * false when the server sees the client's DONE instead.
 */
static bool wait_for(struct perf *p, enum wait_kind kind, const uint8_t *byte,
		     uint8_t v, uint64_t n)
{
	uint64_t start = 0;
	unsigned int spins = 0;

	for (;;) {
		switch (kind) {
		case WAIT_BYTE:
			if (__atomic_load_n(byte, __ATOMIC_ACQUIRE) == v)
				return true;
			if (!(++spins & 255))
				reap(p);
			break;
		case WAIT_RECV:
			if (p->recvs > n)
				return true;
			if (!reap(p) && p->o->events) {
				idle_wait(p);
				spins |= 4095;	/* look at clock and socket */
			}
			spins++;
			break;
		case WAIT_COMPLETION:
			if (p->completed >= n)
				return true;
			if (!reap(p) && p->o->events) {
				idle_wait(p);
				spins |= 4095;
			}
			spins++;
			break;
		}
		if (!(spins & YIELD_MASK))
			sched_yield();
		if (!(spins & 4095)) {
			if (p->server && perf_ctl_pending(&p->ctl))
				return false;
			if (!start)
				start = now_ns();
			else if (now_ns() - start > PROGRESS_TIMEOUT_NS)
				die("timeout: no answer from the peer in 10 s (iteration %" PRIu64 ")",
				    p->posted);
		}
		cpu_relax();
	}
}

static uint64_t run_lat(struct perf *p, uint64_t iters, unsigned int dur)
{
	const struct test_def *t = p->o->test;
	enum wait_kind kind = t->verb == VERB_WRITE ? WAIT_BYTE : WAIT_RECV;
	const uint8_t *rbyte = p->buf + p->size - 1;
	uint8_t *sbyte = p->buf + p->half + p->size - 1;
	uint64_t end = dur ? now_ns() + dur * 1000000000ULL : 0;
	unsigned int mod = p->cq_mod < 16 ? 16 : p->cq_mod;
	uint64_t i, t0, t1;
	bool sig;

	for (i = 0; dur || i < iters; i++) {
		uint8_t v = (uint8_t)(i % 255 + 1);

		sig = (i % mod) == mod - 1;
		if (p->server) {
			if (t->verb == VERB_READ)
				return 0;	/* passive: wait for DONE */
			if (!wait_for(p, kind, rbyte, v, i))
				return i;
			*sbyte = v;
			post_one(p, i + 1, sig);
			continue;
		}
		if (dur && !(i & 15) && now_ns() >= end)
			break;
		*sbyte = v;
		t0 = now_ns();
		if (t->verb == VERB_READ) {
			post_one(p, i + 1, true);
			wait_for(p, WAIT_COMPLETION, NULL, 0, i + 1);
			t1 = now_ns();
			add_sample(p, (double)(t1 - t0) / 1000.0);
			continue;
		}
		post_one(p, i + 1, sig);
		wait_for(p, kind, rbyte, v, i);
		t1 = now_ns();
		add_sample(p, (double)(t1 - t0) / 2000.0);
	}
	return i;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *s, size_t n, double q)
{
	size_t k = (size_t)ceil(q * (double)n);

	return s[k ? k - 1 : 0];
}

static void report_lat(struct perf *p, uint64_t iters)
{
	double *s = p->samples, sum = 0, var = 0, avg;
	size_t n = p->nsamples, i;

	if (!n)
		die("no latency samples were taken");
	qsort(s, n, sizeof(*s), cmp_double);
	for (i = 0; i < n; i++)
		sum += s[i];
	avg = sum / (double)n;
	for (i = 0; i < n; i++)
		var += (s[i] - avg) * (s[i] - avg);
	var /= (double)n;
	if (p->o->json) {
		printf("{\"test\":\"%s\",\"device\":\"%s\",\"bytes\":%" PRIu64
		       ",\"iterations\":%" PRIu64 ",\"t_min_us\":%.3f"
		       ",\"t_max_us\":%.3f,\"t_typical_us\":%.3f"
		       ",\"t_avg_us\":%.3f,\"t_stdev_us\":%.3f"
		       ",\"p99_us\":%.3f,\"p99_9_us\":%.3f}\n",
		       p->o->test->name, p->o->dev, p->size, iters, s[0],
		       s[n - 1], s[n / 2], avg, sqrt(var), pct(s, n, 0.99),
		       pct(s, n, 0.999));
	} else {
		printf(" %-7" PRIu64 " %-11" PRIu64 " %14.2f %14.2f %16.2f %14.2f %16.2f %22.2f %24.2f\n",
		       p->size, iters, s[0], s[n - 1], s[n / 2], avg,
		       sqrt(var), pct(s, n, 0.99), pct(s, n, 0.999));
	}
	fflush(stdout);
}

/* ----------------------------- bandwidth ---------------------------- */

static void add_bw_sample(struct perf *p, uint64_t cnt, uint64_t ns)
{
	if (p->nbw == p->bw_cap) {
		size_t cap = p->bw_cap ? p->bw_cap * 2 : 1024;

		if (cap > MAX_SAMPLES)
			return;
		p->bw_cnt = realloc(p->bw_cnt, cap * sizeof(*p->bw_cnt));
		p->bw_ns = realloc(p->bw_ns, cap * sizeof(*p->bw_ns));
		if (!p->bw_cnt || !p->bw_ns)
			die("out of memory for bandwidth samples");
		p->bw_cap = cap;
	}
	p->bw_cnt[p->nbw] = cnt;
	p->bw_ns[p->nbw++] = ns;
}

static void run_bw_client(struct perf *p, uint64_t iters, unsigned int dur,
			  uint64_t *t_start, uint64_t *t_end)
{
	uint64_t end, last_progress, prev_completed = 0, now;
	unsigned int idle = 0;
	bool stop = false;

	*t_start = now_ns();
	end = *t_start + dur * 1000000000ULL;
	last_progress = *t_start;
	add_bw_sample(p, 0, *t_start);
	for (;;) {
		while (!stop && p->posted - p->completed < p->window) {
			uint64_t n = p->posted + 1;
			bool sig = !(n % p->cq_mod) || (!dur && n == iters);

			if (!dur && p->posted == iters) {
				stop = true;
				break;
			}
			post_one(p, n, sig);
			if (dur && !(n % p->cq_mod) && now_ns() >= end)
				stop = true;
		}
		if (!reap(p)) {
			/* Let softirqs and engine threads run. */
			if (!(++idle & IDLE_YIELD_MASK))
				sched_yield();
			idle_wait(p);
		}
		if (p->completed != prev_completed) {
			now = now_ns();
			prev_completed = p->completed;
			last_progress = now;
			add_bw_sample(p, p->completed, now);
		} else if (!(idle & CLOCK_MASK) &&
			   now_ns() - last_progress > PROGRESS_TIMEOUT_NS) {
			die("timeout: no completion for 10 s (%" PRIu64 " of %" PRIu64 " done)",
			    p->completed, p->posted);
		}
		if (stop && p->completed == p->posted)
			break;
	}
	*t_end = p->bw_ns[p->nbw - 1];
}

/* --verify: post one WQE of @verb on the source or the receive half. */
static void verify_post(struct perf *p, enum verb verb, uint64_t wr_id,
			bool signaled)
{
	uint8_t *addr = p->buf + (verb == VERB_READ ? 0 : p->half);

	/* one at a time: never full */
	check(post_wqe(p, verb, addr, wr_id,
		       signaled ? XNIC_WQE_F_SIGNALED : 0),
	      "posting a work request");
}

/* --verify: wait for the completion of @wr_id (reap() dies on an error). */
static void verify_wait(struct perf *p, uint64_t wr_id)
{
	uint64_t start = now_ns();
	unsigned int idle = 0;

	while (p->completed < wr_id) {
		if (reap(p))
			continue;
		if (!(++idle & IDLE_YIELD_MASK))
			sched_yield();
		idle_wait(p);
		if (!(idle & 255) && now_ns() - start > VERIFY_TIMEOUT_NS)
			die("timeout: no completion for %llu s (message %" PRIu64 ")",
			    VERIFY_TIMEOUT_NS / 1000000000ULL, wr_id);
	}
}

static void verify_progress(struct perf *p, uint64_t msgs)
{
	printf("verify: %" PRIu64 " bytes %" PRIu64 " messages\n",
	       p->verified, msgs);
	fflush(stdout);
}

/*
 * --verify, the client: message after message until -n or -D is done,
 * each checked (the head of this file); its progress every second.
 */
static void run_verify_client(struct perf *p, uint64_t iters,
			      unsigned int dur)
{
	enum verb verb = p->o->test->verb;
	uint64_t end = now_ns() + dur * 1000000000ULL, next = 0, n, t;
	uint8_t *src = p->buf + p->half;

	if (verb == VERB_READ) {	/* what every READ must bring back */
		verify_fill(src, 0, p->size);
		verify_post(p, VERB_WRITE, 1, true);
		verify_wait(p, 1);
	}
	for (n = 1; dur || n <= iters; n++) {
		t = now_ns();
		if (dur && t >= end)
			break;
		if (t >= next) {
			verify_progress(p, n - 1);
			next = t + 1000000000ULL;
		}
		switch (verb) {
		case VERB_WRITE:
			verify_fill(src, n, p->size);
			verify_post(p, VERB_WRITE, 2 * n, false);
			memset(p->buf, 0, p->size);
			verify_post(p, VERB_READ, 2 * n + 1, true);
			verify_wait(p, 2 * n + 1);
			verify_check(p, "WRITE", p->buf, n, p->size);
			break;
		case VERB_READ:
			memset(p->buf, 0, p->size);
			verify_post(p, VERB_READ, 2 * n + 1, true);
			verify_wait(p, 2 * n + 1);
			verify_check(p, "READ", p->buf, 0, p->size);
			break;
		default:
			/* The server compares: count what it acknowledged. */
			verify_fill(src, n, p->size);
			verify_post(p, VERB_SEND, 2 * n + 1, true);
			verify_wait(p, 2 * n + 1);
			p->verified += p->size;
			break;
		}
		p->vmsgs = n;
	}
	verify_progress(p, n - 1);
}

static void report_bw(struct perf *p, uint64_t msgs, uint64_t t_start,
		      uint64_t t_end)
{
	double secs = (double)(t_end - t_start) / 1e9, peak = 0, avg, rate;
	size_t w, k;

	/* Peak: best window of about one SQ's worth of messages. */
	w = p->window / p->cq_mod;
	if (!w)
		w = 1;
	for (k = 0; k + w < p->nbw; k++) {
		double dt = (double)(p->bw_ns[k + w] - p->bw_ns[k]) / 1e9;
		double bw = (double)(p->bw_cnt[k + w] - p->bw_cnt[k]) *
			    (double)p->size / dt / 1048576.0;

		if (dt > 0 && bw > peak)
			peak = bw;
	}
	avg = secs > 0 ? (double)msgs * (double)p->size / secs / 1048576.0 : 0;
	rate = secs > 0 ? (double)msgs / secs / 1e6 : 0;
	if (peak < avg)
		peak = avg;
	if (p->o->json) {
		/* qp_wakeups: the QP's wakeup syscalls so far (libxnic). */
		printf("{\"test\":\"%s\",\"device\":\"%s\",\"bytes\":%" PRIu64
		       ",\"iterations\":%" PRIu64 ",\"bw_peak_MBps\":%.2f"
		       ",\"bw_avg_MBps\":%.2f,\"msg_rate_Mpps\":%.6f"
		       ",\"qp_wakeups\":%" PRIu64 "}\n",
		       p->o->test->name, p->o->dev, p->size, msgs, peak, avg,
		       rate, p->qp->wakeups);
	} else {
		printf(" %-7" PRIu64 " %-11" PRIu64 " %18.2f %21.2f %15.6f\n",
		       p->size, msgs, peak, avg, rate);
	}
	fflush(stdout);
}

/* The server's part of a bandwidth run: ends at the client's DONE. */
static uint64_t run_bw_server(struct perf *p, uint64_t *sent)
{
	unsigned int idle = 0;
	uint64_t deadline;

	if (p->o->test->verb != VERB_SEND) {
		expect_msg(&p->ctl, MSG_DONE, sent, NULL);
		return 0;
	}
	for (;;) {
		if (reap(p))
			continue;
		++idle;
		if (!(idle & 1023) || p->o->events) {
			if (perf_ctl_pending(&p->ctl))
				break;
		}
		if (!(idle & IDLE_YIELD_MASK))
			sched_yield();
		idle_wait(p);
	}
	expect_msg(&p->ctl, MSG_DONE, sent, NULL);
	/* Every SEND the client saw complete has been received. */
	deadline = now_ns() + 2000000000ULL;
	while (p->recvs < *sent && now_ns() < deadline)
		reap(p);
	return p->recvs;
}

/* ------------------------------ driver ------------------------------ */

static void reset_run(struct perf *p, uint64_t size)
{
	p->size = size;
	p->posted = 0;
	p->completed = 0;
	p->recvs = 0;
	p->nsamples = 0;
	p->nbw = 0;
	memset(p->buf, 0, p->buf_len);
}

static void print_header(struct perf *p)
{
	const struct test_def *t = p->o->test;

	if (p->o->json)
		return;
	printf("---------------------------------------------------------------------------------------\n");
	printf("                    %s\n", t->title);
	printf(" Device         : %s (node %u)\n", p->o->dev, p->attr->node_id);
	printf(" Transport      : xnic RC, zero-syscall rings\n");
	printf(" TX depth       : %u\n", p->window);
	printf(" Payload MTU    : %u bytes\n", p->attr->payload_mtu);
	printf(" Max inline     : %u bytes\n", p->attr->max_inline);
	printf(" local  QPN 0x%06x\n", p->qp->qpn);
	printf("---------------------------------------------------------------------------------------\n");
	if (t->lat)
		printf(" #bytes  #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec]\n");
	else
		printf(" #bytes  #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n");
	fflush(stdout);
}

static void fill_hello(struct perf *p, struct wire_hello *h, uint32_t psn)
{
	const struct opts *o = p->o;

	memset(h, 0, sizeof(*h));
	h->magic = htobe64(PERF_MAGIC);
	h->version = htonl(PERF_VERSION);
	h->test = htonl((uint32_t)(o->test - tests));
	h->node_id = htonl(p->attr->node_id);
	h->qpn = htonl(p->qp->qpn);
	h->psn = htonl(psn);
	h->rkey = htonl(p->mr->rkey);
	h->addr = htobe64((uintptr_t)p->buf);
	h->buf_size = htobe64(p->half);
	h->size = htobe64(o->size);
	h->iters = htobe64(o->iters);
	h->duration = htonl(o->duration);
	h->all = htonl(o->all);
	h->tx_depth = htonl(o->tx_depth);
	h->rx_depth = htonl(o->rx_depth);
	h->events = htonl(o->events);
	h->verify = htonl(o->verify);
}

static void check_hello(const struct wire_hello *h, const struct opts *o)
{
	uint32_t test = ntohl(h->test);

	if (be64toh(h->magic) != PERF_MAGIC || ntohl(h->version) != PERF_VERSION)
		die("the peer is not an xnic-perf of this version");
	if (test >= NTESTS || &tests[test] != o->test)
		die("the peer runs %s, this side %s",
		    test < NTESTS ? tests[test].name : "an unknown test",
		    o->test->name);
}

static void connect_qp(struct perf *p, const struct wire_hello *peer,
		       uint32_t psn)
{
	int err;

	p->remote_addr = be64toh(peer->addr);
	p->remote_rkey = ntohl(peer->rkey);
	err = xnic_connect_qp(p->qp, ntohl(peer->node_id), ntohl(peer->qpn),
			      psn, ntohl(peer->psn));
	check(err, "connecting the QP (EX_MODIFY_QP to INIT, RTR, RTS)");
}

static size_t max_size_of(const struct opts *o)
{
	return o->all ? ALL_MAX_SIZE : (size_t)o->size;
}

/* The server takes the client's parameters. */
static void take_params(struct opts *o, uint64_t size, uint64_t iters,
			uint32_t duration, bool all, uint32_t tx_depth,
			uint32_t rx_depth, bool events, bool verify)
{
	o->size = size;
	o->iters = iters;
	o->duration = duration;
	o->all = all;
	o->tx_depth = tx_depth;
	o->rx_depth = rx_depth;
	o->events = events;
	o->verify = verify;
	if (!o->size || o->size > (1ULL << 31) || !o->tx_depth ||
	    o->tx_depth > XNIC_MAX_QP_WR || !o->rx_depth ||
	    o->rx_depth > XNIC_MAX_QP_WR)
		die("the client sent bad parameters");
}

static void server_tcp(struct perf *p, struct opts *o)
{
	struct wire_hello mine, peer;
	uint32_t psn = (uint32_t)lrand48() & 0xffffff;

	if (!o->json)
		fprintf(stderr, "%s: %s server waiting on TCP port %u\n", prog,
			o->test->name, o->port);
	perf_ctl_tcp_accept(&p->ctl, o->port);
	perf_ctl_read(&p->ctl, &peer, sizeof(peer), "the client's parameters");
	check_hello(&peer, o);
	take_params(o, be64toh(peer.size), be64toh(peer.iters),
		    ntohl(peer.duration), ntohl(peer.all) != 0,
		    ntohl(peer.tx_depth), ntohl(peer.rx_depth),
		    ntohl(peer.events) != 0, ntohl(peer.verify) != 0);
	setup_device(p, max_size_of(o), o->tx_depth, o->rx_depth);
	connect_qp(p, &peer, psn);
	if (o->test->verb == VERB_SEND)
		post_recvs(p, p->qp->rq.entries);
	fill_hello(p, &mine, psn);
	perf_ctl_write(&p->ctl, &mine, sizeof(mine), "the server's parameters");
}

static void fill_cm(struct perf *p, struct wire_cm *w, uint8_t kind)
{
	const struct opts *o = p->o;

	memset(w, 0, sizeof(*w));
	w->magic = htonl(PERF_CM_MAGIC);
	w->version = PERF_VERSION;
	w->test = (uint8_t)(o->test - tests);
	w->kind = kind;
	if (kind != CM_KIND_TEST)
		return;
	w->flags = (o->all ? CM_F_ALL : 0) | (o->events ? CM_F_EVENTS : 0) |
		   (o->verify ? CM_F_VERIFY : 0);
	w->addr = htobe64((uintptr_t)p->buf);
	w->buf_size = htobe64(p->half);
	w->rkey = htonl(p->mr->rkey);
	w->duration = htonl(o->duration);
	w->size = htobe64(o->size);
	w->iters = htobe64(o->iters);
	w->tx_depth = htons((uint16_t)o->tx_depth);
	w->rx_depth = htons((uint16_t)o->rx_depth);
}

/* Private data of a REQ or REP: NULL when it is not ours or not @kind. */
static const struct wire_cm *check_cm(const struct opts *o, const void *priv,
				      uint32_t len, uint8_t kind)
{
	const struct wire_cm *w = priv;

	if (len < sizeof(*w) || ntohl(w->magic) != PERF_CM_MAGIC ||
	    w->version != PERF_VERSION || w->kind != kind)
		return NULL;
	if (w->test >= NTESTS || &tests[w->test] != o->test)
		die("the peer runs %s, this side %s",
		    w->test < NTESTS ? tests[w->test].name : "an unknown test",
		    o->test->name);
	return w;
}

/* Wait for a request of @kind; refuse any other. */
static const struct wire_cm *server_cm_request(const struct opts *o,
					       struct xnic_cm_listener *l,
					       struct xnic_cm_req *req,
					       uint8_t kind, int timeout_ms)
{
	const struct wire_cm *w;
	int err;

	for (;;) {
		err = xnic_cm_get_request(l, req, timeout_ms);
		if (err)
			die("waiting for a CM request: %s", xnic_strerror(err));
		w = check_cm(o, req->private_data, req->private_len, kind);
		if (w)
			return w;
		fprintf(stderr, "%s: refusing a request from node %#x that is not xnic-perf's\n",
			prog, req->remote_node);
		xnic_cm_reject(req, NULL, 0);
	}
}

static void server_cm(struct perf *p, struct opts *o)
{
	uint64_t sid = PERF_CM_SID_BASE + o->port;
	struct xnic_cm_listener *l;
	struct xnic_cm_req req;
	const struct wire_cm *w;
	struct wire_cm mine;
	struct xnic_ctx *ctx;
	int err;

	/* The device is opened twice: to listen now, for the test later. */
	check(xnic_open(o->dev, &ctx), "opening the device");
	err = xnic_cm_listen(ctx, sid, &l);
	if (err)
		die("listening on CM service %#" PRIx64 " of %s: %s", sid,
		    o->dev, xnic_strerror(err));
	if (!o->json)
		fprintf(stderr, "%s: %s server of node %#x waiting on CM service %#" PRIx64 "\n",
			prog, o->test->name, xnic_ctx_info(ctx)->node_id, sid);
	w = server_cm_request(o, l, &req, CM_KIND_TEST, -1);
	take_params(o, be64toh(w->size), be64toh(w->iters),
		    ntohl(w->duration), w->flags & CM_F_ALL,
		    ntohs(w->tx_depth), ntohs(w->rx_depth),
		    w->flags & CM_F_EVENTS, w->flags & CM_F_VERIFY);
	if (be64toh(w->buf_size) < max_size_of(o))
		die("the client's buffer is too small");
	p->remote_addr = be64toh(w->addr);
	p->remote_rkey = ntohl(w->rkey);
	setup_device(p, max_size_of(o), o->tx_depth, o->rx_depth);
	fill_cm(p, &mine, CM_KIND_TEST);
	err = xnic_cm_accept(&req, p->qp, &mine, sizeof(mine),
			     PERF_CM_TIMEOUT_MS);
	if (err)
		die("accepting node %#x's connection: %s", req.remote_node,
		    xnic_strerror(err));
	if (o->test->verb == VERB_SEND)
		post_recvs(p, p->qp->rq.entries);
	server_cm_request(o, l, &req, CM_KIND_CTL, PERF_CM_TIMEOUT_MS);
	perf_ctl_cm_accept(&p->ctl, p->ctx, p->pd, &req);
	xnic_cm_unlisten(l);
	xnic_close(ctx);
}

static int run_server(struct opts *o)
{
	struct perf p = { .o = o, .server = true };
	uint64_t size, iters, sent, got;
	uint32_t type;

	if (o->cm)
		server_cm(&p, o);
	else
		server_tcp(&p, o);

	for (;;) {
		type = recv_msg(&p.ctl, &size, &iters);
		if (type == MSG_BYE)
			break;
		if (type != MSG_RUN || !size || size > p.half)
			die("protocol error: bad control message %u", type);
		reset_run(&p, size);
		send_msg(&p.ctl, MSG_READY, 0, 0);
		if (o->test->lat) {
			run_lat(&p, iters ? iters : UINT64_MAX, 0);
			expect_msg(&p.ctl, MSG_DONE, &sent, NULL);
			got = p.recvs;
		} else {
			got = run_bw_server(&p, &sent);
		}
		send_msg(&p.ctl, MSG_ACK, got, 0);
	}
	perf_ctl_close(&p.ctl);
	xnic_close(p.ctx);
	return 0;
}

static void client_tcp(struct perf *p, const struct opts *o)
{
	struct wire_hello mine, peer;
	uint32_t psn = (uint32_t)lrand48() & 0xffffff;

	perf_ctl_tcp_connect(&p->ctl, o->server, o->port);
	fill_hello(p, &mine, psn);
	perf_ctl_write(&p->ctl, &mine, sizeof(mine), "the client's parameters");
	perf_ctl_read(&p->ctl, &peer, sizeof(peer), "the server's parameters");
	check_hello(&peer, o);
	if (be64toh(peer.buf_size) < max_size_of(o))
		die("the server's buffer is too small");
	connect_qp(p, &peer, psn);
}

static void client_cm(struct perf *p, const struct opts *o)
{
	uint64_t deadline = now_ns() + CONNECT_RETRY_MS * 1000000ULL;
	uint64_t sid = PERF_CM_SID_BASE + o->port;
	struct xnic_cm_reply rep;
	const struct wire_cm *w;
	struct wire_cm mine;
	int err;

	fill_cm(p, &mine, CM_KIND_TEST);
	/* The server may still be starting: retry while nobody listens. */
	for (;;) {
		err = xnic_cm_connect(p->ctx, p->qp, o->node, sid, &mine,
				      sizeof(mine), PERF_CM_TIMEOUT_MS, &rep);
		if (err != -ECONNREFUSED ||
		    rep.reject_reason != XNIC_CM_REJ_NO_LISTENER ||
		    now_ns() > deadline)
			break;
		usleep(100000);
	}
	if (err == -ECONNREFUSED)
		die("node %#x refused the connection to CM service %#" PRIx64 " (reason %u): is an xnic-perf %s server running there with the same -p?",
		    o->node, sid, rep.reject_reason, o->test->name);
	if (err)
		die("connecting to node %#x, CM service %#" PRIx64 ": %s",
		    o->node, sid, xnic_strerror(err));
	w = check_cm(o, rep.private_data, rep.private_len, CM_KIND_TEST);
	if (!w)
		die("node %#x's answer is not xnic-perf's", o->node);
	if (be64toh(w->buf_size) < max_size_of(o))
		die("the server's buffer is too small");
	p->remote_addr = be64toh(w->addr);
	p->remote_rkey = ntohl(w->rkey);
	fill_cm(p, &mine, CM_KIND_CTL);
	perf_ctl_cm_connect(&p->ctl, p->ctx, p->pd, o->node, sid, &mine,
			    sizeof(mine));
}

static int run_client(struct opts *o)
{
	struct perf p = { .o = o, .server = false };
	uint64_t size, first, last, done, got, t0, t1;

	setup_device(&p, max_size_of(o), o->tx_depth, o->rx_depth);
	if (o->cm)
		client_cm(&p, o);
	else
		client_tcp(&p, o);
	if (o->test->verb == VERB_SEND && o->test->lat)
		post_recvs(&p, p.qp->rq.entries);
	print_header(&p);

	first = o->all ? ALL_MIN_SIZE : o->size;
	last = o->all ? ALL_MAX_SIZE : o->size;
	for (size = first; size <= last; size *= 2) {
		reset_run(&p, size);
		send_msg(&p.ctl, MSG_RUN, size, o->duration ? 0 : o->iters);
		expect_msg(&p.ctl, MSG_READY, NULL, NULL);
		if (o->test->lat) {
			done = run_lat(&p, o->iters, o->duration);
			send_msg(&p.ctl, MSG_DONE, done, 0);
			expect_msg(&p.ctl, MSG_ACK, &got, NULL);
			report_lat(&p, done);
		} else if (o->verify) {
			run_verify_client(&p, o->iters, o->duration);
			send_msg(&p.ctl, MSG_DONE, p.vmsgs, 0);
			expect_msg(&p.ctl, MSG_ACK, &got, NULL);
			if (o->test->verb == VERB_SEND && got != p.vmsgs)
				die("the server received %" PRIu64 " messages, %" PRIu64 " were sent",
				    got, p.vmsgs);
		} else {
			run_bw_client(&p, o->iters, o->duration, &t0, &t1);
			send_msg(&p.ctl, MSG_DONE, p.posted, 0);
			expect_msg(&p.ctl, MSG_ACK, &got, NULL);
			if (o->test->verb == VERB_SEND && got != p.posted)
				die("the server received %" PRIu64 " messages, %" PRIu64 " were sent",
				    got, p.posted);
			report_bw(&p, p.posted, t0, t1);
		}
	}
	send_msg(&p.ctl, MSG_BYE, 0, 0);
	if (!o->json)
		printf("---------------------------------------------------------------------------------------\n");
	perf_ctl_close(&p.ctl);
	xnic_close(p.ctx);
	free(p.samples);
	free(p.bw_cnt);
	free(p.bw_ns);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;

	parse_args(argc, argv, &o);
	srand48((long)(now_ns() ^ (uint64_t)getpid()));
	return o.server ? run_client(&o) : run_server(&o);
}
