"""Bytes to text, the checks every extractor shares, and the plain-text extractor.

Every extractor returns text whose paragraphs are separated by one blank line, so the
chunkers can split on paragraphs first; what is not text (NUL bytes, mostly control bytes,
bad UTF-8) is an ``ExtractionError`` naming what was wrong.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from ...errors import ExtractionError, InputError

__all__ = ["PlainTextExtractor", "as_bytes", "decode_text", "non_empty", "normalise_newlines"]

# C0 controls that do not occur in text files; tab, LF, VT, FF, CR and ESC (ANSI colours in
# logs) are allowed.
_CONTROL_BYTES = bytes([*range(0x01, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])
_CONTROL_CHARS = frozenset(_CONTROL_BYTES.decode("ascii"))
_BINARY_SAMPLE = 8192
_BINARY_SHARE = 0.10
_UNICODE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode_text(content: bytes, *, what: str = "text", fallback_encoding: str | None = None) -> str:
    """Decode ``content`` as UTF-8 (strict), dropping a BOM and normalising newlines to ``\\n``.

    UTF-16/32 with a byte-order mark are accepted too (Windows editors write them).
    ``fallback_encoding`` is tried when the bytes are not UTF-8 (an HTML ``<meta charset>``).
    ``ExtractionError`` says whether the bytes look binary or names the first bad byte.
    """
    content = as_bytes(content)
    for bom, codec in _UNICODE_BOMS:
        if content.startswith(bom):
            try:
                text = content.decode(codec)
            except UnicodeDecodeError as exc:
                raise ExtractionError(f"{what} is not valid {codec.upper()}: {exc.reason} at byte offset {exc.start}") from None
            _reject_binary_text(text, what=what)
            return normalise_newlines(text)
    if b"\x00" in content:
        raise ExtractionError(f"{what} looks binary (contains NUL bytes)")
    sample = content[:_BINARY_SAMPLE]
    controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    if sample and controls / len(sample) > _BINARY_SHARE:
        raise ExtractionError(f"{what} looks binary ({controls} control bytes in the first {len(sample)} bytes)")
    skip = len(codecs.BOM_UTF8) if content.startswith(codecs.BOM_UTF8) else 0
    try:
        return normalise_newlines(content[skip:].decode("utf-8"))
    except UnicodeDecodeError as exc:
        utf8_error = ExtractionError(f"{what} is not valid UTF-8: {exc.reason} at byte offset {exc.start + skip}")
    if fallback_encoding is None:
        raise utf8_error
    try:
        return normalise_newlines(content.decode(fallback_encoding))
    except LookupError:
        raise ExtractionError(f"{what} declares an unknown encoding {fallback_encoding!r}") from None
    except UnicodeDecodeError as exc:
        raise ExtractionError(
            f"{what} is neither UTF-8 nor valid {fallback_encoding}: {exc.reason} at byte offset {exc.start}"
        ) from None


def _reject_binary_text(text: str, *, what: str) -> None:
    sample = text[:_BINARY_SAMPLE]
    if "\x00" in sample:
        raise ExtractionError(f"{what} looks binary (contains NUL characters)")
    controls = sum(1 for ch in sample if ch in _CONTROL_CHARS)
    if sample and controls / len(sample) > _BINARY_SHARE:
        raise ExtractionError(f"{what} looks binary ({controls} control characters in the first {len(sample)})")


def as_bytes(content: object) -> bytes:
    if isinstance(content, bytes):
        return content
    if isinstance(content, (bytearray, memoryview)):
        return bytes(content)
    raise InputError(f"content must be bytes, got {type(content).__name__}")


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def non_empty(text: str, *, what: str) -> str:
    text = text.strip()
    if not text:
        raise ExtractionError(f"{what} is empty (no text left after extraction)")
    return text


@dataclass(frozen=True)
class PlainTextExtractor:
    """``text/plain``: decoded and passed through (newlines normalised, outer blanks dropped)."""

    def extract(self, content: bytes) -> str:
        return non_empty(decode_text(content, what="text"), what="text")
