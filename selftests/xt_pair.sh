# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# xt_pair.sh - two xnic devices joined by one veth pair, the set-up most xnic
# shell selftests start from; sourced (after xt_tap.sh, whose wait_for it
# uses).
#   xt_pair DA DB A B [MAC_A MAC_B] - veth A-B at MTU 9000, both ends up
#       (MACs given or random), xnic device DA on A and DB on B (`rdma link
#       add`), then waits up to 5 s for both to be registered. Returns
#       non-zero, saying on stderr which step failed.
#   xt_pair_del DA DB A - removes the devices and the veth pair, quietly
#       (for an EXIT trap: any of them may be missing).
# shellcheck shell=bash

xt_pair() {
	local da=$1 db=$2 a=$3 b=$4 ma=() mb=()
	[[ -n ${5:-} ]] && ma=(address "$5")
	[[ -n ${6:-} ]] && mb=(address "$6")
	if ! ip link add "$a" "${ma[@]}" mtu 9000 type veth \
		peer name "$b" "${mb[@]}" mtu 9000; then
		echo "xt_pair: cannot create veth $a-$b" >&2
		return 1
	fi
	ip link set "$a" up && ip link set "$b" up || return 1
	if ! rdma link add "$da" type xnic netdev "$a" ||
		! rdma link add "$db" type xnic netdev "$b"; then
		echo "xt_pair: rdma link add $da/$db failed" >&2
		return 1
	fi
	if ! wait_for 5 test -e "/sys/class/infiniband/$da" -a \
		-e "/sys/class/infiniband/$db"; then
		echo "xt_pair: $da/$db not registered after 5 s" >&2
		return 1
	fi
}

xt_pair_del() {
	rdma link delete "$1" 2>/dev/null
	rdma link delete "$2" 2>/dev/null
	ip link del "$3" 2>/dev/null
	return 0
}
