#!/usr/bin/env bash
# The scavenger in the lab, build against build (issue 12): per round one
#   udt lab run scavenger --rate-cap 1gbit --runs "$SCAV_RUNS"
# per build, by default the scavenger alone, beside kernel CUBIC, and CUBIC alone (~45 s a
# run), the flows run by that build's `udt` (UDT_LAB_UDT). With UDT_BASE=PATH every round
# also runs that binary, alternating which goes first, so the two builds meet the same
# machine. The simulator's HyStart `cubic` is no stand-in for kernel CUBIC beside the
# scavenger (BENCHMARKS.md, session 62): changes to how the scavenger yields are judged here.
# To compare a change that sits behind an environment variable, give a wrapper script that
# exports it and execs the binary as UDT (or UDT_BASE).
#
# Round r starts the competitor at the r-th of SCAV_STARTS (seconds into the scavenger's
# 16 s, cycled; both builds alike). The scavenger's slowdowns come at nearly the same times
# in every run (the first ~1 s in, then every ~2.2 s), so a single start meets them at one
# phase, and a change that helps only there looked like a cure (BENCHMARKS.md, session 63):
# the default sweeps 3-5.1 s, about one slowdown cycle. Give ROUNDS as a multiple of it.
#
# Prints per run the scavenger's rate alone, and per competitor the rate it kept, how it
# left slow start (kernel TCP's HyStart rule and window; "?" for builds before 8f0c... that
# do not report it), the scavenger's yield, its share while the competitor ran and its time back, with how busy
# the host was (the lab marks runs whose host was busy); then the medians per build. Each
# run holds /tmp/udt-bench.lock (flock -x). Root (network namespaces).
#
#   UDT_BASE=/tmp/udt-old scripts/bench-scavenger.sh [ROUNDS=8]
#   SCAV_RUNS="scavenger + kernel TCP bbr,kernel TCP bbr alone" scripts/bench-scavenger.sh 3
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-8}
SCAV_RUNS=${SCAV_RUNS:-scavenger alone,scavenger + kernel TCP cubic,kernel TCP cubic alone}
read -r -a STARTS <<<"${SCAV_STARTS:-3 3.3 3.6 3.9 4.2 4.5 4.8 5.1}"
[ ${#STARTS[@]} -gt 0 ] || { echo "bench-scavenger.sh: SCAV_STARTS is empty" >&2; exit 2; }
LOCK=/tmp/udt-bench.lock
[ "$(id -u)" = 0 ] || { echo "bench-scavenger.sh: needs root (network namespaces)" >&2; exit 2; }
# shellcheck source=lib/builds.sh
source scripts/lib/builds.sh
udt_binary
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# One locked experiment: build $1 (binary $2), round $3.
run() {
  local start=${STARTS[$((($3 - 1) % ${#STARTS[@]}))]}
  echo "bench-scavenger.sh: $1, round $3, competitor from ${start}s" >&2
  UDT_LAB_UDT="$2" flock -x "$LOCK" "$2" lab run scavenger --rate-cap 1gbit \
    --runs "$SCAV_RUNS" --competitor-start "${start}s" --out "$OUT/$1-$3" \
    >"$OUT/$1-$3.log" 2>&1 \
    || echo "bench-scavenger.sh: $1 round $3 failed (log: $(tail -1 "$OUT/$1-$3.log"))" >&2
}
for_each_build "$ROUNDS" run

python3 - "$OUT" "$ROUNDS" "${BUILDS[@]}" <<'PY'
import json, statistics, sys
out, rounds, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def load(build, r):
    try:
        return json.load(open(f"{out}/{build}-{r}/results.json"))
    except (OSError, ValueError):
        return None

def seconds(cell):
    return float(cell.split()[0]) if cell.endswith(" s") else None

print("| build | round | from | alone Mbit/s | competitor | kept | left slow start | yield "
      "| scavenger during | back | host busy |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
summary = {}
for b in builds:
    for r in range(1, rounds + 1):
        d = load(b, r)
        if d is None:
            print(f"| {b} | {r} | | failed | | | | | | |")
            continue
        alone = next((x["result"]["steady_goodput_bps"] / 1e6 for x in d["rows"]
                      if x["run"] == "scavenger alone" and x.get("result")), None)
        busy = max((x.get("host_busy") or 0.0) for x in d["rows"])
        start = next((f"{x['params']['competitor_start_s']:.1f} s" for x in d["rows"]
                      if "competitor_start_s" in (x.get("params") or {})), "")
        s = summary.setdefault(b, {"alone": [], "kept": [], "yield": [], "back": []})
        if alone is not None:
            s["alone"].append(alone)
        rows = d["tables"][0]["rows"] if d.get("tables") else []
        for row in rows or [[""] * 9]:
            # Builds before the slow-start column (session 64) report eight columns.
            if len(row) == 8:
                row = row[:4] + ["?"] + row[4:]
            comp, _, _, kept, exit_, during, yld, back, _ = row
            if comp:
                s["kept"].append(float(kept.rstrip("%")))
                for key, cell in (("yield", yld), ("back", back)):
                    if seconds(cell) is not None:
                        s[key].append(seconds(cell))
            shown = "" if alone is None else f"{alone:.0f}"
            print(f"| {b} | {r} | {start} | {shown} | {comp} | {kept} | {exit_} | {yld} "
                  f"| {during} | {back} | {busy:.0%} |")
print()
for b, s in summary.items():
    def med(key, fmt):
        v = s[key]
        if not v:
            return "-"
        mid, low, high = (fmt.format(x) for x in (statistics.median(v), min(v), max(v)))
        return f"{mid} ({low}-{high})"
    print(f"- {b}: alone {med('alone', '{:.0f}')} Mbit/s; kept {med('kept', '{:.0f}')}%; "
          f"yield {med('yield', '{:.1f}')} s; back {med('back', '{:.1f}')} s")
PY
