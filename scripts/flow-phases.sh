#!/usr/bin/env bash
# Where one paced `udt perf` flow spends its CPU over time: a fresh pair of network namespaces
# joined by a veth pair with `tbf` at RATE (scripts/lib/shaped.sh), one flow of SECS seconds,
# and every INTERVAL seconds the CPU time (/proc/PID/task/*/schedstat, nanoseconds) and context
# switches of the receiving and the sending process. A flow's cost per GiB mixes phases that
# cost very differently per second (start-up, rate-based and window-limited seconds, the
# drain at the end); this shows them apart. UDT=PATH runs another `udt` binary, CC another
# controller, EXTRA more `udt perf` client options (say EXTRA="--maxbw 40M"). Holds
# /tmp/udt-bench.lock (flock -x) for the flow.
#
# Prints per interval: the end of the interval (seconds since the client started), then for
# the receiver and the sender their CPU milliseconds and context switches; then the flow's
# goodput and CPU per GiB (`udt perf --json`), and both processes' CPU in the first 2 s, the
# seconds after until SECS, and the rest (the send buffer's drain and the close).
#
#   scripts/flow-phases.sh [RATE=45mbit] [SECS=10] [INTERVAL=0.5]
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${1:-45mbit}
SECS=${2:-10}
INTERVAL=${3:-0.5}
CC=${CC:-model}
[ "$(id -u)" = 0 ] || { echo "flow-phases.sh: needs root (network namespaces)" >&2; exit 2; }
# shellcheck source=lib/builds.sh
source scripts/lib/builds.sh
udt_binary
# shellcheck source=lib/shaped.sh
source scripts/lib/shaped.sh
shaped_scratch udt-phases
# shellcheck disable=SC2086 # EXTRA is a list of options
shaped_perf_flow 10.71.0 "$RATE" -t "$SECS" --cc "$CC" ${EXTRA:-}
python3 - "$RECV" "$SEND" "$INTERVAL" >"$OUT/phases" <<'PY' &
import os, sys, time

pids = [int(sys.argv[1]), int(sys.argv[2])]
interval = float(sys.argv[3])

def usage(pid):
    """CPU nanoseconds and context switches of all threads of pid, None once it is gone."""
    cpu = switches = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for t in tasks:
        try:
            cpu += int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
            for line in open(f"/proc/{pid}/task/{t}/status"):
                if "ctxt_switches" in line:
                    switches += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return cpu, switches

start = time.time()
last = [usage(p) for p in pids]
while True:
    time.sleep(interval)
    now = [usage(p) for p in pids]
    if all(u is None for u in now):
        break
    row = [f"{time.time() - start:.2f}"]
    for before, after in zip(last, now):
        if before and after:
            row += [f"{(after[0] - before[0]) / 1e6:.2f}", str(after[1] - before[1])]
        else:
            row += ["0", "0"]
    print(" ".join(row), flush=True)
    last = [a if a else b for a, b in zip(now, last)]
PY
SAMPLER=$!
wait "$CLIENT" || { echo "flow-phases.sh: the client failed: $(tail -1 "$OUT/client.err")" >&2; exit 1; }
kill "$SERVER" 2>/dev/null || true
wait "$SAMPLER" 2>/dev/null || true
python3 - "$OUT/client.json" "$OUT/phases" "$SECS" "$INTERVAL" <<'PY'
import json, sys

report = json.load(open(sys.argv[1]))
rows = [line.split() for line in open(sys.argv[2]) if line.strip()]
secs = float(sys.argv[3])
interval = float(sys.argv[4])
print("| s | receiver ms | receiver switches | sender ms | sender switches |")
print("|---|---|---|---|---|")
for r in rows:
    print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} |")
gib = report["bytes"] / 2**30
cpu = report["sender_cpu_seconds"] + report["receiver_cpu_seconds"]
print(f"\ngoodput {report['goodput_bps'] / 1e6:.1f} Mbit/s, {cpu / gib:.2f} CPU-s/GiB of both "
      f"ends (getrusage), RTT {report['rtt_ms']:.1f} ms, {report['lost_packets']} lost")

def both(rs):
    return sum(float(r[1]) + float(r[3]) for r in rs)

first = [r for r in rows if float(r[0]) <= 2.05]
middle = [r for r in rows if 2.05 < float(r[0]) <= secs + 0.05]
rest = [r for r in rows if float(r[0]) > secs + 0.05]
per_s = both(middle) / max(len(middle), 1) / interval
print(f"both processes: first 2 s {both(first):.1f} ms, then to {secs:g} s {both(middle):.1f} ms "
      f"({per_s:.1f} ms a second), after {both(rest):.1f} ms")
PY
