#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_perf_test.sh - tools/xnic-perf end to end between two xnic devices on
# a veth pair: every test runs, both sides exit 0, and the client prints one
# well-formed JSON result per size; the same over the fabric's connection
# manager (--cm: no TCP, the cm_established counter counts both QPs
# of each run), and the failures of each (no server; over the CM also a
# client killed mid-run). Runs as root in the test VM.
# Prints TAP lines.
set -u
# shellcheck source=selftests/xt_tap.sh
. "$(dirname "$0")/xt_tap.sh"
# shellcheck source=selftests/xt_pair.sh
. "$(dirname "$0")/xt_pair.sh"
cd "$(dirname "$0")/.." || exit 1
PERF=tools/xnic-perf
[[ -x $PERF ]] || skip_all "$PERF not built"

tag=$$
A=pta$tag B=ptb$tag DA=ptx${tag}a DB=ptx${tag}b
PORT=$((20000 + tag % 10000))
out=$(mktemp) srv=$(mktemp)

cleanup() {
	xt_pair_del "$DA" "$DB" "$A"
	rm -f "$out" "$srv"
}
trap cleanup EXIT

xt_pair "$DA" "$DB" "$A" "$B" 02:00:00:00:00:21 02:00:00:00:00:22 || exit 1

CM=()		# --cm: the runs go through the CM
# name, then client options
run() {
	local t=$1 spid crc src n
	shift
	timeout 60 $PERF "$t" -d "$DB" -p $PORT "${CM[@]}" >"$srv" 2>&1 &
	spid=$!
	if ((${#CM[@]})); then
		# (a client refused for want of a listener retries for 10 s)
		timeout 60 $PERF "$t" -d "$DA" -p $PORT --json "$@" --cm \
			"$NODE_B" >"$out" 2>&1
	else
		timeout 60 $PERF "$t" -d "$DA" -p $PORT --json "$@" 127.0.0.1 \
			>"$out" 2>&1
	fi
	crc=$?
	wait $spid
	src=$?
	n=$(grep -c "^{\"test\":\"$t\",.*}$" "$out")
	if [[ $crc -ne 0 || $src -ne 0 || $n -lt 1 ]]; then
		not_ok "$t $* (client $crc, server $src, $n results)"
		cat "$out" "$srv"
	else
		ok "$t $* ($n results)"
	fi
}

run write_lat -n 50
run write_lat -n 20 -s 20000
run send_lat -n 50 -e
run read_lat -n 50 -s 4096 -e
run write_bw -n 100 -s 8192 -e
run read_bw -n 100 -s 8192 -e
run send_bw -n 100 -s 8192 -e
run send_bw -D 1 -s 1000 -e
run write_bw -n 10 -e -a

# fails_clearly WHAT STATUS FILE PATTERN - a run that must fail: STATUS a
# failure (not 0, not timeout(1)'s 124) and its output FILE naming why.
fails_clearly() {
	local what=$1 st=$2 file=$3 pat=$4
	if ((st == 0 || st == 124)); then
		not_ok "$what: status $st"
		cat "$file"
	elif ! grep -q "$pat" "$file"; then
		not_ok "$what: no clear message:"
		cat "$file"
	else
		ok "$what: $(head -c 120 "$file")"
	fi
}

# Over the CM: the node id of B from xnictl; every test again.
node_of() {
	tools/xnictl -j show "$1" | grep -o '"node_id": *[0-9]*' | grep -o '[0-9]*$'
}
cm_est() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/cm_established"; }
NODE_B=$(node_of "$DB")
if [[ -z $NODE_B ]]; then
	not_ok "no node id for $DB from xnictl"
else
	CM=(--cm)
	est0=$(cm_est "$DB")
	run write_lat -n 50
	run send_lat -n 50 -e
	run read_lat -n 50 -s 4096 -e
	run write_bw -n 100 -s 1M -e
	run read_bw -n 100 -s 8192 -e
	run send_bw -D 1 -s 1000 -e
	run write_bw -n 10 -e -a
	est1=$(cm_est "$DB")
	# 7 runs, 2 QPs each (test and control), established on B's side.
	if [[ -z $est0 || -z $est1 ]] || ((est1 - est0 != 14)); then
		not_ok "cm_established of $DB went from '$est0' to '$est1', expected +14"
	else
		ok "cm_established +14 on $DB"
	fi
	# The client killed mid-run: the server, waiting for its end message,
	# finds the peer gone (keepalive WRITE) and fails, not waits for ever.
	timeout 60 $PERF write_bw -d "$DB" -p $PORT --cm >"$srv" 2>&1 &
	spid=$!
	# (no timeout(1) here: kill must hit xnic-perf itself; -D ends it)
	$PERF write_bw -d "$DA" -p $PORT -s 65536 -D 20 --cm "$NODE_B" \
		>"$out" 2>&1 &
	cpid=$!
	sleep 3
	kill -9 $cpid 2>/dev/null
	wait $cpid 2>/dev/null
	wait $spid
	fails_clearly "a CM server whose client died" $? "$srv" \
		"peer stopped answering"
	CM=()
	# No server: refused (after 10 s of retries), with a message.
	timeout 30 $PERF write_lat -d "$DA" -p $((PORT + 1)) --cm "$NODE_B" \
		>"$out" 2>&1
	fails_clearly "a CM client without a server" $? "$out" \
		"refused the connection"
fi

# A client with no server fails with a message and a non-zero status.
timeout 30 $PERF write_lat -d "$DA" -p $((PORT + 1)) 127.0.0.1 >"$out" 2>&1
fails_clearly "a client without a server" $? "$out" "connect to 127.0.0.1"

# A slow link with a deep queue: both ends capped at 512 kbit/s by netem
# with its default queue (1000 frames: far more than link credit lets in),
# a 300 KiB WRITE each way at once, read back and compared (--verify).
# Each queue then holds ~4.6 s of frames and the ACKs wait behind the
# other side's data: the first round trip takes ~9 s. The retransmission
# timeout must grow past that (it stopped at 1 s, and retry_cnt ran out:
# XNIC_WC_RETRY_EXC_ERR on a working path). ~20-40 s.
cnt() {
	awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }' \
		"/sys/kernel/debug/xnic/$1/counters" 2>/dev/null
}
if ! modprobe sch_netem 2>/dev/null ||
   ! tc qdisc replace dev "$A" root netem rate 512kbit ||
   ! tc qdisc replace dev "$B" root netem rate 512kbit; then
	not_ok "deep queue: cannot cap $A/$B with netem"
else
	r0=$(($(cnt "$DA" tx_retransmits) + $(cnt "$DB" tx_retransmits)))
	t0=$(($(cnt "$DA" tx_timeouts) + $(cnt "$DB" tx_timeouts)))
	pids=()
	for d in "$DB $((PORT + 2))" "$DA $((PORT + 3))"; do
		read -r dev p <<<"$d"
		timeout 180 $PERF write_bw -d "$dev" -p "$p" >"$srv.$p" 2>&1 &
		pids+=($!)
	done
	for d in "$DA $((PORT + 2))" "$DB $((PORT + 3))"; do
		read -r dev p <<<"$d"
		timeout 180 $PERF write_bw -d "$dev" -p "$p" -s 307200 -n 1 \
			--verify 127.0.0.1 >"$out.$p" 2>&1 &
		pids+=($!)
	done
	st=()
	for p in "${pids[@]}"; do
		wait "$p"
		st+=($?)
	done
	tc qdisc del dev "$A" root
	tc qdisc del dev "$B" root
	r1=$(($(cnt "$DA" tx_retransmits) + $(cnt "$DB" tx_retransmits)))
	t1=$(($(cnt "$DA" tx_timeouts) + $(cnt "$DB" tx_timeouts)))
	if [[ ${st[*]} != "0 0 0 0" ]] ||
	   ! grep -q '^verify: 307200 bytes 1 messages' "$out.$((PORT + 2))" ||
	   ! grep -q '^verify: 307200 bytes 1 messages' "$out.$((PORT + 3))"; then
		not_ok "deep queue: 300 KiB each way at 512 kbit/s (servers, clients: ${st[*]})"
		cat "$srv.$((PORT + 2))" "$srv.$((PORT + 3))" \
			"$out.$((PORT + 2))" "$out.$((PORT + 3))"
	else
		ok "deep queue: 300 KiB each way at 512 kbit/s verified ($((r1 - r0)) retransmits, $((t1 - t0)) timeouts)"
	fi
	rm -f "$srv".* "$out".*
fi
tap_end
