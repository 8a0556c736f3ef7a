# tests/abi
# (owner: loader) pins sizes/offsets of every SDK struct and the constants
if HAVE_CMOCKA
check_PROGRAMS += tests/abi/test_abi
TESTS += tests/abi/test_abi
SANITIZER_TESTS += tests/abi/test_abi
tests_abi_test_abi_SOURCES = tests/abi/test_abi.c
tests_abi_test_abi_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_abi_test_abi_LDADD = $(CMOCKA_LIBS)
endif
