#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_examples_test.sh - the programs of examples/ run as a user runs
# them, on two xnic devices over a veth pair (node ids 0x1e and 0x1f):
# the CM ping-pong with its verified READ, the event-driven echo server
# with six clients at once (one of them killed mid-way: the server must
# notice its death and still finish), and a 2-rank all-reduce. Each check
# is the programs' own exit status (they verify every byte). Runs as root
# in the test VM; about a minute.
set -u

# shellcheck source=selftests/xt_tap.sh
. "$(dirname "$0")/xt_tap.sh"
# shellcheck source=selftests/xt_pair.sh
. "$(dirname "$0")/xt_pair.sh"
cd "$(dirname "$0")/.." || exit 1
EX=$PWD/examples

tag=$$
A=exa$tag B=exb$tag
D0=exd${tag}0 D1=exd${tag}1
N0=30 N1=31
PORT=$((20000 + tag % 20000))
tmp=$(mktemp -d)
pids=()

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	xt_pair_del "$D0" "$D1" "$A"
	rm -rf "$tmp"
}
trap cleanup EXIT

[[ $(id -u) -eq 0 ]] || skip_all "must run as root (use tools/xnic-vm)"
for p in pingpong echo_server echo_client allreduce; do
	[[ -x $EX/$p ]] || skip_all "$EX/$p not built"
done
[[ -e /sys/module/xnic ]] || modprobe xnic 2>/dev/null ||
	skip_all "xnic not loaded"
modprobe veth 2>/dev/null

echo "TAP version 13"
xt_pair "$D0" "$D1" "$A" "$B" 02:00:00:00:00:1e 02:00:00:00:00:1f ||
	skip_all "cannot set up the xnic pair"

# run_bg NAME CMD... - start CMD with a deadline, its output in $tmp/NAME
run_bg() {
	local name=$1
	shift
	timeout 120 "$@" >"$tmp/$name" 2>&1 &
	pids+=($!)
}

# finish NAME PID - wait for PID; show its output; its exit status
finish() {
	local rc
	wait "$2"
	rc=$?
	sed "s/^/# $1: /" "$tmp/$1"
	return $rc
}

# --- pingpong: 200 round trips of 4 KiB WRITE_WITH_IMM, a 1 MiB READ
run_bg pp_server "$EX/pingpong" -d "$D0"
srv=$!
run_bg pp_client "$EX/pingpong" -d "$D1" -c $N0 -i 200
check "pingpong client: round trips and READ verified" finish pp_client $!
check "pingpong server: saw the disconnect" finish pp_server $srv
check "pingpong client printed the verified READ" \
	grep -q "READ of .* bytes verified" "$tmp/pp_client"

# --- echo server: 6 clients at once, one killed while connected
run_bg echo_server "$EX/echo_server" -d "$D0" -n 6
srv=$!
cl=()
for i in 1 2 3 4 5; do
	run_bg "echo_client$i" "$EX/echo_client" -d "$D1" -c $N0 -m 200
	cl+=($!)
done
# The sixth connects, exchanges a few messages, and is killed.
"$EX/echo_client" -d "$D1" -c $N0 -m 1000000 >"$tmp/victim" 2>&1 &
victim=$!
pids+=($victim)
connected() { (($(grep -c "node $N1 connected" "$tmp/echo_server") >= $1)); }
wait_for 60 connected 6
sleep 1
kill -9 $victim
for i in 1 2 3 4 5; do
	check "echo client $i: 200 replies checked" \
		finish "echo_client$i" "${cl[$((i - 1))]}"
done
check "echo server: served 6 clients, the killed one included" \
	finish echo_server $srv
check "echo server saw six connections end" \
	grep -q "6 clients served" "$tmp/echo_server"

# --- all-reduce: 2 ranks, 1000003 floats, every element checked
run_bg ar0 "$EX/allreduce" -d "$D0" -r 0 -n 2 -p $PORT
r0=$!
run_bg ar1 "$EX/allreduce" -d "$D1" -r 1 -n 2 -p $PORT
r1=$!
check "allreduce rank 0: every sum right" finish ar0 $r0
check "allreduce rank 1: every sum right" finish ar1 $r1

tap_end
