#!/usr/bin/env bash
# `udt cp` against memory-to-memory UDT on the same path (loopback), one 1 GiB file from
# /dev/shm (tmpfs, page cache) to /dev/shm, upload and download, release builds. Each run
# holds /tmp/udt-bench.lock (flock); medians of REPS runs. The memory-to-memory peer is
# `udt perf -n SIZE` (the same bytes over UDT, no disk, no digest; goodput measured at its
# receiver), as issue 4 asks. Results go to BENCHMARKS.md by hand.
#
#   scripts/bench-cp.sh [REPS=3] [SIZE_MIB=1024]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-3}
SIZE_MIB=${2:-1024}
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
LOCK=/tmp/udt-bench.lock
SHM=$(mktemp -d /dev/shm/udt-bench-cp.XXXXXX)
OUT=$(mktemp -d)
SERVER_PID=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  rm -rf "$SHM" "$OUT"
}
trap cleanup EXIT

cargo build --release -q -p udt-cli
UDT="$TARGET/release/udt"
PERF_PORT=${PERF_PORT:-15499}
mkdir -p "$SHM/src" "$SHM/up" "$SHM/down"
head -c "${SIZE_MIB}M" /dev/urandom >"$SHM/src/big.bin"

# start_server ROOT: starts `udt serve`, sets PORT and SERVER_PID
start_server() {
  "$UDT" serve --root "$1" -l 127.0.0.1 -p 0 >"$OUT/serve.out" 2>/dev/null &
  SERVER_PID=$!
  for _ in $(seq 100); do grep -q listening "$OUT/serve.out" 2>/dev/null && break; sleep 0.05; done
  PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$OUT/serve.out")
}

stop_server() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

mem_to_mem() { # i
  "$UDT" perf -s -1 -B 127.0.0.1 -p "$PERF_PORT" >/dev/null 2>&1 &
  local spid=$!
  sleep 0.3
  "$UDT" perf -c 127.0.0.1 -p "$PERF_PORT" -n "${SIZE_MIB}M" --json >"$OUT/mem.$1.send" 2>/dev/null
  wait "$spid" || true
}

for i in $(seq "$REPS"); do
  exec 9>"$LOCK"
  flock 9
  mem_to_mem "$i"
  start_server "$SHM/up"
  "$UDT" cp --json --force -P "$PORT" "$SHM/src/big.bin" 127.0.0.1: >"$OUT/up.$i" 2>&1
  stop_server
  start_server "$SHM/src"
  "$UDT" cp --json --force -P "$PORT" 127.0.0.1:big.bin "$SHM/down/" >"$OUT/down.$i" 2>&1
  stop_server
  cmp -s "$SHM/src/big.bin" "$SHM/up/big.bin" && cmp -s "$SHM/src/big.bin" "$SHM/down/big.bin" \
    || { echo "copy $i differs" >&2; exit 1; }
  flock -u 9
  echo "run $i: mem $(grep -o '"goodput_bps":[0-9.e+]*' "$OUT/mem.$i.send"), up/down $(grep -ho '"rate_bps":[0-9.]*' "$OUT/up.$i" "$OUT/down.$i" | tr '\n' ' ')" >&2
done

python3 - "$OUT" "$REPS" "$SIZE_MIB" <<'PY'
import json, statistics, sys
out, reps, size = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def event(path, name):
    for line in open(path):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("event") == name:
            return j
    return None
mem = [json.load(open(f"{out}/mem.{i}.send"))["goodput_bps"] / 1e9 for i in range(1, reps + 1)]
up = [event(f"{out}/up.{i}", "summary")["rate_bps"] / 1e9 for i in range(1, reps + 1)]
down = [event(f"{out}/down.{i}", "summary")["rate_bps"] / 1e9 for i in range(1, reps + 1)]
m = statistics.median(mem)
print(f"| transfer ({size} MiB, loopback) | Gbit/s (median) | vs memory to memory | runs |")
print("|---|---|---|---|")
for label, xs in [("memory to memory (udt perf -n)", mem),
                  ("udt cp upload, /dev/shm -> /dev/shm", up),
                  ("udt cp download, /dev/shm -> /dev/shm", down)]:
    runs = ", ".join(f"{x:.2f}" for x in xs)
    print(f"| {label} | {statistics.median(xs):.2f} | {statistics.median(xs) / m * 100:.0f} % | {runs} |")
PY
