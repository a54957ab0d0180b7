#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_torch_test.sh - PyTorch DDP over the c10d backend "xnic"
# (torch-xnic/) on emulated nodes, in the test VM as root:
#  - a small MLP trained by DDP on 2 and on 4 ranks, over xnic and over
#    gloo (TCP) on the same veth links: final parameters agree within the
#    tolerance suites.py states;
#  - a rank killed (SIGKILL) mid-run: the other fails within 10 s with an
#    error naming it; the job restarted from the newest checkpoint ends
#    bit-identical to the uninterrupted run;
#  - bad inputs on 4 ranks (tensor sizes or types that differ between
#    ranks, an unsupported op, bad arguments on one rank only, an output
#    of stride 0 there: nothing moves): a clear error on every rank and a
#    group that still works; every dtype and op checked; reduce_scatter,
#    gather, scatter, all_to_all against gloo or exact values; a group
#    destroyed with collectives pending, a future's callback waiting for
#    another collective; work.wait(timeout) on a collective the others
#    have not joined: "Operation timed out!" after the timeout, then it
#    ends as they join (or as they destroy the group); a rank that dies:
#    the others' collective and the next one fail within 10 s, naming it.
# Fabric (tools/xnic-train-fabric): node i is network namespace
# xt<tag>n<i> with its xnic device (exclusive to it) on its veth end,
# address 10.199.0.<i+1>; the other ends meet in a bridge. The ranks are
# forked from one python3 (one `import torch`, a minute or more here).
# XNIC_TORCH_NODES: nodes (2 or 4, default 4; 2 skips the 4-rank cases).
set -u
KSFT_SKIP=4
cd "$(dirname "$0")/.." || exit 1
PY=/usr/bin/python3
EXT=torch-xnic/xnic_torch/_C.so
[[ -f $EXT ]] || { echo "SKIP: $EXT not built (make deps; make)"; exit $KSFT_SKIP; }
N=${XNIC_TORCH_NODES:-4}
# shellcheck source-path=SCRIPTDIR source=../tools/xnic-train-fabric
. tools/xnic-train-fabric
trap 'train_fabric_down' EXIT
start=$SECONDS
if ! train_fabric_up "$N" "xt$$"; then
	echo "not ok: cannot build the fabric"
	exit 1
fi
echo "# fabric of $N nodes up in $((SECONDS - start)) s"
start=$SECONDS
$PY torch-xnic/suites.py check --model small --steps 10 --nodes "$N" \
	--netns "$TF_NETNS" \
	--ifname "$TF_IFNAME" --addr "$TF_ADDR"
rc=$?
echo "# suite took $((SECONDS - start)) s"
exit $rc
