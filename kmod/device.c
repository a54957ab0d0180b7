// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - RDMA device: creation through `rdma link add`, registration with
 * ib_core, device and port queries, and teardown.
 */
#include <linux/module.h>
#include <linux/etherdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "xnic.h"
#include "wire.h"
#include "verbs.h"
#include "engine.h"
#include "transport.h"
#include "../uapi/xnic-abi.h"

/* All xnic devices, protected by RTNL. */
static LIST_HEAD(xnic_devs);

/* Runs deferred unregistrations; flushed before module unload. */
static struct workqueue_struct *xnic_wq;
/* Lockdep class of the MR tables' xa_lock (see xnic_dev_add()). */
static struct lock_class_key xnic_mrs_lock_key;

static int xnic_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *attr,
			     struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	attr->fw_ver = 0;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = XNIC_VENDOR_ID;
	attr->max_pkeys = 1;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	/* Limits of the verbs objects (verbs.c, mr.c, cq.c, qp.c). */
	attr->max_qp = (1 << 24) - 16;
	attr->max_qp_wr = XNIC_MAX_QP_WR;
	attr->max_send_sge = XNIC_MAX_SGE;
	attr->max_recv_sge = XNIC_MAX_RECV_SGE;
	attr->max_sge_rd = XNIC_MAX_SGE;
	attr->max_cq = (1 << 24) - 1;
	attr->max_cqe = XNIC_MAX_CQE;
	attr->max_mr = (1 << 24) - 1;
	attr->max_pd = (1 << 24) - 1;
	return 0;
}

static int xnic_query_port(struct ib_device *ibdev, u32 port,
			   struct ib_port_attr *attr)
{
	struct xnic_dev *xdev = to_xdev(ibdev);
	struct xnic_link *link;
	bool active = false, admin_up = false;
	int min_mtu = INT_MAX;

	/* *attr is zeroed by ib_query_port(). */
	rcu_read_lock();
	list_for_each_entry_rcu(link, &xdev->links, list) {
		active |= xnic_link_is_up(link);
		admin_up |= !!(READ_ONCE(link->ndev->flags) & IFF_UP);
		min_mtu = min_t(int, min_mtu, READ_ONCE(link->ndev->mtu));
	}
	rcu_read_unlock();
	if (min_mtu == INT_MAX)
		min_mtu = ETH_DATA_LEN;

	attr->state = active ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	if (active)
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	else if (admin_up)
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = xnic_wire_ib_mtu(xnic_wire_payload_mtu(min_mtu));
	attr->gid_tbl_len = 1;
	attr->pkey_tbl_len = 1;
	attr->max_msg_sz = XNIC_MAX_MSG_SIZE;
	attr->lid = 0;
	attr->sm_lid = 0;

	/*
	 * Speed and width come from the first member link's ethtool data;
	 * while that link is going away, report the slowest rate.
	 */
	if (ib_get_eth_speed(ibdev, port, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int xnic_get_port_immutable(struct ib_device *ibdev, u32 port,
				   struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;

	/* Our own transport: no IB, RoCE or iWARP core protocol (as efa). */
	immutable->core_cap_flags = 0;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	return 0;
}

static enum rdma_link_layer xnic_get_link_layer(struct ib_device *ibdev,
						u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/*
 * The one GID is the IPv6 link-local address built from the first member
 * link's MAC (fe80::/64 + modified EUI-64, RFC 4291 appendix A).
 */
static int xnic_query_gid(struct ib_device *ibdev, u32 port, int index,
			  union ib_gid *gid)
{
	if (index != 0)
		return -EINVAL;

	memset(gid, 0, sizeof(*gid));
	gid->global.subnet_prefix = cpu_to_be64(0xfe80000000000000ULL);
	gid->global.interface_id = ibdev->node_guid;
	return 0;
}

static int xnic_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			   u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static void xnic_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s", XNIC_FW_VERSION);
}

/*
 * Called by ib_core once the device is unregistered and unused (every user
 * object is destroyed), and by ib_dealloc_device() when xnic_dev_add()
 * fails. The engine runs only while the transport is set up: stopping it
 * also tells whether xnic_tp_dev_cleanup() is due.
 */
static void xnic_dealloc_driver(struct ib_device *ibdev)
{
	struct xnic_dev *xdev = to_xdev(ibdev);

	rtnl_lock();
	/* ib_core's cache is gone: detaching must not dispatch port events. */
	xdev->registered = false;
	xnic_link_detach_all(xdev);
	list_del_init(&xdev->list);
	rtnl_unlock();

	if (xdev->engine) {
		/* No link queues frames any more: stop, then the transport. */
		xnic_engine_stop(xdev);
		xnic_tp_dev_cleanup(xdev);
	}
	WARN_ON(!xa_empty(&xdev->qps));
	WARN_ON(!xa_empty(&xdev->mrs));
	xa_destroy(&xdev->qps);
	xa_destroy(&xdev->mrs);
}

/*
 * hca_type and board_id: ib_core asks new drivers for no device sysfs
 * files, but Debian 12's prometheus-node-exporter (1.5.0; procfs before
 * 0.10) skips the whole infiniband collector when a device lacks either.
 */
static ssize_t hca_type_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "xnic\n");
}
static DEVICE_ATTR_RO(hca_type);

static ssize_t board_id_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "xnic-%s\n", XNIC_FW_VERSION);
}
static DEVICE_ATTR_RO(board_id);

static struct attribute *xnic_dev_attrs[] = {
	&dev_attr_hca_type.attr,
	&dev_attr_board_id.attr,
	NULL
};

static const struct attribute_group xnic_dev_attr_group = {
	.attrs = xnic_dev_attrs,
};

static const struct ib_device_ops xnic_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = XNIC_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = xnic_alloc_hw_port_stats,
	.dealloc_driver = xnic_dealloc_driver,
	.device_group = &xnic_dev_attr_group,
	.get_dev_fw_str = xnic_get_dev_fw_str,
	.get_hw_stats = xnic_get_hw_stats,
	.get_link_layer = xnic_get_link_layer,
	.get_port_immutable = xnic_get_port_immutable,
	.process_mad = xnic_process_mad,
	.query_device = xnic_query_device,
	.query_gid = xnic_query_gid,
	.query_pkey = xnic_query_pkey,
	.query_port = xnic_query_port,
};

static void xnic_unreg_work(struct work_struct *work)
{
	struct xnic_dev *xdev = container_of(work, struct xnic_dev,
					     unreg_work);

	rtnl_lock();
	xdev->registered = false;
	rtnl_unlock();
	ib_unregister_device(&xdev->ibdev);
	put_device(&xdev->ibdev.dev);
}

/**
 * xnic_dev_schedule_unregister() - unregister a device from process context
 * @xdev: the device; it must have been allocated by xnic_dev_add()
 *
 * Used from netdev notifiers, which run under RTNL where
 * ib_unregister_device() must not be called. Holds a device reference
 * until the work has run. Idempotent.
 */
void xnic_dev_schedule_unregister(struct xnic_dev *xdev)
{
	get_device(&xdev->ibdev.dev);
	if (!queue_work(xnic_wq, &xdev->unreg_work))
		put_device(&xdev->ibdev.dev);
}

/**
 * xnic_dev_find() - a registered xnic device by name, as seen from a
 *	network namespace
 * @net: the caller's namespace (sock_net() of its netlink socket)
 * @name: RDMA device name
 *
 * In ib_core's exclusive namespace mode a device in another namespace is
 * not found (rdma_dev_access_netns(), netns.c).
 *
 * Context: RTNL held; the device stays valid while it is held.
 * Return: the device, or NULL when no registered xnic device visible from
 * @net has @name.
 */
struct xnic_dev *xnic_dev_find(const struct net *net, const char *name)
{
	struct xnic_dev *xdev;

	ASSERT_RTNL();
	list_for_each_entry(xdev, &xnic_devs, list)
		if (xdev->registered && xnic_dev_visible(xdev, net) &&
		    !strncmp(xdev->ibdev.name, name, IB_DEVICE_NAME_MAX))
			return xdev;
	return NULL;
}

/**
 * xnic_dev_find_index() - a registered xnic device by RDMA device index,
 *	as seen from a network namespace
 * @net: the caller's namespace
 * @index: ib_core's index of the device (ib_device.index)
 *
 * Context: RTNL held; the device stays valid while it is held.
 * Return: the device, or NULL when no registered xnic device visible from
 * @net has @index.
 */
struct xnic_dev *xnic_dev_find_index(const struct net *net, u32 index)
{
	struct xnic_dev *xdev;

	ASSERT_RTNL();
	list_for_each_entry(xdev, &xnic_devs, list)
		if (xdev->registered && xnic_dev_visible(xdev, net) &&
		    xdev->ibdev.index == index)
			return xdev;
	return NULL;
}

/**
 * xnic_dev_nth() - the registered xnic devices visible from a network
 *	namespace, one by one (netlink dumps)
 * @net: the caller's namespace
 * @n: position among the visible devices, from 0
 *
 * Context: RTNL held; the device stays valid while it is held.
 * Return: the @n-th registered device visible from @net in creation
 * order, or NULL past the last one.
 */
struct xnic_dev *xnic_dev_nth(const struct net *net, unsigned int n)
{
	struct xnic_dev *xdev;

	ASSERT_RTNL();
	list_for_each_entry(xdev, &xnic_devs, list)
		if (xdev->registered && xnic_dev_visible(xdev, net) && !n--)
			return xdev;
	return NULL;
}

/**
 * xnic_dev_add() - create and register an xnic device (rdma_link_ops.newlink)
 * @name: RDMA device name, as given to `rdma link add NAME`
 * @ndev: first member link; the caller holds a reference
 *
 * Context: process context, RTNL not held.
 * Return: 0 on success; -EINVAL for loopback, non-Ethernet or too small
 * an MTU; -EEXIST when @ndev already belongs to an xnic device; -ENODEV
 * when @ndev is being unregistered; -ENOMEM; or ib_register_device()'s
 * error (-ENFILE for a duplicate name).
 */
int xnic_dev_add(const char *name, struct net_device *ndev)
{
	struct xnic_dev *xdev;
	bool orphan;
	int err, i;

	xdev = ib_alloc_device(xnic_dev, ibdev);
	if (!xdev)
		return -ENOMEM;

	INIT_LIST_HEAD(&xdev->list);
	INIT_LIST_HEAD(&xdev->links);
	INIT_WORK(&xdev->unreg_work, xnic_unreg_work);

	xdev->ibdev.node_type = RDMA_NODE_UNSPECIFIED;
	xdev->ibdev.phys_port_cnt = 1;
	xdev->ibdev.num_comp_vectors = 1;
	xdev->ibdev.local_dma_lkey = 0;
	strscpy(xdev->ibdev.node_desc, "xnic", sizeof(xdev->ibdev.node_desc));
	addrconf_addr_eui48((unsigned char *)&xdev->ibdev.node_guid,
			    ndev->dev_addr);
	/*
	 * The doorbell wakeup syscall (DESIGN.md section 7), and arming a CQ
	 * for a completion event (libxnic's xnic_cq_wait()): ib_core leaves
	 * both out of the default command mask.
	 */
	xdev->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				       BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(&xdev->ibdev, &xnic_dev_ops);
	ib_set_device_ops(&xdev->ibdev, &xnic_verbs_ops);

	xa_init_flags(&xdev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	xa_init_flags(&xdev->mrs, XA_FLAGS_ALLOC);
	/*
	 * xa_init_flags() gives every xarray initialised in this file one
	 * lockdep class. The QP table's lock is taken in softirq (LOCK_BH);
	 * the MR table's never is (the receive path looks MRs up under RCU),
	 * so its lock is a class of its own.
	 */
	lockdep_set_class(&xdev->mrs.xa_lock, &xnic_mrs_lock_key);
	xdev->node_id = (ndev->dev_addr[4] << 8) | ndev->dev_addr[5];
	/* A MAC ending in ff:ff: the broadcast id is no node's. */
	if (xdev->node_id == XNIC_NODE_BROADCAST)
		xdev->node_id--;
	xdev->params.idle_us = xnic_engine_default_idle_us();
	xdev->params.hb_interval_ms = XNIC_DEF_HB_INTERVAL_MS;
	xdev->params.hb_miss = XNIC_DEF_HB_MISS;
	xdev->params.credit_window = XNIC_DEF_CREDIT_WINDOW;
	for (i = 0; i < XNIC_NR_TCLASSES; i++)
		xdev->params.class_weight[i] = XNIC_DEF_CLASS_WEIGHT;
	xdev->params.peer_timeout_ms = XNIC_DEF_PEER_TIMEOUT_MS;
	xdev->params.bond_hold_ms = XNIC_DEF_BOND_HOLD_MS;
	xdev->params.max_peers = XNIC_DEF_MAX_PEERS;

	/*
	 * Transport and engine exist before any member link can hand them a
	 * frame. xnic_dealloc_driver() undoes both when xdev->engine is set.
	 */
	err = xnic_tp_dev_init(xdev);
	if (err)
		goto err_dealloc;
	err = xnic_engine_start(xdev, name);
	if (err) {
		xnic_tp_dev_cleanup(xdev);
		goto err_dealloc;
	}

	rtnl_lock();
	err = xnic_link_check_netdev(ndev, NULL);
	if (!err)
		err = xnic_link_attach(xdev, ndev);
	if (!err)
		list_add_tail(&xdev->list, &xnic_devs);
	rtnl_unlock();
	if (err)
		goto err_dealloc;

	err = ib_register_device(&xdev->ibdev, name, NULL);
	if (err)
		goto err_dealloc;

	/*
	 * The member link may have been unregistered while we registered:
	 * the notifier detached it but could not unregister a device that
	 * was not registered yet. Finish the job here.
	 */
	rtnl_lock();
	orphan = !xdev->nr_links;
	if (!orphan) {
		xdev->registered = true;
		xnic_dev_update_port(xdev);
	}
	rtnl_unlock();
	if (orphan) {
		ib_unregister_device(&xdev->ibdev);
		return -ENODEV;
	}
	return 0;

err_dealloc:
	/* A notifier may have queued an unregistration; it holds a ref. */
	if (cancel_work_sync(&xdev->unreg_work))
		put_device(&xdev->ibdev.dev);
	/* Calls xnic_dealloc_driver(), which detaches the links. */
	ib_dealloc_device(&xdev->ibdev);
	return err;
}

/**
 * xnic_dev_remove_all() - unregister every xnic device (module unload)
 *
 * Context: process context, RTNL not held. The link ops must already be
 * unregistered so that no new device appears.
 */
void xnic_dev_remove_all(void)
{
	struct xnic_dev *xdev;

	flush_workqueue(xnic_wq);
	for (;;) {
		rtnl_lock();
		xdev = list_first_entry_or_null(&xnic_devs, struct xnic_dev,
						list);
		if (xdev) {
			list_del_init(&xdev->list);
			get_device(&xdev->ibdev.dev);
		}
		rtnl_unlock();
		if (!xdev)
			break;
		ib_unregister_device(&xdev->ibdev);
		put_device(&xdev->ibdev.dev);
	}
	flush_workqueue(xnic_wq);
}

/**
 * xnic_dev_init() - set up device-wide state at module load
 *
 * Return: 0 or -ENOMEM.
 */
int xnic_dev_init(void)
{
	xnic_wq = alloc_workqueue("xnic", WQ_UNBOUND, 0);
	return xnic_wq ? 0 : -ENOMEM;
}

/**
 * xnic_dev_exit() - release device-wide state at module unload
 *
 * Call after xnic_dev_remove_all().
 */
void xnic_dev_exit(void)
{
	destroy_workqueue(xnic_wq);
}
