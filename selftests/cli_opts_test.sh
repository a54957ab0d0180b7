#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# cli_opts_test.sh - the command-line programs of examples/, tools/,
# coll/ and thermal/ refuse a bad number option (not a number, trailing
# junk, a sign where none belongs, beyond the option's range or type, 0
# where 0 means nothing) with their usage-error exit status and a message
# naming the option and the value, instead of reading it as 0 or wrapping
# it. Runs on the host, no VM, no device: every case stops in option
# parsing. The programs are those of the tree (`make unit-check` builds
# them). TAP lines; exit 0 on success, 1 on failure.
set -u

# shellcheck source=selftests/xt_tap.sh
. "$(dirname "$0")/xt_tap.sh"
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# refused STATUS MESSAGE PROG [ARG...] - PROG exits STATUS, MESSAGE (a
# fixed string) is on its stderr and nothing is on its stdout.
refused() {
	local want=$1 msg=$2 rc
	shift 2
	if [[ ! -x $1 ]]; then
		not_ok "$*: $1 is not built (make all)"
		return
	fi
	timeout 10 "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if ((rc == want)) && grep -qF -- "$msg" "$tmp/err" &&
		[[ ! -s $tmp/out ]]; then
		ok "$*: exit $rc: $(head -n 1 "$tmp/err")"
	else
		not_ok "$*: exit $rc (want $want and \"$msg\"): $(head -c 300 "$tmp/err" | tr "\n" " ")"
	fi
}

echo "TAP version 13"
D=(-d nosuchdev)

# examples/ (opt_num.h): exit 2, "bad -X 'VALUE' (expected MIN..MAX)".
P=examples/pingpong
refused 2 "bad -i 'abc' (expected 0..100000000)" $P "${D[@]}" -c 30 -i abc
refused 2 "bad -i '99999999999'" $P "${D[@]}" -c 30 -i 99999999999
refused 2 "bad -i '-1'" $P "${D[@]}" -c 30 -i -1
refused 2 "bad -c '30x' (expected 0..65534)" $P "${D[@]}" -c 30x
refused 2 "bad -c '65535'" $P "${D[@]}" -c 65535
refused 2 "bad -c ''" $P "${D[@]}" -c ''
refused 2 "usage:" $P "${D[@]}" stray
P=examples/echo_client
refused 2 "bad -m 'abc' (expected 0..100000000)" $P "${D[@]}" -c 30 -m abc
refused 2 "bad -m '-1'" $P "${D[@]}" -c 30 -m -1
refused 2 "bad -c '4294967326'" $P "${D[@]}" -c 4294967326
P=examples/echo_server
refused 2 "bad -n '0' (expected 1..100000000)" $P "${D[@]}" -n 0
refused 2 "bad -n '3x'" $P "${D[@]}" -n 3x
P=examples/allreduce
refused 2 "bad -c 'abc' (expected 0..1073741824)" $P "${D[@]}" -r 0 -n 1 -c abc
refused 2 "bad -c '99999999999999999999'" $P "${D[@]}" -r 0 -n 1 \
	-c 99999999999999999999
refused 2 "bad -n '4294967298' (expected 1..256)" $P "${D[@]}" -r 0 \
	-n 4294967298
refused 2 "bad -r '1x'" $P "${D[@]}" -r 1x -n 2
refused 2 "bad -p '70000' (expected 1..65535)" $P "${D[@]}" -r 0 -n 1 \
	-p 70000

# tools/ (xnic_tool.h): exit 2, "bad -X 'VALUE' (expected MIN..MAX)".
P=tools/xnic-idle-qps
refused 2 "bad -n 'abc' (expected 1..4096)" $P "${D[@]}" -n abc
refused 2 "bad -n '0'" $P "${D[@]}" -n 0
refused 2 "bad -n '4097'" $P "${D[@]}" -n 4097
refused 2 "bad -r 'abc' (expected 0..65534)" $P "${D[@]}" -r abc
refused 2 "bad -r '-1'" $P "${D[@]}" -r -1
refused 2 "bad -r '65535'" $P "${D[@]}" -r 65535
refused 2 "unexpected argument 'stray'" $P "${D[@]}" stray
P=tools/xnic-memcpy-bench
refused 2 "bad -s 'abc'" $P -s abc
refused 2 "bad -s '99999999999999999999'" $P -s 99999999999999999999
refused 2 "bad -s '0'" $P -s 0
refused 2 "bad -n '1x' (expected 1..4294967295)" $P -s 1 -n 1x
refused 2 "bad -n '0'" $P -n 0
refused 2 "unexpected argument '5'" $P 5
P=tools/xnic-hello-flood
I=(-i nosuchif0)
refused 2 "bad -n 'abc' (expected 1..4294967295)" $P "${I[@]}" -n abc
refused 2 "bad -n '4294967296'" $P "${I[@]}" -n 4294967296
refused 2 "bad -r '0'" $P "${I[@]}" -r 0
refused 2 "bad -t '1x' (expected 0..86400 seconds)" $P "${I[@]}" -t 1x
refused 2 "bad -t '-1'" $P "${I[@]}" -t -1
refused 2 "bad -t 'nan'" $P "${I[@]}" -t nan
# xnic-perf: exit 1, its status for every error.
refused 1 "bad size 'abc'" tools/xnic-perf write_bw "${D[@]}" -s abc
refused 1 "bad iteration count '0'" tools/xnic-perf write_bw "${D[@]}" -n 0
refused 1 "bad node id '65535' (expected 0..65534)" tools/xnic-perf write_bw \
	"${D[@]}" --cm 65535
# xnictl: values checked before it looks for the kernel's netlink family.
P=tools/xnictl
refused 2 "invalid value 'abc' for max_peers" $P set xnic0 max_peers abc
refused 2 "invalid value '4294967296' for max_peers" $P set xnic0 max_peers \
	4294967296
refused 2 "invalid value 'abc' for temp_warn_mc" $P link set xnic0 eth0 \
	temp_warn_mc abc
refused 2 "invalid value '-5' for temp_hyst_mc" $P link set xnic0 eth0 \
	temp_hyst_mc -5
refused 2 "invalid value '1x' for temp_inject_mc" $P link set xnic0 eth0 \
	temp_inject_mc 1x
# coll/ and thermal/.
P=tools/xnic-coll-rank
refused 2 "bad --nodes '4294967298'" $P --nodes 4294967298
refused 2 "bad --iters 'abc' (expected 1..1000)" $P --iters abc
refused 2 "bad --iters '0'" $P --iters 0
refused 2 "bad --nodes '0'" $P --nodes 0
refused 2 "bad node id '65535' (expected 0..65534)" $P --rank 0 --nodes 2 \
	--device nosuchdev --bootstrap cm:1,65535
refused 2 "bad --seed ' -1'" $P --seed ' -1'
refused 2 "bad --count '+5'" coll/xnic-allreduce --count +5
refused 2 "bad --seed ' -1'" coll/xnic-allreduce --seed ' -1'
refused 2 "invalid interval '50'" thermal/xnic-tempd -i 50 xnic0
refused 2 "invalid rounds '1x'" thermal/xnic-tempd -n 1x xnic0
tap_end
