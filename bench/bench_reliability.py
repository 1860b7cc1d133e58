"""Reliability, the long version of ``tests/reliability`` (issue 18): cross-tenant probes, bad
input and schema fuzzing against ``varvemem serve`` (a process on loopback), and kill -9 of a
writer on SQLite and on PostgreSQL (a database of its own, dropped afterwards).

Prints a table (family, attempts, leaks or influence, 5xx, lost writes, duplicated writes,
seconds) and, with ``--json``, writes the figures with every failure's details. Targets: 0
cross-tenant leaks or influence, 0 5xx, 0 acknowledged writes lost or duplicated.

    .venv/bin/python bench/bench_reliability.py --kills 30 --probes 5 --json out.json
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import httpx  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_core import _log, library_fingerprint  # noqa: E402
from bench_scale import _now_utc, machine  # noqa: E402
from varvemem import Memory, Settings  # noqa: E402
from varvemem.benchmarks import reliability as rel  # noqa: E402

PROBER, OWNER = "acme", "globex"
WEBHOOK = rel.Webhook(source="events", secret="bench-owner-secret-1", tenant=OWNER)
MAX_BODY = 256 * 1024


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _home(work: Path) -> tuple[Path, str, str]:
    """A home whose config has the owner's webhook source; the prober's and owner's admin
    keys."""
    home = work / "home"
    home.mkdir(parents=True)
    (home / "varvemem.toml").write_text(
        f"[server]\nmax_body_bytes = {MAX_BODY}\nlog_json = true\n\n"
        "[webhooks]\npoll_seconds = 0.05\n\n"
        f'[webhooks.sources.{WEBHOOK.source}]\nkind = "generic"\ntenant = "{WEBHOOK.tenant}"\n'
        f'secret = "{WEBHOOK.secret}"\n')
    with Memory(settings=Settings.load(home=home)) as mem:
        prober = mem.keys.create(PROBER, "admin")[1]
        owner = mem.keys.create(OWNER, "admin")[1]
    return home, prober, owner


class Served:
    """``varvemem serve`` on a free port, until :meth:`stop`."""

    def __init__(self, home: Path) -> None:
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = (home.parent / "serve.log").open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "varvemem", "--home", str(home), "serve", "--port", str(port),
             "--log-level", "warning"], env=_env(), stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise SystemExit("varvemem serve exited")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.proc.kill()
                raise SystemExit("varvemem serve did not come up")
            time.sleep(0.2)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def merge(family: str, outcomes: list[rel.Outcome]) -> rel.Outcome:
    out = rel.Outcome(family)
    for o in outcomes:
        out.attempts += o.attempts
        out.failures += o.failures
        out.server_errors += o.server_errors
        out.lost += o.lost
        out.duplicated += o.duplicated
        out.seconds += o.seconds
    return out


def run_service(args: argparse.Namespace, work: Path) -> list[rel.Outcome]:
    home, prober, owner = _home(work)
    served = Served(home)
    results: list[rel.Outcome] = []
    try:
        url = served.url
        for name, probe in (("cross-tenant by id", rel.probe_by_id),
                            ("cross-tenant by filters", rel.probe_by_filters)):
            _log(f"{name}: {args.probes} rounds")
            results.append(merge(name, [probe(url, prober, owner) for _ in range(args.probes)]))
        _log(f"cross-tenant endpoints: {args.probes} rounds")
        results.append(merge("cross-tenant endpoints", [
            rel.probe_endpoints(url, prober, owner, webhook=WEBHOOK)
            for _ in range(args.probes)]))
        _log(f"cross-tenant side channel: {args.side_writes} writes of the owner's")
        results.append(rel.probe_side_channel(url, prober, owner, writes=args.side_writes))
        _log(f"bad input: {args.probes} rounds")
        results.append(merge("bad input", [
            rel.probe_bad_input(url, prober, max_body_bytes=MAX_BODY, webhook=WEBHOOK.source)
            for _ in range(args.probes)]))
        if args.fuzz_examples:
            _log(f"fuzz: {args.fuzz_examples} examples per operation and mode")
            results.append(rel.probe_fuzz(url, prober, examples=args.fuzz_examples, seed=None))
        owner_data = rel.seed_owner(url, owner, "-mcp") if not args.skip_mcp else None
    finally:
        served.stop()
    if owner_data is not None:
        _log("cross-tenant over MCP")
        results.append(rel.probe_mcp(home, PROBER, owner_data, OWNER, env=_env()))
    return results


def run_kills(args: argparse.Namespace, work: Path) -> list[rel.Outcome]:
    results = []
    _log(f"kill -9, SQLite: {args.kills} kills")
    results.append(rel.probe_kill9(work / "kill-sqlite", rounds=args.kills,
                                   max_writes=args.max_writes, seed=args.seed, env=_env(),
                                   label="sqlite"))
    if not args.skip_postgres:
        _log(f"kill -9, PostgreSQL: {args.kills} kills")
        with rel.fresh_database(args.pg_url) as db:
            results.append(rel.probe_kill9(work / "kill-pg", {"store": {"url": db}},
                                           rounds=args.kills, max_writes=args.max_writes,
                                           seed=args.seed + 1, env=_env(),
                                           label="postgresql"))
    return results


def table(results: list[rel.Outcome]) -> str:
    rows = ["| family | attempts | leaks / influence / bad answers | 5xx | lost writes | "
            "duplicated writes | seconds |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for o in results:
        rows.append(f"| {o.family} | {o.attempts} | {len(o.failures)} | {o.server_errors} | "
                    f"{o.lost} | {o.duplicated} | {o.seconds:.1f} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=30, help="kill -9 rounds per store")
    parser.add_argument("--max-writes", type=int, default=40,
                        help="acknowledged adds before a kill, at most (random from 1)")
    parser.add_argument("--probes", type=int, default=5,
                        help="rounds of the by-id, filter, endpoint and bad-input probes")
    parser.add_argument("--side-writes", type=int, default=300,
                        help="the owner's writes in the side-channel probe")
    parser.add_argument("--fuzz-examples", type=int, default=30,
                        help="schemathesis examples per operation and mode (0: no fuzzing)")
    parser.add_argument("--pg-url", default=os.environ.get(
        "VARVEMEM_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--skip-mcp", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    started = _now_utc()
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="varvemem-reliability-"))
    try:
        results = run_service(args, work) + run_kills(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(table(results))
    for o in results:
        for f in o.failures[:20]:
            print(f"  {o.family}: {f.probe}: {f.detail}")
    if args.json:
        args.json.write_text(json.dumps({
            "command": shlex.join([Path(sys.executable).name, *sys.argv]),
            "started": started, "seconds": round(time.perf_counter() - t0, 1),
            "machine": machine(), "library": library_fingerprint(), "args": {
                k: v for k, v in vars(args).items() if k != "json"},
            "results": [o.to_json() for o in results]}, indent=2, default=str) + "\n")
        _log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
