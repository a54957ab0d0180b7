/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxnic internals: the context and PD objects, the object lists that
 * xnic_close() frees, and the uverbs command helpers (cmd.c).
 */
#ifndef XNIC_LIB_PRIV_H
#define XNIC_LIB_PRIV_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>

#include "xnic.h"

#define XNIC_PORT_NUM		1

/* enum ib_qp_attr_mask (include/rdma/ib_verbs.h; not in the uapi). */
#define XNIC_QP_STATE			(1U << 0)
#define XNIC_QP_ACCESS_FLAGS		(1U << 3)
#define XNIC_QP_PKEY_INDEX		(1U << 4)
#define XNIC_QP_PORT			(1U << 5)
#define XNIC_QP_AV			(1U << 7)
#define XNIC_QP_PATH_MTU		(1U << 8)
#define XNIC_QP_TIMEOUT			(1U << 9)
#define XNIC_QP_RETRY_CNT		(1U << 10)
#define XNIC_QP_RNR_RETRY		(1U << 11)
#define XNIC_QP_RQ_PSN			(1U << 12)
#define XNIC_QP_MAX_QP_RD_ATOMIC	(1U << 13)
#define XNIC_QP_MIN_RNR_TIMER		(1U << 15)
#define XNIC_QP_SQ_PSN			(1U << 16)
#define XNIC_QP_MAX_DEST_RD_ATOMIC	(1U << 17)
#define XNIC_QP_DEST_QPN		(1U << 20)

#define XNIC_PSN_MASK	0xffffffU

/**
 * struct xnic_pd - protection domain
 * @ctx: owning context
 * @handle: uverbs object handle
 * @users: MRs and QPs using it (ctx->lock)
 * @prev: list link (ctx->lock)
 * @next: list link (ctx->lock)
 */
struct xnic_pd {
	struct xnic_ctx *ctx;
	uint32_t handle;
	unsigned int users;
	struct xnic_pd *prev, *next;
};

/**
 * struct xnic_ctx - one open device
 * @fd: the uverbs file: every command goes through it
 * @async_fd: asynchronous event file (non-blocking)
 * @page: the mapped struct xnic_ctx_page
 * @page_size: its mapping size
 * @attr: what GET_CONTEXT and QUERY_PORT said
 * @dev: sysfs data of the device
 * @lock: guards the object lists and use counts
 * @pds: list of PDs
 * @mrs: list of MRs
 * @cqs: list of CQs
 * @qps: list of QPs
 * @caps: XNIC_CAP_* of the module (GET_CONTEXT)
 * @watch_used: bit s set: mr_stale slot s is taken (@lock; mr_cache.c)
 */
struct xnic_ctx {
	int fd;
	int async_fd;
	int db_fd;		/* the doorbell file (XNIC_DB_RING), or -1 */
	struct xnic_ctx_page *page;
	size_t page_size;
	struct xnic_ctx_attr attr;
	struct xnic_device_info dev;
	pthread_mutex_t lock;
	struct xnic_pd *pds;
	struct xnic_mr *mrs;
	struct xnic_cq *cqs;
	struct xnic_qp *qps;
	uint32_t caps;
	uint64_t watch_used[XNIC_MR_WATCH_SLOTS / 64];
};

/*
 * Doubly linked lists of objects with prev/next members; head is a
 * pointer to the first element. Callers hold ctx->lock.
 */
#define XNIC_LIST_ADD(head, obj) do {			\
	(obj)->prev = NULL;				\
	(obj)->next = (head);				\
	if (head)					\
		(head)->prev = (obj);			\
	(head) = (obj);					\
} while (0)

#define XNIC_LIST_DEL(head, obj) do {			\
	if ((obj)->prev)				\
		(obj)->prev->next = (obj)->next;	\
	else						\
		(head) = (obj)->next;			\
	if ((obj)->next)				\
		(obj)->next->prev = (obj)->prev;	\
	(obj)->prev = (obj)->next = NULL;		\
} while (0)

/* pd.c */
int xnic_reg_mr_watched(struct xnic_pd *pd, void *addr, size_t length,
			unsigned int access, unsigned int slot,
			struct xnic_mr **mrp);

/* cmd.c */
int xnic_cmd(int fd, uint32_t command, void *req, size_t req_len,
	     const void *drv_in, size_t drv_in_len, void *resp,
	     size_t resp_len, void *drv_out, size_t drv_out_len);
int xnic_cmd_ex(int fd, uint32_t command, const void *req, size_t req_len,
		const void *drv_in, size_t drv_in_len, void *resp,
		size_t resp_len, void *drv_out, size_t drv_out_len);
void *xnic_map(int fd, uint64_t key, size_t size, int *err);
uint32_t xnic_mtu_bytes(unsigned int ib_mtu);

#endif /* XNIC_LIB_PRIV_H */
