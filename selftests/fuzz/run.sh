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
make -s -j"$(nproc)" || exit 1
mkdir -p "$out"
[[ -d $out/corpus/wire ]] || ./seeds "$out/corpus" || exit 1
[[ -d $out/corpus/xnictl ]] || ./seeds_nl "$out/corpus" || exit 1
# fuzz_one T N: target T's regression inputs, then libFuzzer; its report
# (lines for run.sh's output, "ok N T" when it passed) in $out/T.report.
fuzz_one() {
	local t=$1 n=$2 corpus=$out/corpus/${1#fuzz_} crashes=$out/crashes/$1
	local log=$out/$1.log report=$out/$1.report ok=1 runs rate
	mkdir -p "$corpus" "$crashes" "regress/$t"
	: >"$report"
	if compgen -G "regress/$t/*" >/dev/null &&
	   ! ./"$t" regress/"$t"/* >"$log" 2>&1; then
		echo "# $t: a regression input fails again:" >>"$report"
		tail -n 20 "$log" | sed 's/^/# /' >>"$report"
		ok=0
	fi
	if ((ok)) && ! ./"$t" "${limit[@]}" -print_final_stats=1 \
		-artifact_prefix="$crashes/" "$corpus" >"$log" 2>&1; then
		{
			echo "# $t: crash; inputs kept in regress/$t/:"
			grep -E 'ERROR|SUMMARY|#[0-9]+ .* in ' "$log" |
				head -n 12 | sed 's/^/# /'
		} >>"$report"
		cp "$crashes"/* "regress/$t/" 2>/dev/null
		ok=0
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	if ((ok)); then
		echo "ok $n $t: ${runs:-0} executions, ${rate:-0}/s" >>"$report"
	else
		echo "not ok $n $t" >>"$report"
	fi
	echo "BENCH ${t}_execs_per_s ${rate:-0} 1/s" >>"$report"
}

# The targets run side by side, one per CPU (libFuzzer runs one thread):
# `make check` waits 6 x 30 s / CPUs, not 6 x 30 s.
targets=(fuzz_wire fuzz_cm fuzz_credit fuzz_temp fuzz_xnictl fuzz_cm_reply)
running=0
for t in "${targets[@]}"; do
	n=$((n + 1))
	if ((running >= $(nproc))); then
		wait -n
		running=$((running - 1))
	fi
	fuzz_one "$t" "$n" &
	running=$((running + 1))
done
wait
for t in "${targets[@]}"; do
	cat "$out/$t.report"
	if grep -q '^ok ' "$out/$t.report"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
	fi
done
echo "XNIC-RESULT $pass $fail 0"
((fail == 0))
