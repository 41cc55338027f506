#!/usr/bin/env bash
# How a `udt perf` flow starts on a fast short path: one flow of SIZE per run between two
# network namespaces joined by a veth pair with `tbf` at SHAPE (default 4gbit) on each end
# (scripts/lib/shaped.sh), intervals of a quarter second, a fresh pair per run. With
# UDT_BASE=PATH every round also runs that binary, alternating which goes first, so the two
# builds meet the same machine. Each run holds /tmp/udt-bench.lock (flock -x).
#
# Prints per run: the first quarter-second's goodput, the time to reach half of SHAPE, and
# the whole transfer's goodput; then the medians per build. A start-up that ends early
# (issue 13: `model` paced at 16 packets per 100 ms, 4.11's initial RTT, and sometimes ended
# its start-up at 1.3k packets/s, then crawled for seconds) shows as a first quarter-second
# near zero and a late half-rate time.
#
#   SHAPE=4gbit UDT_BASE=/tmp/udt-old scripts/bench-startup.sh [RUNS=6] [SIZE=1G] [CC=model]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-6}
SIZE=${2:-1G}
CTRL=${3:-model}
SHAPE=${SHAPE:-4gbit}
LOCK=/tmp/udt-bench.lock
[ "$(id -u)" = 0 ] || { echo "bench-startup.sh: needs root (network namespaces)" >&2; exit 2; }
# shellcheck source=lib/builds.sh
source scripts/lib/builds.sh
udt_binary
OUT=$(mktemp -d)
NS_A=udt-bench-start-a-$$
NS_B=udt-bench-start-b-$$
cleanup() {
  ip netns del "$NS_A" 2>/dev/null || true
  ip netns del "$NS_B" 2>/dev/null || true
  rm -rf "$OUT"
}
trap cleanup EXIT
# shellcheck source=lib/shaped.sh
source scripts/lib/shaped.sh

# One flow with binary $1; its JSON report goes to $2.
one() {
  local bin=$1 json=$2
  cleanup
  shaped_pair "$NS_A" "$NS_B" 10.83.0 "$SHAPE"
  ip netns exec "$NS_A" "$bin" perf -s -1 -B 10.83.0.1 -p 15833 >/dev/null 2>&1 &
  local server=$!
  sleep 0.3
  ip netns exec "$NS_B" "$bin" perf -c 10.83.0.1 -p 15833 --cc "$CTRL" -n "$SIZE" -i 0.25 \
    --json >"$json"
  wait "$server" || true
}

# One locked run: build $1 (binary $2), round $3.
run() {
  flock -x "$LOCK" bash -c "$(declare -f one cleanup shaped_pair); \
      NS_A=$NS_A NS_B=$NS_B SHAPE=$SHAPE CTRL=$CTRL SIZE=$SIZE; \
      one '$2' '$OUT/$1-$3.json'"
}
for_each_build "$RUNS" run

python3 - "$OUT" "$SHAPE" "${BUILDS[@]}" <<'PY'
import json, os, re, statistics, sys
out, shape, builds = sys.argv[1], sys.argv[2], sys.argv[3:]
m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)bit", shape.lower())
rate = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
rows = {b: [] for b in builds}
for name in sorted(os.listdir(out), key=lambda n: int(n.split("-")[1].split(".")[0])):
    build = name.split("-")[0]
    d = json.load(open(os.path.join(out, name)))
    iv = d["intervals"]
    first = iv[0]["goodput_bps"] / 1e9 if iv else 0.0
    half = next((i["end_s"] for i in iv if i["goodput_bps"] >= rate / 2), None)
    total = d["goodput_bps"] / 1e9
    rows[build].append((first, half, total))
    half_s = f"{half:.2f} s" if half is not None else "never"
    print(f"{build:>4}: first 0.25 s {first:5.2f} Gbit/s, half of {shape} at {half_s:>7}, "
          f"whole {total:5.2f} Gbit/s")
for b, r in rows.items():
    if not r:
        continue
    halves = [h if h is not None else float("inf") for _, h, _ in r]
    print(f"{b}: medians over {len(r)} runs: first 0.25 s "
          f"{statistics.median(x for x, _, _ in r):.2f} Gbit/s, half rate at "
          f"{statistics.median(halves):.2f} s, whole {statistics.median(t for _, _, t in r):.2f} "
          f"Gbit/s; starts below 10% of {shape}: "
          f"{sum(1 for x, _, _ in r if x < rate / 10 / 1e9)}/{len(r)}")
PY
