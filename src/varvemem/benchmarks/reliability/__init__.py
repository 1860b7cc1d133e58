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

The probes live in submodules by family (:mod:`.common`, :mod:`.cross_tenant`,
:mod:`.cross_tenant_mcp`, :mod:`.bad_input`, :mod:`.kill9`); this package re-exports them.
"""

from __future__ import annotations

from .bad_input import BAD_DATES as BAD_DATES
from .bad_input import BAD_TEXT as BAD_TEXT
from .bad_input import JSON as JSON
from .bad_input import OUT_OF_RANGE as OUT_OF_RANGE
from .bad_input import YAML_BOMB as YAML_BOMB
from .bad_input import Case, bad_input_cases, probe_bad_input, probe_fuzz
from .common import Failure, Outcome, nested
from .cross_tenant import SIDE_WORDS as SIDE_WORDS
from .cross_tenant import OwnerData as OwnerData
from .cross_tenant import Webhook, probe_by_filters, probe_by_id, probe_endpoints, probe_side_channel
from .cross_tenant import seed_owner as seed_owner
from .cross_tenant_mcp import probe_mcp
from .kill9 import fresh_database, probe_kill9

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
