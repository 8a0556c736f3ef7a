/*
 * ibs_decode.c - IBS raw-record parsing (register layout of the kernel's
 * PERF_SAMPLE_RAW for ibs_fetch / ibs_op), per-family masks and the
 * derivation of OProfile's 64 IBS events from the register bits.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "ibs_decode.h"

static uint64_t ibs_ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* common checks; *nregs gets the register count */
static enum ibs_raw_status ibs_raw_regs(const void *raw, uint32_t size, unsigned fixed,
					uint32_t *caps, unsigned *nregs)
{
	if (!raw || size < 4)
		return IBS_RAW_SHORT;
	if ((size - 4) % 8)
		return IBS_RAW_BAD_SIZE;
	*nregs = (size - 4) / 8;
	if (*nregs < fixed)
		return IBS_RAW_SHORT;
	memcpy(caps, raw, sizeof(*caps));
	return IBS_RAW_OK;
}

enum ibs_raw_status ibs_parse_fetch(const void *raw, uint32_t size, struct ibs_fetch_regs *out)
{
	const uint8_t *p = (const uint8_t *)raw + 4;
	enum ibs_raw_status st;
	unsigned n = 0;

	memset(out, 0, sizeof(*out));
	st = ibs_raw_regs(raw, size, IBS_FETCH_NR_REGS, &out->caps, &n);
	if (st)
		return st;
	out->ctl = ibs_ld64(p);
	out->linaddr = ibs_ld64(p + 8);
	out->physaddr = ibs_ld64(p + 16);
	if ((out->caps & IBS_CAPS_FETCHCTLEXTD) && n > IBS_FETCH_NR_REGS)
		out->extd = ibs_ld64(p + 24);
	if (!(out->ctl & IBS_FETCH_VAL))
		return IBS_RAW_NOT_VALID;
	return IBS_RAW_OK;
}

enum ibs_raw_status ibs_parse_op(const void *raw, uint32_t size, struct ibs_op_regs *out)
{
	const uint8_t *p = (const uint8_t *)raw + 4;
	enum ibs_raw_status st;
	unsigned n = 0, next = IBS_OP_NR_REGS;

	memset(out, 0, sizeof(*out));
	st = ibs_raw_regs(raw, size, IBS_OP_NR_REGS, &out->caps, &n);
	if (st)
		return st;
	out->ctl = ibs_ld64(p);
	out->rip = ibs_ld64(p + 8);
	out->data = ibs_ld64(p + 16);
	out->data2 = ibs_ld64(p + 24);
	out->data3 = ibs_ld64(p + 32);
	out->dc_lin = ibs_ld64(p + 40);
	out->dc_phys = ibs_ld64(p + 48);
	/* the optional tail comes in this order, each only if its caps bit is set */
	if ((out->caps & IBS_CAPS_BRNTRGT) && n > next)
		out->br_target = ibs_ld64(p + 8 * next++);
	if ((out->caps & IBS_CAPS_OPDATA4) && n > next)
		out->data4 = ibs_ld64(p + 8 * next++);
	if (!(out->ctl & IBS_OP_VAL))
		return IBS_RAW_NOT_VALID;
	return IBS_RAW_OK;
}

const char *ibs_raw_status_str(enum ibs_raw_status st)
{
	switch (st) {
	case IBS_RAW_OK:
		return "ok";
	case IBS_RAW_SHORT:
		return "too short for the fixed register block";
	case IBS_RAW_BAD_SIZE:
		return "raw size is not 4 + 8n bytes";
	case IBS_RAW_NOT_VALID:
		return "the sample-valid bit of the control register is clear";
	}
	return "unknown";
}

void ibs_mask_op(uint32_t family, struct ibs_op_regs *r)
{
	switch (family) {
	case 0x10:
		r->data &= ~IBS_OP_RIPINV;
		break;
	case 0x14:
		r->data3 &= ~(IBS_L1HIT1G | IBS_LDBNK | IBS_STBNK | IBS_STLCAN | IBS_L2HIT1G);
		/* fall through */
	case 0x12:
		r->data2 &= ~(IBS_NB_DSTPROC | IBS_NB_CACHE_HIT_ST);
		break;
	default:
		break;
	}
}

bool ibs_op_rip_invalid(const struct ibs_op_regs *r)
{
	return (r->data & IBS_OP_RIPINV) != 0;
}

#define IBS_SET(idx, cond)              \
	do {                            \
		if (cond) {             \
			add[(idx)] = 1; \
			nr++;           \
		}                       \
	} while (0)
#define IBS_ADD(idx, val)                \
	do {                             \
		uint32_t v_ = (val);     \
		if (v_) {                \
			add[(idx)] = v_; \
			nr++;            \
		}                        \
	} while (0)

unsigned ibs_derive_fetch(const struct ibs_fetch_regs *r, uint32_t add[IBS_NR_EVENTS])
{
	uint64_t c = r->ctl;
	bool comp = c & IBS_FETCH_COMP, icmiss = c & IBS_FETCH_ICMISS;
	bool phyv = c & IBS_FETCH_PHYV, l1 = c & IBS_FETCH_L1MISS, l2 = c & IBS_FETCH_L2MISS;
	unsigned pgsz = IBS_FETCH_PGSZ(c), nr = 0;

	IBS_SET(0x0, true);                                    /* IBS_FETCH_ALL */
	IBS_SET(0x1, !l1 && !l2 && !phyv && !comp && !icmiss); /* KILLED */
	IBS_SET(0x2, true);                                    /* ATTEMPTED (as OProfile: always) */
	IBS_SET(0x3, comp);                                    /* COMPLETED */
	IBS_SET(0x4, !comp);                                   /* ABORTED */
	IBS_SET(0x5, !l1 && phyv);                             /* ITLB_HITS */
	IBS_SET(0x6, l1 && !l2);                               /* L1 ITLB miss, L2 hit */
	IBS_SET(0x7, l1 && l2);                                /* L1 and L2 ITLB miss */
	IBS_SET(0x8, icmiss);                                  /* ICACHE_MISSES */
	IBS_SET(0x9, comp && !icmiss);                         /* ICACHE_HITS */
	IBS_SET(0xa, phyv && pgsz == 0);                       /* 4K page */
	IBS_SET(0xb, phyv && pgsz == 1);                       /* 2M page */
	IBS_SET(0xc, phyv && pgsz == 2);                       /* 1G page */
	/* 0xd (reserved page size) is never counted */
	IBS_ADD(0xe, IBS_FETCH_LAT(c)); /* LATENCY */
	return nr;
}

static unsigned ibs_derive_ls(const struct ibs_op_regs *r, uint32_t *add)
{
	uint64_t d = r->data3;
	bool ld = d & IBS_LD, st = d & IBS_ST, linv = d & IBS_LINV;
	bool l1m = d & IBS_L1TLBMISS, l2m = d & IBS_L2TLBMISS, dcmiss = d & IBS_DCMISS;
	bool l1h2m = d & IBS_L1HIT2M, l1h1g = d & IBS_L1HIT1G;
	bool l2h2m = d & IBS_L2HIT2M, l2h1g = d & IBS_L2HIT1G;
	unsigned nr = 0;

	if (!ld && !st)
		return 0;
	IBS_SET(0x00, true);
	IBS_SET(0x01, ld);
	IBS_SET(0x02, st);
	IBS_SET(0x03, linv && !l1m);
	IBS_SET(0x04, linv && l1m && !l2m);
	IBS_SET(0x05, linv && l1m && l2m);
	IBS_SET(0x06, dcmiss);
	IBS_SET(0x07, !dcmiss);
	IBS_SET(0x08, d & IBS_MISALIGN);
	IBS_SET(0x09, d & IBS_LDBNK);
	IBS_SET(0x0a, d & IBS_STBNK);
	IBS_SET(0x0b, ld && (d & IBS_STLFWD));
	IBS_SET(0x0c, ld && (d & IBS_STLCAN));
	IBS_SET(0x0d, d & IBS_UC);
	IBS_SET(0x0e, d & IBS_WC);
	IBS_SET(0x0f, d & IBS_LOCKED);
	IBS_SET(0x10, d & IBS_MABHIT);
	IBS_SET(0x11, linv && !l1m && !l1h2m && !l1h1g);
	IBS_SET(0x12, linv && !l1m && l1h2m);
	IBS_SET(0x13, linv && !l1m && !l1h2m && l1h1g);
	/* 0x14 reserved */
	IBS_SET(0x15, linv && l1m && !l2m && !l2h2m && !l2h1g);
	IBS_SET(0x16, linv && l1m && !l2m && l2h2m && !l2h1g);
	IBS_SET(0x17, linv && l1m && !l2m && !l2h2m && l2h1g);
	/* 0x18 reserved */
	if (ld && dcmiss)
		IBS_ADD(0x19, IBS_DC_MISS_LAT(d));
	return nr;
}

static unsigned ibs_derive_nb(const struct ibs_op_regs *r, uint32_t *add)
{
	uint64_t d = r->data3;
	unsigned src = IBS_NB_SRC(r->data2), nr = 0;
	bool dst = r->data2 & IBS_NB_DSTPROC, hitst = r->data2 & IBS_NB_CACHE_HIT_ST;
	uint32_t lat = IBS_DC_MISS_LAT(d);

	if (!(d & IBS_LD) || !(d & IBS_DCMISS) || src == 0)
		return 0;
	IBS_SET(0x0, !dst);
	IBS_SET(0x1, dst);
	IBS_SET(0x2, !dst && src == 1);
	IBS_SET(0x3, !dst && src == 2);
	IBS_SET(0x4, dst && src == 2);
	IBS_SET(0x5, !dst && src == 3);
	IBS_SET(0x6, dst && src == 3);
	IBS_SET(0x7, !dst && src == 7);
	IBS_SET(0x8, dst && src == 7);
	IBS_SET(0x9, src == 2 && !hitst);
	IBS_SET(0xa, src == 2 && hitst);
	if (!dst)
		IBS_ADD(0xb, lat);
	else
		IBS_ADD(0xc, lat);
	return nr;
}

static unsigned ibs_derive_br(const struct ibs_op_regs *r, uint32_t *add)
{
	uint64_t d = r->data;
	bool brret = d & IBS_OP_BRRET, misp = d & IBS_OP_MISP;
	bool taken = d & IBS_OP_TAKEN, ret = d & IBS_OP_RET;
	unsigned nr = 0;

	IBS_SET(0x0, true);
	IBS_ADD(0x1, IBS_OP_TAG_TO_RET(d));
	IBS_ADD(0x2, IBS_OP_COMP_TO_RET(d));
	IBS_SET(0x3, brret);
	IBS_SET(0x4, brret && misp);
	IBS_SET(0x5, brret && taken);
	IBS_SET(0x6, brret && taken && misp);
	IBS_SET(0x7, brret && ret);
	IBS_SET(0x8, brret && ret && misp);
	IBS_SET(0x9, d & IBS_OP_RESYNC);
	return nr;
}

unsigned ibs_derive_op(const struct ibs_op_regs *r, uint32_t add[IBS_NR_EVENTS])
{
	return ibs_derive_br(r, add + IBS_FIRST_OP) + ibs_derive_ls(r, add + IBS_FIRST_LS) +
	       ibs_derive_nb(r, add + IBS_FIRST_NB);
}

int ibs_event_index(uint32_t code)
{
	if (code >= 0xf000 && code <= 0xf00e)
		return IBS_FIRST_FETCH + (int)(code - 0xf000);
	if (code >= 0xf100 && code <= 0xf109)
		return IBS_FIRST_OP + (int)(code - 0xf100);
	if (code >= 0xf200 && code <= 0xf219)
		return IBS_FIRST_LS + (int)(code - 0xf200);
	if (code >= 0xf240 && code <= 0xf24c)
		return IBS_FIRST_NB + (int)(code - 0xf240);
	return -1;
}

uint32_t ibs_event_code(unsigned index)
{
	if (index < IBS_FIRST_OP)
		return 0xf000 + index;
	if (index < IBS_FIRST_LS)
		return 0xf100 + (index - IBS_FIRST_OP);
	if (index < IBS_FIRST_NB)
		return 0xf200 + (index - IBS_FIRST_LS);
	if (index < IBS_NR_EVENTS)
		return 0xf240 + (index - IBS_FIRST_NB);
	return 0;
}

bool ibs_index_is_fetch(unsigned index)
{
	return index < IBS_FIRST_OP;
}

uint64_t ibs_period(uint64_t count)
{
	uint64_t p = count & ~(uint64_t)0xf;

	return p < 0x10 ? 0x10 : p;
}

uint64_t ibs_max_op_count(uint32_t family)
{
	/* opcontrol: 20-bit op counter on family 10h, 27 bits from 12h on */
	return family <= 0x11 ? 1048575u : 134217727u;
}
