#!/usr/bin/env bash
# `udt cp` against memory-to-memory UDT on the same path (loopback), one 1 GiB file from
# /dev/shm (tmpfs, page cache) to /dev/shm, upload and download, release builds. Each run
# holds /tmp/udt-bench.lock (flock); medians of REPS runs. The memory-to-memory peer is
# `udt perf -n SIZE` (the same bytes over UDT, no disk, no digest; goodput measured at its
# receiver), as issue 4 asks. Results go to BENCHMARKS.md by hand.
#
# On loopback both ends, their I/O threads and the kernel share this machine's cores, so the
# figure is the CPU-bound case. SHAPE=RATE (e.g. SHAPE=1gbit, root) runs the same commands
# between two network namespaces joined by a veth pair with a `tbf` qdisc of that rate on
# each end: a path whose bottleneck is the network, as between two hosts.
#
# UDT=PATH runs that binary instead of building this tree's (a before/after comparison).
# UDT_BASE=PATH also runs every cp transfer with that binary (client and server) in the same
# rounds, alternating which build goes first, and adds its rows ("base") to the table; memory
# to memory runs once per round, with this tree's build. A memory-to-memory run that started
# slowly (first second below half its best) or fell back later (a second below a quarter of
# its best, or below half the SHAPE rate) is marked `*`: that round's comparison with cp says
# little about cp.
# UDT_CC=native|model (default model, as `udt cp`) sets the congestion control on every
# sender (not CC, which cargo hands to C compilers).
#
# Each run also copies both ways with keys (`udt serve --authorized-keys`, `udt cp --key`):
# the same transfers with every packet sealed (AES-256-GCM), so the table shows what
# protection costs on this path, measured in the same run. MODES="keyed plain" runs the keyed
# transfers first in each round (default "plain keyed"); MODES=plain runs only the plain ones.
#
#   scripts/bench-cp.sh [REPS=3] [SIZE_MIB=1024]
#   SHAPE=1gbit scripts/bench-cp.sh [REPS=3] [SIZE_MIB=1024]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-3}
SIZE_MIB=${2:-1024}
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
LOCK=/tmp/udt-bench.lock
SHM=$(mktemp -d /dev/shm/udt-bench-cp.XXXXXX)
OUT=$(mktemp -d)
SERVER_PID=
SHAPE=${SHAPE:-}
CTRL=${UDT_CC:-model}
NS_A=udt-bench-cp-a-$$
NS_B=udt-bench-cp-b-$$
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  rm -rf "$SHM" "$OUT"
  if [ -n "$SHAPE" ]; then
    ip netns del "$NS_A" 2>/dev/null || true
    ip netns del "$NS_B" 2>/dev/null || true
  fi
}
trap cleanup EXIT

# The server side runs in A, the client side in B (both on this host without SHAPE). `in_a`
# only starts background servers: it execs, so that `$!` is the server's pid (for its CPU).
HOST=127.0.0.1
in_a() { exec "$@"; }
in_b() { "$@"; }
if [ -n "$SHAPE" ]; then
  [ "$(id -u)" = 0 ] || { echo "bench-cp.sh: SHAPE needs root (network namespaces)" >&2; exit 2; }
  # shellcheck source=lib/shaped.sh
  source scripts/lib/shaped.sh
  shaped_pair "$NS_A" "$NS_B" 10.77.0 "$SHAPE"
  HOST=10.77.0.1
  in_a() { exec ip netns exec "$NS_A" "$@"; }
  in_b() { ip netns exec "$NS_B" "$@"; }
fi

if [ -z "${UDT:-}" ]; then
  cargo build --release -q -p udt-cli
  UDT="$TARGET/release/udt"
fi
PERF_PORT=${PERF_PORT:-15499}
mkdir -p "$SHM/src" "$SHM/up" "$SHM/down"
head -c "${SIZE_MIB}M" /dev/urandom >"$SHM/src/big.bin"

# Keys for the keyed runs: the server's, and one client admitted read-write.
"$UDT" keygen -f "$OUT/server-key" >/dev/null
"$UDT" keygen -f "$OUT/client-key" >/dev/null
awk '{print $1, $2, "read-write"}' "$OUT/client-key.pub" >"$OUT/authorized_keys"
PLAIN_SERVE=(--insecure-public --allow-writes --allow-overwrite)
KEYED_SERVE=(--authorized-keys "$OUT/authorized_keys" --key "$OUT/server-key" --allow-overwrite)
PLAIN_CP=(--insecure)
KEYED_CP=(--key "$OUT/client-key" --known-servers "$OUT/known_servers")

# start_server ROOT SERVE-FLAGS...: starts `udt serve`, sets PORT and SERVER_PID
start_server() {
  local root=$1
  shift
  in_a "$UDT" serve --cc "$CTRL" --root "$root" -l "$HOST" -p 0 "$@" >"$OUT/serve.out" 2>/dev/null &
  SERVER_PID=$!
  for _ in $(seq 100); do grep -q listening "$OUT/serve.out" 2>/dev/null && break; sleep 0.05; done
  PORT=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\),.*/\1/p' "$OUT/serve.out")
}

# stop_server [CPU_FILE]: stops it, first writing its CPU seconds (user + system, all threads)
stop_server() {
  if [ -n "${1:-}" ]; then
    awk -v tck="$(getconf CLK_TCK)" '{print ($14 + $15) / tck}' "/proc/$SERVER_PID/stat" >"$1"
  fi
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

mem_to_mem() { # i
  in_a "$UDT" perf -s -1 -B "$HOST" -p "$PERF_PORT" >/dev/null 2>&1 &
  local spid=$!
  sleep 0.3
  in_b "$UDT" perf -c "$HOST" --cc "$CTRL" -p "$PERF_PORT" -n "${SIZE_MIB}M" --json >"$OUT/mem.$1.send" 2>/dev/null
  wait "$spid" || true
}

# cp_round I BUILD-SUFFIX: upload and download in every mode with $UDT, files named so.
cp_round() {
  local i=$1 b=$2 mode serve cpf sfx
  # Client CPU from bash's `time` (user + system of the command), server CPU from /proc.
  TIMEFORMAT='%U %S'
  for mode in ${MODES:-plain keyed}; do
    if [ "$mode" = plain ]; then serve=("${PLAIN_SERVE[@]}"); cpf=("${PLAIN_CP[@]}"); sfx="$b"
    else serve=("${KEYED_SERVE[@]}"); cpf=("${KEYED_CP[@]}"); sfx="-keyed$b"; fi
    rm -f "$SHM/up/big.bin" "$SHM/down/big.bin"
    start_server "$SHM/up" "${serve[@]}"
    { time in_b "$UDT" cp "${cpf[@]}" --cc "$CTRL" --json --force "$SHM/src/big.bin" "udt://$HOST:$PORT/" >"$OUT/up$sfx.$i" 2>&1; } \
      2>"$OUT/up$sfx.$i.client-cpu"
    stop_server "$OUT/up$sfx.$i.server-cpu"
    # Check and delete each copy before the next transfer, so that every receiver writes into
    # memory the one before it freed. On this VM, writing to guest memory that was not
    # written recently costs about 3.5 s of system time per GiB (the host backs it on first
    # touch; a `dd` of 1 GiB into tmpfs takes 0.4 s while 2-3 GiB of recently freed memory
    # last, then 3.5-4.5 s), charged to the writer. A download that wrote the third GiB of
    # the round paid it, an upload after `rm` did not (BENCHMARKS, "At 4 Gbit/s").
    cmp -s "$SHM/src/big.bin" "$SHM/up/big.bin" || { echo "upload $i ($mode$b) differs" >&2; exit 1; }
    rm -f "$SHM/up/big.bin"
    start_server "$SHM/src" "${serve[@]}"
    { time in_b "$UDT" cp "${cpf[@]}" --cc "$CTRL" --json --force "udt://$HOST:$PORT/big.bin" "$SHM/down/" >"$OUT/down$sfx.$i" 2>&1; } \
      2>"$OUT/down$sfx.$i.client-cpu"
    stop_server "$OUT/down$sfx.$i.server-cpu"
    cmp -s "$SHM/src/big.bin" "$SHM/down/big.bin" || { echo "download $i ($mode$b) differs" >&2; exit 1; }
    rm -f "$SHM/down/big.bin"
  done
}

OURS=$UDT
BUILDS=("")
[ -n "${UDT_BASE:-}" ] && BUILDS+=("-base")
for i in $(seq "$REPS"); do
  exec 9>"$LOCK"
  flock 9
  mem_to_mem "$i"
  # Alternate which build copies first, so neither always follows the other.
  order=("${BUILDS[@]}")
  if [ "${#BUILDS[@]}" = 2 ] && [ $((i % 2)) = 0 ]; then order=("${BUILDS[1]}" "${BUILDS[0]}"); fi
  for b in "${order[@]}"; do
    UDT=$OURS
    [ "$b" = -base ] && UDT=$UDT_BASE
    cp_round "$i" "$b"
  done
  UDT=$OURS
  flock -u 9
  for b in "${BUILDS[@]}"; do
    echo "run $i${b:+ ($b)}: mem $(grep -o '"goodput_bps": *[0-9.e+]*' "$OUT/mem.$i.send"), up/down (${MODES:-plain keyed}) $(for m in ${MODES:-plain keyed}; do s=$b; [ "$m" = keyed ] && s=-keyed$b; grep -ho '"rate_bps": *[0-9.]*' "$OUT/up$s.$i" "$OUT/down$s.$i"; done | tr '\n' ' ')" >&2
  done
done

python3 - "$OUT" "$REPS" "$SIZE_MIB" "${SHAPE:-}" "$CTRL" "${MODES:-plain keyed}" "${UDT_BASE:-}" <<'PY'
import json, re, statistics, sys
out, reps, size, shape, cc = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
modes = sys.argv[6].split()
builds = [""] + (["-base"] if sys.argv[7] else [])
path = (f"veth, tbf {shape}" if shape else "loopback") + f", --cc {cc}"
def event(path, name):
    for line in open(path):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("event") == name:
            return j
    return None
gib = int(size) / 1024
def cpu(path):
    return sum(float(x) for x in open(path).read().split())
def rows(kind):
    """(Gbit/s, sender CPU-s/GiB, receiver CPU-s/GiB) per run."""
    out_rows = []
    for i in range(1, reps + 1):
        if kind == "mem":
            j = json.load(open(f"{out}/mem.{i}.send"))
            out_rows.append((j["goodput_bps"] / 1e9, j["sender_cpu_seconds"] / gib,
                             j["receiver_cpu_seconds"] / gib))
            continue
        rate = event(f"{out}/{kind}.{i}", "summary")["rate_bps"] / 1e9
        client = cpu(f"{out}/{kind}.{i}.client-cpu") / gib
        server = cpu(f"{out}/{kind}.{i}.server-cpu") / gib
        up = kind.startswith("up")
        out_rows.append((rate, client, server) if up else (rate, server, client))
    return out_rows
med = lambda xs: statistics.median(xs)
def shaped_bps():
    """The tbf rate in bit/s (SHAPE such as 4gbit, 500mbit), or None on loopback."""
    m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", shape)
    return float(m[1]) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m[2]] if m else None
def slow_starts():
    """'*' for each memory-to-memory run that started slowly (a first interval below half
    its best), collapsed (a later whole interval below a quarter of its best) or, on a
    shaped path, spent a whole interval after the first below half the shaped rate."""
    floor = (shaped_bps() or 0) / 2
    marks = []
    for i in range(1, reps + 1):
        rates = [x.get("goodput_bps", 0) for x in
                 json.load(open(f"{out}/mem.{i}.send")).get("intervals", [])]
        whole = rates[:-1]  # the last interval is cut short by the end of the data
        best = max(rates, default=0)
        slow = len(rates) > 1 and rates[0] < best / 2
        collapsed = any(r < max(best / 4, floor) for r in whole[1:])
        marks.append("\\*" if slow or collapsed else "")
    return marks
kinds = ["mem"] + [k + b for b in builds
                  for k in (["up", "down"] if "plain" in modes else [])
                  + (["up-keyed", "down-keyed"] if "keyed" in modes else [])]
table = {k: rows(k) for k in kinds}
m = med([r[0] for r in table["mem"]])
print(f"| transfer ({size} MiB, {path}) | Gbit/s (median) | vs memory to memory "
      "| sender CPU-s/GiB | receiver CPU-s/GiB | runs (Gbit/s) |")
print("|---|---|---|---|---|---|")
labels = [("memory to memory (udt perf -n)", "mem")] + [
    (label + (" (base)" if b else ""), kind + b) for b in builds for label, kind in [
        ("udt cp upload, /dev/shm -> /dev/shm", "up"),
        ("udt cp download, /dev/shm -> /dev/shm", "down"),
        ("udt cp upload, keyed (every packet sealed)", "up-keyed"),
        ("udt cp download, keyed (every packet sealed)", "down-keyed")]]
for label, kind in labels:
    if kind not in table:
        continue
    rs = table[kind]
    g = med([r[0] for r in rs])
    marks = slow_starts() if kind == "mem" else [""] * len(rs)
    runs = ", ".join(f"{r[0]:.2f}{mark}" for r, mark in zip(rs, marks))
    print(f"| {label} | {g:.2f} | {g / m * 100:.0f} % | {med([r[1] for r in rs]):.2f} "
          f"| {med([r[2] for r in rs]):.2f} | {runs} |")
if any(slow_starts()):
    print("\n\\* memory to memory started slowly (its first second below half its best) or "
          "fell back later (a second below a quarter of its best or half the shaped rate): "
          "the comparison with cp in that round says more about the controller than about cp")
for d in ("up", "down") if "plain" in modes and "keyed" in modes else ():
    p, k = table[d], table[d + "-keyed"]
    ratios = [b[0] / a[0] for a, b in zip(p, k)]
    print(f"\nkeyed / plain {d}load goodput, per run pair: "
          + ", ".join(f"{x:.3f}" for x in ratios) + f" (median {med(ratios):.3f}); "
          f"CPU-s/GiB added: sender {med([r[1] for r in k]) - med([r[1] for r in p]):+.2f}, "
          f"receiver {med([r[2] for r in k]) - med([r[2] for r in p]):+.2f}")
PY
