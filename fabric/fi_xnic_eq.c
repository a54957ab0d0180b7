// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Event queue: a locked list of events written by the CM threads (and by
 * fi_eq_write), read with fi_eq_read/sread (fi_eq(3)). An eventfd is
 * readable while the queue is not empty: FI_GETWAIT hands it out.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fi_xnic.h"

#define XNIC_EQ_ENTRY_MAX (sizeof(struct fi_eq_cm_entry) + FI_XNIC_CM_DATA_MAX)

struct fi_xnic_eq_ev {
	struct fi_xnic_eq_ev *next;
	uint32_t event;
	bool is_err;
	bool connreq;		/* FI_CONNREQ of the provider: info is ours */
	size_t len;
	struct fi_eq_err_entry err;
	size_t err_len;
	uint8_t err_data[FI_XNIC_CM_DATA_MAX];
	union {
		struct fi_eq_cm_entry cm;
		uint8_t bytes[XNIC_EQ_ENTRY_MAX];
	} u;
};

static void xnic_eq_kick(struct fi_xnic_eq *eq)
{
	uint64_t one = 1;

	if (write(eq->fd, &one, sizeof(one)) < 0)
		XNIC_WARN(FI_LOG_EQ, "eventfd write: %s\n", strerror(errno));
	pthread_cond_broadcast(&eq->cond);
}

static void xnic_eq_push(struct fi_xnic_eq *eq, struct fi_xnic_eq_ev *ev)
{
	pthread_mutex_lock(&eq->lock);
	if (eq->tail)
		eq->tail->next = ev;
	else
		eq->head = ev;
	eq->tail = ev;
	xnic_eq_kick(eq);
	pthread_mutex_unlock(&eq->lock);
}

/*
 * An event nobody will read. A FI_CONNREQ the provider queued: its
 * fi_info and request are ours (fi_eq_write's events are the writer's).
 * Not with the EQ's lock held: this takes the passive endpoint's.
 */
static void xnic_eq_free_ev(struct fi_xnic_eq_ev *ev)
{
	if (ev->connreq)
		fi_xnic_connreq_unread(ev->u.cm.info);
	free(ev);
}

static int xnic_eq_put(struct fi_xnic_eq *eq, uint32_t event,
		       const void *data, size_t len, bool connreq)
{
	struct fi_xnic_eq_ev *ev;

	if (len > XNIC_EQ_ENTRY_MAX)
		return -FI_EINVAL;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	ev->connreq = connreq;
	ev->len = len;
	memcpy(ev->u.bytes, data, len);
	xnic_eq_push(eq, ev);
	return 0;
}

int fi_xnic_eq_put(struct fi_xnic_eq *eq, uint32_t event, const void *data,
		   size_t len)
{
	return xnic_eq_put(eq, event, data, len, false);
}

int fi_xnic_eq_put_connreq(struct fi_xnic_eq *eq,
			   const struct fi_eq_cm_entry *e, size_t len)
{
	return xnic_eq_put(eq, FI_CONNREQ, e, len, true);
}

int fi_xnic_eq_put_err(struct fi_xnic_eq *eq, fid_t fid, void *context,
		       int err, int prov_errno, const void *cm, size_t cmlen)
{
	struct fi_xnic_eq_ev *ev;

	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -FI_ENOMEM;
	ev->is_err = true;
	ev->err.fid = fid;
	ev->err.context = context;
	ev->err.err = err;
	ev->err.prov_errno = prov_errno;
	if (cm && cmlen) {
		ev->err_len = cmlen < sizeof(ev->err_data) ? cmlen :
			      sizeof(ev->err_data);
		memcpy(ev->err_data, cm, ev->err_len);
	}
	xnic_eq_push(eq, ev);
	return 0;
}

/* Called with the lock held, the queue empty: the wait fd goes quiet. */
static void xnic_eq_quiet(struct fi_xnic_eq *eq)
{
	uint64_t v;

	eq->tail = NULL;
	if (read(eq->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		XNIC_WARN(FI_LOG_EQ, "eventfd read: %s\n", strerror(errno));
}

/* Called with the lock held: take the head off the queue. */
static void xnic_eq_pop(struct fi_xnic_eq *eq)
{
	eq->head = eq->head->next;
	if (!eq->head)
		xnic_eq_quiet(eq);
}

void fi_xnic_eq_purge(struct fi_xnic_eq *eq, fid_t fid)
{
	struct fi_xnic_eq_ev **pp, *ev, *gone = NULL;

	pthread_mutex_lock(&eq->lock);
	eq->tail = NULL;
	for (pp = &eq->head; (ev = *pp);) {
		fid_t who = ev->is_err ? ev->err.fid : ev->u.cm.fid;

		if (who == fid) {
			*pp = ev->next;
			ev->next = gone;
			gone = ev;
			continue;
		}
		eq->tail = ev;
		pp = &ev->next;
	}
	/* Else a waiter on FI_GETWAIT would wake for nothing, for ever. */
	if (!eq->head)
		xnic_eq_quiet(eq);
	pthread_mutex_unlock(&eq->lock);
	while ((ev = gone)) {
		gone = ev->next;
		xnic_eq_free_ev(ev);
	}
}

static ssize_t xnic_eq_read_locked(struct fi_xnic_eq *eq, uint32_t *event,
				   void *buf, size_t len, uint64_t flags)
{
	struct fi_xnic_eq_ev *ev = eq->head;

	if (!ev)
		return -FI_EAGAIN;
	if (ev->is_err)
		return -FI_EAVAIL;
	if (len < ev->len)
		return -FI_ETOOSMALL;
	if (event)
		*event = ev->event;
	memcpy(buf, ev->u.bytes, ev->len);
	if (flags & FI_PEEK)
		return (ssize_t)ev->len;
	xnic_eq_pop(eq);
	len = ev->len;
	free(ev);	/* the fi_info of a CONNREQ now belongs to the user */
	return (ssize_t)len;
}

static ssize_t xnic_eq_read(struct fid_eq *eq_fid, uint32_t *event,
			    void *buf, size_t len, uint64_t flags)
{
	struct fi_xnic_eq *eq = container_of(eq_fid, struct fi_xnic_eq, eq_fid);
	ssize_t ret;

	if (!buf && len)
		return -FI_EINVAL;
	pthread_mutex_lock(&eq->lock);
	ret = xnic_eq_read_locked(eq, event, buf, len, flags);
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t xnic_eq_sread(struct fid_eq *eq_fid, uint32_t *event,
			     void *buf, size_t len, int timeout,
			     uint64_t flags)
{
	struct fi_xnic_eq *eq = container_of(eq_fid, struct fi_xnic_eq, eq_fid);
	struct timespec end;
	ssize_t ret;

	if (!buf && len)
		return -FI_EINVAL;
	clock_gettime(CLOCK_REALTIME, &end);
	if (timeout >= 0) {
		end.tv_sec += timeout / 1000;
		end.tv_nsec += (long)(timeout % 1000) * 1000000L;
		if (end.tv_nsec >= 1000000000L) {
			end.tv_sec++;
			end.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&eq->lock);
	while (!eq->head) {
		int err;

		if (timeout < 0)
			err = pthread_cond_wait(&eq->cond, &eq->lock);
		else
			err = pthread_cond_timedwait(&eq->cond, &eq->lock,
						     &end);
		if (err == ETIMEDOUT)
			break;
	}
	ret = xnic_eq_read_locked(eq, event, buf, len, flags);
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t xnic_eq_readerr(struct fid_eq *eq_fid,
			       struct fi_eq_err_entry *buf, uint64_t flags)
{
	struct fi_xnic_eq *eq = container_of(eq_fid, struct fi_xnic_eq, eq_fid);
	struct fi_xnic_eq_ev *ev;
	void *user_data;
	size_t user_size;

	if (!buf)
		return -FI_EINVAL;
	pthread_mutex_lock(&eq->lock);
	ev = eq->head;
	if (!ev || !ev->is_err) {
		pthread_mutex_unlock(&eq->lock);
		return -FI_EAGAIN;
	}
	/* API >= 1.5: a user err_data buffer of err_data_size is filled. */
	user_data = buf->err_data;
	user_size = buf->err_data_size;
	*buf = ev->err;
	if (user_data && user_size) {
		size_t n = ev->err_len < user_size ? ev->err_len : user_size;

		memcpy(user_data, ev->err_data, n);
		buf->err_data = user_data;
		buf->err_data_size = n;
	} else {
		buf->err_data = NULL;
		buf->err_data_size = 0;
	}
	if (!(flags & FI_PEEK)) {
		xnic_eq_pop(eq);
		free(ev);
	}
	pthread_mutex_unlock(&eq->lock);
	return sizeof(*buf);
}

static ssize_t xnic_eq_write(struct fid_eq *eq_fid, uint32_t event,
			     const void *buf, size_t len, uint64_t flags)
{
	struct fi_xnic_eq *eq = container_of(eq_fid, struct fi_xnic_eq, eq_fid);
	int ret;

	(void)flags;
	if (!buf && len)
		return -FI_EINVAL;
	ret = fi_xnic_eq_put(eq, event, buf, len);
	return ret ? ret : (ssize_t)len;
}

static const char *xnic_eq_strerror(struct fid_eq *eq, int prov_errno,
				    const void *err_data, char *buf,
				    size_t len)
{
	const char *s = xnic_cm_reject_str((unsigned int)prov_errno);

	(void)eq;
	(void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return s;
}

static int xnic_eq_close(struct fid *fid)
{
	struct fi_xnic_eq *eq = container_of(fid, struct fi_xnic_eq,
					     eq_fid.fid);
	struct fi_xnic_eq_ev *ev;

	if (eq->refs)
		return -FI_EBUSY;
	while ((ev = eq->head)) {
		eq->head = ev->next;
		xnic_eq_free_ev(ev);
	}
	close(eq->fd);
	pthread_cond_destroy(&eq->cond);
	pthread_mutex_destroy(&eq->lock);
	free(eq);
	return 0;
}

static int xnic_eq_control(struct fid *fid, int command, void *arg)
{
	struct fi_xnic_eq *eq = container_of(fid, struct fi_xnic_eq,
					     eq_fid.fid);

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	if (!arg)
		return -FI_EINVAL;
	*(int *)arg = eq->fd;
	return 0;
}

static struct fi_ops xnic_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = xnic_eq_close,
	.bind = fi_xnic_no_bind,
	.control = xnic_eq_control,
	.ops_open = fi_xnic_no_ops_open,
};

static struct fi_ops_eq xnic_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = xnic_eq_read,
	.readerr = xnic_eq_readerr,
	.write = xnic_eq_write,
	.sread = xnic_eq_sread,
	.strerror = xnic_eq_strerror,
};

int fi_xnic_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		    struct fid_eq **eqp, void *context)
{
	struct fi_xnic_eq *eq;

	(void)fabric;
	if (!attr || !eqp)
		return -FI_EINVAL;
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		break;
	default:
		return -FI_ENOSYS;
	}
	if (attr->signaling_vector)
		return -FI_ENOSYS;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (eq->fd < 0) {
		free(eq);
		return -FI_ENOMEM;
	}
	pthread_mutex_init(&eq->lock, NULL);
	pthread_cond_init(&eq->cond, NULL);
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &xnic_eq_fi_ops;
	eq->eq_fid.ops = &xnic_eq_ops;
	*eqp = &eq->eq_fid;
	return 0;
}
