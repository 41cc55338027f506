#!/usr/bin/env bash
# Build the drop-in libudt.so.0 (crates/udt-libudt, release) and put it, with a libudt.so
# link for `-ludt`, in <target>/release/libudt/. Point an existing libudt 4.11 application
# at it with LD_LIBRARY_PATH (README: "Running libudt applications on udt").
#
#   scripts/build-libudt.sh            # prints the directory
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
cargo build --release -q -p udt-libudt
DIR="$TARGET/release/libudt"
mkdir -p "$DIR"
cp "$TARGET/release/libudt_libudt.so" "$DIR/libudt.so.0.tmp"
mv "$DIR/libudt.so.0.tmp" "$DIR/libudt.so.0"
ln -sf libudt.so.0 "$DIR/libudt.so"
echo "$DIR"
