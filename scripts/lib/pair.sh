# Sourced by the loopback benchmarks: one timed receiver/sender pair, each end its own
# process printing JSON lines ({"event":"listening","port":P} then {"event":"result",...}).
# Needs $OUT (a scratch directory) and $LOCK (the benchmark lock file) set by the caller.
#
#   pair NAME 'RECEIVER CMD' 'SENDER CMD (gets --connect ${PAIR_HOST:-127.0.0.1}:PORT appended)' RUN
# leaves $OUT/NAME.RUN.recv and $OUT/NAME.RUN.send; holds $LOCK (flock) while it runs.
pair() {
  local name=$1 recv=$2 send=$3 i=$4
  exec 9>"$LOCK"
  flock 9
  $recv >"$OUT/$name.$i.recv" 2>/dev/null &
  local rpid=$!
  for _ in $(seq 100); do grep -q listening "$OUT/$name.$i.recv" 2>/dev/null && break; sleep 0.05; done
  local port
  port=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$OUT/$name.$i.recv" | head -1)
  $send --connect "${PAIR_HOST:-127.0.0.1}:$port" >"$OUT/$name.$i.send" 2>/dev/null
  wait "$rpid" || true
  flock -u 9
  echo "$name run $i: $(grep result "$OUT/$name.$i.send" | head -c 300)" >&2
}
