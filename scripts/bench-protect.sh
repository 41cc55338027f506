#!/usr/bin/env bash
# What packet protection costs on loopback, memory to memory: ours -> ours plain and with a
# session key (AES-256-GCM on every packet), REPS alternating pairs of SECS-second runs, each
# end its own process (CPU from its getrusage). Prints medians, the protected/plain goodput
# ratio and the CPU-s/GiB the crypto adds. Each run holds /tmp/udt-bench.lock.
#
#   scripts/bench-protect.sh [SECONDS=10] [REPS=5]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-10}
REPS=${2:-5}
LOCK=/tmp/udt-bench.lock
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cargo build --release -q -p udt --example bench_peer
BP="$TARGET/release/examples/bench_peer"
KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')

pair() {
  local name=$1 i=$2; shift 2
  exec 9>"$LOCK"
  flock 9
  "$BP" udt recv "$@" >"$OUT/$name.$i.recv" 2>/dev/null &
  local rpid=$!
  for _ in $(seq 100); do grep -q listening "$OUT/$name.$i.recv" 2>/dev/null && break; sleep 0.05; done
  local port
  port=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$OUT/$name.$i.recv" | head -1)
  "$BP" udt send --seconds "$SECS" --connect "127.0.0.1:$port" "$@" >"$OUT/$name.$i.send" 2>/dev/null
  wait "$rpid" || true
  flock -u 9
}

for i in $(seq "$REPS"); do
  pair plain "$i"
  pair protected "$i" --key "$KEY"
  echo "run $i of $REPS done" >&2
done

python3 - "$OUT" "$REPS" <<'PY'
import json, os, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
def result(path):
    for line in open(path) if os.path.exists(path) else []:
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("event") == "result":
            return j
    return None
rows = {}
print(f"loopback, ours -> ours, {reps} alternating runs each:\n")
print("| | goodput Gbit/s (median) | runs | sender CPU-s/GiB | receiver CPU-s/GiB |")
print("|---|---|---|---|---|")
for name in ("plain", "protected"):
    g, sc, rc = [], [], []
    for i in range(1, reps + 1):
        s, r = result(f"{out}/{name}.{i}.send"), result(f"{out}/{name}.{i}.recv")
        if not s or not r:
            continue
        gib = s["bytes"] / 2**30
        g.append(s["bytes"] * 8 / s["seconds"] / 1e9)
        sc.append((s["cpu_user"] + s["cpu_sys"]) / gib)
        rc.append((r["cpu_user"] + r["cpu_sys"]) / gib)
    if g:
        rows[name] = (statistics.median(g), statistics.median(sc), statistics.median(rc))
        print(f"| {name} | {rows[name][0]:.2f} | {', '.join(f'{x:.2f}' for x in g)} "
              f"| {rows[name][1]:.2f} | {rows[name][2]:.2f} |")
if len(rows) == 2:
    p, q = rows["plain"], rows["protected"]
    print(f"\nprotected / plain goodput: {q[0] / p[0]:.2f}x; crypto adds "
          f"{q[1] - p[1]:+.2f} (sender) and {q[2] - p[2]:+.2f} (receiver) CPU-s/GiB")
PY
