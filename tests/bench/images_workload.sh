#!/bin/sh
# images_workload.sh - writes DIR/workload.sh, a multi-image workload of real
# programs: every ELF program of a few base packages run with --version
# (exec, ld.so, libc, the program's own start-up), 30 stdin filters doing
# real work on a 30,000-line text, gzip/bzip2/xz, python3 (its lib-dynload
# extension modules) and perl. `sh DIR/workload.sh SECONDS` loops over it
# for that long; run two copies to keep both CPUs busy. Its programs are
# listed in DIR/progs. Used by bench_report_scale.sh and bench_sample_path.sh.
# Usage: images_workload.sh DIR
# SPDX-License-Identifier: MIT
set -u
W=${1:?usage: images_workload.sh DIR}
mkdir -p "$W" || exit 1
for p in coreutils diffutils findutils grep sed gzip bzip2 xz-utils tar perl-base mawk file bsdextrautils; do
	dpkg -L "$p" 2>/dev/null | grep '^/usr/bin/'
done | while read -r f; do
	# not /usr/bin/[: perf 6.1's report corrupts its heap and aborts ("malloc(): invalid
	# size", "corrupted size vs. prev_size") as soon as a sample falls in a binary
	# named "[" (taken for a "[module]" name); oprofiled and opreport handle it.
	# Nor programs that wait, write to terminals or run other commands.
	case ${f##*/} in "["|wall|write|logger|shred|script*|renice|nohup|timeout|yes|tee|xargs|nice|stdbuf|env|runcon|chcon) continue ;; esac
	[ -f "$f" ] && [ ! -L "$f" ] && head -c 4 "$f" | grep -q ELF && echo "$f"
done | sort -u >"$W/progs"
[ -s "$W/progs" ] || { echo "images_workload: no programs found (dpkg -L)"; exit 1; }
seq 1 30000 | awk '{ printf "line %d alpha beta gamma %x\n", $1, $1 * 7919 }' >"$W/input"
cat >"$W/workload.sh" <<EOS
end=\$((\$(date +%s) + \$1))
while [ "\$(date +%s)" -lt "\$end" ]; do
	for p in \$(cat "$W/progs"); do "\$p" --version </dev/null >/dev/null 2>&1; done
	in=$W/input
	for f in b2sum base32 base64 cksum md5sum sha1sum sha224sum sha256sum sha384sum sha512sum sum tac sort uniq wc od hexdump nl fold fmt expand unexpand pr rev column; do
		"\$f" <"\$in" >/dev/null 2>&1
	done
	cut -c1-10 <"\$in" >/dev/null; tr a-z A-Z <"\$in" >/dev/null; sed 's/a/b/g' "\$in" >/dev/null
	grep -c beta "\$in" >/dev/null; mawk '{ n += NF } END { print n }' "\$in" >/dev/null
	gzip -1 -c "\$in" | gzip -dc | bzip2 -1 | bzip2 -dc | xz -1 | xz -dc | sha256sum >/dev/null
	sort -R "\$in" | sort -n -k2 | md5sum >/dev/null
	python3 -c 'import json, zlib, hashlib, bz2, lzma, decimal, datetime, csv, ssl, socket, select
d = [list(range(200)) for _ in range(100)]
s = json.dumps(d).encode()
zlib.compress(s); bz2.compress(s); lzma.compress(s); hashlib.sha256(s).hexdigest()
sum(decimal.Decimal(i) / 7 for i in range(3000))' 2>/dev/null
	perl -e 'my \$s = 0; \$s += \$_ * \$_ for 1 .. 100000; my %h; \$h{\$_ % 977} .= "x" for 1 .. 50000;' 2>/dev/null
done
EOS
