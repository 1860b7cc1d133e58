"""``varvemem bench``: retrieval benchmarks on public data sets, baselines in the same run."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ..errors import ValidationError
from ._app import Group, app, console, err_console, print_json, split_csv

bench_app = typer.Typer(cls=Group, no_args_is_help=True,
                        help="Measure retrieval on LoCoMo and LongMemEval (data read in place) "
                             "and behaviour on built-in cases.")
app.add_typer(bench_app, name="bench")


def _ks(value: str) -> list[int]:
    try:
        ks = [int(k) for k in split_csv(value) or []]
    except ValueError:
        raise ValidationError(f"--k {value!r} must be whole numbers separated by commas") from None
    if not ks or min(ks) < 1:
        raise ValidationError(f"--k {value!r} must be whole numbers of at least 1")
    return ks


@contextmanager
def _workdir(path: Path | None) -> Iterator[Path]:
    """The benchmark's homes: ``path`` when given (kept), else a temporary folder (removed);
    never the user's own home."""
    if path is not None:
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="varvemem-bench-") as tmp:
        yield Path(tmp)


@contextmanager
def _progress() -> Iterator[Callable[[str, int, int], None]]:
    # Imported here: rich.progress is the heaviest of rich's modules, and only a bench draws it.
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True,
                  disable=not err_console.is_terminal) as bar:
        tasks: dict[str, Any] = {}

        def update(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=total)
            bar.update(tasks[label], completed=done)

        yield update


def _pct(v: Any) -> str:
    return "" if v is None else f"{100 * v:.1f}"


def _table(title: str, columns: list[str]) -> Table:
    """A results table: the system's name, then right-aligned figures."""
    table = Table(title=title)
    table.add_column("system")
    for c in columns:
        table.add_column(c, justify="right")
    return table


@bench_app.command("locomo")
def locomo_cmd(
    data: Path = typer.Option(..., "--data", help="Path to locomo10.json."),
    conversations: int | None = typer.Option(None, "--conversations", help="First N only."),
    k: str = typer.Option("5,10,25", "--k", help="Cut-offs for recall@k."),
    embedders: str | None = typer.Option(
        None, "--embedders", help="Embedders to compare (default: every installed one)."),
    workdir: Path | None = typer.Option(None, "--workdir",
                                        help="Keep the benchmark's homes here."),
    json_out: bool = typer.Option(False, "--json", help="One JSON object on stdout."),
) -> None:
    """Turn-level recall@k, NDCG@10 and MRR on LoCoMo, against BM25 and dense baselines."""
    from ..benchmarks import locomo

    ks = _ks(k)
    with _workdir(workdir) as root, _progress() as progress:
        result = locomo.run(data, root, conversations=conversations, ks=ks,
                            embedders=split_csv(embedders), progress=progress)
    if json_out:
        print_json(result)
        return
    ev = result["evidence_ids"]
    console.print(f"LoCoMo: {result['conversations']} conversations, {result['turns']} turns, "
                  f"{result['questions']} questions. Evidence ids repaired: {ev['repaired']}, "
                  f"unknown and dropped: {ev['unknown_dropped']}; questions without evidence "
                  f"skipped: {ev['questions_without_evidence']}.")
    cols = [f"recall@{x}" for x in result["k"]] + ["ndcg@10", "mrr"]
    table = _table("Recall and ranking (%), search latency (ms), add rate (turns/s)",
                   [*cols, "p50", "p95", "add/s"])
    for name, s in result["systems"].items():
        table.add_row(name, *(_pct(s.get(c)) for c in cols), f"{s['search_p50_ms']:.1f}",
                      f"{s['search_p95_ms']:.1f}", f"{s['add_per_second']:.0f}")
    for name, pub in result["published"].items():
        table.add_row(f"[dim]{name}[/dim]", *(_pct(pub.get(c)) for c in cols), "", "", "")
    console.print(table)
    names = list(next(iter(result["systems"].values()))["by_category"])
    cats = _table("recall@10 by category (%)", names)
    for name, s in result["systems"].items():
        cats.add_row(name, *(_pct(s["by_category"][c].get("recall@10")) for c in names))
    console.print(cats)


@bench_app.command("longmemeval")
def longmemeval_cmd(
    data: Path = typer.Option(..., "--data", help="Folder with the LongMemEval_S haystacks."),
    k: str = typer.Option("5,10", "--k", help="Cut-offs."),
    workdir: Path | None = typer.Option(None, "--workdir",
                                        help="Keep the benchmark's homes here."),
    json_out: bool = typer.Option(False, "--json", help="One JSON object on stdout."),
) -> None:
    """Session-level recall_all@k and ndcg_any@k on LongMemEval_S haystacks (a smoke test)."""
    from ..benchmarks import longmemeval

    ks = _ks(k)
    with _workdir(workdir) as root, _progress() as progress:
        result = longmemeval.run(data, root, ks=ks, progress=progress)
    if json_out:
        print_json(result)
        return
    q = result["questions"]
    console.print(f"LongMemEval_S: {result['haystacks']} haystacks, {result['sessions']} "
                  f"sessions; {q['official']} official and {q['derived']} derived questions.")
    for part in ("official", "derived"):
        cols = [f"{m}@{x}" for x in result["k"] for m in ("recall_all", "ndcg_any")]
        table = _table(f"{part} questions (%)", cols)
        for name, s in result["systems"].items():
            table.add_row(name, *(_pct(s[part].get(c)) for c in cols))
        console.print(table)


def _metric(name: str, value: Any) -> str:
    if value is None:
        return f"{name} n/a"
    if name.startswith("mean_"):
        return f"{name} {value:.1f}"
    if isinstance(value, float):
        return f"{name} {100 * float(value):.1f}"
    return f"{name} {value}"


@bench_app.command("behaviour")
def behaviour_cmd(
    family: list[str] = typer.Option([], "--family", help="Only these families (repeatable)."),
    lang: str | None = typer.Option(None, "--lang", help="Only zh or en."),
    limit: int | None = typer.Option(None, "--limit", min=1,
                                     help="At most N cases per family and language."),
    seed: int = typer.Option(0, "--seed", help="Seed of the template cases."),
    workdir: Path | None = typer.Option(None, "--workdir",
                                        help="Keep the benchmark's homes here."),
    json_out: bool = typer.Option(False, "--json", help="One JSON object on stdout."),
) -> None:
    """Whether the engine learns correctly from people's own words (zh/en, offline)."""
    from ..benchmarks import behaviour

    if lang is not None and lang not in behaviour.LANGS:
        raise ValidationError(f"--lang {lang!r} must be one of {', '.join(behaviour.LANGS)}")
    families = [f for v in family for f in split_csv(v) or []]
    with _workdir(workdir) as root, _progress() as progress:
        result = behaviour.run(root, families=families or None, lang=lang, limit=limit,
                               seed=seed, progress=progress)
    if json_out:
        print_json(result)
        return
    cases = result["cases"]
    console.print(f"Behaviour: {cases['template']} template and {cases['hand']} hand-written "
                  f"cases, seed {result['seed']}, {result['seconds']:.0f} s.")
    table = Table(title="Behaviour: score per family and language (%; target in brackets)")
    for col in ("family", "lang", "cases", "score", "pass"):
        table.add_column(col, justify="right" if col == "cases" else "left")
    for name, fam in result["families"].items():
        for lg, row in fam["by_lang"].items():
            metrics = row["metrics"]
            shown = [f"{_metric(k, metrics.get(k))} [{t['op']} {_bound(k, t['value'])}]"
                     for k, t in fam["targets"].items()]
            shown += [_metric(k, v) for k, v in metrics.items()
                      if k not in fam["targets"] and isinstance(v, float)][:2]
            verdict = {True: "yes", False: "[red]no[/red]", None: ""}[row["pass"]]
            table.add_row(name, lg, f"{row['cases']} ({row['hand']} hand)", "\n".join(shown),
                          verdict)
    console.print(table)
    for name, fam in result["families"].items():
        console.print(f"[bold]{name}[/bold]: {fam['meaning']}. Target: {fam['target_text']}.")


def _bound(name: str, value: float) -> str:
    return f"{value:g}" if name.endswith("skipped") else f"{100 * value:g}"


@bench_app.command("truth")
def truth_cmd(
    data: Path = typer.Option(Path("training/truth"), "--data",
                              help="The writers' cases (training/truth in a checkout)."),
    split: str = typer.Option("dev", "--split", help="train, dev, ids (a dev set of the identifier "
                              "family) or a held-out split (numbers only): test, fresh, fresh2, "
                              "fresh3."),
    writer: list[str] = typer.Option([], "--writer",
                                     help="These writers instead of a split (repeatable)."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="At most N cases."),
    workdir: Path | None = typer.Option(None, "--workdir",
                                        help="Keep the benchmark's home here."),
    json_out: bool = typer.Option(False, "--json", help="One JSON object on stdout."),
) -> None:
    """The current fact on cases written by other hands: stale facts served, look-alikes
    retired (the test split prints numbers only)."""
    from ..benchmarks import truth

    writers = [w for v in writer for w in split_csv(v) or []]
    with _workdir(workdir) as root, _progress() as progress:
        result = truth.run(data, root, split=None if writers else split,
                           writers=writers or None, limit=limit, progress=progress)
    if json_out:
        print_json(result)
        return
    console.print(f"Truth: {result['cases']} cases of {', '.join(result['writers'])}, "
                  f"{result['seconds']:.0f} s.")
    table = Table(title="Stale served / new first over updates; retired and marked over "
                        "both-true (%)")
    for col in ("group", "updates", "stale", "new first", "kept pairs", "retired", "marked"):
        table.add_column(col, justify="left" if col == "group" else "right")
    rows = [("all", result["all"]), *result["by_lang"].items(),
            *((f"writer {w}", v) for w, v in result["by_writer"].items())]
    for name, row in rows:
        table.add_row(name, str(row["updates"]), _pct(row["stale"]), _pct(row["new_first"]),
                      str(row["kept_pairs"]), _pct(row["retired"]), _pct(row["kept_flagged"]))
    console.print(table)


@bench_app.command("relevance")
def relevance_cmd(
    data: Path = typer.Option(Path("training/relevance"), "--data",
                              help="The writers' data (training/relevance in a checkout)."),
    split: str = typer.Option("dev", "--split", help="train, dev or a held-out split (numbers "
                              "only): test, fresh, fresh2."),
    writer: list[str] = typer.Option([], "--writer",
                                     help="These writers instead of a split (repeatable)."),
    workdir: Path | None = typer.Option(None, "--workdir",
                                        help="Keep the benchmark's home here."),
    json_out: bool = typer.Option(False, "--json", help="One JSON object on stdout."),
    faq_only: bool = typer.Option(False, "--faq-only", help="Only the FAQ asks, each through "
                                  "qa.match: no memory added, no answer made (measures "
                                  "faq.reuse_judge = \"llm\" with an LLM configured)."),
) -> None:
    """Search and FAQ reuse on questions written by other hands: answers first, other hits,
    unanswerable questions left empty, paraphrases reused and traps refused (held-out
    splits print numbers only)."""
    from ..benchmarks import relevance

    writers = [w for v in writer for w in split_csv(v) or []]
    with _workdir(workdir) as root, _progress() as progress:
        result = relevance.run(data, root, split=None if writers else split,
                               writers=writers or None, progress=progress, faq_only=faq_only)
    if json_out:
        print_json(result)
        return
    console.print(f"Relevance: writers {', '.join(result['writers'])}, "
                  f"{result['seconds']:.0f} s.")
    search = result["search"]
    table = Table(title="Search: answer at #1 / #3 / among the hits and other hits over "
                        "answerable questions, empty over unanswerable (%)")
    for col in ("group", "answerable", "at #1", "at #3", "found", "other hits", "unanswerable",
                "empty"):
        table.add_column(col, justify="left" if col == "group" else "right")
    for name, row in [("all", search["all"]), *search["by_lang"].items(),
                      *((f"family {f}", v) for f, v in search["by_family"].items())]:
        table.add_row(name, str(row["answerable"]), _pct(row["at1"]), _pct(row["at3"]),
                      _pct(row["found"]), "" if row["others"] is None else f"{row['others']:.2f}",
                      str(row["unanswerable"]), _pct(row["empty"]))
    console.print(table)
    faq = result["faq"]
    table = Table(title="FAQ reuse: recall over same questions, precision over reuses (%)")
    for col in ("group", "same", "recall", "reused", "precision", "traps", "traps reused"):
        table.add_column(col, justify="left" if col == "group" else "right")
    for name, row in [("all", faq["all"]), *faq["by_lang"].items()]:
        table.add_row(name, str(row["same"]), _pct(row["recall"]), str(row["reused"]),
                      _pct(row["precision"]), str(row["traps"]), str(row["traps_reused"]))
    console.print(table)
