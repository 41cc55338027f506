"""File objects over a ``udt.Socket``: ``Socket.makefile`` calls :func:`makefile`.

Shaped like the standard library's ``socket.makefile``: a raw stream over ``recv``/``send``,
buffered, and wrapped for text unless the mode has ``b``. Closing the file leaves the socket
open, as with ``socket.makefile``.
"""

from __future__ import annotations

import io
from typing import IO, TYPE_CHECKING, Any, Optional, cast

if TYPE_CHECKING:
    from ._udt import Socket


class SocketIO(io.RawIOBase):
    """Raw I/O over a ``udt.Socket``."""

    def __init__(self, sock: "Socket", mode: str) -> None:
        super().__init__()
        self._sock = sock
        self._reading = "r" in mode
        self._writing = "w" in mode

    def readable(self) -> bool:
        return self._reading

    def writable(self) -> bool:
        return self._writing

    def readinto(self, b: Any) -> int:
        view = memoryview(b).cast("B")
        data = self._sock.recv(len(view))
        view[: len(data)] = data
        return len(data)

    def write(self, b: Any) -> int:
        return self._sock.send(b)


def makefile(
    sock: "Socket",
    mode: str = "r",
    buffering: Optional[int] = None,
    encoding: Optional[str] = None,
    errors: Optional[str] = None,
    newline: Optional[str] = None,
) -> IO[Any]:
    """A file object over ``sock``; ``mode`` is ``r``, ``w`` or ``rw`` plus ``b`` for bytes."""
    if not set(mode) <= {"r", "w", "b"} or not ({"r", "w"} & set(mode)):
        raise ValueError(f"invalid mode {mode!r} (only r, w, b)")
    reading, writing, binary = "r" in mode, "w" in mode, "b" in mode
    raw = SocketIO(sock, ("r" if reading else "") + ("w" if writing else ""))
    if buffering is None:
        buffering = -1
    if buffering < 0:
        buffering = io.DEFAULT_BUFFER_SIZE
    if buffering == 0:
        if not binary:
            raise ValueError("unbuffered streams must be binary")
        return cast(IO[Any], raw)
    buffer: Any
    if reading and writing:
        buffer = io.BufferedRWPair(raw, raw, buffering)
    elif reading:
        buffer = io.BufferedReader(raw, buffering)
    else:
        buffer = io.BufferedWriter(raw, buffering)
    if binary:
        return cast(IO[Any], buffer)
    text = io.TextIOWrapper(buffer, encoding, errors, newline)
    text.mode = mode  # type: ignore[misc]
    return text
