/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * xnic generic netlink family "xnic": device, member link, peer, parameter
 * and statistics requests, and the "events" multicast group. xnictl(8)
 * (tools/xnictl.c, Documentation/xnictl.rst) is its reference client.
 *
 * Conventions:
 *  - Every request names its device with XNIC_A_DEV_NAME or XNIC_A_DEV_INDEX
 *    (the RDMA core's device index, as `rdma dev` shows it); a dump request
 *    without either covers every xnic device.
 *  - Attributes are validated strictly: an attribute a command does not
 *    take, a value of the wrong size or outside its range, and a nest
 *    without NLA_F_NESTED are rejected with EINVAL (ERANGE for a value out
 *    of range) and an extended ACK that points at the attribute.
 *  - Requests that change anything (LINK_ADD, LINK_DEL, PARAM_SET) need
 *    CAP_NET_ADMIN (EPERM otherwise). Reading and listening need nothing.
 *  - Replies carry XNIC_A_DEV_INDEX and XNIC_A_DEV_NAME first, then the
 *    command's attributes. New attributes are only ever appended; clients
 *    ignore attributes they do not know.
 *  - Network namespaces: the family works in every namespace. A request
 *    sees only the devices the RDMA core lets its socket's namespace see
 *    (all of them in "shared" mode, the namespace's own in "exclusive"
 *    mode: rdma_dev_access_netns()); any other device is ENODEV, and dumps
 *    skip it. Netdev names and indexes (LINK_ADD, LINK_DEL) are looked up
 *    in that namespace too. Events go to the device's namespace
 *    (exclusive mode) or to every namespace (shared mode).
 */
#ifndef XNIC_NETLINK_USER_H
#define XNIC_NETLINK_USER_H

#include <linux/types.h>

#define XNIC_GENL_NAME		"xnic"
#define XNIC_GENL_VERSION	1
/* Multicast group of XNIC_CMD_LINK_NTF and XNIC_CMD_PEER_NTF. */
#define XNIC_GENL_MCGRP_EVENTS	"events"

/* Port states, as the IBTA numbers them (enum ib_port_state). */
#define XNIC_PORT_STATE_DOWN	1
#define XNIC_PORT_STATE_ACTIVE	4

/* Traffic classes with a weight (XNIC_PARAM_A_CLASS<n>_WEIGHT). */
#define XNIC_NR_CLASSES		2

/**
 * enum xnic_cmd - commands of the family
 * @XNIC_CMD_UNSPEC: unused (0)
 * @XNIC_CMD_DEV_GET: one device (doit, by name or index) or all (dump).
 *	Reply: DEV_INDEX, DEV_NAME, NODE_ID, NODE_GUID, PORT_STATE, NR_LINKS,
 *	PAYLOAD_MTU, DRV_NAME, DRV_VERSION, FW_VERSION, NR_PEERS.
 * @XNIC_CMD_LINK_GET: dump the member links of one device (or of all):
 *	one message per link with DEV_INDEX, DEV_NAME and an XNIC_A_LINK nest.
 * @XNIC_CMD_LINK_ADD: make a netdev a member link of a device. Request:
 *	device, XNIC_A_LINK { IFNAME or IFINDEX }. Errors as `rdma link add`
 *	(EINVAL loopback/not Ethernet/MTU too small, EEXIST already a member
 *	link, ENODEV no such netdev), ENOSPC at XNIC_MAX_LINKS links.
 * @XNIC_CMD_LINK_DEL: remove a member link. Request as LINK_ADD. ENOENT
 *	when the netdev is not a member link of the device; EBUSY for the last
 *	link (use `rdma link delete` to remove the device).
 * @XNIC_CMD_PEER_GET: dump the peer table of one device (or of all): one
 *	message per (peer, member link) path with an XNIC_A_PEER nest.
 * @XNIC_CMD_PARAM_GET: the device's parameters: an XNIC_A_PARAMS nest with
 *	every parameter.
 * @XNIC_CMD_PARAM_SET: change parameters: an XNIC_A_PARAMS nest with the
 *	ones to change. All or nothing: nothing changes when one is refused.
 *	EBUSY for XNIC_PARAM_A_NODE_ID while the device has QPs.
 * @XNIC_CMD_STATS_GET: every counter of the device: an XNIC_A_STATS nest of
 *	XNIC_A_STATS_ENTRY nests (name, value).
 * @XNIC_CMD_LINK_NTF: event (multicast "events"): DEV_INDEX, DEV_NAME,
 *	XNIC_A_EVENT (LINK_*), XNIC_A_LINK nest.
 * @XNIC_CMD_PEER_NTF: event (multicast "events"): DEV_INDEX, DEV_NAME,
 *	XNIC_A_EVENT (PEER_*), XNIC_A_PEER nest.
 * @XNIC_CMD_CM_LISTEN: listen on a service id: device, XNIC_A_CM
 *	{ SERVICE_ID }. The listener belongs to the requesting socket and goes
 *	away with it. EADDRINUSE when the device has a listener on it.
 * @XNIC_CMD_CM_UNLISTEN: stop listening: as CM_LISTEN; ENOENT when the
 *	socket has no such listener. Requests not answered yet are rejected.
 * @XNIC_CMD_CM_CONNECT: connect to (NODE, SERVICE_ID): device, XNIC_A_CM
 *	{ NODE, SERVICE_ID, QPN, PSN, optional PRIVATE, TIMEOUT_MS, RETRIES }.
 *	Reply: XNIC_A_CM { ID }. The outcome comes later as a CM_EVENT (REP,
 *	REJ or TIMEOUT) to the requesting socket; after REP, CM_RTU. EPERM
 *	when QPN is another uid's QP and the requester lacks CAP_NET_ADMIN.
 * @XNIC_CMD_CM_ACCEPT: answer a REQ event: device, XNIC_A_CM { ID, QPN,
 *	PSN, optional PRIVATE }. ESTABLISHED (or TIMEOUT) follows as a
 *	CM_EVENT. ENOENT: no such request of this socket; EINVAL: answered;
 *	EPERM: as CM_CONNECT.
 * @XNIC_CMD_CM_REJECT: refuse a REQ event: device, XNIC_A_CM { ID,
 *	optional PRIVATE }.
 * @XNIC_CMD_CM_EVENT: kernel to user, unicast to the socket that owns the
 *	listener or the connection: DEV_INDEX, DEV_NAME, XNIC_A_CM { EVENT,
 *	ID, NODE, SERVICE_ID, and per event QPN, PSN, PRIVATE, REASON }.
 * @XNIC_CMD_LINK_SET: change a member link's thermal settings: device,
 *	XNIC_A_LINK { IFNAME or IFINDEX, and any of TEMP_WARN_MC,
 *	TEMP_CRIT_MC, TEMP_HYST_MC, TEMP_INJECT_MC; a sensor reader's report:
 *	TEMP_SOURCE with TEMP_SENSOR_MC, or TEMP_SOURCE NONE alone, and/or
 *	TEMP_READ_ERROR }. ENOENT when the netdev is not a member link of the
 *	device; EINVAL when the warn threshold is not below the critical one
 *	(0 turns a threshold off), or a report is malformed.
 * @XNIC_CMD_CM_RTU: after a REP event, once the caller's QP is connected
 *	(RTR/RTS): send the RTU, which completes the passive side. Request:
 *	device, XNIC_A_CM { ID }. ENOENT: no such connection of this socket;
 *	EINVAL: not waiting for it.
 * @__XNIC_CMD_MAX: one past the last
 * @XNIC_CMD_MAX: the last
 */
enum xnic_cmd {
	XNIC_CMD_UNSPEC,
	XNIC_CMD_DEV_GET,
	XNIC_CMD_LINK_GET,
	XNIC_CMD_LINK_ADD,
	XNIC_CMD_LINK_DEL,
	XNIC_CMD_PEER_GET,
	XNIC_CMD_PARAM_GET,
	XNIC_CMD_PARAM_SET,
	XNIC_CMD_STATS_GET,
	XNIC_CMD_LINK_NTF,
	XNIC_CMD_PEER_NTF,
	XNIC_CMD_CM_LISTEN,
	XNIC_CMD_CM_UNLISTEN,
	XNIC_CMD_CM_CONNECT,
	XNIC_CMD_CM_ACCEPT,
	XNIC_CMD_CM_REJECT,
	XNIC_CMD_CM_EVENT,
	XNIC_CMD_CM_RTU,
	XNIC_CMD_LINK_SET,

	__XNIC_CMD_MAX,
	XNIC_CMD_MAX = __XNIC_CMD_MAX - 1
};

/**
 * enum xnic_attr - top-level attributes
 * @XNIC_A_UNSPEC: unused (0)
 * @XNIC_A_PAD: padding of 64-bit attributes
 * @XNIC_A_DEV_INDEX: u32, the RDMA core's device index
 * @XNIC_A_DEV_NAME: string, the RDMA device name ("xnic0")
 * @XNIC_A_NODE_ID: u32, the device's node id on the fabric (0..65535)
 * @XNIC_A_NODE_GUID: u64, node GUID in host byte order
 * @XNIC_A_PORT_STATE: u8, XNIC_PORT_STATE_*
 * @XNIC_A_NR_LINKS: u32, number of member links
 * @XNIC_A_PAYLOAD_MTU: u32, payload bytes per frame on every member link
 * @XNIC_A_DRV_NAME: string, "xnic"
 * @XNIC_A_DRV_VERSION: string, the module's version
 * @XNIC_A_FW_VERSION: string, the engine's ("firmware") version
 * @XNIC_A_NR_PEERS: u32, number of peers in the peer table
 * @XNIC_A_LINK: nest, enum xnic_link_attr
 * @XNIC_A_PEER: nest, enum xnic_peer_attr
 * @XNIC_A_PARAMS: nest, enum xnic_param_attr
 * @XNIC_A_STATS: nest of XNIC_A_STATS_ENTRY
 * @XNIC_A_STATS_ENTRY: nest, enum xnic_stat_attr
 * @XNIC_A_EVENT: u8, enum xnic_event (notifications only)
 * @XNIC_A_CM: nest, enum xnic_cm_attr (connection manager)
 * @__XNIC_A_MAX: one past the last
 * @XNIC_A_MAX: the last
 */
enum xnic_attr {
	XNIC_A_UNSPEC,
	XNIC_A_PAD,
	XNIC_A_DEV_INDEX,
	XNIC_A_DEV_NAME,
	XNIC_A_NODE_ID,
	XNIC_A_NODE_GUID,
	XNIC_A_PORT_STATE,
	XNIC_A_NR_LINKS,
	XNIC_A_PAYLOAD_MTU,
	XNIC_A_DRV_NAME,
	XNIC_A_DRV_VERSION,
	XNIC_A_FW_VERSION,
	XNIC_A_NR_PEERS,
	XNIC_A_LINK,
	XNIC_A_PEER,
	XNIC_A_PARAMS,
	XNIC_A_STATS,
	XNIC_A_STATS_ENTRY,
	XNIC_A_EVENT,
	XNIC_A_CM,

	__XNIC_A_MAX,
	XNIC_A_MAX = __XNIC_A_MAX - 1
};

/**
 * enum xnic_link_attr - attributes of an XNIC_A_LINK nest
 * @XNIC_LINK_A_UNSPEC: unused (0)
 * @XNIC_LINK_A_IFNAME: string, the member netdev's name
 * @XNIC_LINK_A_IFINDEX: u32, its ifindex
 * @XNIC_LINK_A_UP: u8, 1 when the link can carry traffic (administratively
 *	up, running, carrier)
 * @XNIC_LINK_A_CARRIER: u8, 1 when the netdev has carrier
 * @XNIC_LINK_A_MTU: u32, the netdev's MTU, bytes
 * @XNIC_LINK_A_PEERS: nest of XNIC_LINK_A_PEER_NODE: the peers heard on
 *	this link
 * @XNIC_LINK_A_PEER_NODE: u32, a peer's node id (inside XNIC_LINK_A_PEERS)
 * @XNIC_LINK_A_STATE: u8, enum xnic_link_state: the bond's view of the link
 * @XNIC_LINK_A_PAD: padding of 64-bit attributes
 * @XNIC_LINK_A_RTT_US: u32, smoothed heartbeat round trip time, us
 * @XNIC_LINK_A_JITTER_US: u32, smoothed round trip variation, us
 * @XNIC_LINK_A_HB_SENT: u64, heartbeats sent (requests)
 * @XNIC_LINK_A_HB_RCVD: u64, heartbeat replies received
 * @XNIC_LINK_A_HB_MISSED: u64, heartbeat intervals in which nothing was
 *	heard from any peer on the link
 * @XNIC_LINK_A_CRC_ERRORS: u64, frames received on the link with a bad
 *	crc32c
 * @XNIC_LINK_A_FAILOVERS: u64, times the link left the UP state and its
 *	unacknowledged frames were resent on the other links
 * @XNIC_LINK_A_TX_FRAMES: u64, transport frames sent on the link
 * @XNIC_LINK_A_TX_BYTES: u64, their bytes
 * @XNIC_LINK_A_RX_FRAMES: u64, xnic frames received on the link
 * @XNIC_LINK_A_STATE_CHANGES: u64, changes of XNIC_LINK_A_STATE
 * @XNIC_LINK_A_FAILOVER_US: u32, duration of the last failover, us: from
 *	the last sign of life of the link (heartbeat) or the carrier event to
 *	the moment every QP had its frames on the link marked for resending
 * @XNIC_LINK_A_LOSS_PPM: u32, heartbeat loss over the last patrol window,
 *	parts per million
 * @XNIC_LINK_A_RESENT: u64, PSNs marked for resending by failovers
 * @XNIC_LINK_A_TEMP_MC: s32, the link's temperature, millidegrees Celsius
 *	(absent: no sensor reading and nothing injected); its source is
 *	XNIC_LINK_A_TEMP_SOURCE
 * @XNIC_LINK_A_TEMP_WARN_MC: u32, warn threshold, millidegrees Celsius;
 *	0: off. At or above it the link's spray weight is divided by 4
 * @XNIC_LINK_A_TEMP_CRIT_MC: u32, critical threshold, millidegrees
 *	Celsius; 0: off. At or above it the link is isolated (DEGRADED)
 * @XNIC_LINK_A_TEMP_INJECT_MC: s32, LINK_SET only, FOR TESTS: the
 *	temperature to report instead of the sensor's;
 *	XNIC_TEMP_INJECT_OFF goes back to the sensor
 * @XNIC_LINK_A_THERMAL: u8, enum xnic_thermal_state
 * @XNIC_LINK_A_THERMAL_WARNS: u64, times the link entered THERMAL_WARN
 *	or THERMAL_CRIT from a cooler state
 * @XNIC_LINK_A_THERMAL_CRITS: u64, times it entered THERMAL_CRIT
 * @XNIC_LINK_A_TEMP_HYST_MC: u32, hysteresis, millidegrees Celsius
 *	(0..XNIC_THERMAL_HYST_MAX_MC, default XNIC_THERMAL_HYST_MC): a
 *	thermal state is left only this far below its threshold
 * @XNIC_LINK_A_TEMP_SOURCE: u8, enum xnic_temp_source. In LINK_GET: where
 *	XNIC_LINK_A_TEMP_MC comes from. In LINK_SET, from a sensor reader
 *	(thermal/xnic-tempd): the sensor of TEMP_SENSOR_MC (HWMON or
 *	MODULE), or NONE alone: the link has no sensor (forget the reading)
 * @XNIC_LINK_A_TEMP_SENSOR_MC: s32, LINK_SET only: a sensor reading,
 *	millidegrees Celsius; it stands for XNIC_TEMP_STALE_MS
 * @XNIC_LINK_A_TEMP_READ_ERROR: flag, LINK_SET only: the reader failed to
 *	read the link's sensor (counted; the last reading stands until stale)
 * @XNIC_LINK_A_TEMP_READ_ERRORS: u64, sensor read failures reported
 * @__XNIC_LINK_A_MAX: one past the last
 * @XNIC_LINK_A_MAX: the last
 *
 * LINK_ADD and LINK_DEL take only IFNAME or IFINDEX; LINK_SET also the
 * thermal settings.
 */
enum xnic_link_attr {
	XNIC_LINK_A_UNSPEC,
	XNIC_LINK_A_IFNAME,
	XNIC_LINK_A_IFINDEX,
	XNIC_LINK_A_UP,
	XNIC_LINK_A_CARRIER,
	XNIC_LINK_A_MTU,
	XNIC_LINK_A_PEERS,
	XNIC_LINK_A_PEER_NODE,
	XNIC_LINK_A_STATE,
	XNIC_LINK_A_PAD,
	XNIC_LINK_A_RTT_US,
	XNIC_LINK_A_JITTER_US,
	XNIC_LINK_A_HB_SENT,
	XNIC_LINK_A_HB_RCVD,
	XNIC_LINK_A_HB_MISSED,
	XNIC_LINK_A_CRC_ERRORS,
	XNIC_LINK_A_FAILOVERS,
	XNIC_LINK_A_TX_FRAMES,
	XNIC_LINK_A_TX_BYTES,
	XNIC_LINK_A_RX_FRAMES,
	XNIC_LINK_A_STATE_CHANGES,
	XNIC_LINK_A_FAILOVER_US,
	XNIC_LINK_A_LOSS_PPM,
	XNIC_LINK_A_RESENT,
	XNIC_LINK_A_TEMP_MC,
	XNIC_LINK_A_TEMP_WARN_MC,
	XNIC_LINK_A_TEMP_CRIT_MC,
	XNIC_LINK_A_TEMP_INJECT_MC,
	XNIC_LINK_A_THERMAL,
	XNIC_LINK_A_THERMAL_WARNS,
	XNIC_LINK_A_THERMAL_CRITS,
	XNIC_LINK_A_TEMP_HYST_MC,
	XNIC_LINK_A_TEMP_SOURCE,
	XNIC_LINK_A_TEMP_SENSOR_MC,
	XNIC_LINK_A_TEMP_READ_ERROR,
	XNIC_LINK_A_TEMP_READ_ERRORS,

	__XNIC_LINK_A_MAX,
	XNIC_LINK_A_MAX = __XNIC_LINK_A_MAX - 1
};

/* XNIC_LINK_A_TEMP_INJECT_MC that ends an injection (tests only). */
#define XNIC_TEMP_INJECT_OFF	(-0x7fffffff - 1)
/*
 * A thermal state is left only XNIC_LINK_A_TEMP_HYST_MC below its
 * threshold (hysteresis, millidegrees Celsius; this default, at most
 * XNIC_THERMAL_HYST_MAX_MC), after staying there for the bond hold time.
 */
#define XNIC_THERMAL_HYST_MC	2000
#define XNIC_THERMAL_HYST_MAX_MC	50000
/*
 * A sensor reading (XNIC_LINK_A_TEMP_SENSOR_MC) older than this is
 * dropped (temperature unknown): its reader stopped. Milliseconds.
 */
#define XNIC_TEMP_STALE_MS	10000

/**
 * enum xnic_temp_source - XNIC_LINK_A_TEMP_SOURCE
 * @XNIC_TEMP_SRC_NONE: no sensor reading (no sensor, or no reader running)
 * @XNIC_TEMP_SRC_HWMON: the hwmon sensor of the member netdev's parent
 *	device (temp1_input)
 * @XNIC_TEMP_SRC_MODULE: the pluggable module's EEPROM diagnostics
 *	(SFF-8472, SFF-8636 or CMIS), through ethtool's module interface
 * @XNIC_TEMP_SRC_INJECTED: injected for a test (XNIC_LINK_A_TEMP_INJECT_MC);
 *	overrides the sensor
 */
enum xnic_temp_source {
	XNIC_TEMP_SRC_NONE,
	XNIC_TEMP_SRC_HWMON,
	XNIC_TEMP_SRC_MODULE,
	XNIC_TEMP_SRC_INJECTED,
};

/**
 * enum xnic_thermal_state - XNIC_LINK_A_THERMAL
 * @XNIC_THERMAL_OK: below the warn threshold, or no temperature known
 * @XNIC_THERMAL_WARN: at or above the warn threshold: a quarter of its
 *	spray weight
 * @XNIC_THERMAL_CRIT: at or above the critical threshold: isolated like a
 *	DEGRADED link (drained, heartbeats only)
 */
enum xnic_thermal_state {
	XNIC_THERMAL_OK,
	XNIC_THERMAL_WARN,
	XNIC_THERMAL_CRIT,
};

/**
 * enum xnic_link_state - XNIC_LINK_A_STATE: the bond's view of a link
 * @XNIC_LINK_STATE_UNSPEC: unused (0)
 * @XNIC_LINK_STATE_UP: healthy; carries traffic
 * @XNIC_LINK_STATE_DEGRADED: carrier and heartbeats, but loss or CRC
 *	errors over threshold: isolated (no traffic but heartbeats) until it
 *	stays healthy for the hold time
 * @XNIC_LINK_STATE_DOWN: no carrier, or heartbeats missed; back to UP
 *	after heartbeats flowed for the hold time
 */
enum xnic_link_state {
	XNIC_LINK_STATE_UNSPEC,
	XNIC_LINK_STATE_UP,
	XNIC_LINK_STATE_DEGRADED,
	XNIC_LINK_STATE_DOWN,
};

/**
 * xnic_bond_state_name() - name of a link state, for the kernel (log,
 *	debugfs) and userspace (xnictl) alike
 * @state: enum xnic_link_state (XNIC_LINK_A_STATE)
 *
 * Return: "up", "degraded", "down", or "unknown" for any other value.
 */
static inline const char *xnic_bond_state_name(__u32 state)
{
	switch (state) {
	case XNIC_LINK_STATE_UP:
		return "up";
	case XNIC_LINK_STATE_DEGRADED:
		return "degraded";
	case XNIC_LINK_STATE_DOWN:
		return "down";
	default:
		return "unknown";
	}
}

/**
 * enum xnic_bond_policy - XNIC_PARAM_A_BOND_POLICY: how frames to a peer
 *	are spread over the member links that reach it
 * @XNIC_BOND_SPRAY: every frame on the next healthy link, weighted by
 *	capacity and health (default)
 * @XNIC_BOND_ACTIVE_BACKUP: every frame on the first healthy link, in the
 *	order the links were added
 * @XNIC_BOND_FLOW_HASH: the frames of a QP pair on one healthy link, chosen
 *	by a hash of the QP numbers
 * @XNIC_BOND_POLICY_MAX: first value that is not a policy
 */
enum xnic_bond_policy {
	XNIC_BOND_SPRAY,
	XNIC_BOND_ACTIVE_BACKUP,
	XNIC_BOND_FLOW_HASH,
	XNIC_BOND_POLICY_MAX,
};

/**
 * enum xnic_peer_attr - attributes of an XNIC_A_PEER nest
 * @XNIC_PEER_A_UNSPEC: unused (0)
 * @XNIC_PEER_A_PAD: padding of 64-bit attributes
 * @XNIC_PEER_A_NODE_ID: u32, the peer's node id
 * @XNIC_PEER_A_NODE_GUID: u64, its node GUID in host byte order
 * @XNIC_PEER_A_MAC: binary, 6 bytes: its MAC address on the link
 * @XNIC_PEER_A_IFNAME: string, the member link it was heard on (absent in
 *	PEER_LEAVE events)
 * @XNIC_PEER_A_IFINDEX: u32, that link's ifindex
 * @XNIC_PEER_A_LAST_SEEN_MS: u32, ms since the last frame accepted from
 *	the peer over this link
 * @XNIC_PEER_A_PATH_STATE: u8, enum xnic_link_state: the path's state, the
 *	link's bond state or DOWN when the path alone was lost (a switched
 *	link whose other peers are still heard)
 * @XNIC_PEER_A_ANSWERED: u8, 1 when the peer answered a heartbeat over
 *	this path (only such paths get every heartbeat)
 * @XNIC_PEER_A_RTT_US: u32, smoothed heartbeat round trip time over this
 *	path, us (absent before the first answer)
 * @XNIC_PEER_A_DOWN_MS: u32, ms since the path was found lost (present
 *	only while it is)
 * @__XNIC_PEER_A_MAX: one past the last
 * @XNIC_PEER_A_MAX: the last
 */
enum xnic_peer_attr {
	XNIC_PEER_A_UNSPEC,
	XNIC_PEER_A_PAD,
	XNIC_PEER_A_NODE_ID,
	XNIC_PEER_A_NODE_GUID,
	XNIC_PEER_A_MAC,
	XNIC_PEER_A_IFNAME,
	XNIC_PEER_A_IFINDEX,
	XNIC_PEER_A_LAST_SEEN_MS,
	XNIC_PEER_A_PATH_STATE,
	XNIC_PEER_A_ANSWERED,
	XNIC_PEER_A_RTT_US,
	XNIC_PEER_A_DOWN_MS,

	__XNIC_PEER_A_MAX,
	XNIC_PEER_A_MAX = __XNIC_PEER_A_MAX - 1
};

/**
 * enum xnic_param_attr - attributes of an XNIC_A_PARAMS nest (all u32)
 * @XNIC_PARAM_A_UNSPEC: unused (0)
 * @XNIC_PARAM_A_NODE_ID: node id, 0..65534 (65535 is the broadcast id of
 *	HELLOs, no node's); only while the device has no QP. Contexts opened
 *	before keep reporting the old one.
 * @XNIC_PARAM_A_IDLE_US: microseconds the engine busy-polls without work
 *	before it sleeps, 0..10000000
 * @XNIC_PARAM_A_HB_INTERVAL_MS: heartbeat interval on every member link,
 *	ms, 1..10000 (link bonding)
 * @XNIC_PARAM_A_HB_MISS: heartbeats missed before a link is declared down,
 *	1..255 (link bonding)
 * @XNIC_PARAM_A_CREDIT_WINDOW: credits (frames) a receiver grants a flow,
 *	8..1024, the receive PSN window (credit-based flow control)
 * @XNIC_PARAM_A_CLASS0_WEIGHT: scheduling weight of traffic class 0
 *	(latency-critical), 1..255 (credit-based flow control)
 * @XNIC_PARAM_A_CLASS1_WEIGHT: scheduling weight of traffic class 1
 *	(bulk), 1..255
 * @XNIC_PARAM_A_BOND_POLICY: enum xnic_bond_policy (link bonding)
 * @XNIC_PARAM_A_PEER_TIMEOUT_MS: ms a peer may have no usable link before
 *	the QPs connected to it complete their outstanding work with
 *	errors, 0..600000; 0: only the retry count limits (link bonding)
 * @XNIC_PARAM_A_BOND_HOLD_MS: ms a link that was down or degraded must
 *	stay healthy before it carries traffic again, 0..600000 (link
 *	bonding)
 * @XNIC_PARAM_A_MAX_PEERS: nodes the peer table holds at most, 1..65534
 *	(default 1024): HELLOs from more nodes are refused and counted in
 *	peers_refused; entries leave 60 s after their node was last heard
 * @__XNIC_PARAM_A_MAX: one past the last
 * @XNIC_PARAM_A_MAX: the last
 */
enum xnic_param_attr {
	XNIC_PARAM_A_UNSPEC,
	XNIC_PARAM_A_NODE_ID,
	XNIC_PARAM_A_IDLE_US,
	XNIC_PARAM_A_HB_INTERVAL_MS,
	XNIC_PARAM_A_HB_MISS,
	XNIC_PARAM_A_CREDIT_WINDOW,
	XNIC_PARAM_A_CLASS0_WEIGHT,
	XNIC_PARAM_A_CLASS1_WEIGHT,
	XNIC_PARAM_A_BOND_POLICY,
	XNIC_PARAM_A_PEER_TIMEOUT_MS,
	XNIC_PARAM_A_BOND_HOLD_MS,
	XNIC_PARAM_A_MAX_PEERS,

	__XNIC_PARAM_A_MAX,
	XNIC_PARAM_A_MAX = __XNIC_PARAM_A_MAX - 1
};

/**
 * enum xnic_stat_attr - attributes of an XNIC_A_STATS_ENTRY nest
 * @XNIC_STAT_A_UNSPEC: unused (0)
 * @XNIC_STAT_A_PAD: padding of 64-bit attributes
 * @XNIC_STAT_A_NAME: string, the counter's name (as `rdma statistic`
 *	shows it)
 * @XNIC_STAT_A_VALUE: u64, its value
 * @__XNIC_STAT_A_MAX: one past the last
 * @XNIC_STAT_A_MAX: the last
 */
enum xnic_stat_attr {
	XNIC_STAT_A_UNSPEC,
	XNIC_STAT_A_PAD,
	XNIC_STAT_A_NAME,
	XNIC_STAT_A_VALUE,

	__XNIC_STAT_A_MAX,
	XNIC_STAT_A_MAX = __XNIC_STAT_A_MAX - 1
};

/**
 * enum xnic_event - XNIC_A_EVENT of a notification
 * @XNIC_EVENT_UNSPEC: unused (0)
 * @XNIC_EVENT_LINK_UP: a member link can carry traffic again
 * @XNIC_EVENT_LINK_DOWN: a member link went down or lost carrier
 * @XNIC_EVENT_LINK_ADDED: a member link was added to the device
 * @XNIC_EVENT_LINK_REMOVED: a member link was removed (LINK_DEL, or its
 *	netdev was unregistered)
 * @XNIC_EVENT_PEER_JOIN: a new peer (or a new incarnation of one: another
 *	GUID) was learned
 * @XNIC_EVENT_PEER_LEAVE: a peer no member link heard from for a while was
 *	forgotten
 * @XNIC_EVENT_LINK_DEGRADED: the health patrol isolated a member link
 *	(XNIC_LINK_A_STATE says the state of every link event)
 * @XNIC_EVENT_LINK_THERMAL: a member link's thermal state changed
 *	(XNIC_LINK_A_THERMAL, XNIC_LINK_A_TEMP_MC)
 */
enum xnic_event {
	XNIC_EVENT_UNSPEC,
	XNIC_EVENT_LINK_UP,
	XNIC_EVENT_LINK_DOWN,
	XNIC_EVENT_LINK_ADDED,
	XNIC_EVENT_LINK_REMOVED,
	XNIC_EVENT_PEER_JOIN,
	XNIC_EVENT_PEER_LEAVE,
	XNIC_EVENT_LINK_DEGRADED,
	XNIC_EVENT_LINK_THERMAL,
};

/* Connection manager (Documentation/cm.rst) */

/* Bytes of private data a CM message carries at most. */
#define XNIC_CM_PRIVATE_LEN	64

/**
 * enum xnic_cm_attr - attributes of an XNIC_A_CM nest
 * @XNIC_CM_A_UNSPEC: unused (0)
 * @XNIC_CM_A_PAD: padding of 64-bit attributes
 * @XNIC_CM_A_SERVICE_ID: u64, the service id (any value)
 * @XNIC_CM_A_ID: u32, a connection's communication id on this device
 * @XNIC_CM_A_NODE: u32, the peer's node id, 0..65534
 * @XNIC_CM_A_QPN: u32, a QP number (24 bits): requests, the caller's QP;
 *	events, the peer's
 * @XNIC_CM_A_PSN: u32, a first PSN (24 bits), as @XNIC_CM_A_QPN
 * @XNIC_CM_A_PRIVATE: binary, at most XNIC_CM_PRIVATE_LEN bytes of
 *	application data (the peer's in events)
 * @XNIC_CM_A_TIMEOUT_MS: u32, CONNECT: the longest wait for an answer
 *	before resending the REQ, 1..10000 ms (default 1000); resends
 *	start 100 ms after the first try and back off to it
 * @XNIC_CM_A_RETRIES: u32, CONNECT: 0..10 (default 3); the REQ is resent
 *	for TIMEOUT_MS * (RETRIES + 1) before giving up; the passive side
 *	does the same for its REP
 * @XNIC_CM_A_EVENT: u8, enum xnic_cm_event (events only)
 * @XNIC_CM_A_REASON: u8, REJ events: the reason (Documentation/cm.rst)
 * @__XNIC_CM_A_MAX: one past the last
 * @XNIC_CM_A_MAX: the last
 */
enum xnic_cm_attr {
	XNIC_CM_A_UNSPEC,
	XNIC_CM_A_PAD,
	XNIC_CM_A_SERVICE_ID,
	XNIC_CM_A_ID,
	XNIC_CM_A_NODE,
	XNIC_CM_A_QPN,
	XNIC_CM_A_PSN,
	XNIC_CM_A_PRIVATE,
	XNIC_CM_A_TIMEOUT_MS,
	XNIC_CM_A_RETRIES,
	XNIC_CM_A_EVENT,
	XNIC_CM_A_REASON,

	__XNIC_CM_A_MAX,
	XNIC_CM_A_MAX = __XNIC_CM_A_MAX - 1
};

/**
 * enum xnic_cm_event - XNIC_CM_A_EVENT of a CM_EVENT message
 * @XNIC_CM_EVENT_UNSPEC: unused (0)
 * @XNIC_CM_EVENT_REQ: to a listener: a peer asks to connect (ID, NODE,
 *	SERVICE_ID, QPN, PSN, PRIVATE); answer with CM_ACCEPT or CM_REJECT
 * @XNIC_CM_EVENT_REP: to a connecting socket: accepted (QPN, PSN,
 *	PRIVATE); connect the QP, then send CM_RTU
 * @XNIC_CM_EVENT_REJ: to a connecting socket: refused (REASON)
 * @XNIC_CM_EVENT_TIMEOUT: no answer after every resend (either side)
 * @XNIC_CM_EVENT_ESTABLISHED: to the accepting socket: the RTU arrived
 * @XNIC_CM_EVENT_DISCONNECTED: to the socket that owns a connection (the
 *	listener's for an accepted one) while it is open: the peer's QP was
 *	destroyed or disconnected (a DREQ came), ours is now in the error
 *	state with its work requests flushed (ID, NODE, SERVICE_ID, QPN: the
 *	peer's)
 */
enum xnic_cm_event {
	XNIC_CM_EVENT_UNSPEC,
	XNIC_CM_EVENT_REQ,
	XNIC_CM_EVENT_REP,
	XNIC_CM_EVENT_REJ,
	XNIC_CM_EVENT_TIMEOUT,
	XNIC_CM_EVENT_ESTABLISHED,
	XNIC_CM_EVENT_DISCONNECTED,
};

#endif /* XNIC_NETLINK_USER_H */
