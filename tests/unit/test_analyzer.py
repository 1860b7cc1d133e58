"""The analyser: one tokenisation for indexing and querying, Chinese and English alike."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from varvemem.language.stopwords import CHINESE_CHARS, CHINESE_WORDS, ENGLISH
from varvemem.text import analyse, chunk_markdown, estimate_tokens, extract_keywords, fts_query


def test_latin_words_lowercased_and_stop_words_dropped() -> None:
    assert analyse("The Pipeline FAILED on the Build stage") == ["pipeline", "failed", "build",
                                                                 "stage"]


def test_cjk_bigrams_split_at_stop_characters() -> None:
    # 的 and 是 are stop characters; 如何 a stop word.
    assert analyse("如何创建工单") == ["创建", "建工", "工单"]
    assert analyse("部署的服务") == ["部署", "服务"]
    assert analyse("镜像是坏的") == ["镜像", "坏"]


def test_mixed_text_keeps_order_and_identifiers() -> None:
    tokens = analyse("修复 microservice-order 的 ImagePullBackOff，values.yaml 里的凭证")
    # 里 stands alone between stop characters: kept as a unigram
    assert tokens == ["修复", "microservice", "order", "imagepullbackoff", "values", "yaml",
                      "里", "凭证"]


def test_fullwidth_and_case_are_normalised() -> None:
    assert analyse("ＨＥＬＭ Chart") == analyse("helm chart") == ["helm", "chart"]


def test_keywords_are_frequent_tokens_first() -> None:
    kws = extract_keywords("镜像拉取失败。镜像拉取凭证错误，镜像仓库 helm helm", limit=3)
    # 镜像 three times, then 像拉, 拉取 and helm twice each: the tie goes to the first seen.
    assert kws == ["镜像", "像拉", "拉取"]


def test_fts_query_quotes_tokens() -> None:
    assert fts_query(["a\"b", "x", "x"]) == '"a""b" OR "x"'


@given(st.text(max_size=200))
def test_tokens_are_lowercase_nonempty_and_not_stop_words(text: str) -> None:
    for tok in analyse(text):
        assert tok and tok == tok.lower()
        assert tok not in ENGLISH
        assert tok not in CHINESE_WORDS
        assert not (len(tok) == 1 and tok in CHINESE_CHARS)
        assert " " not in tok


@given(st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4FFF), min_size=2,
               max_size=30))
def test_cjk_runs_become_overlapping_bigrams(text: str) -> None:
    tokens = analyse(text)
    for tok in tokens:
        assert 1 <= len(tok) <= 2
        assert tok in text


_LATIN_WORD = st.from_regex(r"[A-Za-z0-9]{1,12}", fullmatch=True)
# Stop words that are one run of letters ("didn't" is two runs, "didn" and "t", so never one).
_STOP_WORDS = sorted(w for w in ENGLISH if w.isalnum() and w.isascii())
_SEPARATOR = st.sampled_from([" ", "  ", ", ", "-", "_", ".", "\n", "\t", "/", "! "])


@given(st.lists(st.tuples(st.one_of(_LATIN_WORD, st.sampled_from(_STOP_WORDS)), _SEPARATOR),
                min_size=1, max_size=30))
def test_latin_text_becomes_its_lowercased_words_without_stop_words(
        parts: list[tuple[str, str]]) -> None:
    """Each word of Latin text, joined by any punctuation, is one token, in order: no word is
    dropped (unless a stop word), split, merged or reordered."""
    text = "".join(w + sep for w, sep in parts)
    words = [w.lower() for w, _ in parts]
    assert analyse(text) == [w for w in words if w not in ENGLISH]


def test_token_estimate_counts_cjk_per_character() -> None:
    assert estimate_tokens("你好世界") == 4
    assert estimate_tokens("hello world") == 3  # 2 words x 1.3, rounded up


def test_chunking_by_headings_without_the_document_title() -> None:
    text = "# Handbook v3\n\n## Branching\n\nmain is protected.\n\n### Hotfix\n\ncut from tags.\n"
    assert chunk_markdown(text) == [("Branching", "Branching\n\nmain is protected."),
                                    ("Branching > Hotfix", "Branching > Hotfix\n\ncut from tags.")]


def test_chunking_splits_long_sections_at_paragraphs() -> None:
    text = "## S\n\n" + "\n\n".join("word " * 50 for _ in range(10))
    chunks = chunk_markdown(text, max_chars=600)
    assert len(chunks) > 1
    assert all(len(c) <= 600 + len("S\n\n") for _, c in chunks)
    assert all(title == "S" and c.startswith("S\n\n") for title, c in chunks)
    # Split at paragraphs only: every paragraph is in one chunk, whole, in order.
    paragraphs = [p for _, c in chunks for p in c.removeprefix("S\n\n").split("\n\n")]
    assert paragraphs == [("word " * 50).strip()] * 10


def test_index_terms_stem_english_and_keep_cjk() -> None:
    from varvemem.text import index_terms

    assert index_terms("Painted paintings while camping") == ["paint", "paint", "camp"]
    assert index_terms("部署失败 deployments") == ["部署", "署失", "失败", "deploy"]
    assert index_terms("the of") == []


@given(st.text(max_size=200))
def test_index_terms_are_one_per_analysed_token(text: str) -> None:
    from varvemem.text import index_terms

    assert len(index_terms(text)) == len(analyse(text))
