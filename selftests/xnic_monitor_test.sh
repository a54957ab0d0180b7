#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_monitor_test.sh - xnic's counters as operators' monitoring sees
# them: ib_core's standard port counters
# (/sys/class/infiniband/<dev>/ports/1/counters/, answered by kmod/pma.c)
# exist and agree with xnic's own hw_counters, and Debian's
# prometheus-node-exporter, running only its infiniband collector on
# localhost, shows both devices' data and packet counters moved by at least
# a known transfer (xnic-perf write_bw) between them, with no errors.
# Runs as root in the test VM.
# Prints TAP lines.
set -u
# shellcheck source=selftests/xt_tap.sh
. "$(dirname "$0")/xt_tap.sh"
# shellcheck source=selftests/xt_pair.sh
. "$(dirname "$0")/xt_pair.sh"
cd "$(dirname "$0")/.." || exit 1
PERF=tools/xnic-perf
NE=/usr/bin/prometheus-node-exporter
[[ -x $PERF ]] || skip_all "$PERF not built"
[[ -x $NE ]] || skip_all "prometheus-node-exporter not installed (make deps)"
command -v curl >/dev/null || skip_all "curl not installed"

tag=$$
A=moa$tag B=mob$tag DA=mox${tag}a DB=mox${tag}b
PORT=$((20000 + tag % 10000)) NE_PORT=$((30000 + tag % 10000))
ITERS=200 SIZE=65536 BYTES=$((200 * 65536))
tmp=$(mktemp -d) nepid=

cleanup() {
	[[ -n $nepid ]] && kill "$nepid" 2>/dev/null && wait "$nepid" 2>/dev/null
	xt_pair_del "$DA" "$DB" "$A"
	rm -rf "$tmp"
}
trap cleanup EXIT

xt_pair "$DA" "$DB" "$A" "$B" 02:00:00:00:00:31 02:00:00:00:00:32 || exit 1

# 1. The standard files exist; the data counters count octets / 4 of the
# transport's tx_bytes/rx_bytes (read back to back: HELLOs may land between).
C=/sys/class/infiniband/$DA/ports/1/counters
H=/sys/class/infiniband/$DA/ports/1/hw_counters
missing=
for f in port_xmit_data port_rcv_data port_xmit_packets port_rcv_packets \
	 port_rcv_errors port_xmit_discards symbol_error link_downed; do
	[[ -r $C/$f ]] && cat "$C/$f" >/dev/null || missing+=" $f"
done
if [[ -z $missing ]]; then
	ok "standard counters present"
else
	not_ok "standard counters missing or unreadable:$missing"
fi
for f in unicast_xmit_packets multicast_xmit_packets; do
	[[ -e $C/$f ]] && not_ok "$f present (xnic does not count it)"
done
x=$(cat "$C/port_xmit_data") b=$(cat "$H/tx_bytes")
if ((x * 4 <= b && b - x * 4 < 100000)); then
	ok "port_xmit_data $x = tx_bytes $b / 4"
else
	not_ok "port_xmit_data $x against tx_bytes $b / 4"
fi

# 2. node_exporter, the infiniband collector only.
$NE --collector.disable-defaults --collector.infiniband \
	--web.listen-address=127.0.0.1:$NE_PORT >"$tmp/ne.log" 2>&1 &
nepid=$!
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$NE_PORT/metrics" >/dev/null && break
	sleep 0.2
done

# metric DEVICE NAME FILE - the value of node_infiniband_NAME{device=DEVICE}
# in scrape FILE (empty when absent).
metric() {
	awk -v m="node_infiniband_$2" -v d="device=\"$1\"" \
		'index($0, m "{") == 1 && index($0, d) { printf "%.0f\n", $2; exit }' "$3"
}
scrape() { curl -sf "http://127.0.0.1:$NE_PORT/metrics" >"$1"; }

scrape "$tmp/before" || not_ok "node_exporter scrape failed: $(cat "$tmp/ne.log")"
if grep -q "device=\"$DA\"" "$tmp/before"; then
	ok "node_exporter sees $DA"
else
	not_ok "node_exporter does not see $DA"
	grep -i infiniband "$tmp/before" | head -5
	tail -5 "$tmp/ne.log"
fi

# 3. A known transfer: ITERS RDMA WRITEs of SIZE bytes, DA to DB.
timeout 60 $PERF write_bw -d "$DB" -p $PORT >"$tmp/srv" 2>&1 &
spid=$!
timeout 60 $PERF write_bw -d "$DA" -p $PORT -n $ITERS -s $SIZE 127.0.0.1 \
	>"$tmp/cli" 2>&1 || { not_ok "xnic-perf write_bw"; cat "$tmp/cli"; }
wait $spid || { not_ok "xnic-perf server"; cat "$tmp/srv"; }
scrape "$tmp/after" || not_ok "second scrape failed"

# moved DEVICE NAME MIN - NAME of DEVICE grew by at least MIN.
moved() {
	local v0 v1
	v0=$(metric "$1" "$2" "$tmp/before")
	v1=$(metric "$1" "$2" "$tmp/after")
	if [[ -z $v0 || -z $v1 ]]; then
		not_ok "$1 $2 absent from the scrape"
	elif ((v1 - v0 >= $3)); then
		ok "$1 $2 +$((v1 - v0)) (>= $3)"
	else
		not_ok "$1 $2 +$((v1 - v0)), expected >= $3"
	fi
}
# Each WRITE of 64 KiB is at least 7 frames on a 9000-byte MTU.
moved "$DA" port_data_transmitted_bytes_total $BYTES
moved "$DB" port_data_received_bytes_total $BYTES
moved "$DA" port_packets_transmitted_total $((ITERS * 7))
moved "$DB" port_packets_received_total $((ITERS * 7))
for d in "$DA" "$DB"; do
	for m in port_errors_received_total port_discards_transmitted_total; do
		v=$(metric "$d" $m "$tmp/after")
		if [[ $v == 0 ]]; then
			ok "$d $m 0"
		else
			not_ok "$d $m '$v', expected 0"
		fi
	done
done

tap_end
