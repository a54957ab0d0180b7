// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: credit updates from the wire, applied in any order and
 * with any values, to a flow's credit (kmod/credit_logic.h) and to a
 * member link's credit (kmod/link_credit_logic.h).
 *
 * The input is a program of 8-byte steps: op, then operands. Invariants
 * (abort() is a finding): after every step the accounting holds
 * (xnic_credit_flow_check(), xnic_lcr_tx_check()); a hostile grant never
 * puts the limit more than the bound past what was sent; a sender never
 * gets more credit than it was granted; the receiver's advertised limit
 * never moves back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kmod/credit_logic.h"
#include "kmod/link_credit_logic.h"

struct step {
	uint8_t op;
	uint8_t a;
	uint16_t b;
	uint32_t c;
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xnic_credit_flow f = { 0 };
	struct xnic_lcr_tx t = { 0 };
	struct xnic_lcr_rx r = { 0 };
	uint32_t next = 0, adv;
	uint64_t now = 0;
	struct step s;
	size_t k;

	xnic_lcr_tx_init(&t, 1, 64);
	for (k = 0; k + sizeof(s) <= size; k += sizeof(s)) {
		memcpy(&s, data + k, sizeof(s));
		switch (s.op % 9) {
		case 0:		/* a stopped flow starts again */
			if (f.live)
				break;
			xnic_credit_flow_start(&f, s.c, s.b % 1024);
			next = f.start;
			break;
		case 1:		/* it sends what its credit allows */
			if (xnic_credit_flow_avail(&f, next))
				xnic_credit_flow_consume(&f, next++);
			break;
		case 2:		/* a grant: cumulative PSN not past next */
			if (xnic_psn_before(next, s.c))
				break;
			xnic_credit_flow_update(&f, s.c, s.b, next);
			if (f.live &&
			    xnic_psn_diff(f.limit, next) > (int32_t)XNIC_CREDIT_MAX &&
			    xnic_psn_diff(f.limit, next) > 1024)
				abort();
			break;
		case 3:
			xnic_credit_flow_stop(&f, next);
			break;
		case 4:		/* link: a frame goes out */
			xnic_lcr_tx_take(&t);
			break;
		case 5:		/* link: a grant (epoch echo, limit) */
			xnic_lcr_tx_update(&t, s.a & 1 ? t.epoch : s.b, s.c);
			if (xnic_psn_diff(t.limit, t.sent) >
			    (int32_t)XNIC_LCR_MAX_WINDOW + 64)
				abort();
			break;
		case 6:		/* link receiver: a frame with a sequence */
			xnic_lcr_rx_take(&r, s.b);
			break;
		case 7:		/* link receiver: a sync from the sender */
			now += s.a * 1000000ULL;
			xnic_lcr_rx_sync(&r, s.b & 3, s.c, now);
			break;
		case 8:		/* link receiver: what it advertises */
			adv = r.adv;
			xnic_lcr_rx_grant(&r, s.b % 1024 + 1);
			if (r.epoch == 0 && xnic_psn_before(r.adv, adv))
				abort();
			break;
		}
		if (!xnic_credit_flow_check(&f, next) || !xnic_lcr_tx_check(&t))
			abort();
	}
	return 0;
}
