#!/usr/bin/env bash
# Loopback benchmark, memory to memory: ours->ours (release; once with the UDP GSO/GRO fast
# paths the two peers negotiate, once with them off: UDT_OFFLOAD=0), libudt->libudt
# (interop/ peers) and kernel TCP; goodput and CPU seconds per GiB for sender and receiver
# (each end is its own process, CPU from its getrusage). Then small-transfer completion times
# (1 MB and one packet) for ours and libudt. Medians of REPS runs; results go to
# BENCHMARKS.md by hand.
#
#   scripts/bench-loopback.sh [SECONDS=20] [REPS=3]
#   scripts/bench-loopback.sh --small-only [REPS=3]   # only the small-transfer part
#
# Each timed run holds /tmp/udt-bench.lock (flock), as other benchmarks on this machine do.
set -euo pipefail
cd "$(dirname "$0")/.."
SMALL_ONLY=0
if [ "${1:-}" = "--small-only" ]; then
  SMALL_ONLY=1
  shift
  set -- 20 "$@"
fi
SECS=${1:-20}
REPS=${2:-3}
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
LOCK=/tmp/udt-bench.lock
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

cargo build --release -q -p udt --example bench_peer
make -s -C interop INTEROP_OUT="$TARGET/interop"
BP="$TARGET/release/examples/bench_peer"
PEERS="$TARGET/interop"

# shellcheck source=lib/pair.sh
source scripts/lib/pair.sh

for i in $(seq "$REPS"); do
  [ "$SMALL_ONLY" = 1 ] && break
  pair ours "$BP udt recv" "$BP udt send --seconds $SECS" "$i"
  UDT_OFFLOAD=0 pair plain "$BP udt recv" "$BP udt send --seconds $SECS" "$i"
  pair libudt "$PEERS/udt_server --recv --bench" "$PEERS/udt_client --send --bench --seconds $SECS" "$i"
  pair tcp "$BP tcp recv" "$BP tcp send --seconds $SECS" "$i"
done

# Small transfers: ours (20 fresh connections each, median inside), libudt (REPS x 5 runs).
exec 9>"$LOCK"
flock 9
for bytes in 1048576 1456; do
  "$BP" udt small --bytes "$bytes" --reps 20 >"$OUT/small-ours-$bytes"
  for i in $(seq $((REPS * 5))); do
    "$PEERS/udt_server" --recv --bytes "$bytes" >"$OUT/small-lib-$bytes-$i.recv" &
    sleep 0.2
    port=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$OUT/small-lib-$bytes-$i.recv" | head -1)
    "$PEERS/udt_client" --connect "127.0.0.1:$port" --send --bytes "$bytes" \
      >"$OUT/small-lib-$bytes-$i.send"
    wait || true
  done
done
flock -u 9

python3 scripts/lib/pair_table.py "$OUT" "$REPS" "ours=ours -> ours" \
  "plain=ours -> ours, no GSO/GRO" "libudt=libudt -> libudt" "tcp=kernel TCP"
echo
python3 - "$OUT" "$REPS" <<'PY'
import glob, json, statistics, sys
sys.path.insert(0, "scripts/lib")
from pair_table import result
out, reps = sys.argv[1], int(sys.argv[2])
for b in (1048576, 1456):
    ours = json.loads(open(f"{out}/small-ours-{b}").read().strip().splitlines()[-1])
    lib = [result(p)["seconds"] * 1e3 for p in glob.glob(f"{out}/small-lib-{b}-*.send") if result(p)]
    print(f"{b} B: ours median {ours['median_ms']:.2f} ms (min {ours['min_ms']:.2f}, "
          f"max {ours['max_ms']:.2f}, connect {ours['connect_median_ms']:.2f}); "
          f"libudt median {statistics.median(lib):.1f} ms over {len(lib)} runs")
PY
