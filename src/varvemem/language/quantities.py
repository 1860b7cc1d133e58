"""Quantities in either language, as comparable values: "7am" and "早上七点" are one time of day,
"Sunday" and "周日" one weekday, "3 weeks" and "三周" one duration, "€25" and "25 欧" one amount.

A statement's value written in the other language reads nothing like it ("6 pm" against
"晚上 6 点", "2 business days" against "两个工作日"), so a comparison of the values' texts sees
two new values where there is one. :func:`quantities` reads a text's quantities of each kind
(:data:`KINDS`) into one canonical value (minutes of the day, a weekday's number, a (month,
day), a day of the month, seconds, a number), whichever language or numeral system wrote it.
Chinese numerals become digits first (``cn2an``, the maintained converter of their grammar:
十, 百, 零, 百分之), but only where a measure, a unit, a currency or a time follows: Chinese
writes digits inside words (三明治, 四川, 第三方, 一直), which are no quantities. English number
words become digits by :data:`NUMBER_WORDS`.

The kinds are rows of :data:`PATTERNS` (a kind, an expression, how its match becomes a value),
read in order; a span a row has read is not read again (so "3 weeks" is no count). Only the
first :data:`READ_CHARS` characters are read: a statement is short, and a long document is
not compared by its quantities.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from .lexicon import simplified

KINDS = ("clock", "weekday", "date", "monthday", "duration", "percent", "money", "year", "count")
READ_CHARS = 2000
# cn2an warns on a numeral it cannot read (and keeps it): once, here, not per call
# (a ``catch_warnings`` block is not thread-safe).
warnings.filterwarnings("ignore", category=UserWarning, module=r"cn2an(\..*)?$")


@dataclass(frozen=True)
class Quantity:
    """One quantity: its kind and its canonical value. A clock time's value is its minutes
    of a 12-hour clock, with ``half`` 0 (am), 1 (pm) or None (not said)."""

    kind: str
    value: float | int | tuple[int, int]
    half: int | None = None


# -- words as data ---------------------------------------------------------------------------
NUMBER_WORDS: dict[str, int] = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "a dozen": 12, "a couple of": 2,
    "a hundred": 100, "a thousand": 1000,
}  # "one" is mostly no count ("one of", "at one point"): only before a unit (_ONE_UNIT)
# A multiplier after a number word: "two hundred", "five thousand".
SCALE_WORDS: dict[str, int] = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
WEEKDAYS: dict[str, int] = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
    "sunday": 6, "Mon": 0, "Tue": 1, "Tues": 1, "Wed": 2, "Thu": 3, "Thur": 3, "Thurs": 3,
    "Fri": 4, "Sat": 5, "Sun": 6,  # abbreviations capitalised only ("sat", "sun" are words)
    "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6, "日": 6, "天": 6,
}
# Months: capitalised, or lower-case where the word is nothing else ("may", "march" are).
MONTHS: dict[str, int] = {
    "Jan": 1, "January": 1, "Feb": 2, "February": 2, "Mar": 3, "March": 3, "Apr": 4,
    "April": 4, "May": 5, "Jun": 6, "June": 6, "Jul": 7, "July": 7, "Aug": 8, "August": 8,
    "Sep": 9, "Sept": 9, "September": 9, "Oct": 10, "October": 10, "Nov": 11, "November": 11,
    "Dec": 12, "December": 12, "january": 1, "february": 2, "april": 4, "june": 6,
    "july": 7, "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
}
# Seconds of a unit written apart from its number, in English and in Chinese (simplified:
# the text is folded to it first). A "business day" is a day: the count is what changes.
UNITS: dict[str, int] = {
    "sec": 1, "secs": 1, "second": 1, "seconds": 1, "秒": 1, "秒钟": 1,
    "min": 60, "mins": 60, "minute": 60, "minutes": 60, "分钟": 60,
    "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600, "小时": 3600,
    "个小时": 3600, "个钟头": 3600, "钟头": 3600,
    "day": 86400, "days": 86400, "business day": 86400, "business days": 86400,
    "working day": 86400, "working days": 86400, "天": 86400, "工作日": 86400,
    "个工作日": 86400,
    "wk": 604800, "wks": 604800, "week": 604800, "weeks": 604800, "周": 604800, "个周": 604800,
    "星期": 604800, "个星期": 604800, "礼拜": 604800, "个礼拜": 604800,
    "month": 2_592_000, "months": 2_592_000, "个月": 2_592_000,
    "year": 31_536_000, "years": 31_536_000, "yr": 31_536_000, "yrs": 31_536_000,
    "年": 31_536_000, "个年头": 31_536_000,
}
# Units of one letter, lower-case and joined to the number only ("30s", "5m", "2h", "3d").
COMPACT_UNITS: dict[str, int] = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Currencies, before or after the amount; the value compared is the amount.
CURRENCIES: tuple[str, ...] = (
    "$", "€", "£", "¥", "usd", "eur", "gbp", "cad", "aud", "rmb", "cny", "nzd", "sgd", "hkd",
    "dollars", "dollar", "bucks", "euros", "euro", "pounds", "元", "块钱", "块", "欧元", "欧",
    "美元", "美金", "刀", "英镑", "加币", "澳币", "人民币", "日元", "港币", "新币", "万元",
)
# What a Chinese clock time opens with; the half of the day it says (None: either).
DAYPARTS_ZH: dict[str, int | None] = {
    "上午": 0, "早上": 0, "早晨": 0, "凌晨": 0, "中午": 1, "下午": 1, "傍晚": 1, "晚上": 1,
    "夜里": 1, "半夜": 0, "早": 0, "晚": 1,
}
# After these a Chinese numeral counts something (else it is part of a word: 三明治, 四川).
MEASURE_WORDS_ZH = ("个位名台次天周小时分钟秒年月号点人件块元岁层楼张条本页份把辆只杯瓶斤公里米倍趟"
                    "栋间套门节课遍届期项家所架双对")
_PLACES_ZH = "楼线馆门口仓柜台桌车间室房床鞋码号会病诊窗机"  # "3号楼", "42号鞋": no day of the month


def _alt(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_NUM = r"\d+(?:\.\d+)?"
# Boundaries of a number: ASCII only (a CJK character is a word character to ``re``, and
# "时效5个工作日" has its number right after one).
_NB = r"(?<![A-Za-z0-9_.,])"
_NA = r"(?![A-Za-z0-9_])"
_AMPM = r"(?P<ampm>[ap])\.?m\.?"


def _clock(m: re.Match[str]) -> Quantity:
    hour = int(m.group("h"))
    groups = m.groupdict()
    minute = groups.get("min")
    if hour > 24 or (minute and int(minute) > 59):
        raise ValueError("no time of day")
    half: int | None = None
    if groups.get("ampm"):
        half = 0 if groups["ampm"].lower() == "a" else 1
    elif groups.get("part"):
        half = DAYPARTS_ZH[groups["part"]]
    elif hour > 12:
        half = 1
    extra = int(minute) if minute else 30 if groups.get("half") else \
        {"一刻": 15, "三刻": 45}.get(groups.get("quarter") or "", 0)
    return Quantity("clock", hour % 12 * 60 + extra, half)


def _zh_clock(m: re.Match[str]) -> Quantity:
    """A Chinese clock time: with a part of the day, or with 钟, 整, 半, 一刻 or minutes after
    it; "一点" alone is "a little" (有一点累), "三点" alone may be three points."""
    groups = m.groupdict()
    said = groups.get("part") or groups.get("half") or groups.get("min") or groups.get("tail")
    if not said or (groups.get("part") in ("早", "晚") and int(m.group("h")) == 1):
        raise ValueError("not a time of day")
    return _clock(m)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _day(value: int) -> int:
    if not 1 <= value <= 31:
        raise ValueError("no day of a month")
    return value


def _date(month: int, day: int) -> tuple[int, int]:
    if not 1 <= month <= 12:
        raise ValueError("no month")
    return month, _day(day)


# A lower-case word that names the number after it as an identifier, not a count.
IDENTIFIER_WORDS = frozenset({"port", "version", "ver", "v", "error", "code", "no", "number",
                              "id", "ext", "extension", "room", "order", "ticket", "build",
                              "flight", "line", "bus", "route", "gate", "platform", "case"})


def _count(m: re.Match[str]) -> float:
    text = m.group()
    if sum(c.isdigit() for c in text) >= 7:  # a phone, an account, a serial number
        raise ValueError("an identifier")
    before = m.string[max(0, m.start() - 24):m.start()].split()
    # "Order 5500", "Python 3.12", "port 8080": the word before names it.
    if before and m.string[m.start() - 1:m.start()] == " " and (
            (before[-1][:1].isupper() and before[-1].isascii() and before[-1].isalpha())
            or before[-1].lower().rstrip(".:#") in IDENTIFIER_WORDS):
        raise ValueError("an identifier")
    return _number(text)


_THOUSANDS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_MONTH = _alt(MONTHS)
Row = tuple[str, "re.Pattern[str]", Callable[[re.Match[str]], object]]

# One row per kind of quantity, read in this order over the text (a span read is taken).
PATTERNS: tuple[Row, ...] = (
    ("date", re.compile(r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)"),
     lambda m: _date(int(m.group("m")), int(m.group("d")))),
    ("date", re.compile(rf"\b(?P<mon>{_MONTH})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?![\d:])"),
     lambda m: _date(MONTHS[m.group("mon")], int(m.group("d")))),
    ("date", re.compile(rf"(?<![\d.])(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_MONTH})\b"),
     lambda m: _date(MONTHS[m.group("mon")], int(m.group("d")))),
    ("date", re.compile(r"(?<![\d.])(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号]"),
     lambda m: _date(int(m.group("m")), int(m.group("d")))),
    ("monthday", re.compile(rf"(?<![\d.])(?P<d>\d{{1,2}})\s*[号日](?![\d{_PLACES_ZH}])"
                            r"|\b(?:on|by|before|after|until|till|the)\s+(?:the\s+)?"
                            r"(?P<e>\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?!of\b)[a-z])",
                            re.IGNORECASE),
     lambda m: _day(int(m.group("d") or m.group("e")))),
    ("weekday", re.compile(rf"\b(?P<w>{_alt(k for k in WEEKDAYS if k.endswith('day'))})s?\b",
                           re.IGNORECASE), lambda m: WEEKDAYS[m.group("w").lower()]),
    ("weekday", re.compile(r"\b(?P<w>Tues|Thurs|Thur|Mon|Tue|Wed|Thu|Fri|Sat|Sun)\b\.?"),
     lambda m: WEEKDAYS[m.group("w")]),
    # 周三 is 周3 once the numerals are read (_chinese_numbers); "每周3次" is a frequency.
    ("weekday", re.compile(r"(?:周|星期|礼拜)(?P<w>[1-7日天])(?![\d次回个])"),
     lambda m: WEEKDAYS[m.group("w")]),
    ("clock", re.compile(rf"(?<![\d.:])(?P<h>\d{{1,2}})[:：](?P<min>\d{{2}})(?!\d)\s*(?:{_AMPM})?"
                         r"(?![a-z])", re.IGNORECASE), _clock),
    ("clock", re.compile(rf"(?<![\d.:])(?P<h>\d{{1,2}})\s*{_AMPM}(?![a-z])", re.IGNORECASE),
     _clock),
    ("clock", re.compile(r"\bhalf\s+past\s+(?P<h>\d{1,2})\b", re.IGNORECASE),
     lambda m: Quantity("clock", int(m.group("h")) % 12 * 60 + 30)),
    ("clock", re.compile(rf"(?:(?P<part>{_alt(DAYPARTS_ZH)})\s*)?(?<![\d.])(?P<h>\d{{1,2}})\s*"
                         r"[点时](?:\s*(?P<half>半)|\s*(?P<quarter>一刻|三刻)"
                         r"|\s*(?P<min>\d{1,2})\s*分?|(?P<tail>钟|整))?"), _zh_clock),
    ("clock", re.compile(r"\b(?:noon|midday)\b", re.IGNORECASE),
     lambda m: Quantity("clock", 0, 1)),
    ("percent", re.compile(rf"{_NB}(?P<n>{_NUM})\s*(?:%|percent\b|per cent\b)", re.IGNORECASE),
     lambda m: _number(m.group("n"))),
    ("money", re.compile(rf"(?:{_alt(c for c in CURRENCIES if not c.isalpha() or c.isascii())})"
                         rf"\s?(?P<n>{_THOUSANDS})\s*(?P<k>[kK]\b)?", re.IGNORECASE),
     lambda m: _number(m.group("n")) * (1000 if m.group("k") else 1)),
    ("money", re.compile(rf"{_NB}(?P<n>{_THOUSANDS})\s?(?P<k>[kK万])?\s?"
                         rf"(?:{_alt(CURRENCIES)})(?![a-z])", re.IGNORECASE),
     lambda m: _number(m.group("n")) * ({"k": 1000, "K": 1000, "万": 10_000}.get(
         m.group("k") or "", 1))),
    ("year", re.compile(r"\b(?:in|since|from|by|until|till|of|early|late|mid|back|during|"
                        rf"{_MONTH})\s+(?P<y>(?:19|20)\d\d)(?![\d,.])|(?<!\d)(?P<z>(?:19|20)\d\d)"
                        r"\s*年(?!\d)"), lambda m: int(m.group("y") or m.group("z"))),
    ("duration", re.compile(rf"{_NB}(?P<n>{_NUM})[\s-]?(?:more\s+|个多|多)?(?P<u>{_alt(UNITS)})"
                            r"(?![a-z])", re.IGNORECASE),
     lambda m: _number(m.group("n")) * UNITS[m.group("u").lower()]),
    ("duration", re.compile(rf"{_NB}(?P<n>\d+)(?P<u>[smhd]){_NA}"),
     lambda m: int(m.group("n")) * COMPACT_UNITS[m.group("u")]),
    # Not a code's digits ("Order 5500", "v2.4", "port 8080": _count) nor a list ("1,2,3").
    ("count", re.compile(rf"(?<![A-Za-z0-9_.,#/-])(?:{_THOUSANDS})(?![A-Za-z0-9_-]|[.,]\d)"),
     _count),
)
_DIGIT_WORDS = _alt(k for k, v in NUMBER_WORDS.items() if 0 < v < 10 and " " not in k)
_WORD_NUMBER = re.compile(
    rf"\b(?P<n>{_alt(NUMBER_WORDS)})(?:[\s-]+(?P<unit>{_DIGIT_WORDS}))?"
    rf"(?:\s+(?P<scale>{_alt(SCALE_WORDS)}))?\b(?=\s+[a-z%]|\s*$|\s*[.,;:!?)])", re.IGNORECASE)
# "a week", "an hour", "one day": one of a unit; not "once a day", "twice a week", "$50 a month".
_ONE_UNIT = re.compile(
    rf"(?<!once )(?<!twice )(?<!times )(?<!per )(?<![0-9] )\b(?:an?|one)\s+"
    rf"(?=(?:{_alt(u for u in UNITS if u.isascii() and len(u) > 2)})\b)", re.IGNORECASE)
_HAS_CJK = re.compile(r"[\u3400-\u9fff]")
_ZH_DIGIT = "零〇一二两三四五六七八九十百千万亿"
_UNIT_AFTER = "".join(sorted({c for w in (*UNITS, *CURRENCIES) if not w.isascii() for c in w[:1]}))
# A run of Chinese numerals is read where a measure, a unit, a currency, a time (点), a date
# (月, 号) or a percent follows, not after 第 (an ordinal) and not as a range (三四天).
_DECIMAL_UNITS = "".join(c for c in MEASURE_WORDS_ZH + _UNIT_AFTER if c not in "分秒钟点刻半")
_ZH_NUMBER = re.compile(
    rf"百分之[{_ZH_DIGIT}]+(?:点[{_ZH_DIGIT}]+)?"
    # 有一点, 快一点: "a little", not one o'clock
    rf"|(?<![第{_ZH_DIGIT}])(?!一点(?![半钟整刻零一二三四五六七八九十]))(?!十分(?!钟))[{_ZH_DIGIT}]+"
    rf"(?:点[{_ZH_DIGIT}]+(?=[{_DECIMAL_UNITS}]))?"
    rf"(?=\s?(?:[{MEASURE_WORDS_ZH}{_UNIT_AFTER}月号日%]|[多来余]?[{MEASURE_WORDS_ZH}]))"
    rf"|(?<=[{_ZH_DIGIT}\d]点)[{_ZH_DIGIT}]+")  # the minutes of a time: 十一点四十
_RANGE = re.compile(f"^[{_ZH_DIGIT[2:12]}]{{2}}$")  # 三四, 七八, 一两: a rough count, no number


def _english_numbers(text: str) -> str:
    """Number words before a word as digits: "three replicas" -> "3 replicas"."""
    def digits(m: re.Match[str]) -> str:
        n = NUMBER_WORDS[m.group("n").lower()]
        if m.group("unit"):
            n += NUMBER_WORDS[m.group("unit").lower()]
        if m.group("scale"):
            n *= SCALE_WORDS[m.group("scale").lower()]
        return str(n)

    return _ONE_UNIT.sub("1 ", _WORD_NUMBER.sub(digits, text))


def _chinese_numbers(text: str) -> str:
    """Chinese numerals that count or time something as digits (see :data:`_ZH_NUMBER`);
    a weekday's 周三 as 周3."""
    import cn2an  # a few ms to import: only for text with Chinese numerals

    text = re.sub(r"(周|星期|礼拜)([一二三四五六])(?![一二三四五六七八九十次回个])",
                  lambda m: m.group(1) + str("一二三四五六".find(m.group(2)) + 1), text)

    def read(m: re.Match[str]) -> str:
        numeral = m.group()
        if _RANGE.match(numeral):
            return numeral
        if numeral == "两":  # cn2an leaves 两 alone ("两点", "两个")
            return "2"
        try:
            out: str = cn2an.transform(numeral.replace("两", "二"), "cn2an")
        except (ValueError, KeyError, IndexError):
            return numeral
        return out

    return _ZH_NUMBER.sub(read, text)


@lru_cache(maxsize=16_384)
def quantities(text: str) -> frozenset[Quantity]:
    """The quantities ``text`` states, in canonical values (see the module's docstring)."""
    t = unicodedata.normalize("NFKC", text[:READ_CHARS])
    if _HAS_CJK.search(t):
        t = simplified(t)
        if any(c in _ZH_DIGIT for c in t):
            t = _chinese_numbers(t)
    t = _english_numbers(t)
    taken = bytearray(len(t) + 1)
    found: set[Quantity] = set()
    for kind, pattern, value in PATTERNS:
        for m in pattern.finditer(t):
            if any(taken[m.start():m.end()]):
                continue
            try:
                v = value(m)
            except (KeyError, ValueError, AttributeError):
                continue
            taken[m.start():m.end()] = b"\x01" * (m.end() - m.start())
            found.add(v if isinstance(v, Quantity) else Quantity(kind, v))  # type: ignore[arg-type]
    return frozenset(found)


def _same(a: Quantity, b: Quantity) -> bool:
    """One value: equal, or one clock time whose half of the day one of them does not say."""
    return a.kind == b.kind and a.value == b.value and (
        a.half == b.half or a.half is None or b.half is None)


@lru_cache(maxsize=16_384)  # the judge reads each of the three answers as a feature
def compare(new: frozenset[Quantity], old: frozenset[Quantity]) -> tuple[bool, bool, bool]:
    """(a kind in both, a value in both, a kind in both with no value in both): the last is a
    new value of the same kind ("5 business days" after "2 个工作日")."""
    kinds = {q.kind for q in new} & {q.kind for q in old}
    same = any(_same(a, b) for a in new for b in old)
    changed = any(not any(_same(a, b) for a in new if a.kind == k for b in old if b.kind == k)
                  for k in kinds)
    return bool(kinds), same, changed
