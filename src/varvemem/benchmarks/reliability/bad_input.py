"""Bad-input probes: malformed requests (:func:`bad_input_cases`, sent by
:func:`probe_bad_input`), each a 4xx with a JSON error or at least no 5xx, and requests
generated from the OpenAPI schema (:func:`probe_fuzz`), none a 5xx.
"""

from __future__ import annotations

import itertools
import json
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .common import Outcome, nested
from .common import client as _client
from .common import json_body as _json
from .common import must as _must
from .common import timed as _timed


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
