"""The typer application, its global options and the helpers every command shares.

The command modules import only typer, rich and this module when they load (``--help`` and
``--version`` build every command): the library (settings, pydantic, numpy, the stores, the
engines) is imported by the commands that use it.
"""

from __future__ import annotations

import copy
import inspect
import json
import shlex
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from rich.console import Console
from typer._click.core import Context  # typer's own click (see Group)
from typer.core import TyperGroup

from ..errors import StorageError
from ..search_args import LISTS, SEARCH_ARGS, Kind, SearchArg, with_parameters

if TYPE_CHECKING:
    from ..api import Memory
    from ..settings import Settings

_F = TypeVar("_F", bound=Callable[..., Any])

# The commands that make the home when it does not exist yet; every other one refuses it.
CREATING = ("init", "add", "ingest", "qa add", "qa import", "keys create", "db upgrade")
_SHARED = ("home", "config")  # root options every subcommand takes as well
_FIRST_YEAR, _LAST_YEAR = 1900, 9000  # what --now and --as-of accept


class Group(TyperGroup):
    """A typer group whose subcommands also take the root's ``--home`` and ``--config``
    (``varvemem search foo --home H``) and whose help shows flags bare.

    typer 0.29 vendors its own click (``typer._click``; the installed click is not used) and
    its rich help prints every option's type from ``display_type_rich()``: for a flag that is
    its annotation, ``<bool>``. Only the plain help checks ``is_flag``. An empty metavar
    leaves a flag's type column blank.
    """

    def get_params(self, ctx: Context) -> list[Any]:
        params = super().get_params(ctx)
        _bare_flags(params)
        return params

    def get_command(self, ctx: Context, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None:
            return None
        _bare_flags(cmd.get_params(ctx))
        taken = {o for p in cmd.params for o in getattr(p, "opts", ())}
        for param in ctx.find_root().command.params:
            if param.name in _SHARED and not taken & set(param.opts):
                cmd.params.append(_shared_copy(param))
        return cmd


def _bare_flags(params: list[Any]) -> None:
    for p in params:
        if getattr(p, "is_flag", False) and p.metavar is None:
            p.metavar = ""


def _shared_copy(param: Any) -> Any:
    """The root option ``param`` for a subcommand: given after the command, it overrides the
    root's value (the root alone reads the environment variable)."""
    shared = copy.copy(param)
    shared.expose_value, shared.envvar, shared.show_envvar = False, None, False

    def remember(ctx: typer.Context, _param: Any, value: Any) -> Any:
        if value is not None:
            ctx.find_root().ensure_object(dict)[param.name] = value
        return value

    shared.callback = remember
    return shared


app = typer.Typer(
    name="varvemem", cls=Group, no_args_is_help=True, add_completion=False,
    pretty_exceptions_enable=False,
    help="Long-term memory for LLM agents: add, search and manage memories offline.\n\n"
         "Memories live in a home folder (--home, else $VARVEMEM_HOME, else ~/.varvemem). "
         f"Only {', '.join(CREATING[:-1])} and {CREATING[-1]} create a home that does not "
         "exist; every other command refuses it. --home and --config may also follow the "
         "command.")
config_app = typer.Typer(cls=Group, no_args_is_help=True, help="Inspect the effective settings.")
app.add_typer(config_app, name="config")
db_app = typer.Typer(cls=Group, no_args_is_help=True, help="The store of record's schema.")
app.add_typer(db_app, name="db")

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def version_text() -> str:
    from importlib.metadata import version as package_version

    return f"varvemem {package_version('varvemem')}"


def _show_version(value: bool) -> None:
    if value:
        print(version_text())
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    home: Path | None = typer.Option(None, "--home", envvar="VARVEMEM_HOME",
                                     help="Home folder (default ~/.varvemem)."),
    config: Path | None = typer.Option(None, "--config", envvar="VARVEMEM_CONFIG",
                                       help="Settings file (default <home>/varvemem.toml)."),
    _version: bool = typer.Option(False, "--version", is_eager=True, callback=_show_version,
                                  help="Print the version and exit."),
) -> None:
    ctx.obj = {"home": home, "config": config}


def settings_of(ctx: typer.Context) -> Settings:
    """The effective settings; reads no data, so the home need not exist."""
    from ..settings import Settings

    obj = ctx.find_root().obj or {}
    return Settings.load(home=obj.get("home"), config_file=obj.get("config"))


def home_settings(ctx: typer.Context) -> Settings:
    """The settings of a command that opens the home. A home that does not exist, or a folder
    without a store in it, is refused (nothing is made) unless the command is one of
    :data:`CREATING`."""
    from ..stores import store_exists

    settings = settings_of(ctx)
    home = settings.home
    if home.exists() and not home.is_dir():
        raise StorageError(f"home {home} is not a folder")
    if _command_name(ctx) in CREATING:
        return settings
    fix = f"create it with 'varvemem init --home {shlex.quote(str(home))}'"
    if not home.exists():
        raise StorageError(f"home {home} does not exist; {fix}")
    if not store_exists(settings):
        raise StorageError(f"{home} is not a varvemem home (it holds no store); {fix}")
    return settings


def _command_name(ctx: typer.Context) -> str:
    """The command as :data:`CREATING` names it: ``qa add`` for ``varvemem qa add``."""
    return ctx.command_path.split(" ", 1)[1] if " " in ctx.command_path else ""


def memory_of(ctx: typer.Context) -> Memory:
    """Open the Memory for this invocation (the home as :func:`home_settings` allows); it is
    closed (and notices printed) at the end. A command's ``--now`` (see :data:`NOW`) fixes
    the clock."""
    from ..api import Memory

    now = parse_time(ctx.params.get("now"))
    mem = Memory(settings=home_settings(ctx), clock=(lambda: now) if now else None)

    def _close() -> None:
        mem.close()
        for notice in mem.notices:
            err_console.print(f"note: {notice}")

    ctx.call_on_close(_close)
    return mem


def parse_time(value: str | None) -> datetime | None:
    """``--now``, ``--as-of``: an ISO 8601 date or time, UTC when it names no zone (a date
    alone is its midnight, UTC)."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not an ISO 8601 date or time such as "
                                 "2026-01-31 or 2026-01-31T09:00:00Z") from None
    # Far enough from datetime's ends that the time rules (now minus a retention) stay in range.
    if not _FIRST_YEAR <= when.year <= _LAST_YEAR:
        raise typer.BadParameter(f"{value!r} is outside the years {_FIRST_YEAR}-{_LAST_YEAR}")
    return when.astimezone(timezone.utc) if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _check_time(value: str | None) -> str | None:
    parse_time(value)
    return value


NOW = typer.Option(None, "--now", envvar="VARVEMEM_NOW", callback=_check_time, metavar="<time>",
                   help="Act as of this time (ISO 8601): records and ranks as if it were then.")
AS_OF = typer.Option(None, "--as-of", callback=_check_time, metavar="<time>",
                     help="Read the memories as they were at this time (ISO 8601 date or "
                          "time, UTC unless it names a zone); default --now.")


MEMORY_ID = typer.Argument(..., metavar="ID",
                           help="A memory id, or a unique prefix of it (6 hex digits at least).")


def as_of_of(ctx: typer.Context) -> datetime | None:
    """What a read command (search, context, get) reads as of: ``--as-of``, else ``--now``
    (memories made after it are hidden), else now."""
    return parse_time(ctx.params.get("as_of")) or parse_time(ctx.params.get("now"))


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def split_csv(value: str | None) -> list[str] | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    return items or None


# The options' types by kind of search argument (search_args.Kind); any other kind is text.
_SEARCH_TYPES: dict[Kind, type] = {"count": int, "number": float, "flag": bool}


def _search_option(arg: SearchArg) -> inspect.Parameter:
    decls = [str(arg.cli), *([arg.cli_short] if arg.cli_short else [])]
    if arg.kind == "time":
        option = typer.Option(None, *decls, callback=_check_time, metavar="<time>", help=(
            f"{arg.doc} An ISO 8601 date or time, UTC unless it names a zone."))
    else:
        option = typer.Option(arg.default, *decls, min=arg.low, max=arg.high, help=(
            f"{arg.doc} Comma-separated." if arg.kind in LISTS else arg.doc))
    kind = _SEARCH_TYPES.get(arg.kind, str)
    return inspect.Parameter(arg.name, inspect.Parameter.KEYWORD_ONLY, default=option,
                             annotation=kind if arg.default is not None else kind | None)


def search_options(command: _F) -> _F:
    """``command``, which takes the search arguments as ``**kwargs``, with an option for each
    row that names one (``cli``): an integer, a number, a flag or text (a list
    comma-separated, a time ISO 8601), with the row's bounds and default and ``doc`` as help.
    :func:`library_args` turns what they were given into the library's arguments."""
    return with_parameters(command, [_search_option(a) for a in SEARCH_ARGS if a.cli])


def library_args(ctx: typer.Context, given: dict[str, Any]) -> dict[str, Any]:
    """The :func:`search_options` given, as the library takes them: lists split at commas,
    times parsed, ``--as-of`` defaulting to ``--now`` (:func:`as_of_of`)."""
    kinds = {a.name: a.kind for a in SEARCH_ARGS}
    args = {k: split_csv(v) if kinds[k] in LISTS else parse_time(v) if kinds[k] == "time"
            else v for k, v in given.items()}
    if "as_of" in args:
        args["as_of"] = as_of_of(ctx)
    return args
