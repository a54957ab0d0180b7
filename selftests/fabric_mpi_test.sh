#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# fabric_mpi_test.sh - an unmodified MPI program over xnic: Debian's Open
# MPI 4.1 with `--mca pml cm --mca mtl ofi` on the xnic provider (through
# ofi_rxm), selftests/fabric_mpi_test (ring point-to-point 1 B .. 4 MiB,
# float all-reduce checked element by element, broadcast) on 2 ranks, each
# rank on its own xnic device (FI_XNIC_DOMAIN=xnic<rank>, set by a wrapper
# mpirun starts), the devices on a veth pair (tools/xnic-mesh). Runs as
# root in the test VM. XNIC_MPI_RANKS: rank counts to run (default "2").
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source-path=SCRIPTDIR source=xt_tap.sh
. selftests/xt_tap.sh
[[ -f fabric/libxnic-fi.so ]] || skip_all "fabric/libxnic-fi.so not built"
command -v mpirun >/dev/null || skip_all "mpirun (openmpi-bin) missing"
[[ -x selftests/fabric_mpi_test ]] || skip_all "fabric_mpi_test not built (mpicc)"
RANKS=${XNIC_MPI_RANKS:-2}
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
		--mca btl self -x FI_PROVIDER_PATH="$PWD/fabric" \
		-x FI_PROVIDER=xnic "$out/rank-dev" "$@"
}

for np in $RANKS; do
	mpi "$np" selftests/fabric_mpi_test >"$out/run$np" 2>&1
	rc=$?
	sed 's/^/#   /' "$out/run$np"
	check "mpirun -np $np (mtl ofi on xnic): fabric_mpi_test passes (exit $rc)" \
		grep -q "fabric_mpi_test: $np ranks: PASS" "$out/run$np"
done
tap_end
