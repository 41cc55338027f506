#!/usr/bin/env bash
# Installs everything udt's build and tests need on a fresh Debian machine (run as root, or
# with sudo available). Safe to run again: it skips what is already there.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

need_apt=()
# libudt-dev and g++: the libudt 4.11 peers of the interop tests (interop/, crates/udt-interop).
for pkg in build-essential pkg-config libudt-dev g++; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust with rustup (https://rustup.rs) and re-run" >&2
  exit 1
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
echo "setup: ok"
