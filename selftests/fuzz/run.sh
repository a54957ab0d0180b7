#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# run.sh [--time S | --runs N] - run every fuzz target: first its
# regression inputs (regress/<target>/: each must pass), then libFuzzer for
# S seconds (default 30: `make check`) or N executions (`make fuzz`), from
# the corpus in build/fuzz/corpus/<target>/ (seeded by ./seeds and
# ./seeds_nl, kept between runs). A crash fails the target; its input is copied into
# regress/<target>/ to become a regression case. Prints "ok"/"not ok" per
# target, a BENCH line of executions per second, and "XNIC-RESULT p f s".
set -u
cd "$(dirname "$0")" || exit 1
limit=(-max_total_time=30)
case ${1:-} in
--time) limit=(-max_total_time="$2") ;;
--runs) limit=(-runs="$2") ;;
"") ;;
*) echo "usage: run.sh [--time S | --runs N]" >&2; exit 2 ;;
esac
out=../../build/fuzz
pass=0 fail=0 n=0
make -s || exit 1
mkdir -p "$out"
[[ -d $out/corpus/wire ]] || ./seeds "$out/corpus" || exit 1
[[ -d $out/corpus/xnictl ]] || ./seeds_nl "$out/corpus" || exit 1
for t in fuzz_wire fuzz_cm fuzz_credit fuzz_temp fuzz_xnictl fuzz_cm_reply; do
	n=$((n + 1))
	corpus=$out/corpus/${t#fuzz_}
	crashes=$out/crashes/$t
	mkdir -p "$corpus" "$crashes" "regress/$t"
	log=$out/$t.log
	ok=1
	if compgen -G "regress/$t/*" >/dev/null &&
	   ! ./"$t" regress/"$t"/* >"$log" 2>&1; then
		echo "# $t: a regression input fails again:"
		tail -n 20 "$log" | sed 's/^/# /'
		ok=0
	fi
	if ((ok)) && ! ./"$t" "${limit[@]}" -print_final_stats=1 \
		-artifact_prefix="$crashes/" "$corpus" >"$log" 2>&1; then
		echo "# $t: crash; inputs kept in regress/$t/:"
		grep -E 'ERROR|SUMMARY|#[0-9]+ .* in ' "$log" | head -n 12 |
			sed 's/^/# /'
		cp "$crashes"/* "regress/$t/" 2>/dev/null
		ok=0
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	if ((ok)); then
		pass=$((pass + 1))
		echo "ok $n $t: ${runs:-0} executions, ${rate:-0}/s"
	else
		fail=$((fail + 1))
		echo "not ok $n $t"
	fi
	echo "BENCH ${t}_execs_per_s ${rate:-0} 1/s"
done
echo "XNIC-RESULT $pass $fail 0"
((fail == 0))
