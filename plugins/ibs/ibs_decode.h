/*
 * ibs_decode.h - AMD IBS raw records (PERF_SAMPLE_RAW of the ibs_fetch and
 * ibs_op PMUs) and the derived-event tables of OProfile's IBS support: which
 * of the 64 derived events a fetch or op sample adds to, and by how much.
 * Pure functions over register values: no I/O, no allocation.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGINS_IBS_DECODE_H
#define OP_PLUGINS_IBS_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* IBS caps word (CPUID 8000_001B EAX as the kernel reports it) */
#define IBS_CAPS_AVAIL (1u << 0)
#define IBS_CAPS_OPCNT (1u << 4)
#define IBS_CAPS_BRNTRGT (1u << 5)
#define IBS_CAPS_OPCNTEXT (1u << 6)
#define IBS_CAPS_RIPINVALIDCHK (1u << 7)
#define IBS_CAPS_FETCHCTLEXTD (1u << 9)
#define IBS_CAPS_OPDATA4 (1u << 10)
#define IBS_CAPS_ZEN4 (1u << 11)

/* IBS_FETCH_CTL (MSR C001_1030) */
#define IBS_FETCH_LAT(ctl) ((uint32_t)(((ctl) >> 32) & 0xffff))
#define IBS_FETCH_EN (1ull << 48)
#define IBS_FETCH_VAL (1ull << 49)
#define IBS_FETCH_COMP (1ull << 50)
#define IBS_FETCH_ICMISS (1ull << 51)
#define IBS_FETCH_PHYV (1ull << 52)
#define IBS_FETCH_PGSZ(ctl) ((unsigned)(((ctl) >> 53) & 3))
#define IBS_FETCH_L1MISS (1ull << 55)
#define IBS_FETCH_L2MISS (1ull << 56)
#define IBS_FETCH_RAND_EN (1ull << 57)

/* IBS_OP_CTL (C001_1033) */
#define IBS_OP_EN (1ull << 17)
#define IBS_OP_VAL (1ull << 18)
#define IBS_OP_CNT_CTL (1ull << 19)

/* IBS_OP_DATA (C001_1035) */
#define IBS_OP_COMP_TO_RET(d) ((uint32_t)((d)&0xffff))
#define IBS_OP_TAG_TO_RET(d) ((uint32_t)(((d) >> 16) & 0xffff))
#define IBS_OP_RESYNC (1ull << 32)
#define IBS_OP_MISPRET (1ull << 33)
#define IBS_OP_RET (1ull << 34)
#define IBS_OP_TAKEN (1ull << 35)
#define IBS_OP_MISP (1ull << 36)
#define IBS_OP_BRRET (1ull << 37)
#define IBS_OP_RIPINV (1ull << 38)

/* IBS_OP_DATA2 (C001_1036) */
#define IBS_NB_SRC(d2) ((unsigned)((d2)&7))
#define IBS_NB_DSTPROC (1ull << 4)
#define IBS_NB_CACHE_HIT_ST (1ull << 5)

/* IBS_OP_DATA3 (C001_1037) */
#define IBS_LD (1ull << 0)
#define IBS_ST (1ull << 1)
#define IBS_L1TLBMISS (1ull << 2)
#define IBS_L2TLBMISS (1ull << 3)
#define IBS_L1HIT2M (1ull << 4)
#define IBS_L1HIT1G (1ull << 5)
#define IBS_L2HIT2M (1ull << 6)
#define IBS_DCMISS (1ull << 7)
#define IBS_MISALIGN (1ull << 8)
#define IBS_LDBNK (1ull << 9)
#define IBS_STBNK (1ull << 10)
#define IBS_STLFWD (1ull << 11)
#define IBS_STLCAN (1ull << 12)
#define IBS_WC (1ull << 13)
#define IBS_UC (1ull << 14)
#define IBS_LOCKED (1ull << 15)
#define IBS_MABHIT (1ull << 16)
#define IBS_LINV (1ull << 17)
#define IBS_PHYV (1ull << 18)
#define IBS_L2HIT1G (1ull << 19)
#define IBS_DC_MISS_LAT(d3) ((uint32_t)(((d3) >> 32) & 0xffff))

/* Derived events: linear index 0..63 (fetch 0-14, op 15-24, LS 25-50, NB 51-63). */
#define IBS_NR_EVENTS 64
#define IBS_FIRST_FETCH 0
#define IBS_FIRST_OP 15
#define IBS_FIRST_LS 25
#define IBS_FIRST_NB 51

/* fixed regs of a raw record (n may be larger: optional tail by caps) */
#define IBS_FETCH_NR_REGS 3
#define IBS_OP_NR_REGS 7

struct ibs_fetch_regs {
	uint32_t caps;
	uint64_t ctl, linaddr, physaddr;
	uint64_t extd; /* IC_IBS_EXTD_CTL, 0 if absent */
};

struct ibs_op_regs {
	uint32_t caps;
	uint64_t ctl, rip, data, data2, data3, dc_lin, dc_phys;
	uint64_t br_target; /* 0 if absent */
	uint64_t data4;     /* 0 if absent */
};

enum ibs_raw_status {
	IBS_RAW_OK = 0,
	IBS_RAW_SHORT,     /* no raw data, or fewer registers than the fixed block */
	IBS_RAW_BAD_SIZE,  /* size is not 4 + 8n */
	IBS_RAW_NOT_VALID, /* Ctl.Val (fetch bit 49 / op bit 18) is clear */
};

/*
 * Parse a PERF_SAMPLE_RAW payload (@raw points at the caps word that follows
 * the u32 size; @size = that size field). Optional tail registers are named
 * from the caps word. Never reads past @size.
 */
enum ibs_raw_status ibs_parse_fetch(const void *raw, uint32_t size, struct ibs_fetch_regs *out);
enum ibs_raw_status ibs_parse_op(const void *raw, uint32_t size, struct ibs_op_regs *out);
const char *ibs_raw_status_str(enum ibs_raw_status st);

/*
 * Force to 0 the op bits that family @family does not implement (table in
 * notes/oprofile-format.md 4.2): 0x10 RipInvalid; 0x12 NB DstProc and
 * CacheHitSt; 0x14 as 0x12 plus OpData3 bits 5, 9, 10, 12, 19.
 */
void ibs_mask_op(uint32_t family, struct ibs_op_regs *r);
/* True if the op's RIP is marked invalid (after ibs_mask_op). */
bool ibs_op_rip_invalid(const struct ibs_op_regs *r);

/*
 * What one sample adds to each derived event: add[i] for linear index i
 * (0 = not counted). Only indices of the sample's kind are written; the
 * caller zeroes @add. Returns how many entries are non-zero.
 */
unsigned ibs_derive_fetch(const struct ibs_fetch_regs *r, uint32_t add[IBS_NR_EVENTS]);
unsigned ibs_derive_op(const struct ibs_op_regs *r, uint32_t add[IBS_NR_EVENTS]);

/* Event code (0xf000..0xf24c) <-> linear index; -1 / 0 when not an IBS code. */
int ibs_event_index(uint32_t code);
uint32_t ibs_event_code(unsigned index);
/* true for fetch indices (0..14) */
bool ibs_index_is_fetch(unsigned index);

/* Period the perf event is opened with: count rounded down to 16, at least 16. */
uint64_t ibs_period(uint64_t count);
/* Highest op count family @family accepts (opcontrol's limits). */
uint64_t ibs_max_op_count(uint32_t family);
#define IBS_MAX_FETCH_COUNT 1048575u

#endif /* OP_PLUGINS_IBS_DECODE_H */
