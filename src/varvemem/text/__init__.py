"""Text handling shared by every store and engine: the analyser, keywords, chunking, tokens."""

from .analyzer import (
    INDEX_VERSION,
    analyse,
    date_terms,
    extract_keywords,
    fts_query,
    identifiers,
    index_terms,
    term_set,
)
from .chunking import chunk_markdown
from .tokens import estimate_tokens

__all__ = ["INDEX_VERSION", "analyse", "chunk_markdown", "date_terms", "estimate_tokens",
           "extract_keywords", "fts_query", "identifiers", "index_terms", "term_set"]
