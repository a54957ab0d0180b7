// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - network namespaces: which namespace an xnic device belongs to,
 * who may name it, where its events go, and what a member netdev moving
 * between namespaces does to its link.
 *
 * An xnic device follows ib_core's RDMA namespace rules
 * (drivers/infiniband/core/device.c): in "shared" mode (`rdma system show`:
 * netns shared, the default) every device is visible from every network
 * namespace; in "exclusive" mode a device belongs to one namespace
 * (`rdma dev set DEV netns NS`) and only a caller in that namespace can
 * open it (uverbs), list it (nldev, sysfs) or, here, name it on the "xnic"
 * generic netlink family. rdma_dev_access_netns() is the one test.
 *
 * Moving the device (`rdma dev set DEV netns NS`): ib_core disables the
 * device (every ib_client's context is removed: uverbs destroys every
 * object of every open context, then calls disassociate_ucontext), changes
 * its namespace and enables it again. The xnic device itself stays
 * registered: its engine, peer table, CM records and member links carry
 * on; QPs, CQs and MRs are destroyed by uverbs through the ordinary verbs
 * (as when their process exits), and the processes holding the device's
 * file get -EIO from then on.
 *
 * Member netdevs live in whatever namespace they are in; the RDMA device's
 * namespace does not need to match. A netdev moving between namespaces
 * (`ip link set DEV netns NS`) goes through NETDEV_UNREGISTER and
 * NETDEV_REGISTER with dev->reg_state staying NETREG_REGISTERED
 * (net/core/dev.c: __dev_change_net_namespace(), the rule 8021q and
 * macvlan rely on): the member link stays attached. Its ifindex may change
 * in the new namespace, and the transport keys paths by ifindex, so the
 * paths over the link are forgotten when it leaves and relearned from
 * HELLOs once it is up again.
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>

#include "xnic.h"
#include "transport.h"
#include "cm.h"

/**
 * xnic_dev_net() - the network namespace of an xnic device
 * @xdev: the device
 *
 * In shared mode this is always &init_net, where ib_core creates devices.
 *
 * Context: any; the result may change under a concurrent `rdma dev set
 * netns` (ib_core writes it while the device is disabled).
 * Return: the namespace; no reference is taken.
 */
struct net *xnic_dev_net(const struct xnic_dev *xdev)
{
	return read_pnet(&xdev->ibdev.coredev.rdma_net);
}

/**
 * xnic_dev_net_shared() - whether ib_core is in shared namespace mode
 * @xdev: any xnic device
 *
 * ib_core does not export its mode; rdma_dev_access_netns() tells it: no
 * device belongs to the NULL namespace, so access from it means "shared".
 *
 * Context: any.
 * Return: true in shared mode (every device visible everywhere).
 */
bool xnic_dev_net_shared(const struct xnic_dev *xdev)
{
	return rdma_dev_access_netns(&xdev->ibdev, NULL);
}

/**
 * xnic_dev_visible() - whether a caller in a namespace may name a device
 * @xdev: the device
 * @net: the caller's namespace (sock_net() of its netlink socket)
 *
 * Context: any.
 * Return: rdma_dev_access_netns()'s answer.
 */
bool xnic_dev_visible(const struct xnic_dev *xdev, const struct net *net)
{
	return rdma_dev_access_netns(&xdev->ibdev, net);
}

/*
 * The device's namespace with a reference, or NULL when that namespace is
 * being dismantled (its generic netlink socket may be gone already; the
 * RDMA core moves the device back to the initial namespace). Context: RCU
 * read side. The caller puts the reference (put_net(), atomic-safe).
 */
static struct net *xnic_dev_get_net(const struct xnic_dev *xdev)
{
	return maybe_get_net(xnic_dev_net(xdev));
}

/**
 * xnic_nl_has_listeners() - whether anyone may hear a device's events
 * @xdev: the device
 * @group: multicast group of the "xnic" family
 *
 * Context: RCU read side.
 * Return: true when a socket in the device's namespace listens on @group;
 * always true in shared mode, where events go to every namespace.
 */
bool xnic_nl_has_listeners(const struct xnic_dev *xdev, unsigned int group)
{
	struct net *net;
	bool ret;

	if (xnic_dev_net_shared(xdev))
		return true;
	net = xnic_dev_get_net(xdev);
	if (!net)
		return false;
	ret = genl_has_listeners(&xnic_nl_family, net, group);
	put_net(net);
	return ret;
}

/**
 * xnic_nl_multicast() - send a device's event where it can be heard
 * @xdev: the device the event is about
 * @skb: the message; consumed
 * @group: multicast group of the "xnic" family
 *
 * Exclusive mode: to the device's namespace only, so a node's events stay
 * in the node. Shared mode: to every namespace, where the device is
 * visible too. Dropped while the device's namespace is being dismantled.
 *
 * Context: RCU read side (genlmsg_multicast_allns() needs it); does not
 * sleep (GFP_ATOMIC).
 */
void xnic_nl_multicast(const struct xnic_dev *xdev, struct sk_buff *skb,
		       unsigned int group)
{
	struct net *net;

	if (xnic_dev_net_shared(xdev)) {
		genlmsg_multicast_allns(&xnic_nl_family, skb, 0, group);
		return;
	}
	net = xnic_dev_get_net(xdev);
	if (!net) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_multicast_netns(&xnic_nl_family, net, skb, 0, group,
				GFP_ATOMIC);
	put_net(net);
}

/**
 * xnic_link_netns_leave() - a member netdev leaves its namespace
 * @link: the link; it stays attached
 *
 * Called for NETDEV_UNREGISTER while dev->reg_state is still
 * NETREG_REGISTERED, i.e. from dev_change_net_namespace(): the netdev is
 * already closed and unlisted. Forgets the paths learned over it: its
 * ifindex may be another one in the new namespace.
 *
 * Context: RTNL held (netdev notifier).
 */
void xnic_link_netns_leave(struct xnic_link *link)
{
	ASSERT_RTNL();
	xnic_tp_link_detached(link->xdev, link->ndev->ifindex);
	xnic_dev_update_port(link->xdev);
}

/**
 * xnic_link_netns_enter() - a member netdev arrived in a new namespace
 * @link: the link
 *
 * NETDEV_REGISTER for a netdev that already is a member link: the second
 * half of dev_change_net_namespace(). The transport tells member links
 * apart by ifindex, which is unique per namespace only: when another
 * member link of the device has the same ifindex (its netdev is in
 * another namespace), the arriving one is detached rather than have their
 * frames mixed up, with a message in the kernel log.
 *
 * Context: RTNL held (netdev notifier).
 */
void xnic_link_netns_enter(struct xnic_link *link)
{
	struct xnic_dev *xdev = link->xdev;
	struct xnic_link *other;

	ASSERT_RTNL();
	list_for_each_entry(other, &xdev->links, list) {
		if (other != link &&
		    other->ndev->ifindex == link->ndev->ifindex) {
			pr_warn("%s: %s: %s has ifindex %d in its new namespace, as member link %s: detached\n",
				XNIC_DRV_NAME, xdev->ibdev.name,
				link->ndev->name, link->ndev->ifindex,
				other->ndev->name);
			xnic_link_detach(link);
			return;
		}
	}
	xnic_tp_link_changed(xdev);
}
