#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# fabric_mpi_test.sh - an unmodified MPI program over xnic: Debian's Open
# MPI 4.1 with `--mca pml cm --mca mtl ofi` on the xnic provider (through
# ofi_rxm), selftests/fabric_mpi_test (ring point-to-point 1 B .. 4 MiB,
# float all-reduce checked element by element, broadcast; then one-sided
# MPI_Put/MPI_Get with --mca osc pt2pt, which runs over the PML) on 2 and
# 4 ranks. Each rank runs on its own emulated node, as on a cluster: the
# nodes are network namespaces, each seeing its own xnic device only
# (tools/xnic-mesh, MESH_NETNS=1; two member links per pair of devices),
# and mpirun starts one orted per node through tools/xnic-mpi-net (its rsh
# agent; the out-of-band channel on a management network that carries no
# data). Runs as root in the test VM. Then 2 ranks again with one of the
# two member links between their devices cut mid-run, and NetPIPE
# (NPopenmpi) to 1 MiB.
# XNIC_MPI_RANKS: rank counts to run (default "2 4").
set -u
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
# shellcheck source-path=SCRIPTDIR source=xt_tap.sh
. selftests/xt_tap.sh
[[ -f fabric/libxnic-fi.so ]] || skip_all "fabric/libxnic-fi.so not built"
command -v mpirun >/dev/null || skip_all "mpirun (openmpi-bin) missing"
[[ -x selftests/fabric_mpi_test ]] || skip_all "fabric_mpi_test not built (mpicc)"
RANKS=${XNIC_MPI_RANKS:-2 4}
NMAX=0
for n in $RANKS; do ((n > NMAX)) && NMAX=$n; done
TMO=${XNIC_FABRIC_TIMEOUT:-300}

tag=$$
# shellcheck source-path=SCRIPTDIR source=../tools/xnic-mesh
. tools/xnic-mesh
# shellcheck source-path=SCRIPTDIR source=../tools/xnic-mpi-net
. tools/xnic-mpi-net
out=$(mktemp -d)
trap 'mpinet_down; mesh_down; rm -rf "$out"' EXIT
# Two member links per pair of devices: one is cut in a run below.
MESH_NETNS=1
mesh_up "$NMAX" xnic "$tag" 2 || { echo "not ok - cannot build the fabric"; exit 1; }
mesh_wait_peers || echo "# peers not all seen yet"
mpinet_up "$NMAX" || { echo "not ok - cannot build the management network"; exit 1; }

mpi() {
	local np=$1
	shift
	timeout "$TMO" mpirun --allow-run-as-root "${MPINET_ARGS[@]}" \
		-np "$np" --host "$(mpinet_hosts "$np")" \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include xnic \
		--mca btl self --mca osc pt2pt --mca mtl_base_verbose 1 \
		-x FI_PROVIDER_PATH="$TOP/fabric" -x FI_PROVIDER=xnic "$@"
}

show() { # FILE: mpirun's output; Open MPI's [host:pid] lines only on failure
	if grep -q "fabric_mpi_test: .* ranks: PASS" "$1"; then
		grep -v "^\\[" "$1"
	else
		cat "$1"
	fi | sed 's/^/#   /'
}

cm_est() { # NODE: its device's established connections
	mesh_exec "$1" cat "/sys/class/infiniband/xnic$1/ports/1/hw_counters/cm_established"
}

for np in $RANKS; do
	before=()
	for ((i = 0; i < np; i++)); do before+=("$(cm_est $i)"); done
	mpi "$np" selftests/fabric_mpi_test >"$out/run$np" 2>&1
	rc=$?
	show "$out/run$np"
	check "mpirun -np $np (mtl ofi on xnic): fabric_mpi_test passes (exit $rc)" \
		grep -q "fabric_mpi_test: $np ranks: PASS" "$out/run$np"
	check "-np $np: Open MPI chose the ofi mtl's xnic provider" \
		grep -q "mtl:ofi:provider: xnic" "$out/run$np"
	moved=
	for ((i = 0; i < np; i++)); do
		after=$(cm_est $i)
		((after > ${before[i]:-0})) || moved+=" node$i(${before[i]}->$after)"
	done
	check "-np $np: every node's own device connected through its CM${moved:+, not:$moved}" \
		test -z "$moved"
	mpi "$np" selftests/fabric_mpi_test --rma >"$out/rma$np" 2>&1
	rc=$?
	show "$out/rma$np"
	check "-np $np: one-sided MPI_Put/MPI_Get (osc pt2pt) checked (exit $rc)" \
		grep -q "fabric_mpi_test: $np ranks: PASS" "$out/rma$np"
done

# One of the two links between xnic0 and xnic1 cut mid-run (both ends).
cut0=$(mesh_netdev 0 1 1) cut1=$(mesh_netdev 1 0 1)
mpi 2 selftests/fabric_mpi_test >"$out/cut" 2>&1 &
mpid=$!
sleep 5
mesh_exec 0 ip link set "$cut0" down && mesh_exec 1 ip link set "$cut1" down
wait "$mpid"
rc=$?
mesh_exec 0 ip link set "$cut0" up && mesh_exec 1 ip link set "$cut1" up
show "$out/cut"
check "-np 2 with a member link cut mid-run: passes (exit $rc)" \
	grep -q "fabric_mpi_test: 2 ranks: PASS" "$out/cut"

# NetPIPE (netpipe-openmpi) to completion, 1 B .. 1 MiB.
if command -v NPopenmpi >/dev/null; then
	(cd "$out" && mpi 2 NPopenmpi -u 1048576 -n 10 -p 0 -o np.out) \
		>"$out/np" 2>&1
	rc=$?
	tail -n 3 "$out/np.out" 2>/dev/null | sed 's/^/#   /'
	check "NPopenmpi over xnic runs to 1 MiB (exit $rc)" \
		awk '$1 == 1048576 { f = 1 } END { exit !f }' "$out/np.out"
else
	echo "# NPopenmpi (netpipe-openmpi) not installed: skipped"
fi
tap_end
