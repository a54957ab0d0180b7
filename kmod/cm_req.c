// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - connection manager: what applications ask for through netlink
 * (cm_netlink.c): listen, unlisten, connect, accept, reject, RTU, and the
 * release of what a closed socket owned. Each request takes the device's
 * CM lock; the protocol side is cm.c. Documentation/cm.rst.
 */
#include <linux/slab.h>
#include <linux/string.h>

#include "transport_priv.h"
#include "cm_priv.h"

/**
 * xnic_cm_listen() - listen on a service id
 * @xdev: the device
 * @o: the requesting socket, which owns the listener
 * @service_id: the service id
 *
 * Context: process context, RTNL held (the device stays).
 * Return: 0; -EADDRINUSE when the device has a listener on @service_id;
 * -ENOSPC at XNIC_CM_MAX_LISTENERS; -ENOMEM.
 */
int xnic_cm_listen(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		   u64 service_id)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_listener *l;
	int err = 0;

	l = kzalloc(sizeof(*l), XNIC_GFP_ACCOUNT);
	if (!l)
		return -ENOMEM;
	l->service_id = service_id;
	l->owner = *o;
	spin_lock_bh(&cm->lock);
	if (xnic_cm_find_listener(cm, service_id))
		err = -EADDRINUSE;
	else if (cm->nr_listeners >= XNIC_CM_MAX_LISTENERS)
		err = -ENOSPC;
	if (!err) {
		hash_add(cm->listeners, &l->hnode, service_id);
		cm->nr_listeners++;
	}
	spin_unlock_bh(&cm->lock);
	if (err)
		kfree(l);
	return err;
}

/* Drop a listener: refuse what it left unanswered. Context: cm->lock. */
static void xnic_cm_drop_listener(struct xnic_cm *cm,
				  struct xnic_cm_listener *l)
{
	struct xnic_cm_conn *c;
	unsigned long id;

	xa_for_each(&cm->conns, id, c)
		if (c->passive && c->state == XNIC_CMS_REQ_RCVD &&
		    c->service_id == l->service_id &&
		    xnic_cm_owner_eq(&c->owner, &l->owner))
			xnic_cm_refuse(cm, c, XNIC_CM_REASON_LISTENER_GONE,
				       NULL, 0);
	hash_del(&l->hnode);
	cm->nr_listeners--;
	kfree(l);
}

/**
 * xnic_cm_unlisten() - stop listening on a service id
 * @xdev: the device
 * @o: the requesting socket
 * @service_id: the service id
 *
 * Requests reported to the listener and not answered are rejected
 * (reason LISTENER_GONE); later REQs get REJ (NO_LISTENER).
 *
 * Context: process context, RTNL held.
 * Return: 0; -ENOENT when @o does not listen on @service_id.
 */
int xnic_cm_unlisten(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		     u64 service_id)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_listener *l;
	int err = -ENOENT;

	spin_lock_bh(&cm->lock);
	l = xnic_cm_find_listener(cm, service_id);
	if (l && xnic_cm_owner_eq(&l->owner, o)) {
		xnic_cm_drop_listener(cm, l);
		err = 0;
	}
	spin_unlock_bh(&cm->lock);
	return err;
}

/**
 * xnic_cm_connect() - start connecting to a service
 * @xdev: the device
 * @o: the requesting socket: REP, REJ or TIMEOUT is reported to it
 * @a: the request, validated by the caller (lengths, ranges)
 * @id: set to the connection's communication id
 *
 * Sends the REQ and resends it (xnic_cm_tries_start(): backing off to
 * @a->timeout_ms, for @a->timeout_ms * (@a->retries + 1) in all) before
 * reporting TIMEOUT.
 *
 * Context: process context, RTNL held.
 * Return: 0; -EINVAL when @a->node is this device's own node id;
 * -EHOSTUNREACH when the peer table does not know @a->node although it
 * has had time to learn (xnic_peer_unreachable()); -EPERM when @a->qpn
 * is a QP of another uid (xnic_cm_may_use_qp()); -ENOBUFS at
 * XNIC_CM_MAX_CONNS records; -ENOMEM.
 */
int xnic_cm_connect(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		    const struct xnic_cm_connect_args *a, u32 *id)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_conn *c;
	int err = 0;

	if (a->node == READ_ONCE(xdev->node_id))
		return -EINVAL;
	if (xnic_peer_unreachable(xdev, a->node))
		return -EHOSTUNREACH;
	if (!xnic_cm_may_use_qp(cm, o, a->qpn))
		return -EPERM;
	c = kzalloc(sizeof(*c), XNIC_GFP_ACCOUNT);
	if (!c)
		return -ENOMEM;
	c->state = XNIC_CMS_REQ_SENT;
	c->node = a->node;
	c->service_id = a->service_id;
	c->qpn = a->qpn;
	c->psn = a->psn;
	c->timeout_ms = a->timeout_ms;
	c->retries = a->retries;
	c->owner = *o;
	c->private_len = a->private_len;
	memcpy(c->private_data, a->private_data, a->private_len);
	spin_lock_bh(&cm->lock);
	if (!xnic_cm_alloc(cm, c)) {
		err = -ENOBUFS;
	} else {
		*id = c->id;
		xnic_cm_send_conn(cm, c);
		xnic_cm_tries_start(cm, c);
	}
	spin_unlock_bh(&cm->lock);
	if (err)
		kfree(c);
	return err;
}

/* The passive record @id of @o waiting for an answer. Context: lock. */
static int xnic_cm_pending(struct xnic_cm *cm, const struct xnic_cm_owner *o,
			   u32 id, struct xnic_cm_conn **cp)
{
	struct xnic_cm_conn *c = xa_load(&cm->conns, id);

	if (!c || !c->passive || !xnic_cm_owner_eq(&c->owner, o))
		return -ENOENT;
	if (c->state != XNIC_CMS_REQ_RCVD)
		return -EINVAL;
	*cp = c;
	return 0;
}

/**
 * xnic_cm_accept() - accept a reported REQ
 * @xdev: the device
 * @o: the requesting socket; must own the request
 * @id: the request's communication id (from the REQ event)
 * @qpn: our QP number, 24 bits (checked by the caller)
 * @psn: our first PSN, 24 bits
 * @priv: private data for the REP
 * @priv_len: bytes of @priv, at most XNIC_CM_PRIVATE_MAX
 *
 * Sends the REP, resent as the REQ was (xnic_cm_tries_start()) until the RTU
 * arrives: ESTABLISHED, or TIMEOUT, is reported.
 *
 * Context: process context, RTNL held.
 * Return: 0; -ENOENT: no such request of @o (or it expired); -EINVAL: it
 * was answered already; -EPERM: @qpn is a QP of another uid
 * (xnic_cm_may_use_qp()).
 */
int xnic_cm_accept(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		   u32 id, u32 qpn, u32 psn, const u8 *priv, u8 priv_len)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_conn *c;
	int err;

	if (!xnic_cm_may_use_qp(cm, o, qpn))
		return -EPERM;
	spin_lock_bh(&cm->lock);
	err = xnic_cm_pending(cm, o, id, &c);
	if (!err) {
		/* Its QP is the accepting requester's. */
		c->owner.uid = o->uid;
		c->owner.admin = o->admin;
		c->state = XNIC_CMS_REP_SENT;
		c->qpn = qpn;
		c->psn = psn;
		c->private_len = priv_len;
		memcpy(c->private_data, priv, priv_len);
		xnic_cm_send_conn(cm, c);
		xnic_cm_tries_start(cm, c);
	}
	spin_unlock_bh(&cm->lock);
	return err;
}

/**
 * xnic_cm_reject() - refuse a reported REQ
 * @xdev: the device
 * @o: the requesting socket; must own the request
 * @id: the request's communication id
 * @priv: private data for the REJ
 * @priv_len: bytes of @priv, at most XNIC_CM_PRIVATE_MAX
 *
 * Context: process context, RTNL held.
 * Return: 0, -ENOENT or -EINVAL as xnic_cm_accept().
 */
int xnic_cm_reject(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		   u32 id, const u8 *priv, u8 priv_len)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_conn *c;
	int err;

	spin_lock_bh(&cm->lock);
	err = xnic_cm_pending(cm, o, id, &c);
	if (!err)
		xnic_cm_refuse(cm, c, XNIC_CM_REASON_USER, priv, priv_len);
	spin_unlock_bh(&cm->lock);
	return err;
}

/**
 * xnic_cm_rtu() - the application connected its QP after a REP: send RTU
 * @xdev: the device
 * @o: the requesting socket; must own the connection
 * @id: the connection's communication id (from CONNECT)
 *
 * The record then lingers to answer a repeated REP with the RTU again,
 * and is tied to the QP when it is connected to the peer's
 * (xnic_cm_bind()).
 *
 * Context: process context, RTNL held.
 * Return: 0; -ENOENT: no such connection of @o; -EINVAL: no REP was
 * reported for it, or the RTU was sent already.
 */
int xnic_cm_rtu(struct xnic_dev *xdev, const struct xnic_cm_owner *o, u32 id)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_conn *c;
	int err = 0;

	spin_lock_bh(&cm->lock);
	c = xa_load(&cm->conns, id);
	if (!c || c->passive || !xnic_cm_owner_eq(&c->owner, o)) {
		err = -ENOENT;
	} else if (c->state != XNIC_CMS_REP_RCVD) {
		err = -EINVAL;
	} else {
		c->state = XNIC_CMS_ACTIVE_DONE;
		xnic_cm_inc(cm, XNIC_CM_CNT_ESTABLISHED);
		xnic_cm_bind(cm, c);
		xnic_cm_send_short(cm, c->node, XNIC_CM_RTU, 0, c->id,
				   c->remote_id, c->service_id, NULL, 0);
		xnic_cm_set_deadline(cm, c, xnic_cm_linger(c));
	}
	spin_unlock_bh(&cm->lock);
	return err;
}

/**
 * xnic_cm_release_dev() - drop what a closed socket owned on one device
 * @cm: the device's CM
 * @o: the socket
 *
 * Its listeners go (their unanswered requests are refused), its connects
 * in REQ_SENT are abandoned, those in REP_RCVD refused (REJ USER), and the
 * rest linger without an owner.
 *
 * Context: @cm->lock held.
 */
void xnic_cm_release_dev(struct xnic_cm *cm, const struct xnic_cm_owner *o)
{
	struct xnic_cm_listener *l;
	struct hlist_node *tmp;
	struct xnic_cm_conn *c;
	unsigned long id;
	int bkt;

	hash_for_each_safe(cm->listeners, bkt, tmp, l, hnode)
		if (xnic_cm_owner_eq(&l->owner, o))
			xnic_cm_drop_listener(cm, l);
	xa_for_each(&cm->conns, id, c) {
		if (!xnic_cm_owner_eq(&c->owner, o))
			continue;
		if (c->state == XNIC_CMS_REQ_SENT) {
			xnic_cm_free(cm, c);
		} else if (c->state == XNIC_CMS_REP_RCVD) {
			/* Never connected its QP: the peer must not wait. */
			c->reason = XNIC_CM_REASON_USER;
			c->private_len = 0;
			xnic_cm_send_rej(cm, c);
			xnic_cm_free(cm, c);
		} else if (c->state == XNIC_CMS_REQ_RCVD) {
			xnic_cm_refuse(cm, c, XNIC_CM_REASON_LISTENER_GONE,
				       NULL, 0);
		} else {
			c->owner.portid = 0;	/* lingers, reports nothing */
		}
	}
}

