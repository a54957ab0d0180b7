#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# check.sh [--unit-only|--vm-only] - the body of `make check`: unit tests on
# the host (ASan/UBSan) and the host scripts (the installed tree), then
# every VM selftest, each in its own boot of the test VM.
# Ends with one line "N passed, N failed, N skipped"; exits non-zero on any
# failure (a VM crash or timeout counts as a failure).
set -u
cd "$(dirname "$0")/.." || exit 1
mode=${1:-all}
pass=0 fail=0 skip=0

add_result() {	# $1: output file of run_tests.sh; $2: its exit code
	local line
	line=$(grep -a '^XNIC-RESULT ' "$1" | tail -n 1)
	if [[ -z $line ]]; then
		echo "check: no result from the test run (exit $2)" >&2
		fail=$((fail + 1))
		return
	fi
	read -r _ p f s <<<"$line"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	if [[ $2 -ne 0 && $f -eq 0 ]]; then
		echo "check: test run exited $2" >&2
		fail=$((fail + 1))
	fi
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

if [[ $mode != --vm-only ]]; then
	mapfile -t units < <(make -s -C selftests -p unit 2>/dev/null |
		sed -nE 's/^(UNIT_PROGS|UNIT_SCRIPTS|HOST_SCRIPTS) := //p' |
		tr ' ' '\n' | grep .)
	(cd selftests && ./run_tests.sh "${units[@]}") | tee "$log"
	add_result "$log" "${PIPESTATUS[0]}"
	# The parsers of untrusted input under libFuzzer, a while each.
	selftests/fuzz/run.sh --time "${XNIC_FUZZ_TIME:-30}" | tee "$log"
	add_result "$log" "${PIPESTATUS[0]}"
fi

if [[ $mode != --unit-only ]]; then
	# One VM boot per test program: a crash or hang costs one program's
	# results, and every program starts from a freshly loaded module.
	mapfile -t vms < <(make -s -C selftests -p vm 2>/dev/null |
		sed -nE 's/^VM_(PROGS|SCRIPTS) := //p' | tr ' ' '\n' | grep .)
	for t in "${vms[@]}"; do
		start=$SECONDS
		tools/xnic-vm --timeout "${XNIC_CHECK_TIMEOUT:-900}" -- \
			sh -c 'cd selftests && exec ./run_tests.sh "$1"' run "$t" \
			2>&1 | tee "$log"
		add_result "$log" "${PIPESTATUS[0]}"
		echo "check: $t took $((SECONDS - start)) s"
	done
	# The demo with each node in its own VM (on the host: it boots them).
	# It takes a minute or two: a VM that stalls fails in 10 minutes, not
	# in xnic-demo-vms' default half hour.
	echo "=== tools/xnic-demo --vms --nodes 2 --size-mib 1"
	if XNIC_DEMO_TIMEOUT=${XNIC_DEMO_TIMEOUT:-600} \
		tools/xnic-demo --vms --nodes 2 --size-mib 1 >"$log" 2>&1; then
		pass=$((pass + 1))
		tail -n 3 "$log"
	else
		cat "$log"
		echo "not ok: tools/xnic-demo --vms"
		fail=$((fail + 1))
	fi
fi

echo "$pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 ]]
