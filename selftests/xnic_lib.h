/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic_lib - helpers shared by the datapath selftests (xnic_datapath_test,
 * xnic_hostile_test, xnic_wire_test): two xnic devices on a veth pair,
 * connected QP pairs, registered buffers, reaping completions with a
 * deadline, the transport counters in debugfs, the engine threads, and
 * crc32c for frames built by hand.
 *
 * The environment: veth pair xt<tag>a (MAC 02:00:00:00:00:01, MTU 9000) /
 * xt<tag>b (02:00:00:00:00:02); RDMA devices xt<tag>0 on the first and
 * xt<tag>1 on the second, so their node ids are 1 and 2; one context and
 * one PD on each. Setup returns once each device has learned the other by
 * HELLO (debugfs /sys/kernel/debug/xnic/<dev>/peers).
 *
 * Every function returns 0 (or a count) or a negative errno; on failure
 * xt_error() says what went wrong, for TH_LOG().
 */
#ifndef XNIC_SELFTESTS_XNIC_LIB_H
#define XNIC_SELFTESTS_XNIC_LIB_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "xnic.h"

#define XT_NODE0	1
#define XT_NODE1	2
#define XT_MTU		9000
/* Default deadline of one completion, ms (TCG is slow). */
#define XT_WAIT_MS	20000
#define XT_DEBUGFS	"/sys/kernel/debug/xnic"

/**
 * struct xt_dev - one xnic device of the environment
 * @netdev: its member veth
 * @name: RDMA device name
 * @mac: @netdev's MAC address
 * @ctx: open context
 * @pd: a protection domain of @ctx
 * @node_id: node id the kernel reported
 * @payload_mtu: payload bytes per frame the kernel reported
 * @ifindex: @netdev's ifindex
 */
struct xt_dev {
	char netdev[IFNAMSIZ];
	char name[32];
	uint8_t mac[6];
	struct xnic_ctx *ctx;
	struct xnic_pd *pd;
	uint32_t node_id;
	uint32_t payload_mtu;
	int ifindex;
};

/**
 * struct xt_env - two devices on a veth pair
 * @tag: short name part of this environment's netdevs and devices
 * @dev: the devices (node ids 1 and 2)
 * @veth: the veth pair exists (teardown deletes it)
 * @linked: the RDMA device exists (teardown deletes it)
 */
struct xt_env {
	char tag[8];
	struct xt_dev dev[2];
	bool veth;
	bool linked[2];
};

/**
 * struct xt_buf - an anonymous mapping registered as a memory region
 * @p: first byte
 * @len: bytes mapped and registered
 * @mr: the MR (NULL after xt_buf_free())
 */
struct xt_buf {
	uint8_t *p;
	size_t len;
	struct xnic_mr *mr;
};

/**
 * struct xt_conn - a QP on each device, connected to each other
 * @cq: CQ of each QP (send and receive completions)
 * @qp: the QPs; qp[0] is on dev[0]
 * @psn: the first PSN each QP sends
 */
struct xt_conn {
	struct xnic_cq *cq[2];
	struct xnic_qp *qp[2];
	uint32_t psn[2];
};

/* Access that a buffer used both ways needs. */
#define XT_ACCESS_ALL	(XNIC_ACCESS_LOCAL_WRITE | XNIC_ACCESS_REMOTE_WRITE | \
			 XNIC_ACCESS_REMOTE_READ)

const char *xt_error(void);
long long xt_now_ms(void);
long long xt_now_us(void);
void xt_sleep_ms(int ms);
int xt_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int xt_sh_show(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int xt_read_file(const char *path, char *buf, size_t len);
long long xt_proc_kb(const char *path, const char *key);
int xt_set_param(const struct xt_dev *d, const char *key, const char *val);
int xt_write_file(const char *path, const char *val);
int xt_packet_socket(int ifindex, int rcvbuf);

/* Environment. xt_env_teardown() undoes whatever setup did. */
int xt_env_setup(struct xt_env *e, const char *tag);
void xt_env_teardown(struct xt_env *e);
int xt_wait_peers(struct xt_env *e, int timeout_ms);

/* Buffers. @len is rounded up to whole pages for the mapping only. */
int xt_buf_alloc(struct xt_dev *d, struct xt_buf *b, size_t len,
		 unsigned int access);
void xt_buf_free(struct xt_buf *b);

/* QP pairs: @cqe entries per CQ; @cap may be NULL. */
int xt_conn_create(struct xt_env *e, struct xt_conn *c, unsigned int cqe,
		   const struct xnic_qp_cap *cap);
void xt_conn_destroy(struct xt_conn *c);
int xt_qp_to_init(struct xnic_qp *qp);

/*
 * Completions. xt_reap() collects exactly @n CQEs (busy-polling, then
 * sleeping in xnic_cq_wait()); returns @n, fewer on timeout, or -EIO when
 * the CQ is in error with nothing left. xt_reap_one() returns 0,
 * -ETIMEDOUT or -EIO. xt_quiet() polls for @ms and returns how many CQEs
 * arrived (they are stored in @out, up to @max).
 */
int xt_reap(struct xnic_cq *cq, struct xnic_cqe *out, int n, int timeout_ms);
int xt_reap_one(struct xnic_cq *cq, struct xnic_cqe *out, int timeout_ms);
int xt_quiet(struct xnic_cq *cq, struct xnic_cqe *out, int max, int ms);
const char *xt_cqe_str(const struct xnic_cqe *c);

/*
 * Wait for an asynchronous event of @type about @qp or @cq (NULL: any)
 * on @ctx; other events are skipped. Return: 0, -ETIMEDOUT or -errno.
 */
int xt_wait_async(struct xnic_ctx *ctx, uint32_t type, struct xnic_qp *qp,
		  struct xnic_cq *cq, int timeout_ms);

/* Data patterns. */
void xt_fill(uint8_t *p, size_t len, uint64_t seed);
void xt_fill_byte(uint8_t *p, size_t len, uint8_t v);
ssize_t xt_diff(const uint8_t *a, const uint8_t *b, size_t len);
ssize_t xt_check_byte(const uint8_t *p, size_t len, uint8_t v);
ssize_t xt_check_pattern(const uint8_t *p, size_t len, uint64_t seed);

/* Observability. */
int xt_counter(const char *dev, const char *name, uint64_t *val);
int xt_counters(const char *dev, const char *const *names, uint64_t *vals,
		int n);
int xt_counters_str(const char *dev, char *buf, size_t len);
uint64_t xt_hw_counter(const char *dev, const char *name);
int xt_lcr_paths_empty(const char *dev);
pid_t xt_engine_pid(const char *dev);
int xt_task_cpu_ns(pid_t pid, uint64_t *ns);
int xt_res_count(const char *dev, const char *kind, long *val);

#endif /* XNIC_SELFTESTS_XNIC_LIB_H */
