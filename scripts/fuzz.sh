#!/usr/bin/env bash
# A long fuzzing run of one target (not for CI): scripts/fuzz.sh <target> <seconds> [libFuzzer args]
# The working corpus is fuzz/corpus/<target>/ (git-ignored), started from the committed seeds
# in fuzz/seeds/<target>/; crashes land in fuzz/artifacts/<target>/. One process, one core.
# To add an interesting input to the committed seeds: `cargo +nightly fuzz cmin` then copy a
# few small files into fuzz/seeds/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ]; then
  echo "usage: scripts/fuzz.sh <target> <seconds> [libFuzzer args...]" >&2
  echo "targets: $(cargo +nightly fuzz list --fuzz-dir fuzz | tr '\n' ' ')" >&2
  exit 2
fi
target=$1
seconds=$2
shift 2

mkdir -p "fuzz/corpus/$target"
exec cargo +nightly fuzz run --fuzz-dir fuzz "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
  -max_total_time="$seconds" -print_final_stats=1 "$@"
