"""Which files an ``ingest`` of paths, folders and globs means, and reading them safely.

Only regular files are read. A FIFO would block the read forever and a device (``/dev/zero``)
never ends, so folders skip them, and ``read_regular_file`` checks the file it actually opened
(never blocking on the open) and its size. Inside a folder, a symlink is followed when its
target stays inside that folder; one that leaves it is followed only with
``follow_symlinks=True`` (the CLI's ``--follow-symlinks``). Whatever is skipped is reported,
with the reason, instead of being silently dropped or hanging the run. Folders are walked
with an explicit stack, so depth costs no recursion.

A glob's matches are held to the folder the pattern starts in (its part before the first
wildcard) as a folder's files are: a match reached through a symlink leading out of it is
skipped unless symlinks are followed. With ``roots`` (the MCP server's ``--allow-path``
folders) every file, however it was found, must resolve inside one of them.

What is listed is what is read: each file is listed as a ``ListedFile``, which carries the
identity (device, inode) of the file that was checked and the folders it must lie in, and
``read_regular_file`` refuses a file that is no longer that one (swapped for a symlink or
another file between the listing and the read), opening a file listed as no symlink without
following one, and checking where the opened file really is.
"""

from __future__ import annotations

import errno
import glob
import itertools
import os
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError

__all__ = [
    "FileSelection", "ListedFile", "SkippedPath", "expand_paths", "file_kind", "read_regular_file", "select_files",
]  # fmt: skip


class ListedFile(str):
    """A path as the file selection listed it, with what its read must find again.

    A ``str``, so it passes unchanged through every layer that takes paths (``os.fspath``
    returns it as it is) down to ``read_regular_file``. ``identity``: (st_dev, st_ino) of the
    file that was checked; ``nofollow``: the path was no symlink when listed, so it is opened
    without following one; ``folder``: the resolved folder it was found in and must still be
    in (None: anywhere); ``roots``: resolved folders one of which must hold it (empty: any)."""

    identity: tuple[int, int]
    nofollow: bool
    folder: str | None
    roots: tuple[str, ...]

    def __new__(
        cls, path: str, *, identity: tuple[int, int], nofollow: bool, folder: str | None, roots: tuple[str, ...]
    ) -> ListedFile:
        listed = super().__new__(cls, path)
        listed.identity, listed.nofollow, listed.folder, listed.roots = identity, nofollow, folder, roots
        return listed


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

    files: list[ListedFile] = field(default_factory=list)
    skipped: list[SkippedPath] = field(default_factory=list)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _inside(target: str, root: str) -> bool:
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def _inside_any(target: str, roots: Iterable[str]) -> bool:
    return any(_inside(target, r) for r in roots)


def _glob_base(pattern: str) -> str:
    """The folder a glob pattern starts in: its components before the first wildcard."""
    fixed = list(itertools.takewhile(lambda part: not glob.has_magic(part), Path(pattern).parts))
    return os.path.join(*fixed) if fixed else os.curdir


class _Selector:
    def __init__(self, extensions: Iterable[str], follow_symlinks: bool, roots: Iterable[str] = ()):
        self.known = {e.lower() for e in extensions}
        self.follow = follow_symlinks
        self.roots = tuple(os.path.realpath(r) for r in roots)
        self.out = FileSelection()
        self._seen: set[str] = set()

    def add(self, path: Path | str, real: str, st: os.stat_result, *, link: bool, folder: str | None) -> None:
        if real not in self._seen:  # one document per file, however it was reached
            self._seen.add(real)
            self.out.files.append(ListedFile(
                str(path), identity=(st.st_dev, st.st_ino), nofollow=not link, folder=folder, roots=self.roots,
            ))  # fmt: skip

    def skip(self, path: Path | str, reason: str, *, named: bool = False) -> None:
        self.out.skipped.append(SkippedPath(str(path), reason, named))

    def outside_roots(self, path: Path | str, real: str, *, named: bool = False) -> bool:
        if self.roots and not _inside_any(real, self.roots):
            self.skip(path, f"outside the folders that may be read ({', '.join(self.roots)})", named=named)
            return True
        return False

    def named(self, raw: str) -> None:
        if "\x00" in raw:
            raise InputError(f"the path {raw!r} holds a null byte")
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
        real = os.path.realpath(p)
        if self.outside_roots(p, real, named=True):
            return
        if stat.S_ISDIR(st.st_mode):
            self.walk(p)
        elif stat.S_ISREG(st.st_mode):
            self.add(p, real, st, link=os.path.islink(p), folder=None)
        else:
            self.skip(p, f"not a regular file ({file_kind(st.st_mode)})", named=True)

    def glob(self, raw: str) -> None:
        matches = sorted(glob.glob(raw, recursive=True))
        if not matches:
            raise InputError(f"no file matches {raw!r}")
        base = os.path.realpath(_glob_base(raw))
        for m in matches:
            try:
                st = os.stat(m)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                continue
            if not stat.S_ISREG(st.st_mode):
                self.skip(m, f"not a regular file ({file_kind(st.st_mode)})")
                continue
            real = os.path.realpath(m)
            if self.outside_roots(m, real):
                continue
            # ``ROOT/*``, ``ROOT/**/*.txt``: a symlink (to the file, or to a folder on its way)
            # must not carry the pattern out of ROOT, as it would not carry a walk of ROOT
            if not _inside(real, base):
                if not self.follow:
                    self.skip(m, "a symlink leading out of the folder; --follow-symlinks follows it")
                    continue
                self.add(m, real, st, link=True, folder=None)
                continue
            self.add(m, real, st, link=os.path.islink(m), folder=base)

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
                    # not following what was no symlink when listed: a swap since gives a
                    # link here, refused below, never its target
                    st = entry.stat(follow_symlinks=link)
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
                    if link and self.outside_roots(path, real):
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
                if self.outside_roots(path, real):
                    continue
                self.add(path, real, st, link=link, folder=root if _inside(real, root) else None)
            stack.extend(reversed(subfolders))  # depth first, in name order


def select_files(
    paths: Iterable[str], *, extensions: Iterable[str], follow_symlinks: bool = False, roots: Iterable[str] = ()
) -> FileSelection:
    """Files named, files under folders (recursive, hidden ones skipped, known extensions
    only) and glob matches, each once (by resolved path), in a stable order, with what was
    skipped and why (see the module docstring). A path that matches nothing is an error
    naming it. ``roots``: when given, only files that resolve inside one of these folders."""
    selector = _Selector(extensions, follow_symlinks, roots)
    for raw in paths:
        selector.named(raw)
    return selector.out


def expand_paths(paths: Iterable[str], *, extensions: Iterable[str], follow_symlinks: bool = False) -> list[Path]:
    """The files of ``select_files`` (what it skipped is dropped)."""
    return [Path(f) for f in select_files(paths, extensions=extensions, follow_symlinks=follow_symlinks).files]


def _opened_path(fd: int) -> str | None:
    """Where the file open as ``fd`` really is (None where the system cannot say)."""
    try:
        if sys.platform.startswith("linux"):
            return os.readlink(f"/proc/self/fd/{fd}")
        if sys.platform == "darwin":
            import fcntl

            return os.fsdecode(fcntl.fcntl(fd, getattr(fcntl, "F_GETPATH", 50), b"\0" * 1024).rstrip(b"\0"))
    except OSError:
        return None
    return None


def _check_listed(name: str, listed: ListedFile, fd: int, st: os.stat_result) -> None:
    """Refuse an opened file that is not the one the selection listed and checked."""
    if (st.st_dev, st.st_ino) != listed.identity:
        raise InputError(f"{name} changed after it was listed (another file is there now); not read: run again")
    where = _opened_path(fd)
    if where is None:
        return  # the identity above is all this system lets us check
    if listed.folder is not None and not _inside(where, listed.folder):
        raise InputError(f"{name} now leads out of {listed.folder} (a folder on its way was swapped); not read")
    if listed.roots and not _inside_any(where, listed.roots):
        raise InputError(f"{name} now leads outside the folders that may be read; not read")


def read_regular_file(path: str | os.PathLike[str], *, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``.

    The open never blocks (a FIFO would wait for a writer forever) and the checks are made on
    the file that was opened, so a path swapped for a FIFO or a device after it was listed is
    refused too; at most ``max_bytes + 1`` bytes are read, so a file that grows while read
    cannot exhaust memory. A ``ListedFile`` must still be the file the selection checked
    (``_check_listed``): one swapped for a symlink or another file since is refused.
    ``InputError`` names the path and what is wrong."""
    name = os.fsdecode(path)
    listed = path if isinstance(path, ListedFile) else None
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if listed is not None and listed.nofollow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if listed is not None and listed.nofollow and exc.errno == errno.ELOOP:
            raise InputError(f"{name} was replaced by a symlink after it was listed; not read") from None
        raise InputError(f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{name} is not a regular file ({file_kind(st.st_mode)}); only regular files are read")
        if listed is not None:
            _check_listed(name, listed, fd, st)
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
