"""The inspector over plain HTTP (FastAPI's TestClient, no browser): login and sessions,
escaping, CSRF and Origin checks, roles, tenancy, and bad input as a one-line 422 page."""

from __future__ import annotations

import html
import io
import re
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from varvemem.server import create_app
from varvemem.ui import issue_login_token

from ._site import SCRIPT, Site, csrf_of, login, seed

ORIGIN = {"Origin": "http://testserver"}


@pytest.fixture
def site(tmp_path: Path, embedder: Any) -> Site:
    return seed(tmp_path / "home", embedder)


@pytest.fixture
def app(site: Site) -> Any:
    return create_app(memory=site.mem)


@pytest.fixture
def client(app: Any) -> Iterator[TestClient]:
    with TestClient(app, follow_redirects=False) as c:
        yield c


def logged_in(client: TestClient, key: str) -> TestClient:
    assert login(client, key).status_code == 303
    return client


def snapshot(site: Site) -> list[Any]:
    """What a change would show in: every memory (its retrieval counts too: the inspector's
    searches look without counting as a use), its history, the inbox and the Q&A pairs."""
    mem, out = site.mem, []
    for tenant in ("acme", "globex"):
        for rec in mem.get_all(tenant=tenant, include_superseded=True, limit=1000):
            out.append(rec.model_dump(exclude={"embedding"}))
            out.append([e.model_dump() for e in mem.history(rec.memory_id, tenant=tenant)])
        out.append([(e.event_id, e.status, e.attempts) for e in mem.inbox.events(tenant=tenant)])
    return out


def test_every_page_wants_a_login_and_the_login_sets_a_strict_cookie(client: TestClient,
                                                                      site: Site) -> None:
    for path in ("/ui", "/ui/search?q=x", f"/ui/memories/{site.ids['en']}", "/ui/sessions",
                 "/ui/qa", "/ui/inbox", "/ui/lifecycle", "/ui/qa/export"):
        r = client.get(path)
        assert r.status_code == 303 and r.headers["location"].startswith("/ui/login?next="), path
    r = login(client, site.reader)
    assert r.status_code == 303 and r.headers["location"] == "/ui"
    cookie = next(c for c in r.headers.get_list("set-cookie") if c.startswith("varvemem_ui="))
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
    page = client.get("/ui")
    assert page.status_code == 200 and "tenant <b>acme</b>" in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]


def test_a_bad_key_or_a_forged_login_form_is_refused(client: TestClient, site: Site) -> None:
    r = login(client, "msk_0123456789abcdef_" + "x" * 30)
    assert r.status_code == 403 and "unknown API key" in r.text
    form = client.get("/ui/login")
    r = client.post("/ui/login", data={"api_key": site.admin, "csrf": "forged"}, headers=ORIGIN)
    assert r.status_code == 403 and "did not come from this site" in r.text
    r = client.post("/ui/login", data={"api_key": site.admin, "csrf": csrf_of(form.text)},
                    headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and "varvemem_ui=" not in r.headers.get("set-cookie", "")


def test_a_one_time_login_token_works_once(app: Any, client: TestClient, site: Site) -> None:
    token = issue_login_token(app, site.admin)
    r = client.get(f"/ui/login?token={token}")
    assert r.status_code == 303 and r.headers["location"] == "/ui"
    assert client.get("/ui").status_code == 200
    client.cookies.clear()
    again = client.get(f"/ui/login?token={token}")
    assert again.status_code == 403 and "unknown, used or expired" in again.text
    assert client.get("/ui").status_code == 303


def test_a_revoked_key_is_logged_out_at_its_next_request(client: TestClient, site: Site) -> None:
    logged_in(client, site.writer)
    assert client.get("/ui").status_code == 200
    site.mem.keys.revoke(site.writer.split("_")[1])
    r = client.get("/ui")
    assert r.status_code == 303 and "revoked" in r.headers["location"]
    assert client.get("/ui").status_code == 303  # the session is gone too


def test_an_idle_session_ends(tmp_path: Path, embedder: Any) -> None:
    site = seed(tmp_path / "home", embedder, ui={"session_minutes": 0.005})  # 0.3 s
    with TestClient(create_app(memory=site.mem), follow_redirects=False) as client:
        logged_in(client, site.reader)
        assert client.get("/ui").status_code == 200
        time.sleep(0.5)
        assert client.get("/ui").status_code == 303


def test_content_is_shown_as_text_never_as_markup(client: TestClient, site: Site) -> None:
    logged_in(client, site.reader)
    for path in (f"/ui/memories/{site.ids['script']}", "/ui/search?q=release+checklist+wiki",
                 "/ui"):
        page = client.get(path).text
        assert "<script>" not in page, path
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page, path
    transcript = client.get("/ui/sessions/chat-1").text
    assert "<strong>staging</strong>" in transcript  # Markdown is rendered...
    assert "<b>please</b>" not in transcript and "&lt;b&gt;please&lt;/b&gt;" in transcript
    assert SCRIPT not in client.get("/ui/qa").text


def test_a_post_without_the_csrf_token_or_from_another_origin_changes_nothing(
        client: TestClient, site: Site) -> None:
    logged_in(client, site.admin)
    mid = site.ids["en"]
    token = csrf_of(client.get(f"/ui/memories/{mid}").text)
    before = snapshot(site)
    edit = {"content": "changed", "tags": "x", "importance": "0.9"}
    for data, headers in (
            (edit, ORIGIN),  # no token
            ({**edit, "csrf": "wrong"}, ORIGIN),
            ({**edit, "csrf": token}, {"Origin": "http://evil.example"}),
            ({**edit, "csrf": token}, {"Referer": "http://evil.example/ui"}),
            ({**edit, "csrf": token}, {})):  # neither Origin nor Referer
        r = client.post(f"/ui/memories/{mid}/edit", data=data, headers=headers)
        assert r.status_code == 403 and "refused" in r.text, (data, headers)
    r = client.post("/ui/inbox/retry", data={"event_id": site.failed_event}, headers=ORIGIN)
    assert r.status_code == 403
    assert snapshot(site) == before
    r = client.post(f"/ui/memories/{mid}/edit", data={**edit, "csrf": token},
                    headers={"Referer": f"http://testserver/ui/memories/{mid}"})
    assert r.status_code == 303
    assert site.mem.get(mid, tenant="acme").content == "changed"


def test_a_read_key_sees_no_edit_buttons_and_its_posts_are_refused(client: TestClient,
                                                                    site: Site) -> None:
    logged_in(client, site.reader)
    mid = site.ids["en"]
    page = client.get(f"/ui/memories/{mid}").text
    assert "/edit" not in page and "/delete" not in page and "/feedback" not in page
    assert "/vote" not in client.get("/ui/qa").text
    token = csrf_of(page)  # the logout form's: the session's token
    before = snapshot(site)
    for path, data in ((f"/ui/memories/{mid}/edit", {"content": "x"}),
                       (f"/ui/memories/{mid}/delete", {}),
                       (f"/ui/qa/{site.ids['qa']}/vote", {"kind": "up"}),
                       ("/ui/lifecycle/run", {})):
        r = client.post(path, data={**data, "csrf": token}, headers=ORIGIN)
        assert r.status_code == 403, path
        shown = html.unescape(r.text)
        assert "role 'read' may not do this (needs 'write')" in shown \
            or "needs 'admin'" in shown, path
    assert client.get("/ui/inbox").status_code == 403
    assert snapshot(site) == before


def test_another_tenants_memory_is_not_found(client: TestClient, site: Site) -> None:
    logged_in(client, site.admin)
    r = client.get(f"/ui/memories/{site.ids['globex']}")
    assert r.status_code == 404 and "text/html" in r.headers["content-type"]
    assert "Globex" not in r.text
    token = csrf_of(r.text)
    r = client.post(f"/ui/memories/{site.ids['globex']}/edit",
                    data={"content": "taken over", "csrf": token}, headers=ORIGIN)
    assert r.status_code == 404
    r = client.get(f"/ui/search?q=invoices&memory={site.ids['globex']}")
    assert r.status_code == 404
    assert site.mem.get(site.ids["globex"], tenant="globex").content.startswith("Globex")


@pytest.mark.parametrize(("query", "message"), [
    ("q=x&top_k=abc", "top_k: 'abc' is not a whole number"),
    ("q=x&top_k=0", "top_k"),
    ("q=x&since=yesterday", "since: 'yesterday' is not a date"),
    ("q=x&type=novel", "unknown memory type 'novel'"),
    ("q=x&tier=attic", "unknown tier 'attic'"),
    ("q=x&profile=nope", "unknown retrieval profile 'nope'"),
    ("memory=mem_00", "why not: give the query"),
])
def test_bad_search_input_is_a_422_page_with_one_line(client: TestClient, site: Site,
                                                      query: str, message: str) -> None:
    logged_in(client, site.reader)
    r = client.get(f"/ui/search?{query}")
    assert r.status_code == 422, r.text[-500:]
    [line] = re.findall(r'<p class="error" role="alert">([^<]*)</p>', r.text)
    assert message in html.unescape(line)


def test_a_bad_edit_is_a_422_page_and_changes_nothing(client: TestClient, site: Site) -> None:
    logged_in(client, site.writer)
    mid = site.ids["en"]
    token = csrf_of(client.get(f"/ui/memories/{mid}").text)
    before = snapshot(site)
    for data in ({"importance": "2"}, {"importance": "high"}, {"content": "   "}):
        r = client.post(f"/ui/memories/{mid}/edit", data={**data, "csrf": token}, headers=ORIGIN)
        assert r.status_code == 422, (data, r.text[-300:])
        assert '<p class="error" role="alert">' in r.text
    r = client.post(f"/ui/qa/{site.ids['qa']}/edit", data={"score": "7", "csrf": token},
                    headers=ORIGIN)
    assert r.status_code == 422
    assert snapshot(site) == before


def test_a_get_never_changes_anything(client: TestClient, site: Site) -> None:
    logged_in(client, site.admin)
    before = snapshot(site)
    for path in ("/ui", "/ui/search?q=API+gateway+port", "/ui/search?q=数据库备份",
                 f"/ui/search?q=API+gateway+port&memory={site.ids['old_port']}",
                 f"/ui/memories/{site.ids['new_port']}", "/ui/sessions", "/ui/sessions/chat-1",
                 "/ui/qa", "/ui/qa/export", "/ui/inbox", "/ui/inbox?status=failed",
                 "/ui/lifecycle", "/ui/lifecycle?plan=1", "/ui/logout",
                 f"/ui/memories/{site.ids['en']}/edit", "/ui/inbox/retry"):
        r = client.get(path)
        assert r.status_code in (200, 405), (path, r.status_code)
    assert snapshot(site) == before


def test_the_qa_export_is_a_zip_of_the_pairs(client: TestClient, site: Site) -> None:
    logged_in(client, site.reader)
    r = client.get("/ui/qa/export")
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(r.content)).namelist()
    assert names == [f"qa-{site.ids['qa']}.md"]


def test_retry_re_arms_a_failed_event(client: TestClient, site: Site) -> None:
    logged_in(client, site.admin)
    page = client.get("/ui/inbox?status=failed").text
    assert f'data-id="{site.failed_event}"' in page and "[1, 2]" in page
    r = client.post("/ui/inbox/retry", data={"event_id": site.failed_event,
                                            "csrf": csrf_of(page)}, headers=ORIGIN)
    assert r.status_code == 303 and "re-armed%201" in r.headers["location"]
    [event] = site.mem.inbox.events(tenant="acme")
    assert event.status == "pending"


def test_the_static_files_and_no_schema_entry(client: TestClient) -> None:
    assert client.get("/ui/static/ui.css").status_code == 200
    assert not [p for p in client.get("/openapi.json").json()["paths"] if p.startswith("/ui")]


def test_feedback_restore_and_delete_by_a_write_key(client: TestClient, site: Site) -> None:
    logged_in(client, site.writer)
    old, mem = site.ids["old_port"], site.mem
    page = client.get(f"/ui/memories/{old}").text
    assert f"/ui/memories/{old}/restore" in page and site.ids["new_port"] in page
    token = csrf_of(page)
    before = mem.get(old, tenant="acme").importance
    r = client.post(f"/ui/memories/{old}/feedback", data={"helpful": "up", "csrf": token},
                    headers=ORIGIN)
    assert r.status_code == 303 and mem.get(old, tenant="acme").importance > before
    r = client.post(f"/ui/memories/{old}/restore", data={"csrf": token}, headers=ORIGIN)
    assert r.status_code == 303 and r.headers["location"].startswith(f"/ui/memories/{old}")
    assert mem.get(old, tenant="acme").superseded_by is None
    assert "restored" in client.get(r.headers["location"]).text
    r = client.post(f"/ui/memories/{old}/delete", data={"csrf": token, "reason": "stale"},
                    headers=ORIGIN)
    assert r.status_code == 303
    assert client.get(f"/ui/memories/{old}").status_code == 404
    assert mem.history(old, tenant="acme")[-1].action == "delete"


def test_a_session_of_no_one_or_of_another_tenant_is_not_found(client: TestClient,
                                                               site: Site) -> None:
    logged_in(client, site.other)  # globex
    assert client.get("/ui/sessions").text.count("/ui/sessions/chat-1") == 0
    assert client.get("/ui/sessions/chat-1").status_code == 404
    assert client.get("/ui/sessions/nope").status_code == 404


def test_a_login_token_issued_through_the_service_works(app: Any, client: TestClient,
                                                        site: Site) -> None:
    token = issue_login_token(app.state.service, site.reader)
    assert client.get(f"/ui/login?token={token}").status_code == 303
    assert "role-read" in client.get("/ui").text


def test_the_memory_page_shows_the_chain_both_ways(client: TestClient, site: Site) -> None:
    logged_in(client, site.reader)
    new = client.get(f"/ui/memories/{site.ids['new_port']}").text
    assert "it superseded" in new and site.ids["old_port"] in new
    old = client.get(f"/ui/memories/{site.ids['old_port']}").text
    assert "superseded by" in old and site.ids["new_port"] in old
    short = client.get(f"/ui/memories/{site.ids['new_port'][:12]}")  # a short id
    assert short.status_code == 200 and site.ids["old_port"] in short.text


def test_an_admin_runs_the_lifecycle(client: TestClient, site: Site) -> None:
    logged_in(client, site.admin)
    page = client.get("/ui/lifecycle?plan=1&jobs=sessions").text
    r = client.post("/ui/lifecycle/run", data={"jobs": "sessions", "csrf": csrf_of(page)},
                    headers=ORIGIN)
    assert r.status_code == 200 and 'id="report"' in r.text and "sessions" in r.text


def test_a_dry_run_at_a_chosen_time(client: TestClient, site: Site) -> None:
    """The lifecycle page plans at the time given (a year on: the idle sessions end, old
    memories are forgotten), changes nothing, and a bad time is a 422 with one line."""
    logged_in(client, site.admin)
    before = client.get("/ui/lifecycle?plan=1").text
    later = client.get("/ui/lifecycle?plan=1&at=2031-06-01T12:00").text
    assert "Dry run at 2031-06-01" in later
    assert later.count('class="planned"') > before.count('class="planned"')
    assert client.get("/ui/lifecycle?plan=1").text.count('class="planned"') == \
        before.count('class="planned"')
    bad = client.get("/ui/lifecycle?plan=1&at=next+week")
    assert bad.status_code == 422 and "at: &#39;next week&#39; is not a date" in bad.text


def test_forms_are_taken_by_the_inspector_only(client: TestClient, site: Site) -> None:
    """The body gate admits an HTML form under /ui/ alone: the API still answers 415, and a
    form over the size limit is 413 wherever it goes."""
    r = client.post("/v1/memories", data={"content": "a form, not JSON"},
                    headers={"Authorization": f"Bearer {site.admin}"})
    assert r.status_code == 415 and r.json()["error"]["type"] == "unsupported_media_type"
    big = {"api_key": "x" * (site.mem.settings.server.max_body_bytes + 10), "csrf": "y"}
    assert client.post("/ui/login", data=big, headers=ORIGIN).status_code == 413
