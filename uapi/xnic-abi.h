/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * xnic user/kernel ABI: the driver data passed through ib_uverbs (udata),
 * and the layouts of the rings and doorbells that libxnic and the kernel
 * engine share. This file is the whole contract; Documentation/uapi.rst
 * explains it.
 *
 * Versioning (the efa-abi.h way): every udata struct starts with a
 * comp_mask and has reserved fields. The kernel accepts an input longer than
 * it knows only when the unknown tail is zero (ib_is_udata_cleared()), and
 * writes at most the output length userspace gave (a shorter, older output
 * struct gets a truncated copy). New fields are only ever appended.
 *
 * ===================== Shared memory and its rules =====================
 *
 * Objects mapped into the process (each with mmap(2) of the key and size
 * returned by the command that created it; MAP_SHARED, exact size):
 *   - per ucontext: one context page (struct xnic_ctx_page): the engine's
 *     NEED_WAKEUP flag, the doorbell bitmap and the MR watch bytes;
 *   - per CQ: one ring of struct xnic_cqe      (kernel produces, user consumes)
 *   - per QP: one SQ ring of struct xnic_sq_wqe (user produces, kernel consumes)
 *             one RQ ring of struct xnic_rq_wqe (user produces, kernel consumes)
 * A ring mapping is a struct xnic_ring_hdr followed by 2^n entries.
 *
 * Indices are free-running u32 counters; entry i lives in slot
 * (i & (entries - 1)). A ring is empty when producer == consumer and full
 * when producer - consumer == entries.
 *
 * Ordering (C11 terms; the kernel uses smp_load_acquire/smp_store_release
 * and smp_mb()):
 *  R1 producer: write the entry, then store-release the producer index.
 *  R2 consumer: load-acquire the producer index, read entries below it, then
 *     store-release the consumer index (the slot may be reused after).
 *  D1 doorbell (user, after posting to an SQ): full fence; set bit
 *     (db_index % 64) of db_bits[db_index / 64] and bit (db_index / 64) of
 *     db_summary (atomic OR; a bit already seen set may be skipped); full
 *     fence; load engine_flags; only if XNIC_ENGINE_NEED_WAKEUP is set, make
 *     the wakeup syscall: ioctl(XNIC_DB_RING) with the QP's db_index on the
 *     doorbell file of the context (XNIC_CAP_DB_FD), or else
 *     IB_USER_VERBS_CMD_POST_SEND with zero work requests on that QP; both
 *     do the same. Posting to an RQ needs no doorbell.
 *  D2 engine: exchange db_summary and each word it names with 0 (full
 *     barrier), then load-acquire the SQ producer of every QP named. Before
 *     sleeping it sets XNIC_ENGINE_NEED_WAKEUP, issues a full barrier and
 *     re-checks every db_summary; it sleeps only when all are zero. Thus a
 *     post is never missed: either the engine sees the bit, or the user sees
 *     the flag.
 *
 * Trust (the kernel's side; see rxe_queue.h for the history): everything in
 * shared memory is hostile. The kernel keeps its own copy of the index it
 * owns and never reads it back; it masks every index it reads; a producer
 * index more than `entries` ahead of the consumer moves the QP to the error
 * state; a WQE is copied out of the ring once, and only the copy is
 * validated and used. Userspace must treat the kernel's indices the same
 * way only for robustness, not safety.
 */
#ifndef XNIC_ABI_USER_H
#define XNIC_ABI_USER_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* ib_device_ops.uverbs_abi_ver; bumped only for incompatible changes. */
#define XNIC_UVERBS_ABI_VERSION	1

/* ------------------------------ limits ------------------------------ */

#define XNIC_MAX_SGE		6	/* per SQ WQE */
#define XNIC_MAX_RECV_SGE	3	/* per RQ WQE */
#define XNIC_MAX_INLINE		96	/* bytes of inline data per SQ WQE */
#define XNIC_MAX_QP_WR		4096	/* SQ or RQ entries */
#define XNIC_MAX_CQE		65536	/* CQ entries (device max_cqe) */
#define XNIC_DB_WORDS		64	/* doorbell bitmap: 64 x 64 QP slots */
#define XNIC_MR_WATCH_SLOTS	2048	/* xnic_ctx_page.mr_stale bytes */
#define XNIC_MAX_QP_PER_CTX	(XNIC_DB_WORDS * 64)

/* ------------------------------ rings ------------------------------- */

#define XNIC_RING_HDR_SIZE	256

/* xnic_ring_hdr.flags, written by the kernel */
/*
 * QP or CQ in the error state. A CQ has one way there: an overflow (a CQE
 * found no free entry, or the consumer index claimed more in use than
 * exist); every QP that then has a completion for it fails with
 * XNIC_QP_ERR_CQ_OVERFLOW.
 */
#define XNIC_RING_F_ERROR	0x1U

/**
 * enum xnic_qp_err_reason - why a QP went to the error state
 *	(xnic_ring_hdr.err_reason of its SQ ring)
 * @XNIC_QP_ERR_NONE: not in the error state (or reset since)
 * @XNIC_QP_ERR_USER: the application moved it (modify_qp to ERR)
 * @XNIC_QP_ERR_DISCONNECTED: the peer disconnected the CM connection (its
 *	QP was destroyed or disconnected, its process died: a DREQ came)
 * @XNIC_QP_ERR_RETRY_EXC: no acknowledgment after retry_cnt resends (the
 *	peer node or every path to it is gone)
 * @XNIC_QP_ERR_RNR_RETRY_EXC: the peer had no receive posted after
 *	rnr_retry RNR NAKs
 * @XNIC_QP_ERR_REMOTE: the peer refused a request (NAK: remote access,
 *	invalid request or operation error)
 * @XNIC_QP_ERR_LOCAL: a work request of ours was bad (length, protection,
 *	opcode) or the rings' indices were
 * @XNIC_QP_ERR_RESPONDER: we refused a request of the peer (NAK sent)
 * @XNIC_QP_ERR_CQ_OVERFLOW: a completion of the QP found its CQ full (or
 *	already overflowed) and was lost; the CQ is in the error state
 */
enum xnic_qp_err_reason {
	XNIC_QP_ERR_NONE		= 0,
	XNIC_QP_ERR_USER		= 1,
	XNIC_QP_ERR_DISCONNECTED	= 2,
	XNIC_QP_ERR_RETRY_EXC		= 3,
	XNIC_QP_ERR_RNR_RETRY_EXC	= 4,
	XNIC_QP_ERR_REMOTE		= 5,
	XNIC_QP_ERR_LOCAL		= 6,
	XNIC_QP_ERR_RESPONDER		= 7,
	XNIC_QP_ERR_CQ_OVERFLOW		= 8,
};

/**
 * struct xnic_ring_hdr - start of every ring mapping (256 bytes)
 * @producer: next index the producer will fill (written by producer only)
 * @consumer: next index the consumer will read (written by consumer only)
 * @flags: XNIC_RING_F_*, written by the kernel
 * @err_reason: SQ ring of a QP: enum xnic_qp_err_reason, written by the
 *	kernel before it sets XNIC_RING_F_ERROR (read it after an acquire
 *	load of @flags that shows the flag); zero in other rings
 *
 * Each index has its own 64-byte cache line.
 */
struct xnic_ring_hdr {
	__u32 producer;
	__u32 pad0[15];
	__u32 consumer;
	__u32 pad1[15];
	__u32 flags;
	__u32 err_reason;
	__u32 pad2[14];
	__u32 reserved[16];
};

/* ---------------------------- SQ entries ---------------------------- */

enum xnic_wr_opcode {
	XNIC_WR_RDMA_WRITE		= 0,
	XNIC_WR_RDMA_WRITE_WITH_IMM	= 1,
	XNIC_WR_SEND			= 2,
	XNIC_WR_SEND_WITH_IMM		= 3,
	XNIC_WR_RDMA_READ		= 4,
};

/* xnic_sq_wqe.flags */
#define XNIC_WQE_F_SIGNALED	0x1U	/* post a CQE on success */
#define XNIC_WQE_F_INLINE	0x2U	/* data in inline_data */
#define XNIC_WQE_F_SOLICITED	0x4U	/* solicited event at target */

/**
 * struct xnic_sge - scatter/gather element (16 bytes)
 * @addr: virtual address in the MR named by @lkey
 * @length: bytes
 * @lkey: local key of a memory region of the QP's PD
 */
struct xnic_sge {
	__u64 addr;
	__u32 length;
	__u32 lkey;
};

/**
 * struct xnic_sq_wqe - send queue entry (128 bytes)
 * @wr_id: returned in the CQE
 * @opcode: enum xnic_wr_opcode
 * @flags: XNIC_WQE_F_*
 * @num_sge: used entries of @sge (0..XNIC_MAX_SGE); ignored when inline
 * @reserved0: zero
 * @imm_data: immediate data, network byte order (the *_WITH_IMM opcodes)
 * @remote_addr: target virtual address (RDMA WRITE and READ)
 * @rkey: target memory key (RDMA WRITE and READ)
 * @inline_len: bytes in @inline_data when XNIC_WQE_F_INLINE (0..96)
 * @sge: local buffers, gathered (SEND, WRITE) or scattered (READ)
 * @inline_data: the payload itself (SEND and WRITE only)
 *
 * A zero-length operation (num_sge 0, or only zero-length SGEs) is legal.
 */
struct xnic_sq_wqe {
	__u64 wr_id;
	__u8 opcode;
	__u8 flags;
	__u8 num_sge;
	__u8 reserved0;
	__u32 imm_data;
	__u64 remote_addr;
	__u32 rkey;
	__u32 inline_len;
	union {
		struct xnic_sge sge[XNIC_MAX_SGE];
		__u8 inline_data[XNIC_MAX_INLINE];
	};
};

/**
 * struct xnic_rq_wqe - receive queue entry (64 bytes)
 * @wr_id: returned in the CQE
 * @num_sge: used entries of @sge (0..XNIC_MAX_RECV_SGE)
 * @reserved: zero
 * @sge: buffers an incoming SEND is scattered into
 */
struct xnic_rq_wqe {
	__u64 wr_id;
	__u8 num_sge;
	__u8 reserved[7];
	struct xnic_sge sge[XNIC_MAX_RECV_SGE];
};

/* ---------------------------- CQ entries ---------------------------- */

/* Values of enum ib_wc_opcode (include/rdma/ib_verbs.h). */
enum xnic_wc_opcode {
	XNIC_WC_SEND			= 0,
	XNIC_WC_RDMA_WRITE		= 1,
	XNIC_WC_RDMA_READ		= 2,
	XNIC_WC_RECV			= 128,
	XNIC_WC_RECV_RDMA_WITH_IMM	= 129,
};

/* Values of enum ib_wc_status (IBTA 1.4 table 10.7.2.x, ibv_wc_status). */
enum xnic_wc_status {
	XNIC_WC_SUCCESS			= 0,
	XNIC_WC_LOC_LEN_ERR		= 1,
	XNIC_WC_LOC_QP_OP_ERR		= 2,
	XNIC_WC_LOC_PROT_ERR		= 4,
	XNIC_WC_WR_FLUSH_ERR		= 5,
	XNIC_WC_BAD_RESP_ERR		= 7,
	XNIC_WC_LOC_ACCESS_ERR		= 8,
	XNIC_WC_REM_INV_REQ_ERR		= 9,
	XNIC_WC_REM_ACCESS_ERR		= 10,
	XNIC_WC_REM_OP_ERR		= 11,
	XNIC_WC_RETRY_EXC_ERR		= 12,
	XNIC_WC_RNR_RETRY_EXC_ERR	= 13,
	XNIC_WC_FATAL_ERR		= 19,
	XNIC_WC_GENERAL_ERR		= 21,
};

/* xnic_cqe.flags */
#define XNIC_CQE_F_IMM		0x1U	/* imm_data is valid */

/**
 * struct xnic_cqe - completion queue entry (32 bytes)
 * @wr_id: the WQE's wr_id
 * @status: enum xnic_wc_status
 * @opcode: enum xnic_wc_opcode
 * @flags: XNIC_CQE_F_*
 * @reserved0: zero
 * @byte_len: bytes received (RECV) or transferred
 * @imm_data: immediate data, network byte order, with XNIC_CQE_F_IMM
 * @qp_num: local QP number
 * @src_qp: remote QP number (receive completions)
 * @src_node: remote node id (receive completions)
 * @reserved1: zero
 */
struct xnic_cqe {
	__u64 wr_id;
	__u8 status;
	__u8 opcode;
	__u8 flags;
	__u8 reserved0;
	__u32 byte_len;
	__u32 imm_data;
	__u32 qp_num;
	__u32 src_qp;
	__u16 src_node;
	__u16 reserved1;
};

/* --------------------------- context page --------------------------- */

/* xnic_ctx_page.engine_flags, written by the kernel */
#define XNIC_ENGINE_NEED_WAKEUP	0x1U

/**
 * struct xnic_ctx_page - per-ucontext shared page
 * @engine_flags: XNIC_ENGINE_*, written by the kernel
 * @pad0: keeps @engine_flags on its own cache line
 * @db_summary: bit w set: db_bits[w] may have bits set (rule D1/D2)
 * @pad1: keeps @db_summary on its own cache line
 * @db_bits: bit (i % 64) of word (i / 64): QP with db_index i was rung
 * @mr_stale: byte s belongs to the MRs registered with watch slot s
 *	(struct xnic_reg_mr_req): the kernel sets it to 0 before it pins
 *	their pages and to 1 when the mapping of any page of their range
 *	changes after that (munmap, mremap, madvise(MADV_DONTNEED), mprotect,
 *	fork's copy-on-write, exit): from then on the address range may hold
 *	memory the MR does not pin. A registration cache reads it before it
 *	reuses an MR (libxnic's xnic_mr_cache). Only with XNIC_CAP_MR_WATCH.
 */
struct xnic_ctx_page {
	__u32 engine_flags;
	__u32 pad0[15];
	__u64 db_summary;
	__u64 pad1[7];
	__u64 db_bits[XNIC_DB_WORDS];
	__u8 mr_stale[XNIC_MR_WATCH_SLOTS];
};

/* ------------------------------ udata ------------------------------- */

/* xnic_alloc_ucontext_req.comp_mask bits */
#define XNIC_UCTX_REQ_DB_FD	0x1	/* open a doorbell file (XNIC_DB_RING) */

/**
 * struct xnic_alloc_ucontext_req - GET_CONTEXT driver input (optional)
 * @comp_mask: XNIC_UCTX_REQ_* bits; other bits: -EINVAL
 * @reserved: zero
 */
struct xnic_alloc_ucontext_req {
	__u32 comp_mask;
	__u32 reserved;
};

/**
 * struct xnic_alloc_ucontext_resp - GET_CONTEXT driver output
 * @comp_mask: zero
 * @ctx_page_key: mmap offset of the struct xnic_ctx_page
 * @ctx_page_size: its mapping size, bytes
 * @node_id: this device's node id on the fabric
 * @payload_mtu: payload bytes per frame on the smallest member link
 * @max_sge: XNIC_MAX_SGE
 * @max_recv_sge: XNIC_MAX_RECV_SGE
 * @max_inline: XNIC_MAX_INLINE
 * @sq_wqe_size: sizeof(struct xnic_sq_wqe)
 * @rq_wqe_size: sizeof(struct xnic_rq_wqe)
 * @cqe_size: sizeof(struct xnic_cqe)
 * @caps: XNIC_CAP_* (zero from modules older than the field)
 * @db_fd: with XNIC_CAP_DB_FD: the doorbell file's descriptor in the
 *	calling process (close-on-exec), which the caller owns and closes;
 *	otherwise -1 or zero
 * @reserved: zero
 */
struct xnic_alloc_ucontext_resp {
	__u64 comp_mask;
	__u64 ctx_page_key;
	__u32 ctx_page_size;
	__u32 node_id;
	__u32 payload_mtu;
	__u16 max_sge;
	__u16 max_recv_sge;
	__u16 max_inline;
	__u16 sq_wqe_size;
	__u16 rq_wqe_size;
	__u16 cqe_size;
	__u32 caps;
	__s32 db_fd;
	__u32 reserved[2];
};

/* xnic_alloc_ucontext_resp.caps */
#define XNIC_CAP_MR_WATCH	0x1	/* REG_MR takes XNIC_REG_MR_REQ_WATCH */
#define XNIC_CAP_DB_FD		0x2	/* @db_fd is open (XNIC_UCTX_REQ_DB_FD) */

/*
 * The doorbell file: ioctl(db_fd, XNIC_DB_RING, db_index) is rule D1's
 * wakeup syscall for the context's QP in slot db_index (struct
 * xnic_create_qp_resp), without ib_core's command parsing. Returns 0, or
 * -1 with errno EINVAL when no QP of the context is in slot db_index,
 * ENODEV once the context is gone (its device removed, or its uverbs file
 * closed), ENOTTY for another request.
 */
#define XNIC_DB_IOCTL_MAGIC	0xB8
#define XNIC_DB_RING		_IO(XNIC_DB_IOCTL_MAGIC, 0x00)

/* xnic_reg_mr_req.comp_mask bits */
#define XNIC_REG_MR_REQ_WATCH	0x1	/* watch the range, @watch_slot */

/**
 * struct xnic_reg_mr_req - REG_MR driver input (optional)
 * @comp_mask: XNIC_REG_MR_REQ_* bits; other bits: -EOPNOTSUPP
 * @watch_slot: with XNIC_REG_MR_REQ_WATCH: the byte of
 *	xnic_ctx_page.mr_stale that tells whether the mapping of
 *	[start, start + length) changed since the pages were pinned (below
 *	XNIC_MR_WATCH_SLOTS, else -EINVAL); otherwise zero. The kernel watches
 *	the range with an mmu interval notifier (mmu_notifier.h) until the MR
 *	is deregistered; slots are the process's to assign.
 */
struct xnic_reg_mr_req {
	__u32 comp_mask;
	__u32 watch_slot;
};

/**
 * struct xnic_create_cq_resp - CREATE_CQ driver output
 * @comp_mask: zero
 * @ring_key: mmap offset of the CQ ring
 * @ring_size: mapping size, bytes (header + entries)
 * @entries: ring entries, a power of two
 * @cqn: CQ number (for messages only)
 */
struct xnic_create_cq_resp {
	__u64 comp_mask;
	__u64 ring_key;
	__u32 ring_size;
	__u32 entries;
	__u32 cqn;
	__u32 reserved;
};

/* xnic_create_qp_req.comp_mask bits */
#define XNIC_CREATE_QP_REQ_TCLASS	0x1	/* @tclass is valid */

/* Traffic classes (xnic_create_qp_req.tclass) */
#define XNIC_TCLASS_LATENCY	0	/* latency-critical: served first */
#define XNIC_TCLASS_BULK	1	/* bulk: weighted share when both wait */

/**
 * struct xnic_create_qp_req - CREATE_QP driver input (optional)
 * @comp_mask: XNIC_CREATE_QP_REQ_* bits saying which fields are valid;
 *	other bits: -EOPNOTSUPP
 * @tclass: with XNIC_CREATE_QP_REQ_TCLASS: the QP's traffic class,
 *	XNIC_TCLASS_* (else -EINVAL); otherwise zero (class 0)
 * @reserved: zero
 */
struct xnic_create_qp_req {
	__u64 comp_mask;
	__u32 tclass;
	__u32 reserved;
};

/**
 * struct xnic_create_qp_resp - CREATE_QP driver output
 * @comp_mask: zero
 * @sq_key: mmap offset of the SQ ring
 * @rq_key: mmap offset of the RQ ring
 * @sq_size: SQ mapping size, bytes
 * @rq_size: RQ mapping size, bytes
 * @sq_entries: SQ ring entries, a power of two
 * @rq_entries: RQ ring entries, a power of two
 * @db_index: the QP's slot in xnic_ctx_page.db_bits
 * @reserved: zero
 */
struct xnic_create_qp_resp {
	__u64 comp_mask;
	__u64 sq_key;
	__u64 rq_key;
	__u32 sq_size;
	__u32 rq_size;
	__u32 sq_entries;
	__u32 rq_entries;
	__u32 db_index;
	__u32 reserved;
};

/**
 * struct xnic_modify_qp_req - EX_MODIFY_QP driver input
 * @comp_mask: zero
 * @remote_node: node id of the peer; required with IB_QP_DEST_QPN
 *	(RTR transition). Legacy MODIFY_QP carries no driver data, so
 *	connecting needs EX_MODIFY_QP.
 * @reserved: zero
 */
struct xnic_modify_qp_req {
	__u64 comp_mask;
	__u32 remote_node;
	__u32 reserved;
};

#endif /* XNIC_ABI_USER_H */
