# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# xt_tap.sh - TAP helpers shared by the xnic shell selftests; sourced.
#   ok/not_ok DESC, check DESC COMMAND..., skip_all REASON, now_ms,
#   wait_for SECONDS COMMAND..., tap_end (prints the plan, exits 0 or 1).
# shellcheck shell=bash disable=SC2034 # KSFT_SKIP is for the sourcing test

KSFT_SKIP=4
num=0
failed=0

ok() {
	num=$((num + 1))
	echo "ok $num - $*"
}

not_ok() {
	num=$((num + 1))
	failed=$((failed + 1))
	echo "not ok $num - $*"
}

# check DESCRIPTION COMMAND... - one TAP line for COMMAND's success.
check() {
	local desc=$1
	shift
	if "$@"; then
		ok "$desc"
	else
		not_ok "$desc"
	fi
}

skip_all() {
	echo "1..0 # SKIP $*"
	exit "$KSFT_SKIP"
}

now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }

# wait_for SECONDS COMMAND... - poll COMMAND until it succeeds or SECONDS
# passed; return its last status.
wait_for() {
	local end=$(($(now_ms) + $1 * 1000))
	shift
	until "$@"; do
		(($(now_ms) < end)) || return 1
		sleep 0.05
	done
}

# tap_end - the TAP plan and the exit status: 0 when nothing failed.
tap_end() {
	echo "1..$num"
	if ((failed)); then
		echo "# $failed of $num failed"
		exit 1
	fi
	exit 0
}
