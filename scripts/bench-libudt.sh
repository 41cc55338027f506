#!/usr/bin/env bash
# The drop-in libudt.so.0 measured: the same interop peer binaries (built against Debian's
# libudt 4.11) stream memory to memory over loopback on Debian's libudt, then unchanged on
# ours (LD_LIBRARY_PATH), then each library on one side. Goodput and CPU seconds per GiB of
# each end, medians of REPS runs, as a Markdown table.
#
#   scripts/bench-libudt.sh [SECONDS=10] [REPS=3]
#
# Each timed run holds /tmp/udt-bench.lock (flock), as other benchmarks on this machine do.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-10}
REPS=${2:-3}
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
LOCK=/tmp/udt-bench.lock
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

LIB=$(scripts/build-libudt.sh)
make -s -C interop INTEROP_OUT="$TARGET/interop"
PEERS="$TARGET/interop"
OURS="env LD_LIBRARY_PATH=$LIB"

# shellcheck source=lib/pair.sh
source scripts/lib/pair.sh

RECV="$PEERS/udt_server --recv --bench"
SEND="$PEERS/udt_client --send --bench --seconds $SECS"
for i in $(seq "$REPS"); do
  pair libudt "$RECV" "$SEND" "$i"
  pair ours "$OURS $RECV" "$OURS $SEND" "$i"
  pair ours-to-libudt "$RECV" "$OURS $SEND" "$i"
  pair libudt-to-ours "$OURS $RECV" "$SEND" "$i"
done

python3 scripts/lib/pair_table.py "$OUT" "$REPS" \
  "libudt=libudt -> libudt (Debian 4.11)" "ours=ours -> ours (same binaries, LD_LIBRARY_PATH)" \
  "ours-to-libudt=ours -> libudt" "libudt-to-ours=libudt -> ours" --ratio libudt ours
