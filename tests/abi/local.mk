# tests/abi
