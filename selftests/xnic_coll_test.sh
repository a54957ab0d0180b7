#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_coll_test.sh - the collective library end to end: coll/xnic-allreduce
# on 2, 3 and 4 nodes (one xnic device each), float32 and bfloat16, counts
# 1, 3 (below the node count at 4), 1000003 and 16 Mi elements, in and out
# of place, every result checked element by element by every rank; the
# same split over 3 communicators in flight at once (--concurrent: the
# non-blocking API); plus a
# broadcast and a barrier; the same over the fabric's connection manager
# bootstrap (--bootstrap cm: no TCP), with the CM's counters checked, and
# ranks whose peer never comes (a clear timeout, no hang). Runs as root
# in the test VM.
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
# shellcheck source-path=SCRIPTDIR source=../tools/xnic-debug-pace
. tools/xnic-debug-pace
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
# 8 nodes: on the debug kernel, 1 s heartbeats (tools/xnic-debug-pace).
if ((NMAX >= 8)); then
	devs=()
	for ((i = 0; i < NMAX; i++)); do devs+=("$PREFIX$i"); done
	debug_pace "${devs[@]}" ||
		{ echo "not ok: cannot set the heartbeat interval"; exit 1; }
fi

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
	# non-blocking: 3 communicators, 3 all-reduces in flight at once
	# (parts of 0, 0 and 1 elements; 1 each, fewer than ranks at 4; primes)
	run --nodes "$n" --count 1 --values int --concurrent 3
	run --nodes "$n" --dtype bf16 --count 3 --values int --concurrent 3
	run --nodes "$n" --count 1000003 --values real --concurrent 3 --iters 2
done

# The CM bootstrap: the same all-reduce with no TCP at all. Rank 0's
# device must count two established connections per other rank: the
# bootstrap's, and the communicator's own QP (connected through the CM so
# that a rank's death reaches the others at once).
cm_est() { cat "/sys/class/infiniband/${PREFIX}0/ports/1/hw_counters/cm_established"; }
for n in $NODES; do
	est0=$(cm_est)
	run --nodes "$n" --bootstrap cm --count 1000003 --values int --bcast 100001
	est=$(($(cm_est) - est0))
	if ((est == 2 * (n - 1))); then
		echo "ok: CM bootstrap on $n nodes: $est connections established at rank 0"
	else
		echo "not ok: CM bootstrap on $n nodes: $est connections established at rank 0, want $((2 * (n - 1)))"
		fail=1
	fi
done

# cm_alone RANK WANT: rank RANK of 2 runs alone on the CM bootstrap (its
# peer never comes): it must fail (exit 2) with a message matching WANT
# well within the 60 s guard, not hang. Device i is node 0x0c00 + i + 1
# (its MAC, both topologies).
RANK=tools/xnic-coll-rank
cm_alone() {
	local t0 rc
	t0=$SECONDS
	timeout 60 $RANK --rank "$1" --nodes 2 --device "$PREFIX$1" \
		--bootstrap "cm:$((0x0c01)),$((0x0c02))" --service $((PORT + 7)) --count 10 \
		--timeout 4 >"$out" 2>&1
	rc=$?
	if [[ $rc == 2 ]] && grep -q "$2" "$out" && ((SECONDS - t0 < 30)); then
		echo "ok: CM bootstrap, rank $1 alone: exit $rc after $((SECONDS - t0)) s: $(grep -o '"message":"[^"]*' "$out")"
	else
		echo "not ok: CM bootstrap, rank $1 alone: exit $rc after $((SECONDS - t0)) s"
		cat "$out"
		fail=1
	fi
}
if [[ -x $RANK ]]; then
	cm_alone 0 "only 1 of 2 ranks connected"
	cm_alone 1 "rank 0 (node 3073) did not accept"
	# A rank that disagrees on the number of ranks: rank 0 refuses its
	# request, so it fails at once with "refused" (rank 0 times out).
	timeout 60 $RANK --rank 0 --nodes 2 --device "${PREFIX}0" \
		--bootstrap "cm:$((0x0c01)),$((0x0c02))" --service $((PORT + 8)) \
		--count 10 --timeout 4 >"$out.0" 2>&1 &
	pid0=$!
	t0=$SECONDS
	timeout 60 $RANK --rank 1 --nodes 3 --device "${PREFIX}1" \
		--bootstrap "cm:$((0x0c01)),$((0x0c02)),$((0x0c03))" \
		--service $((PORT + 8)) --count 10 --timeout 4 >"$out" 2>&1
	rc=$?
	wait $pid0
	rc0=$?
	if [[ $rc == 2 && $rc0 == 2 ]] && grep -q "refused" "$out" &&
		((SECONDS - t0 < 30)); then
		echo "ok: CM bootstrap, a rank with another rank count is refused: $(grep -o '"message":"[^"]*' "$out")"
	else
		echo "not ok: CM bootstrap, a rank with another rank count (exit $rc, rank 0 exit $rc0)"
		cat "$out" "$out.0"
		fail=1
	fi
	rm -f "$out.0"
else
	echo "# $RANK not built: CM bootstrap failure cases skipped"
fi

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

# A number beyond an option's int is refused (exit 2), not wrapped to a
# small one (2^32 + 2 nodes ran 2 ranks).
for opt in nodes iters timeout concurrent port slots spin-us; do
	timeout 60 $AR --"$opt" 4294967298 --device-prefix nosuchdev >"$out" 2>&1
	rc=$?
	if [[ $rc == 2 ]] && grep -q "bad --$opt '4294967298'" "$out"; then
		echo "ok: --$opt 4294967298 refused: $(head -1 "$out")"
	else
		echo "not ok: --$opt 4294967298: exit $rc"; cat "$out"; fail=1
	fi
done
echo "# $runs all-reduce runs"
exit $fail
