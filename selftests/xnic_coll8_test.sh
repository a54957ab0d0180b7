#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_coll8_test.sh - the collective on 8 nodes (a full mesh of 28 veth
# pairs, 7 member links per device): selftests/xnic_coll_test.sh with
# XNIC_COLL_NODES=8 and XNIC_COLL_QUICK=1, i.e. float32 and bfloat16,
# counts 1 and 3 (below the node count) and 1000003 (not a multiple of
# 8), in and out of place, and a broadcast with barriers; every element
# checked by every rank. Its own VM boot, apart from the 2-4 node runs.
cd "$(dirname "$0")" || exit 1
XNIC_COLL_NODES=8 XNIC_COLL_QUICK=1 exec bash ./xnic_coll_test.sh
