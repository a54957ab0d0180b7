#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_mesh_test.sh - the demo's bring-up and its miswire checks
# (tools/xnic-demo --bringup-only on tools/xnic-mesh). Runs as root in the
# test VM:
#  1. a mesh wired as meant (3 nodes, 2 links per pair) passes: every link
#     up, every peer heard on exactly its 2 links, an RTT on every link
#     (frames counted on that very link) and a skew per pair;
#  2. the same mesh miswired on purpose (MESH_MISWIRE of tools/xnic-mesh)
#     fails, exit 1, naming the fault, once per kind: a missing link, two
#     links to the wrong node (crossed), one link too many to a peer;
#  3. a mesh too big for a device (8 nodes x 2 links > XNIC_MAX_LINKS) is
#     refused with a message, exit 2.
set -u
cd "$(dirname "$0")/.." || exit 1
KSFT_SKIP=4
DEMO=tools/xnic-demo
[[ -x tools/xnictl && -x tools/xnic-perf ]] ||
	{ echo "SKIP: tools not built"; exit $KSFT_SKIP; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
# 20 round trips per RTT: this tests the readout, not the figures.
export XNIC_DEMO_RTT_ITERS=20

# expect RC PATTERN... -- DEMO-ARGS...: the demo exits RC and prints a
# line matching every PATTERN (grep -E).
expect() {
	local want=$1 rc p pats=()
	shift
	while [[ $1 != -- ]]; do pats+=("$1"); shift; done
	shift
	XNIC_VM=1 "$DEMO" "$@" >"$out" 2>&1
	rc=$?
	if ((rc != want)); then
		echo "not ok: xnic-demo $* exited $rc, expected $want"
		sed 's/^/#   /' "$out"
		fail=1
		return
	fi
	for p in "${pats[@]}"; do
		if ! grep -qE -- "$p" "$out"; then
			echo "not ok: xnic-demo $*: no line matches '$p'"
			sed 's/^/#   /' "$out"
			fail=1
			return
		fi
	done
	echo "ok: xnic-demo $* (exit $rc)"
	grep -E '^problem:|^node[0-9]+-node[0-9]+ ' "$out" | sed 's/^/#   /'
}

# 1. As meant: PASS, 3 pairs x 2 links, each with an RTT and a skew.
expect 0 '^mesh check: every node sees' '^PASS$' \
	'^node0-node1 +2 +[0-9.]+ [0-9.]+ +[0-9.]+$' \
	'^node0-node2 +2 +[0-9.]+ [0-9.]+ +[0-9.]+$' \
	'^node1-node2 +2 +[0-9.]+ [0-9.]+ +[0-9.]+$' \
	-- --nodes 3 --links-per-peer 2 --bringup-only
if (($(grep -cE ' m[0-9]+x[0-9]y[0-9](l1)? +up +node[0-9] \([0-9]+\) +[0-9.]+$' "$out") != 12)); then
	echo "not ok: not 12 link rows, each up with its peer and an RTT"
	fail=1
fi

# 2. Miswired: each kind of fault is reported, the run fails.
expect 1 '^problem: node1 m[0-9]+x1y2l1: link missing$' \
	'^problem: node1: node 2 heard on 1 link\(s\) .*, expected 2$' \
	'^problem: node2: node 1 heard on 1 link\(s\) .*, expected 2$' \
	'^FAIL$' -- --nodes 3 --links-per-peer 2 --bringup-only \
	--miswire missing:1:2
expect 1 '^problem: node0 m[0-9]+x0y1: expected node 1 \(id [0-9]+\), HELLO from node 3' \
	'^problem: node3 m[0-9]+x3y2: expected node 2 \(id [0-9]+\), HELLO from node 0' \
	'^problem: node0: node 3 heard on 2 link\(s\) .*, expected 1$' \
	'^problem: node0: node 1 heard on 0 link\(s\) \(none\), expected 1$' \
	'^FAIL$' -- --nodes 4 --links-per-peer 1 --bringup-only \
	--miswire cross:0:1:2:3
expect 1 '^problem: node0: unexpected member link m[0-9]+x0y1l2 \(HELLO from node 1' \
	'^problem: node0: node 1 heard on 3 link\(s\) .*, expected 2$' \
	'^FAIL$' -- --nodes 2 --links-per-peer 2 --bringup-only \
	--miswire extra:0:1

# 3. More member links than a device has: refused up front.
expect 2 'at most 8 \(XNIC_MAX_LINKS\)' -- --nodes 8 --links-per-peer 2
exit $fail
