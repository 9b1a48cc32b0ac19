"""The PDF extractor (optional extra ``pdf``): the text a PDF stores as text, pages apart."""

from __future__ import annotations

import io
from dataclasses import dataclass

from ...errors import ConfigurationError, ExtractionError
from .text import as_bytes, non_empty, normalise_newlines

__all__ = ["PDFExtractor"]

_PDF_INSTALL_HINT = 'PDF extraction needs pypdf: pip install "kgrag-neo4j[pdf]"'


def _import_pypdf():
    try:
        import pypdf
    except ImportError as exc:
        raise ConfigurationError(_PDF_INSTALL_HINT) from exc
    return pypdf


@dataclass(frozen=True)
class PDFExtractor:
    """``application/pdf`` (optional extra ``pdf``): the text of every page, pages apart.

    Only text that the PDF stores as text is found; scanned pages need OCR first.
    """

    def extract(self, content: bytes) -> str:
        pypdf = _import_pypdf()
        content = as_bytes(content)
        if b"%PDF-" not in content[:1024]:
            raise ExtractionError("PDF is broken: no %PDF- header in the first 1024 bytes")
        try:
            reader = pypdf.PdfReader(io.BytesIO(content), strict=False)
            if reader.is_encrypted and not reader.decrypt(""):
                raise ExtractionError("PDF is encrypted with a password")
            pages = [page.extract_text() or "" for page in reader.pages]
        except ExtractionError:
            raise
        except Exception as exc:  # pypdf raises many unrelated types on damaged files
            raise ExtractionError(f"PDF is broken: {type(exc).__name__}: {exc}") from exc
        texts = []
        for page in pages:
            lines = [ln.rstrip() for ln in normalise_newlines(page).split("\n")]
            text = "\n".join(lines).strip()
            if text:
                texts.append(text)
        return non_empty("\n\n".join(texts), what="PDF")
