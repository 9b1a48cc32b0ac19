"""Extractors and the extractor registry: bytes in, plain text or a named error out. No DB."""

from __future__ import annotations

import codecs
import io
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgrag_neo4j.errors import (
    ConfigurationError,
    ExtractionError,
    InputError,
    KgragError,
    UnsupportedContentType,
)
from kgrag_neo4j.ingestion import (
    DEFAULT_EXTENSIONS,
    Extractor,
    ExtractorRegistry,
    HTMLExtractor,
    MarkdownExtractor,
    PDFExtractor,
    PlainTextExtractor,
    content_type_for_path,
    estimate_tokens,
    markdown_to_text,
)

# --------------------------------------------------------------------------- helpers


def make_pdf(pages: list[list[str]]) -> bytes:
    """A real PDF whose pages show the given lines in Helvetica (built with pypdf)."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td", *(f"({line}) Tj T*" for line in lines), "ET"]
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


# --------------------------------------------------------------------------- tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("x" * 2048, 512), ("x" * 2049, 513)],
)
def test_estimate_tokens_is_four_characters_rounded_up(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


# --------------------------------------------------------------------------- plain text


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"hello world", "hello world"),
        ("caf\u00e9 \u65e5\u672c".encode(), "caf\u00e9 \u65e5\u672c"),
        (codecs.BOM_UTF8 + b"with bom", "with bom"),
        (b"windows\r\nlines\rold mac", "windows\nlines\nold mac"),
        (b"\n\n  padded  \n\n", "padded"),
        (codecs.BOM_UTF16_LE + "utf-16 text".encode("utf-16-le"), "utf-16 text"),
        (codecs.BOM_UTF16_BE + "big endian".encode("utf-16-be"), "big endian"),
        (b"tab\there\x1b[31m ansi log\x1b[0m\f", "tab\there\x1b[31m ansi log\x1b[0m"),
    ],
)
def test_plain_text_decodes(content: bytes, expected: str) -> None:
    assert PlainTextExtractor().extract(content) == expected


@pytest.mark.parametrize(
    ("content", "fragments"),
    [
        (b"abc\xffdef", ["not valid UTF-8", "invalid start byte", "byte offset 3"]),
        (codecs.BOM_UTF8 + b"ab\xc3", ["not valid UTF-8", "byte offset 5"]),
        (b"ok \xe2\x82 broken", ["not valid UTF-8", "byte offset 3"]),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["looks binary", "NUL"]),
        (b"text\x00more", ["looks binary", "NUL"]),
        (bytes(range(1, 9)) * 4 + b"some text", ["looks binary", "control"]),
        (b"", ["text is empty"]),
        (b" \n\t\r\n ", ["text is empty"]),
        (codecs.BOM_UTF8, ["text is empty"]),
    ],
)
def test_plain_text_rejects_with_a_named_problem(content: bytes, fragments: list[str]) -> None:
    with pytest.raises(ExtractionError) as info:
        PlainTextExtractor().extract(content)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert isinstance(info.value, InputError)


def test_plain_text_refuses_str() -> None:
    with pytest.raises(InputError, match="must be bytes, got str"):
        PlainTextExtractor().extract("already text")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- HTML


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<p>one</p><p>two</p>", "one\n\ntwo"),
        ("<h1>Title</h1>text under it", "Title\n\ntext under it"),
        ("<h2>A</h2><h3>B</h3><p>c</p>", "A\n\nB\n\nc"),
        ("<p>x<script>alert('no')</script>y</p>", "xy"),
        ("<style>p { color: red }</style><p>styled</p>", "styled"),
        ("<noscript>enable js</noscript><p>content</p>", "content"),
        (
            "<html><head><title>T</title><meta name='d' content='meta text'></head><body><p>body</p></body></html>",
            "body",
        ),
        ("<head><title>never closed<body><p>still found</p>", "still found"),
        ("<p>Fish &amp; chips &lt;3 &eacute;t&eacute; &#8364;5 &#x41;</p>", "Fish & chips <3 été €5 A"),
        ("<p>lots   of\n\n  white\tspace</p>", "lots of white space"),
        ("<p>a&nbsp;b</p>", "a b"),
        ("<ul><li>first</li><li>second <b>bold</b></li></ul>", "first\n\nsecond bold"),
        (
            "<table><tr><th>Name</th><th>Age</th></tr><tr><td>Ann</td><td>31</td></tr></table>",
            "Name Age\n\nAnn 31",
        ),
        ("<p>line one<br>line two<br/>line three</p>", "line one\nline two\nline three"),
        ("<pre>def f():\n    return 1\n</pre>", "def f():\n    return 1"),
        ("<p>see <img src='x.png' alt='a diagram'> here</p>", "see a diagram here"),
        ("<div>outer<div>inner</div>tail</div>", "outer\n\ninner\n\ntail"),
        ("<!-- hidden comment --><p>shown</p>", "shown"),
        ("plain text, no tags", "plain text, no tags"),
        ("<p>unclosed <b>bold <i>italic", "unclosed bold italic"),
    ],
)
def test_html_extraction(html: str, expected: str) -> None:
    assert HTMLExtractor().extract(html.encode()) == expected


def test_html_falls_back_to_the_declared_charset() -> None:
    page = '<html><head><meta charset="iso-8859-1"></head><body><p>caf\xe9 na\xefve</p></body></html>'
    assert HTMLExtractor().extract(page.encode("latin-1")) == "caf\u00e9 na\u00efve"


@pytest.mark.parametrize(
    ("html", "fragment"),
    [
        (b"<p>caf\xe9</p>", "not valid UTF-8"),
        (b'<meta charset="no-such-codec"><p>caf\xe9</p>', "unknown encoding 'no-such-codec'"),
        (b"<script>only()</script>", "HTML is empty"),
        (b"<html><head><title>only a title</title></head></html>", "HTML is empty"),
        (b"<p>\x00\x01</p>", "looks binary"),
    ],
)
def test_html_errors(html: bytes, fragment: str) -> None:
    with pytest.raises(ExtractionError, match=fragment):
        HTMLExtractor().extract(html)


# --------------------------------------------------------------------------- Markdown


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("plain paragraph", "plain paragraph"),
        ("*em* and _em_ and **strong** and __strong__", "em and em and strong and strong"),
        ("***both*** and ~~gone~~ and **_nested_**", "both and gone and nested"),
        ("snake_case_name stays", "snake_case_name stays"),
        ("use `a *b* c` inline", "use a *b* c inline"),
        ("`` a `tick` ``", "a `tick`"),
        ("a [link](https://example.com/x_(y) 'title') here", "a link here"),
        ("a [ref link][id] here\n\n[id]: https://example.com", "a ref link here"),
        ("![alt text](img.png) and [![logo](l.png)](https://x.org)", "alt text and logo"),
        ("<https://example.com/page>", "https://example.com/page"),
        ("# Title\nbody", "Title\n\nbody"),
        ("## Closed heading ##\n\nbody", "Closed heading\n\nbody"),
        ("Setext\n======\nbody", "Setext\n\nbody"),
        ("Second\n---\nbody", "Second\n\nbody"),
        ("para\nof two lines\n===\nbody", "para of two lines\n\nbody"),
        ("- item\n---\nbody", "item\n\nbody"),
        ("#hashtag is not a heading", "#hashtag is not a heading"),
        ("- one\n- two\n* three\n+ four", "one\ntwo\nthree\nfour"),
        ("1. first\n2) second\n10. tenth", "first\nsecond\ntenth"),
        ("- [ ] todo\n- [x] done", "todo\ndone"),
        ("- item\n  continued", "item continued"),
        ("> quoted\n> > nested *quote*", "quoted nested quote"),
        ("```python\ndef f():\n    return `x`\n```", "def f():\n    return `x`"),
        ("~~~\n# not a heading\n**raw**\n~~~", "# not a heading\n**raw**"),
        ("text\n```\nunclosed fence\n  keeps indentation", "text\n\nunclosed fence\n  keeps indentation"),
        ("| A | B |\n|---|:-:|\n| 1 | `x` |\n| *2* | 3 |", "A B\n1 x\n2 3"),
        ("before\n\n---\n\nafter", "before\n\nafter"),
        ("a <span class='x'>tagged</span> word<br>next", "a tagged word next"),
        ("<!-- note\nspanning lines -->visible", "visible"),
        ("Fish &amp; chips &copy;", "Fish & chips ©"),
        ("`&amp;` is kept in code, &amp; is not", "&amp; is kept in code, & is not"),
        ("&#xE000;0&#xE001; `c`", "\ue0000\ue001 c"),
        ("\\*not emphasis\\* and \\# not heading", "*not emphasis* and # not heading"),
        ("soft\nwrapped\nlines", "soft wrapped lines"),
        ("footnote[^1] here\n\n[^1]: The note.", "footnote here\n\nThe note."),
        ("para one\n\n\n\npara two", "para one\n\npara two"),
    ],
)
def test_markdown_to_text(markdown: str, expected: str) -> None:
    assert markdown_to_text(markdown) == expected


def test_markdown_extractor_decodes_and_strips() -> None:
    content = "# Über\r\n\r\nSome **bold** text.\r\n".encode()
    assert MarkdownExtractor().extract(content) == "Über\n\nSome bold text."


@pytest.mark.parametrize("markdown", [b"", b"```\n```", b"[id]: https://example.com", b"<!-- only -->"])
def test_markdown_empty_after_stripping(markdown: bytes) -> None:
    with pytest.raises(ExtractionError, match="Markdown is empty"):
        MarkdownExtractor().extract(markdown)


@given(
    st.lists(
        st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8), min_size=1, max_size=8),
        min_size=1,
        max_size=6,
    )
)
def test_markdown_keeps_every_word_of_plain_prose(paragraphs: list[list[str]]) -> None:
    markdown = "\n\n".join(" ".join(words) for words in paragraphs)
    assert markdown_to_text(markdown).split() == [w for words in paragraphs for w in words]


# --------------------------------------------------------------------------- PDF


def test_pdf_pages_are_separated_by_blank_lines() -> None:
    pdf = make_pdf([["Hello PDF world.", "Second line."], ["Page two text."]])
    assert PDFExtractor().extract(pdf) == "Hello PDF world.\nSecond line.\n\nPage two text."


def test_pdf_without_text_is_empty() -> None:
    with pytest.raises(ExtractionError, match="PDF is empty"):
        PDFExtractor().extract(make_pdf([[]]))


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"just some text", "no %PDF- header"),
        (b"%PDF-1.7\nthis is not really a pdf", "PDF is broken"),
        ("truncated", "PDF is broken"),
    ],
)
def test_broken_pdf(content: bytes | str, fragment: str) -> None:
    if content == "truncated":
        content = make_pdf([["Some text."]])[:150]
    with pytest.raises(ExtractionError, match=fragment):
        PDFExtractor().extract(content)  # type: ignore[arg-type]


def test_pdf_without_pypdf_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)  # makes `import pypdf` raise ImportError
    with pytest.raises(ConfigurationError) as info:
        PDFExtractor().extract(b"%PDF-1.4")
    assert 'pip install "kgrag-neo4j[pdf]"' in str(info.value)


# --------------------------------------------------------------------------- registry


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("notes.txt", "text/plain"),
        ("a.text", "text/plain"),
        ("server.log", "text/plain"),
        ("README.rst", "text/plain"),
        ("data.csv", "text/plain"),
        ("config.json", "text/plain"),
        ("README.md", "text/markdown"),
        ("guide.MARKDOWN", "text/markdown"),
        ("/srv/site/index.html", "text/html"),
        ("page.HTM", "text/html"),
        ("paper.final.pdf", "application/pdf"),
    ],
)
def test_content_type_for_path(path: str, content_type: str) -> None:
    assert content_type_for_path(path) == content_type
    assert ExtractorRegistry.default().content_type_for_path(path) == content_type


@pytest.mark.parametrize(
    ("path", "fragments"),
    [
        ("photo.jpeg", ["'.jpeg'", "photo.jpeg", ".md", ".pdf", ".txt"]),
        ("archive.tar.gz", ["'.gz'"]),
        ("Makefile", ["no file extension", ".html"]),
        (".bashrc", ["no file extension"]),
    ],
)
def test_unknown_extension_names_it_and_the_known_ones(path: str, fragments: list[str]) -> None:
    with pytest.raises(UnsupportedContentType) as info:
        content_type_for_path(path)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_default_registry_knows_the_four_types() -> None:
    registry = ExtractorRegistry.default()
    assert registry.content_types == ("application/pdf", "text/html", "text/markdown", "text/plain")
    assert set(DEFAULT_EXTENSIONS.values()) == set(registry.content_types)
    for content_type in registry.content_types:
        assert isinstance(registry.extractor_for(content_type), Extractor)


@pytest.mark.parametrize(
    ("content", "kwargs", "expected"),
    [
        (b"# Doc\n\n*x*", {"path": "doc.md"}, "Doc\n\nx"),
        (b"<h1>Doc</h1><p>x</p>", {"content_type": "text/HTML; charset=utf-8"}, "Doc\n\nx"),
        (b"# not markdown here", {"content_type": "text/plain"}, "# not markdown here"),
        (b"# typed wins", {"content_type": "text/plain", "path": "x.md"}, "# typed wins"),
    ],
)
def test_registry_extract_dispatches(content: bytes, kwargs: dict, expected: str) -> None:
    assert ExtractorRegistry.default().extract(content, **kwargs) == expected


def test_registry_extract_pdf_by_path() -> None:
    pdf = make_pdf([["Registry PDF."]])
    assert ExtractorRegistry.default().extract(pdf, path="x.pdf") == "Registry PDF."


def test_registry_extract_needs_a_type() -> None:
    with pytest.raises(InputError, match="content_type or a path"):
        ExtractorRegistry.default().extract(b"x")


def test_unknown_content_type_lists_the_registered_ones() -> None:
    with pytest.raises(UnsupportedContentType) as info:
        ExtractorRegistry.default().extract(b"a,b", content_type="text/csv")
    assert "'text/csv'" in str(info.value) and "text/markdown" in str(info.value)


@pytest.mark.parametrize(("size", "limit"), [(11, 10), (1025, 1024)])
def test_size_guard_names_size_and_limit(size: int, limit: int) -> None:
    registry = ExtractorRegistry.default(max_bytes=limit)
    assert registry.extract(b"x" * limit, content_type="text/plain") == "x" * limit
    with pytest.raises(InputError) as info:
        registry.extract(b"x" * size, content_type="text/plain")
    assert f"{size} bytes" in str(info.value) and f"limit of {limit} bytes" in str(info.value)


@pytest.mark.parametrize("max_bytes", [0, -1, 1.5, True, "10"])
def test_max_bytes_must_be_a_positive_int(max_bytes: object) -> None:
    with pytest.raises(ConfigurationError, match="max_bytes"):
        ExtractorRegistry(max_bytes=max_bytes)  # type: ignore[arg-type]


class _CsvExtractor:
    def extract(self, content: bytes) -> str:
        rows = content.decode().splitlines()
        return "\n".join(" | ".join(cell.strip() for cell in row.split(",")) for row in rows)


def test_custom_extractor_with_extensions_stays_in_its_registry() -> None:
    registry = ExtractorRegistry.default()
    registry.register_extractor("text/csv", _CsvExtractor(), extensions=["TSV", ".csv"])
    assert registry.extract(b"a, b\nc,d", path="t.csv") == "a | b\nc | d"
    assert registry.content_type_for_path("t.tsv") == "text/csv"
    fresh = ExtractorRegistry.default()
    assert fresh.content_type_for_path("t.csv") == "text/plain"
    assert "text/csv" not in fresh.content_types
    with pytest.raises(UnsupportedContentType):
        fresh.content_type_for_path("t.tsv")


@pytest.mark.parametrize(
    ("content_type", "extractor", "extensions", "fragment"),
    [
        ("csv", _CsvExtractor(), (), "type/subtype"),
        ("text/csv", object(), (), "extract"),
        ("text/csv", _CsvExtractor(), ("a/b",), "not a file extension"),
        ("text/csv", _CsvExtractor(), (".",), "not a file extension"),
    ],
)
def test_register_extractor_validates(content_type: str, extractor: object, extensions: tuple, fragment: str) -> None:
    with pytest.raises(ConfigurationError, match=fragment):
        ExtractorRegistry().register_extractor(content_type, extractor, extensions=extensions)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("returned", "error", "fragment"),
    [("  \n ", ExtractionError, "text/x-custom content is empty"), (b"bytes", ExtractionError, "returned bytes")],
)
def test_registry_checks_what_custom_extractors_return(returned: object, error: type, fragment: str) -> None:
    class Custom:
        def extract(self, content: bytes) -> object:
            return returned

    registry = ExtractorRegistry()
    registry.register_extractor("text/x-custom", Custom())  # type: ignore[arg-type]
    with pytest.raises(error, match=fragment):
        registry.extract(b"anything", content_type="text/x-custom")


# --------------------------------------------------------------------------- robustness

_TEXT_EXTRACTORS = [PlainTextExtractor(), HTMLExtractor(), MarkdownExtractor()]


@pytest.mark.parametrize("extractor", _TEXT_EXTRACTORS, ids=lambda e: type(e).__name__)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(st.binary(max_size=400), st.text(max_size=400).map(str.encode)))
def test_text_extractors_return_text_or_a_kgrag_error(extractor: Extractor, content: bytes) -> None:
    try:
        text = extractor.extract(content)
    except KgragError:
        return
    assert isinstance(text, str) and text and text == text.strip()
    assert "\r" not in text


@settings(max_examples=60, deadline=None)
@given(tail=st.binary(max_size=300))
def test_pdf_extractor_returns_text_or_a_kgrag_error(tail: bytes) -> None:
    try:
        text = PDFExtractor().extract(b"%PDF-1.4\n" + tail)
    except KgragError:
        return
    assert isinstance(text, str) and text.strip()


@settings(max_examples=40, deadline=None)
@given(cut=st.integers(min_value=0, max_value=2000), flip=st.integers(min_value=0, max_value=255))
def test_damaged_real_pdf_returns_text_or_a_kgrag_error(cut: int, flip: int) -> None:
    pdf = bytearray(make_pdf([["Some page text."]]))
    pdf[cut % len(pdf)] = flip
    try:
        PDFExtractor().extract(bytes(pdf))
    except KgragError:
        pass


@given(st.text(max_size=500))
def test_markdown_to_text_never_raises(markdown: str) -> None:
    text = markdown_to_text(markdown)
    assert "\ue000" not in text and "\ue001" not in text
