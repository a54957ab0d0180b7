// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - module entry: RDMA link ops (`rdma link add NAME type xnic netdev
 * DEV`), netdev notifier, generic netlink family, module load and unload,
 * and the checked module parameters (struct xnic_uint_param).
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "xnic.h"

static int xnic_uint_param_set(const char *val, const struct kernel_param *kp)
{
	struct xnic_uint_param *p = kp->arg;
	unsigned int v;
	int err;

	err = kstrtouint(val, 0, &v);
	if (err)
		return err;
	if (!(v == 0 && p->zero_ok) && (v < p->min || v > p->max))
		return -EINVAL;
	WRITE_ONCE(p->val, v);
	return 0;
}

static int xnic_uint_param_get(char *buffer, const struct kernel_param *kp)
{
	const struct xnic_uint_param *p = kp->arg;

	return scnprintf(buffer, PAGE_SIZE, "%u\n", READ_ONCE(p->val));
}

/* Ops of the module parameters of struct xnic_uint_param. */
const struct kernel_param_ops xnic_uint_param_ops = {
	.set = xnic_uint_param_set,
	.get = xnic_uint_param_get,
};

static int xnic_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return xnic_dev_add(ibdev_name, ndev);
}

static struct rdma_link_ops xnic_link_ops = {
	.type = XNIC_DRV_NAME,
	.newlink = xnic_newlink,
};

static int __init xnic_init(void)
{
	int err;

	xnic_counters_init();
	err = xnic_dev_init();
	if (err)
		return err;

	err = xnic_link_notifier_register();
	if (err)
		goto err_dev;

	err = xnic_nl_init();
	if (err)
		goto err_notifier;

	xnic_link_burst_init();
	rdma_link_register(&xnic_link_ops);
	return 0;

err_notifier:
	xnic_link_notifier_unregister();
err_dev:
	xnic_dev_exit();
	return err;
}

static void __exit xnic_exit(void)
{
	/* No netlink request runs, and no event is sent, after this. */
	xnic_nl_exit();
	/* Fences newlink: no device can be added after this returns. */
	rdma_link_unregister(&xnic_link_ops);
	xnic_dev_remove_all();
	xnic_link_notifier_unregister();
	xnic_link_burst_exit();
	xnic_dev_exit();
}

module_init(xnic_init);
module_exit(xnic_exit);

MODULE_DESCRIPTION("xnic: RDMA NIC for full-mesh AI training fabrics");
MODULE_AUTHOR("xnic developers");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_VERSION(XNIC_FW_VERSION);
MODULE_ALIAS_RDMA_LINK(XNIC_DRV_NAME);
