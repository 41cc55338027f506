#!/usr/bin/env bash
# A few cells of the lab's grid, build against build: per run one `udt perf` flow of SECS
# seconds through `udt lab link` (the userspace WAN emulator: rate, RTT, random loss, a
# one-BDP drop-tail queue) for each "RTT/LOSS" cell. With UDT_BASE=PATH every round also
# runs that binary, alternating which goes first, so the two builds meet the same machine.
# Each run holds /tmp/udt-bench.lock (flock -x).
#
# Prints per run and cell: goodput, retransmitted / lost packets, and both processes' CPU
# seconds per GiB received (`udt perf --json`: each end's getrusage; the emulator's threads
# are not counted); then the medians per build and cell.
#
#   RATE=1gbit CELLS="0/0 0/1% 10ms/0" UDT_BASE=/tmp/udt-old scripts/bench-lab-cells.sh [RUNS=2] [SECS=8] [CC=model]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-2}
SECS=${2:-8}
CTRL=${3:-model}
RATE=${RATE:-1gbit}
CELLS=${CELLS:-0/0 0/1% 10ms/0 10ms/0.1% 50ms/0.1%}
LOCK=/tmp/udt-bench.lock
[ "$(id -u)" = 0 ] || { echo "bench-lab-cells.sh: needs root (network namespaces)" >&2; exit 2; }
# shellcheck source=lib/builds.sh
source scripts/lib/builds.sh
udt_binary
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# One locked run of every cell: build $1 (binary $2), round $3.
run() {
  local cell rtt loss
  for cell in $CELLS; do
    rtt=${cell%%/*} loss=${cell#*/}
    # The client writes its report itself: the server's banner shares the link's stdout.
    flock -x "$LOCK" "$2" lab link --rate "$RATE" --rtt "$rtt" --loss "$loss" \
      --a "$2 perf -s -1" -- \
      sh -c "sleep 0.3; exec '$2' perf -c \$UDT_LAB_A -t $SECS --cc $CTRL --json \
        >'$OUT/$1-$3-${cell//\//_}.json'" >/dev/null 2>&1 || true
  done
}
for_each_build "$RUNS" run

python3 - "$OUT" "$RUNS" "$CELLS" "${BUILDS[@]}" <<'PY'
import json, statistics, sys
out, runs, cells, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
print("| cell (RTT/loss) | build | goodput Mbit/s per run | retransmitted / lost per run | CPU-s/GiB per run |")
print("|---|---|---|---|---|")
medians = []
for cell in cells:
    for b in builds:
        rates, losses, cpus = [], [], []
        for r in range(1, runs + 1):
            try:
                d = json.load(open(f"{out}/{b}-{r}-{cell.replace('/', '_')}.json"))
            except (OSError, ValueError):
                rates.append(None)
                losses.append("failed")
                continue
            rates.append(d["goodput_bps"] / 1e6)
            gib = d["bytes"] / 2**30
            if gib > 0:
                cpus.append((d["sender_cpu_seconds"] + d["receiver_cpu_seconds"]) / gib)
            losses.append(f"{d['retransmitted_packets']} / {d['lost_packets']}")
        shown = ", ".join("failed" if x is None else f"{x:.0f}" for x in rates)
        cpu = ", ".join(f"{x:.2f}" for x in cpus)
        print(f"| {cell} | {b} | {shown} | {', '.join(losses)} | {cpu} |")
        ok = [x for x in rates if x is not None]
        if ok:
            line = f"- {cell} {b}: median {statistics.median(ok):.0f} Mbit/s"
            if cpus:
                line += f", {statistics.median(cpus):.2f} CPU-s/GiB"
            medians.append(line)
print()
print("\n".join(medians))
PY
