# Sourced by the benchmarks that pit this tree's `udt` against a base build (UDT_BASE).
#
#   udt_binary
# sets UDT to the binary under test: $UDT if given, else this tree's release build (built
# now, into ${CARGO_TARGET_DIR:-target}).
#
#   for_each_build RUNS FN
# calls `FN BUILD BINARY ROUND` for ROUND 1..RUNS: BUILD "new" with $UDT and, when UDT_BASE
# is set, "base" with $UDT_BASE, alternating which goes first so that the two builds meet
# the same machine. Sets BUILDS to the builds it runs, for the report.
udt_binary() {
  if [ -z "${UDT:-}" ]; then
    cargo build --release -q -p udt-cli
    UDT=$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/udt
  fi
}

for_each_build() {
  local runs=$1 fn=$2 round b order
  BUILDS=(new)
  [ -n "${UDT_BASE:-}" ] && BUILDS=(new base)
  for round in $(seq 1 "$runs"); do
    order=("${BUILDS[@]}")
    if [ $((round % 2)) = 0 ] && [ ${#BUILDS[@]} = 2 ]; then order=(base new); fi
    for b in "${order[@]}"; do
      if [ "$b" = base ]; then
        "$fn" base "$UDT_BASE" "$round"
      else
        "$fn" new "$UDT" "$round"
      fi
    done
  done
}
