"""The ``memstrata`` command line: a thin face over :class:`memstrata.Memory`."""

from __future__ import annotations

import sys

from ..errors import MemstrataError
from . import admin, memories  # noqa: F401  (register commands)
from ._app import app
from .demo import demo  # noqa: F401


def main() -> None:
    """Entry point: errors become one line on stderr and exit code 1, never a traceback."""
    try:
        app()
    except MemstrataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)


__all__ = ["app", "main"]
