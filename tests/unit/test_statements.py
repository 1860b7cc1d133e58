"""The stored form of a statement (:mod:`varvemem.engines.statements`): it reads back as
parsed, only under its own key, and a comparison of stored statements is the comparison of
the texts."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from varvemem.engines import claims, statements

LEX = claims.lexicon()
TEXTS = [
    "The staging cluster is eks-stg-3",
    "The staging cluster is eks-stg-4 now",
    "Alice prefers tabs over spaces",
    "Alice prefers spaces over tabs",
    "We no longer use RabbitMQ for billing events",
    "客服热线改成了 400-820-1234",
    "客服热线是 400-820-9999",
    "Is the gateway on port 8080?",
    "INV-1042 was paid on 2026-03-02 for $1,200",
    "The support hotline changed to 555-0100",
    "日志管道的负责人是朱琳",
    "Kenji owns the billing portal",
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_stored_statement_reads_back_as_parsed(text: str) -> None:
    at = statements.key(text, LEX, 0.5)
    assert statements.load(statements.stored(text, LEX, 0.5), at) == \
        claims.statement(text, LEX, 0.5)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(TEXTS), st.sampled_from(TEXTS))
def test_stored_statements_compare_as_their_texts(new: str, old: str) -> None:
    def read(text: str) -> claims.Statement:
        got = statements.load(statements.stored(text, LEX, 0.5), statements.key(text, LEX, 0.5))
        assert got is not None
        return got

    assert claims.statement_supersedes(
        read(new), read(old), frame_overlap=0.8, min_words=2, subject_overlap=0.6) == \
        claims.supersedes(new, old, LEX, frame_overlap=0.8, min_words=2, subject_span=0.5,
                          subject_overlap=0.6)


def test_a_statement_is_used_only_for_the_text_and_rules_it_was_parsed_by() -> None:
    text = "The staging cluster is eks-stg-3"
    blob = statements.stored(text, LEX, 0.5)
    assert statements.load(blob, statements.key(text, LEX, 0.5)) is not None
    # Another text (an edited memory), another subject span, another lexicon: parsed again.
    assert statements.load(blob, statements.key(text + " now", LEX, 0.5)) is None
    assert statements.load(blob, statements.key(text, LEX, 0.4)) is None
    other = claims.lexicon((("cluster", ("cluster",), ()),))
    assert other.fingerprint != LEX.fingerprint
    assert statements.load(blob, statements.key(text, other, 0.5)) is None


@pytest.mark.parametrize("stored", [
    None, "", b"", b"k", b"knot zlib", b"k" + zlib.compress(b"not json"),
    b"k" + zlib.compress(b'["k",1]'), b"k" + zlib.compress(b"[1,2,3,4,5,6]"),
    # the JSON text of an earlier release, even under the right key
    '["k",false,false,null,[[],[],[],null,0,[],false],[[],[],[],false,null,[],[]],true,[]]'])
def test_what_does_not_load_is_parsed_again(stored: bytes | str | None) -> None:
    text = "The staging cluster is eks-stg-3"
    assert statements.load(stored, "k") is None
    assert statements.read(text, stored, LEX, 0.5) == claims.statement(text, LEX, 0.5)


def test_a_stale_statement_is_not_read() -> None:
    """A statement stored for one text is never served for another, whatever it says."""
    old = "The staging cluster is eks-stg-3"
    blob = statements.stored(old, LEX, 0.5)
    new = "The staging cluster is eks-stg-9"
    assert statements.read(new, blob, LEX, 0.5).claim.values == ("eks-stg-9",)


def test_a_statement_is_stored_compressed() -> None:
    text = ("Runbook step 15 for checkout-api: run mysql inventory --port=8388 then check "
            "/var/log/checkout/api-24.log; 33 pods affected; context: the nightly job.")
    blob = statements.stored(text, LEX, 0.5)
    at = statements.key(text, LEX, 0.5)
    assert blob.startswith(at.encode()) and len(blob) < len(zlib.decompress(blob[len(at):])) / 2


def test_the_rules_version_ignores_comments_and_docstrings_but_not_code_or_words() -> None:
    src = '"""Doc."""\nWORDS = ("moved", "改为")\n\n\ndef f(x):\n    """Says what."""\n    return x\n'
    edited = ('"""Another doc."""\n# why the words are these\nWORDS = ("moved",  "改为")\n\n\n'
              'def f(x):\n    """Says it otherwise."""\n    return x  # a note\n')
    assert statements._meaning(src) == statements._meaning(edited)
    assert statements._meaning(src) != statements._meaning(src.replace('"改为"', '"改成"'))
    assert statements._meaning(src) != statements._meaning(src.replace("return x", "return -x"))
