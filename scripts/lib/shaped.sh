# Sourced by the benchmarks that need a network-bound path on one machine.
#
#   shaped_pair NS_A NS_B NET RATE
# makes two network namespaces joined by a veth pair (`va` in NS_A with NET.1/24, `vb` in
# NS_B with NET.2/24) with a `tbf` qdisc of RATE on each end: a 10 ms queue at the shaped
# rate, bursts of one 64 KiB GSO train. The caller deletes the namespaces (`ip netns del`).
shaped_pair() {
  local a=$1 b=$2 net=$3 rate=$4 ns dev
  ip netns add "$a"
  ip netns add "$b"
  ip link add va netns "$a" type veth peer name vb netns "$b"
  ip -n "$a" addr add "$net.1/24" dev va
  ip -n "$b" addr add "$net.2/24" dev vb
  for ns in "$a" "$b"; do
    dev=$([ "$ns" = "$a" ] && echo va || echo vb)
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "$dev" up
    tc -n "$ns" qdisc add dev "$dev" root tbf rate "$rate" burst 128kb latency 10ms
  done
}

#   shaped_scratch PREFIX
# sets OUT (a scratch directory) and NS_A, NS_B (namespace names for this process, from
# PREFIX), and removes all three when the script exits.
shaped_scratch() {
  OUT=$(mktemp -d)
  NS_A=$1-a-$$
  NS_B=$1-b-$$
  trap 'ip netns del "$NS_A" 2>/dev/null || true; ip netns del "$NS_B" 2>/dev/null || true; rm -rf "$OUT"' EXIT
}

#   shaped_perf_flow NET RATE [CLIENT_OPTION...]
# takes /tmp/udt-bench.lock (flock -x on fd 9, held until the script exits), shapes NS_A and
# NS_B at RATE (shaped_pair, on NET), and starts `$UDT perf -s -1` in NS_A and `$UDT perf -c`
# with the options given in NS_B, its JSON report in $OUT/client.json and its errors in
# $OUT/client.err. Sets SERVER and CLIENT (the `ip netns exec` processes) and RECV and SEND
# (the programs they run: `ip netns exec` starts its program as a child or becomes it).
shaped_perf_flow() {
  local net=$1 rate=$2
  shift 2
  exec 9>/tmp/udt-bench.lock
  flock -x 9
  shaped_pair "$NS_A" "$NS_B" "$net" "$rate"
  ip netns exec "$NS_A" "$UDT" perf -s -1 -B "$net.1" -p 5993 >/dev/null 2>&1 &
  SERVER=$!
  sleep 0.3
  ip netns exec "$NS_B" "$UDT" perf -c "$net.1" -p 5993 "$@" --json \
    >"$OUT/client.json" 2>"$OUT/client.err" &
  CLIENT=$!
  sleep 0.05
  RECV=$(pgrep -P "$SERVER" | head -1 || true)
  RECV=${RECV:-$SERVER}
  SEND=$(pgrep -P "$CLIENT" | head -1 || true)
  SEND=${SEND:-$CLIENT}
}
