"""Event reports: a statement that says something happened ("yesterday we rolled back the
gateway", "上周三去复查了"), as against a standing fact ("my dentist is Dr. Hale", "每周三
排练").

The write path keeps a report's days with it (``metadata.happened``): what its time words
name counted from when it was recorded ("yesterday" said on 11 Feb: 10 Feb), else the day it
was recorded; a time question matches those days (:mod:`.retrieval`). (Barring the judge of
supersession from pairs with a report, tried on 2026-12-06, retired 7 look-alikes instead of
36 in the stores of r1-r6, but left 25 % of the truth benchmark's dev updates stale instead of
7 %: people state changes as things that happened. It was not kept.)

Whether a statement is a report is a logistic function of its stored multilingual vector and
of what its time words say (:data:`TIME_FEATURES`), fitted on memories written by other hands
(``training/relevance``, ``training/relevance/train_reports.py``), one fit per embedder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from . import timewords

# The metadata key under which the write path keeps a report's days ([first, last], ISO).
HAPPENED = "happened"
# What the time words of a statement add beside its vector, in this order.
TIME_FEATURES = ("dated", "days_back", "span_days")
# How far back a report's day may lie, and how many days its time words may span: beyond,
# they are history told or a plan, and the report is dated the day it was recorded.
MAX_DAYS_BACK = 366
MAX_SPAN_DAYS = 31


@dataclass(frozen=True)
class Reader:
    """A fitted logistic function of a statement's vector and :data:`TIME_FEATURES`."""

    model_id: str
    coef: np.ndarray  # the vector's weights, then the time features'
    bias: float
    fitted: str

    def probability(self, vector: np.ndarray, time: np.ndarray) -> float:
        z = float(np.concatenate([vector, time]) @ self.coef) + self.bias
        return 1.0 / (1.0 + float(np.exp(-z)))

    def to_json(self) -> dict[str, Any]:
        return {"model_id": self.model_id, "time_features": list(TIME_FEATURES),
                "coef": self.coef.tolist(), "bias": self.bias, "fitted": self.fitted}


def time_features(text: str, recorded: datetime) -> tuple[np.ndarray, tuple[date, date] | None]:
    """:data:`TIME_FEATURES` of ``text`` said at ``recorded``, and the days its time words
    name (None: no past time, or one further back than :data:`MAX_DAYS_BACK`)."""
    parsed = timewords.parse(text, recorded)
    if parsed is None:
        return np.zeros(len(TIME_FEATURES)), None
    first = parsed.window.start.date()
    last = (parsed.window.end - timedelta(microseconds=1)).date()
    back = (recorded.date() - first).days
    if back > MAX_DAYS_BACK or (last - first).days > MAX_SPAN_DAYS:
        return np.zeros(len(TIME_FEATURES)), None
    return np.array([1.0, np.log1p(max(0, back)), np.log1p((last - first).days)]), (first, last)


@dataclass(frozen=True)
class Report:
    """A statement read as an event report: the probability, and its days (first, last)."""

    p: float
    days: tuple[date, date]


def read(reader: Reader, text: str, vector: np.ndarray, recorded: datetime,
         threshold: float = 0.5) -> Report | None:
    """``text`` (with its unit ``vector``, said at ``recorded``) as a report, or None when
    it reads as a standing fact."""
    time, days = time_features(text, recorded)
    p = reader.probability(np.asarray(vector, np.float64), time)
    if p < threshold:
        return None
    return Report(p, days or (recorded.date(), recorded.date()))


@lru_cache(maxsize=4)
def shipped(model_id: str) -> Reader | None:
    """The reader shipped for the embedder ``model_id``, or None."""
    path = resources.files(__package__).joinpath("reports.json")
    if not path.is_file():
        return None
    for d in json.loads(path.read_text("utf-8")):
        if d["model_id"] == model_id and tuple(d["time_features"]) == TIME_FEATURES:
            return Reader(d["model_id"], np.array(d["coef"]), float(d["bias"]), d["fitted"])
    return None
