"""Which files an ``ingest`` of paths, folders and globs means, and reading them safely.

Only regular files are read. A FIFO would block the read forever and a device (``/dev/zero``)
never ends, so folders skip them, and ``read_regular_file`` checks the file it actually opened
(never blocking on the open) and its size. Inside a folder, a symlink is followed when its
target stays inside that folder; one that leaves it is followed only with
``follow_symlinks=True`` (the CLI's ``--follow-symlinks``). Whatever is skipped is reported,
with the reason, instead of being silently dropped or hanging the run. Folders are walked
with an explicit stack, so depth costs no recursion.
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError

__all__ = ["FileSelection", "SkippedPath", "expand_paths", "file_kind", "read_regular_file", "select_files"]


@dataclass(frozen=True)
class SkippedPath:
    """A path that is not ingested, and why. ``named`` is True for a path given by the caller
    (an error of the run) and False for one found in a folder (reported, then passed over)."""

    path: str
    reason: str
    named: bool = False


@dataclass
class FileSelection:
    """The regular files to ingest (each once, by resolved path, in a stable order) and what
    was skipped."""

    files: list[Path] = field(default_factory=list)
    skipped: list[SkippedPath] = field(default_factory=list)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _inside(target: str, root: str) -> bool:
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


class _Selector:
    def __init__(self, extensions: Iterable[str], follow_symlinks: bool):
        self.known = {e.lower() for e in extensions}
        self.follow = follow_symlinks
        self.out = FileSelection()
        self._seen: set[str] = set()

    def add(self, path: Path, real: str) -> None:
        if real not in self._seen:  # one document per file, however it was reached
            self._seen.add(real)
            self.out.files.append(path)

    def skip(self, path: Path | str, reason: str, *, named: bool = False) -> None:
        self.out.skipped.append(SkippedPath(str(path), reason, named))

    def named(self, raw: str) -> None:
        p = Path(raw)
        try:
            st = p.stat()  # a path the caller named is followed wherever it points
        except FileNotFoundError:
            if os.path.islink(raw):
                self.skip(p, "a broken symlink", named=True)
                return
            if glob.has_magic(raw):
                self.glob(raw)
                return
            raise InputError(f"no such file or folder: {raw}") from None
        except OSError as exc:
            self.skip(p, f"cannot read it: {exc.strerror or exc}", named=True)
            return
        if stat.S_ISDIR(st.st_mode):
            self.walk(p)
        elif stat.S_ISREG(st.st_mode):
            self.add(p, os.path.realpath(p))
        else:
            self.skip(p, f"not a regular file ({file_kind(st.st_mode)})", named=True)

    def glob(self, raw: str) -> None:
        matches = sorted(glob.glob(raw, recursive=True))
        if not matches:
            raise InputError(f"no file matches {raw!r}")
        for m in matches:
            try:
                st = os.stat(m)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                self.add(Path(m), os.path.realpath(m))
            elif not stat.S_ISDIR(st.st_mode):
                self.skip(m, f"not a regular file ({file_kind(st.st_mode)})")

    def walk(self, top: Path) -> None:
        root = os.path.realpath(top)
        visited = {root}
        # (path as found, its resolved path): a folder's resolved path is carried down, so only
        # symlinks are resolved (resolving every path is quadratic in the depth)
        stack = [(top, root)]
        while stack:
            folder, folder_real = stack.pop()
            try:
                with os.scandir(folder) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                self.skip(folder, f"cannot list the folder: {exc.strerror or exc}")
                continue
            subfolders = []
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                path = Path(folder) / entry.name
                try:
                    link = entry.is_symlink()
                    st = entry.stat(follow_symlinks=True)
                except OSError as exc:
                    if Path(entry.name).suffix.lower() in self.known:
                        self.skip(path, "a broken symlink" if link else f"cannot read it: {exc.strerror or exc}")
                    continue
                real = os.path.realpath(path) if link else os.path.join(folder_real, entry.name)
                if stat.S_ISDIR(st.st_mode):
                    if real in visited or (link and _inside(real, root)):
                        continue  # a loop, or files reached through the folder itself
                    if link and not self.follow:
                        self.skip(path, "a symlink to a folder outside; --follow-symlinks follows it")
                        continue
                    visited.add(real)
                    subfolders.append((path, real))
                    continue
                if Path(entry.name).suffix.lower() not in self.known:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    self.skip(path, f"not a regular file ({file_kind(st.st_mode)})")
                    continue
                if link and not _inside(real, root) and not self.follow:
                    self.skip(path, "a symlink to a file outside the folder; --follow-symlinks follows it")
                    continue
                self.add(path, real)
            stack.extend(reversed(subfolders))  # depth first, in name order


def select_files(
    paths: Iterable[str], *, extensions: Iterable[str], follow_symlinks: bool = False
) -> FileSelection:
    """Files named, files under folders (recursive, hidden ones skipped, known extensions
    only) and glob matches, each once (by resolved path), in a stable order, with what was
    skipped and why (see the module docstring). A path that matches nothing is an error
    naming it."""
    selector = _Selector(extensions, follow_symlinks)
    for raw in paths:
        selector.named(raw)
    return selector.out


def expand_paths(paths: Iterable[str], *, extensions: Iterable[str], follow_symlinks: bool = False) -> list[Path]:
    """The files of ``select_files`` (what it skipped is dropped)."""
    return select_files(paths, extensions=extensions, follow_symlinks=follow_symlinks).files


def read_regular_file(path: str | os.PathLike[str], *, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``.

    The open never blocks (a FIFO would wait for a writer forever) and the checks are made on
    the file that was opened, so a path swapped for a FIFO or a device after it was listed is
    refused too; at most ``max_bytes + 1`` bytes are read, so a file that grows while read
    cannot exhaust memory. ``InputError`` names the path and what is wrong."""
    name = os.fsdecode(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{name} is not a regular file ({file_kind(st.st_mode)}); only regular files are read")
        if st.st_size > max_bytes:
            raise InputError(f"{name} is {st.st_size} bytes, over the limit of {max_bytes} bytes")
        pieces: list[bytes] = []
        total = 0
        while True:
            piece = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not piece:
                break
            pieces.append(piece)
            total += len(piece)
            if total > max_bytes:
                raise InputError(f"{name} grew over the limit of {max_bytes} bytes while it was read")
        return b"".join(pieces)
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
