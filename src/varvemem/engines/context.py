"""The context block (SPEC RET-3/4): its token budget, and which memories fill it: a
session's window first, then the hits with evidence of their own, packed best first."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .._validate import MAX_TOKENS_MIN
from ..errors import ValidationError
from ..model import MemoryRecord, SearchHit
from ..settings import ContextSettings
from ..text import estimate_tokens

if TYPE_CHECKING:  # a budget alone builds no engine
    from .retrieval import RetrievalEngine


def budget(cfg: ContextSettings, query: str, max_tokens: int | None = None,
           prompt: str = "") -> int:
    """:meth:`varvemem.Memory.context_budget`."""
    tokens = cfg.max_tokens if max_tokens is None else max_tokens
    if tokens is None:
        return max(0, int(cfg.window_tokens * cfg.window_share) - estimate_tokens(query)
                   - (estimate_tokens(prompt) if prompt else 0) - cfg.prompt_tokens)
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < MAX_TOKENS_MIN:
        raise ValidationError(f"max_tokens {tokens} is too small (at least {MAX_TOKENS_MIN})")
    return tokens


Block = tuple[str, list[SearchHit], list[str]]
"""A context: its text, the hits it may hold, and the ids of the session's window in it."""


class ContextEngine:
    """Builds the context :meth:`varvemem.Memory.context` returns and
    :meth:`~varvemem.Memory.ask` answers from (its budget: :func:`budget`)."""

    def __init__(self, settings: ContextSettings, retrieval: RetrievalEngine) -> None:
        self.settings = settings
        self.retrieval = retrieval

    def build(self, query: str, max_tokens: int | None, top_k: int | None, prompt: str,
              search: Callable[[int], list[SearchHit]],
              window: Callable[[], Sequence[MemoryRecord]] | None = None) -> Block:
        """The context for ``query``: its budget (``prompt`` is what the caller puts around
        it besides the question), the session's ``window`` when there is one, then the
        ``search`` for ``top_k`` hits (default ``context.top_k``), packed."""
        tokens = budget(self.settings, query, max_tokens, prompt)
        shown = list(window()) if window is not None else []
        return self.pack(search(top_k or self.settings.top_k), shown, tokens)

    def pack(self, hits: Sequence[SearchHit], window: Sequence[MemoryRecord],
             budget: int) -> Block:
        """The block for ``budget`` tokens, the hits it may hold and the ids of the session's
        ``window`` packed first."""
        shown = {r.memory_id for r in window}
        # A prompt gets only hits with evidence of their own. Those the relevance judge read
        # passed it; the floor answers nothing unless one hit reaches it, but then ranks the
        # rest below it too, which would fill the budget with memories the query is not about.
        floor = self.retrieval.relevance_floor()
        kept = [h for h in hits if h.memory.memory_id not in shown
                and (floor <= 0 or h.scores.relevance is not None
                     or (h.scores.evidence or 0.0) >= floor)]
        return self.retrieval.pack(kept, budget, window), kept, sorted(shown)
