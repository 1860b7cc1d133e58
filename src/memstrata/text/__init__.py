"""Text handling shared by every store and engine: the analyser, keywords, chunking, tokens."""

from .analyzer import analyse, extract_keywords, fts_query, identifiers
from .chunking import chunk_markdown
from .tokens import estimate_tokens

__all__ = ["analyse", "chunk_markdown", "estimate_tokens", "extract_keywords", "fts_query",
           "identifiers"]
