"""What a reader takes of the settings, one protocol per section: an engine types its settings
as a protocol made of these, so it names the sections it reads (mypy refuses a read of any
other) and a test can hand it an object that holds only those. :class:`~varvemem.settings.
Settings` has every one."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from ..model import MemoryType
from .faq import FAQSettings
from .lifecycle import LifecycleSettings
from .models import EmbedderSettings, LLMSettings, SecondModelSettings
from .read import ConflictSettings, ContextSettings, RetrievalSettings
from .service import ServerSettings, WebhookSettings
from .types import TypeSettings
from .write import UpdateSettings


class Home(Protocol):
    @property
    def home(self) -> Path: ...


class Update(Protocol):
    @property
    def update(self) -> UpdateSettings: ...


class Types(Protocol):
    @property
    def types(self) -> Mapping[MemoryType, TypeSettings]: ...


class Retrieval(Protocol):
    @property
    def retrieval(self) -> RetrievalSettings: ...


class Conflicts(Protocol):
    @property
    def conflicts(self) -> ConflictSettings: ...


class Context(Protocol):
    @property
    def context(self) -> ContextSettings: ...


class Lifecycle(Protocol):
    @property
    def lifecycle(self) -> LifecycleSettings: ...


class Embedder(Protocol):
    @property
    def embedder(self) -> EmbedderSettings: ...


class SecondModel(Protocol):
    @property
    def second_model(self) -> SecondModelSettings: ...


class Llm(Protocol):
    @property
    def llm(self) -> LLMSettings: ...


class Faq(Protocol):
    @property
    def faq(self) -> FAQSettings: ...


class Webhooks(Protocol):
    @property
    def webhooks(self) -> WebhookSettings: ...


class Server(Protocol):
    @property
    def server(self) -> ServerSettings: ...
