"""Type stubs of the native module ``udt._udt`` (python/src/*.rs)."""

from os import PathLike
from types import TracebackType
from typing import IO, Any, Callable, Dict, List, Optional, Tuple, Type, Union

__version__: str
OPTION_NAMES: List[str]
"""Keyword options of ``connect`` and ``listen`` (integers: bytes, packets, milliseconds;
negative means none), besides ``cc``."""

_Buffer = Union[bytes, bytearray, memoryview]
_Path = Union[str, "PathLike[str]"]

class CopyError(OSError):
    """A copy failed (connection, authentication, I/O, or the server's refusal)."""

class VerificationError(CopyError):
    """A file's BLAKE3 digest did not match the sender's; it was not kept."""

class Socket:
    """A connected UDT stream (from ``connect`` or ``Listener.accept``)."""

    @property
    def closed(self) -> bool: ...
    def send(self, data: _Buffer) -> int: ...
    def sendall(self, data: _Buffer) -> None: ...
    def recv(self, bufsize: int) -> bytes: ...
    def flush(self) -> None:
        """Wait until the peer has acknowledged everything sent."""
    def close(self) -> None: ...
    def settimeout(self, seconds: Optional[float]) -> None: ...
    def gettimeout(self) -> Optional[float]: ...
    def getpeername(self) -> Tuple[str, int]: ...
    def getsockname(self) -> Tuple[str, int]: ...
    def stats(self) -> Dict[str, Union[int, float]]:
        """Counters (``bytes_sent``, ``packets_sent``, ``retransmitted``...) and path state
        (``rtt_us``, ``send_rate_mbps``...), as the C API's ``UdtcStats``."""
    def makefile(
        self,
        mode: str = "r",
        buffering: Optional[int] = None,
        *,
        encoding: Optional[str] = None,
        errors: Optional[str] = None,
        newline: Optional[str] = None,
    ) -> IO[Any]: ...
    def __enter__(self) -> "Socket": ...
    def __exit__(
        self,
        kind: Optional[Type[BaseException]],
        value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None: ...

class Listener:
    """A listening UDT socket (from ``listen``)."""

    @property
    def closed(self) -> bool: ...
    def accept(self) -> Tuple[Socket, Tuple[str, int]]: ...
    def getsockname(self) -> Tuple[str, int]: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Listener": ...
    def __exit__(
        self,
        kind: Optional[Type[BaseException]],
        value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None: ...

def connect(host: str, port: int, **options: Union[int, str]) -> Socket: ...
def listen(host: str, port: int, **options: Union[int, str]) -> Listener: ...
def copy(
    src: _Path,
    dst: _Path,
    progress: Optional[Callable[[int, int], Any]] = None,
    *,
    recursive: bool = False,
    resume: bool = False,
    force: bool = False,
    port: Optional[int] = None,
    cc: Optional[str] = None,
    key: Optional[_Path] = None,
    known_servers: Optional[_Path] = None,
    insecure: bool = False,
) -> Dict[str, int]:
    """Copy ``src`` to ``dst``, one a local path and the other ``udt://host[:port]/path`` on a
    ``udt serve`` daemon, every file checked with BLAKE3; ``progress(done, total)`` is
    called as bytes move. Returns ``files``, ``bytes``, ``transferred``, ``resumed``."""
