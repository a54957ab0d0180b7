#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_coll_test.sh - the collective library end to end: coll/xnic-allreduce
# on 2, 3 and 4 nodes (one xnic device each), float32 and bfloat16, counts
# 1, 3 (below the node count at 4), 1000003 and 16 Mi elements, in and out
# of place, every result checked element by element by every rank; plus a
# broadcast and a barrier. Runs as root in the test VM.
#
# The fabric (XNIC_COLL_TOPO):
#  mesh    a veth pair for every pair of devices: device i's first member
#          link comes with `rdma link add`, the others with `xnictl link
#          add`; node id i+1 comes from the first link's MAC
#          (02:00:00:00:0c:<i+1>), the other links get MACs that end in
#          :00 and so never look like a node id;
#  bridge  device i on its own veth end, the other ends in one Linux
#          bridge: a switched mesh over one member link per device;
#  auto    (default) mesh when xnictl can add member links, else bridge.
#
# Environment: XNIC_COLL_NODES (default "2 3 4"), XNIC_COLL_QUICK=1 (skip
# the 16 Mi runs), XNIC_COLL_TIMEOUT (seconds per run, default 300),
# XNIC_COLL_TOPO (above), XNIC_COLL_ARGS (added to every run, e.g.
# "--max-inflight 1M"), XNIC_COLL_RUNS ("ARGS;ARGS;...": only these runs,
# for benchmarks).
# shellcheck disable=SC2317 # setup_* run through "setup_$TOPO"
set -u
KSFT_SKIP=4
cd "$(dirname "$0")/.." || exit 1
AR=coll/xnic-allreduce
[[ -x $AR ]] || { echo "SKIP: $AR not built"; exit $KSFT_SKIP; }

NODES=${XNIC_COLL_NODES:-2 3 4}
QUICK=${XNIC_COLL_QUICK:-0}
TMO=${XNIC_COLL_TIMEOUT:-300}
NMAX=0
for n in $NODES; do ((n > NMAX)) && NMAX=$n; done

tag=$$
BR=cb$tag PREFIX=xc${tag}n
PORT=$((20000 + tag % 20000))
TOPO=${XNIC_COLL_TOPO:-auto}
XNICTL=tools/xnictl
# shellcheck source-path=SCRIPTDIR source=../tools/xnic-mesh
. tools/xnic-mesh
out=$(mktemp)
veths=()

fabric_down() {
	local i v
	mesh_down
	for ((i = 0; i < NMAX; i++)); do
		rdma link delete "$PREFIX$i" 2>/dev/null
	done
	for v in "${veths[@]}"; do
		ip link del "$v" 2>/dev/null
	done
	veths=()
	ip link del "$BR" 2>/dev/null
}
trap 'fabric_down; rm -f "$out"' EXIT

hex() { printf %02x "$1"; }

# veth NAME MAC PEER PEERMAC
veth() {
	ip link add "$1" address "$2" mtu 9000 type veth \
		peer name "$3" address "$4" mtu 9000 || return 1
	veths+=("$1")
	ip link set "$1" up && ip link set "$3" up
}

setup_bridge() {
	local i
	ip link add "$BR" type bridge forward_delay 0 2>/dev/null || return 1
	ip link set "$BR" up || return 1
	for ((i = 0; i < NMAX; i++)); do
		veth "c${tag}h$i" "02:00:00:00:0d:$(hex $((i + 1)))" \
			"c${tag}n$i" "02:00:00:00:0c:$(hex $((i + 1)))" || return 1
		ip link set "c${tag}h$i" master "$BR" || return 1
		rdma link add "$PREFIX$i" type xnic netdev "c${tag}n$i" || return 1
	done
}

# The mesh: tools/xnic-mesh (shared with tools/xnic-demo)
setup_mesh() { mesh_up "$NMAX" "$PREFIX" "$tag"; }

if [[ $TOPO == auto ]]; then
	TOPO=bridge
	[[ -x $XNICTL ]] && $XNICTL --help 2>&1 | grep -q "link add" &&
		TOPO=mesh
	((NMAX <= 2)) && TOPO=mesh	# one pair needs no extra link
fi
if ! "setup_$TOPO"; then
	if [[ $TOPO == mesh && ${XNIC_COLL_TOPO:-auto} == auto ]]; then
		echo "# no runtime member links: falling back to a bridge"
		fabric_down
		TOPO=bridge
		setup_bridge || { echo "SKIP: cannot build the fabric"; exit $KSFT_SKIP; }
	else
		echo "not ok: cannot build the $TOPO fabric"
		exit 1
	fi
fi
echo "# fabric: $TOPO of $NMAX devices"

# Wait until every device has heard a HELLO from every other one.
for ((t = 0; t < 100; t++)); do
	ok=1
	for ((i = 0; i < NMAX; i++)); do
		p=$(mesh_peers_of "$PREFIX$i")
		[[ $p == -1 ]] && break 2	# no debugfs readout: just go on
		((p >= NMAX - 1)) || ok=0
	done
	((ok)) && break
	sleep 0.1
done
for ((i = 0; i < NMAX; i++)); do
	echo "# $PREFIX$i: $(mesh_peers_of "$PREFIX$i") peers"
done

fail=0 runs=0
run() {
	local rc
	runs=$((runs + 1))
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086 # XNIC_COLL_ARGS: one word per argument
	timeout "$TMO" $AR --device-prefix "$PREFIX" --port "$PORT" "$@" \
		${XNIC_COLL_ARGS:-} >"$out" 2>&1
	rc=$?
	if [[ $rc -ne 0 ]] || ! grep -q ": PASS$" "$out"; then
		echo "not ok: xnic-allreduce $* (exit $rc)"
		sed 's/^/#   /' "$out"
		fail=1
	else
		echo "ok: $(cat "$out")"
	fi
}

if [[ -n ${XNIC_COLL_RUNS:-} ]]; then
	# Only the given runs (benchmarks): "ARGS;ARGS;..."
	IFS=';' read -ra custom <<<"$XNIC_COLL_RUNS"
	for args in "${custom[@]}"; do
		# shellcheck disable=SC2086 # one word per argument
		run $args
	done
	exit $fail
fi

for n in $NODES; do
	for dt in f32 bf16; do
		run --nodes "$n" --dtype "$dt" --count 1 --values int
		run --nodes "$n" --dtype "$dt" --count 3 --values real --inplace
		# 64 KiB chunks, one slot: many chunks, a credit round trip each
		run --nodes "$n" --dtype "$dt" --count 1000003 --values real \
			--chunk 64K --slots 1
		[[ $QUICK == 1 ]] && continue
		if [[ $dt == f32 ]]; then
			run --nodes "$n" --dtype "$dt" --count 16Mi --values int
		else
			run --nodes "$n" --dtype "$dt" --count 16Mi --values real \
				--inplace
		fi
	done
	# broadcast (from the last rank) and barriers around a small all-reduce
	run --nodes "$n" --count 1000 --bcast 3000001 --iters 3
done

# A rank whose device does not exist: every rank fails, quickly, with a
# message naming it; nobody hangs.
PORT=$((PORT + 1))
if timeout 60 $AR --nodes 2 --devices "${PREFIX}0,nosuchdev" --port "$PORT" \
	--timeout 20 >"$out" 2>&1; then
	echo "not ok: a missing device went unnoticed"; cat "$out"; fail=1
elif ! grep -q "nosuchdev" "$out"; then
	echo "not ok: no clear message for a missing device:"; cat "$out"
	fail=1
else
	echo "ok: a missing device fails every rank: $(grep -m1 'rank 0' "$out")"
fi
echo "# $runs all-reduce runs"
exit $fail
