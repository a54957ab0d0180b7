// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxniccoll - the TCP bootstrap: rank 0 listens, the other ranks
 * connect; an all-gather sends every blob to rank 0, which sends the
 * concatenation back to everyone. Every socket operation is bounded by a
 * deadline (poll(2)), so a missing or dead rank gives -ETIMEDOUT or a
 * connection error, never a hang.
 *
 * Messages (little-endian): a connecting rank sends {magic, rank,
 * nranks} and rank 0 answers {magic, 0}; an all-gather sends {magic,
 * len} and len bytes each way.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "priv.h"

#define XNIC_BS_MAGIC	0x58425354U	/* "XBST" */

/**
 * struct xnic_bs_tcp - the TCP bootstrap
 * @bs: the generic part
 * @rank: our rank
 * @nranks: number of ranks
 * @fd: rank 0: connection to rank r at @fd[r]; others: @fd[0] to rank 0
 */
struct xnic_bs_tcp {
	struct xnic_bootstrap bs;
	int rank;
	int nranks;
	int *fd;
};

static int xnic_bs_ms_left(uint64_t end)
{
	uint64_t t = xnic_coll_now_ns();

	return t >= end ? 0 : (int)((end - t + 999999) / 1000000);
}

/* Move @len bytes through @fd by @end; @out: write, else read. */
static int xnic_bs_io(int fd, void *buf, size_t len, bool out, uint64_t end,
		      const char *peer)
{
	struct pollfd pfd = { .fd = fd, .events = out ? POLLOUT : POLLIN };
	char *p = buf;
	ssize_t n;
	int ms;

	while (len) {
		ms = xnic_bs_ms_left(end);
		if (!ms)
			return xnic_coll_seterr(NULL, -ETIMEDOUT,
						"timed out %s %s", out ? "writing to" : "reading from",
						peer);
		n = poll(&pfd, 1, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return xnic_coll_seterr(NULL, -errno, "poll: %s",
						strerror(errno));
		if (!n)
			continue;
		/* The socket blocks: a send() of more than its buffer holds
		 * would wait for a peer that does not read, past @end. */
		n = out ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) :
			  recv(fd, p, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN ||
			      errno == EWOULDBLOCK))
			continue;
		if (n < 0)
			return xnic_coll_seterr(NULL, -errno, "%s %s: %s",
						out ? "writing to" : "reading from",
						peer, strerror(errno));
		if (!n)
			return xnic_coll_seterr(NULL, -ECONNRESET,
						"%s closed the connection", peer);
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void xnic_bs_peer_name(char *buf, size_t size, int rank)
{
	snprintf(buf, size, "rank %d", rank);
}

static int xnic_bs_allgather(struct xnic_bootstrap *bs, const void *mine,
			     void *all, size_t len, int timeout_ms)
{
	struct xnic_bs_tcp *t = (struct xnic_bs_tcp *)bs;
	uint64_t end = xnic_coll_now_ns() +
		       (uint64_t)(timeout_ms > 0 ? timeout_ms :
				  XNIC_COLL_DEF_TIMEOUT) * 1000000ULL;
	uint32_t hdr[2], want[2] = {
		htole32(XNIC_BS_MAGIC), htole32((uint32_t)len),
	};
	char name[32];
	int r, err;

	if (len > (1U << 24))
		return xnic_coll_seterr(NULL, -EINVAL,
					"all-gather of %zu bytes is too big", len);
	if (t->rank) {
		xnic_bs_peer_name(name, sizeof(name), 0);
		err = xnic_bs_io(t->fd[0], want, sizeof(want), true, end, name);
		if (!err)
			err = xnic_bs_io(t->fd[0], (void *)mine, len, true, end,
					 name);
		if (!err)
			err = xnic_bs_io(t->fd[0], hdr, sizeof(hdr), false, end,
					 name);
		if (!err && (hdr[0] != want[0] ||
			     le32toh(hdr[1]) != len * (size_t)t->nranks))
			err = xnic_coll_seterr(NULL, -EPROTO,
					       "rank 0 answered the all-gather with garbage");
		if (!err)
			err = xnic_bs_io(t->fd[0], all, len * (size_t)t->nranks,
					 false, end, name);
		return err;
	}
	memcpy(all, mine, len);
	for (r = 1; r < t->nranks; r++) {
		xnic_bs_peer_name(name, sizeof(name), r);
		err = xnic_bs_io(t->fd[r], hdr, sizeof(hdr), false, end, name);
		if (err)
			return err;
		if (hdr[0] != want[0] || hdr[1] != want[1])
			return xnic_coll_seterr(NULL, -EPROTO,
						"rank %d sent %u bytes to the all-gather, we %zu",
						r, le32toh(hdr[1]), len);
		err = xnic_bs_io(t->fd[r], (char *)all + (size_t)r * len, len,
				 false, end, name);
		if (err)
			return err;
	}
	want[1] = htole32((uint32_t)(len * (size_t)t->nranks));
	for (r = 1; r < t->nranks; r++) {
		xnic_bs_peer_name(name, sizeof(name), r);
		err = xnic_bs_io(t->fd[r], want, sizeof(want), true, end, name);
		if (!err)
			err = xnic_bs_io(t->fd[r], all, len * (size_t)t->nranks,
					 true, end, name);
		if (err)
			return err;
	}
	return 0;
}

static void xnic_bs_close(struct xnic_bootstrap *bs)
{
	struct xnic_bs_tcp *t = (struct xnic_bs_tcp *)bs;
	int r;

	for (r = 0; r < t->nranks; r++)
		if (t->fd[r] >= 0)
			close(t->fd[r]);
	free(t->fd);
	free(t);
}

static const struct xnic_bootstrap_ops xnic_bs_tcp_ops = {
	.allgather = xnic_bs_allgather,
	.close = xnic_bs_close,
};

static void xnic_bs_sock_setup(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* Rank 0: accept the others and check who they are. */
static int xnic_bs_accept(struct xnic_bs_tcp *t,
			  const struct sockaddr_in *sa, uint64_t end)
{
	struct pollfd pfd = { .events = POLLIN };
	uint32_t hello[3], ack[2] = { htole32(XNIC_BS_MAGIC), 0 };
	int lfd, fd = -1, one = 1, got = 0, ms, n, r, err;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return xnic_coll_seterr(NULL, -errno, "socket: %s",
					strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (const struct sockaddr *)sa, sizeof(*sa)) ||
	    listen(lfd, t->nranks)) {
		err = xnic_coll_seterr(NULL, -errno, "listening on %s port %u: %s",
				       inet_ntoa(sa->sin_addr),
				       ntohs(sa->sin_port), strerror(errno));
		close(lfd);
		return err;
	}
	pfd.fd = lfd;
	while (got < t->nranks - 1) {
		ms = xnic_bs_ms_left(end);
		if (!ms) {
			err = xnic_coll_seterr(NULL, -ETIMEDOUT,
					       "only %d of %d ranks connected in time",
					       got + 1, t->nranks);
			goto out;
		}
		n = poll(&pfd, 1, ms);
		if (n <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		xnic_bs_sock_setup(fd);
		err = xnic_bs_io(fd, hello, sizeof(hello), false, end,
				 "a connecting rank");
		if (err)
			goto out;
		r = (int)le32toh(hello[1]);
		if (le32toh(hello[0]) != XNIC_BS_MAGIC || r < 1 ||
		    r >= t->nranks || t->fd[r] >= 0 ||
		    le32toh(hello[2]) != (uint32_t)t->nranks) {
			err = xnic_coll_seterr(NULL, -EPROTO,
					       "a connection claimed to be rank %d of %u (magic %#x): duplicate, out of range, or not ours",
					       r, le32toh(hello[2]),
					       le32toh(hello[0]));
			goto out;
		}
		err = xnic_bs_io(fd, ack, sizeof(ack), true, end,
				 "a connecting rank");
		if (err)
			goto out;
		t->fd[r] = fd;
		fd = -1;
		got++;
	}
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	close(lfd);
	return err;
}

/* Other ranks: connect to rank 0, retrying until it listens. */
static int xnic_bs_connect(struct xnic_bs_tcp *t,
			   const struct sockaddr_in *sa, uint64_t end)
{
	uint32_t hello[3] = {
		htole32(XNIC_BS_MAGIC), htole32((uint32_t)t->rank),
		htole32((uint32_t)t->nranks),
	}, ack[2];
	int fd, err = 0;

	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return xnic_coll_seterr(NULL, -errno, "socket: %s",
						strerror(errno));
		if (!connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
			break;
		err = errno;
		close(fd);
		if (err != ECONNREFUSED && err != EINTR && err != EAGAIN)
			return xnic_coll_seterr(NULL, -err,
						"connecting to rank 0 at %s port %u: %s",
						inet_ntoa(sa->sin_addr),
						ntohs(sa->sin_port), strerror(err));
		if (!xnic_bs_ms_left(end))
			return xnic_coll_seterr(NULL, -ETIMEDOUT,
						"rank 0 did not listen on %s port %u in time",
						inet_ntoa(sa->sin_addr),
						ntohs(sa->sin_port));
		usleep(20000);
	}
	xnic_bs_sock_setup(fd);
	t->fd[0] = fd;
	err = xnic_bs_io(fd, hello, sizeof(hello), true, end, "rank 0");
	if (!err)
		err = xnic_bs_io(fd, ack, sizeof(ack), false, end, "rank 0");
	if (!err && le32toh(ack[0]) != XNIC_BS_MAGIC)
		err = xnic_coll_seterr(NULL, -EPROTO,
				       "rank 0 answered with garbage");
	return err;
}

int xnic_bootstrap_tcp(int rank, int nranks, const char *addr, uint16_t port,
		       int timeout_ms, struct xnic_bootstrap **bsp)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	uint64_t end = xnic_coll_now_ns() +
		       (uint64_t)(timeout_ms > 0 ? timeout_ms :
				  XNIC_COLL_DEF_TIMEOUT) * 1000000ULL;
	struct xnic_bs_tcp *t;
	int r, err;

	if (!bsp)
		return xnic_coll_seterr(NULL, -EINVAL, "bootstrap: no result pointer");
	*bsp = NULL;
	if (nranks < 1 || nranks > XNIC_COLL_MAX_RANKS || rank < 0 ||
	    rank >= nranks || !port)
		return xnic_coll_seterr(NULL, -EINVAL,
					"bootstrap: bad rank %d, nranks %d or port %u",
					rank, nranks, port);
	if (inet_pton(AF_INET, addr ? addr : "127.0.0.1", &sa.sin_addr) != 1)
		return xnic_coll_seterr(NULL, -EINVAL,
					"bootstrap: %s is not an IPv4 address", addr);
	t = calloc(1, sizeof(*t));
	if (t)
		t->fd = malloc((size_t)nranks * sizeof(*t->fd));
	if (!t || !t->fd) {
		free(t);
		return xnic_coll_seterr(NULL, -ENOMEM, "bootstrap: out of memory");
	}
	t->bs.ops = &xnic_bs_tcp_ops;
	t->rank = rank;
	t->nranks = nranks;
	for (r = 0; r < nranks; r++)
		t->fd[r] = -1;
	if (nranks == 1)
		err = 0;
	else if (!rank)
		err = xnic_bs_accept(t, &sa, end);
	else
		err = xnic_bs_connect(t, &sa, end);
	if (err) {
		xnic_bs_close(&t->bs);
		return err;
	}
	*bsp = &t->bs;
	return 0;
}

void xnic_bootstrap_close(struct xnic_bootstrap *bs)
{
	if (bs && bs->ops && bs->ops->close)
		bs->ops->close(bs);
}
