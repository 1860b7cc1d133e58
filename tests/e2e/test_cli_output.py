"""Output piped at 80 columns: every full id that --json returns is in the text, whole, and no
line is wider than the terminal."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from rich.cells import cell_len

from varvemem.stores.base import InboxEvent
from varvemem.stores.sqlite import SqliteStore

from .test_cli import run

WIDE = {"COLUMNS": "80"}
IDS = re.compile(r"\bmem_[0-9a-f]{32}\b")
LONG_EN = ("The order service pulls its images with the regcred secret, which lives in the "
           "namespace of the team that owns the deployment; rotate it every ninety days, "
           "update the helm values file of every environment and restart the pods after.")
LONG_ZH = "订单服务的镜像拉取凭证放在values文件的imagePullSecrets下面" * 4
DELIVERY = "72d3162e-cc78-11e3-81ab-4c9367dc0958"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("output")
    home, doc = root / "home", root / "spec.md"
    run(home, "add", LONG_EN, "--tags", "helm,k8s")
    run(home, "add", LONG_ZH, "--type", "knowledge")
    run(home, "add", "The order service secret rotation is owned by the platform team")
    doc.write_text("# Spec 3.0\n\n## Secrets\n\nThe order service secret is regcred.\n", "utf-8")
    run(home, "ingest", str(doc))
    doc.write_text("# Spec 4.0\n\n## Secrets\n\nThe order service secret is newreg now.\n",
                   "utf-8")
    run(home, "ingest", str(doc))
    run(home, "qa", "add", "where does the order service keep its image pull secret?",
        LONG_EN, "--score", "0.8")
    run(home, "qa", "add", "订单服务的镜像拉取凭证放在哪里" * 5, LONG_ZH, "--score", "0.6")
    run(home, "keys", "create", "--tenant", "acme", "--name", "ci pipeline of the orders team")
    store = SqliteStore(home / "varvemem.db")
    try:
        store.enqueue_event(InboxEvent(event_id=0, tenant="default", source="github",
                                       kind="github", delivery=DELIVERY, body="{}", headers={},
                                       received_at=datetime(2026, 1, 1, tzinfo=timezone.utc)))
    finally:
        store.close()
    return home


def _text_and_json(home: Path, *args: str) -> tuple[str, str]:
    text = run(home, *args, env=WIDE).stdout
    assert text.strip()
    for line in text.splitlines():
        assert cell_len(line) <= 80, line
    return text, run(home, *args, "--json", env=WIDE).stdout


def _superseded(home: Path) -> str:
    hits = json.loads(run(home, "search", "order service secret regcred", "--json",
                          "--include-superseded", "--type", "knowledge").stdout)["hits"]
    mids = [h["memory_id"] for h in hits if "regcred." in h["content"]]
    assert mids
    return mids[0]


@pytest.mark.parametrize("args", [
    ["search", "order service secret"], ["search", "镜像拉取凭证"],
    ["qa", "search", "order service image pull secret"], ["qa", "search", "镜像拉取凭证"],
    ["qa", "list"], ["history", "SUPERSEDED"], ["get", "SUPERSEDED"], ["get", "ZH"],
], ids=" ".join)
def test_piped_output_keeps_every_id_whole_at_80_columns(home: Path, args: list[str]) -> None:
    if "SUPERSEDED" in args:
        args = [_superseded(home) if a == "SUPERSEDED" else a for a in args]
    if "ZH" in args:
        hits = json.loads(run(home, "search", "镜像拉取凭证", "--json").stdout)["hits"]
        args = [hits[0]["memory_id"] if a == "ZH" else a for a in args]
    text, as_json = _text_and_json(home, *args)
    ids = set(IDS.findall(as_json))
    assert ids and all(i in text for i in ids), (ids, text)
    if args[0] == "history":
        assert "superseded_by: None -> mem_" in text and "re-ingested" in text  # the reason


def test_search_hits_are_blocks_clipped_to_three_lines(home: Path) -> None:
    text = run(home, "search", "order service secret", "--top-k", "2", env=WIDE).stdout
    blocks = text.strip().split("\n\n")
    assert len(blocks) == 2
    for block in blocks:
        head, *rest = block.splitlines()
        assert re.fullmatch(r" ?\d\. \d\.\d{3}  \w+  mem_[0-9a-f]{32}", head)
        scores = next(i for i, line in enumerate(rest) if line.startswith("    sem="))
        assert 1 <= scores <= 3  # the content's lines
        assert " via " in " ".join(rest[scores:])
    assert "…" in text  # LONG_EN does not fit in three lines


@pytest.mark.parametrize("args,whole", [
    (["keys", "list"], "key_id"), (["inbox", "list"], "delivery"), (["stats"], "home"),
], ids=" ".join)
def test_service_lists_and_stats_keep_what_one_copies(home: Path, args: list[str],
                                                      whole: str) -> None:
    text, as_json = _text_and_json(home, *args)
    data = json.loads(as_json)
    values = [row[whole] for row in data] if isinstance(data, list) else [data[whole]]
    assert values and all(str(v) in text for v in values), (values, text)
    if args == ["inbox", "list"]:
        assert f"#{data[0]['event_id']}" in text
