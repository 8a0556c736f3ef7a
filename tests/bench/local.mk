# tests/bench
