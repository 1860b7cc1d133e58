"""The inspector in a real browser (Playwright driving Debian's Chromium) against a real
server on loopback: log in, search in English and Chinese and read the bars against the API's
scores, ask why not, edit a Q&A pair, retry a failed event, and the refusals. Each page is
saved as a screenshot in ``build/ui-screenshots/``.

Under CI a missing Chromium or Playwright fails these tests; elsewhere they skip."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import under_ci

from ._site import EN, SCRIPT, ZH, Running, Site, seed, serve

SHOTS = Path(__file__).resolve().parents[2] / "build" / "ui-screenshots"
WIDTH = 1280


def _chromium() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium")
                                         else None)
    if path is None:
        if under_ci():
            pytest.fail("chromium is not installed (apt-get install chromium)", pytrace=False)
        pytest.skip("the browser tests need chromium (apt-get install chromium)")
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Site:
    return seed(tmp_path_factory.mktemp("ui") / "home", embedder)


@pytest.fixture(scope="module")
def server(site: Site) -> Iterator[Running]:
    running = serve(site.mem)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if under_ci():
            pytest.fail("playwright is not installed", pytrace=False)
        pytest.skip("the browser tests need playwright")
    executable = _chromium()
    pw = sync_playwright().start()
    chromium = pw.chromium.launch(executable_path=executable,
                                  args=["--no-sandbox", "--disable-background-networking",
                                        "--disable-component-update", "--no-first-run"])
    yield chromium
    chromium.close()
    pw.stop()


def open_page(browser: Any, server: Running, key: str) -> Any:
    """A page of a fresh browser context, logged in with ``key`` through the form."""
    context = browser.new_context(viewport={"width": WIDTH, "height": 900}, base_url=server.url)
    page = context.new_page()
    page.goto("/ui")
    assert "/ui/login" in page.url
    page.fill("input[name=api_key]", key)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server.url}/ui")
    return page


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@pytest.fixture(scope="module")
def admin(browser: Any, server: Running, site: Site) -> Iterator[Any]:
    page = open_page(browser, server, site.admin)
    yield page
    page.context.close()


def api_hits(server: Running, key: str, query: str) -> dict[str, dict[str, Any]]:
    r = httpx.post(f"{server.url}/v1/search", json={"query": query},
                   headers={"Authorization": f"Bearer {key}"}, timeout=30)
    r.raise_for_status()
    return {h["memory_id"]: h for h in r.json()["hits"]}


def page_bars(page: Any) -> dict[str, dict[str, tuple[float, float]]]:
    """Each hit's bars as drawn: component -> (data-value, the fill's width)."""
    return page.eval_on_selector_all("li.hit", """hits => Object.fromEntries(hits.map(h => [
        h.dataset.id, Object.fromEntries([...h.querySelectorAll('svg.bar')].map(b => [
            b.dataset.name, [parseFloat(b.dataset.value),
                             parseFloat(b.querySelector('rect.fill').getAttribute('width'))]]))]))""")


def test_login_shows_the_overview(browser: Any, server: Running, site: Site) -> None:
    context = browser.new_context(viewport={"width": WIDTH, "height": 900}, base_url=server.url)
    page = context.new_page()
    page.goto("/ui/search")
    assert "/ui/login" in page.url
    shot(page, "login")
    page.fill("input[name=api_key]", site.admin)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server.url}/ui/search")  # back where it was going
    page.goto("/ui")
    assert page.locator("#by-tier").inner_text()
    assert "failed" in page.locator("#inbox-health").inner_text()
    assert page.locator("svg.chart").count() == 1
    shot(page, "overview")
    context.close()


@pytest.mark.parametrize(("query", "expected", "name"), [
    ("API gateway port", "new_port", "search-en"),
    ("数据库备份什么时候运行", "zh", "search-zh"),
])
def test_search_draws_the_apis_scores(admin: Any, server: Running, site: Site, query: str,
                                      expected: str, name: str) -> None:
    admin.goto("/ui/search")
    admin.fill("input[name=q]", query)
    admin.click("form.search button[type=submit]")
    admin.wait_for_selector("li.hit")
    bars = page_bars(admin)
    assert next(iter(bars)) == site.ids[expected]
    api = api_hits(server, site.reader, query)
    assert list(bars) == list(api)
    for mid, drawn in bars.items():
        for component in ("semantic", "keyword", "tag", "recency", "importance", "reliability",
                          "ttl_weight"):
            value, width = drawn[component]
            assert value == pytest.approx(api[mid]["scores"][component], abs=1e-3), component
            assert width == pytest.approx(min(1.0, max(0.0, value)) * 160, abs=0.02)
    weights = admin.eval_on_selector_all(
        "li.hit:first-child svg.bar[data-weight]",
        "bs => Object.fromEntries(bs.map(b => [b.dataset.name, parseFloat(b.dataset.weight)]))")
    assert weights == pytest.approx(site.mem.settings.retrieval.profile().weights.model_dump())
    assert "vector" in admin.locator("li.hit:first-child .channels").inner_text()
    if expected == "zh":
        assert ZH in admin.locator("li.hit:first-child .content").inner_text()
    shot(admin, name)


def test_why_not_a_superseded_memory_names_its_replacement(admin: Any, site: Site) -> None:
    admin.goto(f"/ui/memories/{site.ids['old_port']}")
    assert site.ids["new_port"] in admin.locator("#chain").inner_text()
    shot(admin, "memory")
    admin.fill("#chain input[name=q]", "API gateway port")
    admin.click("#chain button[type=submit]")
    admin.wait_for_selector("#why-not")
    assert admin.get_attribute("#why-not", "data-verdict") == "superseded"
    assert site.ids["new_port"] in admin.locator("#why-not .superseded-by").inner_text()
    shot(admin, "why-not-superseded")


def test_why_not_a_filtered_memory_names_the_rule(admin: Any, site: Site) -> None:
    admin.goto("/ui/search?q=staging+cluster&type=dialogue&memory=" + site.ids["en"])
    admin.wait_for_selector("#why-not")
    assert admin.get_attribute("#why-not", "data-verdict") == "filtered"
    assert "type" in admin.locator("#why-not .rule").inner_text()
    shot(admin, "why-not-filtered")


def test_edit_a_qa_pair(admin: Any, site: Site) -> None:
    admin.goto("/ui/qa")
    form = admin.locator(f"section.qa[data-id='{site.ids['qa']}'] form.qa-edit")
    form.locator("textarea[name=answer]").fill("Run vpn-reset --force on jump-2.")
    form.locator("button[type=submit]").click()
    admin.wait_for_selector("p.done")
    assert "pair saved" in admin.locator("p.done").inner_text()
    assert site.mem.get(site.ids["qa"], tenant="acme").answer == "Run vpn-reset --force on jump-2."
    shot(admin, "qa")


def test_retry_a_failed_inbox_event(admin: Any, site: Site) -> None:
    admin.goto("/ui/inbox?status=failed")
    row = admin.locator(f"tr.event[data-id='{site.failed_event}']")
    assert "payload must be a JSON object" in row.inner_text()
    shot(admin, "inbox")
    row.locator("button.retry").click()
    admin.wait_for_selector("p.done")
    assert "re-armed 1" in admin.locator("p.done").inner_text()
    [event] = site.mem.inbox.events(tenant="acme")
    assert event.status == "pending"


def test_sessions_and_lifecycle_pages(admin: Any, site: Site) -> None:
    admin.goto("/ui/sessions")
    shot(admin, "sessions")
    admin.click("text=chat-1")
    assert admin.locator("#transcript strong").inner_text() == "staging"
    assert "<b>please</b>" in admin.locator("#transcript").inner_text()  # as text
    shot(admin, "session")
    admin.goto("/ui/lifecycle")
    admin.click("text=Dry run")
    shot(admin, "lifecycle")


def test_a_read_key_is_refused_an_edit(browser: Any, server: Running, site: Site) -> None:
    page = open_page(browser, server, site.reader)
    page.goto(f"/ui/memories/{site.ids['en']}")
    assert page.locator("form#edit").count() == 0
    before = site.mem.get(site.ids["en"], tenant="acme")
    # The form it is not shown, posted anyway (with the session's CSRF token).
    page.evaluate("""([id]) => { const f = document.createElement('form'); f.method = 'post';
        f.action = '/ui/memories/' + id + '/edit';
        for (const [k, v] of [['csrf', document.querySelector('input[name=csrf]').value],
                              ['content', 'overwritten']]) {
            const i = document.createElement('input'); i.name = k; i.value = v; f.appendChild(i); }
        document.body.appendChild(f); f.submit(); }""", [site.ids["en"]])
    page.wait_for_selector("p.error")
    assert "may not do this (needs 'write')" in page.locator("p.error").inner_text()
    shot(page, "refused-read-key")
    assert site.mem.get(site.ids["en"], tenant="acme").content == before.content == EN
    page.context.close()


def test_another_tenants_memory_is_a_404(admin: Any, site: Site) -> None:
    response = admin.goto(f"/ui/memories/{site.ids['globex']}")
    assert response.status == 404
    assert "Globex" not in admin.content()


def test_a_script_in_a_memory_is_shown_as_text(admin: Any, site: Site) -> None:
    dialogs: list[str] = []
    admin.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    admin.goto(f"/ui/memories/{site.ids['script']}")
    assert admin.locator("#content").inner_text() == SCRIPT
    admin.goto("/ui/search?q=release+checklist+wiki")
    admin.wait_for_selector("li.hit")
    assert SCRIPT in admin.locator("li.hit").first.inner_text()
    admin.wait_for_timeout(300)
    assert dialogs == []


def test_a_post_from_another_origin_or_without_the_token_is_refused(admin: Any,
                                                                    site: Site) -> None:
    mid = site.ids["en"]
    admin.goto(f"/ui/memories/{mid}")
    token = admin.get_attribute("form#edit input[name=csrf]", "value")
    request = admin.context.request  # the browser's cookies
    evil = request.post(f"/ui/memories/{mid}/edit", form={"csrf": token, "content": "evil"},
                        headers={"Origin": "http://evil.example"}, max_redirects=0)
    assert evil.status == 403
    no_token = request.post(f"/ui/memories/{mid}/edit", form={"content": "evil"},
                            headers={"Origin": admin.url.split("/ui")[0]}, max_redirects=0)
    assert no_token.status == 403
    assert site.mem.get(mid, tenant="acme").content == EN


def test_why_not_a_ranked_out_memory_shows_its_bars_beside_the_last_hit(admin: Any,
                                                                       site: Site) -> None:
    admin.goto(f"/ui/search?q=API+gateway+port&top_k=1&memory={site.ids['en']}")
    admin.wait_for_selector("#why-not")
    assert admin.get_attribute("#why-not", "data-verdict") in ("ranked_out", "below_floor")
    mine = admin.eval_on_selector_all("table.mine svg.bar", "bs => bs.map(b => b.dataset.name)")
    last = admin.eval_on_selector_all("table.last svg.bar", "bs => bs.map(b => b.dataset.name)")
    assert "semantic" in mine and "semantic" in last
    assert site.ids["new_port"] in admin.locator("#why-not").inner_text()  # the last returned
    shot(admin, "why-not-ranked-out")
