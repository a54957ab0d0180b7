/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxnic - userspace library for xnic RDMA devices.
 *
 * Control path: ib_uverbs write() commands on /dev/infiniband/uverbsN.
 * Datapath: shared rings and doorbell records (uapi/xnic-abi.h).
 *
 * Errors: functions returning int return 0 or a negative errno; they never
 * print. xnic_strerror() turns such a value into a message.
 */
#ifndef XNIC_LIB_H
#define XNIC_LIB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XNIC_NAME_MAX	64

/**
 * struct xnic_device_info - an RDMA device as seen in sysfs
 * @name: RDMA device name, e.g. "xnic0"
 * @uverbs: its ib_uverbs character device, e.g. "/dev/infiniband/uverbs0"
 * @node_guid: node GUID, host order
 * @abi_version: the driver's uverbs ABI version
 */
struct xnic_device_info {
	char name[XNIC_NAME_MAX];
	char uverbs[XNIC_NAME_MAX];
	uint64_t node_guid;
	unsigned int abi_version;
};

/**
 * xnic_device_lookup() - find an RDMA device and its uverbs node by name
 * @name: RDMA device name
 * @info: filled on success
 *
 * Reads /sys/class/infiniband/@name and /sys/class/infiniband_verbs.
 * Return: 0; -ENODEV when no such RDMA device exists; -ENXIO when it has
 * no uverbs node (ib_uverbs not loaded); -EINVAL for a bad name.
 */
int xnic_device_lookup(const char *name, struct xnic_device_info *info);

/**
 * xnic_strerror() - message for an error returned by this library
 * @err: a negative errno returned by an xnic_* function
 * Return: a static string.
 */
const char *xnic_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* XNIC_LIB_H */
