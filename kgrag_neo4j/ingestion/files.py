"""Which files an ``ingest`` of paths, folders and globs means."""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Iterable

from ..errors import InputError

__all__ = ["expand_paths"]


def expand_paths(paths: Iterable[str], *, extensions: Iterable[str]) -> list[Path]:
    """Files named, files under folders (recursive, hidden ones skipped, known extensions
    only) and glob matches, each once, in a stable order. A path that matches nothing is an
    error naming it."""
    known = {e.lower() for e in extensions}
    out: dict[str, Path] = {}
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            out.setdefault(str(p), p)
        elif p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    f = Path(root) / name
                    if not name.startswith(".") and f.suffix.lower() in known:
                        out.setdefault(str(f), f)
        elif glob.has_magic(raw):
            matches = sorted(glob.glob(raw, recursive=True))
            if not matches:
                raise InputError(f"no file matches {raw!r}")
            for m in matches:
                if Path(m).is_file():
                    out.setdefault(m, Path(m))
        else:
            raise InputError(f"no such file or folder: {raw}")
    return list(out.values())
