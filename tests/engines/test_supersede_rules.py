"""Offline supersession without cue words, the near-duplicate merge guard, normalised dedup and
read-time conflicts, in Chinese and English (the rules of :mod:`varvemem.engines.claims`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests._llm import ChatServer, importance, llm_alone, supersede_none
from tests.conftest import Clock

from varvemem import Memory


@pytest.fixture
def mem(make_memory: Callable[..., Memory], clock: Clock) -> Memory:
    m = make_memory()
    add = m.add

    def ticking_add(*args, **kw):  # each statement an hour after the last
        clock.advance(hours=1)
        return add(*args, **kw)

    m.add = ticking_add  # type: ignore[method-assign]
    return m


def _superseded_by(mem: Memory, old: str, new: str, reason: str) -> None:
    stale = mem.get(old)
    assert stale.valid_to is not None and stale.superseded_by == new
    assert reason in mem.history(old)[-1].reason
    assert reason in mem.history(new)[0].reason


@pytest.mark.parametrize("old,new", [
    ("The payments queue is rabbit-q-2", "The payments queue is rabbit-q-5"),
    ("Our tracing collector listens on port 4317", "Our tracing collector listens on port 4318"),
    ("The design review this sprint is led by Priya", "The design review this sprint is led by Tomas"),
    ("报表服务的端口是 8081", "报表服务的端口是 9091"),
    ("证书到期日是 2026-09-30", "证书到期日是 2026-12-31"),
    ("这个迭代的评审负责人是赵敏", "这个迭代的评审负责人是周杰"),
])
def test_the_same_claim_with_a_new_value_supersedes_without_a_cue(mem: Memory, old: str,
                                                                  new: str) -> None:
    a = mem.add(old)
    b = mem.add(new)
    assert b.superseded == [a.memory_id] and b.steps["supersede"] == "rules"
    _superseded_by(mem, a.memory_id, b.memory_id, "same claim, new value (frame)")
    current = [h.memory.memory_id for h in mem.search(new)]
    assert b.memory_id in current and a.memory_id not in current
    every = [h.memory.memory_id for h in mem.search(new, include_superseded=True,
                                                    min_relevance=0.0)]
    assert a.memory_id in every
    then = [h.memory.memory_id for h in mem.search(old, as_of=mem.get(a.memory_id).valid_from)]
    assert a.memory_id in then and b.memory_id not in then


@pytest.mark.parametrize("old,new,why", [
    ("Image builds run on builder-a", "We moved image builds from builder-a to builder-c",
     "transition from builder-a"),
    ("The edge proxy is nginx-old", "We replaced nginx-old with envoy-1 at the edge",
     "transition from nginx-old"),
    ("Session store: memcache-1", "session store memcache-1 -> keydb-2", "transition from memcache-1"),
    ("The queue broker is rabbit-1", "The queue broker was switched to kafka-2",
     "transition to kafka-2"),
    ("文档站点托管在 pages-old", "文档站点由 pages-old 改为 pages-new", "transition from pages-old"),
    ("归档任务跑在 node-3 上", "归档任务迁到 node-8 了", "transition to node-8"),
    ("短信通道用的是 sms-vendor-a", "短信通道换成 sms-vendor-b", "transition to sms-vendor-b"),
    ("构建缓存放在 cache-hdd-1", "构建缓存从 cache-hdd-1 迁移到 cache-ssd-1", "transition from cache-hdd-1"),
    ("Uploads land in tray-a", "ops swapped tray-a for tray-b this morning", "transition from tray-a"),
    ("代码托管平台是 gitea", "代码托管平台从 gitea 换成 gitlab", "transition from gitea"),
    # 了 right after the verb ("迁到了", "换成了") is how a change is most often told.
    ("报表服务的数据库是 pg-report-1", "报表服务的数据库从 pg-report-1 迁到了 ch-report-2",
     "transition from pg-report-1"),
    ("告警通道用的是 webhook-old", "告警通道已经换成了 webhook-new", "transition to webhook-new"),
])
def test_a_transition_supersedes_the_memory_holding_the_old_value(mem: Memory, old: str, new: str,
                                                                   why: str) -> None:
    a = mem.add(old)
    other = mem.add("The weekly report goes out on Mondays")
    b = mem.add(new)
    assert b.superseded == [a.memory_id]
    _superseded_by(mem, a.memory_id, b.memory_id, why)
    assert mem.get(other.memory_id).valid_to is None


@pytest.mark.parametrize("old,new,supersedes", [
    ("Alice prefers tabs over spaces in Python files",
     "Alice now prefers spaces over tabs, after the team vote", True),
    ("Bob likes tea better than coffee", "Bob now prefers coffee over tea", True),
    ("小王更喜欢喝茶而不是咖啡", "小王现在更喜欢咖啡而不是茶", True),
    ("比起地铁，老张更喜欢骑车上班", "老张现在更喜欢地铁而不是骑车上班", True),
    ("Alice prefers tabs over spaces", "Bob prefers spaces over tabs", False),  # another person
    ("Alice prefers tabs over spaces", "Alice prefers vim over emacs", False),  # other choices
    ("小王更喜欢喝茶而不是咖啡", "小李更喜欢咖啡而不是茶", False),
])
def test_a_reversed_preference_supersedes_the_old_one(mem: Memory, old: str, new: str,
                                                      supersedes: bool) -> None:
    """"A over B" then "B over A" of the same person: the values are the same two, swapped."""
    a = mem.add(old)
    b = mem.add(new)
    assert b.superseded == ([a.memory_id] if supersedes else [])


@pytest.mark.parametrize("old,new", [
    ("周会在周二", "周会改到周三了"),
    ("订单服务有 4 台机器", "订单服务扩容到 8 台机器"),
    ("会员价是 25 元", "会员价涨到 30 元"),
])
def test_chinese_verbs_of_rescheduling_and_scaling_are_changes(mem: Memory, old: str,
                                                               new: str) -> None:
    """改到, 推迟到, 扩容到, 涨到 ... state a new value as 改成 does."""
    a = mem.add(old)
    b = mem.add(new)
    assert b.superseded == [a.memory_id]


@pytest.mark.parametrize("old,new", [
    ("The on-call phone changed to 555-0142", "The on-call phone is 555-0177"),
    ("We switched the guest wifi password to Amber-Heron-4", "The guest wifi password is Slate-Fox-9"),
    ("The owner of the audit exporter was cut over from Sofia to Ravi",
     "The owner of the audit exporter is Lucas"),
    ("售后热线改成了 400-650-1111", "售后热线是 400-650-2222"),
    ("预发环境的缓存迁到了 redis-pre-2", "预发环境的缓存是 redis-pre-7"),
])
def test_a_plain_new_value_supersedes_what_an_earlier_change_set(mem: Memory, old: str,
                                                                 new: str) -> None:
    """A change states a value ("... changed to A"); a later plain statement of the same thing
    ("... is B") supersedes it, though the change's verb and tense differ from the statement."""
    a = mem.add(old)
    other = mem.add("The sales hotline is 555-0100" if old.isascii() else "投诉热线是 400-650-9999")
    b = mem.add(new)
    assert b.superseded == [a.memory_id]
    assert mem.get(other.memory_id).valid_to is None


@pytest.mark.parametrize("old,new", [
    ("Nightly jobs send reports to Slack", "Nightly jobs no longer send reports to Slack"),
    ("夜间任务发送报告到钉钉", "夜间任务不再发送报告到钉钉"),
])
def test_a_negation_supersedes_what_it_denies(mem: Memory, old: str, new: str) -> None:
    a = mem.add(old)
    b = mem.add(new)
    assert b.superseded == [a.memory_id] and mem.get(a.memory_id).valid_to is not None


@pytest.mark.parametrize("old,said", [
    ("The docs bucket is docs-eu-1", "oh and we migrated the docs bucket from docs-eu-1 to docs-eu-2"),
    ("The docs bucket is docs-eu-1", "fyi the docs bucket is docs-eu-3 since Monday"),
    ("文档存储桶是 docs-cn-1", "文档存储桶已经迁到 docs-cn-2 了"),
])
def test_a_statement_in_dialogue_supersedes_a_stored_fact(mem: Memory, old: str,
                                                          said: str) -> None:
    a = mem.add(old)
    b = mem.add(said, session="chat-1", type="dialogue", metadata={"role": "user"})
    assert b.superseded == [a.memory_id]
    asked = mem.add("is the docs bucket docs-eu-9?", session="chat-1", type="dialogue")
    assert asked.superseded == [] and mem.get(b.memory_id).valid_to is None


@pytest.mark.parametrize("a,b,kw", [
    ("The reports service listens on port 8081", "The billing service listens on port 9091", {}),
    ("reports-api is served from pg-3", "billing-api is served from pg-4", {}),
    ("The staging ingress is ing-stg-1", "The production ingress is ing-prd-1", {}),
    ("Order ORD-551 shipped on 2026-05-01", "Order ORD-552 shipped on 2026-05-02", {}),
    ("报表服务部署在 pg-3 上", "账单服务部署在 pg-4 上", {}),
    ("预发的入口是 ing-stg-1", "生产的入口是 ing-prd-1", {}),
    ("订单 ORD-771 于 2026-05-01 发货", "订单 ORD-772 于 2026-05-02 发货", {}),
])
def test_distinct_subjects_do_not_supersede_each_other(mem: Memory, a: str, b: str,
                                                       kw: dict) -> None:
    x = mem.add(a)
    y = mem.add(b)
    assert y.status == "created" and y.superseded == [] and mem.get(x.memory_id).valid_to is None


def test_a_move_from_a_plain_word_without_a_subject_supersedes_nothing(mem: Memory) -> None:
    a = mem.add("I am from Portugal originally", session="c", type="dialogue")
    b = mem.add("I moved from Portugal to Canada in 2019", session="c", type="dialogue")
    assert b.superseded == [] and mem.get(a.memory_id).valid_to is None


def test_events_add_up_but_an_event_may_supersede_a_fact(mem: Memory) -> None:
    a = mem.add("review comment number 1 about the retry budget", type="event")
    b = mem.add("review comment number 2 about the retry budget", type="event")
    assert b.superseded == [] and mem.get(a.memory_id).valid_to is None
    fact = mem.add("The retry budget is 3 attempts")
    ev = mem.add("The retry budget is 5 attempts", type="event")
    assert ev.superseded == [fact.memory_id]


def test_two_users_keep_their_own_values(mem: Memory) -> None:
    a = mem.add("My preferred editor theme is solarized-dark", user="kim")
    b = mem.add("My preferred editor theme is gruvbox-light", user="lee")
    assert b.superseded == [] and mem.get(a.memory_id).valid_to is None


def test_a_transition_from_a_value_nobody_holds_supersedes_nothing(mem: Memory) -> None:
    a = mem.add("The payments queue is rabbit-q-2")
    b = mem.add("We moved the payments queue from rabbit-q-9 to rabbit-q-7")
    assert b.superseded == [] and mem.get(a.memory_id).valid_to is None
    assert b.steps["supersede"] == "rules (transition from rabbit-q-9: no memory holds rabbit-q-9)"
    c = mem.add("支付队列从 rabbit-q-9 迁到 rabbit-q-7")
    assert c.superseded == [] and "no memory holds rabbit-q-9" in c.steps["supersede"]


@pytest.mark.parametrize("template", [
    "Invoice INV-20{n:02d} from Globex was settled on 2026-03-{d:02d}",
    "发票 INV-40{n:02d} 已于 2026-03-{d:02d} 结清",
])
def test_records_differing_in_their_values_are_never_merged(mem: Memory, template: str) -> None:
    results = mem.add_many([template.format(n=n, d=n % 28 + 1) for n in range(40)])
    assert [r.status for r in results] == ["created"] * 40
    assert all(r.superseded == [] for r in results)
    assert mem.stats()["memories"] == 40


@pytest.mark.parametrize("guard,status", [(True, "created"), (False, "merged")])
def test_the_merge_guard_is_a_setting(make_memory: Callable[..., Memory], guard: bool,
                                      status: str) -> None:
    mem = make_memory(update={"merge_value_guard": guard, "supersede_rules": [], "judge": "rules"})
    mem.add("Invoice INV-2001 for Initech was paid on 2026-01-05")
    b = mem.add("Invoice INV-2001 for Initech was paid on 2026-01-06")  # cosine 0.985
    assert b.status == status and b.superseded == []


@pytest.mark.parametrize("first,again", [
    ("Rotate the TLS certs every 90 days", "rotate the TLS certs every 90 days!"),
    ("Is the VPN split-tunnel enabled?", "is the VPN split-tunnel enabled ？"),
    ("证书每 90 天轮换一次。", "证书每90天轮换一次"),
    ("ＶＰＮ 默认开启分流", "VPN默认开启分流。"),
])
def test_case_width_punctuation_and_spacing_variants_are_one_memory(mem: Memory, first: str,
                                                                    again: str) -> None:
    a = mem.add(first)
    b = mem.add(again)
    assert b.status == "duplicate" and b.memory_id == a.memory_id
    assert mem.get(a.memory_id).content == first  # stored as written


@pytest.mark.parametrize("q1,q2", [
    ("How do I rotate the API keys?", "how do I rotate the API keys？"),
    ("怎么申请测试账号？", "怎么申请测试账号"),
])
def test_question_variants_are_one_qa_pair(mem: Memory, q1: str, q2: str) -> None:
    mem.save_qa(q1, "Ask in #access.", 0.7)
    mem.save_qa(q2, "Open an access ticket.", 0.9)
    pairs = mem.load_all_qa()
    assert len(pairs) == 1 and pairs[0].answer == "Open an access ticket."


@pytest.mark.parametrize("old,new,query", [
    ("The payments queue is rabbit-q-2", "The payments queue is rabbit-q-5", "payments queue"),
    ("报表服务的端口是 8081", "报表服务的端口是 9091", "报表服务端口"),
])
def test_read_time_conflicts_serve_the_newer_value_first(make_memory: Callable[..., Memory],
                                                         clock: Clock, old: str, new: str,
                                                         query: str) -> None:
    # The write path misses it (the judge off: it would supersede it).
    mem = make_memory(update={"supersede_rules": ["cue"], "judge": "rules"})
    a = mem.add(old)
    clock.advance(hours=1)
    b = mem.add(new)
    assert b.superseded == []
    hits = mem.search(query)
    ids = [h.memory.memory_id for h in hits]
    assert ids.index(b.memory_id) < ids.index(a.memory_id)
    older = hits[ids.index(a.memory_id)]
    said = clock().date().isoformat()
    assert older.scores.conflict == (f"likely superseded by {b.memory_id} (said {said}): "
                                     "same claim, new value (frame)")
    assert older.to_json()["conflict"] == older.scores.conflict
    assert hits[ids.index(b.memory_id)].scores.conflict is None
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    off = make_memory(update={"supersede_rules": ["cue"]}, conflicts={"enabled": False})
    assert all(h.scores.conflict is None for h in off.search(query))


def test_with_an_llm_the_rules_find_the_candidates_and_the_llm_judges(home, embedder,
                                                                      clock: Clock) -> None:
    server = ChatServer(score=importance(0.66), supersede=supersede_none)
    with Memory(settings=llm_alone(home), embedder=embedder, clock=clock,
                llm=server.client()) as mem:
        a = mem.add("Image builds run on builder-a", type="knowledge")
        clock.advance(hours=1)
        b = mem.add("We moved image builds from builder-a to builder-c", type="knowledge")
        assert "Image builds run on builder-a" in server.one("supersede").fields["old"]
        assert b.steps["supersede"] == "llm" and b.superseded == []
        assert mem.get(a.memory_id).valid_to is None


@pytest.mark.parametrize("mode", ["knowledge", "dialogue", "event"])
@pytest.mark.parametrize("old,new", [
    ("The nightly export job runs on the k8s-batch-1 cluster",
     "We deploy the nightly export job to gke-batch-3 these days"),
    ("Hiro owns the nightly export job", "The owner of the nightly export job is Ines"),
    ("夜间导出任务的告警发到 #batch-alerts", "夜间导出任务出问题会通知 #data-oncall"),
    ("夜间导出任务内存限制：2Gi", "夜间导出任务每个 pod 给 6Gi 内存"),
])
def test_a_paraphrased_update_supersedes_in_every_mode(mem: Memory, mode: str, old: str,
                                                       new: str) -> None:
    def write(text: str) -> str:
        if mode == "dialogue":
            return mem.add_messages([{"role": "user", "content": text}], session="s1")[0].memory_id
        if mode == "event":
            return mem.add_event({"title": "ops note", "message": text}).memory_id
        return mem.add(text).memory_id

    a = write(old)
    b = write(new)
    assert mem.get(a).superseded_by == b
    assert "new value" in mem.history(a)[-1].reason  # by its frame or its slots
    assert a not in [h.memory.memory_id for h in mem.search(new)]


@pytest.mark.parametrize("records", [
    ["Invoice Q-5501 from Initrode: 1,800 USD, due 2026-07-01",
     "Invoice Q-5501 from Initrode: 1,850 USD, due 2026-07-01",
     "Invoice Q-5502 from Initrode: 1,800 USD, due 2026-07-01",
     "Invoice Q-5501 from Initrode: 1,800 USD, due 2026-07-15"],
    ["采购单 PO-77，华信科技，金额 5200 元，2026年6月3日到货",
     "采购单 PO-77，华信科技，金额 5300 元，2026年6月3日到货",
     "采购单 PO-78，华信科技，金额 5200 元，2026年6月3日到货"],
])
def test_ledger_lines_stay_separate_records(mem: Memory, records: list[str]) -> None:
    ids = [mem.add(r).memory_id for r in records]
    assert len(set(ids)) == len(ids)
    assert all(mem.get(i).valid_to is None for i in ids)
    for text, mid in zip(records, ids):
        assert mem.search(text, top_k=1)[0].memory.memory_id == mid


def test_a_negation_retires_the_value_it_names_for_its_subject_only(mem: Memory) -> None:
    ours = mem.add("The billing API relies on Memcached for sessions").memory_id
    theirs = mem.add("The search API relies on Memcached for sessions").memory_id
    neg = mem.add("We retired Memcached from the billing API.")
    assert neg.superseded == [ours]
    assert "negated: no longer memcached" in mem.history(ours)[-1].reason
    assert mem.get(theirs).valid_to is None
    zh = mem.add("计费接口用 Etcd 做配置中心").memory_id
    mem.add("计费接口已经不用 Etcd 了")
    assert mem.get(zh).valid_to is not None


def test_a_superseded_slot_can_be_restored(mem: Memory) -> None:
    a = mem.add("The owner of the nightly export job is Hiro").memory_id
    b = mem.add("Ines owns the nightly export job").memory_id
    assert mem.get(a).superseded_by == b
    mem.restore(a, reason="two owners: one per region")
    back = mem.get(a)
    assert back.valid_to is None and back.superseded_by is None
    assert mem.history(a)[-1].action == "restore"
    assert mem.history(a)[-1].reason == "two owners: one per region"
    hits = mem.search("who owns the nightly export job")
    assert {a, b} <= {h.memory.memory_id for h in hits}
    assert all(h.scores.conflict is None for h in hits)


@pytest.mark.parametrize("old,new", [
    ("我每周跑三次步", "我现在不跑步了"),
    ("我们组每周一开例会", "我们组不开周一例会了"),
    ("I work from home on Fridays", "I don't work from home anymore"),
    ("I eat meat most days", "I don't eat meat anymore"),
])
def test_a_habit_said_to_have_stopped_is_retired(mem: Memory, old: str, new: str) -> None:
    a = mem.add(old, session="chat-2", type="dialogue")
    b = mem.add(new, session="chat-2", type="dialogue")
    assert b.superseded == [a.memory_id]
    assert "negated" in mem.history(a.memory_id)[-1].reason


def test_chat_between_people_supersedes_nothing(mem: Memory) -> None:
    """Greetings, names addressed, trips and "now" in a conversation are talk, not updates
    (each pair below superseded the first turn before the rules read talk as talk)."""
    turns = [
        ("Jon", "Thanks, Gina! Your support means so much. I'm gonna keep chasing my dreams."),
        ("Jon", "I won't give up, Gina! I'll keep pushing to make my dreams happen."),
        ("Dave", "Last weekend I went to a music festival in Boston - it was awesome!"),
        ("Dave", "Hey Calvin! Last Friday I went to the car show. I saw some awesome cars!"),
        ("Andrew", "Haha yeah! People who understand the love for dogs are awesome."),
        ("Andrew", "Yeah, they really do bring joy don't they. It's wonderful."),
        ("Nate", "Glad to hear my support makes a difference, Joanna. I'm here for you!"),
        ("Joanna", "Cheers, Nate! Your support means a lot. I'll keep you updated now."),
    ]
    for who, text in turns:
        res = mem.add(f"{who}: {text}", session="s1", type="dialogue",
                      metadata={"speaker": who})
        assert res.superseded == [], text


@pytest.mark.parametrize("candidates,superseded", [(20, True), (0, False)])
def test_a_change_finds_the_old_value_by_full_text_beyond_the_nearest(
        make_memory: Callable[..., Memory], clock: Clock, candidates: int,
        superseded: bool) -> None:
    """A transition names its old value: the statement holding it is found through the
    full-text query of the change's subject and old value even when the nearest memories
    (one, here) are others; without full-text candidates it is not."""
    mem = make_memory(update={"neighbours": 1, "associate_max": 0,
                              "claim_candidates": candidates})
    old = mem.add("Image builds run on builder-a")
    for text in ("We moved image builds from builder-q to builder-c",
                 "We moved image builds from builder-r to builder-c"):
        clock.advance(hours=1)
        mem.add(text)
    clock.advance(hours=1)
    new = mem.add("We moved image builds from builder-a to builder-c")
    assert (old.memory_id in new.superseded) is superseded
    assert (mem.get(old.memory_id).valid_to is not None) is superseded


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the rules parse from now on (their caches emptied)."""
    from varvemem.engines import claims

    parsed: list[str] = []
    real = claims.statement.__wrapped__

    def counting(text: str, *args, **kw):  # type: ignore[no-untyped-def]
        parsed.append(text)
        return real(text, *args, **kw)

    for cached in (claims.statement, claims.claim, claims.slots, claims.values):
        cached.cache_clear()
    monkeypatch.setattr(claims, "statement", counting)
    return parsed


@pytest.mark.parametrize("old,new,other", [
    ("The payments queue is rabbit-q-2", "The payments queue is rabbit-q-5",
     "The payments team reviews queue alerts on Mondays"),
    ("报表服务的端口是 8081", "报表服务的端口是 9091", "报表服务的负责人每周一检查告警"),
])
def test_a_candidate_is_read_from_its_stored_statement(
        mem: Memory, monkeypatch: pytest.MonkeyPatch, old: str, new: str, other: str) -> None:
    """What the rules parsed of a memory when it was added is stored with it: a later add
    compares with it, and a search resolves conflicts with it, without parsing it again."""
    a = mem.add(old)
    c = mem.add(other)
    parsed = _parses(monkeypatch)
    b = mem.add(new)
    assert b.superseded == [a.memory_id]
    assert old not in parsed and other not in parsed and new in parsed
    stored = mem._engines.stores.records.statements("default", [a.memory_id, b.memory_id, c.memory_id])
    assert stored.keys() == {a.memory_id, b.memory_id, c.memory_id}
    parsed.clear()
    hits = mem.search(new, min_relevance=0.0)  # every hit, each resolved from its statement
    assert {b.memory_id, c.memory_id} <= {h.memory.memory_id for h in hits}
    assert parsed == []


def test_a_memory_stored_without_a_statement_is_parsed(mem: Memory,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory written before statements were stored (NULL) is parsed when compared."""
    a = mem.add("The payments queue is rabbit-q-2")
    with mem._engines.stores.records.transaction() as tx:
        tx._x("UPDATE memories SET statement = NULL")  # type: ignore[attr-defined]
    parsed = _parses(monkeypatch)
    b = mem.add("The payments queue is rabbit-q-5")
    assert b.superseded == [a.memory_id]
    assert "The payments queue is rabbit-q-2" in parsed


@pytest.mark.parametrize("stale", [None, '["0123456789abcdef01",false]'])
def test_a_stale_statement_is_written_back_by_the_add_that_parses_it(
        mem: Memory, monkeypatch: pytest.MonkeyPatch, stale: str | None) -> None:
    """A statement stored by other rules (another release: its key differs) or none at all
    is parsed when an add compares with it, and stored again in that add's transaction: the
    next add reads it."""
    a = mem.add("发票服务的负责人是王芳")
    with mem._engines.stores.records.transaction() as tx:
        if stale:
            tx.set_statements("default", {a.memory_id: stale})
        else:
            tx._x("UPDATE memories SET statement = NULL")  # type: ignore[attr-defined]
    parsed = _parses(monkeypatch)
    mem.add("发票服务每周五出对账单")
    assert "发票服务的负责人是王芳" in parsed
    stored = mem._engines.stores.records.statements("default", [a.memory_id])
    assert stored and stored[a.memory_id] != stale
    parsed.clear()
    mem.add("发票服务的对账单改到每周四")
    assert "发票服务的负责人是王芳" not in parsed


def test_a_person_in_a_role_instead_of_another_replaces_only_that_role(mem: Memory) -> None:
    """"Maria now leads the release instead of Tom" retires Tom leading it, not everything
    Tom or another name does; a sentence of no role ("Alice takes the bus instead of Uber")
    retires nothing."""
    lead = mem.add("Tom leads the mobile release.")
    other = mem.add("Tom reviews the quarterly budget.")
    uber = mem.add("Bob drives for Uber on weekends.")
    assert mem.add("Maria now leads the mobile release instead of Tom.").superseded == [
        lead.memory_id]
    assert mem.add("Alice takes the bus instead of Uber.").superseded == []
    live = {h.memory.memory_id for h in mem.search("Tom budget Uber weekends", top_k=10)}
    assert {other.memory_id, uber.memory_id} <= live
