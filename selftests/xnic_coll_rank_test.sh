#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_coll_rank_test.sh - tools/xnic-coll-rank (one all-reduce rank per
# process, as the demo's --vms mode runs it) on 3 devices of a veth mesh
# in the test VM: 3 ranks with the same seed PASS (counts 1, 2 (below
# the node count) and 100003); ranks that disagree on the seed each
# compute a different reference, so the check must FAIL (exit 1) and say
# which element is wrong; a rank whose device is missing fails (exit 2)
# and so do the others, within their timeout.
set -u
cd "$(dirname "$0")/.." || exit 1
KSFT_SKIP=4
RANK=tools/xnic-coll-rank
[[ -x $RANK && -x tools/xnictl ]] || { echo "SKIP: $RANK not built"; exit $KSFT_SKIP; }
# shellcheck source-path=SCRIPTDIR source=../tools/xnic-mesh
. tools/xnic-mesh
W=$(mktemp -d)
trap 'mesh_down; rm -rf "$W"' EXIT
mesh_up 3 xr "r$$" 1 || { echo "not ok: no mesh"; exit 1; }
mesh_wait_peers
fail=0 port=$((22000 + $$ % 20000))

# ranks COUNT SEED0 SEED1 SEED2 [DEV2]: run 3 ranks, exit codes in $W/rc*.
ranks() {
	local r seeds=("$2" "$3" "$4") dev
	port=$((port + 1))
	for r in 0 1 2; do
		dev=xr$r
		((r == 2)) && dev=${5:-xr2}
		timeout 120 $RANK --rank $r --nodes 3 --device "$dev" \
			--bootstrap tcp:127.0.0.1 --port $port --count "$1" \
			--seed "${seeds[r]}" --timeout 20 >"$W/out$r" 2>&1 &
		echo $! >"$W/pid$r"
	done
	for r in 0 1 2; do
		wait "$(cat "$W/pid$r")"
		echo $? >"$W/rc$r"
	done
}

for count in 1 2 100003; do
	ranks $count 7 7 7
	if [[ $(cat "$W"/rc*) == $'0\n0\n0' ]] &&
		(($(cat "$W"/out* | grep -c '"result":"PASS"') == 3)); then
		echo "ok: 3 ranks, $count elements: PASS ($(grep -o '"time_us":[0-9.]*' "$W/out0"))"
	else
		echo "not ok: 3 ranks, $count elements"; cat "$W"/out*; fail=1
	fi
done

ranks 1000 1 2 1
if [[ $(cat "$W/rc1") == 1 ]] && grep -q '"result":"FAIL".*element' "$W/out1"; then
	echo "ok: a rank with another seed sees wrong elements: $(grep -o '"message":"[^"]*' "$W/out1")"
else
	echo "not ok: different seeds went unnoticed"; cat "$W"/out*; fail=1
fi

ranks 1000 1 1 1 nosuchdev
if [[ $(cat "$W/rc2") == 2 && $(cat "$W/rc0") != 0 && $(cat "$W/rc1") != 0 ]] &&
	grep -q nosuchdev "$W/out2"; then
	echo "ok: a missing device fails every rank: $(grep -o '"message":"[^"]*' "$W/out2")"
else
	echo "not ok: a missing device"; cat "$W"/out*; fail=1
fi
exit $fail
