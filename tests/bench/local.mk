# tests/bench
# opcount workloads (page toucher, fork K children, ping-pong, spin, threads):
# built for the integration test and the bench script
check_PROGRAMS += tests/bench/count_workloads
tests_bench_count_workloads_SOURCES = tests/bench/count_workloads.c
