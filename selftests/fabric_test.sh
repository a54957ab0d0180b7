#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# fabric_test.sh - the libfabric provider (fabric/libxnic-fi.so) with
# Debian's libfabric tools, unmodified: two xnic devices xnic0 and xnic1
# on a veth pair in the init namespace (tools/xnic-mesh);
#   - fi_info -p xnic lists both domains, FI_EP_MSG, FI_SOCKADDR_IN6, and
#     the layered xnic;ofi_rxm (FI_EP_RDM, FI_TAGGED);
#   - fi_info with hints xnic cannot satisfy answers -61 (FI_ENODATA);
#   - fi_pingpong -e msg and -e rdm (through ofi_rxm), server on xnic1,
#     client on xnic0 meeting it at 127.0.0.1 for the out-of-band address
#     exchange, every size from 1 B to 6 MiB with data checks (-c);
#   - selftests/fabric_err_test: the provider's error cases.
# Runs as root in the test VM.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source-path=SCRIPTDIR source=xt_tap.sh
. selftests/xt_tap.sh
[[ -f fabric/libxnic-fi.so ]] || skip_all "fabric/libxnic-fi.so not built"
command -v fi_pingpong >/dev/null || skip_all "fi_pingpong (libfabric-bin) missing"
export FI_PROVIDER_PATH=$PWD/fabric
TMO=${XNIC_FABRIC_TIMEOUT:-120}

tag=$$
# shellcheck source-path=SCRIPTDIR source=../tools/xnic-mesh
. tools/xnic-mesh
out=$(mktemp -d)
trap 'mesh_down; rm -rf "$out"' EXIT
ip link set lo up
mesh_up 2 xnic "$tag" || { echo "not ok - cannot build the fabric"; exit 1; }
mesh_wait_peers || echo "# peers not all seen yet"

fi_info -p xnic >"$out/info" 2>&1
fi_info -v -p xnic >"$out/infov" 2>&1
check "fi_info -p xnic lists xnic0 and xnic1" \
	grep -q "domain: xnic0" "$out/info"
check "fi_info -p xnic: domain xnic1 too" grep -q "domain: xnic1" "$out/info"
check "fi_info -p xnic: FI_EP_MSG over FI_SOCKADDR_IN6" \
	grep -q "addr_format: FI_SOCKADDR_IN6" "$out/infov"
check "fi_info -p xnic: ofi_rxm layered on top" \
	grep -q "provider: xnic;ofi_rxm" "$out/info"
fi_info -v -p "xnic;ofi_rxm" -t FI_EP_RDM -c FI_TAGGED >"$out/rxm" 2>&1
check "xnic;ofi_rxm offers FI_EP_RDM with FI_TAGGED" grep -q "caps:.*FI_TAGGED" "$out/rxm"
fi_info -p xnic -t FI_EP_DGRAM >"$out/dgram" 2>&1
check "fi_info -p xnic -t FI_EP_DGRAM: no data" \
	grep -q "fi_getinfo: -61" "$out/dgram"
fi_info -p xnic -c FI_ATOMIC -t FI_EP_MSG >"$out/atomic" 2>&1
check "fi_info -p xnic -c FI_ATOMIC: no data" \
	grep -q "fi_getinfo: -61" "$out/atomic"
FI_XNIC_DOMAIN=xnic1 fi_info -p xnic >"$out/env" 2>&1
check "FI_XNIC_DOMAIN=xnic1 keeps only xnic1" \
	eval 'grep -q "domain: xnic1" "$out/env" && ! grep -q "domain: xnic0" "$out/env"'

# pingpong EP PORT: server on xnic1, client on xnic0; both must pass.
pingpong() {
	local ep=$1 port=$2 spid rc1 rc2
	timeout "$TMO" fi_pingpong -p xnic -d xnic1 -e "$ep" -S all -c -I 5 \
		-B "$port" >"$out/srv_$ep" 2>&1 &
	spid=$!
	sleep 1
	timeout "$TMO" fi_pingpong -p xnic -d xnic0 -e "$ep" -S all -c -I 5 \
		-P "$port" 127.0.0.1 >"$out/cli_$ep" 2>&1
	rc2=$?
	wait "$spid"
	rc1=$?
	sed 's/^/#   /' "$out/cli_$ep"
	if ((rc1 || rc2)); then
		echo "# server (exit $rc1):"
		sed 's/^/#   /' "$out/srv_$ep"
		return 1
	fi
	# 1 B .. 6 MiB, each line one size
	grep -q "^1 *" "$out/cli_$ep" && grep -q "^6m " "$out/cli_$ep"
}
[[ -z ${XNIC_FABRIC_SKIP_PP:-} ]] && check "fi_pingpong -e msg -S all -c (1 B .. 6 MiB, data checked)" \
	pingpong msg $((40000 + tag % 10000))
[[ -z ${XNIC_FABRIC_SKIP_PP:-} ]] && check "fi_pingpong -e rdm -S all -c through ofi_rxm" \
	pingpong rdm $((50000 + tag % 10000))

if [[ -x selftests/fabric_err_test ]]; then
	timeout "$TMO" selftests/fabric_err_test xnic0 xnic1 >"$out/err" 2>&1
	rc=$?
	sed 's/^/#   /' "$out/err"
	check "fabric_err_test: the provider's error cases" test "$rc" -eq 0
else
	not_ok "selftests/fabric_err_test not built"
fi
tap_end
