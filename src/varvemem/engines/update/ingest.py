"""Document ingest (SPEC UPD-1, UPD-5): files and texts cut into knowledge chunks, stored a batch
at a time.

A document is read twice, block by block, never whole: once for its hash and its titles (the
chunker must know whether it has a lone title), then for its chunks, section by section
(:func:`..text.chunking.iter_chunks`, the chunks of :func:`.extract.from_document`). Chunks new
to the store are embedded and committed ``update.ingest_batch_chunks`` at a time; of the rest only
hashes are held. Only once the whole document has been read are the chunks it no longer has
invalidated (with their successors, as :meth:`.update.UpdateEngine.add` supersedes) and the
document marked complete (``ingest.done:<tenant>:<source>`` in the store's metadata = its hash).
So an interrupted ingest invalidates nothing, and running it again resumes it: the chunks it
committed are kept, the rest added. A document is unchanged (nothing to do) only when it was
marked complete with the same hash and every current chunk of it carries that hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ... import qa_files
from ...errors import ValidationError
from ...model import Draft, IngestReport, MemoryRecord, MemoryType, Scope
from ...text.chunking import count_titles, iter_chunks, iter_lines
from .shared import (
    ACTOR,
    Prepared,
    content_hash,
    created,
    inherit,
    record_change,
    succession,
    supersede,
)

if TYPE_CHECKING:
    from .pipeline import AddPipeline

BLOCK_CHARS = 64 * 1024  # a text given whole is read in blocks of this many characters
BLOCK_BYTES = 64 * 1024  # a file, in blocks of this many bytes
_PAGE = 1000  # records read (or vectors compared) at a time while finishing a document
LIMIT_KEY = "update.ingest_max_file_bytes"


@dataclass(frozen=True)
class IngestProgress:
    """Where a document ingest is, after each batch committed (and at each document's start and
    end): the ``file``-th document of ``files``, ``bytes_done`` of its ``bytes_total`` read,
    ``chunks`` read (kept or added) and ``added`` of them new."""

    source: str
    file: int
    files: int
    bytes_done: int
    bytes_total: int
    chunks: int
    added: int
    done: bool = False


ProgressFn = Callable[[IngestProgress], None]
Blocks = Callable[[], Iterable[str]]  # the document's text from its start, a block at a time


@dataclass
class _Stored:
    """A chunk of the document in the store, without its text."""

    memory_id: str
    content_hash: str
    doc_hash: str
    section: str
    chunk: int
    current: bool
    superseded_by: str | None


@dataclass
class _New:
    """A chunk of this version of the document the store did not have before it: committed
    (by this run or an interrupted one) or in the batch still to commit (``prepared``)."""

    memory_id: str
    section: str
    chunk: int
    prepared: Prepared | None = None


def done_key(tenant: str, source: str) -> str:
    """The metadata key that marks ``source``'s ingest complete (its value: the hash)."""
    return f"ingest.done:{tenant}:{source}"


def text_blocks(text: str) -> Blocks:
    return lambda: (text[i:i + BLOCK_CHARS] for i in range(0, len(text), BLOCK_CHARS))


def too_large(size: int, limit: int) -> str:
    return f"{size} bytes, over the limit of {limit} ({LIMIT_KEY})"


class _Unreadable(Exception):
    """A file that could be read at first but not the second time (the reason)."""


@dataclass
class _Scan:
    doc_hash: str
    size: int
    has_text: bool
    titles: int


def _scan(blocks: Iterable[str]) -> _Scan:
    """The first pass: the hash of the text (its UTF-8, a file's BOM dropped), its size in
    bytes, whether it has a non-blank character and its top-level titles (up to 2).
    ``ValueError`` for a text no memory may hold (a NUL: a binary file)."""
    h = hashlib.sha256()
    size = 0
    has_text = False

    def passing() -> Iterator[str]:
        nonlocal size, has_text
        for b in blocks:
            if "\x00" in b:
                raise ValueError("holds U+0000 (a NUL character): not a text file")
            data = b.encode("utf-8")
            h.update(data)
            size += len(data)
            has_text = has_text or (bool(b) and not b.isspace())
            yield b

    it = passing()
    titles = count_titles(iter_lines(it))
    for _ in it:  # the rest, for the hash and the size
        pass
    return _Scan(h.hexdigest()[:32], size, has_text, titles)


class DocumentIngest:
    """Ingest for an :class:`.update.UpdateEngine` (its settings, stores, clock and write
    steps)."""

    def __init__(self, engine: AddPipeline) -> None:
        self.engine = engine
        self.cfg = engine.cfg
        self.stores = engine.stores

    # -- entry points -------------------------------------------------------------------------
    def ingest_text(self, text: str, source: str, scope: Scope, tags: list[str],
                    report: IngestReport, actor: str = ACTOR,
                    progress: ProgressFn | None = None) -> None:
        """One document given as text; refused over ``update.ingest_max_file_bytes``."""
        limit = self.cfg.ingest_max_file_bytes
        if len(text) > limit or (len(text) * 4 > limit and len(text.encode("utf-8")) > limit):
            raise ValidationError(f"document is {too_large(len(text.encode('utf-8')), limit)}")
        self.document(text_blocks(text), source, scope, tags, report, actor, progress)

    def ingest_paths(self, paths: Sequence[Path], scope: Scope, tags: list[str],
                     progress: ProgressFn | None = None) -> IngestReport:
        """Files and folders (recursively, by ``update.ingest_extensions``). In a folder, only
        regular files are read (a FIFO, device or socket is skipped unopened), a symlink leading
        out of it is skipped unless ``update.follow_symlinks_outside``, and so is a file over
        ``update.ingest_max_file_bytes``; a file named so is an error."""
        report = IngestReport()
        limit = self.cfg.ingest_max_file_bytes
        files: list[Path] = []
        for path in paths:
            path = Path(path).expanduser()
            if path.is_dir():
                for f in sorted(path.rglob("*")):
                    if f.suffix.lower() not in self.cfg.ingest_extensions or f.is_dir():
                        continue
                    why = qa_files.file_problem(f, path, self.cfg.follow_symlinks_outside)
                    if why is None and f.stat().st_size > limit:
                        why = too_large(f.stat().st_size, limit)
                    if why is None:
                        files.append(f)
                    else:
                        report.skipped.append(f"{f}: {why}")
            elif path.is_file():
                if path.stat().st_size > limit:
                    raise ValidationError(f"{path} is {too_large(path.stat().st_size, limit)}")
                files.append(path)
            elif path.exists():
                raise ValidationError(f"{path} is not a regular file")
            else:
                raise ValidationError(f"{path} does not exist")
        for n, f in enumerate(files, 1):
            def blocks(f: Path = f) -> Iterable[str]:
                return qa_files.read_blocks(f, limit, BLOCK_BYTES)

            try:
                scan = _scan(blocks())
            except ValueError as exc:
                report.skipped.append(f"{f}: {exc}")
                continue
            if not scan.has_text:
                report.skipped.append(f"{f}: empty")
                continue
            report.files += 1
            try:
                self.document(blocks, f"document:{f.resolve()}", scope, tags, report, ACTOR,
                              progress, scan, (n, len(files)))
            except _Unreadable as exc:  # changed since the first reading; what was committed
                report.files -= 1      # stays, and the next ingest resumes it
                report.skipped.append(f"{f}: {exc}")
        return report

    # -- one document -------------------------------------------------------------------------
    def document(self, blocks: Blocks, source: str, scope: Scope, tags: list[str],
                 report: IngestReport, actor: str = ACTOR, progress: ProgressFn | None = None,
                 scan: _Scan | None = None, position: tuple[int, int] = (1, 1)) -> None:
        """Store a document's chunks; on re-ingestion keep unchanged chunks, add new ones and
        invalidate the rest (kept in history, no longer served)."""
        scan = scan or _scan(blocks())
        now = self.engine.clock()
        h = scan.doc_hash
        # Only the document's own chunks: other memories may carry the same source string.
        stored = [_Stored(r.memory_id, r.content_hash, str(r.metadata.get("doc_hash")),
                          str(r.metadata.get("section", "")), int(r.metadata.get("chunk", 0)),
                          r.valid_to is None, r.superseded_by)
                  for r in self.stores.records.find_by_source(scope.tenant, source,
                                                              include_superseded=True)
                  if "doc_hash" in r.metadata]
        current = [s for s in stored if s.current]
        key = done_key(scope.tenant, source)
        complete = self.stores.records.get_meta(key)

        def tell(done_bytes: int, chunks: int, added: int, done: bool = False) -> None:
            if progress is not None:
                progress(IngestProgress(source, position[0], position[1], done_bytes,
                                        scan.size, chunks, added, done))

        if current and complete == h and all(s.doc_hash == h for s in current):
            report.unchanged_files += 1
            report.kept += len(current)
            tell(scan.size, len(current), 0, done=True)
            return
        by_hash = {s.content_hash for s in current}
        # A chunk that a newer memory (not this document) superseded stays superseded.
        ours = {s.memory_id for s in stored}
        overruled = {s.content_hash for s in stored if not s.current
                     and s.superseded_by and s.superseded_by not in ours}
        # Chunks an interrupted ingest of this very version committed: new in this version.
        new = [_New(s.memory_id, s.section, s.chunk) for s in current
               if s.doc_hash == h and complete != h]
        del stored
        self.stores.check_model()

        seen: set[str] = set()  # the hashes of this version's chunks
        pending: list[Draft] = []
        added = 0
        chunks = 0
        check = hashlib.sha256()
        read = 0

        def hashed() -> Iterator[str]:
            nonlocal read
            try:
                for b in blocks():
                    data = b.encode("utf-8")
                    check.update(data)
                    read += len(data)
                    yield b
            except ValueError as exc:  # a file read again (not UTF-8 now, or grown too large)
                raise _Unreadable(str(exc)) from None

        tell(0, 0, 0)
        lines = iter_lines(hashed())
        for i, (section, chunk) in enumerate(iter_chunks(lines, self.cfg.chunk_max_chars,
                                                         lone_title=scan.titles == 1)):
            if not chunk.strip():
                continue
            chunks += 1
            d = Draft(content=chunk, memory_type=MemoryType.KNOWLEDGE, scope=scope,
                      source=source, tags=tags,
                      metadata={"section": section, "chunk": i, "doc_hash": h})
            self.engine.validate(d)
            ch = content_hash(chunk)
            seen.add(ch)
            if ch in by_hash or ch in overruled:
                continue
            if len(pending) >= self.cfg.ingest_batch_chunks:
                # A full batch is committed once a next new chunk is known: the last batch
                # is committed with the document's completion (a small document at once).
                for p in self._commit(pending, source, actor, now):
                    new.append(_New(p.record.memory_id, section_of(p), chunk_of(p)))
                    report.added.append(p.record.memory_id)  # committed, whatever comes next
                    added += 1
                pending = []
                tell(read, chunks, added)
            pending.append(d)
        if check.hexdigest()[:32] != h:  # changed between the two readings: finish next time
            raise _Unreadable("changed while it was read; ingest it again")
        last = self._prepared(pending)
        new.extend(_New(p.record.memory_id, section_of(p), chunk_of(p), p) for p in last)
        kept = seen & by_hash
        stale = [s for s in current if s.content_hash not in kept]
        self._finish(source, scope, h, last, new, stale, [s for s in current
                                                        if s.content_hash in kept
                                                        and s.doc_hash != h], actor, now)
        report.added.extend(p.record.memory_id for p in last)
        report.kept += len(kept)
        report.invalidated.extend(s.memory_id for s in stale)
        tell(read, chunks, added + len(last), done=True)

    # -- steps --------------------------------------------------------------------------------
    def _prepared(self, drafts: list[Draft]) -> list[Prepared]:
        """Drafts made records and embedded (the update engine's steps, classified as
        documents)."""
        batch = [self.engine.prepare(d) for d in drafts]
        for p in batch:
            p.steps["classify"] = "document"
            p.statement = self.engine.supersession.statement(p.record)  # parsed outside the write lock
        if batch:
            self.engine.embed(batch, None)
        return batch

    def _commit(self, drafts: list[Draft], source: str, actor: str,
                now: datetime) -> list[Prepared]:
        """Embed and store one batch of new chunks, in a transaction of its own."""
        batch = self._prepared(drafts)
        self.stores.sync()
        with self.stores.transaction() as tx:
            self.stores.claim_model(tx)
            for p in batch:
                tx.insert(p.record, p.vector, p.statement)
                record_change(tx, p.record, "create", now, actor, f"ingested from {source}",
                              new=created([]))
        self.stores.sync()
        return batch

    def _finish(self, source: str, scope: Scope, h: str, last: list[Prepared],
                new: list[_New], stale: list[_Stored], rehash: list[_Stored], actor: str,
                now: datetime) -> None:
        """The document read whole: store the last batch, invalidate the chunks it no longer
        has (each succeeded by a new chunk of its section, else the most similar), note the
        kept chunks' new version and mark the document complete, in one transaction."""
        successor = self._successors(stale, sorted(new, key=lambda n: n.chunk))
        changed = f"document {source} re-ingested: section changed"
        by_new: dict[str, list[str]] = {}
        for old_id, succ in successor.items():
            if succ is not None:
                by_new.setdefault(succ.memory_id, []).append(old_id)
        self.stores.sync()
        with self.stores.transaction() as tx:
            self.stores.claim_model(tx)
            olds = self._current([s.memory_id for s in stale], scope.tenant)
            for p in last:
                mine = [olds[i] for i in by_new.get(p.record.memory_id, []) if i in olds]
                inherit(p.record, mine)
                succeeded = {r.memory_id: changed for r in mine}
                tx.insert(p.record, p.vector, p.statement)
                record_change(tx, p.record, "create", now, actor,
                              succession(f"ingested from {source}", succeeded),
                              new=created(list(succeeded)))
            pending = {p.record.memory_id for p in last}
            earlier = self._records([i for i in by_new if i not in pending], scope.tenant)
            for rec in earlier.values():  # successors committed by an earlier batch
                mine = [olds[i] for i in by_new[rec.memory_id] if i in olds]
                if not mine:
                    continue
                before = list(rec.tags)
                inherit(rec, mine)
                if rec.tags != before:
                    tx.update(rec, fields=["tags"])
                record_change(tx, rec, "update", now, actor,
                              succession("", {r.memory_id: changed for r in mine}),
                              old={"tags": before},
                              new={"tags": rec.tags, "supersedes": [r.memory_id for r in mine]})
            # Bookkeeping only (which version of the file a chunk is in).
            for rec in self._records([s.memory_id for s in rehash], scope.tenant).values():
                if rec.valid_to is None and rec.metadata.get("doc_hash") != h:
                    rec.metadata["doc_hash"] = h
                    tx.update(rec, fields=["metadata"])
            for s in stale:
                if s.memory_id not in olds:
                    continue
                succ = successor.get(s.memory_id)
                succ_rec = None if succ is None else (
                    succ.prepared.record if succ.prepared else earlier.get(succ.memory_id))
                supersede(tx, olds[s.memory_id], succ_rec, changed if succ_rec else
                          f"document {source} re-ingested: section removed", actor, now)
            tx.set_meta(done_key(scope.tenant, source), h)
        self.stores.sync()

    def _records(self, ids: Sequence[str], tenant: str) -> dict[str, MemoryRecord]:
        out: dict[str, MemoryRecord] = {}
        for i in range(0, len(ids), _PAGE):
            out.update(self.stores.records.get_many(tenant, list(ids[i:i + _PAGE])))
        return out

    def _current(self, ids: Sequence[str], tenant: str) -> dict[str, MemoryRecord]:
        """The memories of ``ids`` still current (read inside the write transaction)."""
        return {i: r for i, r in self._records(ids, tenant).items() if r.valid_to is None}

    def _successors(self, stale: list[_Stored], new: list[_New]) -> dict[str, _New | None]:
        """The new chunk that replaces each stale one: the first of its section, else the most
        similar (cosine >= ``update.successor_threshold``), as :meth:`UpdateEngine._successor`."""
        first: dict[str, _New] = {}
        for n in new:
            first.setdefault(n.section, n)
        out: dict[str, _New | None] = {s.memory_id: first.get(s.section) for s in stale}
        rest = [s.memory_id for s in stale if out[s.memory_id] is None]
        if not rest or not new:
            return out
        olds = self.stores.vectors.vectors(rest)
        ids = [i for i in rest if i in olds]
        if not ids:
            return out
        mat = np.stack([olds[i] for i in ids])
        best = np.full(len(ids), -np.inf)
        pick: list[_New | None] = [None] * len(ids)
        for j in range(0, len(new), _PAGE):
            page = new[j:j + _PAGE]
            held = {n.memory_id: n.prepared.vector for n in page
                    if n.prepared is not None and n.prepared.vector is not None}
            missing = [n.memory_id for n in page if n.memory_id not in held]
            vecs = {**held, **(self.stores.vectors.vectors(missing) if missing else {})}
            cols = [n for n in page if n.memory_id in vecs]
            if not cols:
                continue
            sims = mat @ np.stack([vecs[n.memory_id] for n in cols]).T
            top = sims.argmax(axis=1)
            for r, c in enumerate(top):
                if sims[r, c] > best[r]:
                    best[r], pick[r] = sims[r, c], cols[int(c)]
        for r, i in enumerate(ids):
            if pick[r] is not None and best[r] >= self.cfg.successor_threshold:
                out[i] = pick[r]
        return out


def section_of(p: Prepared) -> str:
    return str(p.record.metadata.get("section", ""))


def chunk_of(p: Prepared) -> int:
    return int(p.record.metadata.get("chunk", 0))
