/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic - core objects of the driver.
 *
 * Object model: one struct xnic_dev per RDMA device ("xnic0"), one IB port,
 * and one or more member links (struct xnic_link), each bound to an Ethernet
 * netdev. Member links are the physical lanes of the device; the RDMA port is
 * ACTIVE while at least one of them is up with carrier.
 *
 * Locking:
 *  - xnic_dev.links and xnic_link.list are written under RTNL and read
 *    under RTNL (control path) or RCU (datapath).
 *  - The global device list (xnic_devs in device.c) is protected by RTNL.
 *  - ib_register_device()/ib_unregister_device() are never called with RTNL
 *    held: netdev events queue xnic_dev.unreg_work instead.
 */
#ifndef XNIC_H
#define XNIC_H

#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#define XNIC_DRV_NAME		"xnic"
#define XNIC_PORT		1
#define XNIC_MAX_LINKS		8
#define XNIC_FW_VERSION		"0.1.0"
/* IEEE OUI reserved for private use is not a thing; 0 says "no vendor". */
#define XNIC_VENDOR_ID		0
/* Largest message, bytes: the wire's offset and length fields are 32 bit. */
#define XNIC_MAX_MSG_SIZE	0x80000000U
/* Smallest payload a member link's MTU must leave room for, bytes. */
#define XNIC_MIN_PAYLOAD	256

/**
 * struct xnic_link - a member link: one Ethernet netdev carrying xnic frames
 * @list: entry in xnic_dev.links (RTNL for writers, RCU for readers)
 * @node: entry in the global list of links (RTNL)
 * @xdev: owning device
 * @ndev: the netdev; a reference is held while the link is attached
 * @ndev_tracker: reference tracker for @ndev
 * @index: link number within the device, stable while attached
 * @pt: receive hook for xnic frames on @ndev (dev_add_pack)
 * @rcu: deferred free
 */
struct xnic_link {
	struct list_head list;
	struct list_head node;
	struct xnic_dev *xdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	u8 index;
	struct packet_type pt;
	struct rcu_head rcu;
};

/**
 * struct xnic_dev - one xnic RDMA device
 * @ibdev: the ib_core device (must stay first: ib_alloc_device() rule)
 * @list: entry in the global device list (RTNL)
 * @links: member links (RTNL / RCU)
 * @nr_links: number of entries in @links (RTNL)
 * @registered: ib_register_device() succeeded (RTNL)
 * @port_active: last port state reported to ib_core (RTNL)
 * @unreg_work: unregisters the device when its last member link is gone
 * @node_id: this device's node id on the fabric
 * @engine: the engine thread's state (engine.c)
 * @peers: peer table (transport, peer.c)
 * @qps: QPN -> struct xnic_qp (xa_alloc_cyclic_bh; lookups under the
 *	xarray's lock: ib_core frees QPs without an RCU grace period)
 * @qpn_next: xa_alloc_cyclic cursor for @qps (under its lock)
 * @mrs: key >> 8 -> struct xnic_mr (xa_alloc; readers under RCU)
 * @mr_gen: generation counter for the low 8 bits of MR keys
 */
struct xnic_dev {
	struct ib_device ibdev;
	struct list_head list;
	struct list_head links;
	unsigned int nr_links;
	bool registered;
	bool port_active;
	struct work_struct unreg_work;
	u16 node_id;
	struct xnic_engine *engine;
	struct xnic_peers *peers;
	struct xarray qps;
	u32 qpn_next;
	struct xarray mrs;
	atomic_t mr_gen;
};

static inline struct xnic_dev *to_xdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct xnic_dev, ibdev);
}

/* device.c */
int xnic_dev_add(const char *name, struct net_device *ndev);
void xnic_dev_remove_all(void);
void xnic_dev_schedule_unregister(struct xnic_dev *xdev);
int xnic_dev_init(void);
void xnic_dev_exit(void);

/* link.c */
int xnic_link_attach(struct xnic_dev *xdev, struct net_device *ndev);
void xnic_link_detach(struct xnic_link *link);
void xnic_link_detach_all(struct xnic_dev *xdev);
struct xnic_link *xnic_link_find(struct net_device *ndev);
bool xnic_link_is_up(const struct xnic_link *link);
struct net_device *xnic_dev_first_netdev(struct xnic_dev *xdev);
void xnic_dev_update_port(struct xnic_dev *xdev);
int xnic_link_notifier_register(void);
void xnic_link_notifier_unregister(void);

#endif /* XNIC_H */
