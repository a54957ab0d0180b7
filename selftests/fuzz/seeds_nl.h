/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The generic netlink family id of the netlink fuzz targets' seeds. */
#ifndef XNIC_FUZZ_SEEDS_NL_H
#define XNIC_FUZZ_SEEDS_NL_H

#define XNIC_FUZZ_FAMILY	0x1d

#endif
