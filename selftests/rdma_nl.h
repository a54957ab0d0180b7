/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma_nl - minimal RDMA netlink (NETLINK_RDMA, RDMA_NL_NLDEV) client for
 * the selftests: the kernel side of `rdma link add` and `rdma link delete`,
 * with the kernel's own errno (struct nlmsgerr.error) returned unchanged
 * rather than libnl's NLE_* translation of it.
 */
#ifndef XNIC_SELFTESTS_RDMA_NL_H
#define XNIC_SELFTESTS_RDMA_NL_H

#include <stdint.h>

/**
 * xnic_nl_link_add() - create an RDMA device: `rdma link add IBDEV type
 * TYPE netdev NETDEV` (RDMA_NLDEV_CMD_NEWLINK)
 * @ibdev: name of the new RDMA device
 * @type: link type, e.g. "xnic" (the kernel may modprobe rdma-link-TYPE)
 * @netdev: name of the netdev the device is created on
 *
 * Return: 0 when the kernel acknowledged the request, else the negative
 * errno the kernel reported (e.g. -ENODEV: no such netdev; -EINVAL: bad
 * name or unknown type; whatever the link type's newlink op returned), or
 * a negative errno for a local failure (socket, memory, message too long).
 */
int xnic_nl_link_add(const char *ibdev, const char *type, const char *netdev);

/**
 * xnic_nl_link_del() - unregister an RDMA device: `rdma link delete IBDEV`
 * (RDMA_NLDEV_CMD_DELLINK)
 * @ibdev: name of the RDMA device
 *
 * The device index is found with xnic_nl_dev_index() first.
 *
 * Return: 0 when the kernel acknowledged the request; -ENODEV when no RDMA
 * device is called @ibdev; else the negative errno the kernel reported
 * (-EINVAL: the device does not allow user unregistration, or vanished
 * between the lookup and the request) or a local failure's negative errno.
 */
int xnic_nl_link_del(const char *ibdev);

/**
 * xnic_nl_dev_index() - the ib_core index of an RDMA device
 * @ibdev: name of the RDMA device
 * @index: set to the device's RDMA_NLDEV_ATTR_DEV_INDEX on success
 *
 * Dumps RDMA_NLDEV_CMD_GET and matches RDMA_NLDEV_ATTR_DEV_NAME.
 *
 * Return: 0; -ENODEV when no RDMA device is called @ibdev; else the
 * negative errno the kernel reported or a local failure's negative errno.
 */
int xnic_nl_dev_index(const char *ibdev, uint32_t *index);

#endif /* XNIC_SELFTESTS_RDMA_NL_H */
