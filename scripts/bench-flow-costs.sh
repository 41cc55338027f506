#!/usr/bin/env bash
# What one paced `udt perf` flow costs and how it went, build against build: per run a fresh
# pair of network namespaces joined by a veth pair with `tbf` at RATE (scripts/lib/shaped.sh),
# one flow of SECS seconds, `perf stat` around both ends. With UDT_BASE=PATH every round also
# runs that binary, alternating which goes first. LOAD=1 runs two busy loops beside each flow
# (both cores busy, as during a CI run). Each run holds /tmp/udt-bench.lock (flock -x).
#
# Prints per run: goodput, retransmitted and lost packets, the drops `tbf` counted (a GSO
# train it drops counts once), the receiver's send calls (its ACKs and NAKs), the context
# switches of each end and the CPU seconds of both; then the medians per build.
#
#   UDT_BASE=/tmp/udt-old LOAD=0 scripts/bench-flow-costs.sh [RUNS=3] [RATE=45mbit] [SECS=10] [CC=model]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
RATE=${2:-45mbit}
SECS=${3:-10}
CTRL=${4:-model}
LOAD=${LOAD:-0}
LOCK=/tmp/udt-bench.lock
[ "$(id -u)" = 0 ] || { echo "bench-flow-costs.sh: needs root (network namespaces)" >&2; exit 2; }
command -v perf >/dev/null || { echo "bench-flow-costs.sh: needs perf (apt-get install linux-perf)" >&2; exit 2; }
# shellcheck source=lib/builds.sh
source scripts/lib/builds.sh
udt_binary
OUT=$(mktemp -d)
NS_A=udt-bench-cost-a-$$
NS_B=udt-bench-cost-b-$$
cleanup() {
  ip netns del "$NS_A" 2>/dev/null || true
  ip netns del "$NS_B" 2>/dev/null || true
}
trap 'cleanup; rm -rf "$OUT"' EXIT
# shellcheck source=lib/shaped.sh
source scripts/lib/shaped.sh
EVENTS=task-clock,context-switches,syscalls:sys_enter_sendmmsg

# One flow with binary $1; its reports go to $2.*.
one() {
  local bin=$1 out=$2 load=()
  cleanup
  shaped_pair "$NS_A" "$NS_B" 10.84.0 "$RATE"
  ip netns exec "$NS_A" perf stat -x, -e "$EVENTS" -o "$out.recv" \
    "$bin" perf -s -1 -B 10.84.0.1 -p 15834 >/dev/null 2>&1 &
  local server=$!
  sleep 0.3
  if [ "$LOAD" = 1 ]; then
    yes >/dev/null & load+=($!)
    yes >/dev/null & load+=($!)
  fi
  ip netns exec "$NS_B" perf stat -x, -e "$EVENTS" -o "$out.send" \
    "$bin" perf -c 10.84.0.1 -p 15834 --cc "$CTRL" -t "$SECS" --json >"$out.json" 2>/dev/null || true
  [ ${#load[@]} = 0 ] || kill "${load[@]}"
  wait "$server" || true
  tc -n "$NS_B" -s qdisc show dev vb | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -1 >"$out.drops"
}

# One locked run: build $1 (binary $2), round $3.
run() {
  flock -x "$LOCK" bash -c "$(declare -f one cleanup shaped_pair); \
      NS_A=$NS_A NS_B=$NS_B RATE=$RATE CTRL=$CTRL SECS=$SECS LOAD=$LOAD EVENTS=$EVENTS; \
      one '$2' '$OUT/$1-$3'"
}
for_each_build "$RUNS" run

python3 - "$OUT" "$RUNS" "${BUILDS[@]}" <<'PY'
import json, statistics, sys
out, runs, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def stat(path):
    counts = {}
    for line in open(path):
        f = line.strip().split(",")
        if len(f) > 2 and f[0] and not line.startswith("#"):
            try:
                counts[f[2].replace("syscalls:sys_enter_", "")] = float(f[0])
            except ValueError:
                pass
    return counts

print("| build | run | goodput Mbit/s | retransmitted / lost | tbf drops | receiver sendmmsg | ctx switches send / recv | CPU-s both |")
print("|---|---|---|---|---|---|---|---|")
rows = {b: [] for b in builds}
for r in range(1, runs + 1):
    for b in builds:
        p = f"{out}/{b}-{r}"
        try:
            d = json.load(open(p + ".json"))
        except (OSError, ValueError):
            print(f"| {b} | {r} | failed | | | | | |")
            continue
        s, v = stat(p + ".send"), stat(p + ".recv")
        drops = open(p + ".drops").read().strip() or "?"
        row = (d["goodput_bps"] / 1e6, v.get("sendmmsg", 0), s.get("context-switches", 0),
               v.get("context-switches", 0), d["sender_cpu_seconds"] + d["receiver_cpu_seconds"])
        rows[b].append(row)
        print(f"| {b} | {r} | {row[0]:.1f} | {d['retransmitted_packets']} / {d['lost_packets']} | {drops} "
              f"| {row[1]:.0f} | {row[2]:.0f} / {row[3]:.0f} | {row[4]:.3f} |")
print()
for b in builds:
    if rows[b]:
        med = [statistics.median(c) for c in zip(*rows[b])]
        print(f"- {b}: medians goodput {med[0]:.1f} Mbit/s, receiver sendmmsg {med[1]:.0f}, "
              f"ctx switches {med[2]:.0f} / {med[3]:.0f}, CPU {med[4]:.3f} s")
PY
