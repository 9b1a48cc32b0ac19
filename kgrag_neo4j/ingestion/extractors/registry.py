"""Content types to extractors, file extensions to content types, and the size guard.

``ExtractorRegistry.default()`` maps the four built-in content types to their extractors and
file extensions to content types; each call returns a fresh registry, so registering a
custom extractor never leaks into other callers.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import PurePath
from typing import Protocol, runtime_checkable

from ...errors import ConfigurationError, ExtractionError, InputError, UnsupportedContentType
from .html import HTMLExtractor
from .markdown import MarkdownExtractor
from .pdf import PDFExtractor
from .text import PlainTextExtractor, as_bytes, non_empty

__all__ = ["DEFAULT_EXTENSIONS", "DEFAULT_MAX_BYTES", "Extractor", "ExtractorRegistry", "content_type_for_path"]

DEFAULT_MAX_BYTES = 50 * 1024 * 1024

DEFAULT_EXTENSIONS: Mapping[str, str] = {
    ".txt": "text/plain",
    ".text": "text/plain",
    ".log": "text/plain",
    ".rst": "text/plain",
    ".csv": "text/plain",
    ".json": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".html": "text/html",
    ".htm": "text/html",
    ".pdf": "application/pdf",
}


@runtime_checkable
class Extractor(Protocol):
    """Turns the bytes of one content type into plain text."""

    def extract(self, content: bytes) -> str: ...


_CONTENT_TYPE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")


def _normalise_content_type(content_type: str) -> str:
    # "text/HTML; charset=utf-8" -> "text/html": parameters never select the extractor.
    return str(content_type).split(";", 1)[0].strip().lower()


def _extension_of(path: str | os.PathLike[str]) -> tuple[str, str]:
    # os.path, not PurePath: called once per file of a folder ingest, where pathlib's
    # parsing cost more than the read (same answers: PurePath.suffix ignores a leading dot)
    stem, ext = os.path.splitext(os.path.basename(os.fspath(path)))
    if stem and len(ext) > 1:
        return stem + ext, ext.lower()
    name = PurePath(os.fspath(path)).name
    return name, PurePath(name).suffix.lower()


def _lookup_extension(path: str | os.PathLike[str], table: Mapping[str, str]) -> str:
    name, ext = _extension_of(path)
    if ext in table:
        return table[ext]
    known = ", ".join(sorted(table))
    if not ext:
        raise UnsupportedContentType(f"{name!r} has no file extension; supported: {known}")
    try:
        return table[ext]
    except KeyError:
        raise UnsupportedContentType(f"unsupported file extension {ext!r} ({name!r}); supported: {known}") from None


def content_type_for_path(path: str | os.PathLike[str]) -> str:
    """Content type of ``path`` by its extension (case-insensitive), from ``DEFAULT_EXTENSIONS``."""
    return _lookup_extension(path, DEFAULT_EXTENSIONS)


class ExtractorRegistry:
    """Content types -> extractors, extensions -> content types, and a size guard.

    ``ExtractorRegistry.default()`` holds the four built-ins; ``ExtractorRegistry()`` is empty.
    ``max_bytes`` bounds the input of ``extract`` (50 MiB by default).
    """

    def __init__(self, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ConfigurationError(f"max_bytes must be a positive integer, got {max_bytes!r}")
        self.max_bytes = max_bytes
        self._extractors: dict[str, Extractor] = {}
        self._extensions: dict[str, str] = {}

    @classmethod
    def default(cls, *, max_bytes: int = DEFAULT_MAX_BYTES) -> ExtractorRegistry:
        """A fresh registry with plain text, HTML, Markdown and PDF and the default extensions."""
        registry = cls(max_bytes=max_bytes)
        registry.register_extractor("text/plain", PlainTextExtractor())
        registry.register_extractor("text/html", HTMLExtractor())
        registry.register_extractor("text/markdown", MarkdownExtractor())
        registry.register_extractor("application/pdf", PDFExtractor())
        registry._extensions.update(DEFAULT_EXTENSIONS)
        return registry

    def register_extractor(self, content_type: str, extractor: Extractor, *, extensions: Iterable[str] = ()) -> None:
        """Use ``extractor`` for ``content_type`` (replacing any), and map ``extensions`` to it."""
        ct = _normalise_content_type(content_type)
        if not _CONTENT_TYPE.match(ct):
            raise ConfigurationError(f"content type must look like 'type/subtype', got {content_type!r}")
        if not isinstance(extractor, Extractor):
            raise ConfigurationError(
                f"extractor for {ct!r} must have an extract(content: bytes) -> str method, got {type(extractor).__name__}"
            )
        exts = []
        for ext in [extensions] if isinstance(extensions, str) else extensions:
            ext = str(ext).strip().lower()
            ext = ext if ext.startswith(".") else f".{ext}"
            if len(ext) < 2 or "/" in ext:
                raise ConfigurationError(f"not a file extension: {ext!r}")
            exts.append(ext)
        self._extractors[ct] = extractor
        self._extensions.update(dict.fromkeys(exts, ct))

    @property
    def extensions(self) -> tuple[str, ...]:
        """File extensions (with the dot) this registry knows a content type for."""
        return tuple(sorted(self._extensions))

    @property
    def content_types(self) -> tuple[str, ...]:
        return tuple(sorted(self._extractors))

    def extractor_for(self, content_type: str) -> Extractor:
        ct = _normalise_content_type(content_type)
        try:
            return self._extractors[ct]
        except KeyError:
            known = ", ".join(self.content_types) or "none"
            raise UnsupportedContentType(f"no extractor for content type {ct!r}; registered: {known}") from None

    def content_type_for_path(self, path: str | os.PathLike[str]) -> str:
        """Content type of ``path`` by extension, including extensions registered here."""
        return _lookup_extension(path, self._extensions)

    def extract(
        self,
        content: bytes,
        *,
        content_type: str | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> str:
        """Text of ``content``, typed by ``content_type`` or else by the extension of ``path``."""
        content = as_bytes(content)
        if content_type is None:
            if path is None:
                raise InputError("extract needs a content_type or a path to detect it from")
            content_type = self.content_type_for_path(path)
        extractor = self.extractor_for(content_type)
        if len(content) > self.max_bytes:
            raise InputError(
                f"content is {len(content)} bytes, over the limit of {self.max_bytes} bytes (raise max_bytes to accept it)"
            )
        text = extractor.extract(content)
        if not isinstance(text, str):
            raise ExtractionError(
                f"extractor for {_normalise_content_type(content_type)!r} returned {type(text).__name__}, not str"
            )
        return non_empty(text, what=f"{_normalise_content_type(content_type)} content")
