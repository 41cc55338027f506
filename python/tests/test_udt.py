"""The ``udt`` package over loopback: sockets, files, stats, options, the GIL, and copy."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import List, Tuple

import pytest

import udt


def pair(**options: int | str) -> Tuple[udt.Listener, udt.Socket, udt.Socket]:
    listener = udt.listen("127.0.0.1", 0, **options)
    client = udt.connect("127.0.0.1", listener.getsockname()[1], **options)
    server, peer = listener.accept()
    assert peer[1] == client.getsockname()[1]
    return listener, client, server


def recv_exactly(sock: udt.Socket, n: int) -> bytes:
    chunks: List[bytes] = []
    got = 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def test_bytes_cross_and_the_peer_sees_the_end() -> None:
    listener, client, server = pair()
    payload = os.urandom(1 << 20)
    with listener, client, server:
        client.sendall(payload)
        assert recv_exactly(server, len(payload)) == payload
        client.sendall(bytearray(b"ab"))
        client.sendall(memoryview(b"cd"))
        assert client.send(b"e") == 1
        assert recv_exactly(server, 5) == b"abcde"
        client.close()
        assert server.recv(10) == b""


def test_closed_objects_refuse_use() -> None:
    listener, client, server = pair()
    with listener, client, server:
        pass
    assert client.closed and server.closed and listener.closed
    with pytest.raises(OSError):
        client.send(b"x")
    with pytest.raises(OSError):
        listener.accept()
    client.close()  # again: no-op


def test_stats_count_what_was_sent_and_delivered() -> None:
    listener, client, server = pair()
    with listener, client, server:
        client.sendall(b"x" * 300_000)
        client.flush()
        assert recv_exactly(server, 300_000) == b"x" * 300_000
        sent, received = client.stats(), server.stats()
    assert sent["bytes_sent"] >= 300_000
    assert sent["packets_sent"] > 0 and sent["mss"] > 0
    assert received["bytes_delivered"] == 300_000
    assert received["acks_sent"] > 0
    assert isinstance(sent["send_rate_mbps"], float)


def test_makefile_reads_and_writes_lines() -> None:
    listener, client, server = pair()
    with listener, client, server:
        with client.makefile("w", encoding="utf-8") as out:
            out.write("first line\nsecond é\n")
        reader = server.makefile("r", encoding="utf-8")
        assert reader.readline() == "first line\n"
        assert reader.readline() == "second é\n"
        raw = server.makefile("wb", buffering=0)
        raw.write(b"back")
        assert recv_exactly(client, 4) == b"back"
        with pytest.raises(ValueError):
            client.makefile("x")


def test_options_are_checked() -> None:
    listener, client, server = pair(send_buffer=1 << 20, linger_ms=-1, cc="model")
    with listener, client, server:
        client.sendall(b"ok")
        assert recv_exactly(server, 2) == b"ok"
    with pytest.raises(ValueError):
        udt.listen("127.0.0.1", 0, no_such_option=1)
    with pytest.raises(ValueError):
        udt.listen("127.0.0.1", 0, mss=10)
    with pytest.raises(ValueError):
        udt.listen("127.0.0.1", 0, cc="nonsense")
    assert "send_buffer" in udt.OPTION_NAMES


def test_connecting_to_nothing_fails_fast() -> None:
    free = udt.listen("127.0.0.1", 0)
    port = free.getsockname()[1]
    free.close()
    with pytest.raises(OSError):
        udt.connect("127.0.0.1", port, connect_timeout_ms=2000)


def test_timeouts_raise_timeout_error() -> None:
    listener, client, server = pair()
    with listener, client, server:
        server.settimeout(0.2)
        assert server.gettimeout() == pytest.approx(0.2)
        with pytest.raises(TimeoutError):
            server.recv(10)
        with pytest.raises(ValueError):
            server.settimeout(-1)


def test_blocking_calls_release_the_gil() -> None:
    listener, client, server = pair()
    longest_gap = [0.0]
    stop = threading.Event()

    def tick() -> None:
        last = time.monotonic()
        while not stop.is_set():
            now = time.monotonic()
            longest_gap[0] = max(longest_gap[0], now - last)
            last = now

    with listener, client, server:
        server.settimeout(1.0)
        ticker = threading.Thread(target=tick)
        ticker.start()
        try:
            with pytest.raises(TimeoutError):
                server.recv(10)
        finally:
            stop.set()
            ticker.join()
    # Had recv held the GIL for its whole second, the ticking thread would have stood still
    # that long; with the GIL released it only waits for ordinary thread switches.
    assert longest_gap[0] < 0.5, longest_gap[0]


def test_copy_up_and_down_with_progress(daemon: Tuple[int, Path], tmp_path: Path) -> None:
    port, root = daemon
    source = tmp_path / "py-upload.bin"
    data = os.urandom(2_500_000)
    source.write_bytes(data)
    calls: List[Tuple[int, int]] = []
    summary = udt.copy(
        source,
        f"udt://127.0.0.1:{port}/",
        progress=lambda done, total: calls.append((done, total)),
        insecure=True,
    )
    assert summary["files"] == 1 and summary["bytes"] == len(data)
    assert summary["transferred"] == len(data) and summary["resumed"] == 0
    assert calls and calls[-1] == (len(data), len(data))
    assert (root / "py-upload.bin").read_bytes() == data

    with pytest.raises(FileExistsError):
        udt.copy(str(source), f"udt://127.0.0.1:{port}/", insecure=True)
    udt.copy(str(source), f"udt://127.0.0.1:{port}/", insecure=True, force=True)

    down = tmp_path / "down"
    down.mkdir()
    udt.copy(f"udt://127.0.0.1/py-upload.bin", down, port=port, insecure=True)
    assert (down / "py-upload.bin").read_bytes() == data


def test_copy_errors_are_python_errors(daemon: Tuple[int, Path], tmp_path: Path) -> None:
    port, _ = daemon
    with pytest.raises(FileNotFoundError):
        udt.copy(f"udt://127.0.0.1:{port}/missing", tmp_path, insecure=True)
    with pytest.raises(ValueError):
        udt.copy(tmp_path / "a", tmp_path / "b")
    assert issubclass(udt.VerificationError, udt.CopyError)
    assert issubclass(udt.CopyError, OSError)


def test_an_exception_in_progress_is_raised(daemon: Tuple[int, Path], tmp_path: Path) -> None:
    port, _ = daemon
    source = tmp_path / "py-progress.bin"
    source.write_bytes(b"z" * 100_000)

    def boom(done: int, total: int) -> None:
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        udt.copy(source, f"udt://127.0.0.1:{port}/", progress=boom, insecure=True, force=True)
