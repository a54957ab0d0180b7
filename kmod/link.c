// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - member links: the Ethernet netdevs an xnic device sends and
 * receives on, and the netdev notifier that tracks their state.
 *
 * Model: net/tipc/bearer.c (L2 bearers over netdevs). A member netdev can
 * disappear at any time: NETDEV_UNREGISTER detaches the link at once (so
 * the netdev's refcount can drain) and, when it was the device's last link,
 * queues the RDMA device's unregistration. A netdev moving to another
 * network namespace only seems to disappear: its link stays (netns.c).
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/stringify.h>

#include "xnic.h"
#include "bond.h"
#include "engine.h"
#include "transport.h"
#include "wire.h"
#include "../uapi/xnic-netlink.h"

/* Every attached link of every device, protected by RTNL. */
static LIST_HEAD(xnic_all_links);

/**
 * xnic_link_find() - the member link bound to a netdev
 * @ndev: netdev to look up
 *
 * Context: RTNL held.
 * Return: the link, or NULL when @ndev is not an xnic member link.
 */
struct xnic_link *xnic_link_find(struct net_device *ndev)
{
	struct xnic_link *link;

	ASSERT_RTNL();
	list_for_each_entry(link, &xnic_all_links, node)
		if (link->ndev == ndev)
			return link;
	return NULL;
}

/**
 * xnic_link_is_up() - whether a member link can carry traffic now
 * @link: the link
 *
 * Return: true when the netdev is administratively up, running and has
 * carrier.
 */
bool xnic_link_is_up(const struct xnic_link *link)
{
	return netif_running(link->ndev) && netif_carrier_ok(link->ndev);
}

/**
 * xnic_dev_first_netdev() - the netdev of a device's first member link
 * @xdev: the device
 *
 * Context: RTNL held.
 * Return: the netdev, or NULL when the device has no link.
 */
struct net_device *xnic_dev_first_netdev(struct xnic_dev *xdev)
{
	struct xnic_link *link;

	ASSERT_RTNL();
	link = list_first_entry_or_null(&xdev->links, struct xnic_link, list);
	return link ? link->ndev : NULL;
}

/**
 * xnic_dev_update_port() - report a change of the port state to ib_core
 * @xdev: the device
 *
 * The port is ACTIVE while at least one member link is up. A change raises
 * IB_EVENT_PORT_ACTIVE or IB_EVENT_PORT_ERR (IBTA 1.4 section 11.6.3).
 *
 * Context: RTNL held.
 */
void xnic_dev_update_port(struct xnic_dev *xdev)
{
	struct xnic_link *link;
	struct ib_event ev = {};
	bool active = false;

	ASSERT_RTNL();
	if (!xdev->registered)
		return;
	list_for_each_entry(link, &xdev->links, list)
		active |= xnic_link_is_up(link);
	if (active == xdev->port_active)
		return;

	xdev->port_active = active;
	ev.device = &xdev->ibdev;
	ev.element.port_num = XNIC_PORT;
	ev.event = active ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

/*
 * Receive hook of a member link (softirq, RCU read side): the transport
 * handles the frame right here (transport.h: xnic_tp_rx()), but for HELLOs
 * and bulk data, which it hands to the engine thread; the device outlives
 * its links' hooks (dev_remove_pack()).
 */
static int xnic_link_rcv(struct sk_buff *skb, struct net_device *ndev,
			 struct packet_type *pt, struct net_device *orig_dev)
{
	struct xnic_link *link = container_of(pt, struct xnic_link, pt);
	struct sk_buff *next;

	if (skb->pkt_type == PACKET_OTHERHOST ||
	    skb->pkt_type == PACKET_LOOPBACK)
		goto drop;
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return NET_RX_DROP;
	xnic_bond_rx(link);
	/* A burst (link_burst.c) comes apart into its frames, in order. */
	if (skb_is_gso(skb) && (skb_shinfo(skb)->gso_type & SKB_GSO_FRAGLIST))
		skb = xnic_burst_split(skb);
	/* Short frames too: the transport counts them as malformed. */
	for (; skb; skb = next) {
		next = skb->next;
		skb_mark_not_on_list(skb);
		xnic_tp_rx(link->xdev, skb);
	}
	return NET_RX_SUCCESS;

drop:
	kfree_skb(skb);
	return NET_RX_DROP;
}

/*
 * Say why @ndev is refused: @msg (static storage) goes to the extended ACK
 * of a netlink request, or to the kernel log for `rdma link add`, whose
 * newlink op has no extended ACK.
 */
static void xnic_link_refuse(struct netlink_ext_ack *extack,
			     struct net_device *ndev, const char *msg)
{
	if (extack)
		extack->_msg = msg;
	else
		pr_err("%s: %s: %s\n", XNIC_DRV_NAME, ndev->name, msg);
}

/**
 * xnic_link_check_netdev() - whether a netdev may become a member link
 * @ndev: the candidate
 * @extack: extended ACK of a netlink request, or NULL to log the reason
 *
 * The checks of `rdma link add` and of netlink's LINK_ADD, so both refuse
 * the same netdevs with the same errno.
 *
 * Context: RTNL held.
 * Return: 0; -EINVAL for a loopback or non-Ethernet netdev or one whose
 * MTU leaves no room for a XNIC_MIN_PAYLOAD payload; -EEXIST when @ndev
 * already is a member link of an xnic device.
 */
int xnic_link_check_netdev(struct net_device *ndev,
			   struct netlink_ext_ack *extack)
{
	ASSERT_RTNL();
	if (ndev->flags & IFF_LOOPBACK) {
		xnic_link_refuse(extack, ndev,
				 "cannot use a loopback device as a member link");
		return -EINVAL;
	}
	if (ndev->type != ARPHRD_ETHER || ndev->addr_len != ETH_ALEN) {
		xnic_link_refuse(extack, ndev,
				 "member link must be an Ethernet device");
		return -EINVAL;
	}
	if (ndev->mtu < XNIC_WIRE_HDR_LEN + XNIC_MIN_PAYLOAD) {
		xnic_link_refuse(extack, ndev,
				 "netdev MTU is below the xnic header ("
				 __stringify(XNIC_WIRE_HDR_LEN)
				 " bytes) plus the smallest payload ("
				 __stringify(XNIC_MIN_PAYLOAD) " bytes)");
		return -EINVAL;
	}
	if (xnic_link_find(ndev)) {
		xnic_link_refuse(extack, ndev,
				 "netdev is already a member link of an xnic device");
		return -EEXIST;
	}
	return 0;
}

/**
 * xnic_link_attach() - make a netdev a member link of a device
 * @xdev: the device
 * @ndev: a registered Ethernet netdev not used by any xnic device
 *
 * Context: RTNL held.
 * Return: 0; -ENODEV when @ndev is unregistering; -ENOSPC when the device
 * has XNIC_MAX_LINKS links; -ENOMEM; or ib_device_set_netdev()'s error.
 */
int xnic_link_attach(struct xnic_dev *xdev, struct net_device *ndev)
{
	struct xnic_link *link;
	int err;

	ASSERT_RTNL();
	if (ndev->reg_state != NETREG_REGISTERED)
		return -ENODEV;
	if (xdev->nr_links >= XNIC_MAX_LINKS)
		return -ENOSPC;

	link = kzalloc(sizeof(*link), GFP_KERNEL);
	if (!link)
		return -ENOMEM;
	link->xdev = xdev;
	link->ndev = ndev;
	err = xnic_bond_link_init(link);
	if (err) {
		kfree(link);
		return err;
	}

	if (!xdev->nr_links) {
		/* The port's netdev is what `rdma link show` reports. */
		err = ib_device_set_netdev(&xdev->ibdev, ndev, XNIC_PORT);
		if (err) {
			xnic_bond_link_fini(link);
			kfree(link);
			return err;
		}
	}

	netdev_hold(ndev, &link->ndev_tracker, GFP_KERNEL);
	list_add_tail(&link->node, &xnic_all_links);
	list_add_tail_rcu(&link->list, &xdev->links);
	xdev->nr_links++;
	link->pt.type = htons(XNIC_ETH_P);
	link->pt.dev = ndev;
	link->pt.func = xnic_link_rcv;
	dev_add_pack(&link->pt);
	link->nl_up = xnic_link_is_up(link);
	xnic_dev_update_port(xdev);
	xnic_tp_link_changed(xdev);
	xnic_nl_link_event(link, XNIC_EVENT_LINK_ADDED);
	return 0;
}

/**
 * xnic_link_detach() - remove a member link from its device
 * @link: the link; freed after an RCU grace period
 *
 * Context: RTNL held.
 */
void xnic_link_detach(struct xnic_link *link)
{
	struct xnic_dev *xdev = link->xdev;

	ASSERT_RTNL();
	xnic_nl_link_event(link, XNIC_EVENT_LINK_REMOVED);
	/* Waits for running receive hooks (synchronize_net()). */
	dev_remove_pack(&link->pt);
	list_del(&link->node);
	list_del_rcu(&link->list);
	xdev->nr_links--;
	xnic_bond_link_fini(link);
	xnic_tp_link_detached(xdev, link->ndev->ifindex);

	/*
	 * The port's netdev follows the first link; ib_core must not keep a
	 * reference to an unregistering netdev (ib_device_set_netdev()).
	 */
	ib_device_set_netdev(&xdev->ibdev, xnic_dev_first_netdev(xdev),
			     XNIC_PORT);

	netdev_put(link->ndev, &link->ndev_tracker);
	kfree_rcu(link, rcu);
	xnic_dev_update_port(xdev);
}

/**
 * xnic_link_detach_all() - remove every member link of a device
 * @xdev: the device
 *
 * Context: RTNL held.
 */
void xnic_link_detach_all(struct xnic_dev *xdev)
{
	struct xnic_link *link, *tmp;

	ASSERT_RTNL();
	list_for_each_entry_safe(link, tmp, &xdev->links, list)
		xnic_link_detach(link);
}

/**
 * xnic_link_add() - add a member link to a registered device at runtime
 * @xdev: the device
 * @ndev: the netdev; the caller holds a reference
 * @extack: extended ACK for the reason of a refusal
 *
 * Netlink's LINK_ADD: the checks of `rdma link add`, then
 * xnic_link_attach().
 *
 * Context: RTNL held.
 * Return: 0; -ENODEV when @xdev is being removed or @ndev unregistered;
 * -ENOSPC at XNIC_MAX_LINKS links; xnic_link_check_netdev()'s or
 * xnic_link_attach()'s error.
 */
int xnic_link_add(struct xnic_dev *xdev, struct net_device *ndev,
		  struct netlink_ext_ack *extack)
{
	int err;

	ASSERT_RTNL();
	if (!xdev->registered || !xdev->nr_links) {
		NL_SET_ERR_MSG(extack, "xnic device is being removed");
		return -ENODEV;
	}
	err = xnic_link_check_netdev(ndev, extack);
	if (err)
		return err;
	if (xdev->nr_links >= XNIC_MAX_LINKS) {
		NL_SET_ERR_MSG(extack,
			       "device has the most member links it can have ("
			       __stringify(XNIC_MAX_LINKS) ")");
		return -ENOSPC;
	}
	err = xnic_link_attach(xdev, ndev);
	if (err == -ENODEV)
		NL_SET_ERR_MSG(extack, "netdev is being unregistered");
	return err;
}

/**
 * xnic_link_del() - remove a member link from a device at runtime
 * @xdev: the device
 * @ndev: the member link's netdev
 * @extack: extended ACK for the reason of a refusal
 *
 * Netlink's LINK_DEL. The last member link cannot go this way: the device
 * would be left without one; `rdma link delete` removes the device.
 *
 * Context: RTNL held.
 * Return: 0; -ENOENT when @ndev is not a member link of @xdev; -EBUSY when
 * it is the last one.
 */
int xnic_link_del(struct xnic_dev *xdev, struct net_device *ndev,
		  struct netlink_ext_ack *extack)
{
	struct xnic_link *link = xnic_link_find(ndev);

	ASSERT_RTNL();
	if (!link || link->xdev != xdev) {
		NL_SET_ERR_MSG(extack,
			       "netdev is not a member link of this xnic device");
		return -ENOENT;
	}
	if (xdev->nr_links == 1) {
		NL_SET_ERR_MSG(extack,
			       "cannot remove the last member link: use 'rdma link delete' to remove the device");
		return -EBUSY;
	}
	xnic_link_detach(link);
	return 0;
}

static int xnic_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct xnic_link *link = xnic_link_find(ndev);
	struct xnic_dev *xdev;

	if (!link)
		return NOTIFY_DONE;
	xdev = link->xdev;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* Moving to another namespace, not going away (netns.c). */
		if (ndev->reg_state == NETREG_REGISTERED) {
			xnic_link_netns_leave(link);
			break;
		}
		xnic_link_detach(link);
		if (!xdev->nr_links)
			xnic_dev_schedule_unregister(xdev);
		break;
	case NETDEV_UP:
	case NETDEV_CHANGE:
		xnic_bond_link_changed(link);
		xnic_dev_update_port(xdev);
		xnic_tp_link_changed(xdev);
		xnic_nl_link_state(link);
		break;
	case NETDEV_REGISTER:
		/* Arrived in its new namespace (netns.c). */
		xnic_link_netns_enter(link);
		break;
	case NETDEV_DOWN:
		xnic_bond_link_changed(link);
		xnic_dev_update_port(xdev);
		xnic_nl_link_state(link);
		break;
	default:
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block xnic_netdev_nb = {
	.notifier_call = xnic_netdev_event,
};

/**
 * xnic_link_notifier_register() - start tracking netdev events
 *
 * Return: 0 or register_netdevice_notifier()'s error.
 */
int xnic_link_notifier_register(void)
{
	return register_netdevice_notifier(&xnic_netdev_nb);
}

/**
 * xnic_link_notifier_unregister() - stop tracking netdev events
 */
void xnic_link_notifier_unregister(void)
{
	unregister_netdevice_notifier(&xnic_netdev_nb);
}
