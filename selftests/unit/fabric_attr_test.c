// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The libfabric provider's pure parts (fabric/fi_xnic_attr.c and
 * fi_xnic_rdm_attr.c): addresses round-trip and are validated; fi_getinfo's
 * hint matching, for FI_EP_MSG and FI_EP_RDM, grants what is asked within
 * the device's limits and answers -FI_ENODATA otherwise.
 */
#include "kselftest_harness.h"
#include "fabric/fi_xnic_attr.c"
#include "fabric/fi_xnic_rdm_attr.c"

struct fi_provider fi_xnic_prov = { .name = "xnic" };

static const struct fi_xnic_limits lim = {
	.name = "xnic0",
	.attr = { .node_id = 0x0c01, .max_msg_size = 1 << 30,
		  .max_sge = 6, .max_recv_sge = 3, .max_inline = 96,
		  .max_qp_wr = 4096, .max_cqe = 65535 },
};

TEST(addr_round_trip)
{
	struct fi_xnic_addr a, b;

	fi_xnic_addr_init(&a, 0x0c01, 40000);
	ASSERT_EQ(0, fi_xnic_addr_check(&a, sizeof(a)));
	EXPECT_EQ(0x0c01U, fi_xnic_addr_node(&a));
	EXPECT_EQ(40000, fi_xnic_addr_port(&a));
	EXPECT_EQ(0x13FULL << 16 | 40000, fi_xnic_addr_sid(&a));
	EXPECT_EQ(-FI_EINVAL, fi_xnic_addr_check(&a, sizeof(a) - 1));
	EXPECT_EQ(-FI_EINVAL, fi_xnic_addr_check(NULL, sizeof(a)));
	b = a;
	b.sin6_family = AF_INET;
	EXPECT_EQ(-FI_EINVAL, fi_xnic_addr_check(&b, sizeof(b)));
	b = a;
	b.sin6_addr.s6_addr[8] = 'y';		/* not our prefix */
	EXPECT_EQ(-FI_EINVAL, fi_xnic_addr_check(&b, sizeof(b)));
}

static struct fi_info *hints(void)
{
	struct fi_info *h = fi_allocinfo();

	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				  FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	return h;
}

/* Run @h through both stages: 0 and an fi_info, or -FI_ENODATA. */
static int match(struct fi_info *h, struct fi_info **out)
{
	int r = fi_xnic_check_hints(FI_VERSION(1, 17), h);

	*out = NULL;
	if (!r)
		r = fi_xnic_info_for(FI_VERSION(1, 17), FI_EP_MSG, &lim, h,
				     out);
	return r;
}

TEST(no_hints_offers_everything)
{
	struct fi_info *fi;

	ASSERT_EQ(0, match(NULL, &fi));
	EXPECT_EQ(FI_EP_MSG, fi->ep_attr->type);
	EXPECT_EQ(FI_SOCKADDR_IN6, fi->addr_format);
	EXPECT_TRUE((fi->caps & (FI_MSG | FI_RMA)) == (FI_MSG | FI_RMA));
	EXPECT_EQ(96U, fi->tx_attr->inject_size);
	EXPECT_EQ(4096U, fi->tx_attr->size);
	EXPECT_EQ(4U, fi->domain_attr->mr_key_size);
	EXPECT_STREQ("xnic0", fi->domain_attr->name);
	EXPECT_EQ(NULL, fi->fabric_attr->prov_name);	/* libfabric's */
	EXPECT_EQ(0x0c01U, fi_xnic_addr_node(fi->src_addr));
	fi_freeinfo(fi);
}

TEST(hints_granted)
{
	struct fi_info *h = hints(), *fi;
	struct fi_xnic_addr d;

	h->tx_attr->size = 128;
	h->rx_attr->size = 256;
	h->mode = FI_RX_CQ_DATA | FI_CONTEXT;
	fi_xnic_addr_init(&d, 7, 1234);
	h->dest_addr = malloc(sizeof(d));
	memcpy(h->dest_addr, &d, sizeof(d));
	h->dest_addrlen = sizeof(d);
	ASSERT_EQ(0, match(h, &fi));
	EXPECT_EQ(128U, fi->tx_attr->size);
	EXPECT_EQ(256U, fi->rx_attr->size);
	EXPECT_EQ((uint64_t)FI_RX_CQ_DATA, fi->mode);	/* FI_CONTEXT unused */
	ASSERT_NE(NULL, fi->dest_addr);
	EXPECT_EQ(0, memcmp(fi->dest_addr, &d, sizeof(d)));
	EXPECT_EQ(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
		  FI_MR_PROV_KEY, fi->domain_attr->mr_mode);
	fi_freeinfo(fi);
	h->mode = 0;			/* no FI_RX_CQ_DATA: not offered */
	h->caps = FI_MSG;		/* no RMA target: FI_MR_LOCAL only */
	h->domain_attr->mr_mode = FI_MR_LOCAL;
	ASSERT_EQ(0, match(h, &fi));
	EXPECT_EQ(0U, fi->mode);
	EXPECT_EQ(FI_MR_LOCAL, fi->domain_attr->mr_mode);
	fi_freeinfo(fi);
	fi_freeinfo(h);
}

/* What fi_info(1) sends: every mode, every MR mode but the old ones. */
TEST(fi_info_hints)
{
	struct fi_info *h = fi_allocinfo(), *fi;

	h->mode = ~0ULL;
	h->domain_attr->mode = ~0ULL;
	h->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);
	ASSERT_EQ(0, match(h, &fi));
	fi_freeinfo(fi);
	fi_freeinfo(h);
}

TEST(old_mr_basic)
{
	struct fi_info *h = hints(), *fi;

	h->domain_attr->mr_mode = FI_MR_BASIC;
	EXPECT_EQ(-FI_ENODATA, match(h, &fi));	/* FI_LOCAL_MR needed */
	h->mode = FI_LOCAL_MR;
	ASSERT_EQ(0, match(h, &fi));
	EXPECT_EQ(FI_MR_BASIC, fi->domain_attr->mr_mode);
	EXPECT_TRUE(fi->mode & FI_LOCAL_MR);
	fi_freeinfo(fi);
	h->domain_attr->mr_mode = FI_MR_SCALABLE;
	EXPECT_EQ(-FI_ENODATA, match(h, &fi));
	fi_freeinfo(h);
}

TEST(refused)
{
	struct fi_info *h, *fi;
	struct fi_xnic_addr s;

#define REFUSE(stmt) do {						\
		h = hints();						\
		stmt;							\
		EXPECT_EQ(-FI_ENODATA, match(h, &fi)) TH_LOG("%s", #stmt); \
		fi_freeinfo(h);						\
	} while (0)
	REFUSE(h->ep_attr->type = FI_EP_RDM);
	REFUSE(h->ep_attr->type = FI_EP_DGRAM);
	REFUSE(h->caps |= FI_TAGGED);
	REFUSE(h->caps |= FI_ATOMIC);
	REFUSE(h->addr_format = FI_SOCKADDR_IB);
	REFUSE(h->domain_attr->mr_mode = FI_MR_LOCAL);	/* RMA needs more */
	REFUSE(h->domain_attr->mr_mode = 0);
	REFUSE(h->domain_attr->av_type = FI_AV_MAP);
	REFUSE(h->domain_attr->cq_data_size = 8);
	REFUSE(h->domain_attr->name = strdup("xnic9"));
	REFUSE(h->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT);
	REFUSE(h->ep_attr->max_msg_size = (size_t)2 << 30);
	REFUSE(h->tx_attr->size = 8192);
	REFUSE(h->tx_attr->iov_limit = 7);
	REFUSE(h->tx_attr->inject_size = 97);
	REFUSE(h->tx_attr->rma_iov_limit = 2);
	REFUSE(h->tx_attr->msg_order = FI_ORDER_RAW);
	REFUSE(h->rx_attr->iov_limit = 4);
	REFUSE(h->rx_attr->op_flags = FI_MULTI_RECV);
	REFUSE(h->fabric_attr->name = strdup("tcp"));
	fi_xnic_addr_init(&s, 0x0c02, 0);		/* another node */
	REFUSE((h->src_addr = malloc(sizeof(s)),
		memcpy(h->src_addr, &s, sizeof(s)),
		h->src_addrlen = sizeof(s)));
}

/* The RDM offer (no hint check stage: fi_xnic_rdm_fill() does it). */
static int match_rdm(uint32_t version, struct fi_info *h, struct fi_info **out)
{
	*out = NULL;
	return fi_xnic_info_for(version, FI_EP_RDM, &lim, h, out);
}

TEST(rdm_offer)
{
	struct fi_info *fi;

	ASSERT_EQ(0, match_rdm(FI_VERSION(1, 17), NULL, &fi));
	EXPECT_EQ(FI_EP_RDM, fi->ep_attr->type);
	EXPECT_TRUE((fi->caps & (FI_MSG | FI_TAGGED | FI_SOURCE |
				 FI_DIRECTED_RECV)) ==
		    (FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV));
	EXPECT_FALSE(fi->caps & FI_RMA);	/* xnic;ofi_rxm has it */
	EXPECT_EQ(0U, fi->mode);
	EXPECT_EQ(0, fi->domain_attr->mr_mode);	/* no descriptors */
	EXPECT_EQ(FI_PROGRESS_MANUAL, fi->domain_attr->data_progress);
	EXPECT_EQ(0xAAAAAAAAAAAAAAAAULL, fi->ep_attr->mem_tag_format);
	EXPECT_EQ((size_t)FI_XNIC_RDM_EAGER, fi->tx_attr->inject_size);
	EXPECT_EQ(1U, fi->tx_attr->iov_limit);
	EXPECT_EQ(4U, fi->domain_attr->cq_data_size);
	EXPECT_STREQ("xnic0", fi->domain_attr->name);
	fi_freeinfo(fi);
}

/* What Open MPI 4.1's mtl ofi asks (mtl_ofi_component.c). */
TEST(rdm_mpi_hints)
{
	struct fi_info *h = fi_allocinfo(), *fi;

	h->mode = FI_CONTEXT;
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_TAGGED;
	h->tx_attr->msg_order = FI_ORDER_SAS;
	h->rx_attr->msg_order = FI_ORDER_SAS;
	h->tx_attr->op_flags = FI_COMPLETION;
	h->rx_attr->op_flags = FI_COMPLETION;
	h->domain_attr->av_type = FI_AV_MAP;
	h->domain_attr->resource_mgmt = FI_RM_ENABLED;
	ASSERT_EQ(0, match_rdm(FI_VERSION(1, 0), h, &fi));
	EXPECT_TRUE(fi->caps & FI_TAGGED);
	EXPECT_FALSE(fi->mode & FI_LOCAL_MR);
	EXPECT_EQ(FI_MR_BASIC, fi->domain_attr->mr_mode);
	EXPECT_EQ(FI_AV_MAP, fi->domain_attr->av_type);
	EXPECT_EQ(FI_COMPLETION, fi->tx_attr->op_flags);
	fi_freeinfo(fi);
	fi_freeinfo(h);
}

TEST(rdm_refused)
{
	struct fi_info *h, *fi;

#define REFUSE_RDM(stmt) do {						\
		h = fi_allocinfo();					\
		h->ep_attr->type = FI_EP_RDM;				\
		stmt;							\
		EXPECT_EQ(-FI_ENODATA, match_rdm(FI_VERSION(1, 17), h, &fi)) \
			TH_LOG("%s", #stmt);				\
		fi_freeinfo(h);						\
	} while (0)
	REFUSE_RDM(h->ep_attr->type = FI_EP_MSG);
	REFUSE_RDM(h->caps = FI_TAGGED | FI_RMA);
	REFUSE_RDM(h->caps = FI_ATOMIC);
	REFUSE_RDM(h->domain_attr->data_progress = FI_PROGRESS_AUTO);
	REFUSE_RDM(h->domain_attr->av_type = (enum fi_av_type)7);
	REFUSE_RDM(h->domain_attr->cq_data_size = 8);
	REFUSE_RDM(h->domain_attr->name = strdup("xnic9"));
	REFUSE_RDM(h->tx_attr->inject_size = FI_XNIC_RDM_EAGER + 1);
	REFUSE_RDM(h->tx_attr->iov_limit = 2);
	REFUSE_RDM(h->rx_attr->op_flags = FI_MULTI_RECV);
	REFUSE_RDM(h->ep_attr->max_msg_size = (size_t)2 << 30);
}

TEST_HARNESS_MAIN
