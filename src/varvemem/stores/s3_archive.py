"""The archive (TIER-5) on S3-compatible object storage (AWS S3, MinIO, Ceph...) via boto3.

Objects are the same gzip-compressed JSON Lines batches as the folder archive's, under
``s3://bucket/prefix/<tenant>/``. A PUT is atomic and durable when it returns, which is all the
lifecycle needs: the store of record notes an object only after it is written.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from urllib.parse import urlparse

from ..errors import ArchiveError, ConfigError
from ..model import MemoryRecord
from .base import Archive
from .file_archive import object_name, parse_lines, record_line


class S3Archive(Archive):
    """``url``: ``s3://bucket[/prefix]``; ``endpoint_url`` for MinIO and other servers.
    Credentials come from the arguments, else boto3's usual chain (environment, files)."""

    def __init__(self, url: str, *, endpoint_url: str | None = None, region: str | None = None,
                 access_key: str | None = None, secret_key: str | None = None,
                 timeout: float = 10.0, client: Any = None) -> None:
        parsed = urlparse(url)
        if parsed.scheme != "s3" or not parsed.netloc:
            raise ConfigError(f"archive.url: {url!r} is not s3://bucket[/prefix]")
        self.bucket = parsed.netloc
        self.prefix = parsed.path.strip("/")
        self.location = url
        if client is None:
            try:
                import boto3
                from botocore.config import Config
            except ImportError:
                raise ConfigError("archive.url is s3://... but boto3 is not installed "
                                  "(pip install 'varvemem[s3]')") from None
            client = boto3.client(
                "s3", endpoint_url=endpoint_url, region_name=region or "us-east-1",
                aws_access_key_id=access_key, aws_secret_access_key=secret_key,
                config=Config(connect_timeout=timeout, read_timeout=timeout,
                              retries={"max_attempts": 2}))
        self._s3 = client

    def _key(self, name: str) -> str:
        if name.startswith("/") or ".." in name.split("/"):
            raise ArchiveError(f"archive object {name!r} is outside the archive")
        return f"{self.prefix}/{name}" if self.prefix else name

    def _fail(self, what: str, exc: Exception) -> ArchiveError:
        return ArchiveError(f"{what} {self.location} failed: {exc}")

    def write(self, tenant: str, records: Sequence[MemoryRecord], at: datetime) -> str:
        from botocore.exceptions import BotoCoreError, ClientError

        name = object_name(tenant, at)
        body = gzip.compress(b"".join(record_line(r) for r in records))
        try:
            self._s3.put_object(Bucket=self.bucket, Key=self._key(name), Body=body,
                                ContentType="application/x-ndjson", ContentEncoding="gzip")
        except (BotoCoreError, ClientError) as exc:
            raise self._fail("writing to the archive", exc) from None
        return name

    def read(self, name: str) -> list[MemoryRecord]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            payload = self._s3.get_object(Bucket=self.bucket, Key=self._key(name))["Body"].read()
        except (BotoCoreError, ClientError) as exc:
            raise ArchiveError(f"archive object {name} cannot be read from {self.location}: "
                               f"{exc}") from None
        return parse_lines(name, payload)

    def delete(self, name: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self._s3.delete_object(Bucket=self.bucket, Key=self._key(name))
        except (BotoCoreError, ClientError) as exc:
            raise self._fail("deleting from the archive", exc) from None
