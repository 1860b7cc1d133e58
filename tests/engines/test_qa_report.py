"""mem.qa.report: each Q&A pair with its TTL mode, today's TTL weight, hits and feedback."""

from __future__ import annotations

import math

import pytest

from varvemem import Memory, MemoryType, QaStatus, TTLMode, ValidationError
from varvemem.engines import scoring


def test_report_in_chinese_and_english(mem: Memory, clock) -> None:
    ticket = mem.qa.save("如何提交工单？", "在服务门户点击“新建工单”，填写分类和描述后提交。", 0.9)
    reset = mem.qa.save("How do I reset my password?",
                        "Open Settings > Security and click Reset password.", 0.85,
                        ttl_mode="linear", ttl_days=10)
    fading = mem.qa.save("审核流程需要几天？", "一般审核流程需要 3 个工作日。", 0.8,
                         ttl_mode="exponential")
    other = mem.qa.save("Where is the VPN guide?", "On the wiki.", 0.7, tenant="acme")
    mem.qa.feedback(ticket, "up")
    mem.qa.feedback(ticket, "up")
    mem.qa.feedback(ticket, "down")
    mem.qa.feedback(reset, "followup")
    hits = mem.qa.search("how to reset my password")
    assert hits[0].memory.memory_id == reset
    clock.advance(days=4)

    report = {s.record.memory_id: s for s in mem.qa.report()}
    assert list(report) == sorted(report) and set(report) == {ticket, reset, fading}
    assert other not in report and all(isinstance(s, QaStatus) for s in report.values())
    t, r, f = report[ticket], report[reset], report[fading]
    assert (t.helpful, t.unhelpful, t.followups) == (2, 1, 0)
    assert (r.helpful, r.unhelpful, r.followups) == (0, 1, 1)
    assert t.ttl_mode is TTLMode.OFF and t.weight_today == 1.0
    assert r.ttl_mode is TTLMode.LINEAR and r.weight_today == pytest.approx(0.6, abs=1e-6)
    rate = mem.settings.types[MemoryType.QA].ttl.rate
    assert f.weight_today == pytest.approx(math.exp(-rate * 4), rel=1e-6)
    assert r.hits >= 1 and r.last_hit is not None  # the search served it
    # The same weight the faq ranking applies.
    hit = next(h for h in mem.qa.search("how to reset my password") if h.memory.memory_id == reset)
    assert hit.scores.ttl_weight == pytest.approx(r.weight_today)
    assert scoring.ttl_weight(TTLMode.LINEAR, 4.0, 10.0, rate) == pytest.approx(r.weight_today)
    assert [s.record.memory_id for s in mem.qa.report(tenant="acme")] == [other]
    with pytest.raises(ValidationError, match="tenant"):
        mem.qa.report(tenant=" ")


def test_a_reused_answer_counts_as_a_hit(mem: Memory) -> None:
    pid = mem.qa.save("How do I reset my password?",
                      "Open Settings > Security and click Reset password.", 0.95)
    before = next(s.hits for s in mem.qa.report() if s.record.memory_id == pid)
    res = mem.ask("How do I reset my password?")
    assert res.route == "reuse"
    after = next(s.hits for s in mem.qa.report() if s.record.memory_id == pid)
    assert after == before + 1
