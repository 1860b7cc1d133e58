"""Quantities in either language as comparable values (language/quantities.py)."""

from __future__ import annotations

import pytest

from varvemem.language.quantities import compare, quantities

# (text, the quantities it states as (kind, value)): each language and numeral system.
CASES = [
    ("The pool opens at 7am", {("clock", 420)}),
    ("游泳池每天早上六点开", {("clock", 360)}),
    ("Sunday phone hours end at 4 pm", {("weekday", 6), ("clock", 240)}),
    ("客服热线周日营业到晚上 6 点", {("weekday", 6), ("clock", 360)}),
    ("下午三点半开会", {("clock", 210)}),
    ("we leave around half past eight", {("clock", 510)}),
    ("standup moved to 10:15", {("clock", 615)}),
    ("staying with us for 3 weeks", {("duration", 3 * 604800)}),
    ("公婆說改成住五週了", {("duration", 5 * 604800)}),
    ("approval SLA is 2 business days", {("duration", 2 * 86400)}),
    ("保修审核时效：5个工作日", {("duration", 5 * 86400)}),
    ("the first email goes out after an hour", {("duration", 3600)}),
    ("flight home is Jan 9", {("date", (1, 9))}),
    ("公婆回台北的機票：1月16號", {("date", (1, 16))}),
    ("lease ends 31 August", {("date", (8, 31))}),
    ("invoices go to AP on the 25th", {("monthday", 25)}),
    ("账单每月二十五号交", {("monthday", 25)}),
    ("Team lunch budget is €25 per person", {("money", 25)}),
    ("团队聚餐每人标准 30 欧", {("money", 30)}),
    ("the fee is 1%", {("percent", 1)}),
    ("手续费百分之五", {("percent", 5)}),
    ("we run three replicas", {("count", 3)}),
    ("就剩我们三个人", {("count", 3)}),
    ("受过培训的 IC 一共 9 个", {("count", 9)}),  # 一共 is a word, not one
    ("in 2023 we used Jenkins", {("year", 2023)}),
    ("2023年我们用的是 Jenkins", {("year", 2023)}),
    ("the new one is in the cupboard", set()),  # "one" is no count there
    ("ticket WO-33817 at 192.168.1.1, build v2.3.1", set()),  # identifiers are no quantities
    ("统一改到楼下，一直是这样", set()),
    # Digits inside Chinese words, rough ranges, "a little", "very": no quantities.
    ("三明治和四川菜，第三方，十字路口", set()),
    ("大概三四天吧，有一点累，十分重要", set()),
    ("凌晨两点", {("clock", 120)}),
    ("十一点四十开会", {("clock", 700)}),
    ("手续费百分之五", {("percent", 5)}),
    ("每周三次", {("count", 3)}),  # a frequency, not Wednesday
    ("3号楼的门禁", {("count", 3)}),  # a building, not the 3rd
    # English codes, ordinals, letters and list commas: no quantities.
    ("Order 5500 ships from port 8080 on Python 3.12", set()),
    ("the 3rd floor has a 3D printer, steps 1,2,3", set()),
    ("timeout 30s, retry every 5m", {("duration", 30), ("duration", 300)}),
    ("a 2-hour meeting once a day", {("duration", 7200)}),
    ("We have 2000 users", {("count", 2000)}),  # a count, not a year
    ("one of the best, at one point", set()),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_quantities_read_either_language(text: str, expected: set[tuple[str, object]]) -> None:
    assert {(q.kind, q.value) for q in quantities(text)} == expected


@pytest.mark.parametrize(("old", "new", "kind", "same", "changed"), [
    ("Warranty approval SLA is 2 business days", "保修审核时效：5个工作日", True, False, True),
    ("客服热线周日营业到晚上 6 点", "Sunday hours end at 6 pm", True, True, False),
    ("The pool opens at 7am", "The pool's open daily", False, False, False),
    ("Dad walks at 6am in summer", "冬天我爸上午九点才出门散步", True, False, True),
    ("The shuttle leaves at 6am", "The shuttle leaves at 6pm", True, False, True),
    ("班车晚上六点走", "The shuttle leaves at 6pm", True, True, False),
    ("The shuttle leaves at 6:00", "班车晚上六点走", True, True, False),  # a half not said
])
def test_compare_reads_a_new_value_of_the_same_kind(old: str, new: str, kind: bool,
                                                     same: bool, changed: bool) -> None:
    assert compare(quantities(new), quantities(old)) == (kind, same, changed)
