"""Time words in queries: the parser's windows (engines/timewords.py) and their place in search."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from varvemem import ConfigError, Memory, Settings
from varvemem.engines import timewords
from varvemem.engines.timewords import parse
from varvemem.text import index_terms

NOW = datetime(2026, 3, 11, 10, 0, tzinfo=timezone.utc)  # a Wednesday
D = date(2026, 3, 11)


def days(query: str, now: datetime = NOW, **kw: object) -> tuple[date, date] | None:
    """The first and last day (both included) ``query`` names, or None."""
    got = parse(query, now, **kw)  # type: ignore[arg-type]
    if got is None:
        return None
    return got.window.start.date(), (got.window.end - timedelta(days=1)).date()


def ago(n: int) -> date:
    return D - timedelta(days=n)


@pytest.mark.parametrize("query,first,last", [
    ("what did I do yesterday?", ago(1), ago(1)),
    ("notes from today", D, D),
    ("what did I fix last week", date(2026, 3, 2), date(2026, 3, 8)),  # the calendar week
    ("this week", date(2026, 3, 9), D),  # up to today
    ("last month", date(2026, 2, 1), date(2026, 2, 28)),
    ("two days ago", ago(2), ago(2)),
    ("2 days ago", ago(2), ago(2)),
    ("the day before yesterday", ago(2), ago(2)),
    ("3 weeks ago", ago(24), ago(18)),  # a week centred on the day
    ("on 3 March", date(2026, 3, 3), date(2026, 3, 3)),  # this year's: before now
    ("March 3", date(2026, 3, 3), date(2026, 3, 3)),
    ("the third of March", date(2026, 3, 3), date(2026, 3, 3)),
    ("March 13", date(2025, 3, 13), date(2025, 3, 13)),  # not yet this year: last year's
    ("on Monday", ago(2), ago(2)),  # the latest past Monday
    ("last Friday", date(2026, 3, 6), date(2026, 3, 6)),
    ("last Monday", date(2026, 3, 2), date(2026, 3, 2)),  # Monday of last week
    ("in January", date(2026, 1, 1), date(2026, 1, 31)),
    ("in April", date(2025, 4, 1), date(2025, 4, 30)),
    ("the past 3 days", ago(2), D),
    ("last weekend", date(2026, 3, 7), date(2026, 3, 8)),
    ("since Monday", ago(2), D),
    ("2026-02-27", date(2026, 2, 27), date(2026, 2, 27)),
    ("昨天给客户演示了什么", ago(1), ago(1)),
    ("前天", ago(2), ago(2)),
    ("今天", D, D),
    ("上周我修了啥", date(2026, 3, 2), date(2026, 3, 8)),
    ("上个星期", date(2026, 3, 2), date(2026, 3, 8)),
    ("这周", date(2026, 3, 9), D),
    ("上个月", date(2026, 2, 1), date(2026, 2, 28)),
    ("三天前", ago(3), ago(3)),
    ("3天前", ago(3), ago(3)),
    ("二十天前", ago(20), ago(20)),
    ("两周前", ago(17), ago(11)),
    ("3月2日机房出了什么事", date(2026, 3, 2), date(2026, 3, 2)),
    ("3月2号", date(2026, 3, 2), date(2026, 3, 2)),
    ("三月二日", date(2026, 3, 2), date(2026, 3, 2)),
    ("周一", ago(2), ago(2)),
    ("上周五", date(2026, 3, 6), date(2026, 3, 6)),
    ("上周一", date(2026, 3, 2), date(2026, 3, 2)),
    ("一月份", date(2026, 1, 1), date(2026, 1, 31)),
    ("去年三月", date(2025, 3, 1), date(2025, 3, 31)),
    ("最近三天", ago(2), D),
    ("昨天上午我见了谁", ago(1), ago(1)),
    ("今天早上", D, D),
    ("前几天", ago(6), ago(1)),
    ("the other day", ago(6), ago(1)),
    ("over the weekend", date(2026, 3, 7), date(2026, 3, 8)),
    ("yesterday morning", ago(1), ago(1)),
    ("3/2/2026", date(2026, 3, 2), date(2026, 3, 2)),
])
def test_time_words_name_their_days(query: str, first: date, last: date) -> None:
    assert days(query) == (first, last)


@pytest.mark.parametrize("query", [
    "next week", "what is planned for next Monday", "tomorrow", "in 3 days", "下周", "下周一",
    "明天", "三天后", "周末推荐一本小说", "一周三次", "What may I do about the march?",
    "who sat on the bench", "which secret does the order service use?", "",
    "ERROR timeout_ms exhausted (5/5)", "2010年世界杯冠军是谁？",
])
def test_future_or_no_time_words_name_no_window(query: str) -> None:
    assert parse(query, NOW) is None


def test_the_time_words_leave_the_query() -> None:
    got = parse("What did I fix last week?", NOW)
    assert got is not None and "week" not in index_terms(got.rest)
    assert "fix" in index_terms(got.rest)
    got = parse("昨天给客户演示了什么？", NOW)
    assert got is not None and got.rest.startswith("给客户") and "昨天" not in got.rest
    got = parse("今天早上发生了什么", NOW)  # the part of the day goes with the day
    assert got is not None and "早上" not in got.rest


def test_a_numeric_date_goes_to_dateparser_offline() -> None:
    # The autouse _offline fixture refuses any connection: dateparser reads its own data.
    assert days("what happened on 3/2/2026") == (date(2026, 3, 2), date(2026, 3, 2))
    assert days("what happened on 3/2/2026", use_dateparser=False) is None


def test_days_follow_the_time_zone() -> None:
    late = datetime(2026, 3, 11, 20, 0, tzinfo=timezone.utc)  # 12 March 04:00 in Shanghai
    assert days("today", late) == (D, D)
    assert days("today", late, tz="Asia/Shanghai") == (D + timedelta(1), D + timedelta(1))


# -- properties of the window math ---------------------------------------------------------------
nows = st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 12, 31),
                    timezones=st.just(timezone.utc))


@settings(max_examples=200, deadline=None)
@given(now=nows, n=st.integers(1, 99))
def test_n_days_ago_is_exactly_that_day(now: datetime, n: int) -> None:
    day = now.date() - timedelta(days=n)
    zh = _zh_number(n)
    for q in (f"{n} days ago", f"{n}天前", f"{zh}天前"):
        got = parse(q, now)
        assert got is not None, q
        w = got.window
        assert (w.start, w.end) == (datetime.combine(day, time(), timezone.utc),
                                    datetime.combine(day + timedelta(1), time(), timezone.utc))
        assert w.match(w.start, 0) == 1.0 and w.match(w.end - timedelta(seconds=1), 0) == 1.0
        assert w.match(w.end, 0) == 0.0 and w.match(w.start - timedelta(seconds=1), 0) == 0.0


@settings(max_examples=200, deadline=None)
@given(now=nows)
def test_last_week_is_the_whole_week_before_this_one(now: datetime) -> None:
    for q in ("last week", "上周", "上个星期"):
        first, last = days(q, now) or (None, None)
        assert first is not None and last is not None
        assert first.weekday() == 0 and (last - first).days == 6
        this_monday = now.date() - timedelta(days=now.weekday())
        assert last == this_monday - timedelta(1)
    first, last = days("this week", now) or (None, None)
    assert first == now.date() - timedelta(days=now.weekday()) and last == now.date()


@settings(max_examples=200, deadline=None)
@given(now=nows, day=st.dates(min_value=date(2001, 1, 1), max_value=date(2099, 12, 28)))
def test_a_date_without_a_year_is_its_latest_past_occurrence(now: datetime, day: date) -> None:
    if (day.month, day.day) == (2, 29):
        return
    month = day.strftime("%B")
    for q in (f"on {day.day} {month}", f"{month} {day.day}", f"{day.month}月{day.day}日"):
        got = days(q, now)
        assert got is not None and got[0] == got[1], q
        d = got[0]
        assert (d.month, d.day) == (day.month, day.day)
        assert d <= now.date() < d.replace(year=d.year + 1)


@settings(max_examples=200, deadline=None)
@given(now=nows)
def test_last_month_is_the_previous_calendar_month(now: datetime) -> None:
    for q in ("last month", "上个月"):
        first, last = days(q, now) or (None, None)
        assert first is not None and last is not None
        assert first.day == 1 and (last + timedelta(1)).day == 1
        assert last + timedelta(1) == now.date().replace(day=1)


@settings(max_examples=200, deadline=None)
@given(gap=st.floats(0, 100), margin=st.floats(0.5, 48))
def test_the_match_falls_off_over_the_margin(gap: float, margin: float) -> None:
    w = parse("yesterday", NOW)
    assert w is not None
    before = w.window.start - timedelta(hours=gap)
    after = w.window.end + timedelta(hours=gap)
    for at, further in ((before, before - timedelta(hours=1)), (after, after + timedelta(hours=1))):
        m = w.window.match(at, margin)
        assert 0.0 <= m <= 1.0 and w.window.match(further, margin) <= m
        if gap > margin + 1e-3:
            assert m == 0.0
        elif gap < margin - 1e-3:
            assert m > 0.0
    assert w.window.match(w.window.start + timedelta(hours=12), margin) == 1.0


def _zh_number(n: int) -> str:
    digits = "零一二三四五六七八九"
    if n < 10:
        return digits[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else digits[tens]) + "十" + (digits[ones] if ones else "")


# -- in search ------------------------------------------------------------------------------------
@pytest.fixture
def week(make_memory, clock) -> Memory:
    """A store at Wednesday 2026-03-11: one memory from last week, distractors that say
    "week" or "上周" but were written on other days."""
    clock.now = NOW
    mem = make_memory()
    for text, n in [
        ("Fixed the flaky login test in the payment service", 6),
        ("Fixed the retry logic of the billing export", 0),
        ("Fixed the cache warm-up job", 14),
        ("Someone asked what we fixed last week; nobody remembered", 1),
        ("修好了支付服务里不稳定的登录测试", 6),
        ("修好了账单导出的重试逻辑", 0),
        ("有人问上周修了什么，没人记得", 1),
    ]:
        mem.add(text, type="dialogue", created_at=NOW - timedelta(days=n, hours=-1))
    return mem


@pytest.mark.parametrize("query", ["What did I fix last week?", "上周修了什么？"])
def test_a_time_query_ranks_the_memory_of_that_time_first(week: Memory, query: str) -> None:
    hits = week.search(query, top_k=5)
    # Last week's fix, told in either language (a question finds the other language too).
    assert hits and any(e in hits[0].memory.content
                        for e in ("flaky login test", "不稳定的登录测试"))
    assert hits[0].scores.time_match == 1.0
    assert all(h.scores.time_match == 0.0 for h in hits[1:]
               if not NOW - timedelta(days=9) < h.memory.created_at < NOW - timedelta(days=2))
    assert "time_match" in hits[0].to_json()["scores"]


def test_a_query_without_time_words_ranks_as_before(week: Memory) -> None:
    query = "which tests were flaky in the payment service"
    on = week.search(query, top_k=5)
    week.settings.retrieval.time_words.enabled = False
    off = week.search(query, top_k=5)
    assert [(h.memory.memory_id, h.score, h.scores) for h in on] == \
        [(h.memory.memory_id, h.score, h.scores) for h in off]
    assert all(h.scores.time_match is None for h in on)


def test_future_time_words_are_no_window(week: Memory) -> None:
    assert all(h.scores.time_match is None for h in week.search("what will I fix next week?"))


def test_filter_mode_keeps_only_that_time(week: Memory) -> None:
    week.settings.retrieval.time_words.mode = "filter"
    hits = week.search("What did I fix last week?", top_k=10)
    assert hits and {h.memory.created_at.date() for h in hits} == {date(2026, 3, 5)}


def test_the_callers_time_filter_wins(week: Memory) -> None:
    hits = week.search("What did I fix last week?", since=NOW - timedelta(days=2))
    assert hits and all(h.memory.created_at >= NOW - timedelta(days=2) for h in hits)
    assert all(h.scores.time_match is None for h in hits)


def test_a_pure_time_question_is_answered_by_that_day(make_memory, clock) -> None:
    clock.now = NOW
    mem = make_memory()
    mem.add("给客户演示了新版报表", type="dialogue", created_at=NOW - timedelta(days=1))
    mem.add("给客户演示了数据大屏", type="dialogue", created_at=NOW - timedelta(days=5))
    hits = mem.search("昨天我做了什么？")
    assert hits and hits[0].memory.content == "给客户演示了新版报表"


def test_the_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="timezone"):
        Settings.load(home="/tmp/unused-home", retrieval={"time_words": {"timezone": "Mars/Base"}})
    with pytest.raises(ConfigError, match="weight"):
        Settings.load(home="/tmp/unused-home", retrieval={"time_words": {"weight": 1.5}})
    with pytest.raises(ConfigError, match="mode"):
        Settings.load(home="/tmp/unused-home", retrieval={"time_words": {"mode": "sometimes"}})
    tw = Settings.load(home="/tmp/unused-home").retrieval.time_words
    assert tw.enabled and tw.mode == "boost"


@pytest.mark.parametrize("query", ["What's a good recipe for banana bread today?",
                                   "今天红烧肉怎么做？", "who won the world cup yesterday"])
def test_an_unrelated_question_with_a_time_word_still_finds_nothing(make_memory, clock,
                                                                     query: str) -> None:
    clock.now = NOW
    mem = make_memory()
    mem.add_many([{"content": t, "created_at": NOW - timedelta(hours=h)} for t, h in [
        ("The order service pulls images with the regcred secret", 1),
        ("支付服务跑在 pg-2 上", 2), ("Backups run at 02:00 UTC", 26)]])
    assert mem.search(query) == []


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.sampled_from(
    ["last", "next", "week", "Monday", "3", "March", "ago", "days", "the", "on", "2026", "/",
     "上", "周", "五", "月", "3", "日", "号", "天", "前", "昨天", "下", "个", "星期", "这", "31",
     "February", "30", "年", "去年", "since", "以来", "-", "in"]), max_size=8),
       now=nows)
def test_any_text_parses_to_a_past_window_or_none(words: list[str], now: datetime) -> None:
    for sep in (" ", ""):
        got = parse(sep.join(words), now)
        if got is not None:
            assert got.window.start < got.window.end
            assert got.window.start.date() <= now.date()


@pytest.mark.parametrize("text,days", [
    ("Club intervals are every Tuesday 6.45pm", {1}),
    ("每礼拜四下午三点半去接朵朵", {3}),
    ("Weekly sync: Thursdays 09:00 Berlin", {3}),
    ("周日打比赛，星期天也行", {6}),
    ("on Mon and Wed", {0, 2}),
    ("we sat down on the sun deck", set()),  # lower-case "sat", "sun": words of their own
])
def test_weekdays_a_schedule_names(text: str, days: set[int]) -> None:
    assert timewords.weekdays(text) == days
