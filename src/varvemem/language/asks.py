"""What a question asks for, by the kind of answer: one row per kind, in English and Chinese.

"Chen Hao's phone number?" asks for a phone number; a note that says what Chen Hao does holds
none, however close it sits. The relevance judge (:mod:`varvemem.engines.relevance`) reads
whether a question asks for a kind of this table and whether a hit holds it: one of the
kind's nouns (in either language: "birthday" answers "生日是哪天") or a value of one of its
``values`` kinds (as :func:`varvemem.engines.claims.values` names them).

``nouns`` name the thing in a question and in a text that holds it; ``cues`` ask for it in a
question only ("how much", "几点"). English words match whole, with their plural; Chinese
words as substrings, in simplified and traditional characters (OpenCC's; a regional word of
its own, "連接埠", is written out). A word that often means something else is left out ("rate":
"success rate"; "charge": "in charge"; "born": "where was she born"). A phone number is also
held by a plain number: the value reader reads "13812345678" and "ext 8360" as numbers.
Adding a word is one string in one row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from .lexicon import chinese_forms


@dataclass(frozen=True)
class AnswerKind:
    """One kind of answer a question may ask for."""

    kind: str
    nouns: tuple[str, ...]
    cues: tuple[str, ...]
    values: tuple[str, ...]


KINDS: tuple[AnswerKind, ...] = (
    AnswerKind("phone", ("phone", "phone number", "mobile number", "cell phone", "telephone",
                         "extension", "ext", "landline", "电话", "手机", "分机", "座机", "联系方式",
                         "聯絡方式", "電話號碼"),
               ("number to call", "打哪个", "打什么号"), ("phone", "number")),
    AnswerKind("email", ("email", "e-mail", "mail address", "邮箱", "电邮", "邮件地址", "信箱"),
               (), ("email",)),
    AnswerKind("web address", ("url", "link", "website", "web page", "网址", "链接", "网站",
                               "网页", "連結"), (), ("url", "host")),
    AnswerKind("port", ("port", "端口", "連接埠"), (), ("number",)),
    AnswerKind("version", ("version", "版本"), (), ("number", "host", "id")),
    AnswerKind("price", ("price", "cost", "fee", "salary", "rent", "deposit",
                         "价格", "价钱", "费用", "收费", "工资", "薪资", "薪水", "月薪", "年薪",
                         "房租", "租金", "押金", "报价"),
               ("how much", "多少钱", "几块钱", "多少块", "幾多錢"), ("amount", "number")),
    AnswerKind("birthday", ("birthday", "date of birth", "生日", "出生日期"), (), ("date",)),
    AnswerKind("count", (), ("how many", "number of", "几个", "多少个", "几台", "几家", "几位",
                             "多少人", "几片", "几次"), ("number",)),
    AnswerKind("clock time", ("opening hours", "营业时间"),
               ("what time", "几点", "几点钟"), ("time",)),
    AnswerKind("password", ("password", "passcode", "passphrase", "pin code", "door code",
                            "密码", "口令", "验证码"), (), ()),
)


def _forms(word: str) -> tuple[str, ...]:
    if not word.isascii():
        return chinese_forms(word)
    head, _, last = word.rpartition(" ")
    plural = last[:-1] + "ies" if last.endswith("y") and last[-2:-1] not in "aeiou" \
        else last + "s"  # "salaries", "birthdays"
    return (word, f"{head} {plural}".strip())


@cache
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    forms = sorted({f for w in words for f in _forms(w)}, key=lambda w: (-len(w), w))
    latin = [r"\s+".join(map(re.escape, f.split())) for f in forms if f.isascii()]
    other = [re.escape(f) for f in forms if not f.isascii()]
    # Latin words whole ("port" is not in "report"); an apostrophe may follow ("phone's").
    parts = ([r"(?<![\w'])(?:" + "|".join(latin) + r")(?!\w)"] if latin else []) + other
    return re.compile("|".join(parts) if parts else "(?!)", re.IGNORECASE)


def asked(question: str) -> tuple[AnswerKind, ...]:
    """The kinds of answer ``question`` asks for (none: it asks for none of the table's)."""
    return tuple(k for k in KINDS if _pattern(k.nouns + k.cues).search(question))


def named(kind: AnswerKind, text: str) -> bool:
    """Whether ``text`` names ``kind`` by one of its nouns."""
    return bool(kind.nouns) and bool(_pattern(kind.nouns).search(text))
