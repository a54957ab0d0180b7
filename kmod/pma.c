// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the port's standard counters: a Performance Management Agent
 * answering PerfMgt Get(ClassPortInfo, PortCounters, PortCountersExtended)
 * from the transport's counters. ib_core builds
 * /sys/class/infiniband/<dev>/ports/1/counters/ only for devices with
 * process_mad (drivers/infiniband/core/sysfs.c, get_counter_table()), and
 * reads every file there through such a Get; the tools operators run
 * (node_exporter's infiniband collector, telegraf, collectd) read those
 * files. No MAD reaches us from the wire: the port has no IB core
 * capability, so the MAD layer never registers an agent on it.
 *
 * The layouts are the InfiniBand Architecture Specification's, vol. 1,
 * 16.1.3.5 (PortCounters) and 16.1.4.11 (PortCountersExtended), as
 * include/rdma/ib_pma.h declares them. Admin guide, "Monitoring", lists
 * which counter feeds which name.
 */
#include <linux/kernel.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>
#include <rdma/ib_verbs.h>

#include "xnic.h"
#include "transport.h"
#include "transport_priv.h"

/* The standard counters, in the transport's terms. */
struct xnic_pma_counts {
	u64 xmit_bytes, rcv_bytes, xmit_packets, rcv_packets;
	u64 rcv_errors, xmit_discards;
};

static void xnic_pma_read(struct xnic_dev *xdev, struct xnic_pma_counts *c)
{
	u64 tp[XNIC_CNT_MAX] = {};

	xnic_tp_counters(xdev, tp, XNIC_CNT_MAX);
	c->xmit_bytes = tp[XNIC_CNT_TX_BYTES];
	c->rcv_bytes = tp[XNIC_CNT_RX_BYTES];
	c->xmit_packets = tp[XNIC_CNT_TX_FRAMES];
	c->rcv_packets = tp[XNIC_CNT_RX_FRAMES];
	c->rcv_errors = tp[XNIC_CNT_CRC_ERRORS] + tp[XNIC_CNT_MALFORMED];
	c->xmit_discards = tp[XNIC_CNT_TX_DROPS];
}

/* PortCounters' fields stop at their largest value (IBA 16.1.3.5). */
static __be16 xnic_pma_sat16(u64 v)
{
	return cpu_to_be16(min_t(u64, v, U16_MAX));
}

static __be32 xnic_pma_sat32(u64 v)
{
	return cpu_to_be32(min_t(u64, v, U32_MAX));
}

static void xnic_pma_class_port_info(struct ib_pma_mad *out)
{
	struct ib_class_port_info *cpi = (void *)out->data;

	cpi->base_version = IB_MGMT_BASE_VERSION;
	cpi->class_version = 1;
	/*
	 * 64-bit data and packet counters, but no unicast/multicast split:
	 * ib_core then shows the "noietf" set of files.
	 */
	cpi->capability_mask = IB_PMA_CLASS_CAP_EXT_WIDTH_NOIETF;
}

static void xnic_pma_port_counters(struct xnic_dev *xdev, u8 port_select,
				   struct ib_pma_mad *out)
{
	struct ib_pma_portcounters *pc = (void *)out->data;
	struct xnic_pma_counts c;

	xnic_pma_read(xdev, &c);
	pc->port_select = port_select;
	pc->port_rcv_errors = xnic_pma_sat16(c.rcv_errors);
	pc->port_xmit_discards = xnic_pma_sat16(c.xmit_discards);
	/* Data counters count octets divided by 4 (IBA 16.1.3.5). */
	pc->port_xmit_data = xnic_pma_sat32(c.xmit_bytes / 4);
	pc->port_rcv_data = xnic_pma_sat32(c.rcv_bytes / 4);
	pc->port_xmit_packets = xnic_pma_sat32(c.xmit_packets);
	pc->port_rcv_packets = xnic_pma_sat32(c.rcv_packets);
}

static void xnic_pma_port_counters_ext(struct xnic_dev *xdev, u8 port_select,
				       struct ib_pma_mad *out)
{
	struct ib_pma_portcounters_ext *pc = (void *)out->data;
	struct xnic_pma_counts c;

	xnic_pma_read(xdev, &c);
	pc->port_select = port_select;
	pc->port_xmit_data = cpu_to_be64(c.xmit_bytes / 4);
	pc->port_rcv_data = cpu_to_be64(c.rcv_bytes / 4);
	pc->port_xmit_packets = cpu_to_be64(c.xmit_packets);
	pc->port_rcv_packets = cpu_to_be64(c.rcv_packets);
}

/**
 * xnic_process_mad() - ib_device_ops.process_mad: the port's PMA
 * @ibdev: the device
 * @mad_flags: enum ib_process_mad_flags (no key is checked)
 * @port: port number
 * @in_wc: unused (no MAD comes from the wire)
 * @in_grh: unused
 * @in: the MAD; only a PerfMgt Get of ClassPortInfo, PortCounters or
 *	PortCountersExtended for @port (PortSelect @port or 0xff) is
 *	answered
 * @out: the reply (a GetResp of the same attribute), zeroed by the caller
 * @out_mad_size: size of @out; must hold a struct ib_mad
 * @out_mad_pkey_index: unused
 *
 * Context: process context (ib_core's sysfs reads).
 * Return: IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY with @out filled,
 * or IB_MAD_RESULT_FAILURE for any other MAD.
 */
int xnic_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
		     const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		     const struct ib_mad *in, struct ib_mad *out,
		     size_t *out_mad_size, u16 *out_mad_pkey_index)
{
	const struct ib_pma_mad *pin = (const void *)in;
	struct ib_pma_mad *pout = (void *)out;
	const u8 port_select = pin->data[1];
	__be16 attr = in->mad_hdr.attr_id;

	if (port != XNIC_PORT || *out_mad_size < sizeof(*out) ||
	    in->mad_hdr.mgmt_class != IB_MGMT_CLASS_PERF_MGMT ||
	    in->mad_hdr.method != IB_MGMT_METHOD_GET)
		return IB_MAD_RESULT_FAILURE;
	if (attr != IB_PMA_CLASS_PORT_INFO && port_select != port &&
	    port_select != 0xff)
		return IB_MAD_RESULT_FAILURE;

	memset(out, 0, sizeof(*out));
	out->mad_hdr = in->mad_hdr;
	out->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	out->mad_hdr.status = 0;
	if (attr == IB_PMA_CLASS_PORT_INFO)
		xnic_pma_class_port_info(pout);
	else if (attr == IB_PMA_PORT_COUNTERS)
		xnic_pma_port_counters(to_xdev(ibdev), port_select, pout);
	else if (attr == IB_PMA_PORT_COUNTERS_EXT)
		xnic_pma_port_counters_ext(to_xdev(ibdev), port_select, pout);
	else
		return IB_MAD_RESULT_FAILURE;
	*out_mad_size = sizeof(*out);
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}
