"""The entity graph at scale, as a user runs it: real text (``bench/realtext.py``: the Python
manual, the manual pages, then the Linux kernel and PostgreSQL manuals) ingested into a fresh
local server on its default settings (heap 1g, page cache 256m unless ``--heap`` /
``--pagecache`` say otherwise), then:

- ``kgrag ingest FOLDER --no-entities --chunk-tokens 128 --chunk-overlap 16`` (the corpus's
  own chunks, so the sizes are chunks stored): chunks per second;
- ``kgrag entities build``: time, peak memory of the command, and the server's peak heap (JMX,
  sampled every half second) and resident set;
- the same build on the unchanged namespace;
- ``kgrag ingest`` of 100 more documents (the entity graph maintained in the same run): spread
  over the pages that follow the corpus, then the next 100 pages in a row (one manual's);
- ``kgrag docs delete`` of 100 documents spread over the corpus (the graph kept current in the
  same run);
- ``kgrag ingest`` of one large document (``LARGE_DOCUMENT_PAGES`` pages of the corpus joined:
  written in several transactions, the entity graph maintained), then ``kgrag docs delete``
  of it (bounded transactions);
- ``kgrag communities build`` (and ``kgrag communities update`` after the additions, when
  this checkout has it);
- p50 of vector, graph and PPR retrieval (the library, warm, ``top_k`` 10) over the corpus's
  queries;
- ``kgrag namespace delete`` of the whole namespace.

Every command runs as a user would run it (its own process); peak memory is its maximum
resident set (``VmHWM``, see ``common.wait_measured``). Retrieval at equal recall beside the peers is ``python -m bench
latency`` on the same corpus.

    python -m bench scale [--sizes 100000 1000000] [--heap 1g] [--pagecache 256m]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import BenchServer, bench_server, print_header, print_table, result_name, stats_ms, wait_measured, write_results

__all__ = ["add_arguments", "run"]

SIZES = [100_000, 1_000_000]
QUICK_SIZES = [5_000]
EXTRA_DOCUMENTS = 100
#: pages of the corpus joined into the large document (about 20,000 chunks of 128 tokens at
#: a million; a document of more than 5,000 chunks is written and deleted in several
#: transactions)
LARGE_DOCUMENT_PAGES = 1_500
EMBEDDER = "wordllama"
NAMESPACE = "scale"
KGRAG = [sys.executable, "-m", "kgrag_neo4j"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--heap", default="1g", help="server heap (default: the local server's default, 1g)")
    p.add_argument("--pagecache", default="256m", help="server page cache (default: the local server's default, 256m)")
    p.add_argument("--queries", type=int, default=200, help="retrieval queries timed per mode")
    p.add_argument("--skip-communities", action="store_true", help="leave out the community steps")


class ServerWatch:
    """The server's peak heap use while a command runs (JMX every half second) and its
    resident-set high-water mark."""

    def __init__(self, srv: BenchServer):
        self.srv = srv
        self.peak_heap = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _heap_used(self) -> int:
        with self.srv.driver.session() as s:
            row = s.run(
                "CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes "
                "RETURN attributes.HeapMemoryUsage.value.properties.used AS used"
            ).single()
        return int(row["used"]) if row and row["used"] is not None else 0

    def _loop(self) -> None:
        while not self._stop.wait(0.5):
            try:
                self.peak_heap = max(self.peak_heap, self._heap_used())
            except Exception:  # noqa: BLE001 - a sample lost to a busy server is only a sample
                pass

    def __enter__(self) -> ServerWatch:
        self.peak_heap = 0
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()

    def rss_peak_mb(self) -> float | None:
        if not self.srv.pid:
            return None
        for line in Path(f"/proc/{self.srv.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
        return None


def _kgrag(srv: BenchServer, *args: str, watch: ServerWatch | None = None) -> dict[str, Any]:
    env = {
        **os.environ,
        "NEO4J_URI": srv.settings.uri,
        "NEO4J_USERNAME": srv.settings.user or "neo4j",
        "NEO4J_PASSWORD": srv.settings.password or "",
        "KGRAG_EMBEDDER": EMBEDDER,
    }
    env.pop("NEO4J_DATABASE", None)
    print(f"  kgrag {' '.join(a if len(a) < 60 else a[:57] + '...' for a in args[:8])}", flush=True)
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        if watch is not None:
            watch.__enter__()
        try:
            proc = subprocess.Popen([*KGRAG, *args], env=env, stdout=out, stderr=err)
            code, peak_mb = wait_measured(proc)
        finally:
            if watch is not None:
                watch.__exit__()
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if code != 0:
        raise RuntimeError(f"kgrag {' '.join(args[:6])} failed ({code}): {stderr.strip()[-2000:]}")
    try:
        output = json.loads(stdout)
    except ValueError:
        output = None
    if isinstance(output, dict):
        # a line per file (82,000 at a million chunks) is no figure: the summary is kept
        output.pop("files", None)
    row: dict[str, Any] = {"wall_seconds": round(wall, 2), "peak_mb": peak_mb, "output": output}
    if watch is not None:
        row["server_heap_peak_mb"] = round(watch.peak_heap / 2**20, 1)
        row["server_rss_peak_mb"] = watch.rss_peak_mb()
    print(
        f"    {row['wall_seconds']} s, client peak {row['peak_mb']} MB"
        + (f", server heap peak {row['server_heap_peak_mb']} MB" if watch else ""),
        flush=True,
    )
    return row


def _store_size_mb(srv: BenchServer) -> float | None:
    """The database's files on disk (the server runs in its home directory)."""
    if not srv.pid:
        return None
    data = Path(f"/proc/{srv.pid}/cwd/data/databases")
    total = sum(p.stat().st_size for p in data.rglob("*") if p.is_file())
    return round(total / 2**20, 1)


def _retrieval_p50(srv: BenchServer, queries: list[str]) -> dict[str, Any]:
    from kgrag_neo4j.providers.select import select_embedder
    from kgrag_neo4j.retrieval.modes import build_retriever

    store = srv.store(NAMESPACE)
    embedder = select_embedder(EMBEDDER)
    out: dict[str, Any] = {}
    for mode in ("vector", "graph", "ppr"):
        retriever = build_retriever(mode, store, embedder)
        for q in queries[:20]:  # warm the page cache and the JIT before timing
            retriever.retrieve(q, top_k=10)
        times = []
        for q in queries:
            t = time.perf_counter()
            retriever.retrieve(q, top_k=10)
            times.append(time.perf_counter() - t)
        out[mode] = stats_ms(times)
    return out


def _has_command(*args: str) -> bool:
    return subprocess.run([*KGRAG, *args, "--help"], capture_output=True).returncode == 0


def _one_size(size: int, args: argparse.Namespace, root: Path, checkpoint: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """One size's steps; ``checkpoint`` gets the figures so far after each step, so a run of
    an hour that fails late (or is stopped) keeps what it measured."""
    from .realtext import CHUNK_OVERLAP, CHUNK_TOKENS, corpus_files, load_realtext

    corpus = load_realtext(size)
    extra = load_realtext(corpus.n + 600 * EXTRA_DOCUMENTS)
    # the pages the corpus does not hold (a larger corpus can reorder the manual pages: packages
    # installed to reach it add theirs)
    held = set(corpus.files)
    after = [f for f in extra.files if f not in held]
    # added: documents spread over the pages that follow the corpus, as the deletes are spread
    # over it; the next 100 pages in a row are added too (one manual's pages: at a million
    # chunks, GHC's library reference, whose pages are long lists of names)
    files = after[:: max(1, len(after) // EXTRA_DOCUMENTS)][:EXTRA_DOCUMENTS]
    following = [f for f in after[:EXTRA_DOCUMENTS] if f not in set(files)]
    # deleted: documents spread over the corpus, as a user's deletes would be
    step = max(1, len(corpus.files) // EXTRA_DOCUMENTS)
    victims_at = list(range(0, len(corpus.files), step))[:EXTRA_DOCUMENTS]
    folder = corpus_files(corpus, root / f"corpus{size}")
    large = root / f"large{size}" / "large-document.txt"
    if not large.exists():
        large.parent.mkdir(parents=True, exist_ok=True)
        pages = corpus.files[: min(LARGE_DOCUMENT_PAGES, len(corpus.files) // 2)]
        large.write_text("\n\n".join((corpus.folder / name).read_text() for name in pages))
    more = root / f"more{size}"
    nextfolder = root / f"next{size}"
    for folder_, names in ((more, files), (nextfolder, following)):
        folder_.mkdir(parents=True, exist_ok=True)
        for name in names:
            target = folder_ / name
            if not target.exists():
                os.link(extra.folder / name, target)
    chunks_of = dict(zip(extra.files, extra.doc_chunks))
    added_chunks = sum(chunks_of[f] for f in files)
    out: dict[str, Any] = {
        "size": size,
        "chunks": corpus.n,
        "documents": len(corpus.files),
        "added_documents": len(files),
        "added_chunks": added_chunks,
        "next_documents": len(following),
        "next_chunks": sum(chunks_of[f] for f in following),
        "deleted_documents": len(victims_at),
        "deleted_chunks": sum(corpus.doc_chunks[i] for i in victims_at),
    }
    with bench_server(heap=args.heap, pagecache=args.pagecache) as srv:
        watch = ServerWatch(srv)
        out["server"] = {"heap": srv.heap, "pagecache": srv.pagecache, "version": srv.neo4j_version}
        ns = ["--namespace", NAMESPACE]
        chunking = ["--chunk-tokens", str(CHUNK_TOKENS), "--chunk-overlap", str(CHUNK_OVERLAP)]  # the corpus's chunks

        def run_step(key: str, *command: str) -> None:
            try:
                out[key] = _kgrag(srv, *command, watch=watch)
            except RuntimeError as exc:
                out[key] = {"error": str(exc)[-2000:]}
                out["failed"] = key
                checkpoint(out)
                raise
            checkpoint(out)

        try:
            run_step("ingest", "ingest", str(folder), *ns, *chunking, "--no-entities", "--json")
            out["ingest"]["chunks_per_second"] = round(corpus.n / out["ingest"]["wall_seconds"], 1)
            run_step("build", "entities", "build", *ns, "--json")
            out["store_mb"] = _store_size_mb(srv)
            run_step("build_unchanged", "entities", "build", *ns, "--json")
            if not args.skip_communities:
                run_step("communities_build", "communities", "build", *ns, "--json")
            run_step("add_100", "ingest", str(more), *ns, *chunking, "--json")
            if following:
                run_step("add_next_100", "ingest", str(nextfolder), *ns, *chunking, "--json")
            if not args.skip_communities and _has_command("communities", "update"):
                run_step("communities_update", "communities", "update", *ns, "--json")
            victims = [str(folder / corpus.files[i]) for i in victims_at]
            run_step("delete_100", "docs", "delete", *victims, *ns, "--json")
            run_step("add_large", "ingest", str(large), *ns, *chunking, "--json")
            run_step("delete_large", "docs", "delete", str(large), *ns, "--json")
            out["status"] = _kgrag(srv, "entities", "status", *ns, "--json")["output"]
            out["stored_chunks"] = out["status"]["chunks"]
            out["retrieval_p50_ms"] = _retrieval_p50(srv, corpus.query_texts[: args.queries])
            checkpoint(out)
            run_step("namespace_delete", "namespace", "delete", NAMESPACE, "--yes", "--json")
        except RuntimeError as exc:
            print(f"  stopped at {out.get('failed', 'a step')}: {str(exc)[:500]}", flush=True)
    return out


STEPS = [
    ("ingest", "ingest"),
    ("build", "entities build"),
    ("build_unchanged", "build again"),
    ("communities_build", "communities build"),
    ("add_100", "+100 documents"),
    ("add_next_100", "+ the next 100 pages"),
    ("communities_update", "communities update"),
    ("delete_100", "delete 100 documents"),
    ("add_large", "ingest one large document"),
    ("delete_large", "delete the large document"),
    ("namespace_delete", "namespace delete"),
]


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = args.sizes or (QUICK_SIZES if getattr(args, "quick", False) else SIZES)
    from kgrag_neo4j.neo4j_release import NEO4J_VERSION

    head = print_header(
        "scale",
        neo4j_version=NEO4J_VERSION,
        embedder=EMBEDDER,
        sizes=sizes,
        extra={"heap": args.heap, "pagecache": args.pagecache},
    )
    results: dict[str, Any] = {**head, "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            runs = list(results["runs"])

            def checkpoint(partial: dict[str, Any], runs: list[dict[str, Any]] = runs) -> None:
                results["runs"] = [*runs, partial]
                write_results(result_name("scale", args), results, getattr(args, "json", None))

            checkpoint(_one_size(size, args, Path(tmp), checkpoint))
    rows = []
    for r in results["runs"]:
        for key, label in STEPS:
            step = r.get(key)
            if step and "error" not in step:
                rows.append(
                    [
                        r["chunks"],
                        label,
                        step["wall_seconds"],
                        step["peak_mb"],
                        step.get("server_heap_peak_mb"),
                        step.get("server_rss_peak_mb"),
                    ]
                )
    print_table(
        "each command at each size (seconds; peak resident MB of the command; server heap and RSS peaks)",
        ["chunks", "command", "seconds", "client peak MB", "server heap peak MB", "server RSS MB"],
        rows,
    )
    rows = [
        [
            r["chunks"],
            r["ingest"]["chunks_per_second"],
            round(r["build"]["wall_seconds"] / r["ingest"]["wall_seconds"], 2),
            r.get("store_mb"),
            *(r["retrieval_p50_ms"][m]["p50"] for m in ("vector", "graph", "ppr")),
        ]
        for r in results["runs"]
        if "retrieval_p50_ms" in r
    ]
    print_table(
        "rates and retrieval (p50 ms, top 10, warm)",
        ["chunks", "ingest chunks/s", "build / ingest", "store MB", "vector p50", "graph p50", "ppr p50"],
        rows,
    )
    return results
