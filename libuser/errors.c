// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libxnic - messages for errors, completion statuses and events. */
#include <errno.h>
#include <string.h>

#include "xnic.h"

const char *xnic_strerror(int err)
{
	switch (err) {
	case -ENODEV:
		return "no such RDMA device in this network namespace (in exclusive netns mode a device of another namespace is not visible)";
	case -ENXIO:
		return "RDMA device has no uverbs node (is ib_uverbs loaded?)";
	case -EPROTO:
		return "kernel does not speak this library's ABI (not an xnic device, or another version)";
	case -EAGAIN:
		return "queue full, or nothing pending (try again)";
	case -EIO:
		return "completion queue corrupt (its producer index is invalid)";
	case -EOVERFLOW:
		return "completion queue overflow: completions were lost; destroy its QPs and the CQ, and create a CQ with room for every outstanding work request";
	case -ETIMEDOUT:
		return "timed out";
	case -ENOMEM:
		return "out of memory (queue memory is charged to the caller's memory cgroup: its memory.max may be reached)";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

const char *xnic_wc_status_str(unsigned int status)
{
	switch (status) {
	case XNIC_WC_SUCCESS:		return "success";
	case XNIC_WC_LOC_LEN_ERR:	return "local length error";
	case XNIC_WC_LOC_QP_OP_ERR:	return "local QP operation error";
	case XNIC_WC_LOC_PROT_ERR:	return "local protection error";
	case XNIC_WC_WR_FLUSH_ERR:	return "work request flushed";
	case XNIC_WC_BAD_RESP_ERR:	return "bad response";
	case XNIC_WC_LOC_ACCESS_ERR:	return "local access error";
	case XNIC_WC_REM_INV_REQ_ERR:	return "remote invalid request";
	case XNIC_WC_REM_ACCESS_ERR:	return "remote access error";
	case XNIC_WC_REM_OP_ERR:	return "remote operation error";
	case XNIC_WC_RETRY_EXC_ERR:	return "transport retry counter exceeded";
	case XNIC_WC_RNR_RETRY_EXC_ERR:	return "RNR retry counter exceeded";
	case XNIC_WC_FATAL_ERR:		return "fatal error";
	case XNIC_WC_GENERAL_ERR:	return "general error";
	default:			return "unknown status";
	}
}

const char *xnic_wc_opcode_str(unsigned int opcode)
{
	switch (opcode) {
	case XNIC_WC_SEND:		return "SEND";
	case XNIC_WC_RDMA_WRITE:	return "RDMA_WRITE";
	case XNIC_WC_RDMA_READ:		return "RDMA_READ";
	case XNIC_WC_RECV:		return "RECV";
	case XNIC_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default:			return "unknown opcode";
	}
}

const char *xnic_qp_err_str(uint32_t reason)
{
	static const char *const names[] = {
		[XNIC_QP_ERR_NONE] = "not in error",
		[XNIC_QP_ERR_USER] = "moved to error by the application",
		[XNIC_QP_ERR_DISCONNECTED] = "the peer disconnected",
		[XNIC_QP_ERR_RETRY_EXC] =
			"no acknowledgment after every retry (peer unreachable)",
		[XNIC_QP_ERR_RNR_RETRY_EXC] =
			"the peer posted no receive after every RNR retry",
		[XNIC_QP_ERR_REMOTE] = "the peer refused a request",
		[XNIC_QP_ERR_LOCAL] = "a local work request was bad",
		[XNIC_QP_ERR_RESPONDER] = "we refused a request of the peer",
		[XNIC_QP_ERR_CQ_OVERFLOW] =
			"its CQ overflowed and a completion was lost",
	};

	return reason < sizeof(names) / sizeof(names[0]) ? names[reason] :
							   "unknown reason";
}

const char *xnic_event_str(unsigned int type)
{
	static const char *const names[] = {
		"CQ error", "QP fatal error", "QP invalid request",
		"QP access error", "communication established", "SQ drained",
		"path migrated", "path migration error", "device fatal error",
		"port active", "port error", "LID change", "P_Key change",
		"SM change", "SRQ error", "SRQ limit reached",
		"last WQE reached", "client reregister", "GID change",
		"WQ fatal error",
	};

	return type < sizeof(names) / sizeof(names[0]) ? names[type] :
							  "unknown event";
}
