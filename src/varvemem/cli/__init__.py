"""The ``varvemem`` command line: a thin face over :class:`varvemem.Memory`."""

from __future__ import annotations

import sys

from ..errors import VarvememError
from ._app import app

# Importing a command module registers its commands; --help lists them in this order.
# isort: off
from . import memories  # noqa: F401
from . import lifecycle  # noqa: F401
from . import qa  # noqa: F401
from . import service  # noqa: F401
from . import mcp  # noqa: F401
from . import admin  # noqa: F401
from . import demo  # noqa: F401
from . import bench  # noqa: F401
# isort: on


def main() -> None:
    """Entry point: errors become one line on stderr and exit code 1, never a traceback."""
    try:
        app()
    except VarvememError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)


__all__ = ["app", "main"]
