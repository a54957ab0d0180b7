// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic_device_test - RDMA device life cycle: `rdma link add/delete` through
 * RDMA netlink, sysfs and iproute2's view of the device, port state
 * following the member link's carrier, node GUID and GID from the MAC,
 * libxnic's device lookup, the exact errno of every bad request, netdev
 * removal under a device, and many devices at once.
 *
 * Runs as root in the test VM (tools/xnic-vm) with xnic.ko loaded. Every
 * test gets veth pairs of its own (names carry the test's pid) and the
 * teardown removes whatever devices and veths the test left behind.
 */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "rdma_nl.h"
#include "xnic.h"		/* libuser */
#include "xnic_lib.h"
#include "kmod/wire.h"
#include "uapi/xnic-abi.h"

#define SYS_IB		"/sys/class/infiniband"
#define MAX_PAIRS	10
#define MAX_DEVS	10
#define DEV_NAME_MAX	64
/* Deadline for asynchronous changes (port state, device removal), ms. */
#define WAIT_MS		2000
#define POLL_MS		20
/* XNIC_WIRE_HDR_LEN + XNIC_MIN_PAYLOAD: the smallest MTU xnic accepts. */
#define MIN_MTU		(XNIC_WIRE_HDR_LEN + 256)

#define STATE_ACTIVE	"4: ACTIVE"
#define STATE_DOWN	"1: DOWN"
#define PHYS_LINKUP	"5: LinkUp"
#define PHYS_POLLING	"2: Polling"
#define PHYS_DISABLED	"3: Disabled"

/* ------------------------------------------------------------ helpers -- */

static bool path_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Poll until @path reads @want (true) or @timeout_ms passed (false). */
static bool wait_file_eq(const char *path, const char *want, int timeout_ms)
{
	long long end = xt_now_ms() + timeout_ms;
	char buf[256];

	for (;;) {
		if (!xt_read_file(path, buf, sizeof(buf)) && !strcmp(buf, want))
			return true;
		if (xt_now_ms() >= end)
			return false;
		xt_sleep_ms(POLL_MS);
	}
}

/* Poll until @path exists (@exists) or is gone (!@exists). */
static bool wait_path(const char *path, bool exists, int timeout_ms)
{
	long long end = xt_now_ms() + timeout_ms;

	for (;;) {
		if (path_exists(path) == exists)
			return true;
		if (xt_now_ms() >= end)
			return false;
		xt_sleep_ms(POLL_MS);
	}
}

static const char *ib_path(char *buf, size_t len, const char *dev,
			   const char *attr)
{
	snprintf(buf, len, SYS_IB "/%s%s%s", dev, attr ? "/" : "", attr ?: "");
	return buf;
}

#define IBP(dev, attr)	ib_path((char[320]){ 0 }, 320, dev, attr)

static bool dev_exists(const char *dev)
{
	return path_exists(IBP(dev, NULL));
}

static bool dev_gone_within(const char *dev, int timeout_ms)
{
	return wait_path(IBP(dev, NULL), false, timeout_ms);
}

static bool port_state_is(const char *dev, const char *state,
			  const char *phys)
{
	return wait_file_eq(IBP(dev, "ports/1/state"), state, WAIT_MS) &&
	       wait_file_eq(IBP(dev, "ports/1/phys_state"), phys, WAIT_MS);
}

/* Current content of a port file, for failure messages. */
static const char *port_file(const char *dev, const char *attr, char *buf,
			     size_t len)
{
	char path[320];

	snprintf(path, sizeof(path), SYS_IB "/%s/ports/1/%s", dev, attr);
	if (xt_read_file(path, buf, len))
		snprintf(buf, len, "<unreadable>");
	return buf;
}

static int count_ibdevs(void)
{
	FILE *p = popen("ls " SYS_IB " 2>/dev/null | wc -l", "r");
	int n = -1;

	if (!p)
		return -1;
	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

/*
 * Whether some line of @cmd's output contains @a and (if not NULL) @b.
 */
static bool output_has(const char *cmd, const char *a, const char *b)
{
	FILE *p = popen(cmd, "r");
	char line[1024];
	bool found = false;

	if (!p)
		return false;
	while (fgets(line, sizeof(line), p))
		if (strstr(line, a) && (!b || strstr(line, b)))
			found = true;
	pclose(p);
	return found;
}

/* ------------------------------------------------------------ fixture -- */

FIXTURE(xnic) {
	int npairs;
	char a[MAX_PAIRS][IFNAMSIZ];	/* our end: the member link */
	char b[MAX_PAIRS][IFNAMSIZ];	/* the peer */
	bool deleted[MAX_PAIRS];
	int ndevs;
	char dev[MAX_DEVS][DEV_NAME_MAX];
};

/* Create veth pair number self->npairs, both ends up. Return: its index. */
static int pair_add(FIXTURE_DATA(xnic) *self)
{
	unsigned int pid = (unsigned int)getpid() % 10000000U;
	int i = self->npairs;

	if (i >= MAX_PAIRS)
		return -1;
	snprintf(self->a[i], IFNAMSIZ, "xt%u_%ua", pid, (unsigned int)i % 10U);
	snprintf(self->b[i], IFNAMSIZ, "xt%u_%ub", pid, (unsigned int)i % 10U);
	if (xt_sh_show("ip link add %s type veth peer name %s", self->a[i],
	       self->b[i]))
		return -1;
	self->npairs++;
	if (xt_sh_show("ip link set %s up && ip link set %s up", self->a[i],
	       self->b[i]))
		return -1;
	return i;
}

/* xnic_nl_link_add() of type xnic; remembers the device for teardown. */
static int dev_add(FIXTURE_DATA(xnic) *self, const char *name,
		   const char *netdev)
{
	int err = xnic_nl_link_add(name, "xnic", netdev);
	int i;

	if (err)
		return err;
	for (i = 0; i < self->ndevs; i++)
		if (!strcmp(self->dev[i], name))
			return 0;
	if (self->ndevs < MAX_DEVS)
		snprintf(self->dev[self->ndevs++], DEV_NAME_MAX, "%s", name);
	return 0;
}

FIXTURE_SETUP(xnic)
{
	ASSERT_EQ(0, xt_sh("modprobe veth"));
	ASSERT_EQ(0, pair_add(self));
}

FIXTURE_TEARDOWN(xnic)
{
	int i;

	for (i = 0; i < self->ndevs; i++)
		xnic_nl_link_del(self->dev[i]);
	for (i = 0; i < self->npairs; i++)
		if (!self->deleted[i])
			xt_sh("ip link del %s", self->a[i]);
}

/* Assert that @dev exists with its port ACTIVE. */
#define ASSERT_DEV_ACTIVE(dev) do { \
	char _s[64], _p[64]; \
	ASSERT_TRUE(dev_exists(dev)) TH_LOG("%s is gone", dev); \
	ASSERT_TRUE(port_state_is(dev, STATE_ACTIVE, PHYS_LINKUP)) \
		TH_LOG("%s: state '%s', phys_state '%s'", dev, \
		       port_file(dev, "state", _s, sizeof(_s)), \
		       port_file(dev, "phys_state", _p, sizeof(_p))); \
} while (0)

#define ASSERT_PORT(dev, state, phys) do { \
	char _s[64], _p[64]; \
	ASSERT_TRUE(port_state_is(dev, state, phys)) \
		TH_LOG("%s: want '%s'/'%s', have '%s'/'%s'", dev, state, phys, \
		       port_file(dev, "state", _s, sizeof(_s)), \
		       port_file(dev, "phys_state", _p, sizeof(_p))); \
} while (0)

/* -------------------------------------------------------------- tests -- */

TEST_F(xnic, create_delete)
{
	char buf[128];

	ASSERT_FALSE(dev_exists("xnic0")) TH_LOG("xnic0 left over");
	ASSERT_EQ(0, dev_add(self, "xnic0", self->a[0]));
	ASSERT_TRUE(dev_exists("xnic0"));
	ASSERT_DEV_ACTIVE("xnic0");

	ASSERT_EQ(0, xt_read_file(IBP("xnic0", "ports/1/link_layer"), buf,
			       sizeof(buf)));
	EXPECT_STREQ("Ethernet", buf);
	ASSERT_EQ(0, xt_read_file(IBP("xnic0", "node_desc"), buf, sizeof(buf)));
	EXPECT_STREQ("xnic", buf);
	ASSERT_EQ(0, xt_read_file(IBP("xnic0", "fw_ver"), buf, sizeof(buf)));
	EXPECT_STREQ("0.1.0", buf);

	EXPECT_TRUE(output_has("rdma dev show 2>&1", ": xnic0: ", NULL))
		TH_LOG("'rdma dev show' does not list xnic0");
	snprintf(buf, sizeof(buf), "netdev %s ", self->a[0]);
	EXPECT_TRUE(output_has("rdma link show 2>&1", "link xnic0/1 ", buf))
		TH_LOG("'rdma link show' has no 'link xnic0/1 ... %s'", buf);
	EXPECT_TRUE(output_has("rdma link show 2>&1", "link xnic0/1 ",
			       "state ACTIVE"));

	ASSERT_EQ(0, xnic_nl_link_del("xnic0"));
	ASSERT_TRUE(dev_gone_within("xnic0", WAIT_MS));
	EXPECT_FALSE(output_has("rdma dev show 2>&1", ": xnic0: ", NULL));
	/* The member netdev is untouched. */
	EXPECT_EQ(0, xt_sh("ip link show %s", self->a[0]));

	/* The same name and netdev can be used again. */
	ASSERT_EQ(0, dev_add(self, "xnic0", self->a[0]));
	ASSERT_DEV_ACTIVE("xnic0");
	ASSERT_EQ(0, xnic_nl_link_del("xnic0"));
	ASSERT_TRUE(dev_gone_within("xnic0", WAIT_MS));
}

TEST_F(xnic, port_state_follows_carrier)
{
	const char *a = self->a[0], *b = self->b[0];

	ASSERT_EQ(0, dev_add(self, "xnic0", a));
	ASSERT_PORT("xnic0", STATE_ACTIVE, PHYS_LINKUP);

	/* Peer down: our end is up but loses carrier. */
	ASSERT_EQ(0, xt_sh_show("ip link set %s down", b));
	ASSERT_PORT("xnic0", STATE_DOWN, PHYS_POLLING);
	EXPECT_TRUE(output_has("rdma link show 2>&1", "link xnic0/1 ",
			       "state DOWN"));
	ASSERT_EQ(0, xt_sh_show("ip link set %s up", b));
	ASSERT_PORT("xnic0", STATE_ACTIVE, PHYS_LINKUP);

	/* Our end administratively down. */
	ASSERT_EQ(0, xt_sh_show("ip link set %s down", a));
	ASSERT_PORT("xnic0", STATE_DOWN, PHYS_DISABLED);
	ASSERT_EQ(0, xt_sh_show("ip link set %s up", a));
	ASSERT_PORT("xnic0", STATE_ACTIVE, PHYS_LINKUP);

	/* Carrier off from the start: a device created on a dead link. */
	ASSERT_EQ(0, xnic_nl_link_del("xnic0"));
	ASSERT_TRUE(dev_gone_within("xnic0", WAIT_MS));
	ASSERT_EQ(0, xt_sh_show("ip link set %s down", b));
	ASSERT_EQ(0, dev_add(self, "xnic0", a));
	ASSERT_PORT("xnic0", STATE_DOWN, PHYS_POLLING);
	ASSERT_EQ(0, xt_sh_show("ip link set %s up", b));
	ASSERT_PORT("xnic0", STATE_ACTIVE, PHYS_LINKUP);
}

TEST_F(xnic, node_guid_from_mac)
{
	const char *a = self->a[0];
	char buf[128];

	/* Universal/local bit set in the MAC: cleared in the EUI-64. */
	ASSERT_EQ(0, xt_sh_show("ip link set %s address 02:11:22:33:44:55", a));
	ASSERT_EQ(0, dev_add(self, "xnic0", a));
	ASSERT_EQ(0, xt_read_file(IBP("xnic0", "node_guid"), buf, sizeof(buf)));
	EXPECT_STREQ("0011:22ff:fe33:4455", buf);
	ASSERT_EQ(0, xt_read_file(IBP("xnic0", "sys_image_guid"), buf,
			       sizeof(buf)));
	EXPECT_STREQ("0011:22ff:fe33:4455", buf);
	ASSERT_EQ(0, xt_read_file(IBP("xnic0", "ports/1/gids/0"), buf,
			       sizeof(buf)));
	EXPECT_STREQ("fe80:0000:0000:0000:0011:22ff:fe33:4455", buf);
	ASSERT_EQ(0, xnic_nl_link_del("xnic0"));
	ASSERT_TRUE(dev_gone_within("xnic0", WAIT_MS));

	/* And the other way round. */
	ASSERT_EQ(0, xt_sh_show("ip link set %s address 00:aa:bb:cc:dd:ee", a));
	ASSERT_EQ(0, dev_add(self, "xnic0", a));
	ASSERT_EQ(0, xt_read_file(IBP("xnic0", "node_guid"), buf, sizeof(buf)));
	EXPECT_STREQ("02aa:bbff:fecc:ddee", buf);
	ASSERT_EQ(0, xt_read_file(IBP("xnic0", "ports/1/gids/0"), buf,
			       sizeof(buf)));
	EXPECT_STREQ("fe80:0000:0000:0000:02aa:bbff:fecc:ddee", buf);
}

TEST_F(xnic, libuser_lookup)
{
	struct xnic_device_info info;
	struct stat st;

	ASSERT_EQ(0, xt_sh_show("ip link set %s address 02:11:22:33:44:55",
			self->a[0]));
	ASSERT_EQ(0, dev_add(self, "xnic0", self->a[0]));

	ASSERT_EQ(0, xnic_device_lookup("xnic0", &info));
	EXPECT_STREQ("xnic0", info.name);
	EXPECT_EQ(0, strncmp(info.uverbs, "/dev/infiniband/uverbs", 22))
		TH_LOG("uverbs node '%s'", info.uverbs);
	ASSERT_EQ(0, stat(info.uverbs, &st)) TH_LOG("%s: %s", info.uverbs,
						     strerror(errno));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0x001122fffe334455ULL, info.node_guid);
	EXPECT_EQ((unsigned int)XNIC_UVERBS_ABI_VERSION, info.abi_version);

	EXPECT_EQ(-ENODEV, xnic_device_lookup("xnic_nosuch", &info));
	EXPECT_EQ(-EINVAL, xnic_device_lookup("", &info));
	EXPECT_EQ(-EINVAL, xnic_device_lookup("a/b", &info));
	EXPECT_EQ(-EINVAL, xnic_device_lookup(NULL, &info));

	ASSERT_EQ(0, xnic_nl_link_del("xnic0"));
	ASSERT_TRUE(dev_gone_within("xnic0", WAIT_MS));
	EXPECT_EQ(-ENODEV, xnic_device_lookup("xnic0", &info));
}

/*
 * Bad requests: each fails with its exact errno, creates nothing, and
 * leaves the existing device xnic0 (on pair 0) in place and ACTIVE.
 */
FIXTURE(bad) {
	FIXTURE_DATA(xnic) x;
	int ndevs_before;
};

FIXTURE_SETUP(bad)
{
	ASSERT_EQ(0, xt_sh("modprobe veth"));
	ASSERT_EQ(0, pair_add(&self->x));
	ASSERT_EQ(0, dev_add(&self->x, "xnic0", self->x.a[0]));
	ASSERT_DEV_ACTIVE("xnic0");
	self->ndevs_before = count_ibdevs();
	ASSERT_LT(0, self->ndevs_before);
}

FIXTURE_TEARDOWN(bad)
{
	/* Only when the test body passed: the device must have survived. */
	if (_metadata->passed) {
		EXPECT_EQ(self->ndevs_before, count_ibdevs());
		EXPECT_TRUE(dev_exists("xnic0"));
		EXPECT_TRUE(port_state_is("xnic0", STATE_ACTIVE, PHYS_LINKUP));
	}
	xnic_teardown(_metadata, &self->x, NULL);
}

TEST_F(bad, netdev_missing)
{
	EXPECT_EQ(-ENODEV, xnic_nl_link_add("xnic1", "xnic", "xt_nosuchdev"));
	EXPECT_FALSE(dev_exists("xnic1"));
}

TEST_F(bad, loopback)
{
	EXPECT_EQ(-EINVAL, xnic_nl_link_add("xnic1", "xnic", "lo"));
	EXPECT_FALSE(dev_exists("xnic1"));
}

TEST_F(bad, netdev_in_use)
{
	/* Both as a new device and under the existing device's own name. */
	EXPECT_EQ(-EEXIST, xnic_nl_link_add("xnic1", "xnic", self->x.a[0]));
	EXPECT_FALSE(dev_exists("xnic1"));
	EXPECT_EQ(-EEXIST, xnic_nl_link_add("xnic0", "xnic", self->x.a[0]));
}

TEST_F(bad, duplicate_name)
{
	int i = pair_add(&self->x);

	ASSERT_EQ(1, i);
	/* ib_core's assign_name(): a name already in use is -ENFILE. */
	EXPECT_EQ(-ENFILE, xnic_nl_link_add("xnic0", "xnic", self->x.a[i]));
	/* The second netdev was released: it can back a new device. */
	ASSERT_EQ(0, dev_add(&self->x, "xnic1", self->x.a[i]));
	ASSERT_DEV_ACTIVE("xnic1");
	ASSERT_EQ(0, xnic_nl_link_del("xnic1"));
	ASSERT_TRUE(dev_gone_within("xnic1", WAIT_MS));
}

TEST_F(bad, bad_name)
{
	int i = pair_add(&self->x);

	ASSERT_EQ(1, i);
	/* nldev_newlink() refuses '%' (no name templates) and "". */
	EXPECT_EQ(-EINVAL, xnic_nl_link_add("xnic%d", "xnic", self->x.a[i]));
	EXPECT_EQ(-EINVAL, xnic_nl_link_add("", "xnic", self->x.a[i]));
	EXPECT_FALSE(dev_exists("xnic1"));
}

TEST_F(bad, unknown_link_type)
{
	int i = pair_add(&self->x);

	ASSERT_EQ(1, i);
	EXPECT_EQ(-EINVAL, xnic_nl_link_add("xnic1", "nosuchtype",
					    self->x.a[i]));
	EXPECT_FALSE(dev_exists("xnic1"));
}

TEST_F(bad, mtu_too_small)
{
	int i = pair_add(&self->x);
	const char *a = self->x.a[i];

	ASSERT_EQ(1, i);
	ASSERT_EQ(0, xt_sh_show("ip link set %s mtu 68", a));
	EXPECT_EQ(-EINVAL, xnic_nl_link_add("xnic1", "xnic", a));
	EXPECT_FALSE(dev_exists("xnic1"));
	/* The boundary: header + XNIC_MIN_PAYLOAD. */
	ASSERT_EQ(0, xt_sh_show("ip link set %s mtu %d", a, MIN_MTU - 1));
	EXPECT_EQ(-EINVAL, xnic_nl_link_add("xnic1", "xnic", a));
	EXPECT_FALSE(dev_exists("xnic1"));
	ASSERT_EQ(0, xt_sh_show("ip link set %s mtu %d", a, MIN_MTU));
	ASSERT_EQ(0, dev_add(&self->x, "xnic1", a));
	ASSERT_DEV_ACTIVE("xnic1");
	ASSERT_EQ(0, xnic_nl_link_del("xnic1"));
	ASSERT_TRUE(dev_gone_within("xnic1", WAIT_MS));
}

TEST_F(bad, delete_missing)
{
	EXPECT_EQ(-ENODEV, xnic_nl_link_del("xnic_nosuch"));
	EXPECT_EQ(-ENODEV, xnic_nl_link_del(""));
}

TEST_F_TIMEOUT(xnic, netdev_removed_under_device, 60)
{
	long long t0, took;
	int i;

	ASSERT_EQ(0, dev_add(self, "xnic0", self->a[0]));
	ASSERT_DEV_ACTIVE("xnic0");

	/* A leaked netdev reference would make this wait forever. */
	t0 = xt_now_ms();
	ASSERT_EQ(0, xt_sh_show("ip link del %s", self->a[0]));
	took = xt_now_ms() - t0;
	self->deleted[0] = true;
	EXPECT_GT(10000, took) TH_LOG("ip link del took %lld ms", took);
	ASSERT_TRUE(dev_gone_within("xnic0", WAIT_MS))
		TH_LOG("xnic0 still present after its netdev was removed");
	EXPECT_EQ(-ENODEV, xnic_nl_link_del("xnic0"));

	/* Again, with the peer end removed instead. */
	i = pair_add(self);
	ASSERT_EQ(1, i);
	ASSERT_EQ(0, dev_add(self, "xnic0", self->a[i]));
	ASSERT_DEV_ACTIVE("xnic0");
	t0 = xt_now_ms();
	ASSERT_EQ(0, xt_sh_show("ip link del %s", self->b[i]));
	took = xt_now_ms() - t0;
	self->deleted[i] = true;
	EXPECT_GT(10000, took) TH_LOG("ip link del took %lld ms", took);
	ASSERT_TRUE(dev_gone_within("xnic0", WAIT_MS));

	/* A fresh netdev works under the same name. */
	i = pair_add(self);
	ASSERT_EQ(2, i);
	ASSERT_EQ(0, dev_add(self, "xnic0", self->a[i]));
	ASSERT_DEV_ACTIVE("xnic0");
	ASSERT_EQ(0, xnic_nl_link_del("xnic0"));
	ASSERT_TRUE(dev_gone_within("xnic0", WAIT_MS));
}

TEST_F_TIMEOUT(xnic, many_devices, 180)
{
	char name[DEV_NAME_MAX];
	int i, before = count_ibdevs();

	ASSERT_LE(0, before);
	for (i = 1; i < 8; i++)
		ASSERT_EQ(i, pair_add(self));
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "xnicm%d", i);
		ASSERT_EQ(0, dev_add(self, name, self->a[i])) TH_LOG("%s", name);
	}
	EXPECT_EQ(before + 8, count_ibdevs());
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "xnicm%d", i);
		ASSERT_DEV_ACTIVE(name);
	}
	/* Each device's port follows its own link only. */
	ASSERT_EQ(0, xt_sh_show("ip link set %s down", self->b[3]));
	ASSERT_PORT("xnicm3", STATE_DOWN, PHYS_POLLING);
	ASSERT_PORT("xnicm4", STATE_ACTIVE, PHYS_LINKUP);
	ASSERT_EQ(0, xt_sh_show("ip link set %s up", self->b[3]));
	ASSERT_PORT("xnicm3", STATE_ACTIVE, PHYS_LINKUP);

	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "xnicm%d", i);
		ASSERT_EQ(0, xnic_nl_link_del(name)) TH_LOG("%s", name);
	}
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "xnicm%d", i);
		ASSERT_TRUE(dev_gone_within(name, WAIT_MS)) TH_LOG("%s", name);
	}
	EXPECT_EQ(before, count_ibdevs());
}

int main(int argc, char **argv)
{
	if (geteuid() != 0) {
		printf("1..0 # SKIP must run as root (use tools/xnic-vm)\n");
		return KSFT_SKIP;
	}
	if (!path_exists("/sys/module/xnic") &&
	    xt_sh("modprobe xnic") != 0) {
		printf("1..0 # SKIP xnic.ko not loaded and not loadable\n");
		return KSFT_SKIP;
	}
	return test_harness_run(argc, argv);
}
