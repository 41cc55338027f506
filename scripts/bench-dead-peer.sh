#!/usr/bin/env bash
# How long `udt cp` takes to report a dead peer, with the runtime's ICMP hint
# (IP_RECVERR, the default) and without it (UDT_RECVERR=0: UDT4's EXP rule alone).
#   1. connect to a loopback UDP port where nothing listens;
#   2. `udt serve` killed with SIGKILL 2 s into a 4 GiB upload, then a download.
# Times run from the attempt (1) or the kill (2) until `udt cp` exits; each line also shows
# the exit status and cp's one-line error. The runs without the hint wait out UDT4's ~46 s
# rule, so the whole script takes about 5 minutes with REPS=3. Results go to BENCHMARKS.md
# by hand.
#
#   scripts/bench-dead-peer.sh [REPS=3]
#   HINTS=1 scripts/bench-dead-peer.sh    # only the runs with the hint (seconds, not minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-3}
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
cargo build --release -q -p udt-cli
UDT="$TARGET/release/udt"
WORK=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
SERVER=
cleanup() {
  [ -n "$SERVER" ] && kill -9 "$SERVER" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/root" "$WORK/dst"
head -c 4G /dev/zero >"$WORK/root/big"

free_port() {
  python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }

closed_port() {
  local hint=$1 port t0 rc=0
  port=$(free_port)
  t0=$(now)
  UDT_RECVERR=$hint "$UDT" cp -q -P "$port" "$WORK/root/big" "127.0.0.1:x" 2>"$WORK/err" || rc=$?
  printf 'closed port  UDT_RECVERR=%s: %6.2f s, exit %s: %s\n' "$hint" "$(since "$t0")" "$rc" "$(tail -1 "$WORK/err")"
}

killed_server() {
  local dir=$1 hint=$2 port cp t0 rc=0
  port=$(free_port)
  rm -rf "$WORK/dst"/* "$WORK/root"/up.* "$WORK/root"/.up.* 2>/dev/null || true
  "$UDT" serve --root "$WORK/root" -l 127.0.0.1 -p "$port" >/dev/null 2>&1 &
  SERVER=$!
  disown "$SERVER" # no "Killed" job notice from bash
  sleep 0.5
  if [ "$dir" = up ]; then
    UDT_RECVERR=$hint "$UDT" cp -q -P "$port" "$WORK/root/big" "127.0.0.1:up.$port" 2>"$WORK/err" &
  else
    UDT_RECVERR=$hint "$UDT" cp -q -P "$port" "127.0.0.1:big" "$WORK/dst/" 2>"$WORK/err" &
  fi
  cp=$!
  sleep 2
  kill -9 "$SERVER"
  t0=$(now)
  wait "$cp" || rc=$?
  SERVER=
  printf 'killed %-4s  UDT_RECVERR=%s: %6.2f s, exit %s: %s\n' "$dir" "$hint" "$(since "$t0")" "$rc" "$(tail -1 "$WORK/err")"
}

exec 9>/tmp/udt-bench.lock
flock 9
for hint in ${HINTS:-1 0}; do
  for _ in $(seq "$REPS"); do closed_port "$hint"; done
  for dir in up down; do
    for _ in $(seq "$REPS"); do killed_server "$dir" "$hint"; done
  done
done
