// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic_credit_test - credit-based flow control, traffic classes and
 * fairness end to end, in the test VM: four xnic devices in a full mesh of
 * veth pairs (tools/xnic-mesh), device 0 the receiver.
 *
 *  incast          devices 1, 2 and 3 each WRITE to device 0 at once:
 *                  no receiver drop, no credit violation, every byte
 *                  placed, Jain's index of the bytes completed over the
 *                  same interval >= 0.95, and the credit accounts of every
 *                  sender balance (granted == consumed + returned) once
 *                  the QPs are gone;
 *  priority        8 B WRITE latency of a class 0 QP alone and while two
 *                  class 1 QPs saturate the same link (rounds of each,
 *                  interleaved: cr_lat_loaded()), and the bulk's MB/s
 *                  alone and beside it (BENCH lines; the test asserts
 *                  that both progress, and that the bulk's frames carry at
 *                  most class1_seg_busy bytes beside class 0 and more
 *                  alone);
 *  priority_inline the same with every post of the class 1 QPs followed
 *                  by the wakeup syscall (inline sends): class 0 sends
 *                  inline, class 1 inline sends are left to the engine
 *                  while class 0 is backlogged (counter
 *                  tx_inline_prio_deferred), and the bulk still progresses
 *                  (BENCH credit_c0_lat_8B_inline_ratio);
 *  large_vs_small  one flow of 1 MiB messages and four of 8 KiB share a
 *                  link: each small flow gets at least half of an equal
 *                  share of the bytes;
 *  credit_probe    a sender with too little credit and the credit updates
 *                  of ACKs lost still finishes (credit requests);
 *  hostile_credit  forged and malformed CREDIT frames injected with an
 *                  AF_PACKET socket are dropped and counted, a flood of
 *                  random updates cannot break a flow or its accounts;
 *  knob_ranges     module parameters refuse values out of their range
 *                  (EINVAL, value kept) and take the ends of it.
 *
 * Shares are measured over seconds, not speeds: they hold under TCG.
 * Lines "BENCH <name> <value> <unit>" are read by tools/xnic-bench.
 */
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xnic_lib.h"
#include "kmod/credit_logic.h"
#include "xt_flow.h"
#include "xt_harness.h"

#define CR_PSN		0x10000

static const struct xt_mesh_cfg cr_cfg = {
	.prefix = "xcr",
	.nlink = 1,
	.psn = CR_PSN,
	.psn_back = 7,
};

XT_FLOW_FIXTURE(cr, &cr_cfg)

/* Accounts of device @d: granted - consumed - returned. */
static int64_t cr_balance(struct xt_mesh *e, int d)
{
	return (int64_t)(xt_mesh_cnt(e, d, "credit_granted") -
			 xt_mesh_cnt(e, d, "credit_consumed") -
			 xt_mesh_cnt(e, d, "credit_returned"));
}

TEST_F_TIMEOUT(cr, incast, 600)
{
	struct xt_mesh *e = &self->env;
	struct xt_flow *f = self->flow;
	uint64_t drops0, viol0, oow0;
	unsigned int jain;
	int k;

	/*
	 * A small pool, so that credit is what limits the senders: 96
	 * frames shared by three flows.
	 */
	ASSERT_EQ(0, xt_write_file("/sys/module/xnic/parameters/credit_pool",
				   "96"));
	drops0 = xt_mesh_cnt(e, 0, "rx_credit_drops");
	viol0 = xt_mesh_cnt(e, 0, "rx_credit_violations");
	oow0 = xt_mesh_cnt(e, 0, "rx_out_of_window");
	for (k = 0; k < 3; k++)
		ASSERT_EQ(0, xt_flow_create(e, &f[k], k + 1, 0, 65536, 16,
					    XNIC_TCLASS_BULK));
	k = xt_flow_run(f, 3, 1000, 7000);
	xt_write_file("/sys/module/xnic/parameters/credit_pool", "768");
	ASSERT_EQ(0, k) {
		for (k = 0; k < 3; k++)
			TH_LOG("flow %d: err %d done %llu", k, f[k].err,
			       (unsigned long long)f[k].done);
	}
	jain = xt_flow_jain(f, 3);
	for (k = 0; k < 3; k++) {
		TH_LOG("flow %d -> 0: %llu bytes in the window, %llu WRITEs",
		       k + 1, (unsigned long long)f[k].win_bytes,
		       (unsigned long long)f[k].done);
		EXPECT_LT(0, f[k].win_bytes);
		EXPECT_EQ(-1, xt_flow_verify(&f[k]));
		/* while the flows live, unused credit is >= 0 */
		EXPECT_LE(0, cr_balance(e, k + 1));
	}
	printf("BENCH credit_incast_jain %.3f index\n", jain / 1000.0);
	printf("BENCH credit_incast_rx_drops %llu frames\n",
	       (unsigned long long)(xt_mesh_cnt(e, 0, "rx_credit_drops") - drops0));
	/* the test runs in a child that leaves with _exit() */
	fflush(stdout);
	EXPECT_LE(950, jain);
	EXPECT_EQ(drops0, xt_mesh_cnt(e, 0, "rx_credit_drops"));
	EXPECT_EQ(viol0, xt_mesh_cnt(e, 0, "rx_credit_violations"));
	EXPECT_EQ(oow0, xt_mesh_cnt(e, 0, "rx_out_of_window"));
	EXPECT_LT(0, xt_mesh_cnt(e, 0, "credit_advertised"));
	/* every credit given back once the QPs are gone: no leak, no double */
	for (k = 0; k < 3; k++)
		xt_flow_destroy(&f[k]);
	for (k = 1; k < XT_MESH_NDEV; k++) {
		/* how often credit, not the PSN window, held it back */
		TH_LOG("dev %d: granted %llu consumed %llu returned %llu, %llu stalls, %llu ns",
		       k,
		       (unsigned long long)xt_mesh_cnt(e, k, "credit_granted"),
		       (unsigned long long)xt_mesh_cnt(e, k, "credit_consumed"),
		       (unsigned long long)xt_mesh_cnt(e, k, "credit_returned"),
		       (unsigned long long)xt_mesh_cnt(e, k, "credit_stalls"),
		       (unsigned long long)xt_mesh_cnt(e, k, "credit_stall_ns"));
		EXPECT_EQ(0, cr_balance(e, k));
		EXPECT_LT(0, xt_mesh_cnt(e, k, "credit_consumed"));
		EXPECT_LT(0, xt_mesh_cnt(e, k, "tx_class1_bytes"));
	}
}

struct cr_bulk {
	struct xt_flow *f;
	int n;
	bool spin;
	atomic_int stop, pause, drained;
	int err;
};

/*
 * Keeps the bulk flows' windows full (depth x message bytes each, far more
 * than the link moves in the 200 us it waits between two looks). Unless
 * @b->spin (post each WRITE the moment one completes) it waits off the
 * CPU: the engine plays the NIC on the VM's two vCPUs, and a third
 * busy-polling thread beside the measuring one would take the NIC's CPU
 * away, which no bulk sender can do to a real NIC. While @b->pause it
 * only reaps, and sets @b->drained once nothing is outstanding.
 */
static void *cr_bulk_thread(void *arg)
{
	struct cr_bulk *b = arg;
	int k;

	while (!atomic_load(&b->stop)) {
		bool pause = atomic_load(&b->pause), drained = pause;

		for (k = 0; k < b->n; k++) {
			if (xt_flow_pump(&b->f[k], true, !pause)) {
				b->err = -1;
				return NULL;
			}
			drained &= b->f[k].done == b->f[k].posted;
		}
		atomic_store(&b->drained, drained);
		if (drained)
			usleep(5000);
		else if (!b->spin)
			usleep(200);
	}
	return NULL;
}

/* Bytes the bulk flows completed so far. */
static uint64_t cr_bulk_bytes(const struct cr_bulk *b)
{
	uint64_t n = 0;
	int k;

	for (k = 0; k < b->n; k++)
		n += b->f[k].done * b->f[k].msg;
	return n;
}

/* class1_seg_busy the priority test sets (the default) */
#define CR_SEG_BUSY	"2048"

/* Device 1's class 1 payload bytes and frames (PSNs of any class) sent. */
struct cr_seg {
	uint64_t bytes1, psns;
};

/* Both at one instant: tens of frames go out between two reads. */
static int cr_seg_read(struct xt_mesh *e, struct cr_seg *s)
{
	static const char *const names[] = {
		"tx_class1_bytes", "credit_consumed"
	};
	uint64_t v[2];

	if (xt_counters(e->dev[1].name, names, v, 2))
		return -1;
	s->bytes1 = v[0];
	s->psns = v[1];
	return 0;
}

/*
 * Mean class 1 payload per frame between @a and @b, bytes, given the
 * @psns0 class 0 frames sent meanwhile (one per 8 B WRITE).
 */
static double cr_seg_avg(const struct cr_seg *a, const struct cr_seg *b,
			 uint64_t psns0)
{
	uint64_t n = b->psns - a->psns;

	if (n <= psns0)
		return 0;
	return (double)(b->bytes1 - a->bytes1) / (double)(n - psns0);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* Median of the @n values at @t (sorts them). */
static long long cr_median(long long *t, int n)
{
	qsort(t, n, sizeof(*t), cmp_ll);
	return t[n / 2];
}

/*
 * @iters 8 B WRITE completion times of @f (inline, signaled) into @t, us;
 * with @f->wakeup, each post is followed by the wakeup syscall. Returns 0
 * or -1.
 */
static int cr_lat_samples(struct xt_flow *f, int iters, long long *t)
{
	uint64_t v = f->posted;
	int k;

	for (k = 0; k < iters; k++) {
		long long t0 = xt_now_us(), end = xt_now_ms() + XT_WAIT_MS;
		uint64_t want = f->done + 1;

		v++;
		if (xnic_post_write_inline(f->qp[0], &v, 8,
					   (uintptr_t)f->dbuf.p,
					   f->dbuf.mr->rkey, v,
					   XNIC_WQE_F_SIGNALED))
			return -1;
		if (f->wakeup)
			xnic_qp_wakeup(f->qp[0]);
		f->posted++;
		while (f->done < want)
			if (xt_flow_pump(f, false, false) ||
			    xt_now_ms() > end)
				return -1;
		t[k] = xt_now_us() - t0;
	}
	return 0;
}

/* Median 8 B WRITE completion time of @f, us (cr_lat_samples()); -1. */
static long long cr_lat(struct xt_flow *f, int iters)
{
	long long *t = calloc(iters, sizeof(*t)), med = -1;

	if (t && !cr_lat_samples(f, iters, t))
		med = cr_median(t, iters);
	free(t);
	return med;
}

/*
 * Rounds of cr_lat_loaded(), the 8 B WRITEs measured per phase of a round
 * and those before them left out (the first WRITEs after the bulk stopped
 * or started are slower: caches, an engine still asleep or awake)
 */
#define CR_ROUNDS	20
#define CR_ROUND_N	20
#define CR_WARM_N	5
/* ms given the engine after the bulk stopped or started */
#define CR_SETTLE_MS	10

/* Until @b->drained is @want (at most XT_WAIT_MS); 0 or -1. */
static int cr_bulk_wait(struct cr_bulk *b, int want)
{
	long long end = xt_now_ms() + XT_WAIT_MS;

	while (atomic_load(&b->drained) != want)
		if (b->err || xt_now_ms() > end)
			return -1;
		else
			xt_sleep_ms(1);
	xt_sleep_ms(CR_SETTLE_MS);
	return 0;
}

/* One phase of a round: CR_ROUND_N WRITEs into @t, after the warm-up. */
static int cr_lat_phase(struct xt_flow *f0, long long *t)
{
	return cr_lat_samples(f0, CR_WARM_N, t) ||
	       cr_lat_samples(f0, CR_ROUND_N, t);
}

/* Class 0 latency alone and under class 1 load (cr_lat_loaded()). */
struct cr_lat_pair {
	long long idle, loaded;	/* medians, us */
	double ratio;		/* median of the rounds' loaded / idle */
};

/*
 * The class 0 flow @f0's 8 B WRITE latency without and with the bulk @b
 * running, measured in CR_ROUNDS rounds: CR_ROUND_N WRITEs with the bulk
 * paused and drained, then CR_ROUND_N with it running. Each round's ratio
 * compares two medians taken within a few hundred ms, so that both see
 * the same host: under TCG the VM's speed changes by 2x from one second
 * to the next. Returns 0 or -1.
 */
static int cr_lat_loaded(struct xt_flow *f0, struct cr_bulk *b,
			 struct cr_lat_pair *res)
{
	long long *ti = calloc(2 * CR_ROUNDS * CR_ROUND_N, sizeof(*ti));
	long long *tl = ti + CR_ROUNDS * CR_ROUND_N, ri, rl;
	long long ratio[CR_ROUNDS];	/* per mille */
	int r, err = -1;

	if (!ti)
		return -1;
	for (r = 0; r < CR_ROUNDS; r++) {
		long long *pi = ti + r * CR_ROUND_N, *pl = tl + r * CR_ROUND_N;

		atomic_store(&b->pause, 1);
		if (cr_bulk_wait(b, 1) || cr_lat_phase(f0, pi))
			goto out;
		atomic_store(&b->pause, 0);
		if (cr_bulk_wait(b, 0) || cr_lat_phase(f0, pl))
			goto out;
		ri = cr_median(pi, CR_ROUND_N);
		rl = cr_median(pl, CR_ROUND_N);
		ratio[r] = rl * 1000 / (ri ? ri : 1);
	}
	res->idle = cr_median(ti, CR_ROUNDS * CR_ROUND_N);
	res->loaded = cr_median(tl, CR_ROUNDS * CR_ROUND_N);
	res->ratio = cr_median(ratio, CR_ROUNDS) / 1000.0;
	err = 0;
out:
	atomic_store(&b->pause, 0);
	free(ti);
	return err;
}

TEST_F_TIMEOUT(cr, priority, 600)
{
	struct xt_mesh *e = &self->env;
	struct xt_flow *f = self->flow;
	struct cr_bulk b = { .f = &f[1], .n = 2 };
	struct cr_lat_pair lat;
	long long t0, t1, t2;
	uint64_t before, bytes0, bytes1, bytes2;
	double seg_alone, seg_beside;
	struct cr_seg s0, s1, sb, s2;
	pthread_t th;
	int k;

	ASSERT_EQ(0, xt_write_file("/sys/module/xnic/parameters/class1_seg_busy",
				   CR_SEG_BUSY));
	ASSERT_EQ(0, xt_flow_create(e, &f[0], 1, 0, 4096, 4,
				    XNIC_TCLASS_LATENCY));
	for (k = 1; k <= 2; k++)
		ASSERT_EQ(0, xt_flow_create(e, &f[k], 1, 0, 65536, 32,
					    XNIC_TCLASS_BULK));
	ASSERT_EQ(0, pthread_create(&th, NULL, cr_bulk_thread, &b));
	xt_sleep_ms(500);
	/* the bulk alone for a second, then beside the class 0 QP */
	bytes0 = cr_bulk_bytes(&b);
	ASSERT_EQ(0, cr_seg_read(e, &s0));
	t0 = xt_now_us();
	xt_sleep_ms(1000);
	bytes1 = cr_bulk_bytes(&b);
	ASSERT_EQ(0, cr_seg_read(e, &s1));
	t1 = xt_now_us();
	before = f[1].done + f[2].done;
	/* class 1 frames fetched before class 0 began are whole: skip them */
	ASSERT_LT(0, cr_lat(&f[0], 20));
	ASSERT_EQ(0, cr_seg_read(e, &sb));
	ASSERT_LT(0, cr_lat(&f[0], 300));
	bytes2 = cr_bulk_bytes(&b);
	ASSERT_EQ(0, cr_seg_read(e, &s2));
	t2 = xt_now_us();
	/* the latency figures: alone and loaded, interleaved */
	k = cr_lat_loaded(&f[0], &b, &lat);
	atomic_store(&b.stop, 1);
	pthread_join(th, NULL);
	ASSERT_EQ(0, b.err);
	ASSERT_EQ(0, k);
	/* the bulk flows kept going while the class 0 QP was served */
	EXPECT_LT(before, f[1].done + f[2].done);
	for (k = 1; k <= 2; k++) {
		EXPECT_EQ(0, xt_flow_drain(&f[k]));
		EXPECT_EQ(-1, xt_flow_verify(&f[k]));
	}
	TH_LOG("class 0 8 B WRITE: %lld us alone, %lld us under load",
	       lat.idle, lat.loaded);
	printf("BENCH credit_c0_lat_8B_unloaded %lld us\n", lat.idle);
	printf("BENCH credit_c0_lat_8B_loaded %lld us\n", lat.loaded);
	printf("BENCH credit_c0_lat_8B_ratio %.2f x\n", lat.ratio);
	/* bytes completed per us = MB/s */
	printf("BENCH credit_c1_bulk_alone %.1f MB/s\n",
	       (double)(bytes1 - bytes0) / (double)(t1 - t0));
	printf("BENCH credit_c1_bulk_beside_c0 %.1f MB/s\n",
	       (double)(bytes2 - bytes1) / (double)(t2 - t1));
	seg_alone = cr_seg_avg(&s0, &s1, 0);
	seg_beside = cr_seg_avg(&sb, &s2, 300);
	printf("BENCH credit_c1_frame_alone %.0f bytes\n", seg_alone);
	printf("BENCH credit_c1_frame_beside_c0 %.0f bytes\n", seg_beside);
	fflush(stdout);
	EXPECT_LT(0, xt_mesh_cnt(e, 1, "tx_class0_bytes"));
	EXPECT_LT(0, xt_mesh_cnt(e, 1, "tx_class1_bytes"));
	/*
	 * Bulk frames are cut while class 0 sends, whole alone. 2% slack: a
	 * host stall of over 100 ms between two class 0 WRITEs (the VM's
	 * vCPUs descheduled) lets a few whole frames through, rightly.
	 */
	EXPECT_GE(atof(CR_SEG_BUSY) * 1.02, seg_beside);
	EXPECT_LT(atof(CR_SEG_BUSY), seg_alone);
}

/*
 * Inline sends under the class scheduler. f[0]: class 0, 8 B latency;
 * f[1], f[2]: class 1 bulk, every post followed by the wakeup syscall so
 * that they send inline (xnic_engine_post_send()); f[3]: class 0 with a
 * standing backlog of 64 KiB WRITEs. Asserted: counters, not speed.
 */
TEST_F_TIMEOUT(cr, priority_inline, 600)
{
	struct xt_mesh *e = &self->env;
	struct xt_flow *f = self->flow;
	struct cr_bulk b = { .f = &f[1], .n = 2, .spin = true };
	uint64_t in0, in0_idle, in0_load, in1, prio0, prio_lat, prio,
		 bulk0, bulk1, c0, drr0;
	struct cr_lat_pair lat;
	long long start;
	pthread_t th;
	int k, err;

	ASSERT_EQ(0, xt_flow_create(e, &f[0], 1, 0, 4096, 4,
				    XNIC_TCLASS_LATENCY));
	/*
	 * 16 KiB WRITEs (four frames): each post's wakeup syscall finds the
	 * previous ones sent and sends the new one inline.
	 */
	for (k = 1; k <= 2; k++) {
		ASSERT_EQ(0, xt_flow_create(e, &f[k], 1, 0, 16384, 16,
					    XNIC_TCLASS_BULK));
		f[k].wakeup = true;
	}
	ASSERT_EQ(0, xt_flow_create(e, &f[3], 1, 0, 65536, 8,
				    XNIC_TCLASS_LATENCY));
	f[0].wakeup = true;

	/*
	 * alone: class 0 posts go out inline (until the engine takes them
	 * as a stream: xnic_engine_stream()), also once the QP's frames
	 * spent its deficit: the wakeup syscall then starts its next turn
	 * (before, every few hundred WRITEs went to the engine)
	 */
	in0 = xt_mesh_cnt(e, 1, "tx_inline_class0_frames");
	in1 = xt_mesh_cnt(e, 1, "tx_inline_class1_frames");
	prio0 = xt_mesh_cnt(e, 1, "tx_inline_prio_deferred");
	drr0 = xt_mesh_cnt(e, 1, "tx_inline_drr_deferred");
	ASSERT_LT(0, cr_lat(&f[0], 2000));
	in0_idle = xt_mesh_cnt(e, 1, "tx_inline_class0_frames") - in0;
	EXPECT_LT(0, in0_idle);
	EXPECT_EQ(drr0, xt_mesh_cnt(e, 1, "tx_inline_drr_deferred"));

	/* under inline class 1 bulk, interleaved with none */
	ASSERT_EQ(0, pthread_create(&th, NULL, cr_bulk_thread, &b));
	xt_sleep_ms(500);
	in0 = xt_mesh_cnt(e, 1, "tx_inline_class0_frames");
	err = cr_lat_loaded(&f[0], &b, &lat);
	in0_load = xt_mesh_cnt(e, 1, "tx_inline_class0_frames") - in0;
	prio_lat = xt_mesh_cnt(e, 1, "tx_inline_prio_deferred") - prio0;

	/*
	 * And with class 0 backlogged: class 1 inline sends wait. At least
	 * 2 s, and until a deferral was seen (at most 20 s).
	 */
	bulk0 = f[1].done + f[2].done;
	prio0 = xt_mesh_cnt(e, 1, "tx_inline_prio_deferred");
	start = xt_now_ms();
	do {
		for (k = 0; k < 64; k++)
			if (xt_flow_pump(&f[3], false, true))
				break;
		prio = xt_mesh_cnt(e, 1, "tx_inline_prio_deferred") - prio0;
	} while (!f[3].err &&
		 (xt_now_ms() - start < 2000 ||
		  (!prio && xt_now_ms() - start < 20000)));
	c0 = f[3].done;
	bulk1 = f[1].done + f[2].done;
	atomic_store(&b.stop, 1);
	pthread_join(th, NULL);
	ASSERT_EQ(0, b.err);
	ASSERT_EQ(0, f[3].err);
	ASSERT_EQ(0, err);
	for (k = 1; k <= 3; k++) {
		EXPECT_EQ(0, xt_flow_drain(&f[k]));
		EXPECT_EQ(-1, xt_flow_verify(&f[k]));
	}
	in1 = xt_mesh_cnt(e, 1, "tx_inline_class1_frames") - in1;
	TH_LOG("class 0 8 B WRITE: %lld us alone, %lld us under inline bulk (%llu + %llu frames inline, %llu class 1 deferrals)",
	       lat.idle, lat.loaded, (unsigned long long)in0_idle,
	       (unsigned long long)in0_load, (unsigned long long)prio_lat);
	TH_LOG("class 0 backlogged %lld ms: %llu class 0 WRITEs, %llu bulk WRITEs, %llu class 1 inline sends deferred; %llu class 1 frames inline in all",
	       xt_now_ms() - start, (unsigned long long)c0,
	       (unsigned long long)(bulk1 - bulk0),
	       (unsigned long long)prio, (unsigned long long)in1);
	printf("BENCH credit_c0_lat_8B_inline_unloaded %lld us\n", lat.idle);
	printf("BENCH credit_c0_lat_8B_inline_loaded %lld us\n", lat.loaded);
	printf("BENCH credit_c0_lat_8B_inline_ratio %.2f x\n", lat.ratio);
	fflush(stdout);
	/* the mechanism: class 1 gave way inline, and still progressed */
	EXPECT_LT(0, prio);
	EXPECT_LT(0, c0);
	EXPECT_LT(bulk0, bulk1);
	EXPECT_LT(0, in1);
}

TEST_F_TIMEOUT(cr, large_vs_small, 600)
{
	struct xt_mesh *e = &self->env;
	struct xt_flow *f = self->flow;
	uint64_t total = 0;
	int k;

	ASSERT_EQ(0, xt_flow_create(e, &f[0], 1, 0, 1 << 20, 8,
				    XNIC_TCLASS_BULK));
	for (k = 1; k <= 4; k++)
		ASSERT_EQ(0, xt_flow_create(e, &f[k], 1, 0, 8192, 256,
					    XNIC_TCLASS_BULK));
	ASSERT_EQ(0, xt_flow_run(f, 5, 1000, 7000));
	for (k = 0; k < 5; k++)
		total += f[k].win_bytes;
	for (k = 0; k < 5; k++) {
		TH_LOG("flow %d (%zu B messages): %llu bytes, %.2f of an equal share",
		       k, f[k].msg, (unsigned long long)f[k].win_bytes,
		       f[k].win_bytes * 5.0 / (double)total);
		EXPECT_EQ(-1, xt_flow_verify(&f[k]));
	}
	printf("BENCH credit_large_vs_small_jain %.3f index\n",
	       xt_flow_jain(f, 5) / 1000.0);
	fflush(stdout);
	for (k = 1; k <= 4; k++)
		EXPECT_LE(total / 10, f[k].win_bytes);
	(void)e;
}

TEST_F_TIMEOUT(cr, credit_probe, 300)
{
	struct xt_mesh *e = &self->env;
	struct xt_flow *f = self->flow;
	uint64_t req0 = xt_mesh_cnt(e, 1, "credit_requests_sent");

	/*
	 * credit_window 8 at the receiver; 1 MiB WRITEs from a sender whose
	 * ACKs mostly vanish (netem loss on the way back): the flow stalls
	 * on credit again and again and must still finish.
	 */
	ASSERT_EQ(0, xt_sh("../tools/xnictl set %s credit_window 8",
			   e->dev[0].name));
	ASSERT_EQ(0, xt_flow_create(e, &f[0], 1, 0, 1 << 20, 2,
				    XNIC_TCLASS_BULK));
	if (xt_sh("tc qdisc add dev m%dx0y1 root netem loss 30%%", e->tag))
		TH_LOG("no netem: running without loss");
	ASSERT_EQ(0, xt_flow_run(f, 1, 0, 3000));
	xt_sh("tc qdisc del dev m%dx0y1 root", e->tag);
	EXPECT_EQ(-1, xt_flow_verify(&f[0]));
	EXPECT_LT(0, f[0].done);
	TH_LOG("%llu WRITEs, %llu stalls, %llu credit requests",
	       (unsigned long long)f[0].done,
	       (unsigned long long)xt_mesh_cnt(e, 1, "credit_stalls"),
	       (unsigned long long)(xt_mesh_cnt(e, 1, "credit_requests_sent") -
				    req0));
	EXPECT_LT(0, xt_mesh_cnt(e, 1, "credit_stalls"));
	EXPECT_EQ(0, xt_mesh_cnt(e, 0, "rx_credit_violations"));
	xt_flow_destroy(&f[0]);
	EXPECT_EQ(0, cr_balance(e, 1));
}

/* Parse "aa:bb:cc:dd:ee:ff" from /sys/class/net/IF/address. */
static int cr_mac(const char *ifname, uint8_t mac[6])
{
	char path[128], buf[64];
	unsigned int b[6];
	int k;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	if (xt_read_file(path, buf, sizeof(buf)) ||
	    sscanf(buf, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5]) != 6)
		return -1;
	for (k = 0; k < 6; k++)
		mac[k] = (uint8_t)b[k];
	return 0;
}

/*
 * Frames sent from device @from's end of the veth towards device @to, as
 * device @from would: the Ethernet header and a packet socket that only
 * sends (protocol 0: it takes no frames in). One socket for many frames:
 * closing a packet socket waits for an RCU grace period (packet_release()),
 * tens of ms under TCG.
 */
struct cr_tap {
	uint8_t eth[14];
	int sock;
};

static int cr_tap_open(struct cr_tap *t, struct xt_mesh *e, int from, int to)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	char ifn[IFNAMSIZ], ift[IFNAMSIZ];

	xt_mesh_ifname(e, from, to, 0, ifn, sizeof(ifn));
	xt_mesh_ifname(e, to, from, 0, ift, sizeof(ift));
	if (cr_mac(ift, t->eth) || cr_mac(ifn, t->eth + 6))
		return -EINVAL;
	t->eth[12] = XNIC_ETH_P >> 8;
	t->eth[13] = XNIC_ETH_P & 0xff;
	sll.sll_ifindex = (int)if_nametoindex(ifn);
	t->sock = socket(AF_PACKET, SOCK_RAW, 0);
	if (t->sock < 0)
		return -errno;
	if (bind(t->sock, (struct sockaddr *)&sll, sizeof(sll))) {
		close(t->sock);
		return -errno;
	}
	return 0;
}

/* Send one frame with header @i and @plen payload bytes (zeros). */
static int cr_inject(const struct cr_tap *t, const struct xnic_wire_info *i,
		     size_t plen)
{
	uint8_t frame[14 + XNIC_WIRE_HDR_LEN + 64] = { 0 };
	struct xnic_wire_hdr *h = (struct xnic_wire_hdr *)(frame + 14);
	size_t len = 14 + XNIC_WIRE_HDR_LEN + plen;

	if (plen > 64)
		return -EINVAL;
	memcpy(frame, t->eth, sizeof(t->eth));
	xnic_wire_encode(h, i);
	xnic_wire_seal(h, XNIC_WIRE_HDR_LEN + plen);
	return send(t->sock, frame, len, 0) == (ssize_t)len ? 0 : -errno;
}

/* Wait until counter @name of device @d exceeds @v; return its value. */
static uint64_t cr_wait_cnt(struct xt_mesh *e, int d, const char *name,
			    uint64_t v)
{
	long long end = xt_now_ms() + 5000;
	uint64_t now;

	while ((now = xt_mesh_cnt(e, d, name)) <= v && xt_now_ms() < end)
		xt_sleep_ms(10);
	return now;
}

TEST_F_TIMEOUT(cr, hostile_credit, 300)
{
	struct xt_mesh *e = &self->env;
	struct xt_flow *f = self->flow;
	struct xnic_wire_info i = { 0 };
	struct cr_tap to0, to1;	/* from device 1 to 0, from 0 to 1 */
	uint64_t v;
	unsigned int seed = 1234;
	int k;

	ASSERT_EQ(0, xt_flow_create(e, &f[0], 1, 0, 65536, 8,
				    XNIC_TCLASS_BULK));
	/* some traffic first: both sides started */
	ASSERT_EQ(0, xt_flow_run(f, 1, 0, 500));
	ASSERT_EQ(0, cr_tap_open(&to0, e, 1, 0));
	ASSERT_EQ(0, cr_tap_open(&to1, e, 0, 1));

	i.opcode = XNIC_OP_CREDIT;
	i.src_node = e->dev[1].node_id;
	i.dst_node = e->dev[0].node_id;
	i.src_qpn = f[0].qp[0]->qpn;
	i.dst_qpn = f[0].qp[1]->qpn;

	/* a request from the peer QP is answered with an update */
	v = xt_mesh_cnt(e, 0, "credit_updates_sent");
	i.flags = XNIC_WF_CREDIT_REQ;
	ASSERT_EQ(0, cr_inject(&to0, &i, 0));
	EXPECT_LT(v, cr_wait_cnt(e, 0, "credit_updates_sent", v));

	/* from a QP that is not the peer: dropped as such */
	v = xt_mesh_cnt(e, 0, "rx_bad_qp_state");
	i.src_qpn = f[0].qp[0]->qpn ^ 1;
	ASSERT_EQ(0, cr_inject(&to0, &i, 0));
	EXPECT_LT(v, cr_wait_cnt(e, 0, "rx_bad_qp_state", v));

	/* an update for a requester that never started: dropped */
	v = xt_mesh_cnt(e, 0, "rx_bad_qp_state");
	i.src_qpn = f[0].qp[0]->qpn;
	i.flags = 0;
	i.credits = 0xffff;
	ASSERT_EQ(0, cr_inject(&to0, &i, 0));
	EXPECT_LT(v, cr_wait_cnt(e, 0, "rx_bad_qp_state", v));

	/* with a payload, or a flag CREDIT does not take: malformed */
	v = xt_mesh_cnt(e, 0, "rx_malformed");
	i.payload_len = 8;
	ASSERT_EQ(0, cr_inject(&to0, &i, 8));
	i.payload_len = 0;
	i.flags = XNIC_WF_ACKREQ;
	ASSERT_EQ(0, cr_inject(&to0, &i, 0));
	EXPECT_LE(v + 2, cr_wait_cnt(e, 0, "rx_malformed", v + 1));

	/*
	 * A flood of random updates "from device 0" at the sender's
	 * requester, some from its peer QP: the flow goes on, every byte is
	 * placed, and the accounts still balance.
	 */
	i.src_node = e->dev[0].node_id;
	i.dst_node = e->dev[1].node_id;
	i.flags = 0;
	for (k = 0; k < 2000; k++) {
		i.src_qpn = rand_r(&seed) % 4 ? f[0].qp[1]->qpn :
			    (uint32_t)rand_r(&seed) & XNIC_QPN_MASK;
		i.dst_qpn = f[0].qp[0]->qpn;
		i.psn = CR_PSN + (uint32_t)rand_r(&seed) % 100000 - 50000;
		i.credits = (uint16_t)rand_r(&seed);
		ASSERT_EQ(0, cr_inject(&to1, &i, 0));
		if (k % 100 == 0)
			ASSERT_EQ(0, xt_flow_run(f, 1, 0, 20));
	}
	close(to0.sock);
	close(to1.sock);
	ASSERT_EQ(0, xt_flow_run(f, 1, 0, 1000));
	EXPECT_EQ(-1, xt_flow_verify(&f[0]));
	EXPECT_EQ(0, xt_mesh_cnt(e, 0, "rx_credit_drops"));
	xt_flow_destroy(&f[0]);
	EXPECT_EQ(0, cr_balance(e, 1));
	EXPECT_LT(0, xt_mesh_cnt(e, 1, "credit_updates_rcvd"));
}

/* A module parameter, values it must refuse and values it must take. */
struct cr_knob {
	const char *name;
	const char *bad[4];
	const char *good[2];
};

static const struct cr_knob cr_knobs[] = {
	{ "credit_init", { "0", "257", "-1", "x" }, { "1", "256" } },
	{ "credit_pool", { "0", "1048577", "2k", "-5" }, { "1", "1048576" } },
	{ "drr_unit", { "1", "63", "1048577", "y" }, { "0", "64" } },
	{ "class1_seg_busy", { "1", "63", "-64", "z" }, { "0", "64" } },
	{ "link_credit_window", { "4097", "-1", "1e3", "w" }, { "0", "4096" } },
	{ "idle_us", { "10000001", "-1", "1.5", "v" }, { "0", "10000000" } },
};

/*
 * Module parameters out of their range (or not numbers) fail with EINVAL
 * and keep their value; the ends of the range are taken.
 */
TEST(knob_ranges)
{
	char path[128], old[32], now[32];
	size_t k, j;

	for (k = 0; k < ARRAY_SIZE(cr_knobs); k++) {
		const struct cr_knob *c = &cr_knobs[k];

		snprintf(path, sizeof(path), "/sys/module/xnic/parameters/%s",
			 c->name);
		ASSERT_EQ(0, xt_read_file(path, old, sizeof(old)));
		for (j = 0; j < ARRAY_SIZE(c->bad); j++) {
			EXPECT_EQ(-EINVAL, xt_write_file(path, c->bad[j]))
				TH_LOG("%s = %s", c->name, c->bad[j]);
			ASSERT_EQ(0, xt_read_file(path, now, sizeof(now)));
			EXPECT_STREQ(old, now);
		}
		for (j = 0; j < ARRAY_SIZE(c->good); j++) {
			EXPECT_EQ(0, xt_write_file(path, c->good[j]))
				TH_LOG("%s = %s", c->name, c->good[j]);
			ASSERT_EQ(0, xt_read_file(path, now, sizeof(now)));
			EXPECT_STREQ(c->good[j], now);
		}
		ASSERT_EQ(0, xt_write_file(path, old));
	}
}

int main(int argc, char **argv)
{
	return xt_harness_main(argc, argv);
}
