"""Identifiers of records (language/records.py): one case table per language."""

from __future__ import annotations

import pytest

from varvemem.language.records import other_record

# (old, new, another record?) by language.
CASES = {
    "en": [
        ("Order 5500 was shipped to Berlin", "Order 5501 was shipped to Paris", True),
        ("ticket #812 is waiting on the vendor", "ticket #813 is closed", True),
        ("INC-0417: root cause was an expired cert", "INC-0422 root cause: a bad HPA config", True),
        ("Room 1203 is booked for the vendor demo", "Room 1205 is booked for interviews", True),
        ("release v4.18.0 of checkout-api shipped the 3ds flow",
         "v4.18.2 of checkout-api was a hotfix for rounding", True),
        ("Order 5500 was shipped to Berlin", "Order 5500 was rerouted to Paris", False),
        ("The standup is at 9:30", "Standup's 10:15 now", False),
        ("We run Postgres 14", "We run Postgres 15 now", False),
        ("backups live in eu-central-1", "backups moved to eu-west-3", False),
        ("the bandwidth is 200Mbps", "the bandwidth is 500Mbps", False),
        ("Line A buses leave from the north gate", "Line D buses leave from the car park", True),
        ("booking #RB-1204: the big room, Tuesday", "#RB-1209: the small room, Tuesday", True),
        ("Then I moved the demo to Friday", "Then I moved the demo to Monday", False),
        ("Build 5530 is for internal QA only", "5534 can go out to beta testers", True),
        ("450 customers are on the beta", "300 customers are on the beta", False),
        ("200 GB is the disk quota per team", "120 GB is the disk quota per team", False),
        ("Build 3.2.0 of the iOS app added offline mode",
         "Build 3.2.1 of the iOS app fixed the crash on launch", True),
        ("Meeting room 2.14 has the whiteboard wall", "Room 2.17 has a TV but no whiteboard", True),
        ("merchant 40112 settles daily", "merchant 40119 settles weekly", True),
        ("The fleet runs agent 2.3.1", "The fleet runs agent 2.4.0 since Tuesday", False),
        ("Ship to Paris: order 5501", "Ship to Berlin: order 5500", True),
        ("v2.6.0 brought the dark theme", "2.6.1 only fixed the crash on login", True),
        ("Please return 2 laptops by Friday", "Please return 3 laptops by Friday", False),
        ("10.0.0.12 is the database host", "10.0.0.15 is the database host", False),
    ],
    "zh": [
        ("订单 5500 已发往柏林", "订单5501发往巴黎", True),
        ("3号会议室周四可以用", "5号会议室周五可以用", True),
        ("工单 OPS-2231 是磁盘告警，已处理", "OPS-2237 也是磁盘告警，还在排查", True),
        ("实例 i-bp1f8x2k 是 ES 热节点", "i-bp1f8x2m 是冷节点", True),
        ("订单 5500 已发往柏林", "订单 5500 改发巴黎了", False),
        ("日志保留 14 天", "日志保留 30 天", False),
        ("B栋的门禁卡找物业办", "C栋的门禁卡找保安室", True),
        ("2号线末班车是 23:10", "5号线末班车是 22:40", True),
        ("预约单#K3310：周五上午大厅", "#K3315：周五上午小厅", True),
        ("3号开会", "5号开会", False),
        ("快递单号尾号三八五二，明天到", "另一个尾号三八七零，后天到", True),
        ("員工編號 K112 是陳老師", "K115 是新來的林老師", True),
        ("任务 3h 完成", "任务 5h 完成", False),
        ("2041号货车周三去年检", "2014号货车年检排到月底", True),
        ("3號樓的門禁找保安", "5号楼的门禁找物业", True),
        ("05号开会讨论预算", "07号开会讨论预算", False),
        ("42号鞋买小了", "43号鞋刚好", False),
        ("手机号码：13800138000", "手机号码：13912345678", False),
        ("二〇二四年我们用 Kafka", "Build 2025 shipped", False),
    ],
    "across": [
        ("Order 5500 was shipped to Berlin", "订单 5501 发往巴黎", True),
        ("实例 i-bp1f8x2k 是 ES 热节点", "i-bp1f8x2m is the cold node", True),
        ("日志保留 14 天", "Per the new policy logs are retained for 30 days", False),
        # The same kind of record under a noun of each language: compared by the code's shape.
        ("Tractor 318 goes to the shop Tuesday", "325号车头周五保养", True),
        ("Pump 4410 was serviced in May", "4417号水泵还没检修", True),
        ("Member 40213 pays monthly", "会员卡40277是按年付的", True),
        # Loose numbers on both sides are amounts, budgets, years: no record.
        ("Rent 3000 a month, paid to Mr Li", "房租3500一个月", False),
        ("Budget 5000 for the team offsite", "预算6000含交通和住宿", False),
        ("March 2024 we moved the wiki to Confluence", "维基从2025开始放在Notion上面了", False),
        ("Locker 1187 is in the east hall", "1187号柜子搬到西边走廊了", False),
    ],
}


@pytest.mark.parametrize("old,new,other", [c for cases in CASES.values() for c in cases])
def test_other_record(old: str, new: str, other: bool) -> None:
    assert (other_record(new, old, states_change=False) is not None) is other


def test_a_stated_change_is_no_other_record_by_a_code_alone() -> None:
    # "since the move" states the change: the region is the new value, not another record.
    old, new = "eu-west-1 hosts the API gateway", "eu-west-3 hosts the API gateway since the move"
    assert other_record(new, old) is not None
    assert other_record(new, old, states_change=True) is None
    # A code late in a Chinese text is its value, not its subject (a CJK character weighs
    # more than a letter when the opening span is measured).
    assert other_record("节点池机型换成 ecs.g7.4xlarge 了", "节点规格是 ecs.g6.2xlarge") is None
    # A record noun's identifier stays one in a stated change when it opens the text ...
    assert other_record("Order 5501 was moved to Paris", "Order 5500 was shipped to Berlin",
                        states_change=True) is not None
    # ... and names the value that changed when it comes late.
    old, new = "Grandpa stays in the east wing, room 14", "They moved Grandpa upstairs to room 31"
    assert other_record(new, old) is not None
    assert other_record(new, old, states_change=True) is None
