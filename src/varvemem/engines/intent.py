"""L3 intent routing (SPEC L3-1): chit-chat is answered without retrieval, in Chinese and
English. Rule-based: greetings, thanks and goodbyes that are the whole message."""

from __future__ import annotations

import re

_PUNCT = re.compile(r"[\s!！?？.。,，~～…:：;；'\"“”‘’()（）\-]+")
# Each kind: the whole (punctuation-free, lower-cased) message, and the short reply.
_KINDS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("greeting", re.compile(
        r"(hi|hello|hey|hiya|yo|good(morning|afternoon|evening)|你好|您好|哈喽|嗨|早上好|早|"
        r"下午好|晚上好|在吗|在不在)(there|all|everyone)?"), "Hello! How can I help?"),
    ("thanks", re.compile(
        r"(thanks?|thankyou|thanksalot|thankssomuch|thx|ty|cheers|great|ok|okay|gotit|"
        r"谢谢|多谢|感谢|谢了|谢谢你|谢谢您|好的|好|收到|明白了|知道了)(again|alot)?"),
     "You're welcome!"),
    ("goodbye", re.compile(r"(bye|goodbye|seeyou|seeya|再见|拜拜|回头见)"), "Goodbye!"),
)


def chit_chat(message: str) -> tuple[str, str] | None:
    """``(kind, reply)`` when the whole message is a greeting, thanks or goodbye."""
    text = _PUNCT.sub("", message.lower())
    if not text or len(text) > 24:
        return None
    for kind, pattern, reply in _KINDS:
        if pattern.fullmatch(text):
            return kind, reply
    return None
