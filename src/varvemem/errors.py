"""Errors raised by varvemem. Every one carries a one-line message fit for a terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pydantic


class VarvememError(Exception):
    """Base class: a clear, one-line problem the caller can act on."""


class ValidationError(VarvememError, ValueError):
    """Input rejected at a boundary (empty content, oversize payload, unknown type...)."""


class NotFoundError(VarvememError, KeyError):
    """No memory with that id (in this tenant)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "not found"


class ConflictError(ValidationError):
    """A valid request the memory's state refuses (changing an archived memory before a
    restore): the REST API's 409."""


class UnknownMemoryError(NotFoundError, ValidationError):
    """An input names a memory that does not exist (``supersedes``): bad input, and not found
    (the REST API's 404)."""


class ConfigError(VarvememError):
    """Settings that cannot be used; the message names the offending key."""


class JudgeError(ConfigError):
    """A supersession judge file that is missing, unreadable, or made for another format,
    encoder or set of features (``update.judge_path``; :mod:`varvemem.engines.judge`)."""


class StorageError(VarvememError):
    """The home folder or a store cannot be used (not writable, corrupted, locked)."""


class EmbedderMismatchError(VarvememError):
    """The store's vectors were made by another embedding model than the configured one."""


class EmbedderError(VarvememError):
    """The embedding model could not be loaded or called."""


class LLMError(VarvememError):
    """The configured OpenAI-compatible chat endpoint failed or answered nonsense."""


class ArchiveError(VarvememError):
    """The archive (TIER-5) cannot be reached, or one of its objects is missing or malformed."""


class UnsupportedEventError(ValidationError):
    """A webhook delivery of an event type that varvemem does not turn into memories."""


class AuthError(VarvememError):
    """A missing, unknown, expired or revoked API key or webhook signature (``forbidden``
    False), or a valid key whose role is too low (``forbidden`` True)."""

    def __init__(self, message: str, forbidden: bool = False) -> None:
        super().__init__(message)
        self.forbidden = forbidden


class UnsupportedPlatformError(VarvememError, ImportError):
    """varvemem cannot run here: it needs a POSIX system (``import varvemem`` raises it)."""


UNAVAILABLE = (StorageError, ConfigError, ArchiveError)
"""A store, the settings or the archive cannot serve: a server answers 503."""


def public_message(exc: VarvememError) -> str:
    """What a server tells its client of ``exc``: its message, but when a store is unavailable
    (its message may name the store's host, port, user, database or files) a fixed sentence;
    the server logs the message itself."""
    if isinstance(exc, UNAVAILABLE):
        return "the store is unavailable; the server's log says why"
    return str(exc)


def describe_validation_error(exc: pydantic.ValidationError, what: str) -> str:
    """``invalid <what>: key: problem; ...``, each problem naming its dotted key."""
    parts = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"] if p != "__root__")
        msg = err["msg"].removeprefix("Value error, ")
        # A check of the whole object (no key of its own) names the keys in its message.
        parts.append(f"{key}: {msg}" if key else msg)
    return f"invalid {what}: " + "; ".join(parts)
