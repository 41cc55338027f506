#!/usr/bin/env bash
# What packet protection costs on loopback, memory to memory: ours -> ours plain and with a
# session key (AES-256-GCM on every packet), REPS alternating pairs of SECS-second runs, each
# end its own process (CPU from its getrusage). Prints medians, the protected/plain goodput
# ratio and the CPU-s/GiB the crypto adds. Each run holds /tmp/udt-bench.lock.
# SHAPE=RATE (root) runs the pairs between two network namespaces joined by a veth pair with a
# `tbf` qdisc of that rate on each end (as scripts/bench-cp.sh), a network-bound path.
#
#   scripts/bench-protect.sh [SECONDS=10] [REPS=5]
#   SHAPE=1gbit scripts/bench-protect.sh [SECONDS=10] [REPS=5]
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
SHAPE=${SHAPE:-}
IN_A="" IN_B="" BIND="" PATH_NAME=loopback
if [ -n "$SHAPE" ]; then
  [ "$(id -u)" = 0 ] || { echo "bench-protect.sh: SHAPE needs root (network namespaces)" >&2; exit 2; }
  NS_A=udt-bench-prot-a-$$ NS_B=udt-bench-prot-b-$$
  trap 'rm -rf "$OUT"; ip netns del "$NS_A" 2>/dev/null; ip netns del "$NS_B" 2>/dev/null' EXIT
  # shellcheck source=lib/shaped.sh
  source scripts/lib/shaped.sh
  shaped_pair "$NS_A" "$NS_B" 10.78.0 "$SHAPE"
  IN_A="ip netns exec $NS_A" IN_B="ip netns exec $NS_B" BIND="--bind 10.78.0.1"
  export PAIR_HOST=10.78.0.1
  PATH_NAME="veth, tbf $SHAPE"
fi

# shellcheck source=lib/pair.sh
source scripts/lib/pair.sh

for i in $(seq "$REPS"); do
  pair plain "$IN_A $BP udt recv $BIND" "$IN_B $BP udt send --seconds $SECS" "$i"
  pair protected "$IN_A $BP udt recv $BIND --key $KEY" "$IN_B $BP udt send --seconds $SECS --key $KEY" "$i"
done

echo "$PATH_NAME, ours -> ours, $REPS alternating runs each:"
echo
python3 scripts/lib/pair_table.py "$OUT" "$REPS" plain "protected=protected (AES-256-GCM)" \
  --ratio plain protected
