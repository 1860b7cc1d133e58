"""Reliability probes (issue 18): what ``tests/reliability`` runs short and
``bench/bench_reliability.py`` runs long.

Three families, each an :class:`Outcome` (attempts, failures with their details, 5xx, lost and
duplicated writes, seconds):

* **cross-tenant**, against a running server over HTTP with two tenants' keys: the *prober*
  tries to reach the *owner*'s memories by id (:func:`probe_by_id`: every answer exactly that of
  an unknown id), by filters (:func:`probe_by_filters`: users, sessions, tags and the owner's
  words never bring back the owner's memories), through the other endpoints
  (:func:`probe_endpoints`: sessions, users, documents, the Q&A fast path, the inbox,
  consolidation) and by side channel (:func:`probe_side_channel`: the prober's scores, ranks,
  counts and dedup stay the same while the owner stores hundreds of memories with the same
  words); and over MCP (:func:`probe_mcp`: one tenant per process, which no argument changes);
* **bad input** (:func:`probe_bad_input`): malformed requests, each a 4xx with a JSON error,
  never a 5xx, on a connection that stays usable; and requests generated from the OpenAPI
  schema (:func:`probe_fuzz`), none a 5xx;
* **kill -9** (:func:`probe_kill9`): a writer process acknowledges adds and is killed with
  SIGKILL at random moments; after each kill every acknowledged write is there once and no
  content twice (SQLite homes, and PostgreSQL in a database of its own: :func:`fresh_database`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

__all__ = [
    "Case",
    "Failure",
    "Outcome",
    "Webhook",
    "bad_input_cases",
    "fresh_database",
    "nested",
    "probe_bad_input",
    "probe_by_filters",
    "probe_by_id",
    "probe_endpoints",
    "probe_fuzz",
    "probe_kill9",
    "probe_mcp",
    "probe_side_channel",
]


# -- outcomes ----------------------------------------------------------------------------------
@dataclass
class Failure:
    """One probe that failed: which, and what was seen."""

    probe: str
    detail: str


@dataclass
class Outcome:
    """What a family of probes found."""

    family: str
    attempts: int = 0
    failures: list[Failure] = field(default_factory=list)
    server_errors: int = 0  # answers >= 500
    lost: int = 0  # acknowledged writes missing after a kill
    duplicated: int = 0  # contents stored twice after a kill (or a retry after it)
    seconds: float = 0.0

    def fail(self, probe: str, detail: str) -> None:
        self.failures.append(Failure(probe, detail[:600]))

    @property
    def ok(self) -> bool:
        return not self.failures

    def report(self) -> str:
        """A few lines for an assertion message or a log."""
        head = (f"{self.family}: {self.attempts} attempts, {len(self.failures)} failed, "
                f"{self.server_errors} 5xx, {self.lost} lost, {self.duplicated} duplicated, "
                f"{self.seconds:.1f} s")
        return "\n".join([head, *(f"  - {f.probe}: {f.detail}" for f in self.failures)])

    def to_json(self) -> dict[str, Any]:
        return {"family": self.family, "attempts": self.attempts,
                "failed": len(self.failures), "server_errors": self.server_errors,
                "lost": self.lost, "duplicated": self.duplicated,
                "seconds": round(self.seconds, 2),
                "failures": [{"probe": f.probe, "detail": f.detail} for f in self.failures]}


@contextlib.contextmanager
def _timed(out: Outcome) -> Iterator[Outcome]:
    start = time.perf_counter()
    try:
        yield out
    finally:
        out.seconds += time.perf_counter() - start


def _client(url: str, key: str | None, timeout: float = 60.0) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=url, headers=headers, timeout=timeout)


def _json(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except ValueError:
        return None


def _must(resp: httpx.Response, *statuses: int) -> Any:
    """The JSON of a set-up call, which must succeed (the probes need what it made)."""
    if resp.status_code not in (statuses or (200, 201, 202, 204)):
        raise RuntimeError(f"set-up call {resp.request.method} {resp.request.url.path} -> "
                           f"{resp.status_code}: {resp.text[:300]}")
    return _json(resp) if resp.content else None


def nested(depth: int) -> dict[str, Any]:
    """A mapping nested ``depth`` levels (itself the first)."""
    out: dict[str, Any] = {"leaf": 1}
    for _ in range(depth - 1):
        out = {"k": out}
    return out


def _unknown_like(memory_id: str) -> str:
    """An id of the same shape and length as ``memory_id`` that names no memory."""
    prefix, _, rest = memory_id.partition("_")
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
    rng = random.Random(memory_id)
    return f"{prefix}_" + "".join(rng.choice(alphabet) for _ in rest)


# -- what the owner stores ---------------------------------------------------------------------
@dataclass
class OwnerData:
    """What :func:`seed_owner` stored in the owner's tenant: the prober must reach none of it."""

    marker: str  # a word found in every one of the owner's texts and nowhere else
    user: str
    session: str
    tag: str
    memory_ids: list[str]
    question: str
    answer: str
    document: str

    def leaked_into(self, text: str) -> list[str]:
        """The owner's ids and marker found in ``text``."""
        return [x for x in (self.marker, self.answer, *self.memory_ids) if x in text]


def seed_owner(url: str, owner_key: str, label: str = "") -> OwnerData:
    """Stores, in the owner's tenant, memories with a user, a session, a tag and metadata, a
    session's turns, a Q&A pair and a document, all carrying one marker word."""
    tag = uuid.uuid4().hex[:8]
    marker = f"zirconium{tag}"
    data = OwnerData(marker=marker, user=f"owner-user-{tag}{label}",
                     session=f"owner-session-{tag}{label}", tag=f"owner-tag-{tag}",
                     memory_ids=[],
                     question=f"How do we rotate the {marker} ledger keys?",
                     answer=f"Run the {marker} rotation job from the vault console",
                     document=f"owner-runbook-{tag}.md")
    with _client(url, owner_key) as c:
        for content in (f"The {marker} ledger lives in bucket fin-{tag}",
                        f"Payroll exports for {marker} run on Fridays at 18:00",
                        f"The {marker} on-call rotation is kept in PagerDuty"):
            data.memory_ids.append(_must(c.post("/v1/memories", json={
                "content": content, "user": data.user, "session": data.session,
                "tags": [data.tag], "metadata": {"team": marker}}), 201)["memory_id"])
        turns = _must(c.post(f"/v1/sessions/{data.session}/turns", json={"messages": [
            {"role": "user", "content": f"Where is the {marker} ledger?", "user": data.user},
            {"role": "assistant", "content": f"In bucket fin-{tag} ({marker})",
             "user": data.user}]}), 201)
        data.memory_ids += [r["memory_id"] for r in turns["results"]]
        qa = _must(c.post("/v1/memories", json={
            "content": f"{data.question} {data.answer}", "type": "qa",
            "question": data.question, "answer": data.answer, "score": 0.95}), 201)
        data.memory_ids.append(qa["memory_id"])
        doc = _must(c.post("/v1/documents", json={
            "source": data.document,
            "text": f"# Runbook\n\n## {marker} restore\n\nRestore the {marker} ledger from "
                    f"the nightly snapshot in fin-{tag}.\n"}))
        data.memory_ids += list(doc.get("added", []))
    return data


def _leak_check(out: Outcome, probe: str, resp: httpx.Response, owner: OwnerData) -> None:
    out.attempts += 1
    if resp.status_code >= 500:
        out.server_errors += 1
        out.fail(probe, f"{resp.status_code}: {resp.text[:200]}")
        return
    found = owner.leaked_into(_without_echo(resp.text))
    if found:
        out.fail(probe, f"the answer ({resp.status_code}) shows the owner's {found[:3]}: "
                        f"{resp.text[:300]}")


def _without_echo(text: str) -> str:
    """A JSON answer without the request's own words it echoes (``query``, ``question``):
    those are the prober's, not the owner's."""
    try:
        body = json.loads(text)
    except ValueError:
        return text
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k not in ("query", "question")}
    return json.dumps(body, ensure_ascii=False)


def _owner_intact(out: Outcome, probe: str, url: str, owner_key: str, owner: OwnerData,
                  before: Mapping[str, Any]) -> None:
    """The owner's memories are as they were (content, importance, tags, validity, history)."""
    with _client(url, owner_key) as c:
        after = _snapshot(c, owner.memory_ids)
    out.attempts += 1
    changed = {mid: (before[mid], after.get(mid)) for mid in before if after.get(mid) != before[mid]}
    if changed:
        mid, (was, now) = next(iter(changed.items()))
        out.fail(probe, f"{len(changed)} of the owner's memories changed, e.g. {mid}: "
                        f"{was} -> {now}")


def _snapshot(c: httpx.Client, ids: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mid in ids:
        resp = c.get(f"/v1/memories/{mid}")
        if resp.status_code != 200:
            out[mid] = resp.status_code
            continue
        rec = resp.json()
        history = c.get(f"/v1/memories/{mid}/history").json()["items"]
        out[mid] = {k: rec.get(k) for k in ("content", "importance", "tags", "metadata", "tier",
                                             "scope", "score", "valid_to", "superseded_by",
                                             "expires_at")} | {
            "history": [e["action"] for e in history]}
    return out


# -- cross-tenant: by id -----------------------------------------------------------------------
def _same_as_unknown(out: Outcome, probe: str, other: httpx.Response, unknown: httpx.Response,
                     mid: str, fake: str) -> None:
    out.attempts += 1
    if other.status_code >= 500:
        out.server_errors += 1
    if other.status_code != 404:
        out.fail(probe, f"the other tenant's id answered {other.status_code} (not 404): "
                        f"{other.text[:200]}")
        return
    if (other.status_code, other.text.replace(mid, "<id>")) != (
            unknown.status_code, unknown.text.replace(fake, "<id>")):
        out.fail(probe, f"the answer differs from an unknown id's: {other.status_code} "
                        f"{other.text[:200]!r} vs {unknown.status_code} {unknown.text[:200]!r}")
        return
    for header in ("content-type", "content-length", "www-authenticate"):
        if other.headers.get(header) != unknown.headers.get(header):
            out.fail(probe, f"header {header}: {other.headers.get(header)!r} vs "
                            f"{unknown.headers.get(header)!r} for an unknown id")


def probe_by_id(url: str, prober_key: str, owner_key: str,
                owner: OwnerData | None = None) -> Outcome:
    """The prober uses the owner's memory ids on every route that takes one (get, history,
    patch, feedback, delete, and ``supersedes`` of an add): each answer must be exactly that
    of an unknown id of the same length (a 404, the same body and headers), and the owner's
    memories must be untouched."""
    out = Outcome("cross-tenant by id")
    with _timed(out):
        owner = owner or seed_owner(url, owner_key)
        with _client(url, owner_key) as c:
            before = _snapshot(c, owner.memory_ids)
        calls: list[tuple[str, str, str, Any]] = [
            ("get", "GET", "/v1/memories/{id}", None),
            ("history", "GET", "/v1/memories/{id}/history", None),
            ("patch content", "PATCH", "/v1/memories/{id}", {"content": "overwritten by prober"}),
            ("patch metadata", "PATCH", "/v1/memories/{id}", {"metadata": {"owner": "prober"},
                                                              "tags": ["pwned"]}),
            ("feedback", "POST", "/v1/memories/{id}/feedback", {"helpful": False,
                                                                "weight": 1.0}),
            ("delete", "DELETE", "/v1/memories/{id}", None),
        ]
        with _client(url, prober_key) as c:
            for mid in owner.memory_ids:
                fake = _unknown_like(mid)
                for name, method, path, body in calls:
                    kwargs: dict[str, Any] = {} if body is None else {"json": body}
                    other = c.request(method, path.format(id=mid), **kwargs)
                    unknown = c.request(method, path.format(id=fake), **kwargs)
                    _same_as_unknown(out, f"{name} {mid}", other, unknown, mid, fake)
            # An add that names the owner's memory as the one it supersedes.
            mid = owner.memory_ids[0]
            fake = _unknown_like(mid)
            other = c.post("/v1/memories", json={"content": f"Superseding note {uuid.uuid4().hex}",
                                                 "supersedes": [mid]})
            unknown = c.post("/v1/memories", json={"content": f"Superseding note {uuid.uuid4().hex}",
                                                   "supersedes": [fake]})
            if other.status_code < 300 or unknown.status_code < 300:  # two new memories
                out.attempts += 1
                if other.status_code != unknown.status_code or mid in other.text:
                    out.fail(f"supersedes {mid}", f"{other.status_code} {other.text[:200]!r} "
                                                  f"vs {unknown.status_code} for an unknown id")
            else:  # refused: as for an unknown id (here a 422, the id named)
                out.attempts += 1
                if (other.status_code, other.text.replace(mid, "<id>")) != (
                        unknown.status_code, unknown.text.replace(fake, "<id>")):
                    out.fail(f"supersedes {mid}", f"{other.status_code} {other.text[:200]!r} "
                                                  f"vs {unknown.status_code} "
                                                  f"{unknown.text[:200]!r} for an unknown id")
            if other.status_code >= 500:
                out.server_errors += 1
        _owner_intact(out, "owner's memories after the by-id probes", url, owner_key, owner,
                      before)
    return out


# -- cross-tenant: by filters ------------------------------------------------------------------
def probe_by_filters(url: str, prober_key: str, owner_key: str,
                     owner: OwnerData | None = None) -> Outcome:
    """The prober searches, lists and packs context naming the owner's users, sessions, tags
    and words (with superseded and archived memories included): no answer may carry the
    owner's marker word, answer or ids."""
    out = Outcome("cross-tenant by filters")
    with _timed(out):
        owner = owner or seed_owner(url, owner_key)
        with _client(url, prober_key) as c:
            # The prober has memories of its own, so an empty answer is not the only one.
            _must(c.post("/v1/memories", json={"content": "The prober's ledger lives in bucket "
                                                          "ops-main", "tags": ["ledger"]}), 201)
            queries = [owner.marker, f"{owner.marker} ledger bucket", owner.question,
                       "where is the ledger?", "payroll exports on Fridays", "on-call rotation"]
            filters: list[dict[str, Any]] = [
                {}, {"user": owner.user}, {"session": owner.session}, {"tags": [owner.tag]},
                {"user": owner.user, "session": owner.session, "tags": [owner.tag]},
                {"include_superseded": True, "include_archive": True},
                {"types": ["qa", "fact", "dialogue", "document", "event"]},
                {"tiers": ["active", "short_term", "mid_term", "long_term"]},
            ]
            for q in queries:
                for f in filters:
                    for path in ("/v1/search", "/v1/context"):
                        _leak_check(out, f"{path} {q!r} {f}", c.post(path, json={
                            "query": q, "top_k": 50, **f}), owner)
            params: list[dict[str, Any]] = [
                {}, {"user": owner.user}, {"include_superseded": "true"},
                {"type": ["qa", "fact", "dialogue", "document"]}, {"limit": 1000}]
            for p in params:
                _leak_check(out, f"GET /v1/memories {p}", c.get("/v1/memories", params=p), owner)
            _leak_check(out, "GET /v1/memories after an owner's id",
                        c.get("/v1/memories", params={"after": owner.memory_ids[0][:6]}), owner)
            for p in ({}, {"user": owner.user}):
                _leak_check(out, f"GET /v1/sessions/<owner's> {p}",
                            c.get(f"/v1/sessions/{owner.session}", params=p), owner)
            _leak_check(out, "GET /v1/stats", c.get("/v1/stats"), owner)
    return out


# -- cross-tenant: the other endpoints ---------------------------------------------------------
@dataclass
class Webhook:
    """A configured webhook source of kind ``generic`` (HMAC-SHA256 of the body in
    ``X-Varvemem-Signature``) and the tenant it writes to."""

    source: str
    secret: str
    tenant: str

    def signed(self, body: Mapping[str, Any]) -> tuple[bytes, dict[str, str]]:
        raw = json.dumps(body).encode()
        sig = hmac.new(self.secret.encode(), raw, hashlib.sha256).hexdigest()
        return raw, {"X-Varvemem-Signature": f"sha256={sig}", "Content-Type": "application/json"}


def probe_endpoints(url: str, prober_key: str, owner_key: str, owner: OwnerData | None = None,
                    webhook: Webhook | None = None) -> Outcome:
    """The routes that name a session, a user or a document, the Q&A fast path, consolidation
    and the inbox (both keys must be admins'): acting on names the owner uses changes and shows
    nothing of the owner's. ``webhook``: a source writing to the owner's tenant."""
    out = Outcome("cross-tenant endpoints")
    with _timed(out):
        owner = owner or seed_owner(url, owner_key)
        with _client(url, owner_key) as c:
            before = _snapshot(c, owner.memory_ids)
            window = _must(c.get(f"/v1/sessions/{owner.session}"))["items"]
            owner_stats = _must(c.get("/v1/stats"))
        with _client(url, prober_key) as c:
            _leak_check(out, "ask the owner's stored question",
                        c.post("/v1/ask", json={"question": owner.question}), owner)
            _leak_check(out, "ask with the owner's session and user", c.post("/v1/ask", json={
                "question": owner.question, "session": owner.session, "user": owner.user}), owner)
            _leak_check(out, "close the owner's session",
                        c.post(f"/v1/sessions/{owner.session}/close"), owner)
            resp = c.delete(f"/v1/users/{owner.user}")
            _leak_check(out, "delete the owner's user", resp, owner)
            deleted = (_json(resp) or {}).get("deleted") if resp.status_code == 200 else None
            # The prober's own ask above saved two session turns for that user name in its
            # own tenant: those may go. No memory may (the prober stored none for the name).
            if isinstance(deleted, dict) and any(deleted.get(k) for k in (
                    "live", "archived", "derived", "rederived", "inbox")):
                out.fail("delete the owner's user", f"deleted {deleted}")
            _leak_check(out, "append turns to a session named as the owner's",
                        c.post(f"/v1/sessions/{owner.session}/turns", json={"messages": [
                            {"role": "user", "content": "prober's own turn", "user": owner.user}
                        ]}), owner)
            resp = c.post("/v1/documents", json={"source": owner.document,
                                                 "text": "# Prober's doc\n\nNothing shared.\n"})
            _leak_check(out, "ingest a document under the owner's source name", resp, owner)
            report = _json(resp) or {}
            if report.get("kept") or report.get("removed") or report.get("invalidated"):
                out.fail("ingest a document under the owner's source name",
                         f"it touched existing chunks: {report}")
            _leak_check(out, "consolidate", c.post("/v1/consolidate", json={}), owner)
            if webhook is not None:
                with _client(url, None) as anon:
                    raw, headers = webhook.signed({
                        "type": "deploy", "status": "failed", "id": uuid.uuid4().hex,
                        "message": f"{owner.marker} deploy failed: quota exceeded"})
                    accepted = _must(anon.post(f"/v1/webhooks/{webhook.source}", content=raw,
                                               headers=headers), 202)
                for params in ({}, {"status": "pending"}, {"status": "done"},
                               {"status": "failed"}):
                    resp = c.get("/v1/inbox", params=params)
                    _leak_check(out, f"GET /v1/inbox {params}", resp, owner)
                    ids = [e.get("event_id") for e in (_json(resp) or {}).get("items", [])]
                    if accepted["event_id"] in ids:
                        out.fail(f"GET /v1/inbox {params}", "lists the owner's event")
                resp = c.post("/v1/inbox/retry", json={"event_ids": [accepted["event_id"]]})
                _leak_check(out, "retry the owner's inbox event", resp, owner)
                if (_json(resp) or {}).get("retried"):
                    out.fail("retry the owner's inbox event", resp.text[:200])
        with _client(url, owner_key) as c:
            out.attempts += 1
            now = _must(c.get(f"/v1/sessions/{owner.session}"))["items"]
            if [m["memory_id"] for m in now] != [m["memory_id"] for m in window] or [
                    m["tier"] for m in now] != [m["tier"] for m in window]:
                out.fail("the owner's session window", f"{len(window)} turns before the probes, "
                                                       f"{len(now)} after")
            out.attempts += 1
            stats = _must(c.get("/v1/stats"))
            if stats.get("current") != owner_stats.get("current") + (1 if webhook else 0) \
                    and stats.get("current") != owner_stats.get("current"):
                out.fail("the owner's stats", f"{owner_stats} -> {stats}")
        _owner_intact(out, "owner's memories after the endpoint probes", url, owner_key, owner,
                      before)
    return out


# -- cross-tenant: side channel ----------------------------------------------------------------
SIDE_WORDS = ("zephyrine", "quasarite")


def _vocabulary() -> list[str]:
    return ("alpha bravo cobalt delta ember falcon garnet harbor iris jasper kelp lumen marble "
            "nectar onyx pepper quill raven sierra tundra umber violet willow xenon yarrow zinc "
            "anchor beacon canyon dune estuary fjord glacier heath inlet jungle knoll lagoon mesa "
            "oasis prairie quarry ridge savanna tarn upland valley wadi steppe atoll bayou cliff "
            "basalt copper docket engine filter gasket hinge invoice journal kernel ladder mortar "
            "needle orbit piston quorum rotor socket turbine valve widget axle bolt crank").split()


def _filler(rng: random.Random, n: int) -> str:
    return " ".join(rng.sample(_vocabulary(), n))


def _ranking(c: httpx.Client, query: str) -> list[dict[str, Any]]:
    hits = _must(c.post("/v1/search", json={"query": query, "top_k": 20}))["hits"]
    return [{"memory_id": h["memory_id"], "rank": i, "keyword": h["scores"].get("keyword"),
             "semantic": h["scores"].get("semantic"), "score": h["score"]}
            for i, h in enumerate(hits)]


def probe_side_channel(url: str, prober_key: str, owner_key: str, writes: int = 300,
                       seed: int = 0, score_tolerance: float = 1e-3) -> Outcome:
    """Whether the owner's writes move what the prober sees: the prober stores memories with
    the words of :data:`SIDE_WORDS` (one word each, and both), searches, and records each hit's
    rank and explained scores (keyword, semantic, total) and its own stats; then the owner
    stores ``writes`` memories carrying the first word, and the prober searches again. Every
    rank and keyword and semantic score must be equal (the total within ``score_tolerance``:
    recency moves with the clock), and so must the stats. Last, the prober adds a text the
    owner stored first: it must be new to the prober (not a duplicate of the owner's)."""
    out = Outcome("cross-tenant side channel")
    rng = random.Random(seed)
    one, two = SIDE_WORDS
    with _timed(out):
        tag = uuid.uuid4().hex[:6]
        with _client(url, prober_key) as c:
            for text in (f"The {one} relay {tag} handles the nightly export jobs",
                         f"The {two} relay {tag} handles the weekly audit jobs",
                         f"Both the {one} and {two} relays {tag} log to the ops bucket",
                         f"The {one} queue drains into the {two} archive"):
                _must(c.post("/v1/memories", json={"content": text}), 201)
            queries = [f"{one} {two}", f"{one} relay jobs", f"which {two} relay handles audits",
                       f"{one}"]
            before = {q: _ranking(c, q) for q in queries}
            stats_before = _must(c.get("/v1/stats"))
        shared = f"The release checklist {tag} lives in the handbook under deployments"
        with _client(url, owner_key) as c:
            _must(c.post("/v1/memories", json={"content": shared}), 201)
            for start in range(0, writes, 50):
                items = [{"content": f"{one} note {i}: {_filler(rng, 7)} {one} {_filler(rng, 3)}"}
                         for i in range(start, min(writes, start + 50))]
                _must(c.post("/v1/memories/batch", json={"items": items}), 201)
        with _client(url, prober_key) as c:
            for q in queries:
                after = _ranking(c, q)
                was = {h["memory_id"]: h for h in before[q]}
                now = {h["memory_id"]: h for h in after}
                out.attempts += 1
                if list(was) != list(now):
                    out.fail(f"rank for {q!r}", f"{list(was)} -> {list(now)}")
                for mid, h in was.items():
                    out.attempts += 1
                    g = now.get(mid)
                    if g is None:
                        continue
                    diffs = [f"{k} {h[k]} -> {g[k]}" for k in ("rank", "keyword", "semantic")
                             if h[k] != g[k]]
                    if abs(h["score"] - g["score"]) > score_tolerance:
                        diffs.append(f"score {h['score']} -> {g['score']}")
                    if diffs:
                        out.fail(f"scores of {mid} for {q!r}", "; ".join(diffs))
            out.attempts += 1
            stats_after = _must(c.get("/v1/stats"))
            if stats_after != stats_before:
                out.fail("the prober's stats", f"{stats_before} -> {stats_after}")
            out.attempts += 1
            added = _must(c.post("/v1/memories", json={"content": shared}), 201)
            if added.get("status") != "created":
                out.fail("add of a text the owner stored first", f"{added}")
    return out


# -- cross-tenant: MCP -------------------------------------------------------------------------
def probe_mcp(home: Path, tenant: str, owner: OwnerData, owner_tenant: str,
              env: Mapping[str, str] | None = None, timeout: float = 120.0) -> Outcome:
    """``varvemem mcp --tenant tenant`` (stdio) over ``home``, where ``owner`` (tenant
    ``owner_tenant``) has memories: every tool and resource that takes an id answers for the
    owner's ids as for unknown ones, no search or context with the owner's names and words shows them, and a
    ``tenant`` argument (the tools have none) is refused or changes nothing."""
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.shared.exceptions import MCPError
    from mcp.types import CallToolResult, TextContent

    out = Outcome("cross-tenant MCP")
    proc_env = dict(env if env is not None else
                    {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")})

    def text(res: CallToolResult) -> str:
        return "".join(c.text for c in res.content if isinstance(c, TextContent))

    def check(probe: str, body: str, unknown: str | None = None, mid: str = "",
              fake: str = "") -> None:
        out.attempts += 1
        found = owner.leaked_into(body.replace(mid, "") if unknown is not None
                                  else _without_echo(body))
        if unknown is not None and body.replace(mid, "<id>") != unknown.replace(fake, "<id>"):
            out.fail(probe, f"differs from an unknown id's: {body[:200]!r} vs {unknown[:200]!r}")
        elif found:
            out.fail(probe, f"shows the owner's {found[:3]}: {body[:300]}")
        if "Traceback" in body:
            out.fail(probe, f"a traceback: {body[:300]}")

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "varvemem", "--home", str(home), "mcp",
                                          "--tenant", tenant], env=proc_env)
        with tempfile.TemporaryFile("w+") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as s:
                await s.initialize()

                async def call(name: str, args: dict[str, Any]) -> str:
                    try:
                        return text(await s.call_tool(name, args))
                    except MCPError as exc:
                        return f"error: {exc}"

                async def resource(uri: str) -> str:
                    try:
                        res = await s.read_resource(uri)
                        return json.dumps(res.model_dump(mode="json"))
                    except MCPError as exc:
                        return f"error: {exc}"

                for mid in owner.memory_ids:
                    fake = _unknown_like(mid)
                    for name, args in (("feedback", {"helpful": False, "weight": 1.0}),
                                       ("delete_memory", {})):
                        check(f"mcp {name} {mid}", await call(name, {"memory_id": mid, **args}),
                              await call(name, {"memory_id": fake, **args}), mid, fake)
                    check(f"mcp resource {mid}", await resource(f"varvemem://memories/{mid}"),
                          await resource(f"varvemem://memories/{fake}"), mid, fake)
                check("mcp session resource",
                      await resource(f"varvemem://sessions/{owner.session}"))
                for q in (owner.marker, owner.question):
                    filters: list[dict[str, Any]] = [
                        {}, {"user": owner.user}, {"session": owner.session},
                        {"tags": [owner.tag]}, {"tenant": owner_tenant}]
                    for args in filters:
                        check(f"mcp search {q!r} {args}",
                              await call("search_memories", {"query": q, "top_k": 50, **args}))
                        check(f"mcp context {q!r} {args}",
                              await call("get_context", {"query": q, **args}))
                    check(f"mcp ask {q!r}", await call("ask", {"question": q}))
                    check(f"mcp ask {q!r} tenant", await call(
                        "ask", {"question": q, "tenant": owner_tenant}))
                added = await call("add_memory", {"content": f"Prober note {uuid.uuid4().hex}",
                                                  "tenant": owner_tenant})
                added_ids.append(added)
            errlog.seek(0)
            log = errlog.read()
            out.attempts += 1
            if "Traceback" in log:
                out.fail("mcp server log", log[-500:])

    added_ids: list[str] = []

    with _timed(out):
        async def bounded() -> None:
            with anyio.fail_after(timeout):
                await main()

        anyio.run(bounded)
        # An add that named the owner's tenant is the prober's, or was refused.
        from ..api import Memory
        from ..settings import Settings

        out.attempts += 1
        for reply in added_ids:
            try:
                mid = json.loads(reply)["memory_id"]
            except (ValueError, KeyError, TypeError):
                continue  # refused: fine
            with Memory(settings=Settings.load(home=home)) as mem:
                mine = {r.memory_id for r in _every(mem, tenant)}
                theirs = {r.memory_id for r in _every(mem, owner_tenant)}
            if mid in theirs or mid not in mine:
                out.fail("mcp add_memory with a tenant argument",
                         f"{mid} stored in tenant {owner_tenant!r}, not {tenant!r}")
    return out


# -- bad input ---------------------------------------------------------------------------------
@dataclass
class Case:
    """A malformed request and what it must get: ``"4xx"`` (a JSON error) or ``"<500"`` (any
    answer but a server error: inputs that may well be valid, e.g. odd session names)."""

    name: str
    method: str
    path: str
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] | None = None
    expect: str = "4xx"
    anonymous: bool = False
    chunked: bool = False  # the body streamed in chunks, with no Content-Length


JSON = {"Content-Type": "application/json"}
OUT_OF_RANGE = ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59"]
BAD_DATES = [*OUT_OF_RANGE, "10000-01-01T00:00:00Z", "2026-13-45T00:00:00Z", "0000-00-00",
             "-0001-01-01T00:00:00Z", "2026-01-01T25:61:61Z", "99999999999999999999", "now", ""]
YAML_BOMB = ('---\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
             'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n'
             'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n'
             'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n---\n'
             '# Bomb\n\nbody text about the release train\n')


def _j(value: Any) -> bytes:
    return json.dumps(value).encode()


# JSON strings no store keeps: a lone surrogate (not Unicode) and U+0000 (PostgreSQL refuses it).
BAD_TEXT = (("lone surrogate", '"bad \\ud800 text"'), ("NUL", '"bad \\u0000 text"'))


def bad_input_cases(memory_id: str, max_body_bytes: int, webhook: str | None = None,
                    traversal_name: str = "varvemem-traversal-probe") -> list[Case]:
    """The malformed requests: lone surrogates and NULs in every text field, metadata nested
    300 levels and JSON nested past any parser's limit, dates out of range, bodies over the limit (by
    length and chunked), malformed JSON, wrong types, NaN and huge numbers, path traversal in
    ids, session names and document sources, bad webhook signatures, a YAML bomb in a document.
    ``memory_id``: an existing memory of the key's tenant (for PATCH and feedback)."""
    cases: list[Case] = []
    for (what, bad), (field_name, template) in itertools.product(BAD_TEXT, (
            ("content", '{"content": %s}'),
            ("tags", '{"content": "deploys are on fridays", "tags": ["ok", %s]}'),
            ("metadata value", '{"content": "deploys are on fridays", "metadata": {"k": %s}}'),
            ("metadata key", '{"content": "deploys are on fridays", "metadata": {%s: 1}}'),
            ("deep metadata", '{"content": "deploys", "metadata": {"a": [{"b": [%s]}]}}'),
            ("source", '{"content": "deploys are on fridays", "source": %s}'),
            ("user", '{"content": "deploys are on fridays", "user": %s}'),
            ("question", '{"content": "q a", "type": "qa", "question": %s, "answer": "a"}'),
            ("answer", '{"content": "q a", "type": "qa", "question": "q?", "answer": %s}'),
            ("agent", '{"content": "deploys are on fridays", "agent": %s}'))):
        body = (template % bad).encode()
        cases.append(Case(f"{what} in {field_name}", "POST", "/v1/memories", body, JSON))
        cases.append(Case(f"{what} in batch {field_name}", "POST", "/v1/memories/batch",
                          b'{"items": [' + body + b"]}", JSON))
    for (what, bad), (path, template) in itertools.product(BAD_TEXT, (
            ("/v1/search", '{"query": %s}'), ("/v1/context", '{"query": %s}'),
            ("/v1/search", '{"query": "x", "tags": [%s]}'),
            ("/v1/search", '{"query": "x", "user": %s}'),
            ("/v1/ask", '{"question": %s}'),
            ("/v1/documents", '{"source": "a.md", "text": %s}'),
            ("/v1/documents", '{"source": %s, "text": "hello"}'),
            ("/v1/sessions/s-1/turns", '{"messages": [{"content": %s}]}'),
            (f"/v1/memories/{memory_id}/feedback", '{"helpful": true, "reason": %s}'))):
        cases.append(Case(f"{what} in {path} {template[:20]}", "POST", path,
                          (template % bad).encode(), JSON))
    for (what, bad), template in itertools.product(BAD_TEXT, (
            '{"content": %s}', '{"tags": [%s]}', '{"metadata": {%s: 1}}', '{"reason": %s}')):
        cases.append(Case(f"{what} in PATCH {template}", "PATCH",
                          f"/v1/memories/{memory_id}", (template % bad).encode(), JSON))
    for depth in (33, 129, 300):
        cases.append(Case(f"metadata nested {depth} levels", "POST", "/v1/memories",
                          _j({"content": "the runbook lives in the wiki",
                              "metadata": nested(depth)}), JSON))
        cases.append(Case(f"PATCH metadata nested {depth} levels", "PATCH",
                          f"/v1/memories/{memory_id}", _j({"metadata": nested(depth)}), JSON))
    deep = min(20_000, max(1000, (max_body_bytes - 200) // 2))
    cases.append(Case(f"JSON arrays nested {deep} levels", "POST", "/v1/memories",
                      b'{"content": "x", "metadata": {"a": ' + b"[" * deep + b"]" * deep + b"}}",
                      JSON))
    cases.append(Case(f"JSON objects nested {deep // 6} levels", "POST", "/v1/search",
                      b'{"query": ' + b'{"a":' * (deep // 6) + b"1" + b"}" * (deep // 6) + b"}",
                      JSON))
    for when in BAD_DATES:
        cases.append(Case(f"created_at {when!r}", "POST", "/v1/memories",
                          _j({"content": "we ship on tuesdays", "created_at": when}), JSON))
        for name in ("as_of", "since", "until"):
            cases.append(Case(f"{name} {when!r}", "POST", "/v1/search",
                              _j({"query": "ship", name: when}), JSON))
    cases.append(Case("context as_of out of range", "POST", "/v1/context",
                      _j({"query": "ship", "as_of": OUT_OF_RANGE[0]}), JSON))
    over = b'{"content": "' + b"x" * (max_body_bytes + 10) + b'"}'
    cases += [
        Case("body over the limit", "POST", "/v1/memories", over, JSON),
        Case("chunked body over the limit", "POST", "/v1/memories", over, JSON, chunked=True),
        Case("document over the limit", "POST", "/v1/documents",
             _j({"source": "big.md", "text": "y" * (max_body_bytes + 10)}), JSON),
        Case("malformed JSON", "POST", "/v1/memories", b'{"content": "x"', JSON),
        Case("JSON with a trailing comma", "POST", "/v1/memories", b'{"content": "x",}', JSON),
        Case("empty body", "POST", "/v1/memories", b"", JSON),
        Case("body null", "POST", "/v1/memories", b"null", JSON),
        Case("body a string", "POST", "/v1/search", b'"query"', JSON),
        Case("body not UTF-8", "POST", "/v1/memories", b'{"content": "\xff\xfe\xfd"}', JSON),
        Case("form body", "POST", "/v1/memories", b"content=x",
             {"Content-Type": "application/x-www-form-urlencoded"}),
        Case("no content type", "POST", "/v1/memories", b'{"content": "x"}', {}),
        Case("NaN importance", "POST", "/v1/memories", b'{"content": "x y z", "importance": NaN}',
             JSON),
        Case("Infinity ttl", "POST", "/v1/memories",
             b'{"content": "x y z", "ttl_days": Infinity}', JSON),
        Case("NaN weight", "POST", f"/v1/memories/{memory_id}/feedback",
             b'{"helpful": true, "weight": NaN}', JSON),
        Case("huge top_k", "POST", "/v1/search", _j({"query": "x", "top_k": 10**30}), JSON),
        Case("float top_k", "POST", "/v1/search", b'{"query": "x", "top_k": 1e300}', JSON),
        Case("top_k text", "POST", "/v1/search", _j({"query": "x", "top_k": "ten"}), JSON),
        Case("max_tokens negative", "POST", "/v1/context",
             _j({"query": "x", "max_tokens": -5}), JSON),
        Case("content a number", "POST", "/v1/memories", _j({"content": 123}), JSON),
        Case("content a list", "POST", "/v1/memories", _j({"content": ["a", "b"]}), JSON),
        Case("tags a string", "POST", "/v1/memories", _j({"content": "x y", "tags": "a,b"}), JSON),
        Case("metadata a list", "POST", "/v1/memories", _j({"content": "x y", "metadata": [1]}),
             JSON),
        Case("unknown type", "POST", "/v1/memories", _j({"content": "x y", "type": "poem"}), JSON),
        Case("unknown tier", "POST", "/v1/memories", _j({"content": "x y", "tier": "attic"}),
             JSON),
        Case("unknown field", "POST", "/v1/memories", _j({"content": "x y", "colour": 1}), JSON),
        Case("helpful text", "POST", f"/v1/memories/{memory_id}/feedback",
             _j({"helpful": "yes please"}), JSON),
        Case("empty batch", "POST", "/v1/memories/batch", _j({"items": []}), JSON),
        Case("batch of 1001", "POST", "/v1/memories/batch",
             _j({"items": [{"content": "x"}] * 1001}), JSON),
        Case("event ids text", "POST", "/v1/inbox/retry", _j({"event_ids": ["one"]}), JSON),
        Case("event id 2**70", "POST", "/v1/inbox/retry", _j({"event_ids": [2**70]}), JSON),
        Case("inbox after 2**64", "GET", "/v1/inbox", params={"after": str(2**64)}),
        Case("list limit 0", "GET", "/v1/memories", params={"limit": "0"}),
        Case("list limit text", "GET", "/v1/memories", params={"limit": "many"}),
        Case("list include_superseded text", "GET", "/v1/memories",
             params={"include_superseded": "perhaps"}),
        Case("unknown job", "POST", "/v1/consolidate", _j({"jobs": ["everything"]}), JSON),
        Case("unknown profile", "POST", "/v1/search", _j({"query": "x", "profile": "nope"}),
             JSON),
        Case("memory id traversal", "GET", "/v1/memories/..%2F..%2F..%2Fetc%2Fpasswd"),
        Case("memory id with a NUL", "GET", "/v1/memories/mem_%00abc"),
        Case("user not UTF-8 in the query string", "GET", "/v1/memories?user=%ED%A0%80"),
        Case("session not UTF-8 in the path", "POST", "/v1/sessions/s%FFx/turns",
             _j({"messages": [{"content": "hello"}]}), JSON),
        Case("user not UTF-8 in the path", "DELETE", "/v1/users/a%FFb"),
        Case("body not UTF-8 JSON", "POST", "/v1/search", b'{"query": "caf\xe9"}', JSON),
        Case("memory id of 10k chars", "GET", "/v1/memories/mem_" + "a" * 10_000),
        Case("PATCH unknown id", "PATCH", "/v1/memories/mem_nope", _j({"content": "x"}), JSON),
        Case("method not allowed", "PUT", "/v1/stats", _j({}), JSON),
        Case("unknown route", "GET", "/v1/../../etc/passwd"),
        Case("bad key", "GET", "/v1/stats", headers={"Authorization": "Bearer msk_x_y"},
             anonymous=True),
        Case("bad scheme", "GET", "/v1/stats", headers={"Authorization": "Basic Zm9vOmJhcg=="},
             anonymous=True),
        Case("no key", "GET", "/v1/stats", anonymous=True),
    ]
    if webhook is not None:
        body = _j({"type": "deploy", "status": "failed", "id": "x", "message": "boom"})
        cases += [
            Case("webhook bad signature", "POST", f"/v1/webhooks/{webhook}", body,
                 {**JSON, "X-Varvemem-Signature": "sha256=" + "0" * 64,
                  "X-Hub-Signature-256": "sha256=" + "0" * 64}, anonymous=True),
            Case("webhook signature not hex", "POST", f"/v1/webhooks/{webhook}", body,
                 {**JSON, "X-Varvemem-Signature": "sha256=zz--not~hex",
                  "X-Hub-Signature-256": "sha256=zz"}, anonymous=True),
            Case("webhook signature of another algorithm", "POST", f"/v1/webhooks/{webhook}",
                 body, {**JSON, "X-Varvemem-Signature": "md5=abc",
                        "X-Hub-Signature-256": "sha1=abc"}, anonymous=True),
            Case("webhook no signature", "POST", f"/v1/webhooks/{webhook}", body, JSON,
                 anonymous=True),
            Case("webhook wrong url token", "POST", f"/v1/webhooks/{webhook}", body, JSON,
                 params={"token": "wrong"}, anonymous=True),
            Case("webhook malformed JSON", "POST", f"/v1/webhooks/{webhook}", b"{oops",
                 {**JSON, "X-Varvemem-Signature": "sha256=00"}, anonymous=True),
            Case("webhook over the limit", "POST", f"/v1/webhooks/{webhook}", over,
                 {**JSON, "X-Varvemem-Signature": "sha256=00"}, anonymous=True),
        ]
    cases += [
        Case("webhook unknown source", "POST", "/v1/webhooks/..%2F..%2Fetc",
             _j({"a": 1}), JSON, anonymous=True),
        # Inputs that may be valid: any answer but a 5xx (and no file outside the home).
        Case("session name traversal (turns)", "POST",
             f"/v1/sessions/..%2F..%2F..%2F..%2Ftmp%2F{traversal_name}/turns",
             _j({"messages": [{"content": "hello"}]}), JSON, expect="<500"),
        Case("session name traversal (read)", "GET",
             f"/v1/sessions/..%2F..%2F..%2F..%2Ftmp%2F{traversal_name}", expect="<500"),
        Case("session name traversal (close)", "POST",
             f"/v1/sessions/..%2F..%2F..%2F..%2Ftmp%2F{traversal_name}/close", expect="<500"),
        Case("session name traversal (ask)", "POST", "/v1/ask",
             _j({"question": "what is the release train?",
                 "session": f"../../../../tmp/{traversal_name}"}), JSON, expect="<500"),
        Case("session name traversal (memory)", "POST", "/v1/memories",
             _j({"content": "a note in an odd session",
                 "session": f"../../../../tmp/{traversal_name}"}), JSON, expect="<500"),
        Case("document source traversal", "POST", "/v1/documents",
             _j({"source": f"../../../../tmp/{traversal_name}.md", "text": "# T\n\nhello\n"}),
             JSON, expect="<500"),
        Case("session name with a NUL", "GET", "/v1/sessions/s%00x", expect="<500"),
        Case("YAML bomb as a document", "POST", "/v1/documents",
             _j({"source": "bomb.md", "text": YAML_BOMB}), JSON, expect="<500"),
        # JSON must be UTF-8 (RFC 8259), but Python's json reads UTF-16 and UTF-32 too.
        Case("body UTF-16", "POST", "/v1/memories",
             '{"content": "a UTF-16 body"}'.encode("utf-16"), JSON, expect="<500"),
        Case("control characters everywhere", "POST", "/v1/memories",
             _j({"content": "\x01\x02 bell \x07 esc \x1b[31m red", "tags": ["\x1b"],
                 "metadata": {"\x01": "\x7f"}}), JSON, expect="<500"),
    ]
    return cases


def probe_bad_input(url: str, key: str, *, max_body_bytes: int, webhook: str | None = None,
                    cases: Sequence[Case] | None = None,
                    outside: Path | None = Path(tempfile.gettempdir())) -> Outcome:
    """Sends each malformed request (:func:`bad_input_cases`, or ``cases``) with ``key`` (a
    writer's or admin's): each must be a 4xx with a JSON error (``expect="4xx"``) or at least
    no 5xx (``"<500"``), and the connection must answer the next request. The 4xx cases must
    store nothing, and none may create a file named after its traversal in ``outside``."""
    out = Outcome("bad input")
    name = f"varvemem-traversal-{uuid.uuid4().hex[:8]}"
    with _timed(out), _client(url, key) as c, _client(url, None) as anon:
        mid = _must(c.post("/v1/memories", json={"content": "The bad-input probe's own memory",
                                                 "metadata": {"a": 1}}), 201)["memory_id"]
        chosen = list(cases) if cases is not None else bad_input_cases(
            mid, max_body_bytes, webhook, name)
        stored = _must(c.get("/v1/stats"))["current"]
        checked_store = False
        for case in sorted(chosen, key=lambda k: k.expect != "4xx"):
            if case.expect != "4xx" and not checked_store:
                checked_store = True
                now = _must(c.get("/v1/stats"))["current"]
                out.attempts += 1
                if now != stored:
                    out.fail("nothing stored by the refused requests", f"{stored} -> {now}")
            client = anon if case.anonymous else c
            out.attempts += 1
            try:
                body: bytes | Iterator[bytes] | None = case.body
                if case.chunked and case.body is not None:
                    data = case.body
                    body = iter([data[i:i + 8192] for i in range(0, len(data), 8192)])
                resp = client.request(case.method, case.path, content=body,
                                      headers=case.headers, params=case.params)
            except httpx.HTTPError as exc:
                out.fail(case.name, f"no answer: {exc!r}")
                continue
            status = resp.status_code
            if status >= 500:
                out.server_errors += 1
                out.fail(case.name, f"{status}: {resp.text[:300]}")
            elif case.expect == "4xx":
                body = _json(resp)
                if not 400 <= status < 500:
                    out.fail(case.name, f"{status} (not a 4xx): {resp.text[:200]}")
                elif not (isinstance(body, dict) and isinstance(body.get("error"), dict)
                          and body["error"].get("message")):
                    out.fail(case.name, f"{status} without a JSON error: {resp.text[:200]}")
            # The connection is still usable: the same client is answered.
            try:
                alive = client.get("/healthz").status_code == 200
            except httpx.HTTPError:
                alive = False
            if not alive:
                out.fail(case.name, "the next request on the connection was not answered")
        if outside is not None:
            out.attempts += 1
            made = sorted(str(p) for p in outside.glob(f"{name}*"))
            if made:
                out.fail("path traversal", f"created outside the home: {made}")
    return out


# -- fuzz --------------------------------------------------------------------------------------
def probe_fuzz(url: str, key: str, examples: int = 15, seed: int | None = 0) -> Outcome:
    """Property-based requests from the server's own OpenAPI schema (schemathesis, a ``[dev]``
    dependency), for every operation, ``examples`` each that fit the schema and as many that
    break it, sent with ``key`` (an admin's): none may be a 5xx, and every 4xx carries a JSON
    error message. ``seed`` None: a new draw each run."""
    import hypothesis
    import schemathesis
    from schemathesis.generation.modes import GenerationMode

    out = Outcome("fuzz (schemathesis)")
    with _timed(out):
        schema: Any = schemathesis.openapi.from_url(f"{url}/openapi.json")
        operations = [r.ok() for r in schema.get_all_operations()]
        headers = {"Authorization": f"Bearer {key}"}
        modes: list[Any] = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
        for mode in modes:
            for op in operations:
                try:
                    _fuzz_operation(out, op, mode, url, headers, examples, seed)
                except hypothesis.errors.Unsatisfiable:
                    pass  # no input (GET /healthz): no schema-breaking variant
                except Exception as exc:  # the generator or the client, not the server
                    out.fail(f"{getattr(mode, 'value', mode)} {getattr(op, 'path', op)}",
                             f"the fuzzer raised {exc!r}")
    return out


def _fuzz_operation(out: Outcome, op: Any, mode: Any, url: str, headers: dict[str, str],
                    examples: int, seed: int | None) -> None:
    import hypothesis

    @hypothesis.settings(max_examples=examples, deadline=None, derandomize=seed is not None,
                         database=None, suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(case=op.as_strategy(mode))
    def check(case: Any) -> None:
        out.attempts += 1
        resp = case.call(base_url=url, headers=headers)
        where = f"{getattr(mode, 'value', mode)} {case.method} {case.formatted_path}"
        if resp.status_code >= 500:
            out.server_errors += 1
            out.fail(where, f"{resp.status_code}: {resp.text[:300]}")
        elif resp.status_code >= 400:
            try:
                message = resp.json()["error"]["message"]
            except (ValueError, KeyError, TypeError):
                message = None
            if not message:
                out.fail(where, f"{resp.status_code} without a JSON error: {resp.text[:200]}")

    check()


# -- kill -9 -----------------------------------------------------------------------------------
_WRITER = r"""
import json, random, sys
from varvemem import Memory, Settings
cfg = json.loads(sys.argv[1])
mem = Memory(settings=Settings.load(home=cfg["home"], **cfg["overrides"]))
words = cfg["words"]
print("ready", flush=True)
i = cfg["start"]
while True:
    rng = random.Random(i)
    text = f"write {i}: " + " ".join(rng.sample(words, 9))
    res = mem.add(text, tenant=cfg["tenant"])
    print(i, res.memory_id, res.status, flush=True)
    i += 1
"""


def _every(mem: Any, tenant: str) -> list[Any]:
    """Every live memory of ``tenant``, superseded ones too, a page at a time."""
    out: list[Any] = []
    while True:
        page = mem.get_all(tenant=tenant, include_superseded=True, limit=10_000,
                           after=out[-1].memory_id if out else "")
        out += page
        if len(page) < 10_000:
            return out


def _content_of(i: int) -> str:
    rng = random.Random(i)
    return f"write {i}: " + " ".join(rng.sample(_vocabulary(), 9))


def probe_kill9(home: Path, overrides: Mapping[str, Any] | None = None, *, rounds: int = 3,
                max_writes: int = 30, seed: int = 0, tenant: str = "kill9",
                env: Mapping[str, str] | None = None,
                open_memory: Callable[[], Any] | None = None, label: str = "sqlite",
                timeout: float = 120.0) -> Outcome:
    """``rounds`` times: a writer process opens the store (``home`` and the settings
    ``overrides``, e.g. ``{"store": {"url": ...}}``), adds memories and prints each id once
    ``add`` returned; after a random number of acknowledgements (1..``max_writes``) and a
    random pause of up to 30 ms (so the kill lands anywhere in the next add) it is killed with
    SIGKILL. The next round first sends again the write that was in flight (a client's retry).
    After each kill the store is opened (``open_memory()``, default ``Memory`` of the same
    settings) and every acknowledged id must be there, once, and no content stored twice."""
    from ..api import Memory
    from ..settings import Settings

    out = Outcome(f"kill -9 ({label})")
    rng = random.Random(seed)
    proc_env = dict(env if env is not None else
                    {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")})
    settings = dict(overrides or {})

    def opened() -> Any:
        if open_memory is not None:
            return open_memory()
        return Memory(settings=Settings.load(home=home, **settings))

    acked: dict[int, str] = {}  # write index -> the id its add returned
    start = 0
    with _timed(out):
        for r in range(rounds):
            cfg = {"home": str(home), "overrides": settings, "start": start, "tenant": tenant,
                   "words": _vocabulary()}
            proc = subprocess.Popen([sys.executable, "-c", _WRITER, json.dumps(cfg)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    env=proc_env)
            assert proc.stdout is not None and proc.stderr is not None
            target = rng.randint(1, max_writes)
            got = 0
            deadline = time.monotonic() + timeout
            try:
                line = proc.stdout.readline()
                if line.strip() != "ready":
                    raise RuntimeError(f"the writer did not start: {line!r} "
                                       f"{proc.stderr.read()[-2000:]}")
                while got < target and time.monotonic() < deadline:
                    line = proc.stdout.readline()
                    if not line:
                        break
                    i, mid, _status = line.split()
                    acked[int(i)] = mid
                    start = int(i) + 1
                    got += 1
                time.sleep(rng.uniform(0, 0.03))
            finally:
                os.kill(proc.pid, signal.SIGKILL)
                rest, err = proc.communicate(timeout=60)
            for line in rest.splitlines():  # acknowledged between the last read and the kill
                parts = line.split()
                if len(parts) == 3:
                    acked[int(parts[0])] = parts[1]
                    start = int(parts[0]) + 1
            if got < target and not acked:
                raise RuntimeError(f"the writer stopped early: {err[-2000:]}")
            out.attempts += got
            mem = opened()
            try:
                records = _every(mem, tenant)
            finally:
                mem.close()
            by_id = {rec.memory_id: rec for rec in records}
            contents = Counter(rec.content for rec in records)
            lost = [(i, mid) for i, mid in acked.items() if mid not in by_id
                    or by_id[mid].content != _content_of(i)]
            twice = [c for c, n in contents.items() if n > 1]
            if lost:
                out.lost = max(out.lost, len(lost))
                out.fail(f"round {r + 1}", f"{len(lost)} acknowledged writes missing, e.g. "
                                           f"{lost[:3]}")
            if twice:
                out.duplicated = max(out.duplicated, len(twice))
                out.fail(f"round {r + 1}", f"{len(twice)} contents stored twice, e.g. "
                                           f"{twice[:2]}")
            ids = Counter(acked.values())
            if any(n > 1 for n in ids.values()):
                out.fail(f"round {r + 1}", "one id acknowledged for two writes: "
                                           f"{[m for m, n in ids.items() if n > 1][:3]}")
    return out


@contextlib.contextmanager
def fresh_database(base_url: str, prefix: str = "varvemem_rel") -> Iterator[str]:
    """A new PostgreSQL database on the server of ``base_url`` (whose user may create
    databases): its URL; dropped afterwards, whoever is still connected."""
    from urllib.parse import urlsplit

    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlsplit(base_url)._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(base_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
