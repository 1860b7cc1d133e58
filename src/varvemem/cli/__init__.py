"""The ``varvemem`` command line: a thin face over :class:`varvemem.Memory`."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from ..errors import VarvememError
from ._app import app

# Importing a command module registers its commands; --help lists them in this order.
# isort: off
from . import setup  # noqa: F401
from . import memories  # noqa: F401
from . import lifecycle  # noqa: F401
from . import qa  # noqa: F401
from . import service  # noqa: F401
from . import ui  # noqa: F401
from . import mcp  # noqa: F401
from . import admin  # noqa: F401
from . import demo  # noqa: F401
from . import bench  # noqa: F401
# isort: on


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: every error is one line on stderr, never a traceback or a box. Usage
    errors (an unknown option, a bad option value) exit with 2, the program's errors
    (:class:`VarvememError`) with 1."""
    args = list(sys.argv[1:] if argv is None else argv)
    for n, arg in enumerate(args, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:  # bytes that are not UTF-8 (Python keeps them as surrogates)
            shown = arg.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
            _fail(f"error: argument {n} ('{shown}') is not UTF-8 text", 2)
    command = typer.main.get_command(app)
    try:
        # Not standalone: click would print its usage errors (typer: in a rich box) itself.
        code = command.main(args=args, prog_name="varvemem", standalone_mode=False)
    except VarvememError as exc:
        _fail(f"error: {exc}", 1)
    except typer.TyperException as exc:  # click's errors; a usage error knows its command
        message = exc.format_message()
        ctx = getattr(exc, "ctx", None)
        if not message:  # a group run without a command: its help is printed already
            sys.exit(exc.exit_code)
        if ctx is not None:
            message = f"{ctx.command_path}: {message} (see '{ctx.command_path} --help')"
        _fail(f"error: {message}", exc.exit_code)
    except typer.Abort:
        _fail("aborted", 1)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    if code == 130:  # click turns Ctrl-C inside a command into exit code 130, silently
        _fail("interrupted", 130)
    sys.exit(code if isinstance(code, int) else 0)


def _fail(line: str, code: int) -> None:
    print(" ".join(line.split()), file=sys.stderr)
    sys.exit(code)


__all__ = ["app", "main"]
