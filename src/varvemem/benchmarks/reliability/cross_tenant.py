"""Cross-tenant probes over HTTP: what the owner stores (:func:`seed_owner`), then the
prober's attempts by id, by filters, through the other endpoints and by side channel.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from .common import Outcome
from .common import client as _client
from .common import json_body as _json
from .common import must as _must
from .common import timed as _timed
from .common import unknown_like as _unknown_like
from .common import vocabulary as _vocabulary


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
    found = owner.leaked_into(without_echo(resp.text))
    if found:
        out.fail(probe, f"the answer ({resp.status_code}) shows the owner's {found[:3]}: "
                        f"{resp.text[:300]}")


def without_echo(text: str) -> str:
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
