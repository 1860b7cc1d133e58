"""langchain-tests' standard suites: the retriever (``RetrieversIntegrationTests``) and the
key-value store over the LangGraph store (``BaseStoreSyncTests``/``BaseStoreAsyncTests``, with
text, bytes and ``Document`` values). LangGraph's own ``BaseStore`` has no standard suite:
tests/integrations/test_langgraph.py runs one contract on it and on LangGraph's ``InMemoryStore``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_tests.integration_tests import (
    BaseStoreAsyncTests,
    BaseStoreSyncTests,
    RetrieversIntegrationTests,
)

from varvemem import AsyncMemory, Memory
from varvemem.integrations.langchain import VarvememRetriever
from varvemem.integrations.langgraph import VarvememKeyValueStore, VarvememStore

FACTS = ["The staging cluster is eks-stg-2 in eu-west-1.",
         "The production cluster is eks-prd-1 in eu-central-1.",
         "The staging cluster runs Kubernetes 1.31.",
         "The staging cluster is rebuilt every Sunday night.",
         "The team lunch is on Friday at the Italian place."]


class TestVarvememRetrieverStandard(RetrieversIntegrationTests):
    """Every standard test, none overridden or skipped."""

    memory: Memory

    @pytest.fixture(autouse=True)
    def _stocked(self, make_memory: Callable[..., Memory]) -> Iterator[None]:
        self.memory = make_memory()
        for fact in FACTS:
            self.memory.add(fact, type="knowledge", tags=["infra"])
        yield

    @property
    def retriever_constructor(self) -> type[VarvememRetriever]:
        return VarvememRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": self.memory, "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return "which cluster is staging?"


VALUES: dict[str, tuple[Any, Any, Any]] = {
    "text": ("foo 值", "bar", "buzz"),
    "bytes": (b"\x00foo", b"bar\xff", "零".encode()),
    "documents": (Document(page_content="部署 eks-stg-2", metadata={"source": "runbook"}),
                  Document(page_content="bar", metadata={"n": 2}),
                  Document(page_content="buzz", id="doc-3")),
}


@pytest.fixture(params=sorted(VALUES))
def _kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class TestVarvememKeyValueStoreStandard(BaseStoreSyncTests[Any]):
    """Every standard sync test, none overridden or skipped, for each kind of value."""

    @pytest.fixture
    def kv_store(self, make_memory: Callable[..., Memory]) -> VarvememKeyValueStore:
        return VarvememKeyValueStore(VarvememStore(make_memory()))

    @pytest.fixture
    def three_values(self, _kind: str) -> tuple[Any, Any, Any]:
        return VALUES[_kind]


class TestVarvememKeyValueStoreAsyncStandard(BaseStoreAsyncTests[Any]):
    """Every standard async test, over an AsyncMemory."""

    @pytest.fixture
    async def kv_store(self, make_memory: Callable[..., Memory]) -> VarvememKeyValueStore:
        return VarvememKeyValueStore(VarvememStore(AsyncMemory(make_memory())), ("cache", "e"))

    @pytest.fixture
    def three_values(self, _kind: str) -> tuple[Any, Any, Any]:
        return VALUES[_kind]
