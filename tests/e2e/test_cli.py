"""End to end through the real command line, in English and Chinese."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def run(home: Path, *args: str, env: dict[str, str] | None = None,
        ok: bool = True) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "varvemem", "--home", str(home), *args],
                          capture_output=True, text=True, env=full_env, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_add_search_get_history_delete_in_english_and_chinese(tmp_path: Path) -> None:
    home = tmp_path / "home"
    en = run(home, "add", "The order service pulls images with the regcred secret",
             "--tags", "helm,k8s", "--source", "tool:kubectl", "--user", "u1").stdout.strip()
    zh = run(home, "add", "订单服务的镜像拉取凭证放在 values.yaml 的 imagePullSecrets 下",
             "--type", "knowledge", "--importance", "0.9").stdout.strip()
    assert en.startswith("mem_") and zh.startswith("mem_") and en != zh
    assert run(home, "add", "The order service pulls images with the regcred secret",
               "--tags", "helm,k8s", "--user", "u1").stdout.strip() == en  # duplicate

    out = json.loads(run(home, "search", "which secret does the order service use?",
                         "--json").stdout)
    assert out["query"].startswith("which secret")
    hit = out["hits"][0]
    assert hit["memory_id"] == en
    assert set(hit) >= {"memory_id", "content", "memory_type", "tier", "tags", "source", "score",
                        "scores"}
    assert set(hit["scores"]) >= {"semantic", "keyword", "tag", "recency", "importance",
                                  "reliability"}
    assert hit["source"] == "tool:kubectl" and {"helm", "k8s"} <= set(hit["tags"])

    out = json.loads(run(home, "search", "镜像拉取凭证放在哪里", "--json", "--top-k", "1").stdout)
    assert [h["memory_id"] for h in out["hits"]] == [zh]
    assert json.loads(run(home, "search", "regcred", "--user", "u2", "--json").stdout)[
        "hits"] == []
    assert "订单服务" in run(home, "search", "镜像拉取凭证").stdout

    rec = json.loads(run(home, "get", zh, "--json").stdout)
    assert rec["importance"] == 0.9 and rec["memory_type"] == "knowledge"
    assert "镜像" in rec["keywords"]
    assert "imagePullSecrets" in run(home, "context", "镜像拉取凭证", "--max-tokens", "200").stdout

    run(home, "delete", en, "--reason", "rotated")
    hist = json.loads(run(home, "history", en, "--json").stdout)
    assert [h["action"] for h in hist] == ["create", "delete"]
    assert hist[-1]["reason"] == "rotated"
    stats = json.loads(run(home, "stats", "--json").stdout)
    assert stats["memories"] == 1 and stats["embedder"]["dim"] == 512


def test_ingest_and_reingest(tmp_path: Path) -> None:
    home, doc = tmp_path / "home", tmp_path / "spec.md"
    doc.write_text("# Spec 3.0\n\n## PRs\n\nRun the local smoke test before a PR.\n", "utf-8")
    assert "1 chunk(s) added" in run(home, "ingest", str(doc)).stdout
    doc.write_text("# Spec 4.0\n\n## PRs\n\nSmoke tests run in CI; no local run needed.\n",
                   "utf-8")
    report = json.loads(run(home, "ingest", str(doc), "--json").stdout)
    assert len(report["added"]) == 1 and len(report["invalidated"]) == 1
    hits = json.loads(run(home, "search", "smoke test before a PR", "--json").stdout)["hits"]
    assert [h["content"] for h in hits] == ["PRs\n\nSmoke tests run in CI; no local run needed."]


def test_config_show_reports_weights_and_environment(tmp_path: Path) -> None:
    data = json.loads(run(tmp_path, "config", "show", "--json",
                          env={"VARVEMEM_RETRIEVAL__TOP_K": "4"}).stdout)
    assert data["retrieval"]["top_k"] == 4
    assert sum(data["retrieval"]["profiles"]["default"]["weights"].values()) == pytest.approx(1)
    text = run(tmp_path, "config", "show").stdout
    assert "retrieval.profiles.default.weights.semantic = " in text


@pytest.mark.parametrize("args,env,message", [
    (["add", "   "], None, "error: content is empty"),
    (["add", "x", "--type", "gossip"], None, "unknown memory type 'gossip'"),
    (["add", "x" * 100], {"VARVEMEM_UPDATE__MAX_CONTENT_BYTES": "64"},
     "over the limit of 64 (update.max_content_bytes)"),
    (["get", "mem_unknown"], None, "error: no memory mem_unknown"),
    (["delete", "mem_unknown"], None, "error: no memory mem_unknown"),
    (["history", "mem_unknown"], None, "error: no memory mem_unknown"),
    (["search", "x"], {"VARVEMEM_RETRIEVAL__PROFILES": '{"default":{"weights":{"tag":0.9}}}'},
     "retrieval.profiles.default.weights: weights must sum to 1"),
    (["search", "x", "--profile", "nope"], None, "unknown retrieval profile 'nope'"),
])
def test_bad_input_is_one_line_and_exit_1(tmp_path: Path, args: list[str],
                                          env: dict[str, str] | None, message: str) -> None:
    run(tmp_path / "home", "init")
    proc = run(tmp_path / "home", *args, env=env, ok=False)
    assert proc.returncode == 1
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [
    [b"add", b"ok", b"--user", b"\xed\xa0\x80"], [b"get", b"\xff"],
    [b"close-session", b"\xff"], [b"keys", b"create", b"--tenant", b"\xff"],
    [b"search", b"caf\xe9"], [b"qa", b"add", b"q?", b"\xc3"], [b"ingest", b"\xff.md"],
    [b"--home", b"\xff", b"stats"]])
def test_an_argument_that_is_not_utf8_is_one_line_and_exit_2(tmp_path: Path,
                                                              args: list[bytes]) -> None:
    home = tmp_path / "home"
    run(home, "add", "The release train leaves on tuesdays")
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    proc = subprocess.run([sys.executable, "-m", "varvemem", "--home", str(home), *args],
                          capture_output=True, env=env, timeout=120)
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "is not UTF-8 text" in err
    assert json.loads(run(home, "stats", "--json").stdout)["current"] == 1


def test_home_that_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for args in (["stats"], ["add", "x"]):
        proc = run(tmp_path / "file", *args, ok=False)
        assert proc.returncode == 1
        assert proc.stderr == f"error: home {tmp_path / 'file'} is not a folder\n"


def test_corrupted_vector_index_is_rebuilt_and_reported(tmp_path: Path) -> None:
    home = tmp_path / "home"
    mid = run(home, "add", "the payments team owns the PSP adapter").stdout.strip()
    (home / "vectors" / "vectors.npz").write_bytes(b"not an index")
    proc = run(home, "search", "who owns the PSP adapter", "--json")
    assert json.loads(proc.stdout)["hits"][0]["memory_id"] == mid
    assert "note: vector index rebuilt from SQLite" in proc.stderr
    assert "vector index rebuilt: 1 vectors" in run(home, "reindex").stdout


def test_lifecycle_by_time_travel_through_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"
    turn = run(home, "add", "the flaky checkout test needed a longer timeout", "--type",
               "dialogue", "--session", "s1", "--importance", "0.3",
               "--now", "2026-01-01T09:00:00Z").stdout.strip()
    assert json.loads(run(home, "get", turn, "--json").stdout)["tier"] == "active"
    out = run(home, "close-session", "s1", "--now", "2026-01-01T09:10:00Z").stdout
    assert "1 memories moved to short_term" in out
    report = json.loads(run(home, "consolidate", "--json", "--now",
                            "2026-01-09T10:00:00Z").stdout)
    forget = next(j for j in report["jobs"] if j["name"] == "forget")
    assert forget["counts"] == {"archived": 1}
    assert report["tiers_after"]["archive"] == 1 and report["tiers_before"]["short_term"] == 1
    again = json.loads(run(home, "consolidate", "--json", "--now",
                           "2026-01-09T10:00:00Z").stdout)
    # The same jobs ran again and found nothing left to do.
    assert [j["name"] for j in again["jobs"]] == [j["name"] for j in report["jobs"]]
    assert "forget" in [j["name"] for j in again["jobs"]]
    assert [j["counts"] for j in again["jobs"]] == [{}] * len(report["jobs"])
    live = json.loads(run(home, "search", "flaky checkout test", "--json").stdout)["hits"]
    assert turn not in [h["memory_id"] for h in live]
    hits = json.loads(run(home, "search", "flaky checkout test", "--archive", "--json").stdout)
    assert hits["hits"][0]["memory_id"] == turn and hits["hits"][0]["tier"] == "archive"
    assert "restored" in run(home, "restore", turn, "--now", "2026-01-10T00:00:00Z").stdout
    assert json.loads(run(home, "get", turn, "--json").stdout)["tier"] == "short_term"
    assert "ran sessions" in run(home, "worker", "--once", "--now",
                                 "2026-01-10T00:00:00Z").stderr
    bad = run(home, "search", "x", "--now", "yesterday", ok=False)
    assert bad.returncode == 2 and "ISO 8601" in bad.stderr
    bad = run(home, "consolidate", "--jobs", "nap", ok=False)
    assert bad.returncode == 1 and "unknown lifecycle job" in bad.stderr
    bad = run(home, "restore", turn, ok=False)
    assert bad.returncode == 1 and "not archived" in bad.stderr


def test_qa_pairs_through_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"
    mid = run(home, "qa", "add", "如何提交工单？", "在服务门户点击新建工单。", "--score", "0.9",
              "--keywords", "工单,提交").stdout.strip()
    assert mid.startswith("mem_")
    listed = json.loads(run(home, "qa", "list", "--json").stdout)
    assert listed[0]["id"] == mid and listed[0]["keywords"] == ["工单", "提交"]
    hits = json.loads(run(home, "qa", "search", "工单怎么提交", "--json").stdout)["hits"]
    assert hits[0]["memory_id"] == mid and hits[0]["qa_score"] == 0.9
    folder = tmp_path / "qa"
    assert "wrote 1 file(s)" in run(home, "qa", "export", str(folder)).stdout
    (folder / "qa-bad.md").write_text("---\n- not a mapping\n---\nx\n", "utf-8")
    out = run(home, "qa", "import", str(folder)).stdout
    assert "0 created, 0 updated, 1 unchanged, 1 skipped" in out and "qa-bad.md" in out
    bad = run(home, "qa", "add", "q?", "a", "--score", "3", ok=False)  # a usage error
    assert bad.returncode == 2 and "Invalid value for '--score'" in bad.stderr


def test_ask_through_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run(home, "qa", "add", "如何提交工单？", "在服务门户点击新建工单。", "--score", "0.9")
    out = json.loads(run(home, "ask", "工单怎么提交", "--json", "--session", "s1").stdout)
    assert out["route"] == "reuse" and out["answer"] == "在服务门户点击新建工单。"
    assert out["matched"]["question"] == "如何提交工单？" and out["ms"] > 0
    assert json.loads(run(home, "ask", "你好", "--json").stdout)["route"] == "skip"
    assert (home / "sessions" / "s1.md").read_text("utf-8").count("varvemem turn") == 2
    pid = out["matched"]["id"]
    assert run(home, "qa", "feedback", pid, "down").stdout.strip() == f"{pid} score 0.70"
    bad = run(home, "qa", "feedback", pid, "meh", ok=False)
    assert bad.returncode == 1 and "not one of" in bad.stderr


def test_delete_user_asks_first_and_reports_what_went_where(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run(home, "add", "用户小林的工位在 4 楼 B 区", "--user", "xiaolin")
    run(home, "add", "Xiaolin's VPN token expires in March", "--user", "xiaolin")
    kept = run(home, "add", "The office VPN is vpn.corp.example", "--user", "mei").stdout.strip()
    refused = subprocess.run([sys.executable, "-m", "varvemem", "--home", str(home),
                              "delete-user", "xiaolin"], input="n\n", capture_output=True,
                             text=True, timeout=120)
    assert refused.returncode == 1 and "cannot be undone" in refused.stdout
    assert len(json.loads(run(home, "search", "VPN token 工位", "--user", "xiaolin",
                              "--min-relevance", "0", "--json").stdout)["hits"]) == 2
    report = json.loads(run(home, "delete-user", "xiaolin", "--yes", "--json").stdout)
    assert report["user"] == "xiaolin" and report["live"] == 2 and report["derived"] == 0
    assert json.loads(run(home, "search", "VPN token 工位", "--user", "xiaolin",
                          "--min-relevance", "0", "--json").stdout)["hits"] == []
    assert json.loads(run(home, "get", kept, "--json").stdout)["content"].startswith("The office")
    assert "session_turns" in run(home, "delete-user", "nobody", "--yes").stdout
