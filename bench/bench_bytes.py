"""Bytes per memory by part: what a home of N memories holds (issue 21 item 3).

Fills an empty home with ``--size`` memories of bench_core's ``make_texts``: all but the last
``--single`` through the bulk path (``add_many`` in chunks of 1,000, vectors given, cached under
``--cache``), the last ``--single`` one at a time through ``add`` (embedding included), so
associations, supersessions and merges happen as they do in use. Then it closes the home and
prints, per memory: every SQLite table and index (``dbstat``), every file of the home, and the
history rows by action with the bytes of their JSON.

    PYTHONPATH=src .venv/bin/python bench/bench_bytes.py --size 20000 --single 1000
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import library_fingerprint, make_texts
from profile_core import vectors_for


def measure(home: Path, n: int) -> dict[str, object]:
    con = sqlite3.connect(home / "varvemem.db")
    tables = con.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name "
                         "ORDER BY 2 DESC").fetchall()
    hist = con.execute("SELECT action, COUNT(*), SUM(LENGTH(memory_id) + LENGTH(tenant) "
                       "+ LENGTH(action) + LENGTH(actor) + LENGTH(reason) "
                       "+ COALESCE(LENGTH(old), 0) + COALESCE(LENGTH(new), 0)) "
                       "FROM history GROUP BY action ORDER BY 2 DESC").fetchall()
    rows = con.execute("SELECT COUNT(*) FROM history").fetchone()[0]
    names = [r[1] for r in con.execute("PRAGMA table_info(memories)")]
    lengths = con.execute("SELECT " + ", ".join(f"SUM(COALESCE(LENGTH({c}), 0))" for c in names)
                          + " FROM memories").fetchone()
    con.close()
    files = {str(f.relative_to(home)): f.stat().st_size for f in sorted(home.rglob("*"))
             if f.is_file()}
    return {"size": n, "sqlite": dict(tables), "files": files, "history_rows": rows,
            "memories_columns": {c: b for c, b in zip(names, lengths) if b},
            "history": {a: {"rows": c, "bytes": b} for a, c, b in hist}}


def show(m: dict[str, object]) -> None:
    n = int(m["size"])  # type: ignore[call-overload]
    sqlite_ = m["sqlite"]
    files = m["files"]
    assert isinstance(sqlite_, dict) and isinstance(files, dict)
    print(f"\nSQLite pages by table and index ({sum(sqlite_.values()) / n:,.0f} B per memory):")
    for name, size in sqlite_.items():
        print(f"  {name:<32} {size / n:9,.0f} B")
    columns = m.get("memories_columns", {})
    assert isinstance(columns, dict)
    print("bytes of the memories table's columns (their stored values):")
    for name, size in sorted(columns.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<32} {size / n:9,.0f} B")
    print(f"files of the home ({sum(files.values()) / n:,.0f} B per memory):")
    for name, size in files.items():
        print(f"  {name:<32} {size / n:9,.0f} B")
    print(f"history rows: {m['history_rows']} ({int(m['history_rows']) / n:.2f} per memory)")  # type: ignore[call-overload]
    hist = m["history"]
    assert isinstance(hist, dict)
    for action, h in hist.items():
        print(f"  {action:<10} {h['rows'] / n:5.2f} per memory, "
              f"{h['bytes'] / max(h['rows'], 1):6,.0f} B of text per row")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=20000)
    ap.add_argument("--single", type=int, default=1000)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "varvemem-vecs")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    from varvemem import Memory

    texts = make_texts(args.size)
    bulk = args.size - args.single
    vecs = vectors_for(texts[:bulk], args.cache)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        mem = Memory(home=home)
        t = time.perf_counter()
        for i in range(0, bulk, 1000):
            mem.add_many(texts[i : i + 1000], vectors=vecs[i : i + 1000])
        t_bulk = time.perf_counter() - t
        t = time.perf_counter()
        for text in texts[bulk:]:
            mem.add(text)
        t_single = time.perf_counter() - t
        mem.close()
        print(f"{bulk} bulk adds (vectors given) {bulk / t_bulk:.0f}/s, {args.single} single "
              f"adds (embedding included) {args.single / max(t_single, 1e-9):.0f}/s")
        m = measure(home, args.size)
    m["library"] = library_fingerprint()
    m["bulk_per_s"], m["single_per_s"] = bulk / t_bulk, args.single / max(t_single, 1e-9)
    show(m)
    if args.json:
        args.json.write_text(json.dumps(m, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
