#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# check.sh [--unit-only|--vm-only|--debug [PROG...]] - the body of
# `make check`: unit tests on the host (ASan/UBSan) and the host scripts
# (the installed tree), then every VM selftest, each in its own boot of the
# test VM.
# --debug (`make check-debug`): only the VM selftests (or the PROGs named),
# on the debug kernel of tools/xnic-debug-kernel (built first if it is not
# cached: an hour or more) with xnic.ko built against it in
# build/debug-kmod; a KASAN, lockdep, kmemleak or DEBUG_OBJECTS report on
# the guest console fails the program's run (tools/xnic-vm prints it).
# Ends with one line "N passed, N failed, N skipped"; exits non-zero on any
# failure (a VM crash or timeout counts as a failure).
set -u
cd "$(dirname "$0")/.." || exit 1
mode=${1:-all}
(($#)) && shift
pass=0 fail=0 skip=0 failed=()
vm_args=(--timeout "${XNIC_CHECK_TIMEOUT:-900}")

# $1: output file of run_tests.sh; $2: its exit code; $3: what ran. A
# failure's "not ok" lines are kept for the list printed at the end (a CI
# log may show only its tail).
add_result() {
	local line f0=$fail
	line=$(grep -a '^XNIC-RESULT ' "$1" | tail -n 1)
	if [[ -z $line ]]; then
		echo "check: no result from the test run (exit $2)" >&2
		fail=$((fail + 1))
	else
		read -r _ p f s <<<"$line"
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
		if [[ $2 -ne 0 && $f -eq 0 ]]; then
			echo "check: test run exited $2" >&2
			fail=$((fail + 1))
		fi
	fi
	((fail > f0)) || return 0
	failed+=("$3 (exit $2)")
	mapfile -t -O ${#failed[@]} failed < <(grep -a '^not ok' "$1" |
		cut -c1-300 | sed 's/^/    /')
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# The debug kernel, and xnic.ko built against it (outside kmod/, which
# keeps the module of the installed kernel).
if [[ $mode == --debug ]]; then
	kdir=$(tools/xnic-debug-kernel --build) || exit 1
	echo "check: debug kernel $(<"$kdir/kernelrelease") in $kdir (built in $(<"$kdir/build-seconds") s)"
	obj=$PWD/build/debug-kmod
	rm -rf "$obj"
	mkdir -p "$obj"
	mkdir -p "$obj/kmod" "$obj/uapi"
	cp Kbuild "$obj/"
	cp kmod/Kbuild kmod/*.[ch] "$obj/kmod/"
	cp uapi/*.h "$obj/uapi/"
	make -s -C "$kdir/src" M="$obj" modules || exit 1
	export XNIC_KO=$obj/kmod/xnic.ko
	# KASAN, lockdep and kmemleak make the guest several times slower.
	vm_args=(--debug-kernel --timeout "${XNIC_CHECK_TIMEOUT:-3600}")
fi

if [[ $mode != --vm-only && $mode != --debug ]]; then
	mapfile -t units < <(make -s -C selftests -p unit 2>/dev/null |
		sed -nE 's/^(UNIT_PROGS|UNIT_SCRIPTS|HOST_SCRIPTS) := //p' |
		tr ' ' '\n' | grep .)
	(cd selftests && ./run_tests.sh "${units[@]}") | tee "$log"
	add_result "$log" "${PIPESTATUS[0]}" "unit tests"
	# The parsers of untrusted input under libFuzzer, a while each.
	selftests/fuzz/run.sh --time "${XNIC_FUZZ_TIME:-30}" | tee "$log"
	add_result "$log" "${PIPESTATUS[0]}" fuzz
fi

if [[ $mode != --unit-only ]]; then
	# One VM boot per test program: a crash or hang costs one program's
	# results, and every program starts from a freshly loaded module.
	mapfile -t vms < <(make -s -C selftests -p vm 2>/dev/null |
		sed -nE 's/^VM_(PROGS|SCRIPTS) := //p' | tr ' ' '\n' | grep .)
	(($#)) && vms=("$@")
	for t in "${vms[@]}"; do
		start=$SECONDS
		tools/xnic-vm "${vm_args[@]}" -- \
			sh -c 'cd selftests && exec ./run_tests.sh "$1"' run "$t" \
			2>&1 | tee "$log"
		add_result "$log" "${PIPESTATUS[0]}" "$t"
		echo "check: $t took $((SECONDS - start)) s"
	done
fi

if [[ $mode != --unit-only && $mode != --debug ]]; then
	# Staged validation with each node in its own VM (on the host: it
	# boots them): bring-up, matrix, stability run and all-reduce across
	# 2 VMs, every gate passed but stability (a lossy link fails it).
	# A VM that stalls fails in 10 minutes, not in the default half hour.
	echo "=== selftests/xnic_validate_test.sh --vms"
	start=$SECONDS
	if XNIC_DEMO_TIMEOUT=${XNIC_DEMO_TIMEOUT:-600} \
		selftests/xnic_validate_test.sh --vms >"$log" 2>&1; then
		pass=$((pass + 1))
		grep -a '^ok' "$log"
	else
		cat "$log"
		echo "not ok: selftests/xnic_validate_test.sh --vms"
		fail=$((fail + 1))
		failed+=("xnic_validate_test.sh --vms")
	fi
	echo "check: xnic_validate_test.sh --vms took $((SECONDS - start)) s"
fi

if ((${#failed[@]})); then
	echo "check: failed:"
	printf '  %s\n' "${failed[@]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 ]]
