#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_netns_test.sh - each xnic device in its own network namespace, as
# the demo's nodes are (Documentation/admin-guide.rst, "Network
# namespaces"). Two nodes, namespaces N0 and N1, joined by two veth pairs
# (A0-B0, A1-B1); RDMA devices in exclusive mode (`rdma system set netns
# exclusive`), device D0 moved into N0 and D1 into N1 (`rdma dev set DEV
# netns NS`), their second member links added from inside the namespace
# (xnictl, the "xnic" family is netns-aware). Checks:
#  1. each node sees its own device only: rdma dev, sysfs, xnictl;
#     the initial namespace sees neither;
#  2. naming the other node's device fails: xnictl show/link add (ENODEV,
#     "no such xnic device"), `rdma dev set` (not found), and opening its
#     uverbs char device (EPERM);
#  3. link events reach the device's namespace only (xnictl monitor);
#  4. data moves byte-exact between the nodes: an all-reduce whose ranks
#     meet over the fabric's CM (tools/xnic-coll-rank checks every
#     element) and an xnic-perf write_bw over the IP side channel;
#  5. a member netdev moved to another namespace and back keeps its link,
#     which comes back up and relearns its peer; a real unregister still
#     detaches it;
#  6. `rdma dev set D0 netns ...` with QPs open (an xnic-perf run): the
#     QPs are gone (rdma res), the device works again once back in N0
#     (another checked all-reduce);
#  7. namespaces deleted, devices gone, xnic.ko unloads.
# The kernel log must stay free of oopses, WARNs and lockdep splats
# (tools/xnic-vm fails the run otherwise). Runs as root in the test VM;
# prints TAP lines; exits 0, 1 (a failure) or 4 (cannot run).
# shellcheck disable=SC2317,SC2016 # helpers run through check, wait_for, eval
set -u

# shellcheck source=selftests/xt_tap.sh
. "$(dirname "$0")/xt_tap.sh"
cd "$(dirname "$0")/.." || exit 1
X=$PWD/tools/xnictl
PERF=$PWD/tools/xnic-perf
RANK=$PWD/tools/xnic-coll-rank
[[ -x $X && -x $PERF && -x $RANK ]] || skip_all "tools not built"
command -v rdma >/dev/null || skip_all "no rdma (iproute2)"

tag=$$
N0=xn0_$tag N1=xn1_$tag N2=xn2_$tag NI=xni_$tag
A0=xna0$tag A1=xna1$tag B0=xnb0$tag B1=xnb1$tag
D0=xnd${tag}a D1=xnd${tag}b
PORT=$((30000 + tag % 10000))
tmp=$(mktemp -d)
pids=()

in0() { ip netns exec "$N0" "$@"; }
in1() { ip netns exec "$N1" "$@"; }

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	ip netns del "$N0" 2>/dev/null
	ip netns del "$N1" 2>/dev/null
	ip netns del "$N2" 2>/dev/null
	ip netns del "$NI" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# Exclusive mode can only be set while no other namespace exists.
if ! rdma system set netns exclusive; then
	skip_all "cannot set RDMA netns exclusive mode (other namespaces?)"
fi
check "rdma system: netns exclusive" \
	grep -q 'netns exclusive' <(rdma system show)

if ! { ip netns add "$N0" && ip netns add "$N1" && ip netns add "$N2" &&
	ip netns attach "$NI" 1; }; then
	not_ok "namespaces"
	tap_end
fi
for p in "$A0:$B0:01:02" "$A1:$B1:11:12"; do
	IFS=: read -r a b ma mb <<<"$p"
	ip link add "$a" address "02:00:00:00:0d:$ma" mtu 9000 netns "$N0" \
		type veth peer name "$b" address "02:00:00:00:0d:$mb" \
		mtu 9000 netns "$N1" || { not_ok "veth $a-$b"; tap_end; }
	in0 ip link set "$a" up && in1 ip link set "$b" up
done
in0 ip link set lo up
in1 ip link set lo up
in0 ip addr add 10.88.0.1/24 dev "$A0"
in1 ip addr add 10.88.0.2/24 dev "$B0"

# `rdma link add` finds the netdev in the caller's namespace; the new
# device starts in the initial one and is moved to its node's.
check "rdma link add in $N0 (netdev found there)" \
	in0 rdma link add "$D0" type xnic netdev "$A0"
check "rdma link add in $N1" in1 rdma link add "$D1" type xnic netdev "$B0"
check "rdma dev set $D0 netns $N0" rdma dev set "$D0" netns "$N0"
check "rdma dev set $D1 netns $N1" rdma dev set "$D1" netns "$N1"
check "xnictl link add in $N0" in0 "$X" link add "$D0" "$A1"
check "xnictl link add in $N1" in1 "$X" link add "$D1" "$B1"

# 1. Visibility.
has() { grep -qw -- "$1" "$2"; }
in0 rdma dev >"$tmp/rdma0"
in1 rdma dev >"$tmp/rdma1"
rdma dev >"$tmp/rdmai"
check "rdma dev in $N0: $D0, not $D1" \
	eval 'has "$D0" "$tmp/rdma0" && ! has "$D1" "$tmp/rdma0"'
check "rdma dev in $N1: $D1, not $D0" \
	eval 'has "$D1" "$tmp/rdma1" && ! has "$D0" "$tmp/rdma1"'
check "rdma dev in the initial namespace: neither" \
	eval '! has "$D0" "$tmp/rdmai" && ! has "$D1" "$tmp/rdmai"'
# What libibverbs and rdma-core list: ib_core's sysfs class is tagged by
# namespace (`ip netns exec` mounts the namespace's own sysfs).
in0 ls /sys/class/infiniband >"$tmp/sys0" 2>&1
in1 ls /sys/class/infiniband >"$tmp/sys1" 2>&1
check "/sys/class/infiniband in $N0: $D0, not $D1" \
	eval 'has "$D0" "$tmp/sys0" && ! has "$D1" "$tmp/sys0"'
check "/sys/class/infiniband in $N1: $D1, not $D0" \
	eval 'has "$D1" "$tmp/sys1" && ! has "$D0" "$tmp/sys1"'
in0 "$X" >"$tmp/x0" 2>&1
"$X" >"$tmp/xi" 2>&1
check "xnictl (list) in $N0: $D0, not $D1" \
	eval 'has "$D0" "$tmp/x0" && ! has "$D1" "$tmp/x0"'
check "xnictl (list) in the initial namespace: neither" \
	eval '! has "$D0" "$tmp/xi" && ! has "$D1" "$tmp/xi"'
links_of() { in0 "$X" -j link show "$D0" | grep -o '"netdev"' | wc -l; }
check "xnictl link show $D0 in $N0: 2 links" eval '(($(links_of) == 2))'

# 2. The other node's device, named from the wrong namespace.
out=$(in0 "$X" show "$D1" 2>&1)
rc=$?
check "xnictl show $D1 in $N0 fails: no such device ($out)" \
	eval '((rc != 0)) && grep -qi "no such xnic device" <<<"$out"'
out=$(in0 "$X" link add "$D1" "$A1" 2>&1)
check "xnictl link add $D1 in $N0 fails: no such device" \
	grep -qi "no such xnic device" <<<"$out"
check "rdma dev set $D1 netns from $N0 fails" \
	eval '! in0 rdma dev set "$D1" netns "$N0" 2>/dev/null'
uv=
for f in /sys/class/infiniband_verbs/uverbs*/ibdev; do
	[[ $(cat "$f" 2>/dev/null) == "$D1" ]] && uv=${f%/ibdev} uv=${uv##*/}
done
out=$(in0 python3 -c 'import os, sys
try:
    os.open(sys.argv[1], os.O_RDWR)
    print("opened")
except OSError as e:
    print(os.strerror(e.errno), e.errno)' "/dev/infiniband/$uv" 2>&1)
check "open $D1's /dev/infiniband/${uv:-?} from $N0: EPERM ($out)" \
	eval '[[ -n $uv && $out == *" 1" ]]'
out=$(in1 python3 -c 'import os, sys
os.close(os.open(sys.argv[1], os.O_RDWR)); print("opened")' \
	"/dev/infiniband/$uv" 2>&1)
check "open it from $N1: opened ($out)" test "$out" = opened
# What a libxnic program says (xnic_open(), admin-guide.rst).
out=$(in0 timeout 60 "$PERF" write_lat -d "$D1" --cm 2>&1)
check "xnic_open($D1) from $N0: ENODEV, names the namespace ($out)" \
	grep -q "no such RDMA device in this network namespace" <<<"$out"

# 3. Events stay in the device's namespace.
ip netns exec "$N0" "$X" monitor >"$tmp/mon0" 2>&1 &
pids+=($!)
ip netns exec "$N1" "$X" monitor >"$tmp/mon1" 2>&1 &
pids+=($!)
sleep 1
in1 ip link set "$B1" down
sleep 0.5
in1 ip link set "$B1" up
mon_saw() { grep -q "$D1" "$tmp/mon1"; }
check "xnictl monitor in $N1 sees $D1's link events" wait_for 10 mon_saw
check "xnictl monitor in $N0 does not" eval '! grep -q "$D1" "$tmp/mon0"'
kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
pids=()

# 4. Data between the nodes.
paths_of() {	# NS DEV: (peer, link) paths the device heard HELLOs on
	ip netns exec "$1" "$X" -j peer show "$2" | grep -o '"netdev"' | wc -l
}
both_paths() { (($(paths_of "$N0" "$D0") >= 2 && $(paths_of "$N1" "$D1") >= 2)); }
check "each device heard its peer on both links" wait_for 20 both_paths
id0=$(in0 "$X" -j show "$D0" | grep -o '"node_id": *[0-9]*' | grep -o '[0-9]*$')
id1=$(in1 "$X" -j show "$D1" | grep -o '"node_id": *[0-9]*' | grep -o '[0-9]*$')
allreduce() {	# NAME: a 2-rank all-reduce over the CM, each rank checked
	local r1 rc0 rc1
	ip netns exec "$N1" timeout 200 "$RANK" --rank 1 --nodes 2 --device "$D1" \
		--bootstrap "cm:$id0,$id1" --count 100003 --timeout 120 \
		>"$tmp/$1.1" 2>&1 &
	r1=$!
	in0 timeout 200 "$RANK" --rank 0 --nodes 2 --device "$D0" \
		--bootstrap "cm:$id0,$id1" --count 100003 --timeout 120 \
		>"$tmp/$1.0" 2>&1
	rc0=$?
	wait "$r1"
	rc1=$?
	grep -h . "$tmp/$1.0" "$tmp/$1.1" | sed 's/^/# /'
	((rc0 == 0 && rc1 == 0)) &&
		grep -q '"PASS"' "$tmp/$1.0" && grep -q '"PASS"' "$tmp/$1.1"
}
check "all-reduce $N0 <-> $N1 over the CM, every element checked" \
	allreduce ar1
perf_bw() {	# SECONDS: xnic-perf write_bw from N0 to N1 over 10.88.0.2
	local srv rc
	ip netns exec "$N1" timeout 120 "$PERF" write_bw -d "$D1" -p "$PORT" \
		>/dev/null 2>&1 &
	srv=$!
	sleep 0.5
	in0 timeout 120 "$PERF" write_bw -d "$D0" -p "$PORT" -s 1M -n "$1" \
		--json 10.88.0.2 >"$tmp/bw" 2>&1
	rc=$?
	wait "$srv" || rc=1
	sed 's/^/# /' "$tmp/bw"
	PORT=$((PORT + 1))
	((rc == 0))
}
check "xnic-perf write_bw $D0 -> $D1 across namespaces" perf_bw 20

# 5. A member netdev moves out and back: the link stays.
check "move $A1 to $N2" in0 ip link set "$A1" netns "$N2"
check "$D0 keeps 2 member links while $A1 is in $N2" eval '(($(links_of) == 2))'
check "move $A1 back to $N0" ip netns exec "$N2" ip link set "$A1" netns "$N0"
in0 ip link set "$A1" up
a1_up() {
	in0 "$X" -j link show "$D0" |
		python3 -c 'import json, sys
d = json.load(sys.stdin)
ls = d if isinstance(d, list) else d.get("links", [d])
sys.exit(0 if any(l.get("netdev") == sys.argv[1] and
                  l.get("state") == "up" for l in ls) else 1)' "$A1"
}
check "$A1 is a member link of $D0 again, and up" wait_for 10 a1_up
check "$D0 relearned its peer on both links" wait_for 20 both_paths
check "$D1's second link sees $D0 again" \
	eval '[[ $(in1 "$X" -j peer show "$D1" | grep -c "$B1") -ge 1 ]]'

# 6. The device changes namespace with QPs open.
ip netns exec "$N1" timeout 300 "$PERF" write_bw -d "$D1" -p "$PORT" \
	>"$tmp/bw2srv" 2>&1 &
srv=$!
sleep 0.5
ip netns exec "$N0" timeout 300 "$PERF" write_bw -d "$D0" -p "$PORT" -s 64K \
	-D 120 10.88.0.2 >"$tmp/bw2" 2>&1 &
cli=$!
PORT=$((PORT + 1))
qps() {	# NS: QPs of D0 as `rdma res` counts them in namespace NS
	ip netns exec "$1" rdma res show | grep -w "$D0:" |
		grep -o ' qp [0-9]*' | grep -o '[0-9]*'
}
qps0() { qps "$N0"; }
qps_open() { (($(qps0) > 0)); }
check "QPs open on $D0 (xnic-perf running)" wait_for 30 qps_open
in0 rdma res show | sed 's/^/# /'
check "rdma dev set $D0 netns $N2 with QPs open" \
	in0 rdma dev set "$D0" netns "$N2"
check "$D0 in $N2: its QPs are gone" eval '[[ $(qps "$N2") == 0 ]]'
check "$D0 no longer in $N0" eval '! in0 rdma dev | grep -qw "$D0"'
timeout 60 tail --pid="$cli" -f /dev/null
check "the xnic-perf client ended (device gone under it)" \
	eval '! kill -0 "$cli" 2>/dev/null'
sed 's/^/# client: /' "$tmp/bw2" | tail -n 3
sed 's/^/# server: /' "$tmp/bw2srv" | tail -n 3
kill "$cli" "$srv" 2>/dev/null
wait "$cli" "$srv" 2>/dev/null
check "rdma dev set $D0 netns $NI (the initial one), then $N0" \
	eval 'ip netns exec "$N2" rdma dev set "$D0" netns "$NI" &&
	      rdma dev set "$D0" netns "$N0"'
check "$D0 back in $N0 with 2 member links" eval '(($(links_of) == 2))'
check "all-reduce again after the moves" allreduce ar2

# 7. A real unregister detaches; then everything goes.
check "deleting $A1 detaches its link" \
	eval 'in0 ip link del "$A1" && (($(links_of) == 1))'
ip netns del "$N0"
ip netns del "$N1"
gone() { ! rdma dev | grep -qw "$D0" && ! rdma dev | grep -qw "$D1" &&
	 [[ ! -e /sys/kernel/debug/xnic/$D0 && ! -e /sys/kernel/debug/xnic/$D1 ]]; }
check "namespaces deleted: both devices gone" wait_for 20 gone
ip netns del "$N2"
ip netns del "$NI"
check "xnic.ko unloads" rmmod xnic
tap_end
