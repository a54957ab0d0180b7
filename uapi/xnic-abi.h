/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * xnic user/kernel ABI: driver data passed through ib_uverbs (udata), and
 * the layouts of the rings and doorbells shared between libuser and the
 * kernel engine.
 *
 * Versioning follows efa-abi.h: every struct has a comp_mask and reserved
 * fields; the kernel accepts a longer input only when the tail it does not
 * know is zero, and never writes past the output length userspace gave.
 */
#ifndef XNIC_ABI_USER_H
#define XNIC_ABI_USER_H

#include <linux/types.h>

/* ib_device_ops.uverbs_abi_ver; bumped only for incompatible changes. */
#define XNIC_UVERBS_ABI_VERSION 1

#endif /* XNIC_ABI_USER_H */
