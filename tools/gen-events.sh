#!/bin/sh
# gen-events.sh - regenerate the events/ catalogues from libpfm4's tables.
# Event codes and unit masks are hardware facts: this script asks libpfm4
# (tools/gen_events.c) for them - each event and each of its unit masks is
# encoded by libpfm4 (LIBPFM_ENCODE_INACTIVE=1, so no PMU is needed) and the
# raw config is split into event select, unit mask and extra:edge/inv/any/
# cmask modifiers; events that need config1 (off-core response, load
# latency) are skipped and counted on stderr. Then it applies the hand-kept
# extras found in events/extras/<arch>/<model>/: `events` and `unit_masks`
# lines appended verbatim (IBS ext: events, OProfile-name aliases) and
# `minimum` lines "NAME COUNT" that set an event's minimum count.
# Rerun after a libpfm4 upgrade; review the diff; run
# tests/unit/test_catalogues and test_model_{amd64,intel}; commit the result.
# i386/arch_perfmon and x86-64/generic are hand-written (not generated).
#   usage: tools/gen-events.sh [SRCDIR]   (needs libpfm4-dev and a C compiler)
# SPDX-License-Identifier: MIT
set -eu
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O1 -o "$tmp/gen_events" "$top/tools/gen_events.c" -lpfm

# catalogue directory     libpfm4 PMU               unit-mask type
while read -r dir pmu type; do
	out=$top/events/$dir
	mkdir -p "$out"
	"$tmp/gen_events" "$pmu" "$out" "$dir" "$type"
	extras=$top/events/extras/$dir
	if [ -f "$extras/minimum" ]; then
		while read -r name min; do
			case $name in ''|'#'*) continue ;; esac
			grep -q " name:$name " "$out/events" || { echo "gen-events: $extras/minimum: no event $name in $dir" >&2; exit 1; }
			sed -i "s/ minimum:[0-9]* name:$name / minimum:$min name:$name /" "$out/events"
		done <"$extras/minimum"
	fi
	for f in events unit_masks; do
		[ -f "$extras/$f" ] || continue
		printf '# hand-kept extras (events/extras/%s/%s)\n' "$dir" "$f" >>"$out/$f"
		grep -v '^#' "$extras/$f" >>"$out/$f"
	done
done <<'MODELS'
x86-64/family10   amd64_fam10h_barcelona   bitmask
x86-64/family15h  amd64_fam15h_interlagos  bitmask
x86-64/family17h  amd64_fam17h_zen1        bitmask
x86-64/family19h  amd64_fam19h_zen3        bitmask
i386/skylake      skl                      exclusive
MODELS
