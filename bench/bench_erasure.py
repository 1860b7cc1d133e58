"""What erasure leaves behind, and what finding derived memories costs a delete.

1. The erasure story of ``tests/contract/test_erasure.py`` on an embedded home (a user's
   memories, an archived session, an experience shared with another user, a Q&A pair answered
   from the user's memories and cached, session files, webhook payloads): after
   ``delete_user``, how many places (tables, files) still hold the user's word.
2. ``Memory.delete`` of a plain memory with ``--pairs`` Q&A pairs in the tenant, with the
   provenance step and without it (side by side, one run): what the derived-memory look-up
   costs.

    .venv/bin/python bench/bench_erasure.py --pairs 2000

Run from the repository root (it reuses the test's story and scan).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests._llm import ChatServer
from tests.contract import test_erasure as story

from varvemem import Memory, Settings


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 9, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> datetime:
        self.now += timedelta(**kw)
        return self.now


def residues() -> dict[str, Any]:
    home = Path(tempfile.mkdtemp()) / "home"
    clock = _Clock()
    settings = Settings.load(
        home=home, llm={"steps": []}, faq={"reuse_min_score": 0.5},
        lifecycle={"abstract_across_users": True},
        webhooks={"sources": {"ann-gh": {"kind": "github", "tenant": "default",
                                         "secret": story.SECRET, "user": "ann"}}})
    with Memory(settings=settings, clock=clock,
                llm=ChatServer(answer=story._answer).client()) as mem:
        mem.add("the quokka plushie went to the staging office", type="dialogue", user="ann",
                session="ann-early", importance=0.2)
        clock.advance(days=1)
        mem.consolidate()
        clock.advance(days=8)
        mem.consolidate()
        mem.add("Ann keeps the quokka photos in bucket s3://team-pics", user="ann",
                type="knowledge")
        for user, turns in (("ann", story.ANN), ("bob", story.BOB)):
            for text in turns:
                clock.advance(minutes=1)
                mem.add(text, type="dialogue", importance=0.8, user=user, session=f"s-{user}")
            mem.sessions.save(f"s-{user}", [{"role": "user", "content": turns[0]}])
        story._webhook(mem, 1, "The quokka squad confirms the checkout fix")
        mem.inbox.process()
        story._webhook(mem, 2, "A second quokka note, not processed yet")
        pair = mem.ask(story.QUESTION).matched["id"]
        mem.qa.update(pair, score=0.95)
        mem.ask(story.QUESTION, user="bob")
        mem.ask("what did the squad fix?", session="shared", user="ann")
        clock.advance(hours=2)
        mem.consolidate()
        before = story._residues(home, {}, story.WORD)
        report = mem.delete_user("ann")
        after = story._residues(home, {}, story.WORD)
    return {"places_before": len(before), "places_after": len(after), "left": after,
            "report": report.model_dump()}


def delete_cost(pairs: int, deletes: int) -> dict[str, float]:
    with Memory(tempfile.mkdtemp()) as mem:
        for i in range(pairs):
            mem.save_qa(f"How do I reset token number {i}?", f"Use the portal, step {i}.", 0.5)
        ids = [mem.add(f"fact number {i} about the build farm").memory_id
               for i in range(2 * deletes)]
        erasure = mem._engines.erasure  # the provenance step, switched off for the baseline

        class _Off:
            def after_delete(self, *_: object) -> int:
                return 0

        out = {}
        for name, chunk in (("with", ids[::2]), ("without", ids[1::2])):
            mem._engines.erasure = erasure if name == "with" else _Off()  # type: ignore[assignment]
            t0 = time.perf_counter()
            for mid in chunk:
                mem.delete(mid)
            out[f"delete_ms_{name}_provenance"] = 1000 * (time.perf_counter() - t0) / deletes
        mem._engines.erasure = erasure
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--deletes", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = {"residues": residues(), "delete": delete_cost(args.pairs, args.deletes),
           "pairs": args.pairs}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    r = out["residues"]
    print(f"places holding the erased user's word: before {r['places_before']}, "
          f"after {r['places_after']} {r['left'] or ''}")
    print("deletion report:", {k: v for k, v in r["report"].items() if v})
    d = out["delete"]
    print(f"delete with {args.pairs} pairs: {d['delete_ms_with_provenance']:.1f} ms with the "
          f"provenance step, {d['delete_ms_without_provenance']:.1f} ms without")


if __name__ == "__main__":
    main()
