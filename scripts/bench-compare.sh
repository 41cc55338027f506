#!/usr/bin/env bash
# Before/after check for a change that should not change behaviour (a refactor): builds REV in
# a detached worktree beside this checkout, then in one run, alternating the two builds:
#   - loopback memory-to-memory goodput and CPU per GiB, ours -> ours (bench_peer, REPS pairs
#     of SECS-second runs, before and after in turn);
#   - the simulated core transfer (udt-bench's core_sim cases: virtual time, datagrams and
#     retransmissions must be identical; simulated GiB per CPU-second within noise).
# Prints a Markdown table of medians. Each timed run holds /tmp/udt-bench.lock.
#
#   scripts/bench-compare.sh REV [SECONDS=10] [REPS=5]
set -euo pipefail
cd "$(dirname "$0")/.."
REV=${1:?usage: scripts/bench-compare.sh REV [SECONDS=10] [REPS=5]}
SECS=${2:-10}
REPS=${3:-5}
LOCK=/tmp/udt-bench.lock
HERE=$(pwd)
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
BASE_TREE=$(realpath -m "../udt-compare-$(git rev-parse --short "$REV")")
BASE_TARGET="$TARGET/compare-base"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

if [ ! -d "$BASE_TREE" ]; then
  git worktree add --detach "$BASE_TREE" "$REV" >/dev/null
fi
echo "building $REV in $BASE_TREE and this tree (release)" >&2
(cd "$BASE_TREE" && CARGO_TARGET_DIR="$BASE_TARGET" cargo build --release -q -p udt --example bench_peer)
cargo build --release -q -p udt --example bench_peer
(cd "$BASE_TREE" && CARGO_TARGET_DIR="$BASE_TARGET" cargo bench -q -p udt-bench --bench core_sim --no-run)
cargo bench -q -p udt-bench --bench core_sim --no-run

# shellcheck source=lib/pair.sh
source scripts/lib/pair.sh

# The core_sim bench's own CPU report (criterion's timing part skipped with a tiny filter).
core_sim() {
  local tree=$1 target=$2 name=$3 i=$4
  exec 9>"$LOCK"
  flock 9
  (cd "$tree" && CARGO_TARGET_DIR="$target" cargo bench -q -p udt-bench --bench core_sim -- \
    --warm-up-time 0.1 --measurement-time 0.1 no-such-case) >"$OUT/sim-$name.$i" 2>/dev/null
  flock -u 9
}

for i in $(seq "$REPS"); do
  before="$BASE_TARGET/release/examples/bench_peer"
  after="$TARGET/release/examples/bench_peer"
  pair before "$before udt recv" "$before udt send --seconds $SECS" "$i"
  pair after "$after udt recv" "$after udt send --seconds $SECS" "$i"
done
for i in $(seq 3); do
  core_sim "$BASE_TREE" "$BASE_TARGET" before "$i"
  core_sim "$HERE" "$TARGET" after "$i"
done

echo "loopback, ours -> ours, $REPS alternating runs each (before = $REV):"
echo
python3 scripts/lib/pair_table.py "$OUT" "$REPS" "before=before ($REV)" after --ratio before after
echo
python3 - "$OUT" <<'PY'
import os, re, statistics, sys
out = sys.argv[1]
print("\nsimulated core transfer (core_sim, 3 runs each; virtual results must match exactly):\n")
print("| case | build | virtual s | datagrams | retransmitted | sim GiB per CPU-s (median) |")
print("|---|---|---|---|---|---|")
pat = re.compile(r"\s+(\S+): .* in ([\d.]+) s virtual, .*: ([\d.]+) simulated GiB per CPU-second, "
                 r".* (\d+) datagrams, (\d+) retransmitted")
rows = {}
for name in ("before", "after"):
    for i in range(1, 4):
        path = f"{out}/sim-{name}.{i}"
        for line in open(path) if os.path.exists(path) else []:
            m = pat.match(line)
            if m:
                case, virt, rate, dg, rt = m.groups()
                rows.setdefault((case, name), []).append((virt, dg, rt, float(rate)))
for (case, name), runs in sorted(rows.items()):
    virt, dg, rt, _ = runs[0]
    rate = statistics.median(r[3] for r in runs)
    print(f"| {case} | {name} | {virt} | {dg} | {rt} | {rate:.2f} |")
PY
