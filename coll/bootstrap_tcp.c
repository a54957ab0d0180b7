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
 * len} and len bytes each way. Rank 0 reads the hellos of several
 * connections at once and closes those that are not ours (other magic,
 * or closed before the end of the hello); a hello with our magic that
 * names an impossible rank fails the bootstrap (-EPROTO).
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

/*
 * Rank 0 keeps up to nranks + XNIC_BS_STRAYS accepted connections whose
 * hello is not complete yet, so that a stray connection (a port scanner,
 * another program) neither blocks the ranks behind it nor, without our
 * magic, fails the bootstrap.
 */
#define XNIC_BS_STRAYS	8

/**
 * struct xnic_bs_pend - a connection rank 0 accepted but has not identified
 * @fd: the socket
 * @got: bytes of @hello read so far
 * @hello: {magic, rank, nranks} as it arrives
 */
struct xnic_bs_pend {
	int fd;
	size_t got;
	uint32_t hello[3];
};

/**
 * struct xnic_bs_lobby - rank 0's listener and its pending connections
 * @lfd: the listening socket (non-blocking), -1 when not open
 * @n: pending connections in @p, oldest first
 * @max: room in @p
 * @p: the pending connections
 * @pfd: poll set: @lfd, then @p's sockets
 */
struct xnic_bs_lobby {
	int lfd;
	int n;
	int max;
	struct xnic_bs_pend *p;
	struct pollfd *pfd;
};

/* Rank 0's listening socket, non-blocking so that accept4() never waits. */
static int xnic_bs_listen(const struct sockaddr_in *sa, int backlog)
{
	int fd, one = 1, err;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return xnic_coll_seterr(NULL, -errno, "socket: %s",
					strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) ||
	    listen(fd, backlog)) {
		err = xnic_coll_seterr(NULL, -errno, "listening on %s port %u: %s",
				       inet_ntoa(sa->sin_addr),
				       ntohs(sa->sin_port), strerror(errno));
		close(fd);
		return err;
	}
	return fd;
}

/* Take pending connection @i out of @l; close it unless a rank keeps it. */
static void xnic_bs_unpend(struct xnic_bs_lobby *l, int i, bool close_fd)
{
	if (close_fd)
		close(l->p[i].fd);
	l->n--;
	memmove(&l->p[i], &l->p[i + 1], (size_t)(l->n - i) * sizeof(*l->p));
}

static void xnic_bs_lobby_close(struct xnic_bs_lobby *l)
{
	while (l->n)
		xnic_bs_unpend(l, l->n - 1, true);
	if (l->lfd >= 0)
		close(l->lfd);
	free(l->p);
	free(l->pfd);
}

/* Accept a connection; when @l is full, the oldest pending one goes. */
static void xnic_bs_admit(struct xnic_bs_lobby *l)
{
	int fd = accept4(l->lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;		/* gone meanwhile, or no room: poll again */
	xnic_bs_sock_setup(fd);
	if (l->n == l->max)
		xnic_bs_unpend(l, 0, true);
	l->p[l->n++] = (struct xnic_bs_pend){ .fd = fd };
}

/*
 * Read what has come of @p's hello, without waiting: 1 once it is
 * complete, 0 while more is to come, -1 for a stranger (not our magic,
 * or closed or failed before the end of its hello).
 */
static int xnic_bs_hello_read(struct xnic_bs_pend *p)
{
	uint32_t magic = htole32(XNIC_BS_MAGIC);
	ssize_t n;

	n = recv(p->fd, (char *)p->hello + p->got, sizeof(p->hello) - p->got,
		 MSG_DONTWAIT);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ||
		       errno == EWOULDBLOCK ? 0 : -1;
	if (!n)
		return -1;
	p->got += (size_t)n;
	if (memcmp(p->hello, &magic,
		   p->got < sizeof(magic) ? p->got : sizeof(magic)))
		return -1;
	return p->got == sizeof(p->hello);
}

/*
 * A complete hello with our magic on @fd: the rank it names joins (and
 * gets the ack), or the claim is impossible, which is a misconfigured
 * job: -EPROTO, saying so, beats a timeout.
 */
static int xnic_bs_hello_take(struct xnic_bs_tcp *t, const uint32_t *hello,
			      int fd, uint64_t end)
{
	uint32_t ack[2] = { htole32(XNIC_BS_MAGIC), 0 };
	uint32_t r = le32toh(hello[1]), n = le32toh(hello[2]);
	char name[32];
	int err;

	if (n != (uint32_t)t->nranks)
		return xnic_coll_seterr(NULL, -EPROTO,
					"a connection claimed to be rank %u of %u, but this job has %d ranks",
					r, n, t->nranks);
	if (r < 1 || r >= n)
		return xnic_coll_seterr(NULL, -EPROTO,
					"a connection claimed to be rank %u of %u: out of range",
					r, n);
	if (t->fd[r] >= 0)
		return xnic_coll_seterr(NULL, -EPROTO,
					"a second connection claimed to be rank %u of %u",
					r, n);
	xnic_bs_peer_name(name, sizeof(name), (int)r);
	err = xnic_bs_io(fd, ack, sizeof(ack), true, end, name);
	if (!err)
		t->fd[r] = fd;
	return err;
}

/* One poll(2) round over @l: hellos read, new connections accepted. */
static int xnic_bs_lobby_poll(struct xnic_bs_tcp *t, struct xnic_bs_lobby *l,
			      uint64_t end, int *got)
{
	int i, n, err;

	l->pfd[0] = (struct pollfd){ .fd = l->lfd, .events = POLLIN };
	for (i = 0; i < l->n; i++)
		l->pfd[1 + i] = (struct pollfd){
			.fd = l->p[i].fd, .events = POLLIN,
		};
	n = poll(l->pfd, (nfds_t)l->n + 1, xnic_bs_ms_left(end));
	if (n < 0 && errno != EINTR)
		return xnic_coll_seterr(NULL, -errno, "poll: %s",
					strerror(errno));
	if (n <= 0)
		return 0;
	/* Backwards: taking @p[i] out moves only those already seen. */
	for (i = l->n - 1; i >= 0 && *got < t->nranks - 1; i--) {
		if (!l->pfd[1 + i].revents)
			continue;
		n = xnic_bs_hello_read(&l->p[i]);
		if (n < 0) {
			xnic_bs_unpend(l, i, true);
		} else if (n) {
			err = xnic_bs_hello_take(t, l->p[i].hello,
						 l->p[i].fd, end);
			if (err)
				return err;
			xnic_bs_unpend(l, i, false);
			(*got)++;
		}
	}
	if (l->pfd[0].revents && *got < t->nranks - 1)
		xnic_bs_admit(l);
	return 0;
}

/* Rank 0: accept the others and check who they are. */
static int xnic_bs_accept(struct xnic_bs_tcp *t,
			  const struct sockaddr_in *sa, uint64_t end)
{
	struct xnic_bs_lobby l = {
		.lfd = -1, .max = t->nranks + XNIC_BS_STRAYS,
	};
	int got = 0, err = 0;

	l.p = calloc((size_t)l.max, sizeof(*l.p));
	l.pfd = calloc((size_t)l.max + 1, sizeof(*l.pfd));
	if (!l.p || !l.pfd) {
		err = xnic_coll_seterr(NULL, -ENOMEM, "bootstrap: out of memory");
		goto out;
	}
	l.lfd = xnic_bs_listen(sa, l.max);
	if (l.lfd < 0) {
		err = l.lfd;
		goto out;
	}
	while (!err && got < t->nranks - 1) {
		if (xnic_bs_ms_left(end))
			err = xnic_bs_lobby_poll(t, &l, end, &got);
		else
			err = xnic_coll_seterr(NULL, -ETIMEDOUT,
					       "only %d of %d ranks connected in time",
					       got + 1, t->nranks);
	}
out:
	/* Every rank is in (or we failed): the strays still pending go. */
	xnic_bs_lobby_close(&l);
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
