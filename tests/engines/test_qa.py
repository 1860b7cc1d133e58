"""L2 scored Q&A memory: save, load, search (relevance x TTL x score), and the qa-*.md mirror
with hand edits and malformed files, in Chinese and English."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.conftest import Clock

from varvemem import Memory, ValidationError


@pytest.fixture
def mem(make_memory: Callable[..., Memory]) -> Memory:
    return make_memory()


def faq(mem: Memory) -> dict[str, str]:
    return {
        "ticket": mem.save_qa("如何提交工单？", "在服务门户点击“新建工单”，填写分类和描述后提交。", 0.9),
        "review": mem.save_qa("审核流程需要几天？", "一般审核流程需要 3 个工作日，加急 1 天。", 0.8),
        "reset": mem.save_qa("How do I reset my password?",
                             "Open Settings > Security and click Reset password.", 0.85,
                             keywords=["password", "reset"]),
    }


def test_save_load_and_search_in_chinese_and_english(mem: Memory) -> None:
    ids = faq(mem)
    pairs = {r.memory_id: r for r in mem.load_all_qa()}
    assert set(pairs) == set(ids.values())
    ticket = pairs[ids["ticket"]]
    assert ticket.question == "如何提交工单？" and ticket.score == 0.9
    assert "工单" in ticket.keywords and "提交" in ticket.keywords  # Chinese 2-grams
    assert pairs[ids["reset"]].keywords == ["password", "reset"]  # given ones are kept
    assert mem.search_qa("工单怎么提交")[0].memory.memory_id == ids["ticket"]
    assert mem.search_qa("审核要多久")[0].memory.memory_id == ids["review"]
    assert mem.search_qa("forgot my password, how to reset it?")[0].memory.memory_id == \
        ids["reset"]


def test_ranking_is_relevance_times_ttl_times_score(mem: Memory, clock: Clock) -> None:
    good = mem.save_qa("How do I rotate the API token?", "Run `acme token rotate`.", 0.9)
    weak = mem.save_qa("How do I rotate the API token quickly?", "Ask someone.", 0.2)
    zero = mem.save_qa("How to rotate API tokens?", "Wrong answer.", 0.0)
    hard = mem.save_qa("Rotating the API token: how?", "Old way.", 0.95, ttl_mode="hard",
                       ttl_days=10)
    hits = mem.search_qa("how do I rotate the API token")
    order = [h.memory.memory_id for h in hits]
    assert order.index(good) < order.index(weak) and zero not in order
    h = hits[0]  # relevance uses the cosine clipped at 0: S_sem = (cos + 1) / 2
    cosine = max(0.0, 2 * h.scores.semantic - 1)
    assert h.score == pytest.approx(
        (0.7 * cosine + 0.3 * h.scores.keyword) * h.scores.ttl_weight * h.memory.score,
        rel=1e-6)
    clock.advance(days=11)
    assert hard not in [x.memory.memory_id for x in mem.search_qa("rotate the API token")]


@pytest.mark.parametrize("kw,error", [
    ({"question": "", "answer": "a"}, "question"),
    ({"question": "q?", "answer": "  "}, "answer"),
    ({"question": "q?", "answer": "a", "score": 1.5}, "score"),
    ({"question": "q?", "answer": "a", "score": True}, "score"),
    ({"question": "q?", "answer": "a", "ttl_mode": "forever"}, "TTL mode"),
])
def test_bad_pairs_are_refused_and_nothing_written(mem: Memory, kw: dict, error: str) -> None:
    with pytest.raises(ValidationError, match=error):
        mem.save_qa(**kw)
    assert mem.load_all_qa() == []


def test_export_edit_import_roundtrip(mem: Memory, tmp_path: Path) -> None:
    ids = faq(mem)
    folder = tmp_path / "qa"
    paths = mem.qa.export(folder)
    assert sorted(p.name for p in paths) == sorted(f"qa-{i}.md" for i in ids.values())
    ticket = folder / f"qa-{ids['ticket']}.md"
    text = ticket.read_text("utf-8")
    assert text.startswith("---\n") and "question: 如何提交工单？" in text
    # A hand edit: a better answer and a higher score.
    ticket.write_text(text.replace("score: 0.9", "score: 0.95").replace(
        "填写分类和描述后提交。", "填写分类、描述和附件后提交，2 小时内响应。"), "utf-8")
    (folder / "qa-new.md").write_text(
        "---\nquestion: 工单可以撤回吗？\nscore: 0.7\n---\n可以，在工单详情页点击撤回。\n", "utf-8")
    report = mem.qa.import_folder(folder)
    assert report["updated"] == [ticket.name] and report["skipped"] == {}
    assert sorted(report["unchanged"]) == sorted(f"qa-{ids[k]}.md" for k in ("review", "reset"))
    new_id = report["created"]["qa-new.md"]
    rec = mem.get(ids["ticket"])
    assert rec.score == 0.95 and "2 小时内响应" in rec.answer
    assert mem.history(ids["ticket"])[-1].reason == f"imported {ticket.name}"
    assert mem.search_qa("工单能撤回吗")[0].memory.memory_id == new_id
    again = mem.qa.import_folder(folder)  # the file without an id is found again, not doubled
    assert again["created"] == {"qa-new.md": new_id} and again["updated"] == []
    assert len(mem.load_all_qa()) == 4


def test_an_edited_question_is_matched_as_written_now(mem: Memory) -> None:
    """A pair is embedded by its question: after an edit, the new question finds it straight
    from memory and the old one no longer does."""
    pid = mem.save_qa("How do I rotate the deploy token?",
                      "Run `vault rotate deploy` and update the CI secret.", 0.9)
    mem.qa.update(pid, question="Where are the nightly database backups kept?",
                  answer="In s3://ops-backups/nightly, kept for 30 days.")
    new = mem.ask("Where are the nightly database backups kept?")
    assert new.route == "reuse" and (new.matched or {}).get("id") == pid
    assert mem.ask("How do I rotate the deploy token?").route != "reuse"
    assert mem.get(pid, with_embedding=True).embedding == pytest.approx(  # stored as f16
        mem.embedder().embed_documents(["Where are the nightly database backups kept?"])[0]
        .tolist(), abs=1e-3)


@pytest.mark.parametrize("name,text,why", [
    ("qa-nofm.md", "just an answer\n", "front matter"),
    ("qa-list.md", "---\n- a\n- b\n---\nbody\n", "front matter|mapping"),
    ("qa-tag.md", "---\nquestion: !!python/object/apply:os.system ['echo hi']\n---\nx\n",
     "YAML"),
    ("qa-score.md", "---\nquestion: q?\nscore: 2\n---\nx\n", "score"),
    ("qa-empty.md", "---\nquestion: '  '\n---\nx\n", "question"),
    ("qa-body.md", "---\nquestion: q?\n---\n\n", "answer"),
    ("qa-field.md", "---\nquestion: q?\nowner: me\n---\nx\n", "unknown field"),
    ("qa-ttl.md", "---\nquestion: q?\nttl_mode: forever\n---\nx\n", "ttl_mode"),
    ("qa-bytes.md", None, "UTF-8"),
])
def test_malformed_files_are_named_and_skipped(mem: Memory, tmp_path: Path, name: str,
                                               text: str | None, why: str) -> None:
    folder = tmp_path / "qa"
    folder.mkdir()
    bad = folder / name
    if text is None:
        bad.write_bytes(b"---\nquestion: \xff\xfe\n---\nx\n")
    else:
        bad.write_text(text, "utf-8")
    (folder / "qa-good.md").write_text("---\nquestion: ok?\nscore: 0.6\n---\nyes\n", "utf-8")
    report = mem.qa.import_folder(folder)
    assert list(report["skipped"]) == [name]
    import re

    assert re.search(why, report["skipped"][name])
    assert list(report["created"]) == ["qa-good.md"]
    assert [r.question for r in mem.load_all_qa()] == ["ok?"]


def test_import_needs_a_folder(mem: Memory, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="not a folder"):
        mem.qa.import_folder(tmp_path / "missing")


def test_near_duplicate_pairs_become_one_better_pair(mem: Memory) -> None:
    first = mem.save_qa("How do I restart the payment service?", "Ask the on-call.", 0.6)
    better = mem.save_qa("How do I restart the payment service?",
                         "Run `kubectl rollout restart deploy/payment -n pay`.", 0.9)
    assert better != first
    assert [r.memory_id for r in mem.load_all_qa()] == [better]
    old = mem.get(first)
    assert old.superseded_by == better and old.valid_to is not None
    assert mem.history(first)[-1].reason == "a better-scored answer to the same question"
    assert [h.memory.memory_id for h in mem.search_qa("restart the payment service")] == [
        better]
    worse = mem.save_qa("How do I restart the payment service?", "Reboot the cluster.", 0.3)
    assert worse == better  # merged into the better pair, its answer kept in history
    entry = mem.history(better)[-1]
    assert entry.action == "merge" and "Reboot the cluster." in entry.new["merged_content"]
    assert mem.get(better).answer.startswith("Run `kubectl")


def test_pairs_are_shared_across_users_of_a_tenant_only_when_allowed(
        make_memory: Callable[..., Memory]) -> None:
    mem = make_memory()
    mem.save_qa("Where is the staging VPN profile?", "In the IT portal.", 0.9, user="u1")
    assert mem.ask("Where is the staging VPN profile?", user="u2").route == "reuse"
    assert mem.ask("Where is the staging VPN profile?", tenant="other").route == "normal"
    private = make_memory(faq={"share_across_users": False})
    assert private.ask("Where is the staging VPN profile?", user="u2").route == "normal"
    assert private.ask("Where is the staging VPN profile?", user="u1").route == "reuse"
