"""``/docs`` works offline: a real server on loopback, the page parsed for every asset it
references, each fetched from the same server without a key, and no other host named."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
import varvemem_offline_guard as offline_guard

from .test_server import start_server

# What the inline script names: a quoted absolute URL or root-relative path.
QUOTED_URL = re.compile(r"""['"]((?:https?:)?//[^'"\s]+|/[^'"\s/][^'"\s]*)['"]""")
ABSOLUTE = re.compile(r"https?://[^\s'\"<>]+", re.IGNORECASE)


class Refs(HTMLParser):
    """Collects what a page loads: ``src``/``href`` attributes and its inline scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.attrs: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and (name in ("src", "href") or name.endswith("-url")):
                self.attrs.append((tag, name, value))
        self._in_script = tag == "script" and not dict(attrs).get("src")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.scripts.append(data)


@pytest.fixture
def base_url(tmp_path: Path, embedder: Any) -> Iterator[str]:
    server, thread, url, _ = start_server(tmp_path / "home", embedder)
    yield url
    server.should_exit = True
    thread.join(30)


def test_docs_page_and_every_asset_it_names_come_from_the_server(base_url: str,
                                                                 network_refusals) -> None:
    assert offline_guard.is_installed()  # offline for real: tests/conftest.py blocks the network
    host = urlsplit(base_url).netloc
    with httpx.Client(base_url=base_url, timeout=30) as c:  # no key, as a browser comes
        page = c.get("/docs")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        html = page.text
        refs = Refs()
        refs.feed(html)
        inline = "\n".join(refs.scripts)

        # Nothing on the page points at another host (a CDN, fonts, the favicon, a validator).
        foreign = [u for u in ABSOLUTE.findall(html) if urlsplit(u).netloc != host]
        foreign += [v for _, _, v in refs.attrs if v.startswith("//")]  # scheme-relative
        assert not foreign, foreign
        assert "SwaggerUIBundle(" in inline
        assert '"validatorUrl": null' in inline  # no badge fetched from validator.swagger.io

        wanted: dict[str, tuple[str, ...]] = {}  # url -> content types that fit
        for tag, attr, value in refs.attrs:
            if tag == "script":
                wanted[value] = ("application/javascript", "text/javascript")
            elif tag == "link" and value.endswith(".css"):
                wanted[value] = ("text/css",)
            elif tag == "link":  # the favicon
                wanted[value] = ("image/",)
            else:
                pytest.fail(f"unexpected reference <{tag} {attr}={value!r}>")
        named = QUOTED_URL.findall(inline)
        assert "/openapi.json" in named and "/docs/oauth2-redirect" in named, named
        for value in named:
            wanted[value] = {"/openapi.json": ("application/json",)}.get(value, ("text/html",))
        assert len([u for u, t in wanted.items() if t == ("image/",)]) == 1, wanted  # favicon

        for url, types in wanted.items():
            absolute = urljoin(base_url + "/docs", url)
            assert urlsplit(absolute).netloc == host, url
            resp = c.get(absolute)
            assert resp.status_code == 200, (url, resp.status_code, resp.text[:200])
            ctype = resp.headers["content-type"]
            assert ctype.startswith(types), (url, ctype)
            assert resp.content, url
            if ctype.startswith("text/css"):  # a stylesheet may load fonts or images itself
                for ref in re.findall(r"""url\(\s*['"]?([^'")]+)""", resp.text):
                    assert ref.startswith("data:"), (url, ref)
                assert "@import" not in resp.text, url
            if "text/javascript" in types:
                assert "SwaggerUIBundle" in resp.text, url

        # ReDoc is off (its bundle loads a logo from its vendor's CDN).
        assert c.get("/redoc").status_code == 404
        # The assets are counted under one route, not as unmatched requests.
        metrics = c.get("/metrics").text
        assert 'route="/docs/static",status="200"' in metrics
        assert 'route="unmatched",status="200"' not in metrics
    assert network_refusals.take() == []  # neither the server nor the page tried another host
