#!/usr/bin/env bash
# The kernel TCP flows' congestion state while a lab experiment runs: every ~20 ms, `ss -tin`
# in each of the lab's namespaces (udtlab-*), one line per established cubic or bbr socket,
# prefixed with the time (seconds since the epoch) and the namespace. Start it beside
# `udt lab run ...` and stop it with Ctrl-C (or kill) when the run ends. Kernel CUBIC's
# HyStart shows as an ssthresh that appears without a retransmission: that is how the
# scavenger's queue was seen to end CUBIC's slow start early (BENCHMARKS.md, session 59).
#
#   scripts/lab-tcp-states.sh OUT
#   awk '{for(i=1;i<=NF;i++) if($i~/^(cwnd|ssthresh|rtt):/) printf "%s ", $i; print $1}' OUT
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUT" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "lab-tcp-states.sh: needs root (ip netns exec)" >&2; exit 2; }
OUT=$1
: >"$OUT"
while true; do
  for ns in $(ip netns list 2>/dev/null | awk '/^udtlab/ {print $1}'); do
    # The lab's control connections move a few KB: leave them out.
    lines=$(ip netns exec "$ns" ss -tin state established 2>/dev/null |
      grep -E 'cubic|bbr' | grep -v 'bytes_acked:[0-9]\{1,5\} ' || true)
    [ -n "$lines" ] && while read -r line; do
      echo "$(date +%s.%N) $ns $line"
    done <<<"$lines" >>"$OUT"
  done
  sleep 0.02
done
