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
