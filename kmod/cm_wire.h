/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic connection manager messages: the payload of XNIC_OP_CM frames.
 * See Documentation/cm.rst. Modelled on the InfiniBand CM (IBTA 1.4,
 * volume 1, chapter 12): REQ, REP, RTU and REJ, each naming the sender's
 * communication id (local_id) and, after the REQ, the receiver's
 * (remote_id); DREQ and DREP end a connection (IBTA 12.6.10, 12.6.11).
 *
 * New message types are how the CM evolves: a node that does not know a
 * type drops the message as malformed (cm_malformed), so a DREQ to an
 * older node is resent a bounded number of times and given up.
 *
 * Pure like wire.h: no kernel dependency beyond fixed-width types, so the
 * userspace unit tests include it.
 */
#ifndef XNIC_CM_WIRE_H
#define XNIC_CM_WIRE_H

#include "wire.h"

/* Bytes of private data a CM message carries at most. */
#define XNIC_CM_PRIVATE_MAX	64
/* Bounds of a REQ's resend interval (ms) and resend count. */
#define XNIC_CM_TIMEOUT_MIN_MS	1
#define XNIC_CM_TIMEOUT_MAX_MS	10000
#define XNIC_CM_RETRIES_MAX	10

/**
 * enum xnic_cm_type - CM message types (struct xnic_wire_cm.type)
 * @XNIC_CM_REQ: active side: connect to a service (IBTA 12.6.5)
 * @XNIC_CM_REP: passive side: accepted, here is my QP (IBTA 12.6.8)
 * @XNIC_CM_RTU: active side: ready to use, the passive side is connected
 *	(IBTA 12.6.9)
 * @XNIC_CM_REJ: either side: refused, see enum xnic_cm_reason
 *	(IBTA 12.6.7)
 * @XNIC_CM_DREQ: either side of a connection: my QP is gone or
 *	disconnected, disconnect yours (IBTA 12.6.10)
 * @XNIC_CM_DREP: answer to a DREQ (IBTA 12.6.11)
 * @XNIC_CM_TYPE_MAX: first value that is not a type
 */
enum xnic_cm_type {
	XNIC_CM_REQ = 1,
	XNIC_CM_REP = 2,
	XNIC_CM_RTU = 3,
	XNIC_CM_REJ = 4,
	XNIC_CM_DREQ = 5,
	XNIC_CM_DREP = 6,
	XNIC_CM_TYPE_MAX,
};

/**
 * enum xnic_cm_reason - why a REJ was sent (struct xnic_wire_cm.reason)
 * @XNIC_CM_REASON_NONE: not a REJ
 * @XNIC_CM_REASON_NO_LISTENER: nobody listens on the service id
 * @XNIC_CM_REASON_USER: the listening application refused
 * @XNIC_CM_REASON_LISTENER_GONE: the listener went away before answering
 * @XNIC_CM_REASON_NO_RESOURCES: the passive side has too many connections
 *	in progress
 * @XNIC_CM_REASON_TIMEOUT: the passive side gave up waiting (no RTU, or
 *	the application never answered)
 * @XNIC_CM_REASON_MAX: first value that is not a reason
 */
enum xnic_cm_reason {
	XNIC_CM_REASON_NONE = 0,
	XNIC_CM_REASON_NO_LISTENER = 1,
	XNIC_CM_REASON_USER = 2,
	XNIC_CM_REASON_LISTENER_GONE = 3,
	XNIC_CM_REASON_NO_RESOURCES = 4,
	XNIC_CM_REASON_TIMEOUT = 5,
	XNIC_CM_REASON_MAX,
};

/**
 * struct xnic_wire_cm - XNIC_OP_CM payload (96 bytes, big endian)
 * @type: enum xnic_cm_type
 * @reason: REJ: enum xnic_cm_reason; otherwise zero
 * @private_len: bytes of @private_data used, at most XNIC_CM_PRIVATE_MAX
 * @retries: REQ: how many times the sender resends it; otherwise zero
 * @local_id: the sender's communication id (never 0, except in a REJ
 *	answering a REQ no connection was created for)
 * @remote_id: the receiver's communication id (0 in a REQ)
 * @qpn: REQ, REP, DREQ: the sender's QP number (24 bits); otherwise zero
 * @psn: REQ, REP: the first PSN the sender's QP sends (24 bits); DREQ: the
 *	PSN the sender's QP expected next, so every PSN before it arrived
 *	(a cumulative ACK: a message the sender took before it went is not
 *	flushed when its own ACK loses the race with the DREQ)
 * @timeout_ms: REQ: the sender's resend interval, ms; otherwise zero
 * @service_id: REQ: the service connected to; echoed in REP and REJ
 * @private_data: application data (e.g. an MR's address, rkey, length)
 *
 * The header's src_qpn and dst_qpn are zero: CM messages address
 * communication ids, not QPs.
 */
struct xnic_wire_cm {
	__u8 type;
	__u8 reason;
	__u8 private_len;
	__u8 retries;
	__be32 local_id;
	__be32 remote_id;
	__be32 qpn;
	__be32 psn;
	__be32 timeout_ms;
	__be64 service_id;
	__u8 private_data[XNIC_CM_PRIVATE_MAX];
};

/**
 * struct xnic_cm_info - a CM message in host byte order
 * @type: enum xnic_cm_type
 * @reason: enum xnic_cm_reason
 * @private_len: bytes of @private_data used
 * @retries: REQ resend count
 * @local_id: sender's communication id
 * @remote_id: receiver's communication id
 * @qpn: sender's QP number
 * @psn: sender's first PSN (REQ, REP) or expected PSN (DREQ)
 * @timeout_ms: REQ resend interval, ms
 * @service_id: service id
 * @private_data: application data
 */
struct xnic_cm_info {
	__u8 type;
	__u8 reason;
	__u8 private_len;
	__u8 retries;
	__u32 local_id;
	__u32 remote_id;
	__u32 qpn;
	__u32 psn;
	__u32 timeout_ms;
	__u64 service_id;
	__u8 private_data[XNIC_CM_PRIVATE_MAX];
};

/**
 * xnic_cm_encode() - build a CM payload from host-order fields
 * @w: payload to fill (every byte is written)
 * @c: the fields
 */
static inline void xnic_cm_encode(struct xnic_wire_cm *w,
				  const struct xnic_cm_info *c)
{
	unsigned int k;

	w->type = c->type;
	w->reason = c->reason;
	w->private_len = c->private_len;
	w->retries = c->retries;
	w->local_id = xnic_wire_be32(c->local_id);
	w->remote_id = xnic_wire_be32(c->remote_id);
	w->qpn = xnic_wire_be32(c->qpn);
	w->psn = xnic_wire_be32(c->psn);
	w->timeout_ms = xnic_wire_be32(c->timeout_ms);
	w->service_id = xnic_wire_be64(c->service_id);
	for (k = 0; k < XNIC_CM_PRIVATE_MAX; k++)
		w->private_data[k] = k < c->private_len ?
				     c->private_data[k] : 0;
}

/**
 * xnic_cm_decode() - read a CM payload into host-order fields
 * @c: fields to fill
 * @w: the payload, already copied out of the frame
 */
static inline void xnic_cm_decode(struct xnic_cm_info *c,
				  const struct xnic_wire_cm *w)
{
	unsigned int k;

	c->type = w->type;
	c->reason = w->reason;
	c->private_len = w->private_len;
	c->retries = w->retries;
	c->local_id = xnic_wire_h32(w->local_id);
	c->remote_id = xnic_wire_h32(w->remote_id);
	c->qpn = xnic_wire_h32(w->qpn);
	c->psn = xnic_wire_h32(w->psn);
	c->timeout_ms = xnic_wire_h32(w->timeout_ms);
	c->service_id = xnic_wire_h64(w->service_id);
	for (k = 0; k < XNIC_CM_PRIVATE_MAX; k++)
		c->private_data[k] = w->private_data[k];
}

/**
 * xnic_cm_check() - validate a decoded CM message
 * @c: the message
 *
 * Rules: a known type; at most XNIC_CM_PRIVATE_MAX bytes of private
 * data; 24-bit QPN and PSN; a REQ names its sender (local_id), nobody
 * else (remote_id 0), a QP, a resend interval in [XNIC_CM_TIMEOUT_MIN_MS,
 * XNIC_CM_TIMEOUT_MAX_MS] and at most XNIC_CM_RETRIES_MAX resends; REP
 * and RTU name both ends; a REJ names its receiver and a known reason;
 * DREQ and DREP name both ends and carry no private data (a DREQ names
 * its sender's QP and expected PSN, a DREP no QP); fields a type does not
 * use are zero.
 *
 * Return: true when the message is well formed.
 */
static inline bool xnic_cm_check(const struct xnic_cm_info *c)
{
	bool req = c->type == XNIC_CM_REQ;
	bool rej = c->type == XNIC_CM_REJ;
	bool has_reason = c->reason != XNIC_CM_REASON_NONE;

	if (c->type < XNIC_CM_REQ || c->type >= XNIC_CM_TYPE_MAX)
		return false;
	if (c->private_len > XNIC_CM_PRIVATE_MAX)
		return false;
	if ((c->qpn | c->psn) & ~XNIC_QPN_MASK)
		return false;
	if (!req && (c->retries || c->timeout_ms))
		return false;
	if (rej != has_reason)
		return false;
	switch (c->type) {
	case XNIC_CM_REQ:
		return c->local_id && !c->remote_id &&
		       c->timeout_ms >= XNIC_CM_TIMEOUT_MIN_MS &&
		       c->timeout_ms <= XNIC_CM_TIMEOUT_MAX_MS &&
		       c->retries <= XNIC_CM_RETRIES_MAX;
	case XNIC_CM_REP:
		return c->local_id && c->remote_id;
	case XNIC_CM_RTU:
	case XNIC_CM_DREP:
		return c->local_id && c->remote_id && !c->qpn && !c->psn &&
		       !c->private_len;
	case XNIC_CM_DREQ:
		return c->local_id && c->remote_id && !c->private_len;
	default: /* XNIC_CM_REJ */
		return c->remote_id && c->reason < XNIC_CM_REASON_MAX &&
		       !c->qpn && !c->psn;
	}
}

#endif /* XNIC_CM_WIRE_H */
