# Sourced by the benchmarks that count the whole machine's CPU, not only their processes'.
#
# Kernel work done for a flow outside its processes is charged to nobody's getrusage: kernel
# TCP's paced transmissions and ACK processing run from timers and softirqs, often on the
# other, otherwise idle CPU, and so does tbf's watchdog. The machine's busy time counts it.
# Busy time is the wall clock on every CPU less the idle, iowait and steal time of
# /proc/stat: with NO_HZ the kernel measures idle time at each idle entry and exit, while
# user and system time are sampled per tick (250 Hz here), which misses threads that sleep
# between ticks (the tick fields counted less than getrusage did for our I/O threads).
# machine_cpu.py turns the snapshots into CPU seconds. It counts everything else running
# too: run on a quiet machine, and subtract the idle machine's own rate (cpu_idle_rate).
#
#   cpu_snapshot FILE       append one snapshot (idle + iowait + steal ticks, timestamp)
#   cpu_idle_rate FILE      two snapshots 3 s apart on the quiet machine

cpu_snapshot() {
  awk '/^cpu /{print $5+$6+$9}' /proc/stat >>"$1"
  date +%s.%N >>"$1"
}

cpu_idle_rate() {
  cpu_snapshot "$1"
  sleep 3
  cpu_snapshot "$1"
}
