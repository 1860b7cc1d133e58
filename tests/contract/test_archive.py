"""What every archive backend must do: durable batches, read back whole, bad objects named."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from varvemem.errors import ArchiveError
from varvemem.model import MemoryRecord, MemoryType, Scope, Tier
from varvemem.stores.base import Archive
from varvemem.stores.file_archive import FileArchive

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def rec(mid: str, tenant: str = "default") -> MemoryRecord:
    v = np.random.default_rng(len(mid)).normal(size=8).astype(np.float32)
    return MemoryRecord(memory_id=mid, content=f"content of {mid} 中文", tier=Tier.SHORT_TERM,
                        memory_type=MemoryType.DIALOGUE, scope=Scope(tenant=tenant),
                        created_at=T0, updated_at=T0, valid_from=T0, tags=["a"],
                        embedding=(v / np.linalg.norm(v)).tolist(), metadata={"k": 1})


@pytest.fixture(params=["file", "s3"])
def archive(request, tmp_path: Path) -> Archive:
    if request.param == "file":
        return FileArchive(tmp_path / "archive")
    from varvemem.stores.s3_archive import S3Archive

    endpoint = request.getfixturevalue("s3_server")
    bucket = request.getfixturevalue("s3_bucket")
    return S3Archive(f"s3://{bucket}/mem/prefix", endpoint_url=endpoint, access_key="test",
                     secret_key="test")


def test_write_read_roundtrip_with_embeddings(archive: Archive) -> None:
    records = [rec("m1"), rec("m2")]
    name = archive.write("default", records, T0)
    assert name.startswith("default/20260101T000000-") and name.endswith(".jsonl.gz")
    back = archive.read(name)
    assert [r.memory_id for r in back] == ["m1", "m2"]
    assert back[0].content == records[0].content and back[0].metadata == {"k": 1}
    np.testing.assert_allclose(back[0].embedding, records[0].embedding, rtol=1e-6)
    archive.delete(name)
    with pytest.raises(ArchiveError, match="cannot be read"):
        archive.read(name)


def test_tenant_names_cannot_escape_the_archive(archive: Archive) -> None:
    name = archive.write("../../etc", [rec("m1", "../../etc")], T0)
    assert name.startswith("%2E%2E%2F%2E%2E%2Fetc/")
    assert archive.read(name)[0].scope.tenant == "../../etc"
    with pytest.raises(ArchiveError, match="outside the archive"):
        archive.read("../outside.jsonl.gz")


def test_a_tenant_name_of_any_length_gets_its_own_folder(archive: Archive) -> None:
    long_a, long_b = "租户" * 100, "租户" * 99 + "租客"  # 1,800 bytes once %-encoded
    names = [archive.write(t, [rec("m1", t)], T0) for t in (long_a, long_b)]
    assert names[0].split("/")[0] != names[1].split("/")[0]
    assert all(len(n.split("/")[0]) <= 200 for n in names)
    assert [archive.read(n)[0].scope.tenant for n in names] == [long_a, long_b]


def test_malformed_object_is_named(tmp_path: Path) -> None:
    arch = FileArchive(tmp_path / "a")
    name = arch.write("default", [rec("m1")], T0)
    path = tmp_path / "a" / name
    path.write_bytes(b"garbage")
    with pytest.raises(ArchiveError, match=name.split("/")[1]):
        arch.read(name)
    import gzip

    path.write_bytes(gzip.compress(b'{"memory_id": "x"}\n'))
    with pytest.raises(ArchiveError, match="line 1"):
        arch.read(name)
