"""The deployment files users copy: valid YAML, and settings varvemem accepts."""

from __future__ import annotations

from pathlib import Path

import yaml

from varvemem import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_compose_file_is_valid_and_its_settings_load(tmp_path: Path, monkeypatch) -> None:
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "milvus", "redis", "minio", "varvemem"}
    app = services["varvemem"]
    assert set(app["depends_on"]) == {"postgres", "milvus", "redis", "minio"}
    assert (DEPLOY / app["build"]["context"] / app["build"]["dockerfile"]).resolve().is_file()
    for name, value in app["environment"].items():
        monkeypatch.setenv(name, str(value))
    s = Settings.load(home=tmp_path)
    assert s.store.url == "postgresql://varvemem:change-me@postgres:5432/varvemem"
    assert s.store.cache_url == "redis://redis:6379/0"
    assert s.store.vector_url == "milvus://milvus:19530"
    assert s.archive.url == "s3://varvemem-archive/prod"
    assert s.archive.endpoint_url == "http://minio:9000"
    pg = services["postgres"]["environment"]
    assert f"{pg['POSTGRES_USER']}:{pg['POSTGRES_PASSWORD']}@postgres:5432/" \
           f"{pg['POSTGRES_DB']}" in s.store.url
