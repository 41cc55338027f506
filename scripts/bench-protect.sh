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

# shellcheck source=lib/pair.sh
source scripts/lib/pair.sh

for i in $(seq "$REPS"); do
  pair plain "$BP udt recv" "$BP udt send --seconds $SECS" "$i"
  pair protected "$BP udt recv --key $KEY" "$BP udt send --seconds $SECS --key $KEY" "$i"
done

echo "loopback, ours -> ours, $REPS alternating runs each:"
echo
python3 scripts/lib/pair_table.py "$OUT" "$REPS" plain "protected=protected (AES-256-GCM)" \
  --ratio plain protected
