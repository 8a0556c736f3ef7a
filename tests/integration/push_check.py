#!/usr/bin/env python3
# push_check.py - checks what push_receiver.py stored against the Pyroscope
# and Parca documentation: request line, headers, labels, and every profile
# decoded by the real consumers (upstream pprof -raw, protoc --decode).
# Usage: push_check.py --dir DIR --protocol pyroscope|parca --service NAME
#        [--label K=V]... [--org-id ID] [--bearer TOKEN | --basic USER:PASS]
#        --pprof PPROF --proto profile.proto [--min N]
# Prints "requests N" and one line per problem; exit 1 on any problem.
# SPDX-License-Identifier: MIT
import argparse
import base64
import glob
import gzip
import json
import os
import subprocess
import sys
import urllib.parse

problems = []
found_ids = set()


def bad(msg):
    problems.append(msg)
    print("FAIL: " + msg)


def check_pprof(gz, what, a):
    path = what + ".pb.gz"
    with open(path, "wb") as f:
        f.write(gz)
    try:
        raw = gzip.decompress(gz)
    except OSError as e:
        bad("%s: not gzip: %s" % (what, e))
        return
    pd = os.path.dirname(a.proto)
    p = subprocess.run(["protoc", "--decode=perftools.profiles.Profile", "-I" + pd, a.proto],
                       input=raw, capture_output=True, timeout=60)
    if p.returncode != 0 or b"sample_type" not in p.stdout:
        bad("%s: protoc --decode failed: %s" % (what, p.stderr.decode(errors="replace")[:300]))
    found_ids.update(p.stdout.decode(errors="replace").split())
    p = subprocess.run([a.pprof, "-raw", path], capture_output=True, timeout=60,
                       env=dict(os.environ, PPROF_TMPDIR=os.path.dirname(os.path.abspath(path))))
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0 or "PeriodType: cpu nanoseconds" not in out:
        bad("%s: pprof -raw failed (rc %d): %s" % (what, p.returncode,
                                                 p.stderr.decode(errors="replace")[:300]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--protocol", required=True)
    ap.add_argument("--service", required=True)
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--org-id")
    ap.add_argument("--bearer")
    ap.add_argument("--basic")
    ap.add_argument("--pprof", required=True)
    ap.add_argument("--proto", required=True)
    ap.add_argument("--min", type=int, default=1)
    # consecutive profiles must join up: none was lost between them
    ap.add_argument("--contiguous", action="store_true")
    # a build ID that some profile's mappings must carry (the workload's)
    ap.add_argument("--build-id")
    a = ap.parse_args()
    labels = dict(l.split("=", 1) for l in a.label)
    reqs = sorted(glob.glob(os.path.join(a.dir, "*.req")))
    print("requests %d" % len(reqs))
    if len(reqs) < a.min:
        bad("%d requests, expected at least %d" % (len(reqs), a.min))
    last_until = None
    for r in reqs:
        what = os.path.basename(r)[:-4]
        req = json.load(open(r))
        body = open(r[:-4] + ".body", "rb").read()
        hdr = {}
        for k, v in req["headers"]:
            hdr[k.lower()] = v
        if req["method"] != "POST":
            bad("%s: method %s, expected POST" % (what, req["method"]))
        if a.org_id is not None and hdr.get("x-scope-orgid") != a.org_id:
            bad("%s: X-Scope-OrgID is %r" % (what, hdr.get("x-scope-orgid")))
        if a.org_id is None and "x-scope-orgid" in hdr:
            bad("%s: X-Scope-OrgID without an org_id" % what)
        auth = hdr.get("authorization")
        if a.bearer is not None and auth != "Bearer " + a.bearer:
            bad("%s: Authorization is %r, expected the bearer token" % (what, auth))
        if a.basic is not None and auth != "Basic " + base64.b64encode(a.basic.encode()).decode():
            bad("%s: Authorization is %r, expected basic auth" % (what, auth))
        if a.bearer is None and a.basic is None and auth is not None:
            bad("%s: Authorization without credentials" % what)
        u = urllib.parse.urlsplit(req["path"])
        if a.protocol == "pyroscope":
            # POST /ingest?name=APP{k=v,...}&from=&until=&format=pprof&sampleRate=
            if u.path != "/ingest":
                bad("%s: path %s, expected /ingest" % (what, u.path))
            q = urllib.parse.parse_qs(u.query, strict_parsing=True)
            want = a.service + "{" + ",".join("%s=%s" % kv for kv in labels.items()) + "}"
            if q.get("name") != [want]:
                bad("%s: name=%r, expected %r" % (what, q.get("name"), want))
            # byte for byte as sent: RFC 3986 percent-encoding (upper-case hex,
            # only unreserved characters left), the name first
            raw = "name=" + urllib.parse.quote(want, safe="") + "&from="
            if not u.query.startswith(raw):
                bad("%s: query %r, expected it to start %r" % (what, u.query, raw))
            if q.get("format") != ["pprof"]:
                bad("%s: format=%r" % (what, q.get("format")))
            try:
                f, t, hz = int(q["from"][0]), int(q["until"][0]), int(q["sampleRate"][0])
            except (KeyError, ValueError):
                bad("%s: from/until/sampleRate missing or not integers: %s" % (what, u.query))
                continue
            if not (0 < f <= t) or t - f > 3600:
                bad("%s: from %d until %d" % (what, f, t))
            if last_until is not None and f + 1 < last_until:
                bad("%s: from %d overlaps the last profile (until %d)" % (what, f, last_until))
            if a.contiguous and last_until is not None and f > last_until + 1:
                bad("%s: from %d leaves a gap after the last profile (until %d)"
                    % (what, f, last_until))
            last_until = t
            if hz <= 0:
                bad("%s: sampleRate %d" % (what, hz))
            if hdr.get("content-type") != "application/octet-stream":
                bad("%s: Content-Type %r" % (what, hdr.get("content-type")))
            check_pprof(body, os.path.join(a.dir, what), a)
        else:
            # POST /api/profiles/writeraw, JSON WriteRawRequest
            if u.path != "/api/profiles/writeraw" or u.query:
                bad("%s: path %s, expected /api/profiles/writeraw" % (what, req["path"]))
            if hdr.get("content-type") != "application/json":
                bad("%s: Content-Type %r" % (what, hdr.get("content-type")))
            try:
                j = json.loads(body)
                series = j["series"]
                got = {l["name"]: l["value"] for l in series[0]["labels"]["labels"]}
                raw = base64.b64decode(series[0]["samples"][0]["rawProfile"], validate=True)
            except (ValueError, KeyError, IndexError, TypeError) as e:
                bad("%s: not a WriteRawRequest: %s" % (what, e))
                continue
            if j.get("normalized") is not True:
                bad("%s: normalized is not true" % what)
            if not got.get("__name__"):
                bad("%s: no __name__ label" % what)
            if got.get("service_name") != a.service:
                bad("%s: service_name %r" % (what, got.get("service_name")))
            for k, v in labels.items():
                if got.get(k) != v:
                    bad("%s: label %s=%r, expected %r" % (what, k, got.get(k), v))
            check_pprof(raw, os.path.join(a.dir, what), a)
    # build_id is a string index: the hex is in the string table
    if a.build_id and reqs and '"%s"' % a.build_id not in found_ids:
        bad("no profile carries the build ID %s" % a.build_id)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
