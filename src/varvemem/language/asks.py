"""What a question asks for, by the kind of answer: one row per kind, in English and Chinese.

"Chen Hao's phone number?" asks for a phone number; a note that says what Chen Hao does holds
none, however close it sits. The relevance judge (:mod:`varvemem.engines.relevance`) reads
whether a question asks for a kind of this table and whether a hit holds it: one of the
kind's nouns (in either language: "birthday" answers "生日是哪天") or a value of one of its
``values`` kinds (as :func:`varvemem.engines.claims.values` names them).

``nouns`` name the thing in a question and in a text that holds it; ``cues`` ask for it in a
question only ("how much", "几点"). English words match whole, with a plural "s"; Chinese
words as substrings, in simplified and traditional characters. Adding a word is one string in
one row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from .lexicon import any_of, chinese_forms


@dataclass(frozen=True)
class AnswerKind:
    """One kind of answer a question may ask for."""

    kind: str
    nouns: tuple[str, ...]
    cues: tuple[str, ...]
    values: tuple[str, ...]


KINDS: tuple[AnswerKind, ...] = (
    AnswerKind("phone", ("phone", "mobile", "cell", "telephone", "extension", "landline",
                         "电话", "手机", "分机", "座机", "联系方式"),
               ("number to call", "call on", "打哪个", "打什么号"), ("phone",)),
    AnswerKind("email", ("email", "e-mail", "mail address", "邮箱", "电邮", "邮件地址"), (),
               ("email",)),
    AnswerKind("web address", ("url", "link", "website", "web page", "网址", "链接", "网站",
                               "网页"), (), ("url", "host")),
    AnswerKind("port", ("port", "端口"), (), ("number",)),
    AnswerKind("version", ("version", "版本"), (), ("number", "host", "id")),
    AnswerKind("price", ("price", "cost", "fee", "charge", "salary", "rent", "rate", "deposit",
                         "价格", "价钱", "费用", "收费", "工资", "薪资", "月薪", "年薪", "房租",
                         "租金", "押金", "报价"),
               ("how much", "多少钱", "几块钱", "多少块"), ("amount", "number")),
    AnswerKind("birthday", ("birthday", "date of birth", "生日", "出生日期"),
               ("born", "出生"), ("date",)),
    AnswerKind("count", (), ("how many", "number of", "几个", "多少个", "几台", "几家", "几位",
                             "多少人", "几片", "几次"), ("number",)),
    AnswerKind("clock time", ("opening hours", "营业时间"),
               ("what time", "几点", "几点钟"), ("time",)),
    AnswerKind("password", ("password", "passcode", "passphrase", "pin code", "door code",
                            "密码", "口令", "验证码"), (), ()),
)


@cache
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    forms = [f for w in words for f in (chinese_forms(w) if not w.isascii() else
                                         (w, w + "s") if " " not in w else (w,))]
    return re.compile(any_of(sorted(set(forms), key=lambda w: (-len(w), w))),
                      re.IGNORECASE)


def asked(question: str) -> tuple[AnswerKind, ...]:
    """The kinds of answer ``question`` asks for (none: it asks for none of the table's)."""
    return tuple(k for k in KINDS if _pattern(k.nouns + k.cues).search(question))


def named(kind: AnswerKind, text: str) -> bool:
    """Whether ``text`` names ``kind`` by one of its nouns."""
    return bool(kind.nouns) and bool(_pattern(kind.nouns).search(text))
