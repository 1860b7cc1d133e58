"""The claim tokenizer (:mod:`varvemem.engines.claims`): normalisation, value-like tokens,
frames, transitions and negation, in Chinese and English."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from varvemem.engines import claims
from varvemem.engines.update import content_hash

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
_TEXT = st.lists(st.one_of(_WORD, st.sampled_from(["发布", "集群", "端口", "42", "v1.2"])),
                 min_size=1, max_size=8).map(" ".join)
_IDENT = st.tuples(st.text(alphabet="abcdefghij", min_size=2, max_size=5),
                   st.integers(0, 999)).map(lambda t: f"{t[0]}-{t[1]}")


# Pieces of every value kind and of the characters their gates look for, and near misses.
_VALUE_BITS = st.sampled_from([
    "https://", "http:/", "a@b", "@", "x.io", "e.g.", ".", "-", "/", "_", ":", "#ops", "#",
    "$", "€5", "¥", "元", "usd", "12,000", "3.5", "7", "10.0.0.1", "2026-05-01", "5/6/26",
    "3月5日", "年", "点", "下午三点半", "周三", "星期", "礼拜天", "monday", "Tuesdays", "today",
    "am", "pm", "9 PM", "+86", "138 0013", "v2", "eks-stg-3", "K8s", "ſ", "Ｋ", "，", " "])
_VALUE_TEXT = st.lists(st.one_of(_VALUE_BITS, _WORD), max_size=12).map("".join)


@given(_VALUE_TEXT)
def test_value_kinds_gated_match_like_the_whole_alternation(text: str) -> None:
    """A kind left out because its gate does not pass changes no match: the gated
    alternation finds what the alternation of every kind finds."""
    every = claims.value_pattern(tuple(range(len(claims.VALUE_KINDS))))
    want = [(m.span(), m.lastgroup) for m in every.finditer(text)]
    assert [(m.span(), m.lastgroup) for m in claims.value_matches(text)] == want


def test_each_gate_passes_where_its_kind_matches() -> None:
    samples = {"url": "see https://x.io/a", "email": "mail a.b@c.io", "date": "on 2026-05-01",
               "time": "at 9 pm", "day": "on Friday", "phone": "call 138 0013 8000",
               "amount": "paid 12,000元", "channel": "in #ops", "ip": "10.0.0.1",
               "host": "api.example.com", "id": "eks-stg-3", "number": "42"}
    for i, ((name, _, _), gate) in enumerate(zip(claims.VALUE_KINDS, claims.VALUE_GATES)):
        assert gate.search(samples[name]) and claims.value_pattern((i,)).search(samples[name]), \
            name


@given(_TEXT)
def test_normalise_is_idempotent(text: str) -> None:
    once = claims.normalise(text)
    assert claims.normalise(once) == once


@given(_TEXT, st.sampled_from([".", "。", "!", "！", "?", "？", " .", "…"]))
def test_case_width_and_trailing_punctuation_do_not_change_the_hash(text: str,
                                                                     end: str) -> None:
    wide = "".join(chr(ord(c) + 0xFEE0) if "a" <= c <= "z" else c for c in text.upper())
    assert content_hash(wide + end) == content_hash(text)


@given(_TEXT)
def test_values_are_ordered_disjoint_spans_of_the_text(text: str) -> None:
    found = claims.values(text)
    assert [v.start for v in found] == sorted(v.start for v in found)
    for a, b in itertools.pairwise(found):
        assert a.end <= b.start
    assert all(0 <= v.start < v.end <= len(text) for v in found)


@given(_IDENT, _IDENT, st.sampled_from([
    "The reports queue is {}", "报表队列是 {}", "Our proxy upstream points at {}",
    "日志服务的主机是 {}"]))
def test_a_frame_does_not_depend_on_its_value(a: str, b: str, template: str) -> None:
    x, y = claims.claim(template.format(a)), claims.claim(template.format(b))
    assert x.frame == y.frame and x.kinds == y.kinds == ("id",)
    same = claims.same_claim(y, x, 0.8, 2)
    assert (same is not None) == (a != b)


@pytest.mark.parametrize("text,kinds", [
    ("Deploy v3.2.1 to web-07.prod.example.com at 14:30 on 2026-06-01", ["host", "host", "time",
                                                                        "date"]),
    ("Budget is $4,500 or 3000 元, limit 75%", ["amount", "amount", "number"]),
    ("The router is 192.168.1.1 and the key is KEY-77", ["ip", "id"]),
    ("Mail ops@example.com or see https://wiki.example.com/x", ["email", "url"]),
    ("今天的负责人是赵敏", ["name"]),
    ("The reviewer for this sprint is Priya Nair", ["name"]),
    ("2026年6月1日 上线", ["date"]),
])
def test_value_kinds(text: str, kinds: list[str]) -> None:
    assert [v.kind for v in claims.values(text)] == kinds


def test_normalise_keeps_inner_punctuation_and_digits() -> None:
    assert claims.normalise("Window: 10:00-16:00 UTC.") == "window:10:00-16:00 utc"
    assert claims.normalise("端口是 8080，对吗？") == claims.normalise("端口是8080,对吗?")
    assert claims.normalise("v1.2") != claims.normalise("v12")


@pytest.mark.parametrize("text,old,new,rule", [
    ("We moved the cache from redis-a to redis-b last night", "redis-a", "redis-b",
     "from A to B"),
    ("replaced nginx-old with envoy-1 at the edge", "nginx-old", "envoy-1", "replaced A with B"),
    ("edge proxy: nginx-old → envoy-1", "nginx-old", "envoy-1", "A -> B"),
    ("缓存从 redis-a 迁到 redis-b", "redis-a", "redis-b", "从A到B"),
    ("边缘代理由 nginx-old 改为 envoy-1", "nginx-old", "envoy-1", "从A到B"),
    ("The edge proxy switched to envoy-2", None, "envoy-2", "moved to B"),
    ("边缘代理换成 envoy-3 了", None, "envoy-3", "改为B"),
    ("Maria now leads the mobile release instead of Tom.", "tom", "maria", "B ... instead of A"),
    ("Kenji owns the billing dashboard now, instead of Priya", "priya", "kenji",
     "B ... instead of A"),
    ("We now use Postgres instead of MySQL.", "mysql", "postgres", "B instead of A"),
])
def test_transitions(text: str, old: str | None, new: str, rule: str) -> None:
    t = claims.transition(text)
    assert t is not None and (t.old, t.new, t.rule) == (old, new, rule)


def test_a_range_is_not_a_transition_and_negation_keeps_its_words() -> None:
    assert claims.transition("The maintenance window is from 01:00 to 03:00") is None
    neg = claims.negation("The gateway no longer signs requests")
    assert neg is not None and neg.words == ("gateway", "sign", "request") and neg.values == ()
    neg = claims.negation("网关不再签名请求")
    assert neg is not None and "网关" in neg.words and "签名" in neg.words


@pytest.mark.parametrize("a,b", [
    ("The reports service listens on port 8081", "The billing service listens on port 9091"),
    ("Order ORD-551 shipped on 2026-05-01", "Order ORD-552 shipped on 2026-05-02"),
    ("batch run 3 for region-3", "batch run 4 for region-4"),
    ("华南区的网关是 gw-south-1", "华北区的网关是 gw-north-1"),
])
def test_distinct_subjects_are_not_the_same_claim(a: str, b: str) -> None:
    assert claims.same_claim(claims.claim(b), claims.claim(a), 0.8, 2) is None


def test_questions() -> None:
    assert claims.is_question("Which port does the reports service use")
    assert claims.is_question("报表服务用哪个端口")
    assert not claims.is_question("The reports service uses port 8081")


@pytest.mark.parametrize("a,b,same", [
    ("Mia went to the climbing gym on 7 May 2026", "Mia went to the climbing gym on 20 May 2026",
     False),
    ("Omar reviewed PR-311", "Omar reviewed PR-312", False),
    ("我上周去了杭州 3 天", "我上周去了杭州 5 天", False),
    ("BILL-0042 was settled on 2026-02-03", "BILL-0042 was settled on 2026-02-09", True),
    ("The wiki is hosted on wiki-a.corp", "The wiki is hosted on wiki-b.corp", True),
])
def test_past_events_add_up_unless_they_are_of_one_record(a: str, b: str, same: bool) -> None:
    assert (claims.same_claim(claims.claim(b), claims.claim(a), 0.8, 2) is not None) == same


@pytest.mark.parametrize("old,new", [
    ("turn 4 of the incident call", "turn 5 of the incident call"),
    ("Step 2: drain the node", "Step 3: drain the node"),
    ("note #12 for the audit", "note #13 for the audit"),
    ("第2轮面试安排在周三", "第3轮面试安排在周三"),
    ("3号机房的空调坏了", "4号机房的空调坏了"),
])
def test_a_labelled_number_names_the_record_it_counts(old: str, new: str) -> None:
    """"turn 4" and "turn 5" are two turns, not a new value of one."""
    assert claims.same_claim(claims.claim(new), claims.claim(old), 0.8, 2) is None


@pytest.mark.parametrize("old,new", [
    ("The API listens on port 8080", "The API listens on port 9090"),
    ("接口限流是每分钟 600 次", "接口限流是每分钟 900 次"),
])
def test_a_quantity_is_still_a_value_of_its_claim(old: str, new: str) -> None:
    assert claims.same_claim(claims.claim(new), claims.claim(old), 0.8, 2) is not None


# -- slots: an attribute of a subject ---------------------------------------------------------
def _slot(new: str, old: str) -> str | None:
    lex = claims.lexicon()
    return claims.same_slot(claims.slots(new, lex), claims.slots(old, lex), 0.6)


@pytest.mark.parametrize("old,new", [
    ("The queue consumer is deployed to the gke-eu-4 cluster", "We run the queue consumer on k8s-12"),
    ("Dana owns the ledger service", "The owner of the ledger service is Farid"),
    ("ledger service maintainer: Dana", "Farid maintains the ledger service now"),
    ("The ledger service keeps its data in pg-ledger-1", "Ledger service database: tidb-7"),
    ("The scheduler answers on 7443", "the scheduler binds to :9100"),
    ("The scheduler gets 2Gi of RAM per pod", "Memory limit of the scheduler: 6Gi"),
    ("对账服务的负责人是孙莉", "对账服务有问题找何平"),
    ("对账服务部署在 ack-sh-2 集群", "对账服务所在的集群是 gke-asia-1"),
    ("对账服务的内存上限是 3Gi", "对账服务每个 pod 给 5Gi 内存"),
    ("对账服务的告警发到 #ledger-oncall", "对账服务出问题会通知 #fin-alerts"),
])
def test_a_paraphrased_new_value_of_the_same_attribute_is_the_same_slot(old: str,
                                                                       new: str) -> None:
    assert _slot(new, old)


@pytest.mark.parametrize("old,new", [
    # another subject
    ("The port of the ledger service is 7443", "The port of the audit service is 9100"),
    ("对账服务的负责人是孙莉", "审计服务的负责人是何平"),
    # another attribute of the same subject
    ("对账服务部署在 ack-sh-2 集群", "对账服务部署在 cn-shanghai 区域"),
    ("The ledger service answers on 7443", "The ledger service gets 2Gi of RAM"),
    # the same attribute in another environment
    ("Kafka version on staging: 3.6", "Kafka version on production: 3.4"),
    ("测试环境的数据库是 pg-t-1", "生产环境的数据库是 pg-p-1"),
    # another record named first
    ("Ticket SEC-88: owner is Dana", "Ticket SEC-89: owner is Farid"),
])
def test_another_subject_attribute_or_record_is_another_slot(old: str, new: str) -> None:
    assert _slot(new, old) is None


@pytest.mark.parametrize("old,new", [
    ("Bill B-7710 from Globex: 640 EUR, due 2 May 2026", "Bill B-7710 from Globex: 650 EUR, due 2 May 2026"),
    ("Bill B-7710 from Globex: 640 EUR, due 2026-05-02", "Bill B-7710 from Globex: 640 EUR, due 2026-05-09"),
    ("报销单 BX-301，差旅费，860 元，2026年4月8日提交", "报销单 BX-301，差旅费，880 元，2026年4月8日提交"),
    ("报销单 BX-301，差旅费，860 元，2026年4月8日提交", "报销单 BX-302，差旅费，860 元，2026年4月8日提交"),
])
def test_ledger_lines_that_differ_in_one_value_are_two_records(old: str, new: str) -> None:
    assert claims.is_record(claims.claim(new).kinds)
    lex = claims.lexicon()
    assert claims.supersedes(new, old, lex, frame_overlap=0.8, min_words=2, subject_span=0.5,
                             subject_overlap=0.6) is None


@given(st.sampled_from(["port", "region", "owner", "cluster"]), _IDENT, _IDENT, _WORD, _WORD)
def test_a_slot_needs_a_changed_value(attr: str, v1: str, v2: str, w1: str, w2: str) -> None:
    """Property: the same statement again is never a new value, and two statements of one
    attribute of one subject with different values always are."""
    old = f"The {attr} of the {w1} {w2} service is {v1}"
    assert _slot(old, old) is None
    if v1 != v2:
        assert _slot(f"The {attr} of the {w1} {w2} service is {v2}", old)


def test_negations_name_what_stopped_in_both_languages() -> None:
    for text, gone in [("We retired Consul from the edge proxy.", "consul"),
                       ("The edge proxy stopped using Consul", "consul"),
                       ("边缘代理已经不用 Consul 了", "consul"),
                       ("边缘代理里的 Consul 下掉了", "consul")]:
        neg = claims.negation(text)
        assert neg is not None and gone in neg.values, text
    assert claims.negation("The edge proxy uses Consul") is None


def test_a_transition_said_after_its_subject_knows_it() -> None:
    t = claims.transition("Replaced Consul with etcd for the edge proxy.")
    assert t is not None and t.old == "consul" and "proxi" in t.subject
    # an arrow between a subject and its attribute is a statement, not a change
    assert claims.transition("edge proxy -> registry etcd-3") is None
    t = claims.transition("注册中心：Consul → Nacos")
    assert t is not None and t.new == "nacos"


def test_chinese_sentence_final_particles_are_tone() -> None:
    assert claims.normalise("今晚不上线吧") == claims.normalise("今晚不上线")
    assert claims.normalise("日志在哪看呀？") == claims.normalise("日志在哪看")
    assert claims.normalise("今晚上线吗") != claims.normalise("今晚上线")  # a question


@pytest.mark.parametrize("old,new,retired", [
    ("我每天喝两杯咖啡", "我已经不喝咖啡了", True),
    ("夜间批处理每天凌晨两点跑", "夜间批处理已经不跑了", True),
    ("我女儿每周六上午学钢琴", "女儿这学期不学钢琴了，改学游泳", True),
    ("我周三晚上会去游泳馆游一个小时", "最近膝盖不好，不去游泳了", True),
    ("他每天喝咖啡", "我不喝咖啡了", False),  # he is not I
    ("I go swimming every Tuesday morning", "I no longer go swimming", True),
    ("The team holds a retro every other Thursday", "The team stopped holding retros", True),
    ("我妹妹每天喝咖啡", "我已经不喝咖啡了", False),  # another subject
    ("咖啡机在三楼茶水间", "我已经不喝咖啡了", False),
    ("My wife drives to work every day", "I don't drive to work anymore", False),
    ("The coffee machine on floor 3 is broken", "I no longer drink coffee", False),
])
def test_a_negation_without_a_value_retires_what_it_stopped(old: str, new: str,
                                                            retired: bool) -> None:
    neg = claims.negation(new)
    assert neg is not None and neg.values == ()
    assert claims.negates(neg, old, extra_words=0) is retired


def test_talk_is_not_a_value() -> None:
    """A speaker's label, the name a turn addresses, "I" and the words of talk name nothing."""
    assert claims.without_speaker("Caroline: we moved to Denver", ["caroline"]) \
        == "we moved to Denver"
    assert claims.without_speaker("Redis: now on 6380", ["caroline"]) == "Redis: now on 6380"
    assert claims.without_address("Thanks, Gina! I won't quit, Gina.") == "Thanks! I won't quit."
    assert claims.values("No, I didn't make it. Yeah, whatever") == ()
    neg = claims.negation("Take care of yourself and don't forget to rest")
    assert neg is not None and neg.opener is None
    neg = claims.negation("Pulsar is no longer used by analytics")
    assert neg is not None and neg.opener == "pulsar"


@pytest.mark.parametrize("text", [
    "I went to a car show last weekend",  # a trip
    "Another movie script I contributed to was shown on Sunday",  # "movie" is no move
    "I got some new offers and promotions going on my store to try new customers",
    "Hey Mel! So much happened. Did you move to Denver?",  # a question
    "We now deploy on weekdays instead of Fridays",  # "We" opens it: no name
    "I play chess instead of Go",  # nor "I"
    # a name opens these, but no role is given: nobody stands in for the other name
    "Alice takes the bus instead of Uber.",
    "Melanie took the kids to the beach instead of Disneyland.",
    "Alice prefers tea instead of Bob.",
    "John ate pizza instead of pasta with Sarah rather than Mike.",
])
def test_talk_is_not_a_transition(text: str) -> None:
    assert claims.transition(text) is None


def test_a_transition_or_negation_is_read_in_its_own_sentence() -> None:
    t = claims.transition("Hey team, long week! We moved the wiki to wiki-2.")
    assert t is not None and t.new == "wiki-2" and "team" not in t.subject
    neg = claims.negation("Thanks, Gina! Billing no longer uses Stripe.")
    assert neg is not None and neg.values == ("stripe",)
    assert claims.sentences("v1.2 is out. Next is v1.3! 好的。走吧") \
        == ("v1.2 is out.", "Next is v1.3!", "好的。", "走吧")


def test_a_changed_name_may_not_count() -> None:
    a, b = claims.claim("Thanks Nate, see you at 7 pm"), claims.claim("Thanks Joanna, see you")
    assert claims.changed_value(a, b) and not claims.changed_value(a, b, names=False)
    c = claims.claim("See you at 8 pm")
    assert claims.changed_value(c, a, names=False)


@pytest.mark.parametrize("text,liked,over", [
    ("Alice prefers tabs over spaces in Python files", "tabs", "spaces"),
    ("Bob likes tea better than coffee", "tea", "coffee"),
    ("小王更喜欢喝茶而不是咖啡", "喝茶", "咖啡"),
    ("比起咖啡，小王更喜欢茶", "茶", "咖啡"),
    ("I prefer not to say", None, None),
    ("We prefer to deploy on Tuesdays", None, None),
])
def test_preference_between_two_choices(text: str, liked: str | None, over: str | None) -> None:
    got = claims.preference(text)
    assert (got.liked, got.over) == (liked, over) if liked else got is None


@given(st.sampled_from(["tabs", "vim", "dark mode", "茶"]),
       st.sampled_from(["spaces", "emacs", "light mode", "咖啡"]))
def test_a_swapped_preference_is_reversed_and_the_same_is_not(a: str, b: str) -> None:
    first, swapped = f"Alice prefers {a} over {b}", f"Alice now prefers {b} over {a}"
    assert claims.reversed_preference(swapped, first) == "preference reversed"
    assert claims.reversed_preference(first, first) is None
    assert claims.reversed_preference(f"Bob prefers {b} over {a}", first) is None
