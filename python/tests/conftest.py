"""Fixtures: a ``udt serve`` daemon for the copy tests.

``cargo test -p udt-python`` (tests/pytest.rs) starts one in its own process and passes
``UDT_TEST_DAEMON_PORT`` and ``UDT_TEST_DAEMON_ROOT``; run by hand, pytest starts the ``udt``
binary from ``$UDT_BIN`` or ``PATH`` (``cargo build -p udt-cli``), or skips the copy tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator, Tuple

import pytest


@pytest.fixture(scope="session")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tuple[int, Path]]:
    """``(port, root)`` of a keyless daemon on 127.0.0.1 that allows overwrites."""
    port = os.environ.get("UDT_TEST_DAEMON_PORT")
    if port:
        yield int(port), Path(os.environ["UDT_TEST_DAEMON_ROOT"])
        return
    binary = os.environ.get("UDT_BIN") or shutil.which("udt")
    if not binary:
        pytest.skip("no udt serve daemon: set UDT_BIN to the udt binary (cargo build -p udt-cli)")
    root = tmp_path_factory.mktemp("served")
    child = subprocess.Popen(
        [binary, "serve", "-l", "127.0.0.1", "-p", "0", "--allow-overwrite", "--root", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = child.stdout.readline() if child.stdout else ""
        # "listening on 127.0.0.1:PORT, serving ..."
        address = line.split()[2].rstrip(",")
        yield int(address.rsplit(":", 1)[1]), root
    finally:
        child.kill()
        child.wait()
