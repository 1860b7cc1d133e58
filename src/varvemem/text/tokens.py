"""Token estimates for packing a context within a budget."""

from __future__ import annotations

import math
import re

_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_WORD = re.compile(r"[^\W\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+|[^\w\s]")


def estimate_tokens(text: str) -> int:
    """A conservative token count without a tokenizer model (none ships offline for every LLM).

    One token per CJK character, 1.3 per Latin word (sub-word splits), one per punctuation mark;
    BPE tokenizers of current models come in at or under this for English and Chinese.
    """
    cjk = len(_CJK_CHAR.findall(text))
    words = _WORD.findall(text)
    return cjk + math.ceil(sum(1.3 if w[0].isalnum() else 1.0 for w in words))
