/*
 * record.h - perf records as the sample path (perf*.c) hands them to buffer
 * sync (sync.c): decoded, in time order across all rings.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_RECORD_H
#define OP_CORE_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "oprofile_sdk.h"

enum op_rec_type {
	OP_REC_SAMPLE,
	OP_REC_MMAP, /* MMAP2 (or MMAP, or synthesized from /proc) */
	OP_REC_COMM,
	OP_REC_FORK,
	OP_REC_EXIT,
	OP_REC_LOST,
	OP_REC_THROTTLE,
	OP_REC_UNTHROTTLE,
	OP_REC_KSYMBOL,
};

/* what an OP_REC_LOST counts */
enum op_lost_kind {
	/* PERF_RECORD_LOST: records the kernel dropped, samples and side-band
	 * alike (it does not say which) */
	OP_LOST_RECORDS,
	/* samples dropped: PERF_RECORD_LOST_SAMPLES, or the kernel's
	 * PERF_FORMAT_LOST count of events that write samples only */
	OP_LOST_SAMPLES,
	/* mmap/comm/fork/exit/ksymbol records dropped: the PERF_FORMAT_LOST
	 * count of the event that writes side-band records only */
	OP_LOST_SIDEBAND,
	/* a PERF_RECORD_LOST when the exact counts above follow (perf.c reads
	 * PERF_FORMAT_LOST): news of a loss, not to be added to them */
	OP_LOST_NOTICE,
};

struct op_record {
	enum op_rec_type type;
	uint64_t time; /* perf time (ns), 0 for synthesized records */
	uint32_t cpu;
	uint32_t counter; /* SAMPLE: index of the event within its source
			   * (source 0: core counter number; 1+i: i-th event of
			   * registry source i, always 0 today) */
	union {
		struct op_perf_sample sample;
		struct {
			uint32_t pid, tid;
			uint64_t start, len, pgoff;
			uint32_t prot, flags;
			uint16_t cpumode; /* kernel or user mapping */
			bool exec;        /* executable mapping */
			const char *filename;
			uint32_t filename_len; /* strlen(filename) if the decoder
						* measured it, else 0 */
		} mmap;
		struct {
			uint32_t pid, tid;
			bool exec; /* PERF_RECORD_MISC_COMM_EXEC */
			const char *comm;
		} comm;
		struct {
			uint32_t pid, ppid, tid, ptid;
		} task; /* FORK and EXIT */
		struct {
			uint64_t id, lost;
			enum op_lost_kind kind;
		} lost;
		struct {
			uint64_t id;
		} throttle;
		struct {
			uint64_t addr;
			uint32_t len;
			uint16_t ktype, flags;
			const char *name;
		} ksym;
	};
};

#endif /* OP_CORE_RECORD_H */
