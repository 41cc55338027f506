#!/usr/bin/env bash
# Installs everything udt's build and tests need on a fresh Debian machine (run as root, or
# with sudo available). Safe to run again: it skips what is already there.
# Usage: scripts/setup.sh [--fuzz]
#   --fuzz (or UDT_SETUP_FUZZ=1): also the nightly toolchain and cargo-fuzz, for
#   scripts/fuzz-replay.sh and scripts/fuzz.sh (building cargo-fuzz takes a few minutes).
set -euo pipefail

want_fuzz="${UDT_SETUP_FUZZ:-0}"
for arg in "$@"; do
  case "$arg" in
    --fuzz) want_fuzz=1 ;;
    *) echo "setup: unknown argument $arg (usage: scripts/setup.sh [--fuzz])" >&2; exit 2 ;;
  esac
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

need_apt=()
# libudt-dev and g++: the libudt 4.11 peers of the interop tests (interop/, crates/udt-interop),
# and the drop-in libudt.so.0 (crates/udt-libudt compiles its C++ glue against udt.h).
# iproute2: `ip netns` / `ip link` for the lab's namespaces (udt-lab).
# openssh-server (and its client): the `udt cp user@host:path` tests run a private sshd on a
# loopback port (crates/udt-cli/tests/ssh.rs).
for pkg in build-essential pkg-config libudt-dev g++ iproute2 openssh-server openssh-client; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
# python3 with venv/ensurepip: the Python package's tests (python/tests, run by cargo test).
if ! command -v python3 >/dev/null 2>&1; then
  need_apt+=(python3 python3-venv)
elif ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  dpkg -s python3-venv >/dev/null 2>&1 || need_apt+=(python3-venv)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust with rustup (https://rustup.rs) and re-run" >&2
  exit 1
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true

# The Python package's build and test tools, from PyPI into a venv of their own (no system
# pip, no PEP 668 trouble): pytest for python/tests (python/tests/pytest.rs looks here),
# maturin to build the wheel. UDT_PY_VENV overrides where.
py_venv="${UDT_PY_VENV:-${HOME:-/root}/.cache/udt/py-venv}"
if [ ! -x "$py_venv/bin/python" ]; then
  python3 -m venv "$py_venv"
fi
if ! "$py_venv/bin/python" -c 'import pytest' >/dev/null 2>&1 || [ ! -x "$py_venv/bin/maturin" ]; then
  "$py_venv/bin/python" -m pip install -q --disable-pip-version-check 'pytest>=7,<10' 'maturin>=1.5,<2' || {
    echo "setup: could not install pytest and maturin into $py_venv (pip)" >&2
    exit 1
  }
fi

# Fuzzing extras are best effort: where a toolchain cannot be downloaded, warn and go on
# (scripts/fuzz-replay.sh then skips; `cargo test` still replays the seeds on stable).
if [ "$want_fuzz" = 1 ]; then
  if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal ||
      echo "setup: warning: could not install the nightly toolchain (needed by cargo-fuzz)" >&2
  fi
  if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked ||
      echo "setup: warning: could not install cargo-fuzz" >&2
  fi
fi
echo "setup: ok"
