"""Event reports (:mod:`varvemem.engines.reports`): a statement that says something happened
is dated by its time words and kept with its days. (The reader's accuracy on other people's
words is printed by ``training/relevance/train_reports.py``, writer by writer.)"""

from __future__ import annotations

from datetime import date, datetime, timezone

from varvemem import Memory
from varvemem.engines import reports

SAID = datetime(2026, 2, 11, 18, 0, tzinfo=timezone.utc)  # a Wednesday


def test_time_words_give_the_days_a_report_names() -> None:
    _, days = reports.time_features("yesterday we rolled back the gateway", SAID)
    assert days == (date(2026, 2, 10), date(2026, 2, 10))
    _, days = reports.time_features("上周三去复查了", SAID)
    assert days == (date(2026, 2, 4), date(2026, 2, 4))
    time, days = reports.time_features("My dentist is Dr. Hale", SAID)
    assert days is None and not time.any()


def test_a_span_too_long_dates_the_report_by_the_day_it_was_said() -> None:
    _, days = reports.time_features("today we agreed: alerts without an owner go by "
                                    "the end of March", SAID)
    assert days is None or (days[1] - days[0]).days <= reports.MAX_SPAN_DAYS


def test_the_write_path_keeps_a_reports_days(mem: Memory, clock) -> None:
    clock.now = SAID
    fact = mem.add("看牙齿我去徐汇区牙防所，找周晓红医生，预约电话 64380012。")
    visit = mem.add("昨天去牙防所洗了牙，周医生说一年洗一次就够了，花了两百块。")
    assert "happened" not in mem.get(fact.memory_id).metadata
    assert mem.get(visit.memory_id).metadata["happened"] == ["2026-02-10", "2026-02-10"]
