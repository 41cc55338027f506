#!/usr/bin/env bash
# N of our flows alone on one emulated bottleneck, build against build (issue 12: "fair among
# udt flows"): per run `udt lab link` (the userspace WAN emulator, a one-BDP drop-tail queue)
# at RATE and RTT, N `udt perf` client processes with CC started together, each to its own
# one-off server. With UDT_BASE=PATH every round also runs that binary, alternating which
# goes first. Each run holds /tmp/udt-bench.lock (flock -x).
#
# Prints per run each flow's goodput over the whole seconds all flows ran, from second FROM
# (start-up and the first shares left out), their σ/μ (population σ; issue 12's bar is 5%)
# and Jain's index, and utilisation (all payload over RATE: about 97% is full); then the medians
# per build. The simulator's counterpart is `cc_model::model_flows_share_fairly`; the lab's
# reference, two kernel TCP flows of one kind on the same link, is
# `RATE=... RTT=... scripts/bench-beside-tcp.sh RUNS SECS 1 bbr tcp:bbr` (or cubic).
#
# With LATE=S (seconds, default 0) flows 1..N-1 start S seconds after flow 0 and all end at
# SECS: latecomers joining a flow that has the link; FROM then counts from their start.
#
# With KEEP=DIR the reports stay in DIR (created if missing): BUILD-ROUND-FLOW.json, each
# client's report, and BUILD-ROUND-FLOW.log, its stderr, which holds the controller's
# trace when UDT_LOG is set (say UDT_LOG=udt_proto::congestion::model=debug: when each
# flow entered and left the competition mode).
#
#   RATE=1gbit RTT=50ms FROM=5 UDT_BASE=/tmp/udt-old scripts/bench-among-udt.sh [RUNS=3] [SECS=20] [N=2] [CC=model]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
SECS=${2:-20}
N=${3:-2}
CC=${4:-model}
RATE=${RATE:-1gbit}
RTT=${RTT:-50ms}
FROM=${FROM:-5}
LATE=${LATE:-0}
LOCK=/tmp/udt-bench.lock
PORT=15900
[ "$(id -u)" = 0 ] || { echo "bench-among-udt.sh: needs root (network namespaces)" >&2; exit 2; }
[ "$((LATE + FROM))" -lt "$SECS" ] || { echo "bench-among-udt.sh: LATE + FROM ($LATE + $FROM) must be below SECS ($SECS)" >&2; exit 2; }
# shellcheck source=lib/builds.sh
source scripts/lib/builds.sh
udt_binary
if [ -n "${KEEP:-}" ]; then
  mkdir -p "$KEEP"
  OUT=$(realpath "$KEEP")
else
  OUT=$(mktemp -d)
  trap 'rm -rf "$OUT"' EXIT
fi

# One locked run: build $1 (binary $2), round $3.
run() {
  local servers clients i
  servers="" clients=""
  for i in $(seq 0 $((N - 1))); do
    local delay=0
    [ "$i" = 0 ] || delay=$LATE
    servers+="'$2' perf -s -1 -p $((PORT + i)) >/dev/null 2>&1 & "
    clients+="(sleep $delay; exec '$2' perf -c \$UDT_LAB_A -p $((PORT + i)) -t $((SECS - delay)) \
      --cc $CC --json >'$OUT/$1-$3-$i.json' 2>'$OUT/$1-$3-$i.log') & "
  done
  flock -x "$LOCK" "$2" lab link --rate "$RATE" --rtt "$RTT" \
    --a "$servers wait" -- \
    sh -c "sleep 0.5; $clients wait" >/dev/null 2>&1 || true
  echo "round $3: $1 done" >&2
}
for_each_build "$RUNS" run

python3 - "$OUT" "$RUNS" "$N" "$FROM" "$RATE" "$LATE" "${BUILDS[@]}" <<'PY'
import json, statistics, sys
sys.path.insert(0, "scripts/lib")
out, runs, n, start, rate, late, builds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], int(sys.argv[6]), sys.argv[7:]

def bits(s):
    """A tc-style rate (1gbit, 200mbit) in bit/s."""
    s = s.lower()
    for unit, mult in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * mult
    return float(s)

def per_second(path):
    """Goodput (bit/s) of each whole second of one flow's report."""
    d = json.load(open(path))
    return [iv["goodput_bps"] for iv in d["intervals"] if iv["end_s"] - iv["start_s"] > 0.9]

def cov(x):
    m = sum(x) / len(x)
    return (sum((v - m) ** 2 for v in x) / len(x)) ** 0.5 / m

def jain(x):
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x))

joined = f", flows 2-{n} {late} s after the first" if late else ""
print(f"{n} flows{joined}, {rate}, RTT from the link, seconds {start} after the last start to the first flow's end")
print("| build | run | Mbit/s per flow | σ/μ | Jain | utilisation |")
print("|---|---|---|---|---|---|")
summary = {b: [] for b in builds}
for b in builds:
    for r in range(1, runs + 1):
        try:
            series = [per_second(f"{out}/{b}-{r}-{i}.json") for i in range(n)]
        except (OSError, ValueError, KeyError):
            print(f"| {b} | {r} | failed | | | |")
            continue
        # Flow i's second k is second delay(i) + k of the run.
        delays = [0] + [late] * (n - 1)
        first, end = late + start, min(d + len(s) for d, s in zip(delays, series))
        if end <= first:
            print(f"| {b} | {r} | too short ({end} s) | | | |")
            continue
        rates = [statistics.mean(s[first - d:end - d]) for d, s in zip(delays, series)]
        c, j, u = cov(rates), jain(rates), sum(rates) / bits(rate)
        summary[b].append((c, j, u))
        shown = ", ".join(f"{x / 1e6:.0f}" for x in rates)
        print(f"| {b} | {r} | {shown} | {c:.3f} | {j:.3f} | {u:.1%} |")
print()
for b, rows in summary.items():
    if rows:
        print(f"- {b}: median σ/μ {statistics.median(r[0] for r in rows):.3f} "
              f"(runs {', '.join(f'{r[0]:.3f}' for r in rows)}), "
              f"median utilisation {statistics.median(r[2] for r in rows):.1%}")
PY
