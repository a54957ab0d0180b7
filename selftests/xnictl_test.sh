#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnictl_test.sh - tools/xnictl and the "xnic" generic netlink family, end
# to end: every command, plain and JSON output carrying the same values,
# the counters after a known transfer (xnictl -S, `rdma statistic`, sysfs),
# member links added and removed at runtime, parameters, events (monitor),
# bad input (exit status and message), an unprivileged user, and the
# kernel's strict attribute policies (raw netlink requests from python3).
#
# Environment: veth pair A (02:00:00:00:00:01) / B (02:00:00:00:00:02),
# MTU 9000, devices DA on A and DB on B (node ids 1 and 2); veth pair C/Cp
# for runtime member links. Runs as root in the test VM (tools/xnic-vm);
# prints TAP lines; exits 0 on success, 1 on failure, 4 (kselftest skip)
# when it cannot run.
# shellcheck disable=SC2317 # helpers run through check and wait_for
set -u

# shellcheck source=selftests/xt_tap.sh
. "$(dirname "$0")/xt_tap.sh"
cd "$(dirname "$0")/.." || exit 1
X=$PWD/tools/xnictl
PERF=$PWD/tools/xnic-perf
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

tag=$$
A=xca$tag B=xcb$tag C=xcc$tag
DA=xcd${tag}a DB=xcd${tag}b
PORT=$((30000 + tag % 10000))
tmp=$(mktemp -d)
veths=()
pids=()

cleanup() {
	local p v
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	rdma link delete "$DA" 2>/dev/null
	rdma link delete "$DB" 2>/dev/null
	for v in "${veths[@]}"; do
		ip link del "$v" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# veth_add NAME PEER [ip link options] - a veth pair, both ends up.
veth_add() {
	local a=$1 b=$2
	shift 2
	ip link add "$a" "$@" type veth peer name "$b" "$@" || return 1
	veths+=("$a")
	ip link set "$a" up && ip link set "$b" up
}

# xrun EXPECTED_STATUS PATTERN COMMAND... - run COMMAND; its exit status
# must be EXPECTED_STATUS and its stderr must match PATTERN (grep -E; ""
# for none). Output in $tmp/out and $tmp/err.
xrun() {
	local want=$1 pat=$2 st
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [[ $st -ne $want ]]; then
		echo "# '$*' exited $st, expected $want"
		sed 's/^/#   /' "$tmp/err" "$tmp/out" | head -n 10
		return 1
	fi
	if [[ -n $pat ]] && ! grep -qE -- "$pat" "$tmp/err"; then
		echo "# '$*': stderr does not match /$pat/:"
		sed 's/^/#   /' "$tmp/err" | head -n 10
		return 1
	fi
	return 0
}

# A kernel refusal: exit 1 and "xnictl: <message>" on stderr.
refused() {
	local pat=$1
	shift
	xrun 1 "^xnictl: $pat" "$@"
}

# A usage error: exit 2, the message names the bad argument.
usage_err() {
	local pat=$1
	shift
	xrun 2 "^xnictl: .*$pat" "$@"
}

# jq-like: json_get FILE PYTHON_EXPR - evaluate EXPR with `d` = the JSON.
json_get() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

json_ok() { python3 -m json.tool "$1" >/dev/null; }

# plain_field FILE KEY - value of "KEY: value" lines (xnictl show/get/-i).
plain_field() { sed -nE "s/^[[:space:]]*$2: ?(.*)$/\1/p" "$1" | head -n 1; }

# stat_of FILE NAME - a counter from `xnictl -S` plain output.
stat_of() { plain_field "$1" "$2"; }

# ------------------------------------------------------------------ setup --

[[ $(id -u) -eq 0 ]] || skip_all "must run as root (use tools/xnic-vm)"
for tool in ip rdma python3 setpriv timeout; do
	command -v "$tool" >/dev/null || skip_all "$tool not installed"
done
[[ -x $X ]] || skip_all "$X not built"
[[ -e /sys/module/xnic ]] || skip_all "xnic not loaded"
modprobe veth 2>/dev/null

echo "TAP version 13"
veth_add "$A" "$B" mtu 9000 || skip_all "cannot create veths"
ip link set "$A" address 02:00:00:00:00:01
ip link set "$B" address 02:00:00:00:00:02
veth_add "$C" "${C}p" mtu 9000 || skip_all "cannot create veths"
rdma link add "$DA" type xnic netdev "$A" || skip_all "rdma link add $DA"
rdma link add "$DB" type xnic netdev "$B" || skip_all "rdma link add $DB"

peer_seen() { # DEV NODE
	"$X" peer show "$1" 2>/dev/null | grep -q "node $2:"
}
check "$DA and $DB learn each other" \
	wait_for 10 bash -c "$(declare -f peer_seen); X=$X; peer_seen $DA 2 && peer_seen $DB 1"

# -------------------------------------------------------- list and show --

check "xnictl lists both devices" xrun 0 "" "$X"
check "list: one line per device" \
	bash -c "grep -q '^$DA: .*node_id 1 ' $tmp/out && grep -q '^$DB: .*node_id 2 ' $tmp/out"
cp "$tmp/out" "$tmp/list"
check "xnictl -j lists both devices" xrun 0 "" "$X" -j
check "list JSON parses" json_ok "$tmp/out"
cp "$tmp/out" "$tmp/list.json"
check "list JSON has the node ids of the plain list" test \
	"$(json_get "$tmp/list.json" "sorted((x['dev'], x['node_id']) for x in d if x['dev'] in ('$DA', '$DB'))")" \
	== "[('$DA', 1), ('$DB', 2)]"

check "xnictl show $DA" xrun 0 "" "$X" show "$DA"
cp "$tmp/out" "$tmp/show"
check "xnictl -j show $DA" xrun 0 "" "$X" -j show "$DA"
cp "$tmp/out" "$tmp/show.json"
check "show JSON parses" json_ok "$tmp/show.json"
rdma_index=$(rdma dev show "$DA" | sed -nE 's/^([0-9]+): .*/\1/p')
check "show: index is the RDMA core's ($rdma_index)" \
	test "$(plain_field "$tmp/show" index)" = "$rdma_index"
check "show: node_id 1, port ACTIVE, 1 link, 1 peer, payload MTU 8936" test \
	"$(plain_field "$tmp/show" node_id) $(plain_field "$tmp/show" port_state) $(plain_field "$tmp/show" links) $(plain_field "$tmp/show" peers) $(plain_field "$tmp/show" payload_mtu)" \
	= "1 ACTIVE 1 1 8936"
guid=$(cat "/sys/class/infiniband/$DA/node_guid")
check "show: node_guid is sysfs's ($guid)" \
	test "$(plain_field "$tmp/show" node_guid)" = "$guid"
same=1
for k in index node_id node_guid port_state links peers payload_mtu driver \
	version firmware_version; do
	if [[ "$(json_get "$tmp/show.json" "d[0]['$k']")" != "$(plain_field "$tmp/show" "$k")" ]]; then
		echo "# $k: JSON $(json_get "$tmp/show.json" "d[0]['$k']") plain $(plain_field "$tmp/show" "$k")"
		same=0
	fi
done
check "show: JSON carries the plain output's values" test $same -eq 1
check "xnictl -p show is indented JSON" \
	bash -c "$X -p show $DA > $tmp/pretty && python3 -m json.tool $tmp/pretty >/dev/null && grep -q '^        \"node_id\": 1,' $tmp/pretty"
check "xnictl show (no device) shows both" \
	bash -c "$X show | grep -qx '$DA:' && $X show | grep -qx '$DB:'"

# ----------------------------------------------------------- driver info --

check "xnictl -i $DA" xrun 0 "" "$X" -i "$DA"
cp "$tmp/out" "$tmp/info"
check "-i: driver xnic, module version, firmware version" test \
	"$(plain_field "$tmp/info" driver) $(plain_field "$tmp/info" version) $(plain_field "$tmp/info" firmware-version)" \
	= "xnic $(cat /sys/module/xnic/version) $(cat "/sys/class/infiniband/$DA/fw_ver")"
check "-i: bus-info empty, supports statistics" \
	bash -c "grep -qx 'bus-info: ' $tmp/info && grep -qx 'supports-statistics: yes' $tmp/info"
check "xnictl -j -i $DA" xrun 0 "" "$X" -j -i "$DA"
check "-i JSON carries the plain values" test \
	"$(json_get "$tmp/out" "' '.join([d[0]['driver'], d[0]['version'], d[0]['firmware-version'], repr(d[0]['bus-info']), str(d[0]['supports-statistics'])])")" \
	= "$(plain_field "$tmp/info" driver) $(plain_field "$tmp/info" version) $(plain_field "$tmp/info" firmware-version) '' True"

# -------------------------------------------------------------- counters --

COUNTERS="rx_frames rx_bytes tx_frames tx_bytes tx_drops rx_crc_errors
	rx_malformed rx_forged rx_unknown_qpn rx_duplicates tx_retransmits
	tx_timeouts naks_sent naks_rcvd engine_sleeps engine_wakeups"
check "xnictl -S $DB" xrun 0 "" "$X" -S "$DB"
cp "$tmp/out" "$tmp/s0"
check "-S: header line" grep -qx "$DB statistics:" "$tmp/s0"
missing=
for c in $COUNTERS; do
	[[ $(stat_of "$tmp/s0" "$c") =~ ^[0-9]+$ ]] || missing+=" $c"
done
check "-S lists frames, bytes, retransmits, timeouts, NAKs, CRC errors, drops, engine sleeps/wakeups${missing:+ (missing:$missing)}" \
	test -z "$missing"
check "xnictl -j -S $DB" xrun 0 "" "$X" -j -S "$DB"
cp "$tmp/out" "$tmp/s0.json"
check "-S JSON parses" json_ok "$tmp/s0.json"
# Counters only grow: the JSON, read second, holds every plain counter
# with a value no smaller.
check "-S JSON carries the plain counters (same names, values not smaller)" \
	python3 - "$tmp/s0" "$tmp/s0.json" <<'EOF'
import json, re, sys
plain = dict((m.group(1), int(m.group(2))) for m in
             re.finditer(r'^\s+(\w+): (\d+)$', open(sys.argv[1]).read(), re.M))
js = json.load(open(sys.argv[2]))[0]['statistics']
sys.exit(0 if plain and set(plain) == set(js) and
         all(js[k] >= v for k, v in plain.items()) else 1)
EOF

rdma statistic show link "$DB/1" >"$tmp/rdma0" 2>&1
check "rdma statistic show link $DB/1 lists every xnictl counter" \
	python3 - "$tmp/rdma0" "$tmp/s0.json" <<'EOF'
import json, sys
words = open(sys.argv[1]).read().split()
names = set(words[2::2])
js = json.load(open(sys.argv[2]))[0]['statistics']
sys.exit(0 if words[:2] == ['link', words[1]] and set(js) <= names else 1)
EOF
check "sysfs hw_counters has rx_bytes and engine_sleeps" \
	test -r "/sys/class/infiniband/$DB/ports/1/hw_counters/rx_bytes" -a \
	-r "/sys/class/infiniband/$DB/ports/1/hw_counters/engine_sleeps"

# A known transfer: ITERS RDMA WRITEs of SIZE bytes from DA to DB.
ITERS=200 SIZE=65536
rx0=$(stat_of "$tmp/s0" rx_bytes)
"$X" -S "$DA" >"$tmp/a0"
tx0=$(stat_of "$tmp/a0" tx_bytes)
timeout 120 "$PERF" write_bw -d "$DB" -p "$PORT" >"$tmp/srv" 2>&1 &
spid=$!
pids+=("$spid")
timeout 120 "$PERF" write_bw -d "$DA" -p "$PORT" -n $ITERS -s $SIZE \
	127.0.0.1 >"$tmp/cli" 2>&1
crc=$?
wait "$spid"
src=$?
check "xnic-perf write_bw -n $ITERS -s $SIZE $DA -> $DB (client $crc, server $src)" \
	test $crc -eq 0 -a $src -eq 0
"$X" -S "$DB" >"$tmp/s1"
"$X" -S "$DA" >"$tmp/a1"
rx1=$(stat_of "$tmp/s1" rx_bytes)
tx1=$(stat_of "$tmp/a1" tx_bytes)
check "rx_bytes at $DB grew by >= $((ITERS * SIZE)) (by $((rx1 - rx0)))" \
	test $((rx1 - rx0)) -ge $((ITERS * SIZE))
check "tx_bytes at $DA grew by >= $((ITERS * SIZE)) (by $((tx1 - tx0)))" \
	test $((tx1 - tx0)) -ge $((ITERS * SIZE))
check "rx_frames at $DB grew by >= $((ITERS * SIZE / 8936))" \
	test $(($(stat_of "$tmp/s1" rx_frames) - $(stat_of "$tmp/s0" rx_frames))) \
	-ge $((ITERS * SIZE / 8936))
check "engine_wakeups at $DB counted" \
	test "$(stat_of "$tmp/s1" engine_wakeups)" -ge 1
rdma_rx=$(rdma statistic show link "$DB/1" | python3 -c \
	'import sys; w=sys.stdin.read().split(); print(w[w.index("rx_bytes") + 1])')
check "rdma statistic rx_bytes at $DB agrees ($rdma_rx >= $rx1)" \
	test "$rdma_rx" -ge "$rx1"
sysfs_rx=$(cat "/sys/class/infiniband/$DB/ports/1/hw_counters/rx_bytes")
check "sysfs hw_counters/rx_bytes at $DB agrees ($sysfs_rx >= $rx1)" \
	test "$sysfs_rx" -ge "$rx1"

# ------------------------------------------------------------ link show --

check "xnictl link show $DA" xrun 0 "" "$X" link show "$DA"
cp "$tmp/out" "$tmp/links"
ifindex_a=$(cat "/sys/class/net/$A/ifindex")
check "link show: $A up, carrier on, MTU 9000, peer 2" grep -qx \
	"$DA $A: ifindex $ifindex_a state up carrier on mtu 9000 peers 2" \
	"$tmp/links"
check "xnictl -j link show $DA" xrun 0 "" "$X" -j link show "$DA"
check "link JSON carries the plain values" test \
	"$(json_get "$tmp/out" "' '.join(str(x) for x in (d[0]['dev'], d[0]['netdev'], d[0]['ifindex'], d[0]['state'], d[0]['carrier'], d[0]['mtu'], d[0]['peers']))")" \
	= "$DA $A $ifindex_a up True 9000 [2]"
check "xnictl link show (all) has both devices' links" \
	bash -c "$X link show | grep -q '^$DA $A:' && $X link show | grep -q '^$DB $B:'"

# ------------------------------------------------------------ peer show --

check "xnictl peer show $DA" xrun 0 "" "$X" peer show "$DA"
cp "$tmp/out" "$tmp/peers"
guid_b=$(cat "/sys/class/infiniband/$DB/node_guid")
check "peer show: node 2 with $DB's GUID and MAC over $A" grep -qE \
	"^$DA node 2: node_guid $guid_b mac 02:00:00:00:00:02 netdev $A ifindex $ifindex_a last_seen_ms [0-9]+ state up( answered rtt_us [0-9]+)?$" \
	"$tmp/peers"
check "xnictl -j peer show $DA" xrun 0 "" "$X" -j peer show "$DA"
check "peer JSON carries the plain values" test \
	"$(json_get "$tmp/out" "' '.join(str(x[k]) for x in d for k in ('node_id', 'node_guid', 'mac', 'netdev', 'ifindex', 'state'))")" \
	= "2 $guid_b 02:00:00:00:00:02 $A $ifindex_a up"

# ------------------------------------------------------------ parameters --

check "xnictl get $DA" xrun 0 "" "$X" get "$DA"
check "get: defaults" test "$(tr '\n' ' ' <"$tmp/out")" = \
	"node_id: 1 idle_us: 20 hb_interval_ms: 100 hb_miss: 3 credit_window: 256 class0_weight: 1 class1_weight: 1 bond_policy: 0 peer_timeout_ms: 1000 bond_hold_ms: 500 max_peers: 1024 "
check "xnictl set $DA (every key but node_id)" xrun 0 "" "$X" set "$DA" \
	idle_us 500 hb_interval_ms 20 hb_miss 4 credit_window 128 \
	class0_weight 8 class1_weight 2
check "xnictl get $DA shows the new values" xrun 0 "" "$X" get "$DA"
cp "$tmp/out" "$tmp/get"
check "get: new values" test "$(tr '\n' ' ' <"$tmp/get")" = \
	"node_id: 1 idle_us: 500 hb_interval_ms: 20 hb_miss: 4 credit_window: 128 class0_weight: 8 class1_weight: 2 bond_policy: 0 peer_timeout_ms: 1000 bond_hold_ms: 500 max_peers: 1024 "
check "xnictl -j get $DA carries the plain values" bash -c \
	"$X -j get $DA > $tmp/get.json && python3 -m json.tool $tmp/get.json >/dev/null"
check "get JSON = get plain" test \
	"$(json_get "$tmp/get.json" "' '.join('%s: %s' % (k, v) for k, v in d[0].items() if k != 'dev')") " \
	= "$(tr '\n' ' ' <"$tmp/get")"
check "xnictl get $DA credit_window" xrun 0 "" "$X" get "$DA" credit_window
check "get KEY prints that key only" test "$(cat "$tmp/out")" = "credit_window: 128"
check "$DB keeps its own parameters" \
	bash -c "$X get $DB idle_us | grep -qx 'idle_us: 20'"
# Numbers are decimal, or hexadecimal after 0x: a leading 0 is not octal.
check "set $DB class1_weight 010" xrun 0 "" "$X" set "$DB" class1_weight 010
check "010 is ten" bash -c "$X get $DB class1_weight | grep -qx 'class1_weight: 10'"
check "set $DB class1_weight 0x1f" xrun 0 "" "$X" set "$DB" class1_weight 0x1f
check "0x1f is 31" bash -c "$X get $DB class1_weight | grep -qx 'class1_weight: 31'"
check "set $DB class1_weight 0x: exit 2" xrun 2 "expected a number" \
	"$X" set "$DB" class1_weight 0x
check "set $DB class1_weight 1 (back)" xrun 0 "" "$X" set "$DB" class1_weight 1

# node id: changes while no QP exists; peers learn the new one.
check "xnictl set $DB node_id 42" xrun 0 "" "$X" set "$DB" node_id 42
check "show $DB: node_id 42" \
	bash -c "$X show $DB | grep -qx $'\tnode_id: 42'"
check "$DA learns node 42" wait_for 10 \
	bash -c "$(declare -f peer_seen); X=$X; peer_seen $DA 42"
check "xnictl set $DB node_id 2 (back)" xrun 0 "" "$X" set "$DB" node_id 2
# 65535 is the broadcast id of HELLOs: no node's (the wire refuses it).
check "set $DB node_id 65535: refused, the range named" \
	xrun 1 "valid range 0..65534" "$X" set "$DB" node_id 65535
check "$DB keeps node id 2" bash -c "$X get $DB node_id | grep -qx 'node_id: 2'"
check "set $DB max_peers 0: refused" \
	xrun 1 "valid range 1..65534" "$X" set "$DB" max_peers 0

# ... and is refused while the device has a QP: an xnic-perf client holds
# one while it waits for a server that never answers.
python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1)
c, _ = s.accept()
time.sleep(60)' $((PORT + 1)) &
pids+=($!)
sleep 0.3
timeout 60 "$PERF" write_lat -d "$DA" -p $((PORT + 1)) 127.0.0.1 \
	>/dev/null 2>&1 &
ppid=$!
pids+=("$ppid")
# (A QP in RESET has no port yet: `rdma resource` shows it as "$DA/-".)
has_qp() { rdma resource show qp 2>/dev/null | grep -q "^link $DA/"; }
check "a QP exists on $DA" wait_for 20 has_qp
check "set node_id with a QP: refused (EBUSY)" \
	refused "node id cannot change while the device has QPs \(node_id 5\)" \
	"$X" set "$DA" node_id 5
check "node_id unchanged" bash -c "$X get $DA node_id | grep -qx 'node_id: 1'"
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
pids=()
check "set node_id once the QP is gone" wait_for 10 "$X" set "$DA" node_id 1

# ------------------------------------------------------------ bad input --

check "show unknown device: exit 1, 'no such xnic device'" \
	refused "no such xnic device \(device nodev$tag\)" "$X" show "nodev$tag"
check "-S unknown device: exit 1" \
	refused "no such xnic device" "$X" -S "nodev$tag"
check "-i unknown device: exit 1" \
	refused "no such xnic device" "$X" -i "nodev$tag"
check "link show unknown device: exit 1" \
	refused "no such xnic device" "$X" link show "nodev$tag"
check "peer show unknown device: exit 1" \
	refused "no such xnic device" "$X" peer show "nodev$tag"
check "set unknown device: exit 1" \
	refused "no such xnic device" "$X" set "nodev$tag" idle_us 5
check "get unknown key: exit 2" usage_err "unknown parameter 'bogus'" \
	"$X" get "$DA" bogus
check "set unknown key: exit 2" usage_err "unknown parameter 'bogus'" \
	"$X" set "$DA" bogus 1
check "set without value: exit 2" usage_err "missing value for 'idle_us'" \
	"$X" set "$DA" idle_us
check "set without key: exit 2" usage_err "missing KEY VALUE" "$X" set "$DA"
check "set without device: exit 2" usage_err "missing DEV" "$X" set
check "set non-number: exit 2" usage_err "invalid value 'ten' for idle_us" \
	"$X" set "$DA" idle_us ten
check "set value above u32: exit 2" \
	usage_err "invalid value '4294967296' for hb_miss" \
	"$X" set "$DA" hb_miss 4294967296
check "set idle_us out of range: exit 1, range named" \
	refused "integer out of range \(idle_us 20000000: valid range 0\.\.10000000\)" \
	"$X" set "$DA" idle_us 20000000
check "set node_id out of range: exit 1" \
	refused "integer out of range \(node_id 70000: valid range 0\.\.65534\)" \
	"$X" set "$DA" node_id 70000
check "set credit_window 4 (below what a grant can be): exit 1" \
	refused "integer out of range \(credit_window 4: valid range 8\.\.1024\)" \
	"$X" set "$DA" credit_window 4
check "set hb_miss 0: exit 1" \
	refused "integer out of range \(hb_miss 0: valid range 1\.\.255\)" \
	"$X" set "$DA" hb_miss 0
check "a refused set changes nothing (idle_us 700 with hb_miss 0)" bash -c \
	"! $X set $DA idle_us 700 hb_miss 0 2>/dev/null && $X get $DA idle_us | grep -qx 'idle_us: 500'"
check "link add without netdev: exit 2" usage_err "missing NETDEV" \
	"$X" link add "$DA"
check "link bogus: exit 2" usage_err "unknown subcommand 'bogus'" \
	"$X" link bogus
check "unknown command: exit 2" usage_err "unknown command 'frob'" "$X" frob
check "unknown option: exit 2" usage_err "unknown option '--frob'" \
	"$X" --frob
check "-S without device: exit 2" usage_err "'-S' needs a device name" \
	"$X" -S
check "extra argument: exit 2" usage_err "unexpected argument 'x'" \
	"$X" show "$DA" x
check "--help: exit 0, lists the parameters" \
	bash -c "$X --help | grep -q '^  credit_window '"

# Unprivileged: reading works, changing is EPERM.
check "nobody: xnictl show works" xrun 0 "" "${NOBODY[@]}" "$X" show "$DA"
check "nobody: set refused with EPERM" \
	refused "Operation not permitted" "${NOBODY[@]}" "$X" set "$DA" idle_us 5
check "nobody: link add refused with EPERM" \
	refused "Operation not permitted" "${NOBODY[@]}" "$X" link add "$DA" "$C"
check "nobody: link del refused with EPERM" \
	refused "Operation not permitted" "${NOBODY[@]}" "$X" link del "$DA" "$A"
check "nobody's set changed nothing" \
	bash -c "$X get $DA idle_us | grep -qx 'idle_us: 500'"

# ------------------------------------------------------- runtime links --

"$X" monitor >"$tmp/mon" 2>"$tmp/mon.err" &
mpid=$!
"$X" -j monitor >"$tmp/mon.json" 2>&1 &
mjpid=$!
pids+=("$mpid" "$mjpid")
sleep 0.5

check "link add $DA $C" xrun 0 "" "$X" link add "$DA" "$C"
check "link show $DA lists $A and $C" bash -c \
	"$X link show $DA | grep -q '^$DA $A: ' && $X link show $DA | grep -q '^$DA $C: '"
check "show $DA: 2 links" bash -c "$X show $DA | grep -qx $'\tlinks: 2'"
check "rdma link show: $DA/1 still ACTIVE on $A" \
	bash -c "rdma link show $DA/1 | grep -q 'state ACTIVE .*netdev $A '"
check "link add $DA $C again: EEXIST" \
	refused "netdev is already a member link" "$X" link add "$DA" "$C"
check "link add $DA $B (of $DB): EEXIST" \
	refused "netdev is already a member link" "$X" link add "$DA" "$B"
check "link add $DA lo: loopback refused" \
	refused "cannot use a loopback device" "$X" link add "$DA" lo
check "link add $DA nonexistent: no such netdev" \
	refused "no such netdev \(netdev nonet$tag\)" "$X" link add "$DA" "nonet$tag"
ip link add "xcs$tag" mtu 300 type veth peer name "xcs${tag}p" &&
	veths+=("xcs$tag")
check "link add $DA with MTU 300: refused (MTU)" \
	refused "netdev MTU is below the xnic header" "$X" link add "$DA" "xcs$tag"
modprobe tun 2>/dev/null
if ip tuntap add dev "xct$tag" mode tun 2>/dev/null; then
	veths+=("xct$tag")
	check "link add $DA tun device: not Ethernet" \
		refused "member link must be an Ethernet device" \
		"$X" link add "$DA" "xct$tag"
else
	ok "link add $DA tun device: not Ethernet # SKIP no tun device"
fi

# Down and up: events and link state.
ip link set "$C" down
check "link show: $C down" wait_for 5 \
	bash -c "$X link show $DA | grep -q '^$DA $C: .* state down carrier off'"
ip link set "$C" up
check "link show: $C up again" wait_for 5 \
	bash -c "$X link show $DA | grep -q '^$DA $C: .* state up carrier on'"

# The first link goes: the port's netdev follows the remaining one.
check "link del $DA $A (not the last)" xrun 0 "" "$X" link del "$DA" "$A"
check "rdma link show: $DA/1 netdev is now $C" \
	bash -c "rdma link show $DA/1 | grep -q 'netdev $C '"
check "link del $DA $C (the last): EBUSY, use rdma link delete" \
	refused "cannot remove the last member link: use 'rdma link delete'" \
	"$X" link del "$DA" "$C"
check "link add $DA $A back" xrun 0 "" "$X" link add "$DA" "$A"
check "link del $DA $C" xrun 0 "" "$X" link del "$DA" "$C"
check "rdma link show: $DA/1 on $A, ACTIVE" \
	bash -c "rdma link show $DA/1 | grep -q 'state ACTIVE .*netdev $A '"
check "link del $DA $B (of $DB): not a member link" \
	refused "netdev is not a member link of this xnic device" \
	"$X" link del "$DA" "$B"
check "$DA and $DB still peers" wait_for 10 \
	bash -c "$(declare -f peer_seen); X=$X; peer_seen $DA 2"

# Node id change on DB: a peer_join event at DA.
"$X" set "$DB" node_id 77
check "$DA learns node 77" wait_for 10 \
	bash -c "$(declare -f peer_seen); X=$X; peer_seen $DA 77"
"$X" set "$DB" node_id 2

# XNIC_MAX_LINKS (8): the 9th is refused with ENOSPC. Several netdevs in
# one command: added in order up to the first refused.
xcm=()
for i in 1 2 3 4 5 6 7; do
	veth_add "xcm${tag}_$i" "xcm${tag}_${i}p" mtu 1500 &&
		xcm+=("xcm${tag}_$i")
done
check "link add $DA with 6 netdevs in one command" \
	xrun 0 "" "$X" link add "$DA" "${xcm[@]:0:6}"
check "show $DA: 7 links" bash -c "$X show $DA | grep -qx $'\tlinks: 7'"
check "link add $DA ${xcm[6]} $C: the 9th refused (most member links)" \
	refused "device has the most member links it can have \(8\) \(netdev $C\)" \
	"$X" link add "$DA" "${xcm[6]}" "$C"
check "show $DA: 8 links (the one before the refused added)" \
	bash -c "$X show $DA | grep -qx $'\tlinks: 8'"
check "link del $DA of 7 netdevs in one command" \
	xrun 0 "" "$X" link del "$DA" "${xcm[@]}"
check "show $DA: 1 link again" bash -c "$X show $DA | grep -qx $'\tlinks: 1'"
# A member netdev deleted under the device: removed from its links.
"$X" link add "$DA" "$C"
ip link del "$C"
check "deleted netdev leaves the link list" wait_for 5 \
	bash -c "! $X link show $DA | grep -q '^$DA $C:'"

sleep 0.3
kill -INT "$mpid" "$mjpid"
wait "$mpid"
mst=$?
wait "$mjpid"
mjst=$?
pids=()
check "monitor exits 0 on SIGINT ($mst, $mjst)" test $mst -eq 0 -a $mjst -eq 0
for ev in "link_added $C" "link_down $C" "link_up $C" "link_removed $A" \
	"link_added $A" "link_removed $C"; do
	check "monitor: $DA: $ev" grep -q "^$DA: $ev: ifindex" "$tmp/mon"
done
check "monitor: $DA: peer_join node 77" \
	grep -qE "^$DA: peer_join node 77: node_guid $guid_b mac 02:00:00:00:00:02 netdev $A " \
	"$tmp/mon"
check "monitor -j: every line is JSON, same events as plain" \
	python3 - "$tmp/mon" "$tmp/mon.json" <<'EOF'
import json, sys
plain = []
for l in open(sys.argv[1]):
    w = l.split()
    if len(w) < 4 or not w[0].endswith(':'):
        continue	# the "monitoring" banner
    key = w[3] if w[1].startswith('peer') else w[2]
    plain.append((w[0].rstrip(':'), w[1], key.rstrip(':')))
js = []
for l in open(sys.argv[2]):
    d = json.loads(l)
    key = d['node_id'] if d['event'].startswith('peer') else d['netdev']
    js.append((d['dev'], d['event'], str(key)))
sys.exit(0 if js and plain == js else 1)
EOF

# --------------------------------------------- strict attribute policies --

# Raw generic netlink requests the tool never sends: each must be refused
# with EINVAL and an extended ACK naming the problem.
check "kernel policies: unknown/unsupported attributes, missing NLA_F_NESTED, range, bad length, missing device" \
	python3 - "$DA" <<'EOF'
import errno, os, socket, struct, sys
dev = sys.argv[1].encode() + b'\0'
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
s.setsockopt(270, 11, 1)	# NETLINK_EXT_ACK
s.setsockopt(270, 10, 1)	# NETLINK_CAP_ACK
s.bind((0, 0))
seq = 0

def attr(t, data):
    n = 4 + len(data)
    return struct.pack('HH', n, t) + data + b'\0' * (-n % 4)

def request(family, cmd, attrs, flags=0x5):	# REQUEST | ACK
    global seq
    seq += 1
    body = struct.pack('BBH', cmd, 1, 0) + attrs
    s.send(struct.pack('IHHII', 16 + len(body), family, flags, seq, 0) + body)
    replies = []
    while True:
        data = s.recv(65536)
        off = 0
        while off < len(data):
            n, t, f = struct.unpack_from('IHH', data, off)
            if t == 2:	# NLMSG_ERROR
                err, = struct.unpack_from('i', data, off + 16)
                msg, p = '', off + 16 + 4 + 16
                while p + 4 <= off + n:
                    an, at = struct.unpack_from('HH', data, p)
                    if at == 1:
                        msg = data[p + 4:p + an].rstrip(b'\0').decode()
                    p += (an + 3) & ~3
                return err, msg, replies
            replies.append(data[off + 20:off + n])
            off += (n + 3) & ~3

def attrs_of(payload):
    out, p = {}, 0
    while p + 4 <= len(payload):
        n, t = struct.unpack_from('HH', payload, p)
        out[t & 0x3fff] = payload[p + 4:p + n]
        p += (n + 3) & ~3
    return out

err, msg, rep = request(0x10, 3, attr(2, b'xnic\0'))	# CTRL_CMD_GETFAMILY
fam = struct.unpack('H', attrs_of(rep[0])[1][:2])[0]

A_DEV_NAME, A_NODE_GUID, A_LINK, A_PARAMS = 3, 5, 13, 15
P_IDLE_US = 2
NESTED = 0x8000
cases = [
    ('unknown param type', 7, attr(A_DEV_NAME, dev) +
     attr(A_PARAMS | NESTED, attr(99, struct.pack('I', 1))),
     -errno.EINVAL, 'Unknown attribute type'),
    ('attribute PARAM_SET does not take', 7, attr(A_DEV_NAME, dev) +
     attr(A_NODE_GUID, struct.pack('Q', 1)),
     -errno.EINVAL, 'Unsupported attribute'),
    ('nest without NLA_F_NESTED', 7, attr(A_DEV_NAME, dev) +
     attr(A_PARAMS, attr(P_IDLE_US, struct.pack('I', 1))),
     -errno.EINVAL, 'NLA_F_NESTED is missing'),
    ('value out of range', 7, attr(A_DEV_NAME, dev) +
     attr(A_PARAMS | NESTED, attr(P_IDLE_US, struct.pack('I', 20000000))),
     -errno.ERANGE, 'integer out of range'),
    ('u16 for a u32', 7, attr(A_DEV_NAME, dev) +
     attr(A_PARAMS | NESTED, attr(P_IDLE_US, struct.pack('H', 1))),
     -errno.EINVAL, 'invalid attribute length'),
    ('no device', 1, b'', -errno.EINVAL, 'no xnic device given'),
    ('LINK_ADD without a link', 3, attr(A_DEV_NAME, dev),
     -errno.EINVAL, 'no member link given'),
    ('LINK_ADD link without netdev', 3, attr(A_DEV_NAME, dev) +
     attr(A_LINK | NESTED, b''), -errno.EINVAL, 'no netdev name or index'),
    ('PARAM_SET without parameters', 7, attr(A_DEV_NAME, dev),
     -errno.EINVAL, 'no parameters given'),
    ('device index and name disagree', 1, attr(A_DEV_NAME, dev) +
     attr(2, struct.pack('I', 0xfffff)), -errno.EINVAL, 'does not match'),
    ('unknown command', 99, b'', -errno.EOPNOTSUPP, ''),
]
bad = 0
for name, cmd, attrs, want_err, want_msg in cases:
    err, msg, _ = request(fam, cmd, attrs)
    good = err == want_err and want_msg in msg
    print('#   %s: %s (%d, %r)' % ('ok' if good else 'BAD', name, err, msg))
    bad += not good
sys.exit(1 if bad else 0)
EOF

if genl ctrl policy name xnic >"$tmp/policy" 2>&1; then
	check "genl ctrl policy name xnic: the family's policies can be dumped" \
		grep -q 'attr\[1\]: type=U32 range:\[0,65534\]' "$tmp/policy"
fi

# ------------------------------------------------------------------ end --

tap_end
