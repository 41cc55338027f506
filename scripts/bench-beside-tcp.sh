#!/usr/bin/env bash
# One flow beside N kernel TCP flows on one emulated bottleneck, build against build: per run
# `udt lab link` (the userspace WAN emulator, a one-BDP drop-tail queue) at RATE and RTT,
# N TCP flows of TCP_CC (one `udt perf --proto tcp -P N` process) and, started with them,
# the flow under test: ours with FLOW_CC (model, native, ...) or, with FLOW_CC=tcp:NAME, one
# more kernel TCP flow with NAME (the reference: what a TCP flow of that kind gets there).
# With UDT_BASE=PATH every round also runs that binary, alternating which goes first.
# Each run holds /tmp/udt-bench.lock (flock -x).
#
# Prints per run the flow's goodput and the TCP aggregate over the seconds both ran, without
# the first (start-up), the flow over an equal share of the link (1.0 is fair; issue 12's bar
# is 0.8-1.25), the same over the last LATE (3) of those seconds, and the flow's goodput in each second, so a flow that starts well and then
# starves shows as such (a UDT flow's report goes on past SECS while its buffer drains);
# then the medians per build. The N TCP flows share one process, and a kernel cubic flow
# took 3.2x an equal share beside 10 cubic streams (a bbr flow beside bbr streams 1.0-1.2x):
# read a row against the FLOW_CC=tcp:NAME reference of the same setting, not against 1.0.
#
#   RATE=1gbit RTT=50ms LATE=3 UDT_BASE=/tmp/udt-old scripts/bench-beside-tcp.sh [RUNS=2] [SECS=10] [N=10] [TCP_CC=bbr] [FLOW_CC=model]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-2}
SECS=${2:-10}
N=${3:-10}
TCP_CC=${4:-bbr}
FLOW_CC=${5:-model}
RATE=${RATE:-1gbit}
RTT=${RTT:-50ms}
LATE=${LATE:-3}
LOCK=/tmp/udt-bench.lock
[ "$(id -u)" = 0 ] || { echo "bench-beside-tcp.sh: needs root (network namespaces)" >&2; exit 2; }
# shellcheck source=lib/builds.sh
source scripts/lib/builds.sh
udt_binary
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

if [[ $FLOW_CC == tcp:* ]]; then
  FLOW_ARGS="--proto tcp --cc ${FLOW_CC#tcp:}"
else
  FLOW_ARGS="--cc $FLOW_CC"
fi

# Kernel TCP's autotuning ceilings in both namespaces, as the lab's tuned TCP flows have them
# (crates/udt-lab/src/flows/tuned.rs): four BDPs, at least 32 MiB. Left at the kernel's 4 MiB
# send ceiling, one kernel BBR flow alone at 1 Gbit/s × 50 ms read 449 Mbit/s (session 76).
TCP_LIMIT=$(python3 - "$RATE" "$RTT" <<'PY'
import re, sys
v, u = re.fullmatch(r"([0-9.]+)([kmg]?)bit", sys.argv[1].lower()).groups()
bps = float(v) * {"k": 1e3, "m": 1e6, "g": 1e9, "": 1}[u]
t, tu = re.fullmatch(r"([0-9.]+)(us|ms|s)?", sys.argv[2]).groups()
secs = float(t) * {"us": 1e-6, "ms": 1e-3, "s": 1, None: 1}[tu]
print(max(32 << 20, int(4 * bps / 8 * secs)))
PY
)
TUNE="echo '4096 131072 $TCP_LIMIT' > /proc/sys/net/ipv4/tcp_rmem && echo '4096 16384 $TCP_LIMIT' > /proc/sys/net/ipv4/tcp_wmem"

# One locked run: build $1 (binary $2), round $3. Both servers serve one client each; the
# clients write their reports themselves (the servers' banners share the link's stdout).
run() {
  local pre=$OUT/$1-$3
  flock -x "$LOCK" "$2" lab link --rate "$RATE" --rtt "$RTT" \
    --a "sh -c \"$TUNE; $2 perf -s -1 -p 5201 & exec $2 perf -s -1 -p 5301\"" -- \
    sh -c "$TUNE; sleep 0.5
      '$2' perf -c \$UDT_LAB_A -p 5301 --proto tcp --cc $TCP_CC -P $N -t $SECS -i 1 --json >'$pre.tcp.json' &
      '$2' perf -c \$UDT_LAB_A -p 5201 $FLOW_ARGS -t $SECS -i 1 --json >'$pre.flow.json'
      wait" >/dev/null 2>&1 || true
}
for_each_build "$RUNS" run

python3 - "$OUT" "$RUNS" "$N" "$SECS" "$LATE" "${BUILDS[@]}" <<'PY'
import json, statistics, sys
out, runs, n, secs, late_s, builds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6:]

def per_second(report):
    return [i["goodput_bps"] / 1e6 for i in report.get("intervals") or []]

def steady(rates, first=1):
    """Mean over seconds first+1..SECS: the first is start-up, later ones outlive the TCP flows."""
    window = rates[first:secs]
    return sum(window) / len(window) if window else None

print(f"| build | run | flow Mbit/s | TCP aggregate Mbit/s | flow / equal share | the same, last {late_s} s | flow per second |")
print("|---|---|---|---|---|---|---|")
medians = []
for b in builds:
    shares, lates = [], []
    for r in range(1, runs + 1):
        try:
            flow = json.load(open(f"{out}/{b}-{r}.flow.json"))
            tcp = json.load(open(f"{out}/{b}-{r}.tcp.json"))
        except (OSError, ValueError):
            print(f"| {b} | {r} | failed | | | | |")
            continue
        f, t = steady(per_second(flow)), steady(per_second(tcp))
        if f is None or t is None:
            print(f"| {b} | {r} | no per-second report | | | | |")
            continue
        share = f / ((f + t) / (n + 1))
        shares.append(share)
        fl, tl = steady(per_second(flow), secs - late_s), steady(per_second(tcp), secs - late_s)
        late = "-"
        if fl is not None and tl:
            lates.append(fl / ((fl + tl) / (n + 1)))
            late = f"{lates[-1]:.2f}"
        seconds = " ".join(f"{x:.0f}" for x in per_second(flow))
        print(f"| {b} | {r} | {f:.0f} | {t:.0f} | {share:.2f} | {late} | {seconds} |")
    if shares:
        late_median = f", last {late_s} s {statistics.median(lates):.2f}" if lates else ""
        medians.append(f"- {b}: median flow / equal share {statistics.median(shares):.2f}{late_median}")
print()
print("\n".join(medians))
PY
