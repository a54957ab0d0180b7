#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# run_tests.sh PROG... - run kselftest programs and scripts, print each
# one's output, then one line "XNIC-RESULT <passed> <failed> <skipped>".
# Harness programs are counted per test case from their "# Totals:" line;
# scripts count as one test each (exit 0 pass, 4 skip, anything else fail).
set -u
KSFT_SKIP=4
pass=0 fail=0 skip=0

for prog in "$@"; do
	[[ $prog == */* ]] || prog=./$prog
	echo "=== $prog"
	out=$(mktemp)
	if [[ $prog == *.sh ]]; then
		bash "$prog" 2>&1 | tee "$out"
		rc=${PIPESTATUS[0]}
	else
		"$prog" 2>&1 | tee "$out"
		rc=${PIPESTATUS[0]}
	fi
	totals=$(grep -E '^# Totals: pass:' "$out" | tail -n 1)
	if [[ -n $totals ]]; then
		read -r p f xf xp s e < <(echo "$totals" | sed -E \
			's/.*pass:([0-9]+) fail:([0-9]+) xfail:([0-9]+) xpass:([0-9]+) skip:([0-9]+) error:([0-9]+).*/\1 \2 \3 \4 \5 \6/')
		pass=$((pass + p + xf))
		fail=$((fail + f + xp + e))
		skip=$((skip + s))
		# A harness that crashed after its totals still failed.
		if [[ $rc -ne 0 && $f -eq 0 && $e -eq 0 ]]; then
			fail=$((fail + 1))
		fi
	elif [[ $rc -eq 0 ]]; then
		pass=$((pass + 1))
	elif [[ $rc -eq $KSFT_SKIP ]]; then
		skip=$((skip + 1))
	else
		echo "not ok: $prog exited $rc"
		fail=$((fail + 1))
	fi
	rm -f "$out"
done
echo "XNIC-RESULT $pass $fail $skip"
[[ $fail -eq 0 ]]
