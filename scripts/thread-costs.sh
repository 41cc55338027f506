#!/usr/bin/env bash
# What each thread of a paced `udt perf` flow costs once the flow is under way: a fresh pair
# of network namespaces joined by a veth pair with `tbf` at RATE (scripts/lib/shaped.sh), one
# flow of SECS seconds, and each thread's CPU time (/proc/PID/task/*/schedstat) and context
# switches (voluntary and not) between seconds FROM and TO of it, per second. Where
# scripts/flow-phases.sh shows a flow's processes over time, this shows which thread of each
# end does the work (the I/O thread, the application's reader or writer) and how often it
# wakes. UDT=PATH runs another `udt` binary, CC another controller, EXTRA more client options;
# PROTO=tcp runs kernel TCP through `udt perf --proto tcp` instead (CC then names the kernel's
# controller: bbr, cubic). Holds /tmp/udt-bench.lock (flock -x) for the flow.
#
# Prints one row per thread that ran at least 0.1 ms a second (side, thread name, CPU ms a
# second, switches a second), each side's total, then the flow's goodput, retransmissions
# and CPU per GiB (`udt perf --json`, each end's getrusage over the whole flow), and for UDT
# each second's window and sending period (whether the sender was left to its window or paced).
#
#   [UDT=...] [PROTO=udt|tcp] [CC=model] scripts/thread-costs.sh [RATE=45mbit] [SECS=10] [FROM=3] [TO=8]
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${1:-45mbit}
SECS=${2:-10}
FROM=${3:-3}
TO=${4:-8}
PROTO=${PROTO:-udt}
if [ "$PROTO" = tcp ]; then CC=${CC:-bbr}; else CC=${CC:-model}; fi
[ "$(id -u)" = 0 ] || { echo "thread-costs.sh: needs root (network namespaces)" >&2; exit 2; }
python3 -c "import sys; f, t, s = map(float, sys.argv[1:]); sys.exit(not 0 <= f < t <= s)" \
  "$FROM" "$TO" "$SECS" || { echo "thread-costs.sh: want 0 <= FROM < TO <= SECS" >&2; exit 2; }
# shellcheck source=lib/builds.sh
source scripts/lib/builds.sh
udt_binary
# shellcheck source=lib/shaped.sh
source scripts/lib/shaped.sh
shaped_scratch udt-threads
# shellcheck disable=SC2086 # EXTRA is a list of options
shaped_perf_flow 10.70.0 "$RATE" -t "$SECS" --proto "$PROTO" --cc "$CC" ${EXTRA:-}
START=$(date +%s.%N)
# Each thread's CPU nanoseconds and context switches: "side tid name ns switches" lines.
snapshot() {
  local side pid t
  for side in recv send; do
    pid=$([ "$side" = recv ] && echo "$RECV" || echo "$SEND")
    for t in /proc/"$pid"/task/*; do
      echo "$side $(basename "$t") $(tr ' ' _ <"$t/comm") $(cut -d' ' -f1 "$t/schedstat")" \
        "$(awk '/ctxt_switches/ {s += $2} END {print s}' "$t/status")"
    done 2>/dev/null || true
  done
}
sleep "$(python3 -c "import sys; print(max(0, float(sys.argv[1]) + float(sys.argv[2]) - float(sys.argv[3])))" \
  "$START" "$FROM" "$(date +%s.%N)")"
snapshot >"$OUT/from"
sleep "$(python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$TO" "$FROM")"
snapshot >"$OUT/to"
wait "$CLIENT" || { echo "thread-costs.sh: the client failed: $(tail -1 "$OUT/client.err")" >&2; exit 1; }
kill "$SERVER" 2>/dev/null || true
python3 - "$OUT/from" "$OUT/to" "$OUT/client.json" "$FROM" "$TO" <<'PY'
import json, sys

def load(path):
    rows = {}
    for line in open(path):
        f = line.split()
        if len(f) == 5:
            rows[(f[0], f[1])] = (f[2], int(f[3]), int(f[4]))
    return rows

before, after = load(sys.argv[1]), load(sys.argv[2])
report = json.load(open(sys.argv[3]))
span = float(sys.argv[5]) - float(sys.argv[4])
print(f"| side | thread | CPU ms a second | switches a second |")
print("|---|---|---|---|")
totals = {}
for key, (name, ns, sw) in sorted(after.items()):
    if key not in before:
        continue
    cpu = (ns - before[key][1]) / 1e6 / span
    switches = (sw - before[key][2]) / span
    totals[key[0]] = totals.get(key[0], 0.0) + cpu
    if cpu >= 0.1:
        print(f"| {key[0]} | {name} | {cpu:.2f} | {switches:.0f} |")
for side in ("recv", "send"):
    print(f"| {side} | all threads | {totals.get(side, 0.0):.2f} | |")
gib = report["bytes"] / 2**30
cpu = report["sender_cpu_seconds"] + report["receiver_cpu_seconds"]
print(f"\n{report['protocol']} {report['cc']}: goodput {report['goodput_bps'] / 1e6:.1f} Mbit/s, "
      f"{report.get('retransmitted_packets', 0)} retransmitted, "
      f"{cpu / gib:.2f} CPU-s/GiB of both ends over the whole flow (getrusage)")
# How the sender was limited, second by second: a sending period near zero leaves it to the
# window (`model` competing as a CUBIC window: it sends what each ACK frees, one wake-up per
# ACK); one near the link's packet time paces it, and it then wakes for every pacing train
# unless the window holds it back. The two cost the sender several times apart.
seconds = [i for i in report.get("intervals", [])
           if i.get("send_period_us") is not None and i.get("window_pkts") is not None]
if seconds:
    print("window (packets) / sending period (us) each second: "
          + ", ".join(f"{i['window_pkts']:.0f} / {i['send_period_us']:.1f}" for i in seconds))
PY
