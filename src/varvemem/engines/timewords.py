"""Time words in a query ("last week", "3 March", "昨天", "上周五") as a time window.

:func:`parse` finds the expressions relative to ``now`` and returns the window they name and
the query without them, so retrieval can boost (or filter) memories created in the window
instead of matching "week" or "昨天" as keywords. Only past windows count: "next week" or
"下周" name no window (the query is left as it is).

The rules here read the expressions; ``dateparser`` reads what is left when it still looks
like a numeric date with a year ("3/2/2026", "2026/3/2"). Measured (dateparser 1.5, now =
Wed 2026-03-11), why not more of it: it gives one instant, never a span ("last week" ->
2026-03-04 10:00, "in January" -> 2026-01-11); it reads "上周五"/"上周一" as "上周" and
"3月2日" as 2025-12-09, finds nothing in "三天前", "两天前", "两周前", "这周", "上个星期",
reads "the day before yesterday" in running text as yesterday and "the third of March" as
today; it takes 1.3 s to import and 1.3 s more on its first call, then 2-30 ms per
``search_dates``. The rules take about 0.1 ms per new query (cached after), and a query with
none of their cue words ("day", "周", a digit, ...) costs one regex search.

Conventions: weeks are calendar weeks (``week_start``); "last week"/"上周" is the whole week
before this one, "this week"/"这周" this week up to today, "last Friday"/"上周五" that day of
last week, a bare "Friday"/"周五" the latest past Friday; "N weeks/months ago" a week or a month
centred on that day; "the past N days"/"最近三天" the N days up to today; "the other day"/"前几天"
the six days before today; a date without a year is its latest past occurrence ("3 March" on
11 March is this year's, "13 March" last year's); "since Monday"/"3月以来" runs up to today.
Days are those of ``now``'s time zone unless one is given.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

Days = tuple[date, date]  # first and last day, both included


@dataclass(frozen=True)
class TimeWindow:
    """The time a query names: ``start`` <= t < ``end``; ``phrases`` as written."""

    start: datetime
    end: datetime
    phrases: tuple[str, ...]

    def match(self, when: datetime, margin_hours: float) -> float:
        """1 inside the window, falling linearly to 0 at ``margin_hours`` outside it."""
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        if self.start <= when < self.end:
            return 1.0
        if margin_hours <= 0:
            return 0.0
        gap = (self.start - when if when < self.start else when - self.end).total_seconds()
        return max(0.0, 1.0 - gap / (margin_hours * 3600.0))


@dataclass(frozen=True)
class TimeQuery:
    """A query's time window and the query with its time expressions blanked out."""

    window: TimeWindow
    rest: str


# The index terms (stems, CJK bigrams and single characters) of words that ask what happened
# at a time without naming a subject: "what did I do / work on / get done", "remind me what
# happened", "我做了什么", "发生了什么", "帮我回忆一下". A query left with only these asks for
# the time itself.
ACTIVITY_TERMS = frozenset({
    "do", "did", "done", "work", "happen", "get", "got", "anyth", "someth", "everyth", "busi",
    "talk", "discuss", "say", "said", "tell", "told", "up", "go", "went", "on", "thing", "stuff",
    "one", "remind", "recal", "rememb", "show", "list", "chang", "updat", "new",
    "做", "干", "啥", "事", "事情", "些事", "哪些", "哪个", "发生", "忙", "聊", "说", "讨论", "弄",
    "搞", "情况", "了啥", "么事", "帮", "回忆", "记得", "告诉", "想起", "起来", "改", "变更", "修改",
})


# --- numbers ----------------------------------------------------------------------------------

_EN_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
           "a couple of": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3}
_EN_NUM_RE = r"(?:\d{1,3}|a couple of|couple of|a few|few|several|an?|one|two|three|four|five" \
             r"|six|seven|eight|nine|ten|eleven|twelve)"
_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5,
             "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_NUM_RE = r"(?:\d{1,3}|[一二两三四五六七八九十]{1,3}|几)"


def _en_num(s: str) -> int:
    return int(s) if s.isdigit() else _EN_NUM[s]


def _zh_num(s: str) -> int:
    """A number in digits or Chinese numerals up to 99 (十, 十二, 二十, 二十一); 几 (a few) is 3."""
    if s.isdigit():
        return int(s)
    if s == "几":
        return 3
    if "十" in s:
        tens, _, ones = s.partition("十")
        return (_ZH_DIGIT.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGIT.get(ones, 0))
    return _ZH_DIGIT[s] if len(s) == 1 else int("".join(str(_ZH_DIGIT[c]) for c in s))


_MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"])}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH_RE = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAYS = {d: i for i, d in enumerate(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])}
_WEEKDAY_FULL_RE = r"(?:" + "|".join(_WEEKDAYS) + r")"
_WEEKDAYS.update({d[:3]: i for d, i in list(_WEEKDAYS.items())})
_WEEKDAYS.update({"tues": 1, "weds": 2, "thur": 3, "thurs": 3})
_WEEKDAY_RE = r"(?:" + "|".join(sorted(_WEEKDAYS, key=len, reverse=True)) + r")\.?"
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
               "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}
_PART_OF_DAY = r"(?:\s+(?:morning|afternoon|evening|night))?"
_ANY_WEEKDAY = re.compile(r"\b(?P<en>" + _WEEKDAY_RE.replace(r")\.?", r")") + r")s?\b"
                          r"|(?:周|星期|礼拜|禮拜)(?P<zh>[一二三四五六日天1-7])", re.IGNORECASE)


def weekdays(text: str) -> frozenset[int]:
    """The weekdays ``text`` names (0 = Monday), in English or Chinese ("Thursdays", "每周四",
    "礼拜三"), whatever they point to: what a schedule that repeats is about."""
    return frozenset(_WEEKDAYS[m["en"].lower()] if m["en"] else _ZH_WEEKDAY[m["zh"]]
                     for m in _ANY_WEEKDAY.finditer(text)
                     if not (m["en"] and m["en"] in _VERB_LIKE))


_VERB_LIKE = frozenset({"sat", "sun", "wed"})  # lower case, these are words of their own


# --- calendar arithmetic ------------------------------------------------------------------------

@dataclass(frozen=True)
class _Ctx:
    today: date
    week_start: int  # 0 = Monday

    def week_of(self, d: date) -> Days:
        first = d - timedelta(days=(d.weekday() - self.week_start) % 7)
        return first, first + timedelta(days=6)

    def weekday_in_week(self, weeks_back: int, weekday: int) -> date:
        first, _ = self.week_of(self.today - timedelta(days=7 * weeks_back))
        return first + timedelta(days=(weekday - self.week_start) % 7)


def _month(year: int, month: int) -> Days:
    nxt = date(year + month // 12, month % 12 + 1, 1)
    return date(year, month, 1), nxt - timedelta(days=1)


def _months_back(d: date, n: int) -> tuple[int, int]:
    k = d.year * 12 + d.month - 1 - n
    return k // 12, k % 12 + 1


def _day(d: date) -> Days:
    return d, d


def _around(d: date, half: int) -> Days:
    return d - timedelta(days=half), d + timedelta(days=half)


def _past_date(c: _Ctx, month: int, day: int, year: int | None) -> Days | None:
    """A calendar date; without a year its latest occurrence on or before today."""
    try:
        if year is not None:
            return _day(date(year, month, day))
        d = date(c.today.year, month, day)
        if d > c.today:
            d = date(c.today.year - 1, month, day)
        return _day(d)
    except ValueError:  # 30 February, or 29 February of a common year
        return None


def _past_month(c: _Ctx, month: int, year: int | None, strictly_before: bool = False) -> Days:
    """A month; without a year its latest start on or before today (before this month when
    ``strictly_before``: "last March" said in March is a year ago)."""
    if year is None:
        year = c.today.year
        if month > c.today.month or (strictly_before and month == c.today.month):
            year -= 1
    return _month(year, month)


def _ago(c: _Ctx, n: int, unit: str) -> Days:
    """"N units ago": the day; a week or a month centred on the day; the calendar year."""
    if unit == "day":
        return _day(c.today - timedelta(days=n))
    if unit == "week":
        return _around(c.today - timedelta(days=7 * n), 3)
    if unit == "month":
        y, m = _months_back(c.today, n)
        last = _month(y, m)[1]
        return _around(date(y, m, min(c.today.day, last.day)), 15)
    return _month(c.today.year - n, 1)[0], date(c.today.year - n, 12, 31)


def _span(c: _Ctx, n: int, unit: str) -> Days:
    """"the past N units": a rolling span ending today."""
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit] * n
    return c.today - timedelta(days=days - 1 if unit == "day" else days), c.today


def _period(c: _Ctx, unit: str, back: int) -> Days:
    """This (``back`` 0, up to today) or an earlier calendar week, month or year."""
    if unit == "week":
        first, last = c.week_of(c.today - timedelta(days=7 * back))
    elif unit == "month":
        first, last = _month(*_months_back(c.today, back))
    else:
        first, last = date(c.today.year - back, 1, 1), date(c.today.year - back, 12, 31)
    return first, min(last, c.today)


def _unit(word: str) -> str:
    w = word.lower()
    if w.startswith(("day", "天", "日")):
        return "day"
    if w.startswith(("week", "周", "星期", "礼拜", "个星期", "个礼拜")):
        return "week"
    if w.startswith(("month", "月", "个月")):
        return "month"
    return "year"


# --- the rules ----------------------------------------------------------------------------------

# A rule's handler returns the days it names, or None for a future (or impossible) time: the
# expression is then consumed, so no shorter rule reads part of it, and names no window.
Handler = Callable[[re.Match[str], _Ctx], "Days | None"]
_FUTURE: Handler = lambda m, c: None  # noqa: E731 - a table entry


def _en(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){pattern}(?![\w-])", re.IGNORECASE)


def _zh(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _year(s: str | None, c: _Ctx) -> int | None:
    if not s:
        return None
    return {"去年": c.today.year - 1, "今年": c.today.year, "前年": c.today.year - 2}.get(
        s, int(s.rstrip("年")) if s.rstrip("年").isdigit() else None)


_BACK = {"last": 1, "previous": 1, "past": 1, "this": 0, "current": 0}


def _en_weekday(m: re.Match[str], c: _Ctx) -> Days:
    wd = _WEEKDAYS[m["wd"].lower().rstrip(".")]
    which = (m["which"] or "").lower()
    if which in ("last", "previous", "past"):
        return _day(c.weekday_in_week(1, wd))
    if which == "this":
        d = c.weekday_in_week(0, wd)
        return _day(d if d <= c.today else d - timedelta(days=7))
    back = (c.today.weekday() - wd) % 7 or 7  # "on Monday" said on a Monday: a week ago
    return _day(c.today - timedelta(days=back))


def _zh_weekday(m: re.Match[str], c: _Ctx) -> Days | None:
    wd = _ZH_WEEKDAY[m["wd"]]
    which = m["which"] or ""
    if which.startswith("下"):
        return None
    if which.startswith("上"):
        return _day(c.weekday_in_week(which.count("上"), wd))
    if which:  # 这周五, 本周五
        d = c.weekday_in_week(0, wd)
        return _day(d) if d <= c.today else None
    back = (c.today.weekday() - wd) % 7 or 7
    return _day(c.today - timedelta(days=back))


def _en_date(m: re.Match[str], c: _Ctx) -> Days | None:
    year = int(m["y"]) if m["y"] else None
    d = m["d"].lower()
    day = _ORDINALS[d] if d in _ORDINALS else int(d.rstrip("stndrh"))
    return _past_date(c, _MONTHS[m["mon"].lower().rstrip(".")], day, year)


def _zh_date(m: re.Match[str], c: _Ctx) -> Days | None:
    return _past_date(c, _zh_num(m["mon"]), _zh_num(m["d"]), _year(m["y"], c))


def _en_month(m: re.Match[str], c: _Ctx) -> Days:
    which = (m["which"] or "").lower()
    year = int(m["y"]) if m["y"] else None
    return _past_month(c, _MONTHS[m["mon"].lower().rstrip(".")], year,
                       strictly_before=which in ("last", "previous", "past"))


def _zh_month(m: re.Match[str], c: _Ctx) -> Days | None:
    month = _zh_num(m["mon"])
    if not 1 <= month <= 12:
        return None
    return _past_month(c, month, _year(m["y"], c))


def _iso(m: re.Match[str], c: _Ctx) -> Days | None:
    try:
        return _day(date(int(m["y"]), int(m["mon"]), int(m["d"])))
    except ValueError:
        return None


_ORDINALS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
    .split())}
_ORDINALS.update({f"twenty-{w}": 20 + i for w, i in list(_ORDINALS.items()) if i < 10})
_ORDINALS.update({"thirtieth": 30, "thirty-first": 31})
_DAY_NUM = (r"(?P<d>[0-3]?\d(?:st|nd|rd|th)?|"
            + "|".join(sorted(_ORDINALS, key=len, reverse=True)) + ")")
_YEAR_TAIL = r"(?:,?\s+(?P<y>(?:19|20)\d\d))?"
_ZH_Y = r"(?P<y>去年|今年|前年|(?:19|20)\d\d年)?"
_ZH_WEEK = r"(?:周|星期|礼拜)"
_ZH_PART = r"(?:早上|早晨|上午|中午|下午|傍晚|晚上|夜里|凌晨)?"

# Longer and more specific expressions first: each rule reads only the text the earlier
# ones left.
@lru_cache(maxsize=1)
def _rules() -> list[tuple[re.Pattern[str], Handler]]:
    """The rules, compiled on first use (some 40 patterns: kept off ``import varvemem``)."""
    return [
        # future: consumed, no window
        (_en(r"(?:next|coming|upcoming)\s+(?:week(?:end)?|month|year|" + _WEEKDAY_RE + r")"),
         _FUTURE),
        (_en(r"(?:tomorrow|the\s+day\s+after\s+tomorrow|in\s+"
             + _EN_NUM_RE + r"\s+(?:days?|weeks?|months?|years?))"), _FUTURE),
        (_zh(r"(?:下下?(?:个)?(?:周|星期|礼拜|月)[一二三四五六日天1-7]?|明天|后天|明年|明早|明晚"
             r"|下周末|" + _ZH_NUM_RE + r"(?:天|个?星期|周|个?月|年)(?:以后|之后|后))"), _FUTURE),
        # English
        (_en(r"(?:the\s+)?day\s+before\s+yesterday"), lambda m, c: _day(c.today - timedelta(2))),
        (_en(r"(?:yesterday" + _PART_OF_DAY + r"|last\s+night)"),
         lambda m, c: _day(c.today - timedelta(1))),
        (_en(r"(?:today|tonight|this\s+(?:morning|afternoon|evening)|earlier\s+today)"),
         lambda m, c: _day(c.today)),
        (_en(r"(?:the\s+)?(?:week|month|year)\s+before\s+last"),
         lambda m, c: _period(c, _unit(m[0].split()[-3]), 2)),
        (_en(r"(?P<n>" + _EN_NUM_RE + r")\s+(?P<u>days?|weeks?|months?|years?)\s+(?:ago|back|earlier)"),
         lambda m, c: _ago(c, _en_num(m["n"].lower()), _unit(m["u"]))),
        (_en(r"(?:in\s+|over\s+|during\s+|within\s+)?(?:the\s+)?(?:last|past|previous)\s+"
             r"(?P<n>" + _EN_NUM_RE + r")\s+(?P<u>days?|weeks?|months?|years?)"),
         lambda m, c: _span(c, _en_num(m["n"].lower()), _unit(m["u"]))),
        (_en(r"(?:in\s+|over\s+|during\s+)?the\s+(?:past|last)\s+(?P<u>week|month|year)"),
         lambda m, c: _span(c, 1, _unit(m["u"]))),
        (_en(r"(?:(?:over|on)\s+)?(?:the\s+)?(?:last|this|past)\s+weekend|this\s+past\s+weekend"
             r"|over\s+the\s+weekend"),
         lambda m, c: _weekend(c, "this" if "this" in m[0].lower() and "past" not in m[0].lower()
                               else "last" if c.today.weekday() < 5 else "this")),
        (_en(r"the\s+other\s+day"), lambda m, c: (c.today - timedelta(6), c.today - timedelta(1))),
        (_en(r"(?:earlier\s+)?(?P<which>last|previous|this|current)\s+(?P<u>week|month|year)"),
         lambda m, c: _period(c, m["u"].lower(), _BACK[m["which"].lower()])),
        (_en(r"(?P<y>(?:19|20)\d\d)-(?P<mon>[01]?\d)-(?P<d>[0-3]?\d)"), _iso),
        (_en(r"(?:on\s+)?(?:the\s+)?" + _DAY_NUM + r"(?:\s+of)?\s+(?P<mon>" + _MONTH_RE + r")"
             + _YEAR_TAIL), _en_date),
        (_en(r"(?:on\s+)?(?P<mon>" + _MONTH_RE + r")\s+(?:the\s+)?" + _DAY_NUM + _YEAR_TAIL),
         _en_date),
        # "sat", "sun", "wed" are words too: abbreviations need "on", "last" or "this" before them
        (_en(r"(?:on\s+)?(?:(?P<which>last|previous|past|this)\s+)?(?P<wd>" + _WEEKDAY_FULL_RE
             + r")" + _PART_OF_DAY), _en_weekday),
        (_en(r"(?:on\s+|(?P<which>last|previous|past|this)\s+)(?P<wd>" + _WEEKDAY_RE + r")"),
         _en_weekday),
        # a month needs a word before it or a year after it ("may", "march" are verbs too)
        (_en(r"(?:(?:in|during|since|early|late|mid|back\s+in|(?P<which>last|previous|this))"
             r"[\s-]+(?P<mon>" + _MONTH_RE + r")" + _YEAR_TAIL + r"|(?P<mon2>" + _MONTH_RE
             + r")\s+(?P<y2>(?:19|20)\d\d))"), lambda m, c: _en_month_any(m, c)),
        # Chinese
        (_zh(r"大前天" + _ZH_PART), lambda m, c: _day(c.today - timedelta(3))),
        (_zh(r"(?:前天|前日)" + _ZH_PART), lambda m, c: _day(c.today - timedelta(2))),
        (_zh(r"(?:昨天|昨日|昨儿个?)" + _ZH_PART + r"|昨晚|昨夜|昨早"),
         lambda m, c: _day(c.today - timedelta(1))),
        (_zh(r"(?:今天|今日|今儿个?)" + _ZH_PART + r"|今早|今晚|今晨|今夜"), lambda m, c: _day(c.today)),
        (_zh(r"(?P<n>" + _ZH_NUM_RE + r")(?P<u>天|日|个星期|个礼拜|星期|礼拜|周|个月|年)(?:以前|之前|前)"),
         lambda m, c: _ago(c, _zh_num(m["n"]), _unit(m["u"].lstrip("个")))),
        # vague: 前几天/这几天 "a few days ago"/"these days", 前两天 "a couple of days ago"
        (_zh(r"前(?:几|两|些)天"), lambda m, c: (c.today - timedelta(6 if "两" not in m[0] else 3),
                                              c.today - timedelta(1))),
        (_zh(r"(?:这|最近|近)(?:几|两)天"), lambda m, c: (c.today - timedelta(3), c.today)),
        (_zh(r"(?:最近|过去|近|这)的?(?P<n>" + _ZH_NUM_RE + r")(?P<u>天|日|个星期|个礼拜|周|个月|年)"),
         lambda m, c: _span(c, _zh_num(m["n"]), _unit(m["u"].lstrip("个")))),
        # a bare 周末 is as often any weekend ("周末推荐一本小说"): it needs 上 or 这 before it
        (_zh(r"(?P<which>上个?|上一|这个?|本)" + _ZH_WEEK + r"末"),
         lambda m, c: _weekend(c, m["which"])),
        # not the 周三 of 一周三次 or 每周三
        (_zh(r"(?<![一二两三四五六七八九十几\d每])(?P<which>上上个?|上个?|上一|这个?|本)?"
             + _ZH_WEEK + r"(?P<wd>[一二三四五六日天1-7])"),
         _zh_weekday),
        (_zh(r"(?P<which>上上个?|上个?|上一)" + r"(?:周|星期|礼拜)"),
         lambda m, c: _period(c, "week", m["which"].count("上"))),
        (_zh(r"(?:这个?|本)(?:周|星期|礼拜)"), lambda m, c: _period(c, "week", 0)),
        (_zh(r"(?P<which>上上个?|上个?|上一个?)月"),
         lambda m, c: _period(c, "month", m["which"].count("上"))),
        (_zh(r"(?:这个|本)月"), lambda m, c: _period(c, "month", 0)),
        (_zh(_ZH_Y + r"(?P<mon>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])月"
             r"(?P<d>[0-3]?\d|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])(?:日|号)"),
         _zh_date),
        (_zh(_ZH_Y + r"(?P<mon>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])"
             r"(?:月份|月(?![\d一二三四五六七八九十]))"),
         _zh_month),
        (_zh(r"去年|前年|今年"),
         lambda m, c: _period(c, "year", {"今年": 0, "去年": 1, "前年": 2}[m[0]])),
    ]


def _weekend(c: _Ctx, which: str) -> Days | None:
    """This week's Saturday and Sunday (None before they begin), or last week's."""
    sat = c.today - timedelta(days=c.today.weekday()) + timedelta(days=5)
    if which.startswith(("last", "past", "上")):
        sat -= timedelta(days=7)
    elif sat > c.today:
        return None
    return sat, min(sat + timedelta(days=1), c.today)


def _en_month_any(m: re.Match[str], c: _Ctx) -> Days:
    if m["mon2"]:
        return _past_month(c, _MONTHS[m["mon2"].lower().rstrip(".")], int(m["y2"]))
    return _en_month(m, c)


_SINCE_BEFORE = re.compile(r"(?:\bsince|自从?|从)\s*$", re.IGNORECASE)
_SINCE_AFTER = re.compile(r"\s*(?:以来|至今|到现在|到今天)")
# What is left still looks like a numeric date with its year ("3/2/2026", "2026/3/2",
# "2.3.2026"): dateparser reads those (month first in English). Without a year "5/5" is as
# often a ratio. dateparser misses ordinals in words ("the third of March" -> today).
_DATEPARSER_GATE = re.compile(r"\b(?:\d{1,2}[/.]\d{1,2}[/.](?:19|20)?\d\d|(?:19|20)\d\d[/.]\d{1,2}"
                              r"[/.]\d{1,2})\b")
# Cheap pre-check: no rule can match a query without one of these.
_PRECHECK = re.compile(
    r"\d|day|week|month|year|ago|night|morning|afternoon|evening|tonight|weekend|mon|tue|wed"
    r"|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
    r"|[天日周月年星礼前晚昨今]", re.IGNORECASE)


def _zone(tz: str | None) -> tzinfo | None:
    return ZoneInfo(tz) if tz else None


def parse(query: str, now: datetime, *, tz: str | None = None, week_start: int = 0,
          use_dateparser: bool = True) -> TimeQuery | None:
    """The past window ``query`` names relative to ``now`` (days in ``tz``, else ``now``'s
    zone), or None. Several expressions give the span from the first to the last."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    if not _PRECHECK.search(query):
        return None
    zone = _zone(tz) or now.tzinfo or timezone.utc
    today = now.astimezone(zone).date()
    found = _parse_days(query, today, week_start, use_dateparser)
    if found is None:
        return None
    (first, last), phrases, rest = found
    start = datetime.combine(first, time(), zone)
    end = datetime.combine(last + timedelta(days=1), time(), zone)
    return TimeQuery(TimeWindow(start, end, phrases), rest)


@lru_cache(maxsize=2048)
def _parse_days(query: str, today: date, week_start: int,
                use_dateparser: bool) -> tuple[Days, tuple[str, ...], str] | None:
    c = _Ctx(today, week_start)
    text = query
    spans: list[Days] = []
    phrases: list[str] = []
    for pattern, handler in _rules():
        for m in list(pattern.finditer(text)):
            days = handler(m, c)
            if days is not None and (_SINCE_BEFORE.search(text, 0, m.start())
                                     or _SINCE_AFTER.match(text, m.end())):
                days = (days[0], today)  # "since Monday", "3月以来": up to now
            if days is not None and days[0] <= today:
                spans.append((days[0], min(days[1], max(days[0], today))))
                phrases.append(m[0].strip())
        # Blank out what the rule read (same length, so later matches keep their offsets).
        text = pattern.sub(lambda m: " " * len(m[0]), text)
    if use_dateparser and not spans and _DATEPARSER_GATE.search(text):
        for phrase, d in _dateparser_dates(text, today):
            if d <= today:
                spans.append(_day(d))
                phrases.append(phrase)
                text = text.replace(phrase, " " * len(phrase))
    if not spans:  # nothing, or only future times
        return None
    first = min(s[0] for s in spans)
    last = max(s[1] for s in spans)
    return (first, last), tuple(phrases), " ".join(text.split())


def _dateparser_dates(text: str, today: date) -> list[tuple[str, date]]:
    """English dates dateparser finds in ``text``, preferring the past (imported on first use:
    it takes over a second)."""
    from dateparser.search import search_dates  # lazy: slow to import

    base = datetime.combine(today, time(12))
    settings: Any = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past",
                     "REQUIRE_PARTS": ["day", "month"], "RETURN_AS_TIMEZONE_AWARE": False}
    found = search_dates(text, languages=["en"], settings=settings) or []
    # Bare numbers, times and words such as "now" come back too: keep dates only.
    return [(p, d.date()) for p, d in found if _DATEPARSER_GATE.search(p)]
