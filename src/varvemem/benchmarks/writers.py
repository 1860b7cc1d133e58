"""What the benchmarks of data written by other hands share (``bench truth``,
``bench relevance``): the writers of a split, and a clock the benchmark moves."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from ..errors import ValidationError


def split_writers(folder: Path, split: str, known: Sequence[str]) -> list[str]:
    """The writers of ``split`` (one of ``known``; ``splits.json`` beside the data)."""
    if split not in known:
        raise ValidationError(f"split {split!r} must be one of {', '.join(known)}")
    splits = json.loads((folder / "splits.json").read_text("utf-8"))
    return list(splits.get(split, []))


class Clock:
    """The time the memory reads, set by the benchmark."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now
