#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_soak_test.sh - a one-minute fault soak for `make check`
# (tools/xnic-soak, `make soak` runs it for 20 minutes): the same mesh,
# checked traffic and faults, faster turns (a fault every 2 s held 2 s,
# rounds of 20 s), every error kind 0, PASS. Runs as root in the test VM.
cd "$(dirname "$0")/.." || exit 1
export SOAK_GAP_S=${SOAK_GAP_S:-2} SOAK_HOLD_S=${SOAK_HOLD_S:-2}
export SOAK_ROUND_S=${SOAK_ROUND_S:-20}
exec tools/xnic-soak --minutes 1
