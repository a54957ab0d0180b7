#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_thermal_test.sh - the thermal policy of member links under traffic.
# Two nodes joined by two veth pairs; an xnic-perf send_bw of a fixed
# duration runs while the temperature of one of node A's links
# is injected (test-only XNIC_LINK_A_TEMP_INJECT_MC, `xnictl link set`):
# at the warn threshold that link carries less of A's traffic, at the
# critical one none (isolated, DEGRADED) and after cooling below the
# thresholds and the hold time it carries traffic again; every message
# arrives (both sides of the send test finish: nothing lost). The
# counters and `xnictl link show` tell the thermal state and temperature.
# Then the per-link hysteresis (temp_hyst_mc) acts live, and the sensor
# reader thermal/xnic-tempd: on veth (no hwmon, no module EEPROM: ethtool
# netlink says EOPNOTSUPP) it reports "no sensor"; against a stand-in
# sysfs/EEPROM tree (XNIC_TEMP_ROOT, test only) its hwmon and SFP module
# readings reach the kernel and an hwmon reading at the critical threshold
# drains the link under traffic; a garbage reading is counted and trips
# nothing; a reading dies XNIC_TEMP_STALE_MS after its reader stops.
# Runs as root in the test VM; prints TAP lines.
# shellcheck disable=SC2015 # A && ok || not_ok: ok() never fails
set -u
# shellcheck source=selftests/xt_tap.sh
. "$(dirname "$0")/xt_tap.sh"
# shellcheck source=selftests/xt_pair.sh
. "$(dirname "$0")/xt_pair.sh"
cd "$(dirname "$0")/.." || exit 1
PERF=tools/xnic-perf XNICTL=tools/xnictl TEMPD=thermal/xnic-tempd
[[ -x $PERF && -x $XNICTL && -x $TEMPD ]] || skip_all "tools not built"

tag=$$
A1=tha$tag B1=thb$tag A2=thc$tag B2=thd$tag DA=thx${tag}a DB=thx${tag}b
PORT=$((20000 + tag % 10000))
tmp=$(mktemp -d)

tdpid=
cleanup() {
	[[ -n $tdpid ]] && kill "$tdpid" 2>/dev/null
	xt_pair_del "$DA" "$DB" "$A1"
	ip link del "$A2" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

xt_pair "$DA" "$DB" "$A1" "$B1" || exit 1
ip link add "$A2" mtu 9000 type veth peer name "$B2" mtu 9000 || exit 1
ip link set "$A2" up && ip link set "$B2" up || exit 1
$XNICTL link add "$DA" "$A2" && $XNICTL link add "$DB" "$B2" || exit 1
HOLD_MS=1000
$XNICTL set "$DA" bond_hold_ms $HOLD_MS && $XNICTL set "$DB" bond_hold_ms $HOLD_MS ||
	exit 1

# show - A's links as "NETDEV KEY VALUE" lines (xnictl link show).
show() {
	$XNICTL link show "$DA" | awk '
		/^[^ ]/ { nd = $2; sub(":", "", nd); next }
		$1 == "bond" {
			print nd, "bond_state", $2
			for (i = 3; i < NF; i += 2) print nd, $i, $(i + 1)
		}
		$1 == "thermal" { print nd, "thermal", $2 }'
}
# field NETDEV KEY - a value of A's link on NETDEV.
field() { show | awk -v n="$1" -v k="$2" '$1 == n && $2 == k { print $3 }'; }
# Both links must have found the peer before the run.
for _ in $(seq 100); do
	[[ $($XNICTL link show "$DA" | grep -c 'peers [0-9]') == 2 ]] && break
	sleep 0.1
done

# Bad settings are refused.
if $XNICTL link set "$DA" "$A2" temp_warn_mc 90000 temp_crit_mc 80000 \
	2>/dev/null; then
	not_ok "warn above crit accepted"
else
	ok "warn above crit refused"
fi
$XNICTL link set "$DA" "$A2" temp_warn_mc 70000 temp_crit_mc 90000 ||
	not_ok "link set thresholds"
[[ $(field "$A2" temp_warn_mc) == 70000 && $(field "$A2" temp_crit_mc) == 90000 ]] &&
	ok "thresholds read back" || not_ok "thresholds not read back"

# run - one xnic-perf send_bw of ITERS messages, A to B; both sides must
# finish (every message arrived). Sets $d1 and $d2 (bytes A sent on A1 and
# A2 meanwhile) and $share (A2's share, percent).
ITERS=3000
run() {
	local a0 b0 a1 b1 spid
	read -r a0 b0 < <(show | awk -v x="$A1" -v y="$A2" '$2 == "tx_bytes" {
		v[$1] = $3 } END { print v[x], v[y] }')
	timeout 120 $PERF send_bw -d "$DB" -p $PORT >"$tmp/srv" 2>&1 &
	spid=$!
	if timeout 120 $PERF send_bw -d "$DA" -p $PORT -n $ITERS -s 8192 \
		127.0.0.1 >"$tmp/cli" 2>&1 && wait $spid; then
		ok "$1: all $ITERS messages arrived"
	else
		not_ok "$1: send_bw did not complete"
		cat "$tmp/cli" "$tmp/srv"
	fi
	read -r a1 b1 < <(show | awk -v x="$A1" -v y="$A2" '$2 == "tx_bytes" {
		v[$1] = $3 } END { print v[x], v[y] }')
	d1=$((a1 - a0)) d2=$((b1 - b0))
	share=$((100 * d2 / (d1 + d2 + 1)))
	echo "# $1: $A2 carried $share % of A's bytes ($d1 + $d2)"
}
# wait_state NETDEV THERMAL BOND - until A's link on NETDEV is in these states
# (10 s at most), and B's end of it UP again when BOND is up.
wait_state() {
	for _ in $(seq 100); do
		[[ $(field "$1" thermal) == "$2" && $(field "$1" bond_state) == "$3" ]] &&
			{ [[ $3 != up ]] ||
			  $XNICTL link show "$DB" | grep -A1 "^$DB $B2:" | grep -q "bond up"; } &&
			return 0
		sleep 0.1
	done
	return 1
}

run baseline
base=$share
((base >= 25)) && ok "both links carry traffic" ||
	not_ok "baseline share $base % (expected about 50)"

$XNICTL link set "$DA" "$A2" temp_inject_mc 75000 || not_ok "inject 75 C"
wait_state "$A2" warn up && ok "75 C: thermal warn" ||
	not_ok "75 C: thermal $(field "$A2" thermal)"
run warn
# A quarter of the weight: 20 % of the bytes of two equal links, also while
# the cool link waits for credit (it is no overflow for it).
((share <= 25 && d2 > 0)) && ok "warn: a fifth of the traffic, not none" ||
	not_ok "warn: share $share % against $base % (expected 20)"

$XNICTL link set "$DA" "$A2" temp_inject_mc 95000 || not_ok "inject 95 C"
wait_state "$A2" crit degraded && ok "95 C: thermal crit, link degraded" ||
	not_ok "95 C: thermal $(field "$A2" thermal), bond $(field "$A2" bond_state)"
run crit
((d2 == 0 && d1 > 0)) && ok "crit: no traffic on it" ||
	not_ok "crit: $d2 bytes sent on it"

# Hysteresis: 89 C is below the critical 90 C but not 2 C below.
$XNICTL link set "$DA" "$A2" temp_inject_mc 89000 || not_ok "inject 89 C"
sleep $((HOLD_MS / 1000 + 2))
[[ $(field "$A2" thermal) == crit ]] && ok "89 C: still crit (hysteresis)" ||
	not_ok "89 C: left crit ($(field "$A2" thermal))"

$XNICTL link set "$DA" "$A2" temp_inject_mc 60000 || not_ok "inject 60 C"
wait_state "$A2" ok up && ok "60 C after the hold time: thermal ok, link up" ||
	not_ok "60 C: thermal $(field "$A2" thermal), bond $(field "$A2" bond_state)"
run cooled
((d2 > 0)) && ok "cooled: traffic again" || not_ok "cooled: no traffic"
$XNICTL link show "$DA" | grep -q "thermal ok temp 60.0C" &&
	ok "link show prints thermal state and temperature" ||
	{ not_ok "link show"; $XNICTL link show "$DA"; }
[[ $(field "$A2" thermal_warns) == 1 && $(field "$A2" thermal_crits) == 1 ]] &&
	ok "thermal counters 1 and 1" ||
	not_ok "thermal counters $(field "$A2" thermal_warns) $(field "$A2" thermal_crits)"

# Per-link hysteresis: with 5 C, 87 C does not leave crit (90 C); back
# to 2 C, it does (87 < 88).
$XNICTL link set "$DA" "$A2" temp_hyst_mc 60000 2>/dev/null &&
	not_ok "hysteresis 60000 accepted" || ok "hysteresis above 50000 refused"
$XNICTL link set "$DA" "$A2" temp_hyst_mc 5000 temp_inject_mc 95000 ||
	not_ok "link set hysteresis"
[[ $(field "$A2" temp_hyst_mc) == 5000 ]] && ok "hysteresis read back" ||
	not_ok "hysteresis $(field "$A2" temp_hyst_mc)"
wait_state "$A2" crit degraded || not_ok "95 C: not crit"
$XNICTL link set "$DA" "$A2" temp_inject_mc 87000 || not_ok "inject 87 C"
sleep $((HOLD_MS / 1000 + 2))
[[ $(field "$A2" thermal) == crit ]] && ok "87 C, hysteresis 5 C: still crit" ||
	not_ok "87 C, hysteresis 5 C: left crit ($(field "$A2" thermal))"
$XNICTL link set "$DA" "$A2" temp_hyst_mc 2000 || not_ok "hysteresis 2000"
wait_state "$A2" warn up && ok "87 C, hysteresis 2 C: warn" ||
	not_ok "87 C, hysteresis 2 C: $(field "$A2" thermal)"
$XNICTL link set "$DA" "$A2" temp_inject_mc off || not_ok "inject off"

# thermal NETDEV - the thermal line of A's link on NETDEV.
thermal() {
	$XNICTL link show "$DA" | awk -v n="$1" '
		/^[^ ]/ { nd = $2; sub(":", "", nd) }
		$1 == "thermal" && nd == n { $1 = $1; print }'
}
# The real sensors of veth: none (sysfs has no device/, ethtool netlink
# answers EOPNOTSUPP to ETHTOOL_MSG_MODULE_EEPROM_GET).
out=$($TEMPD -n 1 "$DA")
[[ $(grep -c "^th[ac]$tag no sensor$" <<<"$out") == 2 ]] &&
	ok "xnic-tempd on veth: no sensor" || not_ok "xnic-tempd on veth: $out"
[[ $(thermal "$A1") == *"temp - no sensor" && $(thermal "$A2") == *"temp - no sensor" ]] &&
	ok "link show: no sensor" || not_ok "link show: $(thermal "$A1") / $(thermal "$A2")"

# A stand-in tree: hwmon on A2; an SFP (DDM, 30 C) on A1.
R=$tmp/root
mkdir -p "$R/sys/class/net/$A2/device/hwmon/hwmon0" "$R/module/$A1"
HW=$R/sys/class/net/$A2/device/hwmon/hwmon0/temp1_input
echo 50000 >"$HW"
{ printf '\003'; head -c 91 /dev/zero; printf '\150\000\010'; head -c 161 /dev/zero; } \
	>"$R/module/$A1/50-00"
{ head -c 96 /dev/zero; printf '\036\000'; head -c 158 /dev/zero; } >"$R/module/$A1/51-00"
XNIC_TEMP_ROOT=$R $TEMPD -i 200 "$DA" >"$tmp/tempd" 2>&1 &
tdpid=$!
# until NETDEV's thermal line matches PATTERN (10 s at most)
# shellcheck disable=SC2053 # $2 is a pattern
wait_line() {
	for _ in $(seq 100); do
		[[ $(thermal "$1") == $2 ]] && return 0
		sleep 0.1
	done
	return 1
}
wait_line "$A2" "thermal ok temp 50.0C source hwmon" && ok "hwmon reading reported" ||
	not_ok "hwmon: $(thermal "$A2")"
wait_line "$A1" "thermal ok temp 30.0C source module" && ok "SFP module reading reported" ||
	not_ok "module: $(thermal "$A1")"
echo 95000 >"$HW"
wait_state "$A2" crit degraded && ok "hwmon 95 C: crit, degraded" ||
	not_ok "hwmon 95 C: $(thermal "$A2")"
run "crit (hwmon)"
((d2 == 0 && d1 > 0)) && ok "crit (hwmon): no traffic on it" ||
	not_ok "crit (hwmon): $d2 bytes sent on it"
echo 60000 >"$HW"
wait_state "$A2" ok up && ok "hwmon 60 C: ok, up" || not_ok "hwmon 60 C: $(thermal "$A2")"
errs=$(field "$A2" temp_read_errors)
echo garbage >"$HW"
for _ in $(seq 50); do
	(($(field "$A2" temp_read_errors) > errs)) && break
	sleep 0.1
done
(($(field "$A2" temp_read_errors) > errs)) && ok "garbage hwmon value: read errors counted" ||
	not_ok "garbage hwmon value: read errors $(field "$A2" temp_read_errors)"
[[ $(thermal "$A2") == "thermal ok temp 60.0C source hwmon" ]] &&
	ok "garbage: last reading stands, thermal ok" || not_ok "garbage: $(thermal "$A2")"
kill "$tdpid"
wait "$tdpid" 2>/dev/null
tdpid=
sed 's/^/# xnic-tempd: /' "$tmp/tempd"
wait_line "$A1" "*no sensor" || sleep 3
[[ $(thermal "$A1") == *"no sensor" && $(thermal "$A2") == *"no sensor" ]] &&
	ok "readings dropped once the reader stopped" ||
	not_ok "after the reader stopped: $(thermal "$A1") / $(thermal "$A2")"

tap_end
