// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxniccoll - communicator set-up and tear-down: the device, the
 * scratch region, one RC QP per peer, and the exchange of connection
 * details through the bootstrap.
 *
 * The exchange is two all-gathers. The first carries each rank's hello
 * (struct xnic_coll_hello, then one struct xnic_coll_hello_peer per
 * rank: what rank r needs to reach us); then the ranks connect their QPs
 * through the connection manager (connect.c); the second carries each
 * rank's status once its QPs are connected, so that no rank writes
 * before every peer is ready, and a rank that failed makes the others
 * fail at once. It also carries each rank's row of the mesh matrix, from
 * which every rank chooses the all-reduce algorithm (hier.c).
 * A rank that fails before the first exchange still takes part in both
 * with its error in the status field. Integers are little-endian.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "priv.h"

/**
 * struct xnic_coll_hello - a rank's part of the first exchange
 * @magic: XNIC_COLL_MAGIC
 * @version: XNIC_COLL_VERSION
 * @status: 0, or the negative errno the rank failed with
 * @rank: the sender's rank
 * @nranks: its idea of the communicator size
 * @node_id: its device's node id
 * @chunk: its chunk size, bytes
 * @slots: its slots per channel
 * @rkey: rkey of its scratch region
 * @algo: the enum xnic_coll_algo it asks for
 * @service: the CM service id it listens on for the ranks above it
 */
struct xnic_coll_hello {
	uint32_t magic;
	uint32_t version;
	int32_t status;
	uint32_t rank;
	uint32_t nranks;
	uint32_t node_id;
	uint32_t chunk;
	uint32_t slots;
	uint32_t rkey;
	uint32_t algo;
	uint64_t service;
};

/**
 * struct xnic_coll_hello_peer - what one peer needs to reach us
 * @qpn: our QP for that peer
 * @reserved: 0
 * @rs_addr: our RS inbox for that peer, slot 0
 * @cp_addr: our COPY inbox for that peer, slot 0
 */
struct xnic_coll_hello_peer {
	uint32_t qpn;
	uint32_t reserved;
	uint64_t rs_addr;
	uint64_t cp_addr;
};

/* The second exchange; @mesh: xnic_coll_mesh_row(). */
struct xnic_coll_ready {
	uint32_t magic;
	int32_t status;
	uint8_t mesh[XNIC_COLL_MAX_RANKS / 8];
};

int xnic_comm_rank(const struct xnic_comm *comm)
{
	return comm->rank;
}

int xnic_comm_nranks(const struct xnic_comm *comm)
{
	return comm->nranks;
}

static int xnic_coll_check_cfg(const struct xnic_comm_cfg *cfg)
{
	if (!cfg)
		return xnic_coll_seterr(NULL, -EINVAL, "comm_init: no configuration");
	if (cfg->nranks < 1 || cfg->nranks > XNIC_COLL_MAX_RANKS)
		return xnic_coll_seterr(NULL, -EINVAL,
					"comm_init: nranks %d is not in 1..%d",
					cfg->nranks, XNIC_COLL_MAX_RANKS);
	if (cfg->rank < 0 || cfg->rank >= cfg->nranks)
		return xnic_coll_seterr(NULL, -EINVAL,
					"comm_init: rank %d is not in 0..%d",
					cfg->rank, cfg->nranks - 1);
	if (cfg->nranks > 1 && (!cfg->device || !cfg->bootstrap ||
				!cfg->bootstrap->ops ||
				!cfg->bootstrap->ops->allgather))
		return xnic_coll_seterr(NULL, -EINVAL,
					"comm_init: a device and a bootstrap are needed");
	if (cfg->slots > XNIC_COLL_MAX_SLOTS)
		return xnic_coll_seterr(NULL, -EINVAL,
					"comm_init: %u slots, at most %u",
					cfg->slots, XNIC_COLL_MAX_SLOTS);
	if (cfg->chunk_bytes && (cfg->chunk_bytes < 4 ||
				 cfg->chunk_bytes > (1U << 30)))
		return xnic_coll_seterr(NULL, -EINVAL,
					"comm_init: chunk of %zu bytes is not in 4..1 GiB",
					cfg->chunk_bytes);
	if (cfg->timeout_ms < 0)
		return xnic_coll_seterr(NULL, -EINVAL,
					"comm_init: negative timeout");
	if (cfg->algo < XNIC_COLL_ALGO_AUTO || cfg->algo > XNIC_COLL_ALGO_HIER)
		return xnic_coll_seterr(NULL, -EINVAL,
					"comm_init: unknown all-reduce algorithm %d",
					cfg->algo);
	return 0;
}

/* cfg->algo, or for AUTO the environment's XNIC_COLL_ALGO. */
static int xnic_coll_want_algo(const struct xnic_comm_cfg *cfg, int *algo)
{
	const char *e = getenv("XNIC_COLL_ALGO");

	*algo = cfg->algo;
	if (*algo != XNIC_COLL_ALGO_AUTO || !e || !*e || !strcmp(e, "auto"))
		return 0;
	if (!strcmp(e, "flat"))
		*algo = XNIC_COLL_ALGO_FLAT;
	else if (!strcmp(e, "hier"))
		*algo = XNIC_COLL_ALGO_HIER;
	else
		return xnic_coll_seterr(NULL, -EINVAL,
					"comm_init: XNIC_COLL_ALGO is '%.32s', not flat, hier or auto",
					e);
	return 0;
}

static int xnic_coll_alloc(struct xnic_comm *c, unsigned int n)
{
	int r;

	c->peers = calloc(n, sizeof(*c->peers));
	c->off = calloc(n, sizeof(*c->off));
	c->len = calloc(n, sizeof(*c->len));
	c->nch = calloc(n, sizeof(*c->nch));
	c->srcs = calloc(n, sizeof(*c->srcs));
	c->ag_ref = calloc(c->lay.slots, sizeof(*c->ag_ref));
	c->all = calloc(n, sizeof(*c->all));
	if (!c->peers || !c->off || !c->len || !c->nch || !c->srcs ||
	    !c->ag_ref || !c->all)
		return -ENOMEM;
	for (r = 0; r < (int)n; r++) {
		struct xnic_coll_peer *p = &c->peers[r];
		int ch;

		c->all[r] = r;
		if (r == c->rank)
			continue;
		p->pi = xnic_coll_peer_index((unsigned int)c->rank,
					     (unsigned int)r);
		for (ch = 0; ch < 2; ch++) {
			p->rx[ch].imm = calloc(c->lay.slots, sizeof(uint32_t));
			p->rx[ch].len = calloc(c->lay.slots, sizeof(uint32_t));
			if (!p->rx[ch].imm || !p->rx[ch].len)
				return -ENOMEM;
		}
	}
	return 0;
}

static void xnic_coll_free(struct xnic_comm *c)
{
	int r, ch;

	xnic_cm_unlisten(c->listener);
	if (c->ctx)
		xnic_close(c->ctx);	/* QPs, CQ, MR, PD with it */
	if (c->region)
		munmap(c->region, c->region_len);
	for (r = 0; c->peers && r < c->nranks; r++) {
		for (ch = 0; ch < 2; ch++) {
			free(c->peers[r].rx[ch].imm);
			free(c->peers[r].rx[ch].len);
		}
	}
	free(c->peers);
	free(c->off);
	free(c->len);
	free(c->nch);
	free(c->srcs);
	free(c->ag_ref);
	free(c->all);
	free(c->local);
	free(c->across);
	free(c);
}

/* Open the device, register the region, create the CQ and the QPs. */
static int xnic_coll_setup(struct xnic_comm *c, const char *device,
			   unsigned int tclass)
{
	struct xnic_qp_attr attr = {
		.comp_mask = XNIC_QP_ATTR_RNR_RETRY | XNIC_QP_ATTR_TCLASS,
		.rnr_retry = XNIC_QP_RNR_INFINITE,
		.tclass = tclass,
	};
	struct xnic_qp_cap cap;
	unsigned int cqe;
	int r, k, err;

	err = xnic_open(device, &c->ctx);
	if (err)
		return xnic_coll_seterr(c, err, "opening device %s: %s", device,
					xnic_strerror(err));
	err = xnic_alloc_pd(c->ctx, &c->pd);
	if (err)
		return xnic_coll_seterr(c, err, "allocating a PD: %s",
					xnic_strerror(err));
	c->region = mmap(NULL, c->region_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->region == MAP_FAILED) {
		c->region = NULL;
		return xnic_coll_seterr(c, -ENOMEM,
					"allocating %zu bytes of scratch memory",
					c->region_len);
	}
	/* A child forked later must not share (copy-on-write) pinned pages. */
	madvise(c->region, c->region_len, MADV_DONTFORK);
	err = xnic_reg_mr(c->pd, c->region, c->region_len,
			  XNIC_ACCESS_LOCAL_WRITE | XNIC_ACCESS_REMOTE_WRITE,
			  &c->mr);
	if (err)
		return xnic_coll_seterr(c, err,
					"registering %zu bytes of scratch memory: %s",
					c->region_len, xnic_strerror(err));
	/* Room for every WQE of every QP: the CQ can never overflow. */
	cqe = (unsigned int)(c->nranks - 1) *
	      (XNIC_COLL_SQ_DEPTH + XNIC_COLL_RQ_DEPTH) + 16;
	err = xnic_create_cq(c->ctx, cqe, &c->cq);
	if (err)
		return xnic_coll_seterr(c, err, "creating a CQ of %u entries: %s",
					cqe, xnic_strerror(err));
	for (r = 0; r < c->nranks; r++) {
		if (r == c->rank)
			continue;
		cap = (struct xnic_qp_cap) {
			.max_send_wr = XNIC_COLL_SQ_DEPTH,
			.max_recv_wr = XNIC_COLL_RQ_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = xnic_ctx_info(c->ctx)->max_inline,
		};
		/* A rank late to post its receive holds the sender (RNR). */
		err = xnic_create_qp_ex(c->pd, c->cq, c->cq, &cap, &attr,
					&c->peers[r].qp);
		if (err)
			return xnic_coll_seterr(c, err,
						"creating the QP for rank %d: %s",
						r, xnic_strerror(err));
		c->max_inline = cap.max_inline_data;
		for (k = 0; k < (int)XNIC_COLL_RQ_DEPTH; k++) {
			err = xnic_post_recv(c->peers[r].qp, NULL, 0,
					     (uint64_t)r);
			if (err)
				return xnic_coll_seterr(c, err,
							"posting receives for rank %d: %s",
							r, xnic_strerror(err));
		}
	}
	return xnic_coll_listen(c, &c->service);
}

/* Run one bootstrap all-gather; the message says which step failed. */
static int xnic_coll_allgather(struct xnic_comm *c,
			       struct xnic_bootstrap *bs, const void *mine,
			       void *all, size_t len, const char *step)
{
	int err;

	xnic_coll_clear_tls_error();
	err = bs->ops->allgather(bs, mine, all, len, c->timeout_ms);
	if (!err)
		return 0;
	if (err > 0)
		err = -EPROTO;
	if (xnic_coll_tls_error()[0]) {
		char msg[XNIC_COLL_ERRLEN];

		snprintf(msg, sizeof(msg), "%s", xnic_coll_tls_error());
		return xnic_coll_seterr(c, err, "bootstrap (%s): %s", step, msg);
	}
	return xnic_coll_seterr(c, err, "bootstrap (%s): %s", step,
				strerror(-err));
}

/* Check the other ranks' hellos and take what we need from them. */
static int xnic_coll_learn(struct xnic_comm *c, const char *all,
			   size_t blob)
{
	const struct xnic_coll_hello *h;
	const struct xnic_coll_hello_peer *e;
	int32_t st;
	int r, s;

	for (r = 0; r < c->nranks; r++) {
		h = (const void *)(all + r * blob);
		if (le32toh(h->magic) != XNIC_COLL_MAGIC ||
		    le32toh(h->version) != XNIC_COLL_VERSION)
			return xnic_coll_seterr(c, -EPROTO,
						"rank %d speaks another protocol (magic %#x, version %u)",
						r, le32toh(h->magic),
						le32toh(h->version));
		st = (int32_t)le32toh((uint32_t)h->status);
		if (st)
			return xnic_coll_seterr(c, -ECONNABORTED,
						"rank %d failed to set up: %s",
						r, strerror(-st));
		if (le32toh(h->rank) != (uint32_t)r ||
		    le32toh(h->nranks) != (uint32_t)c->nranks)
			return xnic_coll_seterr(c, -EINVAL,
						"rank %d says it is rank %u of %u, we count %d ranks",
						r, le32toh(h->rank),
						le32toh(h->nranks), c->nranks);
		if (le32toh(h->algo) != (uint32_t)c->want_algo)
			return xnic_coll_seterr(c, -EINVAL,
						"rank %d asks for all-reduce algorithm %u, we for %d (cfg.algo or XNIC_COLL_ALGO)",
						r, le32toh(h->algo), c->want_algo);
		if (le32toh(h->chunk) != c->lay.chunk ||
		    le32toh(h->slots) != c->lay.slots)
			return xnic_coll_seterr(c, -EINVAL,
						"rank %d uses %u-byte chunks and %u slots, we %zu and %u",
						r, le32toh(h->chunk),
						le32toh(h->slots), c->lay.chunk,
						c->lay.slots);
		for (s = 0; s < r; s++) {
			const struct xnic_coll_hello *o =
				(const void *)(all + s * blob);

			if (o->node_id == h->node_id)
				return xnic_coll_seterr(c, -EINVAL,
							"ranks %d and %d are both on node %u: each rank needs its own device",
							s, r, le32toh(h->node_id));
		}
		if (r == c->rank)
			continue;
		e = (const void *)(all + r * blob + sizeof(*h) +
				   (size_t)c->rank * sizeof(*e));
		c->peers[r].node = le32toh(h->node_id);
		c->peers[r].rkey = le32toh(h->rkey);
		c->peers[r].tx[XNIC_COLL_CH_RS].raddr = le64toh(e->rs_addr);
		c->peers[r].tx[XNIC_COLL_CH_COPY].raddr = le64toh(e->cp_addr);
	}
	return 0;
}

/* Fill our hello; @status is 0 or the error we failed with. */
static void xnic_coll_hello_fill(struct xnic_comm *c, char *blob, int status,
				 uint32_t node)
{
	struct xnic_coll_hello *h = (void *)blob;
	struct xnic_coll_hello_peer *e = (void *)(blob + sizeof(*h));
	int r;

	h->magic = htole32(XNIC_COLL_MAGIC);
	h->version = htole32(XNIC_COLL_VERSION);
	h->status = (int32_t)htole32((uint32_t)status);
	h->rank = htole32((uint32_t)c->rank);
	h->nranks = htole32((uint32_t)c->nranks);
	h->node_id = htole32(node);
	h->chunk = htole32((uint32_t)c->lay.chunk);
	h->slots = htole32(c->lay.slots);
	h->rkey = htole32(c->mr ? c->mr->rkey : 0);
	h->algo = htole32((uint32_t)c->want_algo);
	h->service = htole64(c->service);
	if (status)
		return;
	for (r = 0; r < c->nranks; r++) {
		struct xnic_coll_peer *p = &c->peers[r];

		if (r == c->rank)
			continue;
		e[r].qpn = htole32(p->qp->qpn);
		e[r].rs_addr = htole64((uintptr_t)c->region +
				       xnic_coll_off_rs_in(&c->lay, p->pi, 0));
		e[r].cp_addr = htole64((uintptr_t)c->region +
				       xnic_coll_off_cp_in(&c->lay, p->pi, 0));
	}
}

/*
 * The algorithm, from every rank's mesh row; the flat one without asking
 * the kernel when the hierarchical one cannot be (fewer than 4 ranks) or
 * is not wanted.
 */
static int xnic_coll_choose(struct xnic_comm *c,
			    const struct xnic_coll_ready *readies)
{
	const size_t rb = XNIC_COLL_MAX_RANKS / 8;
	uint8_t *rows;
	int r, err;

	if (c->nranks < 4 || c->want_algo == XNIC_COLL_ALGO_FLAT)
		return xnic_coll_pick_algo(c, c->want_algo, NULL);
	rows = malloc((size_t)c->nranks * rb);
	if (!rows)
		return xnic_coll_seterr(c, -ENOMEM, "out of memory");
	for (r = 0; r < c->nranks; r++)
		memcpy(rows + (size_t)r * rb, readies[r].mesh, rb);
	err = xnic_coll_pick_algo(c, c->want_algo, rows);
	free(rows);
	return err;
}

/* The two exchanges and the connects; @err is our set-up result. */
static int xnic_coll_exchange(struct xnic_comm *c, struct xnic_bootstrap *bs,
			      const char *device, int err)
{
	size_t blob = sizeof(struct xnic_coll_hello) +
		      (size_t)c->nranks * sizeof(struct xnic_coll_hello_peer);
	struct xnic_coll_ready ready, *readies = NULL;
	char *mine = NULL, *all = NULL;
	uint64_t *services = NULL;
	uint32_t *qpns = NULL, node = 0;
	int r, k, ret;

	mine = calloc(1, blob);
	all = calloc((size_t)c->nranks, blob);
	services = calloc((size_t)c->nranks, sizeof(*services));
	qpns = calloc((size_t)c->nranks, sizeof(*qpns));
	readies = calloc((size_t)c->nranks, sizeof(*readies));
	if (!mine || !all || !services || !qpns || !readies) {
		/* Cannot even tell the others: they will time out. */
		ret = err ? err : xnic_coll_seterr(c, -ENOMEM, "out of memory");
		goto out;
	}
	if (!err)
		node = xnic_ctx_info(c->ctx)->node_id;
	xnic_coll_hello_fill(c, mine, err, node);
	ret = xnic_coll_allgather(c, bs, mine, all, blob, "connection details");
	if (ret)
		goto out;	/* the bootstrap is broken: nobody goes on */
	if (!err)
		err = xnic_coll_learn(c, all, blob);
	for (r = 0; !err && r < c->nranks; r++) {
		const struct xnic_coll_hello *h = (const void *)(all + r * blob);
		const struct xnic_coll_hello_peer *e;

		if (r == c->rank)
			continue;
		e = (const void *)(all + r * blob + sizeof(*h) +
				   (size_t)c->rank * sizeof(*e));
		services[r] = le64toh(h->service);
		qpns[r] = le32toh(e->qpn);
	}
	if (!err)
		err = xnic_coll_connect_peers(c, services, qpns);
	/* Every rank joins the second exchange, failed or not. */
	memset(&ready, 0, sizeof(ready));
	ready.magic = htole32(XNIC_COLL_MAGIC);
	ready.status = (int32_t)htole32((uint32_t)err);
	if (!err && c->nranks >= 4 && c->want_algo != XNIC_COLL_ALGO_FLAT)
		xnic_coll_mesh_row(c, device, ready.mesh);
	ret = xnic_coll_allgather(c, bs, &ready, readies, sizeof(ready),
				  "ready");
	if (err)
		ret = err;	/* our own message stays */
	/*
	 * Name the rank that failed first: one that failed with another
	 * error than -ECONNABORTED, which is what a rank told to give up by
	 * another (connect.c's abort notice) fails with.
	 */
	for (k = 0; !ret && k < 2; k++) {
		for (r = 0; !ret && r < c->nranks; r++) {
			int32_t st = (int32_t)le32toh((uint32_t)readies[r].status);

			if (st && (k || st != -ECONNABORTED))
				ret = xnic_coll_seterr(c, -ECONNABORTED,
						       "rank %d failed to connect: %s",
						       r, strerror(-st));
		}
	}
	if (!ret)
		ret = xnic_coll_choose(c, readies);
out:
	free(mine);
	free(all);
	free(services);
	free(qpns);
	free(readies);
	return ret;
}

int xnic_comm_init(struct xnic_comm **commp, const struct xnic_comm_cfg *cfg)
{
	struct xnic_comm *c;
	size_t chunk;
	int err;

	if (!commp)
		return xnic_coll_seterr(NULL, -EINVAL, "comm_init: no result pointer");
	*commp = NULL;
	err = xnic_coll_check_cfg(cfg);
	if (err)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return xnic_coll_seterr(NULL, -ENOMEM, "comm_init: out of memory");
	err = xnic_coll_want_algo(cfg, &c->want_algo);
	if (err) {
		free(c);
		return err;
	}
	c->algo = XNIC_COLL_ALGO_FLAT;
	c->rank = cfg->rank;
	c->nranks = cfg->nranks;
	c->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : XNIC_COLL_DEF_TIMEOUT;
	c->spin_us = cfg->spin_us;
	c->max_inflight = cfg->max_inflight ? cfg->max_inflight :
					      XNIC_COLL_DEF_INFLIGHT;
	chunk = cfg->chunk_bytes ? cfg->chunk_bytes : XNIC_COLL_DEF_CHUNK;
	c->lay.chunk = chunk & ~(size_t)3;
	c->lay.slots = cfg->slots ? cfg->slots : XNIC_COLL_DEF_SLOTS;
	c->lay.npeers = (unsigned int)(c->nranks - 1);
	c->region_len = xnic_coll_region_size(&c->lay);
	if (c->nranks > 1 && !c->region_len) {
		free(c);
		return xnic_coll_seterr(NULL, -EINVAL,
					"comm_init: scratch region size overflows");
	}
	err = xnic_coll_alloc(c, (unsigned int)c->nranks);
	if (err) {
		xnic_coll_free(c);
		return xnic_coll_seterr(NULL, err, "comm_init: out of memory");
	}
	if (c->nranks == 1) {
		*commp = c;
		return 0;
	}
	err = xnic_coll_setup(c, cfg->device, cfg->tclass);
	err = xnic_coll_exchange(c, cfg->bootstrap, cfg->device, err);
	if (err) {
		char msg[XNIC_COLL_ERRLEN];

		snprintf(msg, sizeof(msg), "%s", c->err);
		xnic_coll_free(c);
		return xnic_coll_seterr(NULL, err, "comm_init: rank %d: %s",
					cfg->rank, msg);
	}
	*commp = c;
	return 0;
}

void xnic_comm_destroy(struct xnic_comm *comm)
{
	if (!comm)
		return;
	xnic_coll_cancel_all(comm);
	if (comm->ctx && comm->cq)
		xnic_coll_drain(comm);
	xnic_coll_free(comm);
}
