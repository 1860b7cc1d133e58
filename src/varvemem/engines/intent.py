"""L3 intent routing (SPEC L3-1): chit-chat is answered without retrieval, in Chinese and
English. Rule-based: greetings, thanks, goodbyes and acknowledgements that are the whole
message, from the tables of :mod:`varvemem.language.talk` (phrases by kind, fillers, emoji).

A message is chit-chat when, once lower-cased and stripped of punctuation, spaces and emoji
(letters repeated three times or more count once: "hellooo", "谢谢谢谢"), it is nothing but a
sequence of small-talk phrases, modal particles (啊, 呀, 啦...), intensifiers ("so much",
非常, 太...了) and forms of address ("there", 大家). One word outside those lists (a question
word, a noun, "but") makes it a real message: "thanks, but how do I roll back?" and
"你好，怎么重置密码？" go on to retrieval, and so does a message with an emoji of doubt ("🤔").
"""

from __future__ import annotations

import re
import unicodedata

from ..language.talk import DOUBT as _DOUBT
from ..language.talk import EMOJI_KIND as _EMOJI_KIND
from ..language.talk import FILLERS as _FILLERS
from ..language.talk import PHRASES as _PHRASES

# What is left out before matching: spaces, punctuation (ASCII and CJK), and symbols (emoji,
# their variation selectors and joiners). Symbols are remembered: some say the kind.
_PUNCT = re.compile(r"[\s!！?？.。,，、~～…:：;；'\"“”‘’`()（）\[\]【】<>《》\-_*/\\|#@&+=^]+")
_REPEAT = re.compile(r"(.)\1{2,}")

_MAX_LEN = 40
_REPLIES = {"greeting": "Hello! How can I help?", "thanks": "You're welcome!",
            "goodbye": "Goodbye!", "acknowledgement": "Glad to help."}
# The kind a mixed message is taken as: "ok thanks" thanks, "好的，再见" a goodbye.
_PRIORITY = ("thanks", "goodbye", "greeting", "acknowledgement")
# Every phrase and filler, compiled, with its kind ("" for a filler).
_UNITS = [(kind, re.compile(p)) for kind, ps in _PHRASES.items() for p in dict.fromkeys(ps)] \
    + [("", re.compile(p)) for p in dict.fromkeys(_FILLERS)]


def _strip(message: str) -> tuple[str, set[str]]:
    """The message as matched (see the module's docstring), and the kinds its emoji say."""
    norm = unicodedata.normalize("NFKC", message).lower()
    kinds = {_EMOJI_KIND[ch] for ch in norm if ch in _EMOJI_KIND}
    kept = "".join(ch for ch in norm if unicodedata.category(ch) not in _SYMBOLS)
    return _REPEAT.sub(r"\1", _PUNCT.sub("", kept)), kinds


_SYMBOLS = frozenset(("So", "Sk", "Mn", "Me", "Cf", "Co", "Cs"))


def _kinds(text: str) -> set[str] | None:
    """The kinds of the phrases ``text`` is made of (fillers have none), or None when
    something else is in it. A search over every way to cut it (the texts are short)."""
    memo: dict[int, set[str] | None] = {len(text): set()}

    def walk(i: int) -> set[str] | None:
        if i not in memo:
            memo[i] = None
            for kind, pattern in _UNITS:
                m = pattern.match(text, i)
                if m and m.end() > i and (rest := walk(m.end())) is not None:
                    memo[i] = rest | ({kind} if kind else set())
                    break
        return memo[i]

    return walk(0)


def chit_chat(message: str) -> tuple[str, str] | None:
    """``(kind, reply)`` when the whole message is a greeting, thanks, goodbye or
    acknowledgement (kinds: ``greeting``, ``thanks``, ``goodbye``, ``acknowledgement``)."""
    text, emoji = _strip(message)
    if len(text) > _MAX_LEN or any(ch in _DOUBT for ch in message):
        return None
    found = _kinds(text) if text else set()
    if found is None:
        return None
    found |= emoji
    if not found:
        # Emoji alone (say a smile) is an acknowledgement; particles alone, or nothing, are not.
        if text or not any(unicodedata.category(ch) == "So" for ch in message):
            return None
        found = {"acknowledgement"}
    kind = next(k for k in _PRIORITY if k in found)
    return kind, _REPLIES[kind]
