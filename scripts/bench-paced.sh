#!/usr/bin/env bash
# CPU per byte at paced rates (issue 13): one flow at a time between two network namespaces
# joined by a veth pair with `tbf` at RATE on both ends (scripts/lib/shaped.sh; no emulator
# in the path), SECONDS each, REPS rounds (each starting one flow further on), for
#   ours (native), ours (model)        `udt perf --json`: goodput at the receiver, CPU of both ends
#   TCP bbr, TCP cubic                 `udt perf --proto tcp --cc ...` (kernel TCP, its buffers
#                                      autotuned), the same report
#   libudt 4.11                        the interop peers (`udt_server --recv --bench`,
#                                      `udt_client --send --bench`), their getrusage figures
#   UDP floor (FLOWS=... udp-floor)    no protocol: `examples/udp_floor.rs` pacing 64 KiB GSO
#                                      trains at 96% of RATE to a GRO receiver, no ACKs; what
#                                      the kernel's UDP path alone costs at that rate
# and prints, per rate, goodput and CPU-s per GiB received (sender + receiver), medians over
# the rounds, plus ours against TCP bbr and libudt measured in the same rounds. A second CPU
# column counts the whole machine (scripts/lib/machine-cpu.sh: /proc/stat, all CPUs, less the
# idle machine's own rate measured before each rate): kernel work that runs outside the two
# processes, such as TCP's paced transmissions from its timers or tbf's watchdog, is charged
# to nobody's getrusage, so the per-process figures flatter whichever transport leaves more
# of its work to softirqs. It counts anything else running too: run on a quiet machine.
# UDT=PATH runs the `ours` flows (and TCP's) with that `udt` binary instead of this tree's.
# UDT_BASE=PATH adds a row for each `ours` flow run with another `udt` binary (say, a build
# of an older commit), so a change can be shown before/after in one run.
# FLOWS="ours-model tcp-bbr" runs a subset; a `-capped` suffix (ours-model-capped,
# tcp-bbr-capped) runs that flow with `--maxbw` at 90% of RATE, so that it is paced by its
# own rate cap below the shaper, as `udt cp --maxbw` is; RAW=DIR keeps every flow's reports and
# /proc/stat snapshots there. Root; each flow holds /tmp/udt-bench.lock.
#
#   scripts/bench-paced.sh [REPS=3] [SECONDS=10] [RATES="45mbit 200mbit 1gbit"]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-3}
SECS=${2:-10}
RATES=${3:-45mbit 200mbit 1gbit}
[ "$(id -u)" = 0 ] || { echo "bench-paced.sh: needs root (network namespaces)" >&2; exit 2; }
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
cargo build --release -q -p udt-cli -p udt --example udp_floor
UDT="${UDT:-$TARGET/release/udt}"
FLOOR="$TARGET/release/examples/udp_floor"
PEERS="$TARGET/interop"
# The libudt peers, built as the interop tests build them (make is incremental).
make -s -C interop INTEROP_OUT="$PEERS" || { echo "bench-paced.sh: could not build the libudt peers in $PEERS (they need g++ and libudt-dev: run scripts/setup.sh)" >&2; exit 2; }
OUT=$(mktemp -d)
NS_A=udt-paced-a-$$
NS_B=udt-paced-b-$$
cleanup() {
  ip netns del "$NS_A" 2>/dev/null || true
  ip netns del "$NS_B" 2>/dev/null || true
  if [ -n "${RAW:-}" ]; then mkdir -p "$RAW" && cp -r "$OUT"/. "$RAW"/; fi
  rm -rf "$OUT"
}
trap cleanup EXIT
# shellcheck source=lib/shaped.sh
source scripts/lib/shaped.sh
# shellcheck source=lib/machine-cpu.sh
source scripts/lib/machine-cpu.sh
HOST=10.78.0.1
PORT=15700

# idle_rate RATE: the quiet machine's snapshots 3 s apart, in $OUT/RATE.idle
idle_rate() {
  exec 9>/tmp/udt-bench.lock
  flock 9
  cpu_idle_rate "$OUT/$1.idle"
  flock -u 9
}

# perf_flow NAME BINARY ARGS...: one `udt perf` flow, its JSON report in $OUT/NAME.json
perf_flow() {
  local name=$1 bin=$2
  shift 2
  ip netns exec "$NS_A" "$bin" perf -s -1 -B "$HOST" -p "$PORT" >/dev/null 2>&1 &
  local server=$!
  sleep 0.3
  cpu_snapshot "$OUT/$name.stat"
  ip netns exec "$NS_B" "$bin" perf -c "$HOST" -p "$PORT" -t "$SECS" --json "$@" >"$OUT/$name.json" 2>/dev/null || true
  wait "$server" || true
  cpu_snapshot "$OUT/$name.stat"
}

# libudt_flow NAME: one libudt flow, the two result lines in $OUT/NAME.{server,client}
libudt_flow() {
  ip netns exec "$NS_A" "$PEERS/udt_server" --bind "$HOST" --port "$PORT" --recv --bench >"$OUT/$1.server" 2>&1 &
  local server=$!
  sleep 0.3
  cpu_snapshot "$OUT/$1.stat"
  ip netns exec "$NS_B" "$PEERS/udt_client" --connect "$HOST:$PORT" --send --bench --seconds "$SECS" >"$OUT/$1.client" 2>&1 || true
  wait "$server" || true
  cpu_snapshot "$OUT/$1.stat"
}

# floor_flow NAME: the protocol-less UDP flow (sender at 96% of $rate), each end's JSON line in
# $OUT/NAME.{recv,send}
floor_flow() {
  local mbit
  mbit=$(python3 -c "import re,sys; v,u=re.fullmatch(r'([0-9.]+)([kmg]?)bit',sys.argv[1]).groups(); print(float(v)*{'k':1e-3,'m':1,'g':1e3,'':1e-6}[u]*0.96)" "$rate")
  ip netns exec "$NS_A" "$FLOOR" recv "$HOST:$PORT" "$SECS" >"$OUT/$1.recv" 2>&1 &
  local server=$!
  sleep 0.3
  cpu_snapshot "$OUT/$1.stat"
  ip netns exec "$NS_B" "$FLOOR" send "$HOST:$PORT" "$SECS" "$mbit" >"$OUT/$1.send" 2>&1 || true
  wait "$server" || true
  cpu_snapshot "$OUT/$1.stat"
}

# capped_rate RATE: 90% of a tc rate (45mbit, 1gbit) as a `--maxbw` value in Mbit/s.
capped_rate() {
  local n=${1%%[a-z]*}
  case $1 in
    *gbit) echo "$((n * 900))M" ;;
    *mbit) echo "$((n * 9 / 10))M" ;;
    *) echo "bench-paced.sh: cannot cap rate $1 (use mbit or gbit)" >&2; exit 2 ;;
  esac
}

read -r -a FLOWS <<<"${FLOWS:-ours-native ours-model tcp-bbr tcp-cubic libudt}"
# The base build runs the same controllers as this one.
if [ -n "${UDT_BASE:-}" ]; then
  for flow in "${FLOWS[@]}"; do
    case $flow in ours-*) FLOWS+=("base-${flow#ours-}") ;; esac
  done
fi
for rate in $RATES; do
  ip netns del "$NS_A" 2>/dev/null || true
  ip netns del "$NS_B" 2>/dev/null || true
  shaped_pair "$NS_A" "$NS_B" 10.78.0 "$rate"
  idle_rate "$rate"
  for rep in $(seq "$REPS"); do
    # Each round starts one flow further on, so that no flow keeps one position: one build
    # run first and second in every round read 10.02 and 9.35 CPU-s/GiB at 45 Mbit/s in
    # one sitting (session 47), and a fixed order cannot tell that from a difference.
    for k in "${!FLOWS[@]}"; do
      flow=${FLOWS[$(((k + rep - 1) % ${#FLOWS[@]}))]}
      name="$rate.$flow.$rep"
      exec 9>/tmp/udt-bench.lock
      flock 9
      cap=()
      case $flow in *-capped) cap=(--maxbw "$(capped_rate "$rate")") ;; esac
      kind=${flow%-capped}
      case $flow in
        ours-*) perf_flow "$name" "$UDT" --cc "${kind#ours-}" "${cap[@]}" ;;
        base-*) perf_flow "$name" "$UDT_BASE" --cc "${kind#base-}" "${cap[@]}" ;;
        tcp-*) perf_flow "$name" "$UDT" --proto tcp --cc "${kind#tcp-}" "${cap[@]}" ;;
        libudt) libudt_flow "$name" ;;
        udp-floor) floor_flow "$name" ;;
      esac
      flock -u 9
      echo "$rate round $rep: $flow done" >&2
    done
  done
done

python3 - "$OUT" "$REPS" "$RATES" "${FLOWS[@]}" <<'PY'
import json, statistics, sys
sys.path.insert(0, "scripts/lib")
from machine_cpu import busy_seconds, idle_rate
out, reps, rates, flows = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
GIB = 2 ** 30
LABEL = {"ours-native": "ours (native)", "ours-model": "ours (model)", "tcp-bbr": "TCP bbr",
         "tcp-cubic": "TCP cubic", "libudt": "libudt 4.11", "base-native": "base (native)",
         "base-model": "base (model)", "udp-floor": "UDP floor (no protocol)"}
LABEL.update({f"{k}-capped": f"{v}, capped at 90%" for k, v in list(LABEL.items())})

def result_line(path):
    for line in open(path, errors="replace"):
        if '"event":"result"' in line:
            return json.loads(line)
    return None

def measure(name, flow, idle):
    """(goodput bit/s, CPU-s per GiB received by the two processes, by the whole machine or
    None) of one flow, or None if it failed."""
    try:
        if flow == "libudt":
            s, c = result_line(f"{out}/{name}.server"), result_line(f"{out}/{name}.client")
            if not s or not c or s["bytes"] == 0:
                return None
            cpu = s["cpu_user"] + s["cpu_sys"] + c["cpu_user"] + c["cpu_sys"]
            gib, bps = s["bytes"] / GIB, s["bytes"] * 8 / s["seconds"]
        elif flow == "udp-floor":
            r = json.load(open(f"{out}/{name}.recv"))
            s = json.load(open(f"{out}/{name}.send"))
            if r["bytes"] == 0:
                return None
            cpu = r["cpu_seconds"] + s["cpu_seconds"]
            gib, bps = r["bytes"] / GIB, r["bytes"] * 8 / r["seconds"]
        else:
            j = json.load(open(f"{out}/{name}.json"))
            cpu = j["sender_cpu_seconds"] + j["receiver_cpu_seconds"]
            gib, bps = j["bytes"] / GIB, j["goodput_bps"]
        machine = busy_seconds(f"{out}/{name}.stat", idle)
        return bps, cpu / gib, None if machine is None else machine / gib
    except (OSError, ValueError, KeyError, ZeroDivisionError):
        return None

print(f"veth + tbf, one flow of each kind per round, medians of {reps} rounds; CPU-s per GiB")
print("received: of the two processes (getrusage), and of the whole machine less its idle rate")
print()
print("| rate | flow | goodput Mbit/s | CPU-s/GiB (both ends) | machine CPU-s/GiB | runs (CPU-s/GiB; machine) |")
print("|---|---|---|---|---|---|")
summary = []
for rate in rates:
    idle = idle_rate(f"{out}/{rate}.idle")
    med, mmed = {}, {}
    for flow in flows:
        runs = [measure(f"{rate}.{flow}.{r}", flow, idle) for r in range(1, reps + 1)]
        ok = [x for x in runs if x]
        if not ok:
            print(f"| {rate} | {LABEL[flow]} | failed | | | |")
            continue
        g = statistics.median(x[0] for x in ok) / 1e6
        med[flow] = statistics.median(x[1] for x in ok)
        machine = [x[2] for x in ok if x[2] is not None]
        mcell = ""
        if machine:
            mmed[flow] = statistics.median(machine)
            mcell = f"{mmed[flow]:.2f}"
        cells = ", ".join(f"{x[1]:.1f}; {x[2]:.1f}" if x and x[2] is not None
                          else f"{x[1]:.1f}" if x else "failed" for x in runs)
        print(f"| {rate} | {LABEL[flow]} | {g:.1f} | {med[flow]:.2f} | {mcell} | {cells} |")
    for ours in ("ours-native", "ours-model"):
        for label, m in (("processes", med), ("machine", mmed)):
            # A machine figure is 0 when the idle machine was busier than the flow's
            # stretch (something else ran while the idle rate was measured): no ratio then.
            if ours in m and m.get("tcp-bbr", 0) > 0 and m.get("libudt", 0) > 0:
                summary.append(f"{rate} {LABEL[ours]}, {label}: {m[ours] / m['tcp-bbr']:.1f}x "
                               f"TCP bbr's CPU per GiB, {m[ours] / m['libudt']:.2f}x libudt's")
    quiet = "" if idle < 0.05 else " (not quiet: its machine figures are not reliable)"
    summary.append(f"{rate}: the idle machine used {idle:.3f} CPU-s per second{quiet}")
print()
for line in summary:
    print(f"- {line}")
PY
