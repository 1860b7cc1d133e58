"""Reading files from folders (``qa import``, document ingest): YAML alias bombs and oversized
keyword lists are refused, FIFOs are skipped unopened, symlinks out of the folder are refused
unless allowed, a UTF-8 BOM is accepted; and the feedback state of one tenant's session is
never another's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.conftest import Clock

from varvemem import Memory, ValidationError

GOOD = "---\nquestion: How do I reset my password?\nscore: 0.8\n---\nOpen Settings.\n"


@pytest.fixture
def mem(make_memory: Callable[..., Memory]) -> Memory:
    return make_memory()


@pytest.fixture
def deadline() -> Iterator[None]:
    """Fail (rather than hang) if the test blocks, e.g. opening a FIFO, for 20 seconds."""
    def hung(*_: object) -> None:
        raise TimeoutError("blocked: a FIFO was opened")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "qa"
    folder.mkdir()
    return folder


def test_a_yaml_alias_bomb_is_refused_quickly_and_nothing_stored(mem: Memory,
                                                                tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    # Each alias is the whole 2 KB word: 14 KB of file, 4 MB of keywords once expanded (the
    # issue's 64 KB file made a 382 MB record).
    word = "lol" * 700
    bomb = f"---\nquestion: q?\nsource_file: &w {word}\nkeywords: [{', '.join(['*w'] * 2000)}]"
    (folder / "qa-bomb.md").write_text(bomb + "\n---\nboom\n", "utf-8")
    started = time.perf_counter()
    report = mem.qa.import_folder(folder)
    assert time.perf_counter() - started < 5
    assert list(report["skipped"]) == ["qa-bomb.md"]
    assert "aliases" in report["skipped"]["qa-bomb.md"]
    assert report["created"] == {} and mem.load_all_qa() == []


def test_a_file_that_cannot_be_parsed_is_skipped_and_the_others_imported(
        mem: Memory, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "qa-deep.md").write_text("---\nquestion: " + "[" * 3000 + "]" * 3000
                                       + "\n---\nanswer\n", "utf-8")
    (folder / "qa-deep-map.md").write_text("---\nquestion: q?\nsource_file: " + "{a: " * 3000
                                           + "1" + "}" * 3000 + "\n---\nanswer\n", "utf-8")
    (folder / "qa-nul.md").write_text("---\nquestion: why\x00?\n---\nanswer\n", "utf-8")
    (folder / "qa-ok.md").write_text("---\nquestion: How do I rotate the deploy key?\n---\n"
                                     "Run `keys rotate`.\n", "utf-8")
    report = mem.qa.import_folder(folder)
    assert list(report["created"]) == ["qa-ok.md"]
    assert report["skipped"].keys() == {"qa-deep.md", "qa-deep-map.md", "qa-nul.md"}
    assert all("\n" not in why for why in report["skipped"].values())
    assert "nested too deep" in report["skipped"]["qa-deep.md"]


def test_keywords_over_the_add_limit_are_refused(make_memory: Callable[..., Memory],
                                                 tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    kws = ", ".join(f"k{i}" for i in range(11))
    (folder / "qa-many.md").write_text(
        f"---\nquestion: q?\nkeywords: [{kws}]\n---\nanswer\n", "utf-8")
    report = make_memory().qa.import_folder(folder)
    assert "update.keywords_max" in report["skipped"]["qa-many.md"]
    roomy = make_memory(update={"keywords_max": 20}).qa.import_folder(folder)
    assert list(roomy["created"]) == ["qa-many.md"]


def test_saving_or_updating_a_pair_checks_its_keywords(mem: Memory) -> None:
    many = [f"k{i}" for i in range(11)]
    with pytest.raises(ValidationError, match=r"11 keywords.*update\.keywords_max"):
        mem.save_qa("q?", "a", 0.5, keywords=many)
    pid = mem.save_qa("q?", "a", 0.5, keywords=["  vpn ", "", "token"])
    assert mem.get(pid).keywords == ["vpn", "token"]
    with pytest.raises(ValidationError, match=r"update\.keywords_max"):
        mem.qa.update(pid, keywords=many)
    with pytest.raises(ValidationError, match="list of text"):
        mem.qa.update(pid, keywords="vpn")
    assert mem.get(pid).keywords == ["vpn", "token"]


def test_an_oversized_file_is_refused_unread(make_memory: Callable[..., Memory],
                                             tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "qa-big.md").write_text(GOOD + "x" * 5000, "utf-8")
    report = make_memory(update={"max_content_bytes": 1024}).qa.import_folder(folder)
    assert "larger than" in report["skipped"]["qa-big.md"]


def test_a_fifo_is_skipped_without_opening_it(mem: Memory, tmp_path: Path,
                                              deadline: None) -> None:
    folder = _folder(tmp_path)
    os.mkfifo(folder / "qa-pipe.md")
    (folder / "qa-good.md").write_text(GOOD, "utf-8")
    report = mem.qa.import_folder(folder)
    assert "FIFO" in report["skipped"]["qa-pipe.md"]
    assert list(report["created"]) == ["qa-good.md"]


def test_qa_import_on_the_command_line_names_the_fifo_it_skipped(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    os.mkfifo(folder / "qa-pipe.md")
    (folder / "qa-good.md").write_text(GOOD, "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    proc = subprocess.run([sys.executable, "-m", "varvemem", "--home", str(tmp_path / "home"),
                           "qa", "import", str(folder)], capture_output=True, text=True,
                          env=env, timeout=120)  # a FIFO opened would block until then
    assert proc.returncode == 0, proc.stderr
    assert "1 created" in proc.stdout and "1 skipped" in proc.stdout
    assert "skipped qa-pipe.md: not a regular file (a FIFO)" in proc.stdout


def test_symlinks_inside_are_read_outside_refused_unless_allowed(
        make_memory: Callable[..., Memory], tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "sub").mkdir()
    (folder / "sub" / "real.md").write_text(GOOD, "utf-8")
    (folder / "qa-inside.md").symlink_to(folder / "sub" / "real.md")
    outside = tmp_path / "elsewhere.md"
    outside.write_text(GOOD.replace("reset my password", "find the VPN"), "utf-8")
    (folder / "qa-outside.md").symlink_to(outside)
    report = make_memory().qa.import_folder(folder)
    assert list(report["created"]) == ["qa-inside.md"]
    assert "outside" in report["skipped"]["qa-outside.md"]
    assert "follow_symlinks_outside" in report["skipped"]["qa-outside.md"]
    allowed = make_memory(update={"follow_symlinks_outside": True}).qa.import_folder(folder)
    assert "qa-outside.md" in allowed["created"] and allowed["skipped"] == {}


def test_a_utf8_bom_is_accepted(mem: Memory, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "qa-bom.md").write_bytes(b"\xef\xbb\xbf" + GOOD.encode("utf-8"))
    report = mem.qa.import_folder(folder)
    assert list(report["created"]) == ["qa-bom.md"] and report["skipped"] == {}
    assert [r.question for r in mem.load_all_qa()] == ["How do I reset my password?"]


def test_ingest_skips_fifos_and_symlinks_out_of_the_folder(
        make_memory: Callable[..., Memory], tmp_path: Path, deadline: None) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("\ufeffThe VPN address is vpn.example.com.\n", "utf-8")
    os.mkfifo(docs / "pipe.md")
    outside = tmp_path / "secret.md"
    outside.write_text("The admin password is hunter2.\n", "utf-8")
    (docs / "link.md").symlink_to(outside)
    report = make_memory().ingest(docs)
    assert report.files == 1
    assert any("pipe.md" in s and "FIFO" in s for s in report.skipped)
    assert any("link.md" in s and "outside" in s for s in report.skipped)
    allowed = make_memory(update={"follow_symlinks_outside": True}).ingest(docs)
    assert allowed.files == 2 and not any("link.md" in s for s in allowed.skipped)


def test_feedback_state_of_acme_x_y_is_not_that_of_acme_x_dot_y(mem: Memory,
                                                                clock: Clock) -> None:
    """Tenant ``acme.x`` session ``y`` and tenant ``acme`` session ``x.y`` once shared
    ``faq.last.acme.x.y``: the second's question erased the first's follow-up feedback."""
    pid = mem.save_qa("How do I reset my password?", "Open Settings > Security, click Reset.",
                      0.9, tenant="acme.x")
    assert mem.ask("How do I reset my password?", session="y", tenant="acme.x").route == "reuse"
    mem.ask("what is the VPN address?", session="x.y", tenant="acme")
    clock.advance(minutes=1)
    mem.ask("and where is Settings?", session="y", tenant="acme.x")  # a follow-up
    assert mem.get(pid, tenant="acme.x").score == pytest.approx(0.85)


def test_a_file_with_a_nul_is_skipped_by_name_and_the_others_ingested(mem: Memory,
                                                                      tmp_path: Path) -> None:
    (tmp_path / "nul.md").write_text("# Notes\n\nbinary \x00 inside\n", "utf-8")
    (tmp_path / "good.md").write_text("# Runbook\n\nRestart the queue with `qctl bounce`.\n",
                                      "utf-8")
    report = mem.ingest([tmp_path / "nul.md", tmp_path / "good.md"])
    assert report.files == 1 and report.skipped == [f"{tmp_path / 'nul.md'}: holds U+0000 "
                                                    "(a NUL character): not a text file"]
    assert mem.search("how do I restart the queue?", top_k=1)[0].memory.content.endswith(
        "Restart the queue with `qctl bounce`.")
