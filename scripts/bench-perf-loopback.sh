#!/usr/bin/env bash
# Loopback memory to memory through `udt perf`, as a user runs it: UDT with each controller
# in CCS against kernel TCP (its default controller, autotuned buffers, loopback's 64 KiB
# MSS), one SECS-second flow each, in turn, RUNS rounds. With UDT_BASE=PATH every round also
# runs that build's UDT flows (its own server: the receiver's estimates are measured there).
# Each flow holds /tmp/udt-bench.lock (flock -x).
#
# Prints per flow goodput and CPU seconds per GiB received (sender, receiver, both; each
# end's getrusage; and the whole machine's, scripts/lib/machine-cpu.sh, which also counts
# kernel work in softirqs that no process is charged for), then the medians, and each UDT
# row's goodput and CPU against TCP's.
#
#   UDT_BASE=/tmp/udt-old scripts/bench-perf-loopback.sh [RUNS=5] [SECS=5] [CCS="native model"]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
SECS=${2:-5}
CCS=${3:-native model}
LOCK=/tmp/udt-bench.lock
# shellcheck source=lib/builds.sh
source scripts/lib/builds.sh
# shellcheck source=lib/machine-cpu.sh
source scripts/lib/machine-cpu.sh
udt_binary
OUT=$(mktemp -d)
SERVERS=()
cleanup() {
  for pid in "${SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$OUT"
}
trap cleanup EXIT

# A server per build, on ports of its own.
serve() {
  local bin=$1 port=$2
  "$bin" perf -s -B 127.0.0.1 -p "$port" >/dev/null 2>&1 &
  SERVERS+=($!)
}
serve "$UDT" 15961
[ -n "${UDT_BASE:-}" ] && serve "$UDT_BASE" 15962
sleep 0.5
exec 9>"$LOCK"
flock -x 9
cpu_idle_rate "$OUT/idle"
flock -u 9

flow() {
  local bin=$1 port=$2 name=$3 round=$4
  shift 4
  flock -x 9
  cpu_snapshot "$OUT/$name.$round.stat"
  "$bin" perf -c 127.0.0.1 -p "$port" -t "$SECS" --json "$@" >"$OUT/$name.$round.json"
  cpu_snapshot "$OUT/$name.$round.stat"
  flock -u 9
}

# One round of one build: each controller, then TCP (through the same build's client).
one_round() {
  local build=$1 bin=$2 round=$3 port=15961 cc
  [ "$build" = base ] && port=15962
  for cc in $CCS; do
    flow "$bin" "$port" "$build-$cc" "$round" --cc "$cc"
  done
  [ "$build" = new ] && flow "$bin" "$port" tcp "$round" --proto tcp
  return 0
}
for_each_build "$RUNS" one_round

python3 - "$OUT" <<'EOF'
import json, os, statistics, sys
sys.path.insert(0, "scripts/lib")
from machine_cpu import busy_seconds, idle_rate
out = sys.argv[1]
idle = idle_rate(f"{out}/idle")
rows = {}
for f in sorted(os.listdir(out)):
    if not f.endswith(".json"):
        continue
    name, _round, _ = f.rsplit(".", 2)
    d = json.load(open(os.path.join(out, f)))
    gib = d["bytes"] / 2**30
    machine = busy_seconds(os.path.join(out, f[:-len("json")] + "stat"), idle)
    rows.setdefault(name, []).append(
        (d["goodput_bps"] / 1e9, d["sender_cpu_seconds"] / gib, d["receiver_cpu_seconds"] / gib,
         machine / gib if machine is not None else float("nan")))
med = {n: [statistics.median(r[i] for r in v) for i in range(4)] for n, v in rows.items()}
print("| flow | goodput Gbit/s (median) | runs | sender CPU-s/GiB | receiver CPU-s/GiB | both | machine CPU-s/GiB | goodput / TCP | CPU / TCP (both; machine) |")
print("|---|---|---|---|---|---|---|---|---|")
tcp = med.get("tcp")
for n, (g, s, r, m) in sorted(med.items()):
    runs = ", ".join(f"{x[0]:.2f}" for x in rows[n])
    vs = (f"{g / tcp[0]:.2f}x | {(s + r) / (tcp[1] + tcp[2]):.2f}x; {m / tcp[3]:.2f}x"
          if tcp and n != "tcp" else "|")
    print(f"| {n} | {g:.2f} | {runs} | {s:.3f} | {r:.3f} | {s + r:.3f} | {m:.3f} | {vs} |")
print(f"\nThe idle machine used {idle:.3f} CPU-s per second.")
EOF
