/*
 * op_profile_int.h - what the files of libopprofile share and its users do
 * not see: the hashes behind struct op_profile and the flat samples kept
 * until op_profile_finish. SPDX-License-Identifier: MIT
 */
#ifndef OP_PROFILE_INT_H
#define OP_PROFILE_INT_H

#include "op_profile.h"

/* open addressing: ids (1..N) in a power-of-two table, 0 = empty */
struct ph {
	uint32_t *slot;
	size_t cap, n;
};

/* one location of a flat sample file, waiting for the stacks to be subtracted */
struct op_profile_flat {
	uint32_t loc;
	struct op_profile_labels lab;
	uint64_t count;
};

struct op_profile_priv {
	struct ph maps, locs, samples;
	struct op_profile_flat *flat;
	size_t nflat, capflat;
	op_profile_warn_fn warn;
	void *warn_arg;
	char *root; /* prefix of binaries' paths (op_profile_load, op_profile_add_stacks) */
	/* a flat sample file of a thread (--separate=thread), of a cpu, was read */
	bool flat_thread, flat_cpu;
	bool flat_split; /* issue 20: a flat file of a --separate=cgroup split was read */
};

/*
 * issue 20: a stack's split key: 1 + its index in @p->splits into *@id
 * (added if new while no flat file of a split was added; after, 0 for a
 * key none of them has). 0 or -ENOMEM.
 */
int op_profile_split_id(struct op_profile *p, const char *key, uint32_t *id);

void op_profile_warnf(struct op_profile *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* OP_PROFILE_INT_H */
