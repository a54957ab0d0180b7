// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fabric_rdm_test - the xnic provider's native FI_EP_RDM endpoint through
 * libfabric's public API only, in one process: endpoint A on DEVICE_A and
 * B on DEVICE_B, addresses exchanged with fi_getname/fi_av_insert, then
 *   - tagged messages, eager (8 B, 4 KiB) and rendezvous (1 MiB), the
 *     receive posted before and after the message arrived (unexpected),
 *     data, tag, remote CQ data and source address (fi_cq_readfrom)
 *     checked; tag ignore bits; FI_MSG beside FI_TAGGED;
 *   - a message to the endpoint itself (loopback);
 *   - an FI_WAIT_FD CQ shared by two endpoints: one wait fd for its life,
 *     readable after fi_trywait() for the second endpoint's message and
 *     for a loopback send; endpoints sharing a CQ closed while another
 *     thread reads it;
 *   - FI_PEEK with nothing there: FI_ENOMSG; FI_PEEK | FI_CLAIM, then the
 *     claimed receive; FI_CLAIM and FI_PEEK | FI_CLAIM with a NULL
 *     context: FI_EINVAL, the message left for a receive;
 *   - truncation, eager and rendezvous: FI_ETRUNC with olen, the bytes
 *     that fit placed, the sender's send completes;
 *   - fi_cancel of a posted receive: FI_ECANCELED;
 *   - bad input: an fi_addr not in the AV, an address nobody listens on
 *     (FI_ECONNREFUSED), iov counts over the limit, fi_getinfo for
 *     FI_EP_RDM with FI_RMA (FI_ENODATA);
 *   - fi_av_remove of an fi_addr already sent to: a send to it
 *     FI_EINVAL, the peer's other fi_addr goes on and is its source;
 *   - AV count hints of 2^62 and 2^63 + 1 (fi_av_open neither hangs nor
 *     fails, the addresses inserted read back), inserts of 2^62 and
 *     SIZE_MAX addresses (FI_ENOMEM, the table intact);
 *   - a peer that restarts (a new endpoint at the same address): a send
 *     to it after its old connection failed, and its own first send to
 *     an endpoint that has not noticed yet, each get a new connection;
 *     RESTARTS restarts in a row (more than an endpoint's CQ could serve
 *     if the replaced connections were kept); a restart while the
 *     sender's eager credits are spent;
 *   - a server endpoint whose CQ has room for PEERS_MAX connections
 *     (rdm_cq_size): the peers beyond are refused, also when they retry,
 *     and connect once peers went away; new peers come and go.
 * Usage: fabric_rdm_test DEVICE_A DEVICE_B (FI_PROVIDER_PATH must find
 * libxnic-fi.so). Prints TAP; exit 0 when every check passed.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define BIG	(1 << 20)
#define TMO_MS	15000

#include "fabric_tap.h"

struct side {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	char name[64];
	size_t namelen;
	fi_addr_t peer, self;	/* in this side's AV */
	char *tx, *rx;
};

static struct fi_info *rdm_hints(const char *dev, uint64_t caps)
{
	struct fi_info *h = fi_allocinfo();

	h->ep_attr->type = FI_EP_RDM;
	h->caps = caps;
	h->domain_attr->name = strdup(dev);
	h->domain_attr->av_type = FI_AV_TABLE;
	h->fabric_attr->prov_name = strdup("xnic");
	return h;
}

static void side_open(struct side *s, const char *dev)
{
	struct fi_info *h = rdm_hints(dev, FI_TAGGED | FI_MSG |
				      FI_DIRECTED_RECV | FI_SOURCE);
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr ava = { .type = FI_AV_TABLE };

	MUST(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &s->info));
	fi_freeinfo(h);
	MUST(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
	MUST(fi_domain(s->fabric, s->info, &s->domain, NULL));
	MUST(fi_cq_open(s->domain, &cqa, &s->cq, NULL));
	MUST(fi_av_open(s->domain, &ava, &s->av, NULL));
	MUST(fi_endpoint(s->domain, s->info, &s->ep, NULL));
	MUST(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	MUST(fi_ep_bind(s->ep, &s->av->fid, 0));
	MUST(fi_enable(s->ep));
	s->namelen = sizeof(s->name);
	MUST(fi_getname(&s->ep->fid, s->name, &s->namelen));
	s->tx = malloc(BIG);
	s->rx = malloc(BIG);
}

static void side_close(struct side *s)
{
	fi_close(&s->ep->fid);
	fi_close(&s->av->fid);
	fi_close(&s->cq->fid);
	fi_close(&s->domain->fid);
	fi_close(&s->fabric->fid);
	fi_freeinfo(s->info);
	free(s->tx);
	free(s->rx);
}

/*
 * The next completion of @s (progressing @o too: one thread drives both
 * ends): 1 and @c; -err and @err for an error entry; 0 on timeout.
 */
static int next(struct side *s, struct side *o, struct fi_cq_tagged_entry *c,
		fi_addr_t *src, struct fi_cq_err_entry *err)
{
	long long end = now_ms() + TMO_MS;

	while (now_ms() < end) {
		struct fi_cq_tagged_entry dummy;
		ssize_t n = fi_cq_readfrom(s->cq, c, 1, src);

		if (n == 1)
			return 1;
		if (n == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			if (fi_cq_readerr(s->cq, err, 0) != 1)
				return -FI_EOTHER;
			return -err->err;
		}
		if (o && o != s)	/* progress only: @o's ring keeps it */
			fi_cq_read(o->cq, &dummy, 0);
	}
	return 0;
}

/* Read @s's CQ for @ms, progressing @o; the number of completions. */
static int drain(struct side *s, struct side *o, int ms)
{
	long long end = now_ms() + ms;
	struct fi_cq_tagged_entry c;
	int n = 0;

	while (now_ms() < end) {
		if (fi_cq_read(s->cq, &c, 1) == 1)
			n++;
		fi_cq_read(o->cq, &c, 0);
	}
	return n;
}

static void fill(char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (char)(seed * 131 + i * 7);
}

/* A tagged message of @len bytes from @a to @b; posted first if @early. */
static void tagged(struct side *a, struct side *b, size_t len, bool early,
		   const char *what)
{
	struct fi_cq_tagged_entry c;
	struct fi_cq_err_entry e;
	fi_addr_t src = 0;
	uint64_t tag = 0x5a00000000000000ULL | len;
	int r1, r2;

	fill(a->tx, len, (unsigned int)len);
	memset(b->rx, 0, len);
	if (early)
		MUST(fi_trecv(b->ep, b->rx, len, NULL, FI_ADDR_UNSPEC, tag, 0,
			      b));
	MUST(fi_tsenddata(a->ep, a->tx, len, NULL, 0xC0DE, a->peer, tag, a));
	if (!early) {
		/* Let it arrive first: it waits as unexpected. */
		struct fi_cq_tagged_entry d;
		long long end = now_ms() + 200;

		while (now_ms() < end)
			fi_cq_read(b->cq, &d, 0);
		MUST(fi_trecv(b->ep, b->rx, len, NULL, FI_ADDR_UNSPEC, tag, 0,
			      b));
	}
	r2 = next(b, a, &c, &src, &e);
	CHECK(r2 == 1 && c.op_context == b && c.len == len && c.tag == tag &&
	      (c.flags & (FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA)) ==
	      (FI_TAGGED | FI_RECV | FI_REMOTE_CQ_DATA) && c.data == 0xC0DE &&
	      src == b->peer && !memcmp(a->tx, b->rx, len),
	      "%s: %zu B, data, tag, cq data and source (r %d len %zu src %llu)",
	      what, len, r2, r2 == 1 ? c.len : 0, (unsigned long long)src);
	r1 = next(a, b, &c, NULL, &e);
	CHECK(r1 == 1 && c.op_context == a && (c.flags & FI_SEND),
	      "%s: %zu B: the send completes (r %d)", what, len, r1);
}

static void truncated(struct side *a, struct side *b, size_t len)
{
	struct fi_cq_tagged_entry c;
	struct fi_cq_err_entry e;
	int r1, r2;

	fill(a->tx, len, 3);
	memset(b->rx, 0x55, 64);
	MUST(fi_trecv(b->ep, b->rx, 10, NULL, FI_ADDR_UNSPEC, 7, 0, b));
	MUST(fi_tsend(a->ep, a->tx, len, NULL, a->peer, 7, a));
	r2 = next(b, a, &c, NULL, &e);
	CHECK(r2 == -FI_ETRUNC && e.op_context == b && e.olen == len - 10 &&
	      !memcmp(b->rx, a->tx, 10) && b->rx[10] == 0x55,
	      "%zu B into 10: FI_ETRUNC, olen %zu, 10 bytes placed (r %d olen %zu)",
	      len, len - 10, r2, e.olen);
	r1 = next(a, b, &c, NULL, &e);
	CHECK(r1 == 1 && c.op_context == a,
	      "%zu B truncated: the sender's send completes (r %d)", len, r1);
}

static void peek_claim(struct side *a, struct side *b)
{
	struct fi_context claim;
	struct fi_cq_tagged_entry c, d;
	struct fi_cq_err_entry e;
	struct iovec iov = { .iov_base = b->rx, .iov_len = 64 };
	struct fi_msg_tagged m = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.tag = 99, .context = &claim,
	};
	int r;

	MUST(fi_trecvmsg(b->ep, &m, FI_PEEK));
	r = next(b, a, &c, NULL, &e);
	CHECK(r == -FI_ENOMSG, "FI_PEEK with nothing there: FI_ENOMSG (r %d)",
	      r);
	strcpy(a->tx, "claimed");
	MUST(fi_tsend(a->ep, a->tx, 8, NULL, a->peer, 99, a));
	r = next(a, b, &c, NULL, &e);
	fi_cq_read(b->cq, &d, 0);
	MUST(fi_trecvmsg(b->ep, &m, FI_PEEK | FI_CLAIM));
	r = next(b, a, &c, NULL, &e);
	CHECK(r == 1 && c.len == 8 && c.tag == 99 && c.op_context == &claim,
	      "FI_PEEK | FI_CLAIM finds it: 8 B, tag 99 (r %d)", r);
	memset(b->rx, 0, 64);
	MUST(fi_trecvmsg(b->ep, &m, FI_CLAIM));
	r = next(b, a, &c, NULL, &e);
	CHECK(r == 1 && c.len == 8 && !strcmp(b->rx, "claimed"),
	      "FI_CLAIM receives the claimed message (r %d)", r);

	/* A claim needs its context: NULL claims nothing, takes nothing. */
	strcpy(a->tx, "unclaimed");
	MUST(fi_tsend(a->ep, a->tx, 10, NULL, a->peer, 98, a));
	next(a, b, &c, NULL, &e);
	memset(b->rx, 0, 64);
	m.tag = 98;
	m.context = NULL;
	r = (int)fi_trecvmsg(b->ep, &m, FI_CLAIM);
	CHECK(r == -FI_EINVAL && drain(b, a, 300) == 0 && !b->rx[0],
	      "FI_CLAIM with a NULL context, nothing claimed: -FI_EINVAL, "
	      "no message taken (%d)", r);
	r = (int)fi_trecvmsg(b->ep, &m, FI_PEEK | FI_CLAIM);
	CHECK(r == -FI_EINVAL && drain(b, a, 300) == 0,
	      "FI_PEEK | FI_CLAIM with a NULL context: -FI_EINVAL (%d)", r);
	MUST(fi_trecv(b->ep, b->rx, 64, NULL, FI_ADDR_UNSPEC, 98, 0, b));
	r = next(b, a, &c, NULL, &e);
	CHECK(r == 1 && c.op_context == b && !strcmp(b->rx, "unclaimed"),
	      "the message stays for a receive (r %d)", r);
}

static void bad_input(struct side *a, struct side *b, const char *dev)
{
	struct fi_cq_tagged_entry c;
	struct fi_cq_err_entry e;
	struct iovec iov[2] = { { a->tx, 8 }, { a->tx + 8, 8 } };
	struct fi_info *h, *fi = NULL;
	char nobody[64];
	fi_addr_t fa;
	int r;

	CHECK(fi_tsend(a->ep, a->tx, 8, NULL, 999, 1, a) == -FI_EINVAL,
	      "fi_tsend to an fi_addr not in the AV: -FI_EINVAL");
	CHECK(fi_tsendv(a->ep, iov, NULL, 2, a->peer, 1, a) == -FI_EINVAL,
	      "two iovs (iov_limit 1): -FI_EINVAL");
	/* B's address with another port: nobody listens there. */
	memcpy(nobody, b->name, b->namelen);
	nobody[2] ^= 0x11;
	MUST(fi_av_insert(a->av, nobody, 1, &fa, 0, NULL));
	r = (int)fi_tsend(a->ep, a->tx, 8, NULL, fa, 1, a);
	CHECK(r == -FI_ECONNREFUSED,
	      "send to an address with no endpoint: -FI_ECONNREFUSED (%d)", r);
	MUST(fi_trecv(b->ep, b->rx, 8, NULL, FI_ADDR_UNSPEC, 1234, 0, b));
	CHECK(fi_cancel(&b->ep->fid, b) == 0, "fi_cancel of a posted receive");
	r = next(b, a, &c, NULL, &e);
	CHECK(r == -FI_ECANCELED && e.op_context == b,
	      "the cancelled receive completes with FI_ECANCELED (r %d)", r);
	h = rdm_hints(dev, FI_TAGGED | FI_RMA);
	r = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi);
	CHECK(r == -FI_ENODATA, "fi_getinfo FI_EP_RDM + FI_RMA: -FI_ENODATA (%d)",
	      r);
	fi_freeinfo(fi);
	fi_freeinfo(h);
}

/*
 * fi_av_remove (fi_av(3): the removed fi_addr is invalid until an insert
 * returns it again): a send to it fails like one to an fi_addr never
 * inserted, though its connection is cached; the connection stays for the
 * peer's other fi_addr, which its messages then report as their source.
 */
static void av_remove(struct side *a, struct side *b)
{
	struct fi_cq_tagged_entry c;
	struct fi_cq_err_entry e;
	fi_addr_t fa, src = FI_ADDR_NOTAVAIL;
	int r, r1;

	MUST(fi_av_insert(a->av, b->name, 1, &fa, 0, NULL));
	strcpy(a->tx, "second");
	MUST(fi_trecv(b->ep, b->rx, 64, NULL, FI_ADDR_UNSPEC, 21, 0, b));
	MUST(fi_tsend(a->ep, a->tx, 7, NULL, fa, 21, a));
	r = next(b, a, &c, NULL, &e);
	r1 = next(a, b, &c, NULL, &e);
	CHECK(r == 1 && r1 == 1 && !strcmp(b->rx, "second"),
	      "a send to a second fi_addr of the peer (r %d %d)", r, r1);
	r = fi_av_remove(a->av, &fa, 1, 0);
	CHECK(r == 0, "fi_av_remove of that fi_addr (%d)", r);
	r = (int)fi_tsend(a->ep, a->tx, 7, NULL, fa, 22, a);
	CHECK(r == -FI_EINVAL && drain(b, a, 300) == 0,
	      "a send to the removed fi_addr: -FI_EINVAL, nothing sent (%d)",
	      r);
	r = fi_av_remove(a->av, &fa, 1, 0);
	CHECK(r == -FI_EINVAL, "removing it again: -FI_EINVAL (%d)", r);
	strcpy(b->tx, "reply");
	MUST(fi_trecv(a->ep, a->rx, 64, NULL, FI_ADDR_UNSPEC, 23, 0, a));
	MUST(fi_tsend(b->ep, b->tx, 6, NULL, b->peer, 23, b));
	r = next(a, b, &c, &src, &e);
	r1 = next(b, a, &c, NULL, &e);
	CHECK(r == 1 && r1 == 1 && !strcmp(a->rx, "reply") && src == a->peer,
	      "the peer's next message reports its other fi_addr %llu as "
	      "source (r %d %d src %llu)", (unsigned long long)a->peer, r, r1,
	      (unsigned long long)src);
	MUST(fi_trecv(b->ep, b->rx, 64, NULL, FI_ADDR_UNSPEC, 24, 0, b));
	MUST(fi_tsend(a->ep, a->tx, 7, NULL, a->peer, 24, a));
	r = next(b, a, &c, NULL, &e);
	r1 = next(a, b, &c, NULL, &e);
	CHECK(r == 1 && r1 == 1,
	      "a send to the other fi_addr still goes (r %d %d)", r, r1);
}

#define AV_N	256		/* addresses inserted into a hinted AV */

/* A call of av_hints() that does not return fails instead of hanging. */
static void av_hung(int sig)
{
	(void)sig;
	/* Not async-signal-safe, but the test only spins in the provider. */
	printf("not ok %d - fi_av_open/fi_av_insert hung\n", num + 1);
	fflush(stdout);
	_exit(1);
}

/*
 * fi_av_open's count is only a hint (fi_av(3)): a huge one neither hangs
 * nor makes a table too short for what is inserted; an insert of more
 * addresses than can be allocated fails with -FI_ENOMEM and leaves the
 * table intact (the entries inserted before read back).
 */
static void av_hints(struct side *s)
{
	static const uint64_t hint[] = { 1ULL << 62, (1ULL << 63) + 1 };
	struct fi_av_attr ava = { .type = FI_AV_TABLE };
	static char names[AV_N * 64];	/* AV_N addresses in a row */
	fi_addr_t fa[AV_N];
	struct fid_av *av;
	char out[64];
	size_t i, len;
	int h, r, bad;

	for (i = 0; i < AV_N; i++)
		memcpy(names + i * s->namelen, s->name, s->namelen);
	signal(SIGALRM, av_hung);
	for (h = 0; h < 2; h++) {
		ava.count = hint[h];
		alarm(10);
		r = fi_av_open(s->domain, &ava, &av, NULL);
		alarm(0);
		CHECK(r == 0, "fi_av_open with count %#llx (a hint): 0 (%d)",
		      (unsigned long long)hint[h], r);
		if (r)
			continue;
		r = fi_av_insert(av, names, AV_N, fa, 0, NULL);
		alarm(10);
		CHECK(fi_av_insert(av, names, (size_t)1 << 62, NULL, 0, NULL) ==
		      -FI_ENOMEM && fi_av_insert(av, names, SIZE_MAX, NULL, 0,
						NULL) == -FI_ENOMEM,
		      "fi_av_insert of 2^62 and SIZE_MAX addresses: "
		      "-FI_ENOMEM");
		alarm(0);
		for (i = 0, bad = -1; i < AV_N && bad < 0; i++) {
			len = sizeof(out);
			if (fa[i] != i || fi_av_lookup(av, fa[i], out, &len) ||
			    len != s->namelen || memcmp(out, s->name, len))
				bad = (int)i;
		}
		CHECK(r == AV_N && bad < 0, "then %d addresses inserted into "
		      "it read back (%d, first bad %d)", AV_N, r, bad);
		fi_close(&av->fid);
	}
	signal(SIGALRM, SIG_DFL);
}

/*
 * Rendezvous buffers stay registered in the provider's cache between
 * messages: after both buffers were replaced by new memory at the same
 * addresses, the bytes moved must be the new ones.
 */
static void remapped(struct side *a, struct side *b)
{
	static const char *const what[] = { "new", "remapped", "reused" };
	const int prot = PROT_READ | PROT_WRITE;
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	struct fi_cq_tagged_entry c;
	struct fi_cq_err_entry e;
	char *tx, *rx;
	int round, r1, r2;

	tx = mmap(NULL, BIG, prot, flags, -1, 0);
	rx = mmap(NULL, BIG, prot, flags, -1, 0);
	for (round = 0; round < 3; round++) {
		if (tx == MAP_FAILED || rx == MAP_FAILED) {
			printf("Bail out! mmap: %s\n", strerror(errno));
			exit(1);
		}
		fill(tx, BIG, 40 + round);
		memset(rx, 0, BIG);
		MUST(fi_trecv(b->ep, rx, BIG, NULL, FI_ADDR_UNSPEC, 9, 0, b));
		MUST(fi_tsend(a->ep, tx, BIG, NULL, a->peer, 9, a));
		r2 = next(b, a, &c, NULL, &e);
		r1 = next(a, b, &c, NULL, &e);
		CHECK(r1 == 1 && r2 == 1 && !memcmp(tx, rx, BIG),
		      "rendezvous from and into %s memory: its bytes land "
		      "(r %d %d)", what[round], r1, r2);
		if (round == 0) {	/* new pages at the same addresses */
			tx = mmap(tx, BIG, prot, flags | MAP_FIXED, -1, 0);
			rx = mmap(rx, BIG, prot, flags | MAP_FIXED, -1, 0);
		}
	}
	munmap(tx, BIG);
	munmap(rx, BIG);
}

#define FLOOD	100		/* fi_tsend, then as many fi_tinject */
#define FLOOD_LEN 1024		/* above the inline size: takes a credit */
#define CREDITS	64		/* FI_XNIC_RDM_CREDITS */

/* Post a send, progressing both ends while it is refused for room. */
#define POST(call, a, b) do {						\
	ssize_t _rc;							\
	while ((_rc = (call)) == -FI_EAGAIN)				\
		sent += drain(a, b, 1);					\
	MUST(_rc);							\
} while (0)

/*
 * A receiver that does not receive holds at most CREDITS copies of a
 * peer's bounce-sized messages: past them the messages go as RTS (a
 * registered copy for fi_tinject), no send is held back, the message the
 * receiver wants first gets through, and all land in order later. On a
 * connection of its own (fresh credits, empty CQs).
 */
static void flood(const char *dev_a, const char *dev_b)
{
	struct fi_cq_tagged_entry c;
	struct fi_cq_err_entry e;
	struct side A, B, *a = &A, *b = &B;
	char m[FLOOD_LEN];
	int i, sent = 0, got = 0, bad = -1, r;

	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
	side_open(&A, dev_a);
	side_open(&B, dev_b);
	MUST(fi_av_insert(A.av, B.name, 1, &A.peer, 0, NULL));
	MUST(fi_av_insert(B.av, A.name, 1, &B.peer, 0, NULL));

	for (i = 0; i < 2 * FLOOD; i++) {
		char *p = i < FLOOD ? a->tx + i * FLOOD_LEN : m;

		fill(p, FLOOD_LEN, 1000 + i);
		if (i < FLOOD)
			POST(fi_tsend(a->ep, p, FLOOD_LEN, NULL, a->peer, 0x77,
				      NULL), a, b);
		else
			POST(fi_tinject(a->ep, p, FLOOD_LEN, a->peer, 0x77),
			     a, b);
	}
	sent += drain(a, b, 500);
	CHECK(sent == CREDITS, "%d unexpected sends: %d complete eagerly "
	      "(%d credits), the rest wait as RTS (%d)", 2 * FLOOD, CREDITS,
	      CREDITS, sent);

	strcpy(a->tx + BIG - 64, "wanted first");
	POST(fi_tsend(a->ep, a->tx + BIG - 64, 13, NULL, a->peer, 0x78, NULL),
	     a, b);
	MUST(fi_trecv(b->ep, b->rx, 64, NULL, FI_ADDR_UNSPEC, 0x78, 0, b));
	r = next(b, a, &c, NULL, &e);
	CHECK(r == 1 && !strcmp(b->rx, "wanted first"),
	      "the message the receiver wants first gets through (r %d)", r);

	for (i = 0; i < 2 * FLOOD; i++)
		MUST(fi_trecv(b->ep, b->rx + i * FLOOD_LEN, FLOOD_LEN, NULL,
			      FI_ADDR_UNSPEC, 0x77, 0, NULL));
	while (got < 2 * FLOOD && (r = next(b, a, &c, NULL, &e)) == 1)
		got++;
	for (i = 0; i < 2 * FLOOD && bad < 0; i++) {
		fill(m, FLOOD_LEN, 1000 + i);
		if (memcmp(m, b->rx + i * FLOOD_LEN, FLOOD_LEN))
			bad = i;
	}
	sent += drain(a, b, 300);
	CHECK(got == 2 * FLOOD && bad < 0 && sent == FLOOD + 1,
	      "then all %d land in order (%d, first bad %d), %d sends "
	      "complete (%d)", 2 * FLOOD, got, bad, FLOOD + 1, sent);

	/* The credits came back: an unexpected message completes eagerly. */
	POST(fi_tsend(a->ep, a->tx, FLOOD_LEN, NULL, a->peer, 0x79, NULL),
	     a, b);
	r = drain(a, b, 500);
	CHECK(r == 1, "credits returned: the next send is eager again (%d)",
	      r);
	MUST(fi_trecv(b->ep, b->rx, FLOOD_LEN, NULL, FI_ADDR_UNSPEC, 0x79, 0,
		      NULL));
	next(b, a, &c, NULL, &e);
	side_close(&A);
	side_close(&B);
}

/* Whether @fd becomes readable within @ms. */
static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/*
 * One FI_WAIT_FD CQ of B's domain shared by two endpoints: its wait fd
 * (one fd for the CQ's life) wakes for a message to the second endpoint
 * and for a loopback send, after fi_trywait() said 0.
 */
static void shared_wait(struct side *A, struct side *B)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_TAGGED,
				  .wait_obj = FI_WAIT_FD };
	struct fi_cq_tagged_entry c;
	struct fid_ep *e[2];
	struct fid_cq *cq;
	struct fid *fids[1];
	fi_addr_t to2, self2;
	int fd0 = -1, fd = -1, i, r;
	char name[64];
	size_t len = sizeof(name);
	ssize_t n = 0;

	MUST(fi_cq_open(B->domain, &cqa, &cq, NULL));
	MUST(fi_control(&cq->fid, FI_GETWAIT, &fd0));
	for (i = 0; i < 2; i++) {
		MUST(fi_endpoint(B->domain, B->info, &e[i], NULL));
		MUST(fi_ep_bind(e[i], &cq->fid, FI_TRANSMIT | FI_RECV));
		MUST(fi_ep_bind(e[i], &B->av->fid, 0));
		MUST(fi_enable(e[i]));
	}
	MUST(fi_control(&cq->fid, FI_GETWAIT, &fd));
	CHECK(fd == fd0 && fd >= 0, "one wait fd before and after enable (%d, %d)",
	      fd0, fd);
	MUST(fi_getname(&e[1]->fid, name, &len));
	MUST(fi_av_insert(A->av, name, 1, &to2, 0, NULL));
	MUST(fi_av_insert(B->av, name, 1, &self2, 0, NULL));
	fids[0] = &cq->fid;

	/* A first message connects A to the second endpoint. */
	MUST(fi_trecv(e[1], B->rx, 64, NULL, FI_ADDR_UNSPEC, 0x71, 0, B));
	MUST(fi_tinject(A->ep, "one", 4, to2, 0x71));
	for (i = 0; i < TMO_MS && n != 1; i++) {
		n = fi_cq_read(cq, &c, 1);
		fi_cq_read(A->cq, &c, 0);
		usleep(1000);
	}
	MUST(n == 1 ? 0 : -FI_ETIMEDOUT);

	MUST(fi_trecv(e[1], B->rx, 64, NULL, FI_ADDR_UNSPEC, 0x72, 0, B));
	r = fi_trywait(B->fabric, fids, 1);
	MUST(fi_tinject(A->ep, "two", 4, to2, 0x72));
	CHECK(r == 0 && readable(fd, TMO_MS),
	      "the wait fd wakes for the second endpoint's message (trywait %d)",
	      r);
	n = fi_cq_read(cq, &c, 1);
	CHECK(n == 1 && c.tag == 0x72 && !strcmp(B->rx, "two"),
	      "and the completion is there (%zd)", n);

	MUST(fi_trecv(e[1], B->rx, 64, NULL, FI_ADDR_UNSPEC, 0x73, 0, B));
	r = fi_trywait(B->fabric, fids, 1);
	MUST(fi_tinject(e[1], "me", 3, self2, 0x73));
	CHECK(r == 0 && readable(fd, 3000),
	      "the wait fd wakes for a loopback send (trywait %d)", r);
	n = fi_cq_read(cq, &c, 1);
	CHECK(n == 1 && c.tag == 0x73 && !strcmp(B->rx, "me"),
	      "and its completion is there (%zd)", n);
	for (i = 0; i < 2; i++)
		fi_close(&e[i]->fid);
	fi_close(&cq->fid);
}

#define CLOSES	60	/* endpoints closed while a thread reads the CQ */

static volatile int reading;

static void *cq_reader(void *arg)
{
	struct fi_cq_tagged_entry c;

	while (__atomic_load_n(&reading, __ATOMIC_ACQUIRE))
		fi_cq_read(arg, &c, 1);
	return NULL;
}

/*
 * FI_THREAD_SAFE: an endpoint sharing a CQ with another is closed while
 * a second thread reads that CQ, CLOSES times (before, the reader could
 * progress the endpoint while fi_close tore it down: SIGSEGV polling its
 * destroyed xnic CQ).
 */
static void close_while_read(struct side *B)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_TAGGED };
	struct fid_ep *e0, *e1;
	struct fid_cq *cq;
	pthread_t t;
	int i, closed = 0;

	MUST(fi_cq_open(B->domain, &cqa, &cq, NULL));
	MUST(fi_endpoint(B->domain, B->info, &e0, NULL));
	MUST(fi_ep_bind(e0, &cq->fid, FI_TRANSMIT | FI_RECV));
	MUST(fi_ep_bind(e0, &B->av->fid, 0));
	MUST(fi_enable(e0));
	reading = 1;
	if (pthread_create(&t, NULL, cq_reader, cq)) {
		printf("Bail out! pthread_create\n");
		exit(1);
	}
	for (i = 0; i < CLOSES; i++) {
		MUST(fi_endpoint(B->domain, B->info, &e1, NULL));
		MUST(fi_ep_bind(e1, &cq->fid, FI_TRANSMIT | FI_RECV));
		MUST(fi_ep_bind(e1, &B->av->fid, 0));
		MUST(fi_enable(e1));
		closed += fi_close(&e1->fid) == 0;
	}
	__atomic_store_n(&reading, 0, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK(closed == CLOSES && fi_close(&e0->fid) == 0 &&
	      fi_close(&cq->fid) == 0,
	      "%d endpoints closed while another thread reads their CQ (%d)",
	      CLOSES, closed);
}

/* Close @s's endpoint and open a new one at its address (a restart). */
static void ep_reopen(struct side *s)
{
	char name[64];
	size_t len = sizeof(name);

	MUST(fi_close(&s->ep->fid));
	free(s->info->src_addr);
	s->info->src_addr = malloc(s->namelen);
	memcpy(s->info->src_addr, s->name, s->namelen);
	s->info->src_addrlen = s->namelen;
	MUST(fi_endpoint(s->domain, s->info, &s->ep, NULL));
	MUST(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	MUST(fi_ep_bind(s->ep, &s->av->fid, 0));
	MUST(fi_enable(s->ep));
	MUST(fi_getname(&s->ep->fid, name, &len));
	if (len != s->namelen || memcmp(name, s->name, len)) {
		printf("Bail out! the new endpoint has another address\n");
		exit(1);
	}
}

/*
 * A tagged message of @len bytes from @a to @b (receive posted first,
 * tag @tag): 0 when its bytes landed and both ends completed, else a
 * negative FI_ errno (of fi_tsend, or of a completion).
 */
static int sent_ok(struct side *a, struct side *b, size_t len, uint64_t tag)
{
	struct fi_cq_tagged_entry c;
	struct fi_cq_err_entry e;
	ssize_t rc;
	int r;

	fill(a->tx, len, (unsigned int)tag);
	memset(b->rx, 0, len);
	MUST(fi_trecv(b->ep, b->rx, len, NULL, FI_ADDR_UNSPEC, tag, 0, b));
	rc = fi_tsend(a->ep, a->tx, len, NULL, a->peer, tag, a);
	if (rc)
		return (int)rc;
	r = next(b, a, &c, NULL, &e);
	if (r == 1 && memcmp(a->tx, b->rx, len))
		return -FI_EIO;
	if (r == 1)
		r = next(a, b, &c, NULL, &e);
	return r == 1 ? 0 : r ? r : -FI_ETIMEDOUT;
}

#define RESTARTS 110	/* x (SQ + RQ) entries > an endpoint's CQ */

static void restart_hung(int sig)
{
	(void)sig;
	printf("not ok %d - a send to or from a restarted peer hung\n",
	       num + 1);
	fflush(stdout);
	_exit(1);
}

/*
 * B restarts (a new endpoint at its address) while A keeps its endpoint
 * and its fi_addr for B. A connection that failed is replaced on the next
 * send (ofi_rxm reconnects on demand too), and a new endpoint's REQ
 * replaces the connection its address had, whether or not A has seen
 * that one fail (before: FI_ECONNRESET for ever, and a restarted peer's
 * first send spun in refused connects).
 */
static void restart(struct side *A, struct side *B)
{
	uint64_t tag = 0x7e57000000000000ULL;
	int i, r, ok = 0, err = 0;

	signal(SIGALRM, restart_hung);
	alarm(90);
	ep_reopen(B);
	drain(A, B, 300);	/* A reads its old connection's failure */
	r = sent_ok(A, B, 4096, tag++);
	CHECK(r == 0, "after the peer restarted, a send to it goes on a new "
	      "connection (%d %s)", r, fi_strerror(-r));
	ep_reopen(B);		/* A has not read the failure this time */
	r = sent_ok(B, A, BIG, tag++);
	CHECK(r == 0, "a restarted peer's first send (rendezvous) is "
	      "accepted (%d %s)", r, fi_strerror(-r));
	r = sent_ok(A, B, 100, tag++);
	CHECK(r == 0, "and the reply goes on its connection (%d %s)", r,
	      fi_strerror(-r));
	for (i = 0; i < RESTARTS; i++) {
		ep_reopen(B);
		r = sent_ok(B, A, 8192, tag++);
		if (!r)
			r = sent_ok(A, B, 8192, tag++);
		if (!r)
			ok++;
		else if (!err)
			err = r;
	}
	CHECK(ok == RESTARTS, "%d restarts of the peer: %d message pairs "
	      "landed (first error %d %s)", RESTARTS, ok, err,
	      fi_strerror(-err));
	alarm(0);
}

/*
 * The completion of @s for @ctx (progressing @o): 0, or its error as a
 * negative FI_ errno; -FI_ETIMEDOUT. Entries for other contexts (errors
 * of work posted without a completion wanted) are skipped, counted in
 * *@skipped.
 */
static int until(struct side *s, struct side *o, void *ctx, int *skipped)
{
	struct fi_cq_tagged_entry c;
	struct fi_cq_err_entry e;
	int r;

	while ((r = next(s, o, &c, NULL, &e))) {
		if (r == 1 && c.op_context == ctx)
			return 0;
		if (r < 0 && e.op_context == ctx)
			return r;
		(*skipped)++;
	}
	return -FI_ETIMEDOUT;
}

/*
 * A spends its eager credits to B (messages B has no receive for), then B
 * restarts: A's next send, short of credit, makes progress, which finds
 * the connection failed and retires it; the send goes on a new one
 * (before, it used the retired connection's destroyed QP: SIGSEGV).
 */
static void restart_spent(struct side *A, struct side *B)
{
	uint64_t tag = 0x7e58000000000000ULL;
	struct fi_cq_tagged_entry c;
	int i, r, skipped = 0;
	long long end;
	ssize_t rc;

	signal(SIGALRM, restart_hung);
	alarm(90);
	for (i = 0; i < 64; i++) {
		while ((rc = fi_tinject(A->ep, A->tx, 1024, A->peer, tag)) ==
		       -FI_EAGAIN) {
			fi_cq_read(A->cq, &c, 0);
			fi_cq_read(B->cq, &c, 0);
		}
		if (rc)
			break;
		fi_cq_read(B->cq, &c, 0);	/* B's bounce buffers back */
	}
	CHECK(i == 64, "64 unreceived eager messages sent (%zd %s)", rc,
	      fi_strerror((int)-rc));
	drain(B, A, 200);
	ep_reopen(B);
	usleep(300 * 1000);	/* A's QP fails; A does not look yet */
	fill(A->tx, 4096, 58);
	memset(B->rx, 0, 4096);
	MUST(fi_trecv(B->ep, B->rx, 4096, NULL, FI_ADDR_UNSPEC, tag + 1, 0, B));
	rc = fi_tsend(A->ep, A->tx, 4096, NULL, A->peer, tag + 1, A);
	r = rc ? (int)rc : until(B, A, B, &skipped);
	if (!r)
		r = memcmp(A->tx, B->rx, 4096) ? -FI_EIO : until(A, B, A, &skipped);
	CHECK(r == 0, "then the peer restarted: a send short of credit goes "
	      "on a new connection (%d %s; %d failed injects reported)", r,
	      fi_strerror(-r), skipped);
	/* The failed injects' errors not read yet. */
	for (end = now_ms() + 200; now_ms() < end;) {
		struct fi_cq_err_entry e;

		if (fi_cq_read(A->cq, &c, 1) == -FI_EAVAIL)
			fi_cq_readerr(A->cq, &e, 0);
	}
	alarm(0);
}

#define PEERS_CQ	"800"	/* rdm_cq_size: room for 5 connections */
#define PEERS_MAX	5
#define PEERS		(PEERS_MAX + 2)
#define PEERS_NEW	8	/* peers that come and go afterwards */
#define PEERS_TAG	0x9e00ULL

struct client {
	struct fid_cq *cq;
	struct fid_ep *ep;
};

/* An endpoint of @s's domain and AV at its address with port @port. */
static void client_open(struct side *s, struct client *c, uint16_t port)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_info *info = fi_dupinfo(s->info);
	char *name = malloc(s->namelen);

	memcpy(name, s->name, s->namelen);
	name[2] = (char)(port >> 8);	/* sin6_port, network order */
	name[3] = (char)port;
	free(info->src_addr);
	info->src_addr = name;
	info->src_addrlen = s->namelen;
	MUST(fi_cq_open(s->domain, &cqa, &c->cq, NULL));
	MUST(fi_endpoint(s->domain, info, &c->ep, NULL));
	MUST(fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV));
	MUST(fi_ep_bind(c->ep, &s->av->fid, 0));
	MUST(fi_enable(c->ep));
	fi_freeinfo(info);
}

static void client_close(struct client *c)
{
	fi_close(&c->ep->fid);
	fi_close(&c->cq->fid);
}

/* Read @cq for @ms; the number of completions. */
static int cq_drain(struct fid_cq *cq, int ms)
{
	long long end = now_ms() + ms;
	struct fi_cq_tagged_entry c;
	int n = 0;

	while (now_ms() < end)
		if (fi_cq_read(cq, &c, 1) == 1)
			n++;
	return n;
}

/*
 * An endpoint's CQ bounds the peers connected to it at once (rdm_cq_size,
 * 160 entries a connection): a server endpoint with room for PEERS_MAX
 * refuses the next peers, again when they retry (before, the second try
 * crashed the server: the connection whose accept had failed had no QP
 * to destroy), and takes them once peers that went away gave their room
 * back, as many new peers in a row as come and go (before, a connection
 * whose peer vanished kept its room for ever: a server refused every
 * peer after the 102nd).
 */
static void peers(struct side *A, struct side *B)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_TAGGED };
	static char rx[PEERS + PEERS_NEW][8];
	struct client cl[PEERS], nc;
	struct fid_cq *scq;
	struct fid_ep *srv;
	char name[64];
	size_t len = sizeof(name);
	fi_addr_t to;
	int i, r, ok = 0, refused = 0, again = 0, got;

	setenv("FI_XNIC_RDM_CQ_SIZE", PEERS_CQ, 1);
	MUST(fi_cq_open(A->domain, &cqa, &scq, NULL));
	MUST(fi_endpoint(A->domain, A->info, &srv, NULL));
	MUST(fi_ep_bind(srv, &scq->fid, FI_TRANSMIT | FI_RECV));
	MUST(fi_ep_bind(srv, &A->av->fid, 0));
	MUST(fi_enable(srv));
	unsetenv("FI_XNIC_RDM_CQ_SIZE");
	MUST(fi_getname(&srv->fid, name, &len));
	MUST(fi_av_insert(B->av, name, 1, &to, 0, NULL));
	for (i = 0; i < PEERS + PEERS_NEW; i++)
		MUST(fi_trecv(srv, rx[i], 8, NULL, FI_ADDR_UNSPEC, PEERS_TAG,
			      0xff, NULL));

	for (i = 0; i < PEERS; i++) {
		client_open(B, &cl[i], (uint16_t)(0x6e00 + i));
		r = (int)fi_tinject(cl[i].ep, "peer", 5, to, PEERS_TAG | i);
		ok += r == 0;
		refused += r == -FI_ECONNREFUSED;
	}
	got = cq_drain(scq, 300);
	CHECK(ok == PEERS_MAX && refused == PEERS - PEERS_MAX &&
	      got == PEERS_MAX,
	      "a server with room for %d connections: %d peers connect, "
	      "%d more are refused (%d, %d, %d messages)", PEERS_MAX,
	      PEERS_MAX, PEERS - PEERS_MAX, ok, refused, got);
	for (i = PEERS_MAX; i < PEERS; i++)
		again += fi_tinject(cl[i].ep, "peer", 5, to, PEERS_TAG | i) ==
			 -FI_ECONNREFUSED;
	got = cq_drain(scq, 300);
	CHECK(again == PEERS - PEERS_MAX && got == 0,
	      "they are refused again, the server goes on (%d, %d)", again,
	      got);

	for (i = 0; i < PEERS_MAX; i++)
		client_close(&cl[i]);
	got = cq_drain(scq, 500);	/* their connections fail */
	for (i = PEERS_MAX, ok = 0; i < PEERS; i++)
		ok += fi_tinject(cl[i].ep, "peer", 5, to, PEERS_TAG | i) == 0;
	for (i = 0; i < PEERS_NEW; i++) {
		client_open(B, &nc, (uint16_t)(0x6f00 + i));
		ok += fi_tinject(nc.ep, "peer", 5, to, PEERS_TAG | i) == 0;
		got += cq_drain(scq, 100);
		client_close(&nc);
	}
	got += cq_drain(scq, 300);
	CHECK(ok == PEERS - PEERS_MAX + PEERS_NEW && got == ok,
	      "peers that went away give their room back: the %d refused "
	      "and %d new ones in a row connect (%d, %d messages)",
	      PEERS - PEERS_MAX, PEERS_NEW, ok, got);
	for (i = PEERS_MAX; i < PEERS; i++)
		client_close(&cl[i]);
	fi_close(&srv->fid);
	fi_close(&scq->fid);
}

int main(int argc, char **argv)
{
	struct fi_cq_tagged_entry c, d;
	struct fi_cq_err_entry e;
	struct side A, B;
	fi_addr_t src;
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE_A DEVICE_B\n", argv[0]);
		return 2;
	}
	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
	side_open(&A, argv[1]);
	side_open(&B, argv[2]);
	MUST(fi_av_insert(A.av, B.name, 1, &A.peer, 0, NULL));
	MUST(fi_av_insert(A.av, A.name, 1, &A.self, 0, NULL));
	MUST(fi_av_insert(B.av, A.name, 1, &B.peer, 0, NULL));
	CHECK(A.info->ep_attr->type == FI_EP_RDM && !A.info->domain_attr->mr_mode,
	      "native FI_EP_RDM, no memory registration needed");

	tagged(&A, &B, 8, true, "eager, posted first");
	tagged(&A, &B, 4096, false, "eager, unexpected");
	tagged(&A, &B, BIG, true, "rendezvous, posted first");
	tagged(&A, &B, BIG, false, "rendezvous, unexpected");
	tagged(&B, &A, 100, true, "the other way, on the same connection");

	/* Tag ignore bits, and FI_MSG beside FI_TAGGED. */
	MUST(fi_trecv(B.ep, B.rx, 64, NULL, FI_ADDR_UNSPEC, 0x100, 0xff, &B));
	MUST(fi_recv(B.ep, B.rx + 64, 64, NULL, FI_ADDR_UNSPEC, &A));
	strcpy(A.tx, "msg");
	MUST(fi_send(A.ep, A.tx, 4, NULL, A.peer, NULL));
	strcpy(A.tx + 8, "tagged");
	MUST(fi_tinject(A.ep, A.tx + 8, 7, A.peer, 0x1ab));
	r = next(&B, &A, &c, NULL, &e);
	CHECK(r == 1 && c.op_context == &A && (c.flags & FI_MSG) &&
	      !strcmp(B.rx + 64, "msg"), "FI_MSG receive takes the FI_MSG send");
	r = next(&B, &A, &c, NULL, &e);
	CHECK(r == 1 && c.op_context == &B && c.tag == 0x1ab &&
	      !strcmp(B.rx, "tagged"),
	      "ignore 0xff: tag 0x1ab matches 0x100 (fi_tinject)");
	next(&A, &B, &c, NULL, &e);	/* fi_send's completion */

	/* Loopback. */
	MUST(fi_trecv(A.ep, A.rx, 64, NULL, FI_ADDR_UNSPEC, 5, 0, &A));
	strcpy(A.tx, "self");
	MUST(fi_tsend(A.ep, A.tx, 5, NULL, A.self, 5, &B));
	r = next(&A, NULL, &c, &src, &e);
	if (r == 1 && c.op_context == &B)	/* the send's, first */
		r = next(&A, NULL, &c, &src, &e);
	else		/* the send's after: not left for the later cases */
		next(&A, NULL, &d, NULL, &e);
	CHECK(r == 1 && c.op_context == &A && !strcmp(A.rx, "self") &&
	      src == A.self, "a message to itself (loopback)");

	shared_wait(&A, &B);
	close_while_read(&B);
	peek_claim(&A, &B);
	truncated(&A, &B, 100);
	truncated(&A, &B, BIG);
	remapped(&A, &B);
	flood(argv[1], argv[2]);
	bad_input(&A, &B, argv[1]);
	av_remove(&A, &B);
	av_hints(&A);
	restart_spent(&A, &B);
	restart(&A, &B);
	peers(&A, &B);

	side_close(&A);
	side_close(&B);
	printf("1..%d\n", num);
	return failed ? 1 : 0;
}
