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
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#define XNIC_DRV_NAME		"xnic"
#define XNIC_PORT		1
#define XNIC_MAX_LINKS		8
#define XNIC_FW_VERSION		"0.1.0"
#define XNIC_DRV_VERSION	XNIC_FW_VERSION
/* IEEE OUI reserved for private use is not a thing; 0 says "no vendor". */
#define XNIC_VENDOR_ID		0
/* Largest message, bytes: the wire's offset and length fields are 32 bit. */
#define XNIC_MAX_MSG_SIZE	0x80000000U
/* Smallest payload a member link's MTU must leave room for, bytes. */
#define XNIC_MIN_PAYLOAD	256

/*
 * Memory a process asks for through a verb (rings, transport tables, MR
 * page arrays, CM records): charged to its memory cgroup, and at the
 * cgroup's memory.max the verb fails with -ENOMEM (__GFP_RETRY_MAYFAIL)
 * rather than waking the cgroup's OOM killer.
 */
#define XNIC_GFP_ACCOUNT	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL)

struct xnic_bond_link;

/**
 * struct xnic_link - a member link: one Ethernet netdev carrying xnic frames
 * @list: entry in xnic_dev.links (RTNL for writers, RCU for readers)
 * @node: entry in the global list of links (RTNL)
 * @xdev: owning device
 * @ndev: the netdev; a reference is held while the link is attached
 * @ndev_tracker: reference tracker for @ndev
 * @index: link number within the device, stable while attached
 * @pt: receive hook for xnic frames on @ndev (dev_add_pack)
 * @nl_up: link state last announced on netlink (RTNL)
 * @bond: heartbeat, health and bond state (bond.c); set while attached
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
	bool nl_up;
	struct xnic_bond_link *bond;
	struct rcu_head rcu;
};

/**
 * struct xnic_uint_param - an unsigned module parameter with a range
 * @val: the value; read it with READ_ONCE(), it may change at any time
 * @min: smallest value accepted (but for 0 when @zero_ok)
 * @max: largest value accepted
 * @zero_ok: 0 is accepted too (it turns the feature off)
 *
 * Declared with module_param_cb(name, &xnic_uint_param_ops, &param,
 * perm): a write out of range fails with -EINVAL and changes nothing, and
 * so does a value out of range given at module load.
 */
struct xnic_uint_param {
	unsigned int val;
	unsigned int min, max;
	bool zero_ok;
};

extern const struct kernel_param_ops xnic_uint_param_ops;

/* Defaults of struct xnic_params; netlink.c has the ranges. */
#define XNIC_DEF_IDLE_US	20
#define XNIC_MAX_IDLE_US	10000000
#define XNIC_DEF_HB_INTERVAL_MS	100
#define XNIC_DEF_HB_MISS	3
#define XNIC_DEF_CREDIT_WINDOW	256
#define XNIC_DEF_CLASS_WEIGHT	1
#define XNIC_DEF_PEER_TIMEOUT_MS	1000
#define XNIC_DEF_BOND_HOLD_MS	500
#define XNIC_DEF_MAX_PEERS	1024
/* Traffic classes with a weight (uapi XNIC_NR_CLASSES). */
#define XNIC_NR_TCLASSES	2

/**
 * struct xnic_params - tunables of a device (netlink PARAM_SET/PARAM_GET)
 * @idle_us: microseconds the engine busy-polls without work before it
 *	sleeps
 * @hb_interval_ms: heartbeat interval on every member link, ms (bonding)
 * @hb_miss: heartbeats missed before a member link is down (bonding)
 * @credit_window: credits (frames) a receiver grants a flow (credits)
 * @class_weight: scheduling weight of each traffic class (credits)
 * @bond_policy: enum xnic_bond_policy (bonding)
 * @peer_timeout_ms: a peer without a usable link fails its QPs' work
 *	after this long, ms; 0: never (bonding)
 * @bond_hold_ms: a recovering link must stay healthy this long, ms
 *	(bonding)
 * @max_peers: nodes the peer table holds at most; HELLOs of more are
 *	refused (peers_refused)
 *
 * Written under RTNL with WRITE_ONCE(); read anywhere with READ_ONCE().
 * The node id is xnic_dev.node_id.
 */
struct xnic_params {
	u32 idle_us;
	u32 hb_interval_ms;
	u32 hb_miss;
	u32 credit_window;
	u32 class_weight[XNIC_NR_TCLASSES];
	u32 bond_policy;
	u32 peer_timeout_ms;
	u32 bond_hold_ms;
	u32 max_peers;
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
 * @node_id: this device's node id on the fabric (changed by netlink only
 *	while @qps is empty, under its lock)
 * @params: tunables (netlink)
 * @engine: the engine thread's state (engine.c)
 * @peers: peer table (transport, peer.c)
 * @qps: QPN -> struct xnic_qp (xa_alloc_cyclic_bh; lookups under the
 *	xarray's lock: ib_core frees QPs without an RCU grace period)
 * @qpn_next: xa_alloc_cyclic cursor for @qps (under its lock)
 * @mrs: key >> 8 -> struct xnic_mr (xa_alloc; readers under RCU)
 * @mr_gen: generation counter for the low 8 bits of MR keys
 * @cm: connection manager (cm.c), set up and torn down with @peers
 * @lcr_empty: link credit paths of the member links that have no credit
 *	to send with (link_credit.c); while none, no lookup is needed to
 *	know a path has some
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
	struct xnic_params params;
	struct xnic_engine *engine;
	struct xnic_peers *peers;
	struct xarray qps;
	u32 qpn_next;
	struct xarray mrs;
	atomic_t mr_gen;
	struct xnic_cm *cm;
	atomic_t lcr_empty;
};

static inline struct xnic_dev *to_xdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct xnic_dev, ibdev);
}

/* device.c */
int xnic_dev_add(const char *name, struct net_device *ndev);
struct xnic_dev *xnic_dev_find(const struct net *net, const char *name);
struct xnic_dev *xnic_dev_find_index(const struct net *net, u32 index);
struct xnic_dev *xnic_dev_nth(const struct net *net, unsigned int n);
void xnic_dev_remove_all(void);
void xnic_dev_schedule_unregister(struct xnic_dev *xdev);
int xnic_dev_init(void);
void xnic_dev_exit(void);

/* link.c */
int xnic_link_check_netdev(struct net_device *ndev,
			   struct netlink_ext_ack *extack);
int xnic_link_attach(struct xnic_dev *xdev, struct net_device *ndev);
int xnic_link_add(struct xnic_dev *xdev, struct net_device *ndev,
		  struct netlink_ext_ack *extack);
int xnic_link_del(struct xnic_dev *xdev, struct net_device *ndev,
		  struct netlink_ext_ack *extack);
void xnic_link_detach(struct xnic_link *link);
void xnic_link_detach_all(struct xnic_dev *xdev);
struct xnic_link *xnic_link_find(struct net_device *ndev);
bool xnic_link_is_up(const struct xnic_link *link);
struct net_device *xnic_dev_first_netdev(struct xnic_dev *xdev);
void xnic_dev_update_port(struct xnic_dev *xdev);
int xnic_link_notifier_register(void);
void xnic_link_notifier_unregister(void);

/* link_burst.c: a link's data frames as one skb through the stack */
struct sk_buff *xnic_burst_split(struct sk_buff *skb);
void xnic_link_burst_init(void);
void xnic_link_burst_exit(void);

/* counters.c: transport and engine counters, by name */
void xnic_counters_init(void);
unsigned int xnic_counters_num(void);
const char *xnic_counter_name(unsigned int i);
unsigned int xnic_counters_read(struct xnic_dev *xdev, u64 *vals,
				unsigned int n);
struct rdma_hw_stats *xnic_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port);
int xnic_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index);

/* pma.c: PerfMgt PortCounters for ib_core's ports/1/counters/ */
struct ib_mad;
struct ib_grh;
int xnic_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
		     const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		     const struct ib_mad *in, struct ib_mad *out,
		     size_t *out_mad_size, u16 *out_mad_pkey_index);

/* netlink.c: generic netlink family "xnic" (uapi/xnic-netlink.h) */
int xnic_nl_init(void);
void xnic_nl_exit(void);
bool xnic_nl_is_live(void);
void xnic_nl_link_event(struct xnic_link *link, int event);
void xnic_nl_link_state(struct xnic_link *link);
void xnic_nl_link_bond_event(struct xnic_link *link, int event);
struct xnic_tp_peer_info;
void xnic_nl_peer_event(struct xnic_dev *xdev,
			const struct xnic_tp_peer_info *pi, int event);

/* netns.c: network namespaces of devices, events and member links */
struct net *xnic_dev_net(const struct xnic_dev *xdev);
bool xnic_dev_net_shared(const struct xnic_dev *xdev);
bool xnic_dev_visible(const struct xnic_dev *xdev, const struct net *net);
bool xnic_nl_has_listeners(const struct xnic_dev *xdev, unsigned int group);
void xnic_nl_multicast(const struct xnic_dev *xdev, struct sk_buff *skb,
		       unsigned int group);
void xnic_link_netns_leave(struct xnic_link *link);
void xnic_link_netns_enter(struct xnic_link *link);

#endif /* XNIC_H */
