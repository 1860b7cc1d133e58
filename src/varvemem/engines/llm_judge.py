"""The LLM as a pair judge: does a NEW statement update each of some OLD statements?

With an LLM configured, the pairs the local judge finds ambiguous can be put to it (issue 39):
:func:`judge_pairs` sends one NEW statement and a numbered list of OLD ones to an
OpenAI-compatible chat endpoint (:class:`~varvemem.llm.ChatClient`) and returns, for each OLD
one, a :class:`PairJudgement`: ``update`` (the old is no longer true once the new is said),
``same`` (the same fact again), ``both`` (both stay true) or ``unrelated``, with a short reason.

The prompt is :data:`JUDGE_PROMPT`, one constant, in English, for statements in English,
Chinese or both. The answer is read leniently, because small and local models often ignore
a request for bare JSON: the first JSON value with judgements is taken wherever it stands (in
prose, in a Markdown code fence, after a first JSON value of another shape), and label
spellings are normalised (``updated``, ``keep both``, ``duplicate``...). An answer that still
leaves an OLD statement without a known label raises :class:`~varvemem.errors.LLMError`, like
every other failure of the endpoint, so the caller keeps its local decision.

Nothing here runs by itself: it is the piece a supersession engine plugs in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast, get_args

from ..errors import LLMError

Verdict = Literal["update", "same", "both", "unrelated"]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)

# One constant: the task, the four labels, the answer's shape, then short examples (none from
# training/truth). Examples last, so the variable part (the user message) follows a fixed
# prefix that a server's prompt cache can keep.
JUDGE_PROMPT = """\
You compare a NEW statement with OLD statements kept in an assistant's memory. Statements may \
be in English, in Chinese, or one in each: compare their meanings across languages.
For each OLD statement, first name in a few words what OLD is about and what NEW is about: \
the subject only (which meeting, person's role, order, server, setting...), without its \
value. The value (a time, date, place, person, number, version, tool) may differ: a new \
value for the same subject is an update. Then give one label:
- "update": same subject, and NEW gives it another value, corrects it, or says it changed, \
stopped, was dropped or replaced. OLD is no longer true.
- "same": same subject and same value, in other words or in the other language.
- "both": different subjects, so both stay true: another person, item, id or number (order, \
ticket, incident, room), another department, environment or scope (staging vs production, \
weekdays vs weekends); or NEW adds one more (also, a second one); or NEW only tells the past \
or a plan.
- "unrelated": another topic altogether.
Answer with JSON only, one entry per OLD statement, in order:
{"pairs": [{"old": <index>, "old_about": "<subject>", "new_about": "<subject>", \
"label": "<update, same, both or unrelated>"}]}

Examples:
NEW: Staging DB is on port 5433.
OLD: 0. The production database listens on 5432.
{"pairs": [{"old": 0, "old_about": "production DB port", "new_about": "staging DB port", \
"label": "both"}]}
NEW: Dentist: Friday 3pm.
OLD: 0. My dentist appointment is Thursday at 10.
{"pairs": [{"old": 0, "old_about": "dentist appointment", "new_about": "dentist appointment", \
"label": "update"}]}
NEW: The office wifi password is still orange42.
OLD: 0. Wifi password: orange42
{"pairs": [{"old": 0, "old_about": "wifi password", "new_about": "wifi password", \
"label": "same"}]}
NEW: 我女儿对花生过敏
OLD: 0. 我儿子对鸡蛋过敏
1. 女儿花生过敏，要注意
{"pairs": [{"old": 0, "old_about": "son's allergy", "new_about": "daughter's allergy", \
"label": "both"}, {"old": 1, "old_about": "daughter's allergy", \
"new_about": "daughter's allergy", "label": "same"}]}
NEW: 周会改到周三下午两点了
OLD: 0. Weekly sync is Tuesdays 2pm.
{"pairs": [{"old": 0, "old_about": "weekly meeting time", "new_about": "weekly meeting time", \
"label": "update"}]}
NEW: Ticket 4411 is waiting on the customer.
OLD: 0. Ticket 4410 is waiting on the customer.
{"pairs": [{"old": 0, "old_about": "ticket 4410 status", "new_about": "ticket 4411 status", \
"label": "both"}]}
NEW: Jenkins 管理员：Ravi
OLD: 0. Our Jenkins admin is Olga.
{"pairs": [{"old": 0, "old_about": "Jenkins admin", "new_about": "Jenkins admin", \
"label": "update"}]}
NEW: Acme Corp is sending two people to visit on Monday.
OLD: 0. Acme Corp pays invoices by wire transfer.
{"pairs": [{"old": 0, "old_about": "Acme payment method", "new_about": "Acme visit", \
"label": "unrelated"}]}
NEW: Back in 2022 we used Redis 6.
OLD: 0. We run Redis 7.2.
{"pairs": [{"old": 0, "old_about": "Redis version now", "new_about": "Redis version in 2022", \
"label": "both"}]}
NEW: We dropped Jenkins, everything builds on GitHub Actions.
OLD: 0. CI runs on Jenkins.
{"pairs": [{"old": 0, "old_about": "CI tool", "new_about": "CI tool", "label": "update"}]}
NEW: I also added my sister as an emergency contact.
OLD: 0. 我的紧急联系人是 Kevin
{"pairs": [{"old": 0, "old_about": "emergency contact", "new_about": "one more emergency contact", \
"label": "both"}]}
NEW: Open house is on 3/14.
OLD: 0. 开放日是3月14号
{"pairs": [{"old": 0, "old_about": "open house date", "new_about": "open house date", \
"label": "same"}]}
NEW: Sorry, Maria's flight lands at 18:40, not 16:40.
OLD: 0. Maria lands at 16:40.
{"pairs": [{"old": 0, "old_about": "Maria's landing time", "new_about": "Maria's landing time", \
"label": "update"}]}"""

_SUFFIX = "\nAnswer with one JSON object only."

# Label spellings seen from models, folded onto the four verdicts.
_SYNONYMS: dict[str, Verdict] = {
    "update": "update", "updates": "update", "updated": "update", "supersede": "update",
    "superseded": "update", "supersedes": "update", "replace": "update", "replaced": "update",
    "replaces": "update", "change": "update", "changed": "update", "correction": "update",
    "contradict": "update", "contradicts": "update", "outdated": "update", "stale": "update",
    "same": "same", "duplicate": "same", "same fact": "same", "paraphrase": "same",
    "restate": "same", "repeat": "same", "identical": "same",
    "both": "both", "keep both": "both", "both true": "both", "keep": "both", "additive": "both",
    "add": "both", "different": "both", "distinct": "both",
    "unrelated": "unrelated", "none": "unrelated", "no relation": "unrelated",
    "irrelevant": "unrelated", "independent": "unrelated",
    # the labels in Chinese, for a model that answers in the statements' language
    "更新": "update", "相同": "same", "重复": "same", "都对": "both", "并存": "both",
    "无关": "unrelated",
}
_LIST_KEYS = ("pairs", "results", "judgements", "judgments", "labels", "olds", "old", "answers")
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class PairJudgement:
    """The verdict on one (OLD, NEW) pair and the model's reason for it."""

    verdict: Verdict
    reason: str

    @property
    def updates(self) -> bool:
        """NEW makes OLD no longer true."""
        return self.verdict == "update"


class Chat(Protocol):
    """What the judge needs of :class:`~varvemem.llm.ChatClient`."""

    def complete(self, system: str, user: str) -> str: ...


def judge_prompt(new: str, olds: Sequence[str]) -> str:
    """The user message: ``NEW: ...`` then ``OLD:`` and the numbered OLD statements."""
    listing = "\n".join(f"{i}. {' '.join(o.split())}" for i, o in enumerate(olds))
    return f"NEW: {' '.join(new.split())}\nOLD:\n{listing}"


def judge_pairs(client: Chat, new: str, olds: Sequence[str]) -> list[PairJudgement]:
    """One judgement per OLD statement, in order (one request). Raises
    :class:`~varvemem.errors.LLMError` when the endpoint fails or its answer does not give
    every OLD statement a known label."""
    if not olds:
        return []
    text = client.complete(JUDGE_PROMPT + _SUFFIX, judge_prompt(new, olds))
    return parse_judgements(text, len(olds))


def parse_judgements(text: str, n: int) -> list[PairJudgement]:
    """The judgements of ``n`` OLD statements in a model's answer (see the module doc)."""
    for value in _json_values(text):
        found = _from_json(value, n)
        if found is not None:
            return found
    if n == 1:  # no JSON: a bare label ("update", "Label: both") is an answer for one pair
        words = set(_label_words(text))
        if len(words) == 1:
            return [PairJudgement(words.pop(), "")]
    raise LLMError(f"the pair judge's answer gives no label for each of {n} OLD statements: "
                   f"{' '.join(text.split())[:80]!r}")


def _json_values(text: str) -> list[Any]:
    """Every JSON object or array in ``text``: inside code fences first, then anywhere."""
    out: list[Any] = []
    for chunk in [*_FENCE.findall(text), text]:
        dec = json.JSONDecoder()
        i = 0
        while True:
            starts = [p for p in (chunk.find("{", i), chunk.find("[", i)) if p >= 0]
            if not starts:
                break
            start = min(starts)
            try:
                value, end = dec.raw_decode(chunk, start)
            except json.JSONDecodeError:
                i = start + 1
                continue
            out.append(value)
            i = end
    return out


def _from_json(value: Any, n: int) -> list[PairJudgement] | None:
    items: Any = None
    if isinstance(value, dict):
        for key in _LIST_KEYS:
            if isinstance(value.get(key), list):
                items = value[key]
                break
        else:
            if n == 1 and _verdict(value) is not None:
                items = [value]
    elif isinstance(value, list):
        items = value
    if not isinstance(items, list) or not items:
        return None
    entries: list[tuple[int, Verdict | None, str]] = []
    for pos, item in enumerate(items):
        if isinstance(item, str):  # ["update", "both"]
            entries.append((pos, _fold(item), ""))
        elif isinstance(item, dict):
            reason = _reason(item)
            entries.append((_index(item, pos), _verdict(item), reason))
        else:
            return None
    indexes = {i for i, _, _ in entries}
    if 0 not in indexes and set(range(1, n + 1)) <= indexes:  # numbered from 1
        entries = [(i - 1, v, r) for i, v, r in entries]
    got: dict[int, PairJudgement] = {}
    for index, verdict, reason in entries:
        # an entry for an OLD statement that was not asked (small models invent some) is dropped
        if 0 <= index < n and verdict is not None:
            got.setdefault(index, PairJudgement(verdict, reason))
    if len(got) != n:
        return None
    return [got[i] for i in range(n)]


def _reason(item: dict[str, Any]) -> str:
    """The model's ``reason``, else what it named OLD and NEW to be about."""
    text = str(item.get("reason") or item.get("why") or "")
    if not text and (item.get("old_about") or item.get("new_about")):
        text = f"OLD: {item.get('old_about') or '?'}; NEW: {item.get('new_about') or '?'}"
    return " ".join(text.split())


def _verdict(item: dict[str, Any]) -> Verdict | None:
    for key in ("label", "verdict", "relation", "decision", "answer", "result"):
        if isinstance(item.get(key), str):
            return _fold(item[key])
    return None


def _index(item: dict[str, Any], pos: int) -> int:
    for key in ("old", "index", "i", "id", "idx"):
        raw = item.get(key)
        if isinstance(raw, bool):
            continue
        if isinstance(raw, int):
            return raw
        if isinstance(raw, str) and raw.strip().isdigit():
            return int(raw.strip())
    return pos


def _fold(label: str) -> Verdict | None:
    key = " ".join(label.strip().strip(".!\"'").lower().replace("_", " ").replace("-", " ")
                   .split())
    return _SYNONYMS.get(key)  # the four verdicts are among the synonyms


def _label_words(text: str) -> list[Verdict]:
    return [cast(Verdict, w) for w in re.findall(r"[a-z]+", text.lower()) if w in VERDICTS]
