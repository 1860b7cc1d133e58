"""What the reliability probes share: the :class:`Outcome` each family returns (with its
:class:`Failure` list), the HTTP helpers (a client with a key, set-up calls that must
succeed), ids of the same shape that name no memory, the probes' word list and a tenant's
every memory.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx


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
def timed(out: Outcome) -> Iterator[Outcome]:
    start = time.perf_counter()
    try:
        yield out
    finally:
        out.seconds += time.perf_counter() - start


def client(url: str, key: str | None, timeout: float = 60.0) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=url, headers=headers, timeout=timeout)


def json_body(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except ValueError:
        return None


def must(resp: httpx.Response, *statuses: int) -> Any:
    """The JSON of a set-up call, which must succeed (the probes need what it made)."""
    if resp.status_code not in (statuses or (200, 201, 202, 204)):
        raise RuntimeError(f"set-up call {resp.request.method} {resp.request.url.path} -> "
                           f"{resp.status_code}: {resp.text[:300]}")
    return json_body(resp) if resp.content else None


def nested(depth: int) -> dict[str, Any]:
    """A mapping nested ``depth`` levels (itself the first)."""
    out: dict[str, Any] = {"leaf": 1}
    for _ in range(depth - 1):
        out = {"k": out}
    return out


def unknown_like(memory_id: str) -> str:
    """An id of the same shape and length as ``memory_id`` that names no memory."""
    prefix, _, rest = memory_id.partition("_")
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
    rng = random.Random(memory_id)
    return f"{prefix}_" + "".join(rng.choice(alphabet) for _ in rest)


# -- words and memories (the side channel and kill -9 probes) ----------------------------------
def vocabulary() -> list[str]:
    return ("alpha bravo cobalt delta ember falcon garnet harbor iris jasper kelp lumen marble "
            "nectar onyx pepper quill raven sierra tundra umber violet willow xenon yarrow zinc "
            "anchor beacon canyon dune estuary fjord glacier heath inlet jungle knoll lagoon mesa "
            "oasis prairie quarry ridge savanna tarn upland valley wadi steppe atoll bayou cliff "
            "basalt copper docket engine filter gasket hinge invoice journal kernel ladder mortar "
            "needle orbit piston quorum rotor socket turbine valve widget axle bolt crank").split()


def every(mem: Any, tenant: str) -> list[Any]:
    """Every live memory of ``tenant``, superseded ones too, a page at a time."""
    out: list[Any] = []
    while True:
        page = mem.get_all(tenant=tenant, include_superseded=True, limit=10_000,
                           after=out[-1].memory_id if out else "")
        out += page
        if len(page) < 10_000:
            return out
