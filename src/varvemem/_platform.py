"""varvemem runs on POSIX systems only; elsewhere ``import varvemem`` says so in one error.

What needs POSIX: the file locks (``fcntl.flock``) that let several processes share one home
(the SQLite store's schema creation, the local vector index's files, the session logs) and the
fsync of a directory after a rename (the file archive). Without this check the first sign on
another platform would be an ImportError of ``fcntl`` deep in the stores' imports.
"""

from __future__ import annotations

import sys

from .errors import UnsupportedPlatformError


def require_posix() -> None:
    """:class:`UnsupportedPlatformError` naming the platform and the reason, unless the POSIX
    calls varvemem uses are there."""
    try:
        import fcntl  # noqa: F401  (a built-in module: nothing to load)
    except ImportError:
        raise UnsupportedPlatformError(
            f"varvemem needs a POSIX system (Linux, macOS, BSD): this Python ({sys.platform}) "
            "has no fcntl, whose file locks let several processes share a home") from None
