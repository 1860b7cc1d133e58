"""One typed settings object: defaults < ``varvemem.toml`` < ``VARVEMEM_*`` variables < arguments.

Nested keys use ``__`` in variables: ``VARVEMEM_RETRIEVAL__CANDIDATES_PER_CHANNEL=20``.
Every threshold and weight the engines use lives here (SPEC CFG-1): the sections in the
modules of this package by owner, the top-level :class:`Settings` and its loading here.
"""

from __future__ import annotations

import contextvars
import os
from pathlib import Path
from typing import Any, ClassVar

import pydantic
from pydantic import Field, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from ..backends import VECTOR_URL, misplaced
from ..embeddings import check_settings
from ..errors import ConfigError, describe_validation_error
from ..model import MemoryType
from ..search_args import TOP_K_MAX
from .faq import FAQSettings, HistorySettings
from .lifecycle import LifecycleSettings, TierRule
from .models import EmbedderSettings, LLMSettings, SecondModelSettings
from .old_keys import moved
from .read import (
    OVERVIEW_DAYS_MAX,
    OVERVIEW_RECENT_MAX,
    ConflictSettings,
    ContextSettings,
    Profile,
    RerankSettings,
    RetrievalSettings,
    TimeWordSettings,
    Weights,
)
from .service import (
    URL_TOKEN_HEADER,
    McpSettings,
    ServerSettings,
    UiSettings,
    WebhookSettings,
    WebhookSource,
)
from .store import (
    ArchiveSettings,
    LocalIndexSettings,
    MilvusSettings,
    PostgresqlSettings,
    RedisSettings,
    SqliteSettings,
    StoreSettings,
    redact_url,
)
from .types import TTLRule, TypeSettings, over_defaults, type_defaults
from .write import AttributeWords, ImportanceSignal, UpdateSettings

__all__ = [
    "CONFIG_FILE_NAME",
    "OVERVIEW_DAYS_MAX",
    "OVERVIEW_RECENT_MAX",
    "TOP_K_MAX",
    "URL_TOKEN_HEADER",
    "ArchiveSettings",
    "AttributeWords",
    "ConflictSettings",
    "ContextSettings",
    "EmbedderSettings",
    "FAQSettings",
    "HistorySettings",
    "ImportanceSignal",
    "LLMSettings",
    "LifecycleSettings",
    "LocalIndexSettings",
    "McpSettings",
    "MilvusSettings",
    "PostgresqlSettings",
    "Profile",
    "RedisSettings",
    "RerankSettings",
    "RetrievalSettings",
    "SecondModelSettings",
    "ServerSettings",
    "Settings",
    "SqliteSettings",
    "StoreSettings",
    "TTLRule",
    "TierRule",
    "TimeWordSettings",
    "TypeSettings",
    "UiSettings",
    "UpdateSettings",
    "WebhookSettings",
    "WebhookSource",
    "Weights",
    "redact_url",
]

CONFIG_FILE_NAME = "varvemem.toml"
_toml_file: contextvars.ContextVar[Path | None] = contextvars.ContextVar("toml", default=None)
# Set by Settings.defaults: the built-in values only, no variables and no file.
_defaults_only: contextvars.ContextVar[bool] = contextvars.ContextVar("defaults", default=False)


class _UrlVariables(PydanticBaseSettingsSource):
    """The backends' URLs by their short variables (``VARVEMEM_STORE_URL``,
    ``VARVEMEM_VECTOR_URL``, ``VARVEMEM_CACHE_URL``, ``VARVEMEM_ARCHIVE_URL``), below the
    nested ``__`` ones."""

    NAMES: ClassVar[dict[str, tuple[str, str]]] = {"VARVEMEM_STORE_URL": ("store", "url"),
             "VARVEMEM_CACHE_URL": ("store", "cache_url"),
             "VARVEMEM_VECTOR_URL": ("store", "vector_url"),
             "VARVEMEM_ARCHIVE_URL": ("archive", "url")}

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ gives the whole mapping

    def __call__(self) -> dict[str, Any]:
        out: dict[str, dict[str, str]] = {}
        for var, (section, key) in self.NAMES.items():
            if os.environ.get(var):
                out.setdefault(section, {})[key] = os.environ[var]
        return out


class _Moved(PydanticBaseSettingsSource):
    """A source with its old keys moved to their new ones (``settings/old_keys.py``) before
    the sources are merged: a higher source's old key still wins over a lower one's new key,
    and only one source holding both, different, fails."""

    def __init__(self, inner: PydanticBaseSettingsSource, name: str) -> None:
        super().__init__(inner.settings_cls)
        self.inner = inner
        self.name = name

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ gives the whole mapping

    def __call__(self) -> dict[str, Any]:
        try:
            out: dict[str, Any] = moved(self.inner(), self.settings_cls, self.name)
        except ValueError as exc:
            raise ConfigError(f"{self.name}: {exc}") from None
        return out


class Settings(BaseSettings):
    """Everything configurable, validated; errors name the key."""

    model_config = SettingsConfigDict(
        env_prefix="VARVEMEM_", env_nested_delimiter="__", extra="forbid",
        validate_assignment=True)

    home: Path = Field(default_factory=lambda: Path("~/.varvemem").expanduser())
    default_tenant: str = "default"
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    second_model: SecondModelSettings = Field(default_factory=SecondModelSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    update: UpdateSettings = Field(default_factory=UpdateSettings)
    types: dict[MemoryType, TypeSettings] = Field(default_factory=type_defaults)
    conflicts: ConflictSettings = Field(default_factory=ConflictSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    lifecycle: LifecycleSettings = Field(default_factory=LifecycleSettings)
    archive: ArchiveSettings = Field(default_factory=ArchiveSettings)
    history: HistorySettings = Field(default_factory=HistorySettings)
    faq: FAQSettings = Field(default_factory=FAQSettings)
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    ui: UiSettings = Field(default_factory=UiSettings)

    @model_validator(mode="before")
    @classmethod
    def _old_keys(cls, data: Any) -> Any:
        return moved(data, cls)

    _types_over_defaults = field_validator("types", mode="before")(over_defaults)

    @model_validator(mode="after")
    def _references(self) -> Settings:
        """Settings that name an implementation must name one that exists and has what it
        needs (checked here, at load, not at first use). Messages name their keys."""
        try:
            check_settings(self.embedder)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        try:  # the second model is made from its name alone
            check_settings(EmbedderSettings(name=self.second_model.name))
        except ConfigError as exc:
            raise ValueError(str(exc).replace("embedder.", "second_model.")) from None
        problem = misplaced(VECTOR_URL, self.store.vector_url, self.store.url)
        if problem:
            raise ValueError(problem)
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        if _defaults_only.get():
            return (init_settings,)
        sources: list[PydanticBaseSettingsSource] = [
            _Moved(init_settings, "the arguments"),
            _Moved(env_settings, "the VARVEMEM_* variables"), _UrlVariables(settings_cls)]
        toml = _toml_file.get()
        if toml is not None:
            sources.append(_Moved(TomlConfigSettingsSource(settings_cls, toml_file=toml),
                                  str(toml)))
        return tuple(sources)

    @classmethod
    def load(cls, home: str | Path | None = None, config_file: str | Path | None = None,
             **overrides: Any) -> Settings:
        """Build the effective settings for ``home``.

        The file is ``config_file``, else ``$VARVEMEM_CONFIG``, else ``<home>/varvemem.toml``
        when it exists. Raises :class:`ConfigError` naming the bad key.
        """
        if home is None:
            home = os.environ.get("VARVEMEM_HOME") or "~/.varvemem"
        home_path = Path(home).expanduser()
        file = config_file or os.environ.get("VARVEMEM_CONFIG")
        toml_path = Path(file).expanduser() if file else home_path / CONFIG_FILE_NAME
        if file and not toml_path.is_file():
            raise ConfigError(f"config file {toml_path} does not exist")
        token = _toml_file.set(toml_path if toml_path.is_file() else None)
        try:
            return cls(home=home_path, **overrides)
        except pydantic.ValidationError as exc:
            raise ConfigError(describe_validation_error(exc, "settings")) from None
        except ValueError as exc:  # a malformed TOML file
            raise ConfigError(f"{toml_path}: {exc}") from None
        finally:
            _toml_file.reset(token)

    @classmethod
    def defaults(cls, home: str | Path) -> Settings:
        """The built-in settings for ``home``, ignoring ``VARVEMEM_*`` variables and settings
        files: a self-contained run (the demo) never reaches the user's stores."""
        token = _defaults_only.set(True)
        try:
            return cls(home=Path(home).expanduser())
        finally:
            _defaults_only.reset(token)

