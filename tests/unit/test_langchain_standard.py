"""langchain-tests' standard suite for the retriever (``RetrieversIntegrationTests``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from varvemem import Memory
from varvemem.integrations.langchain import VarvememRetriever

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
