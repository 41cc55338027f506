#!/usr/bin/env bash
# CI smoke test for the fuzz targets: builds every cargo-fuzz target (nightly, libFuzzer,
# debug assertions on) and runs each committed seed in fuzz/seeds/<target>/ once.
# Needs nightly and cargo-fuzz: `scripts/setup.sh --fuzz` installs both.
# Usage: scripts/fuzz-replay.sh [--require] [--check] [target...]   (default: every target)
# --check only type-checks the targets (`cargo fuzz check`, about 2 min instead of 5 for the
# sanitized release build). CI uses it: the stable `seed_corpora_replay` tests already run every
# seed through the same bodies, so what CI needs from nightly is that the targets still compile.
# Without nightly + cargo-fuzz it prints a SKIPPED line and exits 0 (the stable
# `seed_corpora_replay` test still runs every seed), unless --require is given.
set -euo pipefail
cd "$(dirname "$0")/.."

require=0
check=0
while [ $# -gt 0 ]; do
  case "$1" in
    --require) require=1 ;;
    --check) check=1 ;;
    *) break ;;
  esac
  shift
done

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz-replay: SKIPPED: cargo-fuzz or the nightly toolchain is missing (scripts/setup.sh --fuzz)" >&2
  exit $((require))
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list --fuzz-dir fuzz)
fi

if [ "$check" = 1 ]; then
  for t in "${targets[@]}"; do
    [ -d "fuzz/seeds/$t" ] || { echo "fuzz-replay: no seed corpus at fuzz/seeds/$t" >&2; exit 1; }
  done
  cargo +nightly fuzz check --fuzz-dir fuzz
  echo "fuzz-replay: ok (${#targets[@]} targets type-checked; seeds replay in cargo test)"
  exit 0
fi

cargo +nightly fuzz build --fuzz-dir fuzz
for t in "${targets[@]}"; do
  seeds="fuzz/seeds/$t"
  if [ ! -d "$seeds" ]; then
    echo "fuzz-replay: no seed corpus at $seeds" >&2
    exit 1
  fi
  n=$(find "$seeds" -type f | wc -l)
  echo "fuzz-replay: $t ($n seeds)"
  # -runs=0: execute the given corpus once and stop; nothing new is written.
  cargo +nightly fuzz run --fuzz-dir fuzz "$t" "$seeds" -- -runs=0 2>&1 | tail -n 3
done
echo "fuzz-replay: ok (${#targets[@]} targets)"
