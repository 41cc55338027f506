"""UDT (UDP-based Data Transfer) sockets and verified file copy, over udt's Rust engine.

``connect`` and ``listen`` give socket-like objects (``send``, ``recv``, ``sendall``,
``makefile``, ``stats``, context managers); ``copy`` moves files to or from a ``udt serve``
daemon, checking each with BLAKE3. Blocking calls release the GIL.
"""

from ._udt import (
    OPTION_NAMES,
    CopyError,
    Listener,
    Socket,
    VerificationError,
    __version__,
    connect,
    copy,
    listen,
)

__all__ = [
    "OPTION_NAMES",
    "CopyError",
    "Listener",
    "Socket",
    "VerificationError",
    "__version__",
    "connect",
    "copy",
    "listen",
]
