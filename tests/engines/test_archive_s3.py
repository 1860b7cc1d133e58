"""The lifecycle against a real S3 server: archive, search and restore; an unreachable
endpoint moves nothing."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.conftest import Clock

from varvemem import Memory, Tier
from varvemem.errors import ArchiveError


def test_archive_search_restore_on_s3(make_memory: Callable[..., Memory], clock: Clock,
                                      s3_server: str, s3_bucket: str) -> None:
    import boto3

    mem = make_memory(archive={"url": f"s3://{s3_bucket}/varvemem", "endpoint_url": s3_server,
                               "access_key": "test", "secret_key": "test"})
    mid = mem.add("the flaky checkout test needed a longer timeout", type="dialogue",
                  importance=0.3).memory_id
    clock.advance(days=8)
    assert mem.consolidate(["forget"]).jobs[0].counts == {"archived": 1}
    s3 = boto3.client("s3", endpoint_url=s3_server, region_name="us-east-1",
                      aws_access_key_id="test", aws_secret_access_key="test")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert len(keys) == 1 and keys[0].startswith("varvemem/default/")
    assert mem.get(mid).tier is Tier.ARCHIVE
    hits = mem.search("flaky checkout test", include_archive=True)
    assert hits[0].memory.memory_id == mid
    assert mem.restore(mid).tier is Tier.SHORT_TERM
    assert mem.search("flaky checkout test")[0].memory.memory_id == mid


def test_unreachable_s3_moves_nothing(make_memory: Callable[..., Memory], clock: Clock) -> None:
    from tests.conftest import _free_port

    mem = make_memory(archive={"url": "s3://nowhere/x",
                               "endpoint_url": f"http://127.0.0.1:{_free_port()}",
                               "access_key": "k", "secret_key": "s", "timeout": 1})
    mid = mem.add("an old line of chatter", type="dialogue", importance=0.3).memory_id
    clock.advance(days=8)
    with pytest.raises(ArchiveError, match="writing to the archive s3://nowhere/x failed"):
        mem.consolidate()
    assert mem.get(mid).tier is Tier.SHORT_TERM
    assert [h.action for h in mem.history(mid)] == ["create"]


def test_missing_bucket_is_a_clear_error(make_memory: Callable[..., Memory], clock: Clock,
                                         s3_server: str) -> None:
    mem = make_memory(archive={"url": "s3://no-such-bucket", "endpoint_url": s3_server,
                               "access_key": "test", "secret_key": "test"})
    mem.add("an old line of chatter", type="dialogue", importance=0.3)
    clock.advance(days=8)
    with pytest.raises(ArchiveError, match="NoSuchBucket"):
        mem.consolidate()
