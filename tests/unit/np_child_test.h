/*
 * np_child_test.h - the message types test_np_child and its helper
 * program (np_child_helper.c) speak over plugins/common/np_child.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_TESTS_NP_CHILD_TEST_H
#define OP_TESTS_NP_CHILD_TEST_H

#include "np_child.h"

enum {
	NPT_ECHO = NP_MSG_USER, /* the same message back, the body in a new memfd */
	NPT_INFO,               /* the helper describes its process */
	NPT_EXIT,               /* _exit(arg) */
	NPT_HOSTILE,            /* send the malformed message arg names */
};

/* NPT_HOSTILE's arguments */
enum {
	NPT_BAD_LEN = 1,
	NPT_BAD_MAGIC,
	NPT_HUGE,
	NPT_UNANNOUNCED_FD,
	NPT_TWO_FDS,
	NPT_SHORT,
	NPT_MISSING_FD,
	NPT_BAD_FLAGS,
	NPT_UNSEALED, /* well-formed; its body fails np_memfd_check */
	NPT_STOP_READING,
};

#endif /* OP_TESTS_NP_CHILD_TEST_H */
