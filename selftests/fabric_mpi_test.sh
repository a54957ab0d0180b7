#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# fabric_mpi_test.sh - an unmodified MPI program over xnic: Debian's Open
# MPI 4.1 with `--mca pml cm --mca mtl ofi` on the xnic provider (through
# ofi_rxm), selftests/fabric_mpi_test (ring point-to-point 1 B .. 4 MiB,
# float all-reduce checked element by element, broadcast; then one-sided
# MPI_Put/MPI_Get with --mca osc pt2pt, which runs over the PML) on 2 and 4 ranks, each
# rank on its own xnic device (FI_XNIC_DOMAIN=xnic<rank>, set by a wrapper
# mpirun starts), the devices on a veth pair (tools/xnic-mesh). Runs as
# root in the test VM. XNIC_MPI_RANKS: rank counts to run (default "2 4").
set -u
cd "$(dirname "$0")/.." || exit 1
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
out=$(mktemp -d)
trap 'mesh_down; rm -rf "$out"' EXIT
mesh_up "$NMAX" xnic "$tag" || { echo "not ok - cannot build the fabric"; exit 1; }
mesh_wait_peers || echo "# peers not all seen yet"

# Each rank on its own device: the provider's FI_XNIC_DOMAIN.
cat >"$out/rank-dev" <<'EOS'
#!/bin/sh
FI_XNIC_DOMAIN=xnic${OMPI_COMM_WORLD_RANK:?} exec "$@"
EOS
chmod +x "$out/rank-dev"

mpi() {
	local np=$1
	shift
	timeout "$TMO" mpirun --allow-run-as-root --oversubscribe -np "$np" \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include xnic \
		--mca btl self --mca osc pt2pt --mca mtl_base_verbose 1 -x FI_PROVIDER_PATH="$PWD/fabric" \
		-x FI_PROVIDER=xnic "$out/rank-dev" "$@"
}

cm_est() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/cm_established"; }

for np in $RANKS; do
	before=$(cm_est xnic0)
	mpi "$np" selftests/fabric_mpi_test >"$out/run$np" 2>&1
	rc=$?
	after=$(cm_est xnic0)
	grep -v "^\[" "$out/run$np" | sed 's/^/#   /'
	check "mpirun -np $np (mtl ofi on xnic): fabric_mpi_test passes (exit $rc)" \
		grep -q "fabric_mpi_test: $np ranks: PASS" "$out/run$np"
	check "-np $np: Open MPI chose the ofi mtl's xnic provider" \
		grep -q "mtl:ofi:provider: xnic" "$out/run$np"
	check "-np $np: xnic0's CM connected ($before -> $after)" \
		test "$after" -gt "$before"
	mpi "$np" selftests/fabric_mpi_test --rma >"$out/rma$np" 2>&1
	rc=$?
	grep -v "^\\[" "$out/rma$np" | sed 's/^/#   /'
	check "-np $np: one-sided MPI_Put/MPI_Get (osc pt2pt) checked (exit $rc)" \
		grep -q "fabric_mpi_test: $np ranks: PASS" "$out/rma$np"
done
tap_end
