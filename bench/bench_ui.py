"""The inspector's pages at ``--size`` memories, over real HTTP (`varvemem serve` as a subprocess).

The home is filled with ``--size`` synthetic memories (bench_core's generator, embedded once,
the bulk path), then given what the pages show: supersession chains, sessions with
transcripts, Q&A pairs, feedback and failed webhook events. One browser-like client logs in
(the login form, its CSRF token) and fetches every page ``--rounds`` times: p50, p95 and max
per page, and the HTML size. The issue's target: every page under 200 ms at 100,000.

    .venv/bin/python bench/bench_ui.py --size 100000 --json bench/results/ui-COMMIT.json
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from datetime import datetime, timedelta, timezone  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402
from urllib.parse import quote  # noqa: E402

import httpx  # noqa: E402
import numpy as np  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_core import _lat, _log, library_fingerprint, make_texts  # noqa: E402
from bench_scale import _now_utc, machine  # noqa: E402
from bench_service import SECRET, _config, _free_port, _start, _stop  # noqa: E402

TENANT = "bench"
CHAINS = [("The nightly ETL job runs on worker-node-{i}",
           "We moved the nightly ETL job from worker-node-{i} to worker-node-{j}"),
          ("测试环境的 Redis 端口是 63{i:02d}", "测试环境的 Redis 端口从 63{i:02d} 改成了 64{j:02d}")]


def fill(home: Path, size: int) -> dict[str, Any]:
    """The home: ``size`` memories and a little of everything the pages show."""
    from varvemem import Memory, Settings
    from varvemem.embeddings.usem3 import USEEmbedder

    emb = USEEmbedder()
    texts = make_texts(size)
    t = time.perf_counter()
    vectors = np.concatenate([emb.embed_documents(texts[i: i + 64])
                              for i in range(0, len(texts), 64)])
    _log(f"embedded {size:,} texts in {time.perf_counter() - t:.0f} s")
    with Memory(settings=Settings.load(home=home), embedder=emb) as mem:
        t = time.perf_counter()
        for i in range(0, size, 5000):
            mem.add_many([{"content": c, "tenant": TENANT} for c in texts[i: i + 5000]],
                         vectors=vectors[i: i + 5000])
        _log(f"filled {size:,} memories in {time.perf_counter() - t:.0f} s")
        old: list[str] = []
        for i in range(20):
            for first, second in CHAINS:
                a = mem.add(first.format(i=i), tenant=TENANT).memory_id
                mem.add(second.format(i=i, j=i + 50), tenant=TENANT)
                old.append(a)
        for s in range(10):
            mem.add_messages([{"role": "user", "content": f"会话 {s}: how do I restart svc-{s}?"},
                              {"role": "assistant", "content": f"Run `systemctl restart svc-{s}`"}],
                             session=f"chat-{s}", user=f"u{s}", tenant=TENANT)
            mem.sessions.save(f"chat-{s}", [{"role": "user", "content": f"hello {s}"},
                                            {"role": "assistant", "content": "hi"}],
                              tenant=TENANT)
        pairs = [mem.save_qa(f"How do I rotate the key of service {i}? 服务{i}的密钥怎么轮换？",
                             f"Run `vault rotate svc-{i}`.", score=0.5 + i / 100, tenant=TENANT)
                 for i in range(30)]
        for p in pairs[:10]:
            mem.qa.feedback(p, "up", tenant=TENANT)
        admin = mem.keys.create(TENANT, "admin")[1]
        target = mem.get_all(tenant=TENANT, limit=1, after="mem_8")[0].memory_id
    return {"key": admin, "superseded": old[0], "memory": target}


def events(url: str, n: int) -> None:
    """``n`` webhook deliveries, a third of them undeliverable (no memory can be made)."""
    import hashlib
    import hmac

    with httpx.Client(base_url=url, timeout=30) as c:
        for i in range(n):
            raw = json.dumps({"type": "build", "status": "failed", "id": f"ui-{i}",
                              "message": f"build {i} failed at step {i % 7}"}).encode()
            sig = hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
            c.post("/v1/webhooks/events", content=raw,
                   headers={"Content-Type": "application/json", "X-Delivery-Id": f"ui-{i}",
                            "X-Varvemem-Signature": f"sha256={sig}"})


def login(c: httpx.Client, key: str) -> None:
    """The login form as a browser sends it: its CSRF token (the login cookie), same origin."""
    form = c.get("/ui/login")
    form.raise_for_status()
    token = next(v for k, v in c.cookies.items() if "login" in k)
    done = c.post("/ui/login", data={"api_key": key, "csrf": token},
                  headers={"Origin": str(c.base_url).rstrip("/")})
    if done.status_code not in (200, 303) or "login refused" in done.text:
        raise SystemExit(f"login failed: {done.status_code} {done.text[:200]}")


def pages(ids: dict[str, Any]) -> dict[str, str]:
    q_en, q_zh = "where does the nightly ETL job run?", "测试环境 Redis 用哪个端口"
    ahead = (datetime.now(timezone.utc) + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M")
    return {
        "overview": "/ui",
        "search (en)": f"/ui/search?q={quote(q_en)}",
        "search (zh)": f"/ui/search?q={quote(q_zh)}",
        "search + filters": f"/ui/search?q={quote(q_en)}&tier=long_term&type=knowledge&top_k=20",
        "why not (superseded)": f"/ui/search?q={quote(q_en)}&memory={ids['superseded']}",
        "memory": f"/ui/memories/{ids['memory']}",
        "memory (superseded)": f"/ui/memories/{ids['superseded']}",
        "sessions": "/ui/sessions",
        "session": "/ui/sessions/chat-3",
        "qa": "/ui/qa",
        "inbox": "/ui/inbox",
        "lifecycle": "/ui/lifecycle",
        # A dry run of every job (a GET: it changes nothing), as of now and a month ahead.
        "lifecycle dry run": "/ui/lifecycle?plan=1",
        "lifecycle dry run, in 30 days": f"/ui/lifecycle?plan=1&at={quote(ahead)}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--events", type=int, default=60)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="fill the home in DIR once and reuse it on later runs (else a "
                             "temporary home, removed at the end)")
    parser.add_argument("--fill-only", action="store_true", help="fill the home and stop")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="varvemem-ui-"))
    out: dict[str, Any] = {"library": library_fingerprint(), "machine": machine(),
                           "started": _now_utc(), "size": args.size,
                           "command": "python bench/bench_ui.py " + " ".join(sys.argv[1:])}
    try:
        home, saved = work / "home", work / "ids.json"
        if saved.exists():
            ids = json.loads(saved.read_text())
            _log(f"reusing the home in {home}")
        else:
            home.mkdir(parents=True)
            (home / "varvemem.toml").write_text(_config(True))
            ids = fill(home, args.size)
            saved.write_text(json.dumps(ids))
        if args.fill_only:
            return
        port = _free_port()
        proc = _start(home, port)
        try:
            url = f"http://127.0.0.1:{port}"
            events(url, args.events)
            with httpx.Client(base_url=url, timeout=60, follow_redirects=False) as c:
                login(c, ids["key"])
                results: dict[str, Any] = {}
                for name, path in pages(ids).items():
                    first = c.get(path)
                    if first.status_code != 200:
                        raise SystemExit(f"{name}: {path} answered {first.status_code}: "
                                         f"{first.text[:300]}")
                    took: list[float] = []
                    for _ in range(args.rounds):
                        t = time.perf_counter()
                        r = c.get(path)
                        took.append(time.perf_counter() - t)
                        assert r.status_code == 200, (name, r.status_code)
                    results[name] = {**_lat(took), "html_bytes": len(first.content)}
                    _log(f"{name:24s} p50 {results[name]['p50_ms']:7.1f} ms  "
                         f"p95 {results[name]['p95_ms']:7.1f} ms  {len(first.content):,} B")
        finally:
            _stop(proc)
        out["pages"] = results
        out["under_200_ms_p95"] = sorted(k for k, v in results.items()
                                         if "p95_ms" in v and v["p95_ms"] < 200)
        out["over_200_ms_p95"] = sorted(k for k, v in results.items()
                                        if "p95_ms" in v and v["p95_ms"] >= 200)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    out["finished"] = _now_utc()
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
