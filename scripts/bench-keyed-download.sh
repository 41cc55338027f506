#!/usr/bin/env bash
# Keyed against plain `udt cp` downloads of one 1 GiB file over a 1 Gbit/s path (two network
# namespaces, veth, `tbf` on each end), PAIRS alternating pairs, each with a fresh server:
# the smallest setting that isolates what keys cost a download (scripts/bench-cp.sh measures
# more around it). Prints each transfer's rate and the server's log line (packets sent,
# retransmitted, refused). Root; holds /tmp/udt-bench.lock. UDT_CC=native|model (default model, as
# `udt serve`) picks the server's congestion control.
#
#   scripts/bench-keyed-download.sh [PAIRS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-3}
[ "$(id -u)" = 0 ] || { echo "bench-keyed-download.sh: needs root (network namespaces)" >&2; exit 2; }
cargo build --release -q -p udt-cli
UDT=$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/udt
A=udt-bench-kd-a-$$ B=udt-bench-kd-b-$$
D=$(mktemp -d /dev/shm/udt-bench-kd.XXXXXX)
SERVER=
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null || true
  ip netns del "$A" 2>/dev/null || true
  ip netns del "$B" 2>/dev/null || true
  rm -rf "$D"
}
trap cleanup EXIT
# shellcheck source=lib/shaped.sh
source scripts/lib/shaped.sh
shaped_pair "$A" "$B" 10.79.0 1gbit
mkdir -p "$D/src" "$D/down"
head -c 1G /dev/urandom >"$D/src/big.bin"
"$UDT" keygen -f "$D/server-key" >/dev/null
"$UDT" keygen -f "$D/client-key" >/dev/null
awk '{print $1, $2, "read-write"}' "$D/client-key.pub" >"$D/authorized_keys"
exec 9>/tmp/udt-bench.lock
flock 9
for i in $(seq "$PAIRS"); do
  for mode in keyed plain; do
    if [ "$mode" = keyed ]; then
      serve=(--authorized-keys "$D/authorized_keys" --key "$D/server-key")
      cp=(--key "$D/client-key" --known-servers "$D/known_servers")
    else
      serve=(--insecure-public)
      cp=(--insecure)
    fi
    ip netns exec "$A" "$UDT" serve --cc "${UDT_CC:-model}" --root "$D/src" -l 10.79.0.1 -p 0 "${serve[@]}" \
      >"$D/serve.out" 2>"$D/serve.err" &
    SERVER=$!
    for _ in $(seq 100); do grep -q listening "$D/serve.out" 2>/dev/null && break; sleep 0.05; done
    port=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\),.*/\1/p' "$D/serve.out")
    rate=$(ip netns exec "$B" "$UDT" cp "${cp[@]}" --json --force "udt://10.79.0.1:$port/big.bin" \
      "$D/down/" 2>/dev/null | grep '"summary"' | grep -o '"rate_bps":[0-9.e+]*' | cut -d: -f2)
    sleep 0.3
    kill "$SERVER"
    wait "$SERVER" 2>/dev/null || true
    SERVER=
    printf '%s %s: %s Gbit/s; server: %s\n' "$i" "$mode" "$(awk -v r="$rate" 'BEGIN {printf "%.3f", r / 1e9}')" \
      "$(grep -o 'sent 1 entries.*' "$D/serve.err")"
  done
done
