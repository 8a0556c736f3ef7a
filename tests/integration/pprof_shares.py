#!/usr/bin/env python3
# pprof_shares.py - the samples of two functions of a binary in the text
# that `pprof -raw` prints: each sample's leaf location, its address (the
# ELF virtual address, as the profile gives it) inside the function's
# [start, start + size) from `nm -S` of the binary, its mapping the binary
# (by build ID: copies of one binary are one mapping, whichever path came first).
# Usage: pprof_shares.py RAW.txt BINARY FUNC1 FUNC2  -> "n1 n2 total" (samples)
# SPDX-License-Identifier: MIT
import re
import subprocess
import sys


def main():
    raw, binary, f1, f2 = sys.argv[1:5]
    syms = {}
    nm = subprocess.run(["nm", "-S", binary], capture_output=True, text=True, check=True)
    for line in nm.stdout.splitlines():
        p = line.split()
        if len(p) == 4 and p[3] in (f1, f2):
            syms[p[3]] = (int(p[0], 16), int(p[0], 16) + int(p[1], 16))
    if len(syms) != 2:
        print("pprof_shares: %s or %s not in nm -S %s" % (f1, f2, binary), file=sys.stderr)
        return 2
    rd = subprocess.run(["readelf", "-n", binary], capture_output=True, text=True, check=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", rd.stdout)
    want = m.group(1) if m else binary
    section, samples, locs, maps = None, [], {}, {}
    for line in open(raw):
        s = line.strip()
        if s in ("Samples:", "Locations", "Mappings"):
            section = s
            continue
        if section == "Samples:":
            m = re.match(r"(\d+)\s+\d+:\s+(\d+)", s)
            if m:
                samples.append((int(m.group(1)), int(m.group(2))))
        elif section == "Locations":
            m = re.match(r"(\d+): (0x[0-9a-f]+) M=(\d+)", s)
            if m:
                locs[int(m.group(1))] = (int(m.group(2), 16), int(m.group(3)))
        elif section == "Mappings":
            m = re.match(r"(\d+): \S+ (\S+)(?: ([0-9a-f]+))?", s)
            if m:
                maps[int(m.group(1))] = (m.group(2), m.group(3))
    n = {f1: 0, f2: 0}
    total = 0
    for count, leaf in samples:
        total += count
        addr, mid = locs.get(leaf, (0, 0))
        if want not in maps.get(mid, ("", None)):
            continue
        for f, (lo, hi) in syms.items():
            if lo <= addr < hi:
                n[f] += count
    print("%d %d %d" % (n[f1], n[f2], total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
