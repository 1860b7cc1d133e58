"""The streaming chunker (:func:`iter_chunks`, fed by :func:`iter_lines`) cuts a text exactly
as :func:`chunk_markdown` does, whatever the blocks it is read in."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from varvemem.text import chunk_markdown
from varvemem.text.chunking import count_titles, iter_chunks, iter_lines

PIECES = ["# Title", "# Other title", "## Deploy", "### Helm  ##", "#### 深层", "#nospace",
          "", "", "", "   ", "\t", "```", "~~~", "  ```python", "# in a fence?",
          "Pin chart versions.", "部署前先检查集群。", "x" * 130, "word " * 40, "a\rb",
          "c\r\nd", "e\x0bf", "g\u2028h", "\ufeffbom", "## 回滚 ##"]


def streamed(text: str, max_chars: int, block: int) -> list[tuple[str, str]]:
    def blocks() -> list[str]:
        return [text[i:i + block] for i in range(0, len(text), block)]

    lone = count_titles(iter_lines(blocks())) == 1
    return list(iter_chunks(iter_lines(blocks()), max_chars, lone_title=lone))


@given(st.lists(st.sampled_from(PIECES), max_size=60),
       st.sampled_from(["\n", "\r\n", "\n\n"]), st.integers(100, 400), st.integers(1, 50))
def test_the_stream_cuts_as_the_whole_text_does(parts: list[str], sep: str, max_chars: int,
                                                block: int) -> None:
    text = sep.join(parts)
    assert streamed(text, max_chars, block) == chunk_markdown(text, max_chars)


@given(st.text(alphabet="#`~ \n\r\tab中。", max_size=400), st.integers(100, 150),
       st.integers(1, 64))
def test_any_text_streams_to_the_same_chunks(text: str, max_chars: int, block: int) -> None:
    assert streamed(text, max_chars, block) == chunk_markdown(text, max_chars)


def test_iter_lines_is_splitlines_whatever_the_blocks() -> None:
    text = "a\r\nb\rc\n\nd\x0be\u2028\r\n"
    for block in range(1, len(text) + 1):
        blocks = [text[i:i + block] for i in range(0, len(text), block)]
        assert list(iter_lines(blocks)) == text.splitlines()


def test_a_huge_paragraph_is_cut_in_the_same_pieces() -> None:
    text = "# Doc\n\n## Big\n\n" + "\n".join(f"line {i} " + "y" * (i % 50) for i in range(2000))
    text += "\n   \n\t\n\n## After\n\n  tail  "
    assert streamed(text, 300, 97) == chunk_markdown(text, 300)
    assert streamed(text, 300, 10_000) == chunk_markdown(text, 300)
