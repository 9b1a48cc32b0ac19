"""A real-text corpus for the speed benchmarks: the documentation a Debian system installs.

Random vectors are the worst case for an HNSW index (every point nearly equidistant) and say
little about text; this corpus is what a user would ingest. It is built once and cached:

- the Python 3.11 manual (``python3.11-doc``: HTML, turned into text by kgrag's own HTML
  extractor) and the manual pages of sections 1-8 (``manpages``, ``manpages-dev`` and those
  of every installed package: roff, turned into text below), then, for a corpus larger than
  those hold (about 56k chunks), the Linux kernel's manual (``linux-doc``, its
  reStructuredText) and the PostgreSQL manual (``postgresql-doc-15``), then, toward a million
  chunks, the HTML manuals of ``MOST_PACKAGES`` (Django, SciPy, pandas, Boost, Erlang, the JDK,
  Rust, GHC, libstdc++, Qt, ...), one ``.txt`` file per page; missing packages are installed
  with ``apt-get`` (as root) when the corpus first reaches them;
- chunked by kgrag's ``RecursiveChunker`` at ``CHUNK_TOKENS`` tokens (``CHUNK_OVERLAP``
  overlap), pages taken in a fixed order until the corpus holds the chunks asked for;
- embedded with WordLlama (256 dimensions), float32 on disk;
- queries: the one-line descriptions of manual pages (``ls - list directory contents`` asks
  "list directory contents") and the titles of sections of the Python manual, a fixed sample.

``load_realtext(n)`` returns the corpus of at least ``n`` chunks (the first documents, whole):
texts, vectors, document boundaries and the query texts and vectors. The cache lives in
``~/.cache/kgrag-neo4j/bench/realtext-v1`` (``KGRAG_BENCH_CACHE`` overrides the parent).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["CHUNK_OVERLAP", "CHUNK_TOKENS", "RealText", "chunker", "corpus_files", "ensure_packages", "load_realtext"]

VERSION = "v1"
CHUNK_TOKENS = 128
CHUNK_OVERLAP = 16
PACKAGES = ("python3.11-doc", "manpages", "manpages-dev")
#: installed only for a corpus larger than the packages above hold (about 56k chunks): the
#: Linux kernel's manual (its reStructuredText sources) and the PostgreSQL manual (HTML)
MORE_PACKAGES = ("linux-doc", "postgresql-doc-15")
#: for a corpus larger still (about 105k chunks and up, toward a million): more manuals in HTML,
#: each package's pages in turn, each package installed when the corpus first reaches it
MOST_PACKAGES = (
    "python-django-doc",
    "python-scipy-doc",
    "python-pandas-doc",
    "libboost1.74-doc",
    "erlang-doc",
    "openjdk-17-doc",
    "rust-doc",
    "ghc-doc",
    "libstdc++-12-doc",
    "qtbase5-doc-html",
    "sqlite3-doc",
    "apache2-doc",
    "git-doc",
    "libglib2.0-doc",
    "libgtk-3-doc",
    "gimp-help-en",
    "octave-doc",
    "nodejs-doc",
)
#: generated indexes and search pages: lists of names, not text
SKIP_HTML = {
    "search.html",
    "genindex.html",
    "py-modindex.html",
    "index-all.html",
    "allclasses-index.html",
    "allpackages-index.html",
    "overview-tree.html",
    "all.html",
}
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")
LINUX_DOCS = Path("/usr/share/doc/linux-doc-6.1/html/_sources")
POSTGRES_DOCS = Path("/usr/share/doc/postgresql-doc-15/html")
MAN_ROOT = Path("/usr/share/man")
MAN_SECTIONS = ("man1", "man2", "man3", "man4", "man5", "man7", "man8")
QUERIES = 400
#: chunks embedded at a time while the corpus is built
EMBED_BATCH = 50_000
SEED = 20241123


def cache_dir() -> Path:
    root = Path(os.environ.get("KGRAG_BENCH_CACHE") or Path.home() / ".cache" / "kgrag-neo4j" / "bench")
    return root / f"realtext-{VERSION}"


def chunker():
    """The chunker of the corpus (and of the timed ingest from text)."""
    from kgrag_neo4j.ingestion.chunkers import RecursiveChunker

    return RecursiveChunker(max_tokens=CHUNK_TOKENS, overlap_tokens=CHUNK_OVERLAP)


# --- the packages ---------------------------------------------------------------------------


def ensure_packages(packages: Sequence[str] = PACKAGES) -> None:
    """Install the Debian packages the corpus is made of when they are missing."""
    missing = [p for p in packages if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if not missing:
        return
    if shutil.which("apt-get") is None:
        raise SystemExit(f"the real-text corpus needs the Debian packages {missing}; this is not a Debian system")
    prefix = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
    if prefix is None:
        raise SystemExit(
            f"the real-text corpus needs the Debian packages {missing}: run `apt-get install {' '.join(missing)}` as root"
        )
    print(f"  installing {' '.join(missing)} with apt-get (once)", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [*prefix, "apt-get", "install", "-y", "-q", "--no-install-recommends", *missing]
    if subprocess.run(install, env=env, capture_output=True).returncode != 0:
        subprocess.run([*prefix, "apt-get", "update", "-q"], env=env, capture_output=True)
        done = subprocess.run(install, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"apt-get could not install {missing}: {done.stderr.strip()[-500:]}")


# --- roff to text -----------------------------------------------------------------------------

_ESCAPES = [
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""),  # font changes
    (re.compile(r"\\s[+-]?\d+"), ""),  # size changes
    (re.compile(r"\\\((em|en)"), "-"),
    (re.compile(r"\\\((lq|rq|dq)"), '"'),
    (re.compile(r"\\\((oq|cq|aq)"), "'"),
    (re.compile(r"\\\(bu"), "*"),
    (re.compile(r"\\\(..|\\\[[^\]]*\]"), ""),
    (re.compile(r"\\[-]"), "-"),
    (re.compile(r"\\[&|^%:,/0 ]"), ""),
    (re.compile(r"\\e"), "\\\\"),
    (re.compile(r"\\\*(\(..|\[[^\]]*\]|.)"), ""),  # strings
    (re.compile(r"\\n(\(..|\[[^\]]*\]|.)"), ""),  # registers
    (re.compile(r"\\c$"), ""),
    (re.compile(r"\\(.)"), r"\1"),
]
_TEXT_MACROS = {
    "B",
    "I",
    "BI",
    "IB",
    "BR",
    "RB",
    "IR",
    "RI",
    "SM",
    "SB",
    "Nm",
    "Nd",
    "Ar",
    "Fl",
    "Op",
    "Cm",
    "Pa",
    "Xr",
    "Dv",
    "Ev",
    "Va",
    "Fn",
    "Ft",
    "Em",
    "Sy",
    "Li",
    "Ql",
    "Dq",
    "Sq",
    "Pq",
}
_HEADINGS = {"SH", "SS", "Sh", "Ss"}
_BREAKS = {
    "PP",
    "LP",
    "P",
    "TP",
    "IP",
    "HP",
    "br",
    "sp",
    "Pp",
    "It",
    "Bl",
    "El",
    "Bd",
    "Ed",
    "nf",
    "fi",
    "RS",
    "RE",
    "EX",
    "EE",
    "TQ",
}


def roff_to_text(source: str) -> str:
    """Readable text of a manual page: macros dropped, headings and paragraph breaks kept,
    inline escapes resolved. Enough for embedding; not a typesetter."""
    out: list[str] = []
    for raw in source.splitlines():
        line = raw.rstrip()
        if line.startswith(('.\\"', "'\\\"", ".\\}", '\\"')) or line in (".", "'"):
            continue
        if line.startswith((".", "'")):
            parts = line[1:].strip().split(None, 1)
            if not parts:
                continue
            macro, rest = parts[0], (parts[1] if len(parts) > 1 else "")
            if macro in _HEADINGS:
                out.append("\n" + _inline(rest.strip('"')).upper() + "\n")
            elif macro in _TEXT_MACROS:
                out.append(_inline(" ".join(w.strip('"') for w in rest.split())))
            elif macro in _BREAKS:
                out.append("\n" + (_inline(rest.strip('"')) if macro in ("IP", "It") and rest else ""))
            elif macro == "TH":
                continue
            continue
        out.append(_inline(line))
    text = "\n".join(out)
    text = re.sub(r"[ \t]+", " ", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _inline(text: str) -> str:
    for pattern, repl in _ESCAPES:
        text = pattern.sub(repl, text)
    return text


def _man_name_line(text: str) -> str:
    """The description of a page's NAME section (``ls - list directory contents``)."""
    m = re.search(r"NAME\n+(.+?)\n", text)
    if not m:
        return ""
    line = m.group(1)
    return line.split(" - ", 1)[1].strip() if " - " in line else ""


# --- the pages ------------------------------------------------------------------------------


def _man_pages() -> Iterator[tuple[str, Path]]:
    for section in MAN_SECTIONS:
        folder = MAN_ROOT / section
        if not folder.is_dir():
            continue
        for p in sorted(folder.iterdir()):
            if p.is_symlink() or not p.is_file():
                continue
            yield f"man/{section}/{p.name.removesuffix('.gz')}", p


def _read_man(path: Path) -> str:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    source = data.decode("utf-8", errors="replace")
    if source.startswith(".so "):  # a page that only includes another one
        return ""
    return roff_to_text(source)


def _man_query(text: str) -> str:
    """The query a manual page gives: its description, if it has three words or more."""
    q = _man_name_line(text)
    return q if len(q.split()) >= 3 else ""


def _python_pages() -> Iterator[tuple[str, Path]]:
    for p in sorted(PYTHON_DOCS.rglob("*.html")):
        if p.name in ("genindex.html", "search.html", "py-modindex.html") or p.name.startswith("genindex-"):
            continue
        yield "python/" + str(p.relative_to(PYTHON_DOCS)).removesuffix(".html"), p


def _read_python(path: Path) -> str:
    from kgrag_neo4j.ingestion.extractors import ExtractorRegistry

    return ExtractorRegistry.default().extract(path.read_bytes(), content_type="text/html")


def _linux_pages() -> Iterator[tuple[str, Path]]:
    ensure_packages(MORE_PACKAGES)
    for p in sorted(LINUX_DOCS.rglob("*.rst.txt")):
        yield "linux/" + str(p.relative_to(LINUX_DOCS)).removesuffix(".rst.txt"), p


def _read_plain(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _postgres_pages() -> Iterator[tuple[str, Path]]:
    ensure_packages(MORE_PACKAGES)
    for p in sorted(POSTGRES_DOCS.glob("*.html")):
        if p.name in ("index.html", "bookindex.html"):
            continue
        yield "postgres/" + p.name.removesuffix(".html"), p


def _package_pages(package: str) -> Iterator[tuple[str, Path]]:
    """The HTML pages a Debian package installs, in path order (``dpkg -L``)."""
    ensure_packages((package,))
    listed = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True).stdout.splitlines()
    for line in sorted(listed):
        p = Path(line)
        if p.suffix in (".html", ".htm") and p.name not in SKIP_HTML and not p.is_symlink() and p.is_file():
            yield package + line, p


def _sources(target_reached: Callable[[], bool]) -> Iterator[tuple[str, Path, Callable[[Path], str]]]:
    """Pages in corpus order: the Python manual, the manual pages by section and name, then
    (only when those are not enough) the Linux kernel's and PostgreSQL's manuals, then the
    HTML manuals of ``MOST_PACKAGES``, one package after the other."""
    for name, path in _python_pages():
        yield name, path, _read_python
    for name, path in _man_pages():
        yield name, path, _read_man
    if target_reached():
        return
    for name, path in _linux_pages():
        yield name, path, _read_plain
    for name, path in _postgres_pages():
        yield name, path, _read_python
    for package in MOST_PACKAGES:
        if target_reached():
            return
        for name, path in _package_pages(package):
            yield name, path, _read_python


# --- the corpus -----------------------------------------------------------------------------


@dataclass
class RealText:
    """The corpus (or its first documents): chunk texts and vectors in document order."""

    folder: Path  # one .txt file per document (the input of an ingest from text)
    files: list[str]  # document files, in order
    doc_chunks: list[int]  # chunks per document
    texts: list[str]
    vectors: np.ndarray  # float32, unit length
    query_texts: list[str] = field(default_factory=list)
    query_vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 256), np.float32))

    @property
    def n(self) -> int:
        return len(self.texts)

    def document_of(self) -> list[int]:
        """The document index of each chunk."""
        return [d for d, k in enumerate(self.doc_chunks) for _ in range(k)]


def _build(target: int) -> None:
    """Extract every page once (cached as text files), chunk and embed them in order."""
    from kgrag_neo4j.providers import WordLlamaEmbedder

    root = cache_dir()
    pages = root / "pages"
    manifest_path = root / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    if manifest.get("chunks", 0) >= target:
        return
    ensure_packages()
    pages.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    split = chunker()
    files, doc_chunks, texts, queries = [], [], [], []
    # the Python manual first, then the manual pages by section and name
    for name, path, read in _sources(lambda: len(texts) >= target):
        # the queries describe manual pages, so a corpus that is full before them (10k chunks
        # are all Python manual) still reads every page for its description
        full = len(texts) >= target
        if full and read is not _read_man:
            continue
        try:
            text = read(path)
        except Exception:  # a page the extractors cannot read is not part of the corpus
            continue
        if read is _read_man and (q := _man_query(text)):
            queries.append(q)
        if full:
            continue
        pieces = [p.content for p in split.chunk(text)] if text.strip() else []
        pieces = [p for p in pieces if p.strip()]
        if not pieces:
            continue
        file_name = (
            hashlib.blake2b(name.encode(), digest_size=8).hexdigest()
            + "-"
            + re.sub(r"[^A-Za-z0-9._-]", "_", name.split("/")[-1])[:60]
            + ".txt"
        )
        (pages / file_name).write_text(text, encoding="utf-8")
        files.append(file_name)
        doc_chunks.append(len(pieces))
        texts += pieces
        if len(files) % 2000 == 0:
            print(f"    corpus: {len(files):,} pages, {len(texts):,} chunks ({time.perf_counter() - started:.0f}s)", flush=True)
    if len(queries) < QUERIES:
        raise SystemExit(
            f"the real-text corpus found {len(queries)} manual-page descriptions for queries, "
            f"{QUERIES} needed: are {', '.join(PACKAGES[1:])} installed?"
        )
    rng = np.random.default_rng(SEED)
    picked = sorted(rng.choice(len(queries), size=min(QUERIES, len(queries)), replace=False).tolist())
    queries = [queries[i] for i in picked]
    print(f"    corpus: {len(files):,} pages, {len(texts):,} chunks; embedding with WordLlama", flush=True)
    embedder = WordLlamaEmbedder()
    # a batch at a time into float32: a million chunks' vectors as Python floats outgrow 20 GB
    vectors = np.empty((len(texts), embedder.dimensions), dtype=np.float32)
    for start in range(0, len(texts), EMBED_BATCH):
        vectors[start : start + EMBED_BATCH] = np.asarray(embedder.embed(texts[start : start + EMBED_BATCH]), dtype=np.float32)
    query_vectors = np.asarray(embedder.embed(queries, input_type="query"), dtype=np.float32)
    np.save(root / "vectors.npy", vectors)
    np.save(root / "query_vectors.npy", query_vectors)
    with open(root / "chunks.jsonl", "w", encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    manifest = {
        "version": VERSION,
        "chunks": len(texts),
        "files": files,
        "doc_chunks": doc_chunks,
        "queries": queries,
        "chunker": repr(split),
        "embedder": embedder.name,
        "built_seconds": round(time.perf_counter() - started, 1),
        "sources": "python3.11-doc HTML, then manual pages of "
        + ", ".join(MAN_SECTIONS)
        + ", then linux-doc reStructuredText and postgresql-doc-15 HTML, then the HTML of "
        + ", ".join(MOST_PACKAGES)
        + " as needed",
    }
    manifest_path.write_text(json.dumps(manifest))
    print(f"    corpus built in {manifest['built_seconds']:.0f}s -> {root}", flush=True)


def load_realtext(n: int) -> RealText:
    """The first documents of the corpus holding at least ``n`` chunks (whole documents)."""
    _build(n)
    root = cache_dir()
    manifest = json.loads((root / "manifest.json").read_text())
    files, counts, total = [], [], 0
    for f, k in zip(manifest["files"], manifest["doc_chunks"]):
        if total >= n:
            break
        files.append(f)
        counts.append(k)
        total += k
    with open(root / "chunks.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line) for _, line in zip(range(total), fh)]
    vectors = np.load(root / "vectors.npy", mmap_mode="r")[:total].astype(np.float32)
    return RealText(
        root / "pages",
        files,
        counts,
        texts,
        vectors,
        list(manifest["queries"]),
        np.load(root / "query_vectors.npy").astype(np.float32),
    )


def corpus_files(corpus: RealText, dest: Path) -> Path:
    """A folder holding exactly the corpus's document files (hard links when possible)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in corpus.files:
        src, dst = corpus.folder / name, dest / name
        if not dst.exists():
            try:
                os.link(src, dst)
            except OSError:
                shutil.copyfile(src, dst)
    return dest


# --- the graph and the exact answers ----------------------------------------------------------

SIMILAR_K = 5
SIMILAR_THRESHOLD = 0.6


def exact_top_k(
    vectors: np.ndarray, queries: np.ndarray, k: int, *, exclude_self: bool = False, block: int = 512
) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force cosine top ``k`` (rows are unit length: dot = cosine) of every query:
    (indices, cosines), best first. ``exclude_self``: query i is row i of ``vectors``."""
    n = len(vectors)
    out_i = np.zeros((len(queries), k), dtype=np.int64)
    out_s = np.zeros((len(queries), k), dtype=np.float32)
    for start in range(0, len(queries), block):
        sims = queries[start : start + block] @ vectors.T
        if exclude_self:
            rows = np.arange(len(sims))
            sims[rows, start + rows] = -np.inf
        kk = min(k, n)
        top = np.argpartition(-sims, kk - 1, axis=1)[:, :kk]
        scores = np.take_along_axis(sims, top, axis=1)
        order = np.lexsort((top, -scores), axis=1)  # best first, then lower index
        out_i[start : start + block, :kk] = np.take_along_axis(top, order, axis=1)
        out_s[start : start + block, :kk] = np.take_along_axis(scores, order, axis=1)
    return out_i, out_s


def similar_pairs(corpus: RealText) -> list[tuple[int, int, float]]:
    """Each chunk's ``SIMILAR_K`` nearest other chunks with cosine >= ``SIMILAR_THRESHOLD``
    (what ``--similarity-edges`` makes), exact, cached per corpus size."""
    path = cache_dir() / f"similar-{corpus.n}-{SIMILAR_K}-{SIMILAR_THRESHOLD}.npz"
    if path.exists():
        data = np.load(path)
        idx, cos = data["idx"], data["cos"]
    else:
        started = time.perf_counter()
        idx, cos = exact_top_k(corpus.vectors, corpus.vectors, SIMILAR_K, exclude_self=True)
        np.savez(path, idx=idx, cos=cos)
        print(
            f"    exact {SIMILAR_K} nearest chunks of {corpus.n:,} in {time.perf_counter() - started:.0f}s (cached)", flush=True
        )
    return [(i, int(j), float(c)) for i in range(corpus.n) for j, c in zip(idx[i], cos[i]) if c >= SIMILAR_THRESHOLD]


def chunk_id(i: int) -> str:
    return f"rt{i:07d}"


def chunk_index(chunk: str) -> int:
    """The corpus row of a ``chunk_id``."""
    return int(chunk[2:])


def load_into(store, corpus: RealText, *, edges: bool = True, doc_batch: int = 200) -> dict[str, float]:
    """The corpus into ``store`` with ``store_documents`` (precomputed vectors), one document
    per page; with ``edges``, sequence edges inside documents and the exact similar_to edges.
    Returns counts and seconds."""
    from kgrag_neo4j.ids import content_hash
    from kgrag_neo4j.types import Chunk, ChunkEdge, Document, RelationType

    store.ensure_embedder("wordllama-l2_supercat-256", corpus.vectors.shape[1])
    sims = similar_pairs(corpus) if edges else []
    by_source: dict[int, list[tuple[int, float]]] = {}
    for i, j, c in sims:
        by_source.setdefault(i, []).append((j, c))
    started = time.perf_counter()
    items, pos, edge_count = [], 0, 0
    for d, (name, k) in enumerate(zip(corpus.files, corpus.doc_chunks)):
        doc_id = f"rtdoc-{d:06d}"
        chunks = [
            Chunk(
                id=chunk_id(pos + j),
                document_id=doc_id,
                content=corpus.texts[pos + j],
                chunk_index=j,
                embedding=corpus.vectors[pos + j].tolist(),
                token_count=len(corpus.texts[pos + j]) // 4,
            )
            for j in range(k)
        ]
        doc_edges: list[ChunkEdge] = []
        if edges:
            doc_edges += [
                ChunkEdge(chunk_id(pos + j), chunk_id(pos + j + 1), RelationType.SEQUENCE, 1.0, origin="sequence")
                for j in range(k - 1)
            ]
            # similar_to edges to chunks of earlier documents (or this one): their targets exist
            # when this document's transaction runs; the later ones come with their own document
            doc_edges += [
                ChunkEdge(chunk_id(pos + j), chunk_id(t), RelationType.SIMILAR_TO, min(1.0, c), origin="similarity")
                for j in range(k)
                for t, c in by_source.get(pos + j, ())
                if t < pos + k
            ]
        items.append(
            (Document(id=doc_id, source=name, title=name, content="", content_hash=content_hash(name)), chunks, doc_edges)
        )
        edge_count += len(doc_edges)
        pos += k
        if len(items) == doc_batch or d == len(corpus.files) - 1:
            store.store_documents(items)
            items.clear()
    # edges whose target came in a later document
    late = [
        ChunkEdge(chunk_id(i), chunk_id(t), RelationType.SIMILAR_TO, min(1.0, c), origin="similarity")
        for i, pairs in by_source.items()
        for t, c in pairs
        if t >= _doc_end(corpus, i)
    ]
    for start in range(0, len(late), 10_000):
        edge_count += store.store_edges(late[start : start + 10_000])
    return {
        "chunks": corpus.n,
        "documents": len(corpus.files),
        "edges": edge_count,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _doc_end(corpus: RealText, i: int) -> int:
    ends = getattr(corpus, "_ends", None)
    if ends is None:
        ends = np.cumsum(corpus.doc_chunks)
        corpus._ends = ends  # type: ignore[attr-defined]
    return int(ends[np.searchsorted(ends, i, side="right")])
