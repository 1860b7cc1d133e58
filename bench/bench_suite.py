"""The test suite's time at two commits, side by side: each folder of ``tests/`` runs at one
commit and then at the other (the order alternating folder by folder), so both see the same
load on a shared machine; the figure is the ratio of the times of the tests both commits have.

    python bench/bench_suite.py --base 6c1483b [--head HEAD] [--only unit,engines]

Each commit is checked out in a detached worktree under a temporary folder and run with this
interpreter (``PYTHONPATH=<worktree>/src``); per-test times come from pytest's JUnit XML.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def worktree(rev: str, root: Path) -> Path:
    path = root / rev.replace("/", "_")
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(path), rev],
                   check=True)
    return path


def run(tree: Path, folder: str, out: Path) -> tuple[float, dict[str, float], int]:
    """Wall seconds, each test's seconds (by id) and pytest's exit code."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    start = time.perf_counter()
    if not (tree / "tests" / folder).is_dir():  # a folder the other commit has alone
        return 0.0, {}, 0
    code = subprocess.run([sys.executable, "-m", "pytest", f"tests/{folder}", "-q",
                           "-p", "no:cacheprovider", f"--junitxml={out}"], cwd=tree, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - start
    times: dict[str, float] = {}
    if out.exists():
        for case in ET.parse(out).getroot().iter("testcase"):
            if case.find("skipped") is None:
                times[f"{case.get('classname')}::{case.get('name')}"] = float(case.get("time", 0))
    return wall, times, code


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True)
    ap.add_argument("--head", default="HEAD")
    ap.add_argument("--only", help="comma-separated folders of tests/ (default: all)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        trees: dict[str, Path] = {}
        try:
            trees["base"] = worktree(args.base, root)
            trees["head"] = worktree(args.head, root)
            folders = args.only.split(",") if args.only else sorted({
                p.name for tree in trees.values() for p in (tree / "tests").iterdir()
                if p.is_dir() and not p.name.startswith("_") and any(p.glob("test_*.py"))})
            total = {"base": 0.0, "head": 0.0}
            common = {"base": 0.0, "head": 0.0}
            print(f"{'folder':<14}{'base s':>9}{'head s':>9}{'tests':>8}{'common':>8}"
                  f"{'head/base (common)':>20}")
            for i, folder in enumerate(folders):
                order = ["base", "head"] if i % 2 == 0 else ["head", "base"]
                got = {}
                for side in order:
                    got[side] = run(trees[side], folder, root / f"{side}-{folder}.xml")
                shared = got["base"][1].keys() & got["head"][1].keys()
                sums = {s: sum(got[s][1][t] for t in shared) for s in got}
                for s in got:
                    total[s] += got[s][0]
                    common[s] += sums[s]
                ratio = sums["head"] / sums["base"] if sums["base"] else float("nan")
                # (nan: no test in common, e.g. a folder one commit has alone)
                codes = "" if got["base"][2] == got["head"][2] == 0 else \
                    f"  (exit {got['base'][2]}/{got['head'][2]})"
                print(f"{folder:<14}{got['base'][0]:>9.1f}{got['head'][0]:>9.1f}"
                      f"{len(got['head'][1]):>8}{len(shared):>8}{ratio:>20.3f}{codes}",
                      flush=True)
            overall = common["head"] / common["base"] if common["base"] else float("nan")
            print(f"{'all':<14}{total['base']:>9.1f}{total['head']:>9.1f}{'':>16}"
                  f"{overall:>20.3f}")
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force",
                                str(tree)], check=False)


if __name__ == "__main__":
    main()
