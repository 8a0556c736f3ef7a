/*
 * ibs_rules.h - one record that meets and one that misses every IBS
 * derivation rule (notes/oprofile-format.md 4.2), as raw MSR values, with the
 * value the meeting record adds. Shared by tests/unit/test_ibs.c (mock host)
 * and tests/integration/ibs_gen.c (replay through oprofiled). Bit numbers are
 * spelled out here on purpose, independent of plugins/ibs/ibs_decode.h.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_TESTS_IBS_RULES_H
#define OP_TESTS_IBS_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define B(n) (1ull << (n))

/* IBS_FETCH_CTL */
#define R_FV (B(48) | B(49)) /* FetchEn | FetchVal */
#define R_FCOMP B(50)
#define R_FICMISS B(51)
#define R_FPHYV B(52)
#define R_FPG(n) ((uint64_t)(n) << 53)
#define R_FL1 B(55)
#define R_FL2 B(56)
#define R_FLAT(n) ((uint64_t)(n) << 32)

/* IBS_OP_DATA */
#define R_RESYNC B(32)
#define R_RET B(34)
#define R_TAKEN B(35)
#define R_MISP B(36)
#define R_BRRET B(37)
#define R_RIPINV B(38)
/* IBS_OP_DATA2 */
#define R_SRC(n) ((uint64_t)(n))
#define R_DST B(4)
#define R_HITST B(5)
/* IBS_OP_DATA3 */
#define R_LD B(0)
#define R_ST B(1)
#define R_L1M B(2)
#define R_L2M B(3)
#define R_L1H2M B(4)
#define R_L1H1G B(5)
#define R_L2H2M B(6)
#define R_DCMISS B(7)
#define R_MISAL B(8)
#define R_LDBNK B(9)
#define R_STBNK B(10)
#define R_STLFWD B(11)
#define R_STLCAN B(12)
#define R_WC B(13)
#define R_UC B(14)
#define R_LOCKED B(15)
#define R_MABHIT B(16)
#define R_LINV B(17)
#define R_L2H1G B(19)
#define R_LAT(n) ((uint64_t)(n) << 32)

/* ctl of a valid op sample: OpEn | OpVal, MaxCnt 100000 >> 4 */
#define R_OPCTL (B(17) | B(18) | 0x186aull)
#define R_NB (R_LD | R_DCMISS)

/* one IBS record: fetch uses ctl only; op uses data, data2, data3 */
struct ibs_rec {
	bool invalid;     /* Ctl.Val clear: the kernel would not deliver it; must not count */
	uint64_t ctl;     /* fetch: IBS_FETCH_CTL (without the Val bits when invalid) */
	uint64_t data, data2, data3;
};

struct ibs_rule {
	uint32_t code;
	const char *name;
	bool fetch;
	struct ibs_rec meet, miss;
	uint32_t value;   /* what the meeting record adds (1, or a latency) */
};

#define F(c, n, m, x) { c, n, true, { false, R_FV | (m), 0, 0, 0 }, { false, R_FV | (x), 0, 0, 0 }, 1 }
#define O(c, n, d, d2, d3, xd, xd2, xd3) \
	{ c, n, false, { false, 0, d, d2, d3 }, { false, 0, xd, xd2, xd3 }, 1 }
#define OV(c, n, d, d2, d3, xd, xd2, xd3, v) \
	{ c, n, false, { false, 0, d, d2, d3 }, { false, 0, xd, xd2, xd3 }, v }

static const struct ibs_rule ibs_rules[] = {
	/* fetch: "always" rules miss with a record whose Val bit is clear */
	{ 0xf000, "IBS_FETCH_ALL", true, { false, R_FV, 0, 0, 0 }, { true, B(48), 0, 0, 0 }, 1 },
	F(0xf001, "IBS_FETCH_KILLED", 0, R_FCOMP),
	{ 0xf002, "IBS_FETCH_ATTEMPTED", true, { false, R_FV | R_FCOMP, 0, 0, 0 },
	  { true, B(48) | R_FCOMP, 0, 0, 0 }, 1 },
	F(0xf003, "IBS_FETCH_COMPLETED", R_FCOMP, 0),
	F(0xf004, "IBS_FETCH_ABORTED", R_FICMISS, R_FCOMP),
	F(0xf005, "IBS_FETCH_ITLB_HITS", R_FPHYV, R_FPHYV | R_FL1),
	F(0xf006, "IBS_FETCH_L1_ITLB_MISSES_L2_ITLB_HITS", R_FL1, R_FL1 | R_FL2),
	F(0xf007, "IBS_FETCH_L1_ITLB_MISSES_L2_ITLB_MISSES", R_FL1 | R_FL2, R_FL2),
	F(0xf008, "IBS_FETCH_ICACHE_MISSES", R_FICMISS, R_FCOMP),
	F(0xf009, "IBS_FETCH_ICACHE_HITS", R_FCOMP, R_FCOMP | R_FICMISS),
	F(0xf00a, "IBS_FETCH_4K_PAGE", R_FPHYV | R_FPG(0), R_FPHYV | R_FPG(1)),
	F(0xf00b, "IBS_FETCH_2M_PAGE", R_FPHYV | R_FPG(1), R_FPG(1)),
	{ 0xf00e, "IBS_FETCH_LATENCY", true, { false, R_FV | R_FLAT(0x123), 0, 0, 0 },
	  { false, R_FV | R_FCOMP, 0, 0, 0 }, 0x123 },

	/* op */
	{ 0xf100, "IBS_OP_ALL", false, { false, 0, 0, 0, 0 }, { true, 0, 0, 0, 0 }, 1 },
	OV(0xf101, "IBS_OP_TAG_TO_RETIRE", 0x55ull << 16, 0, 0, 0x7, 0, 0, 0x55),
	OV(0xf102, "IBS_OP_COMP_TO_RET", 0x21, 0, 0, 0x21ull << 16, 0, 0, 0x21),
	O(0xf103, "IBS_OP_BRANCH_RETIRED", R_BRRET, 0, 0, R_TAKEN, 0, 0),
	O(0xf104, "IBS_OP_MISPREDICTED_BRANCH", R_BRRET | R_MISP, 0, 0, R_MISP, 0, 0),
	O(0xf105, "IBS_OP_TAKEN_BRANCH", R_BRRET | R_TAKEN, 0, 0, R_BRRET, 0, 0),
	O(0xf106, "IBS_OP_MISPREDICTED_BRANCH_TAKEN", R_BRRET | R_TAKEN | R_MISP, 0, 0,
	  R_BRRET | R_TAKEN, 0, 0),
	O(0xf107, "IBS_OP_RETURNS", R_BRRET | R_RET, 0, 0, R_RET, 0, 0),
	O(0xf108, "IBS_OP_MISPREDICTED_RETURNS", R_BRRET | R_RET | R_MISP, 0, 0, R_BRRET | R_RET,
	  0, 0),
	O(0xf109, "IBS_OP_RESYNC", R_RESYNC, 0, 0, R_BRRET, 0, 0),

	/* load/store (precondition LD or ST) */
	O(0xf200, "IBS_OP_ALL_LOAD_STORE", 0, 0, R_ST, 0, 0, R_DCMISS),
	O(0xf201, "IBS_OP_LOAD", 0, 0, R_LD, 0, 0, R_ST),
	O(0xf202, "IBS_OP_STORE", 0, 0, R_ST, 0, 0, R_LD),
	O(0xf203, "IBS_OP_L1_DTLB_HITS", 0, 0, R_LD | R_LINV, 0, 0, R_LD | R_LINV | R_L1M),
	O(0xf204, "IBS_OP_L1_DTLB_MISS_L2_DTLB_HIT", 0, 0, R_LD | R_LINV | R_L1M, 0, 0,
	  R_LD | R_LINV | R_L1M | R_L2M),
	O(0xf205, "IBS_OP_L1_L2_DTLB_MISS", 0, 0, R_LD | R_LINV | R_L1M | R_L2M, 0, 0,
	  R_LD | R_L1M | R_L2M),
	O(0xf206, "IBS_OP_DATA_CACHE_MISS", 0, 0, R_LD | R_DCMISS, 0, 0, R_LD),
	O(0xf207, "IBS_OP_DATA_HITS", 0, 0, R_ST, 0, 0, R_ST | R_DCMISS),
	O(0xf208, "IBS_OP_MISALIGNED_DATA_ACC", 0, 0, R_LD | R_MISAL, 0, 0, R_MISAL),
	O(0xf209, "IBS_OP_BANK_CONF_LOAD", 0, 0, R_LD | R_LDBNK, 0, 0, R_LDBNK),
	O(0xf20a, "IBS_OP_BANK_CONF_STORE", 0, 0, R_ST | R_STBNK, 0, 0, R_ST),
	O(0xf20b, "IBS_OP_FORWARD", 0, 0, R_LD | R_STLFWD, 0, 0, R_ST | R_STLFWD),
	O(0xf20c, "IBS_OP_CANCELLED", 0, 0, R_LD | R_STLCAN, 0, 0, R_ST | R_STLCAN),
	O(0xf20d, "IBS_OP_DCUC_MEM_ACC", 0, 0, R_LD | R_UC, 0, 0, R_LD | R_WC),
	O(0xf20e, "IBS_OP_DCWC_MEM_ACC", 0, 0, R_ST | R_WC, 0, 0, R_ST | R_UC),
	O(0xf20f, "IBS_OP_LOCKED", 0, 0, R_ST | R_LOCKED, 0, 0, R_ST),
	O(0xf210, "IBS_OP_MAB_HIT", 0, 0, R_LD | R_MABHIT, 0, 0, R_LD),
	O(0xf211, "IBS_OP_L1_DTLB_4K", 0, 0, R_LD | R_LINV, 0, 0, R_LD | R_LINV | R_L1H2M),
	O(0xf212, "IBS_OP_L1_DTLB_2M", 0, 0, R_LD | R_LINV | R_L1H2M, 0, 0,
	  R_LD | R_LINV | R_L1M | R_L1H2M),
	O(0xf213, "IBS_OP_L1_DTLB_1G", 0, 0, R_LD | R_LINV | R_L1H1G, 0, 0,
	  R_LD | R_LINV | R_L1H1G | R_L1H2M),
	O(0xf215, "IBS_OP_L2_DTLB_4K", 0, 0, R_LD | R_LINV | R_L1M, 0, 0,
	  R_LD | R_LINV | R_L1M | R_L2H2M),
	O(0xf216, "IBS_OP_L2_DTLB_2M", 0, 0, R_LD | R_LINV | R_L1M | R_L2H2M, 0, 0,
	  R_LD | R_LINV | R_L1M | R_L2M | R_L2H2M),
	O(0xf217, "IBS_OP_L2_DTLB_1G", 0, 0, R_LD | R_LINV | R_L1M | R_L2H1G, 0, 0,
	  R_LD | R_LINV | R_L1M | R_L2H2M | R_L2H1G),
	OV(0xf219, "IBS_OP_DC_LOAD_LAT", 0, 0, R_LD | R_DCMISS | R_LAT(0x40), 0, 0,
	   R_ST | R_DCMISS | R_LAT(0x40), 0x40),

	/* northbridge (precondition LD && DCMISS && NbReqSrc != 0) */
	O(0xf240, "IBS_OP_NB_LOCAL_ONLY", 0, R_SRC(3), R_NB, 0, R_SRC(3) | R_DST, R_NB),
	O(0xf241, "IBS_OP_NB_REMOTE_ONLY", 0, R_SRC(3) | R_DST, R_NB, 0, R_SRC(0) | R_DST, R_NB),
	O(0xf242, "IBS_OP_NB_LOCAL_L3", 0, R_SRC(1), R_NB, 0, R_SRC(1) | R_DST, R_NB),
	O(0xf243, "IBS_OP_NB_LOCAL_CACHE", 0, R_SRC(2), R_NB, 0, R_SRC(3), R_NB),
	O(0xf244, "IBS_OP_NB_REMOTE_CACHE", 0, R_SRC(2) | R_DST, R_NB, 0, R_SRC(2), R_NB),
	O(0xf245, "IBS_OP_NB_LOCAL_DRAM", 0, R_SRC(3), R_NB, 0, R_SRC(3) | R_DST, R_NB),
	O(0xf246, "IBS_OP_NB_REMOTE_DRAM", 0, R_SRC(3) | R_DST, R_NB, 0, R_SRC(3) | R_DST,
	  R_ST | R_DCMISS),
	O(0xf247, "IBS_OP_NB_LOCAL_OTHER", 0, R_SRC(7), R_NB, 0, R_SRC(7) | R_DST, R_NB),
	O(0xf248, "IBS_OP_NB_REMOTE_OTHER", 0, R_SRC(7) | R_DST, R_NB, 0, R_SRC(2) | R_DST, R_NB),
	O(0xf249, "IBS_OP_NB_CACHE_MODIFIED", 0, R_SRC(2), R_NB, 0, R_SRC(2) | R_HITST, R_NB),
	O(0xf24a, "IBS_OP_NB_CACHE_OWNED", 0, R_SRC(2) | R_HITST, R_NB, 0, R_SRC(2), R_NB),
	OV(0xf24b, "IBS_OP_NB_LOCAL_CACHE_LAT", 0, R_SRC(2), R_NB | R_LAT(0x77), 0,
	   R_SRC(2) | R_DST, R_NB | R_LAT(0x77), 0x77),
	OV(0xf24c, "IBS_OP_NB_REMOTE_CACHE_LAT", 0, R_SRC(2) | R_DST, R_NB | R_LAT(0x99), 0,
	   R_SRC(2), R_NB | R_LAT(0x99), 0x99),
};

#define IBS_NR_RULES (sizeof(ibs_rules) / sizeof(ibs_rules[0]))

#undef F
#undef O
#undef OV

/*
 * Raw payload (what op_perf_sample.raw points to: caps u32, then the
 * registers) of @rec at @pc. Returns the raw size (4 + 8n); @buf holds at
 * least 4 + 8 * 8 bytes. Op records carry BR_TARGET (caps bit 5).
 */
static inline uint32_t ibs_rec_raw(const struct ibs_rec *rec, bool fetch, uint64_t pc,
				   uint8_t *buf)
{
	uint64_t r[8] = { 0 };
	uint32_t caps, n;
	size_t i;

	if (fetch) {
		caps = 0x1f;
		r[0] = rec->ctl | 0x186a;
		if (rec->invalid)
			r[0] &= ~B(49);
		r[1] = pc;          /* FetchLinAd */
		r[2] = 0x12345000;  /* FetchPhysAd */
		n = 3;
	} else {
		caps = 0x3f;        /* ... | BRNTRGT */
		r[0] = rec->invalid ? (R_OPCTL & ~B(18)) : R_OPCTL;
		r[1] = pc;          /* IbsOpRip */
		r[2] = rec->data;
		r[3] = rec->data2;
		r[4] = rec->data3;
		r[5] = 0x7fff12340000ull + (pc & 0xfff); /* DcLinAd */
		r[6] = 0x0000000abcde000ull;              /* DcPhysAd */
		r[7] = 0;                                  /* BrTarget */
		n = 8;
	}
	for (i = 0; i < 4; i++)
		buf[i] = (uint8_t)(caps >> (8 * i));
	for (i = 0; i < n * 8; i++)
		buf[4 + i] = (uint8_t)(r[i / 8] >> (8 * (i % 8)));
	return 4 + 8 * n;
}

#endif /* OP_TESTS_IBS_RULES_H */
