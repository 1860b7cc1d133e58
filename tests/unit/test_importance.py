"""Importance from what a memory is (engines/importance.py), in English and Chinese."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from varvemem import ConfigError, MemoryType, Settings
from varvemem.engines import importance, rules
from varvemem.engines.importance import signals
from varvemem.model import TYPES

CFG = Settings.load().update


@pytest.mark.parametrize(("text", "signal"), [
    # resolutions
    ("Raising the worker count from 4 to 16 sorted it out.", "resolution"),
    ("Bumped the heap to 2g, that did it.", "resolution"),
    ("It works now after clearing the npm cache.", "resolution"),
    ("The restart didn't help, but raising the pool fixed it.", "resolution"),
    ("Restarted chronyd and the dashboards filled in again.", "resolution"),
    ("换了驱动版本，搞定了", "resolution"),
    ("把超时从 3 秒调到 10 秒之后就好了", "resolution"),
    ("重新部署以后不再报错", "resolution"),
    # causes and changes
    ("Turned out the disk was full on node-3.", "cause"),
    ("原因是证书过期了", "cause"),
    ("I rolled back the helm release to 1.4.2.", "change"),
    ("把副本数改成 3", "change"),
    # procedures and commands
    ("First drain the node, then cordon it, then run the upgrade.", "procedure"),
    ("Onboarding: create the schema, load the seed data, then add the org.", "procedure"),
    ("先备份数据库，然后执行迁移脚本，最后重启服务", "procedure"),
    ("run `kubectl rollout restart deploy/api` to pick it up", "command"),
    ("make migrate applies the schema", "command"),
    ("set max_connections=200 in postgresql.conf", "command"),
    # decisions and rules
    ("We'll go with Postgres for the ledger.", "decision"),
    ("定了，新项目统一用 Vue 3", "decision"),
    ("From now on every release needs a changelog entry.", "rule"),
    ("No schema changes on Fridays after 3pm, ever.", "rule"),
    ("以后都必须先在预发验证再上线", "rule"),
    ("生产库禁止直接改数据", "rule"),
    # descriptions of a format or interface
    ("The billing events are CSV with the columns id, amount and currency.", "description"),
    ("The metrics endpoint listens on port 9102.", "description"),
    ("订单服务的日志是 JSON 格式，字段有 ts、level、msg", "description"),
    # confirmations and requests to remember
    ("Confirmed, the backup restore works.", "confirmation"),
    ("验证通过了", "confirmation"),
    ("Keep that in mind for next time.", "remember"),
    ("Note for the future: the VPN drops at midnight.", "remember"),
    ("记一下，周五不发版", "remember"),
    ("以后都这么办", "remember"),
    ("下次记得先看监控", "remember"),
    # failures
    ("The order service keeps throwing 502 errors since this morning.", "failure"),
    ("打包机上的 npm install 总是卡住", "failure"),
])
def test_a_signal_is_read_from_what_the_text_says(text: str, signal: str) -> None:
    assert signal in signals(text)


@pytest.mark.parametrize("text", [
    "ok thanks", "thx", "Great, noted.", "got it", "sounds good", "好的，谢谢", "好了，谢谢",
    "明白了", "收到", "嗯嗯", "ok",
])
def test_thanks_and_acknowledgements_show_nothing(text: str) -> None:
    assert signals(text) == []
    base = TYPES[MemoryType.DIALOGUE].importance
    assert rules.importance(text, base, CFG)[0] == base


@pytest.mark.parametrize("text", [
    "did that fix it?", "Is it working now?", "How did we fix the timeouts in the order service?",
    "still not fixed", "Restarting didn't help.", "If that works we can close the ticket.",
    "还没解决", "是不是修好了？", "上次支付服务超时怎么修好的", "重启了还是不行",
    "see you next time", "下次见", "I always go hiking on Sundays.", "I have to go now",
    "make sure you bring snacks", "Understood, I'll remind the team.", "Let me check the runbook.",
    "I don't remember what happened", "没人记得上周发生了什么", "邮件发送服务的端口是多少",
])
def test_questions_negations_and_chit_chat_are_no_resolution(text: str) -> None:
    seen = signals(text)
    assert not {"resolution", "confirmation", "decision", "rule", "procedure", "remember",
                "command"} & set(seen), seen


def test_a_lesson_is_promoted_a_plain_turn_is_not() -> None:
    promote = Settings.load().lifecycle.promote_above
    for text in ("Raising pool_size from 10 to 40 in config.yaml sorted it out.",
                 "把 npm 源换成公司内部镜像 npm.corp.local 就好了",
                 "Every deploy to staging needs Alice's approval first.",
                 "The gateway logs are JSON lines with the fields ts, req_id and status.",
                 "网关日志是竖线分隔的四列：时间、状态码、耗时、用户 ID。",
                 "定了，新项目统一用 Ant Design，老项目不动。"):
        assert rules.importance(text, TYPES[MemoryType.DIALOGUE].importance, CFG)[0] > promote, text
    for text in ("ok thanks", "Let me check the runbook.", "我查一下运维手册。",
                 "What format do the gateway logs use?", "BigQuery is more mature."):
        assert rules.importance(text, TYPES[MemoryType.DIALOGUE].importance, CFG)[0] <= promote, text


def test_the_signals_seen_are_returned_and_weights_come_from_the_settings() -> None:
    text = "Keep that in mind: the fix was raising the pool."
    imp, seen = rules.importance(text, TYPES[MemoryType.DIALOGUE].importance, CFG)
    assert {"remember", "resolution"} <= set(seen)
    cfg = Settings.load(update={"importance_signals": {"remember": 0.0}}).update
    assert cfg.importance_signals["resolution"] == CFG.importance_signals["resolution"]
    assert rules.importance(text, TYPES[MemoryType.DIALOGUE].importance, cfg)[0] == pytest.approx(
        imp - CFG.importance_signals["remember"])


def test_signal_weights_are_validated() -> None:
    with pytest.raises(ConfigError, match="importance_signals"):
        Settings.load(update={"importance_signals": {"vibes": 0.2}})
    with pytest.raises(ConfigError, match="importance_signals"):
        Settings.load(update={"importance_signals": {"rule": 1.5}})
    with pytest.raises(ConfigError, match="outcome_signals"):
        Settings.load(update={"outcome_signals": ["luck"]})


def test_every_signal_has_a_weight_and_a_meaning() -> None:
    assert set(importance.SIGNALS) == set(CFG.importance_signals)
    assert all(s.meaning for s in importance.SIGNALS.values())
    # a pattern with an empty alternative would match every text
    assert not [n for n, s in importance.SIGNALS.items()
                if s.en.search("") or (s.zh is not None and s.zh.search(""))]


_PHRASES = st.sampled_from([
    "That fixed it.", "Keep that in mind.", "From now on every deploy needs a review.",
    "First stop the consumer, then restart the broker.", "We'll go with NATS.",
    "The logs are JSON lines with the fields ts and msg.", "Run `make deploy`.",
    "搞定了。", "以后都这么办。", "先停服务，然后备份，最后升级。", "记一下。", "The pod crashed.",
    "Confirmed, it works.", "Turned out the cert had expired.", "ok thanks",
])
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80) | \
    st.lists(_PHRASES, max_size=4).map(" ".join)
_TYPES = st.sampled_from(list(MemoryType))


@given(_TEXT, _TYPES)
def test_importance_stays_in_bounds(text: str, mtype: MemoryType) -> None:
    imp, _ = rules.importance(text, TYPES[mtype].importance, CFG)
    assert 0.05 <= imp <= 1.0


@given(_TEXT, _PHRASES, _TYPES)
def test_adding_a_signal_never_lowers_importance(text: str, phrase: str,
                                                 mtype: MemoryType) -> None:
    before, seen = rules.importance(text, TYPES[mtype].importance, CFG)
    for joined in (f"{text}\n{phrase}", f"{phrase}\n{text}"):
        after, more = rules.importance(joined, TYPES[mtype].importance, CFG)
        assert after >= before
        assert set(seen) <= set(more)
