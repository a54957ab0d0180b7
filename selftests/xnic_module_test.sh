#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic_module_test.sh - module load/unload with devices present, and module
# autoload by `rdma link add ... type xnic` (alias rdma-link-xnic).
#
#   10 times: modprobe xnic; two devices on two veths (`rdma link add`);
#   rmmod xnic must succeed and remove both devices; the veths survive and
#   can be deleted. Then, with xnic unloaded, `rdma link add` must load it
#   and create the device; `rdma link delete` removes it. Engine placement
#   (kmod/engine_cpu.c): one engine runs on every CPU, two get slices apart,
#   three on two CPUs run on every CPU, a deleted device's slice goes back,
#   engine_spread=N leaves new engines out. Finally the kernel
#   log of this run must hold no BUG/WARNING/Oops/"unregister_netdevice:
#   waiting".
#
# Runs as root in the test VM (tools/xnic-vm). Prints TAP lines; exits 0 on
# success, 1 on failure, 4 (kselftest skip) when it cannot run. Leaves xnic
# loaded for whatever runs next.
# shellcheck disable=SC2317 # helpers run through check and wait_for
set -u

# shellcheck source=selftests/xt_tap.sh
. "$(dirname "$0")/xt_tap.sh"
ROUNDS=10
WAIT_S=2
SYS_IB=/sys/class/infiniband
TAG="xnic_module_test-$$"

veths=()

dev_present() { [[ -e $SYS_IB/$1 ]]; }
dev_absent() { [[ ! -e $SYS_IB/$1 ]]; }
mod_loaded() { [[ -e /sys/module/xnic ]]; }
mod_unloaded() { [[ ! -e /sys/module/xnic ]]; }
netdev_exists() { ip link show "$1" >/dev/null 2>&1; }
port_active() { [[ $(cat "$SYS_IB/$1/ports/1/state" 2>/dev/null) == "4: ACTIVE" ]]; }

# engine_cpus DEV - the CPUs DEV's engine thread may run on (a list).
engine_cpus() {
	local pid
	pid=$(pgrep -x "xnic_eng/$1") || return 1
	sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$pid/status"
}

# veth_add NAME - veth pair NAME / NAME-p, both up.
veth_add() {
	ip link add "$1" type veth peer name "$1p" &&
		veths+=("$1") &&
		ip link set "$1" up && ip link set "$1p" up
}

# veth_del NAME - delete the pair; it must not hang.
veth_del() {
	timeout 20 ip link del "$1"
}

cleanup() {
	local v
	for v in "${veths[@]}"; do
		ip link del "$v" >/dev/null 2>&1
	done
	# Whatever happened, leave xnic loaded for the next test.
	mod_loaded || modprobe xnic >/dev/null 2>&1
}
trap cleanup EXIT

fail_round() {
	not_ok "round $r: $*"
	round_ok=0
}

# ------------------------------------------------------------------ main --

[[ $(id -u) -eq 0 ]] || skip_all "must run as root (use tools/xnic-vm)"
for tool in ip rdma modprobe rmmod dmesg timeout; do
	command -v "$tool" >/dev/null || skip_all "$tool not installed"
done
modprobe veth || skip_all "no veth driver"
modinfo xnic >/dev/null 2>&1 || skip_all "xnic.ko is not installed"

echo "TAP version 13"
echo "$TAG start" >/dev/kmsg

for ((r = 1; r <= ROUNDS; r++)); do
	a=xm$$_${r}a b=xm$$_${r}b
	d0=xnicr0 d1=xnicr1
	round_ok=1

	modprobe xnic || fail_round "modprobe xnic"
	veth_add "$a" && veth_add "$b" || fail_round "cannot create veths"
	rdma link add "$d0" type xnic netdev "$a" || fail_round "rdma link add $d0"
	rdma link add "$d1" type xnic netdev "$b" || fail_round "rdma link add $d1"
	wait_for "$WAIT_S" port_active "$d0" || fail_round "$d0 not ACTIVE"
	wait_for "$WAIT_S" port_active "$d1" || fail_round "$d1 not ACTIVE"

	if ! timeout 60 rmmod xnic; then
		fail_round "rmmod xnic with devices present failed"
	else
		wait_for "$WAIT_S" mod_unloaded || fail_round "xnic still in /sys/module"
		wait_for "$WAIT_S" dev_absent "$d0" || fail_round "$d0 survived rmmod"
		wait_for "$WAIT_S" dev_absent "$d1" || fail_round "$d1 survived rmmod"
	fi
	netdev_exists "$a" && netdev_exists "$b" ||
		fail_round "a member veth vanished with the module"
	netdev_exists "${a}p" && netdev_exists "${b}p" ||
		fail_round "a peer veth vanished with the module"
	veth_del "$a" || fail_round "ip link del $a failed or hung"
	veth_del "$b" || fail_round "ip link del $b failed or hung"
	veths=()
	((round_ok)) && ok "round $r: rmmod with 2 devices present, veths intact"
	# Stop early: later rounds would only repeat the same failure.
	((round_ok)) || break
done

# Autoload: rdma-link-xnic alias, through nldev_newlink()'s request_module().
a=xm$$_au
if mod_loaded; then
	timeout 60 rmmod xnic || true
fi
check "xnic unloaded before the autoload test" mod_unloaded
check "veth for the autoload test" veth_add "$a"
check "rdma link add xnic0 type xnic netdev $a (module autoload)" \
	rdma link add xnic0 type xnic netdev "$a"
check "xnic was loaded by its alias" mod_loaded
check "xnic0 exists" wait_for "$WAIT_S" dev_present xnic0
check "xnic0 is ACTIVE" wait_for "$WAIT_S" port_active xnic0
check "rdma link show lists xnic0 on $a" \
	bash -c "rdma link show | grep -q 'link xnic0/1 .*netdev $a '"
check "rdma link delete xnic0" rdma link delete xnic0
check "xnic0 removed" wait_for "$WAIT_S" dev_absent xnic0
check "ip link del $a" veth_del "$a"
veths=()
check "xnic stays loaded" mod_loaded

# Engine placement: the CPUs shared out among the engines, a slice each
# while they fit, every CPU for each when they do not.
online=$(cat /sys/devices/system/cpu/online)
ncpu=$(getconf _NPROCESSORS_ONLN)
spread=/sys/module/xnic/parameters/engine_spread
for v in a b c d; do
	check "veth xm$$_p$v" veth_add "xm$$_p$v"
done
check "rdma link add xnicp0" rdma link add xnicp0 type xnic netdev "xm$$_pa"
check "one engine runs on every CPU ($online)" \
	test "$(engine_cpus xnicp0)" = "$online"
check "rdma link add xnicp1" rdma link add xnicp1 type xnic netdev "xm$$_pb"
c0=$(engine_cpus xnicp0) c1=$(engine_cpus xnicp1)
if ((ncpu >= 2)); then
	check "two engines get two slices apart ($c0; $c1)" \
		bash -c "[[ '$c0' != '$c1' && '$c0' != '$online' && '$c1' != '$online' ]]"
	if ((ncpu == 2)); then
		check "rdma link add xnicp2: three engines, two CPUs" \
			rdma link add xnicp2 type xnic netdev "xm$$_pc"
		check "engines that do not fit are all left on every CPU" \
			test "$(engine_cpus xnicp0)" = "$online" -a \
			"$(engine_cpus xnicp1)" = "$online" -a \
			"$(engine_cpus xnicp2)" = "$online"
		check "rdma link delete xnicp2" rdma link delete xnicp2
		check "two left: their slices again" \
			test "$(engine_cpus xnicp0)" = "$c0" -a \
			"$(engine_cpus xnicp1)" = "$c1"
	fi
fi
check "rdma link delete xnicp1" rdma link delete xnicp1
check "the engine left gets every CPU back ($online)" \
	test "$(engine_cpus xnicp0)" = "$online"
check "engine_spread=N" bash -c "echo N > $spread"
check "rdma link add xnicp1, xnicp3 with engine_spread=N" \
	bash -c "rdma link add xnicp1 type xnic netdev xm$$_pb &&
		 rdma link add xnicp3 type xnic netdev xm$$_pd"
check "engines outside the sharing run on every CPU" \
	test "$(engine_cpus xnicp1)" = "$online" -a \
	"$(engine_cpus xnicp3)" = "$online"
echo Y > "$spread"
for d in xnicp0 xnicp1 xnicp3; do
	check "rdma link delete $d" rdma link delete "$d"
done

# The kernel log of this run.
log=$(dmesg | sed -n "/$TAG start/,\$p")
bad=$(grep -E '(^|[^A-Za-z])BUG|WARNING|Oops|unregister_netdevice: waiting' <<<"$log")
if [[ -n $bad ]]; then
	not_ok "kernel log is clean"
	sed 's/^/# /' <<<"$bad" | head -n 20
else
	ok "kernel log is clean"
fi

tap_end
