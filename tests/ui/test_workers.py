"""The inspector behind ``varvemem serve --workers 2`` (the docs' own example), as processes: a
login made through one worker process is valid in the other, and after a restart; a logout
through either ends it in both. Each request opens a connection of its own, so the kernel
hands them to both processes."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from tests.e2e.test_cli import run
from tests.e2e.test_service_processes import _home, _serve, _stop

from ._site import csrf_of

PAGES = ("/ui", "/ui/search?q=staging", "/ui/sessions", "/ui/qa", "/ui/lifecycle", "/ui/inbox")


def pages(url: str, cookies: dict[str, str], n: int) -> list[int]:
    """The statuses of ``n`` page views, each on a new connection."""
    return [httpx.get(f"{url}{PAGES[i % len(PAGES)]}", cookies=cookies, timeout=60,
                      follow_redirects=False).status_code for i in range(n)]


@pytest.mark.slow
def test_a_login_holds_in_every_worker_process_and_a_logout_ends_it_in_all(
        tmp_path: Path) -> None:
    home = _home(tmp_path)
    key = json.loads(run(home, "keys", "create", "--tenant", "acme", "--role", "admin",
                         "--json").stdout)["key"]
    proc, url = _serve(home, "--workers", "2", "--log-level", "warning")
    try:
        form = httpx.get(f"{url}/ui/login", timeout=60)
        login = httpx.post(f"{url}/ui/login", cookies=form.cookies, timeout=60,
                           data={"api_key": key, "csrf": csrf_of(form.text), "next": "/ui"},
                           headers={"Origin": url})
        assert login.status_code == 303 and login.headers["location"] == "/ui", login.text
        cookies = {"varvemem_ui": login.cookies["varvemem_ui"]}
        assert pages(url, cookies, 24) == [200] * 24  # none bounced to the login page
        # A change posted through any worker passes with the session's CSRF token.
        csrf = csrf_of(httpx.get(f"{url}/ui/inbox", cookies=cookies, timeout=60).text)
        for _ in range(6):
            retry = httpx.post(f"{url}/ui/inbox/retry", cookies=cookies, timeout=60,
                               data={"csrf": csrf}, headers={"Origin": url})
            assert retry.status_code == 303, retry.text
            assert retry.headers["location"].startswith("/ui/inbox?done=re-armed")
    finally:
        _stop(proc)
    proc, url = _serve(home, "--workers", "2", "--log-level", "warning")
    try:
        assert pages(url, cookies, 8) == [200] * 8  # a restart keeps the login
        page = httpx.get(f"{url}/ui", cookies=cookies, timeout=60)
        out = httpx.post(f"{url}/ui/logout", cookies=cookies, timeout=60,
                         data={"csrf": csrf_of(page.text)}, headers={"Origin": url})
        assert out.status_code == 303 and "logged+out" in out.headers["location"]
        after = [httpx.get(f"{url}{PAGES[i % len(PAGES)]}", cookies=cookies, timeout=60)
                 for i in range(24)]
        assert [r.status_code for r in after] == [303] * 24  # none accepted, in either process
        assert all(r.headers["location"].startswith("/ui/login") for r in after)
    finally:
        _stop(proc)
