"""One very large document: ``kgrag ingest big.txt`` of a 49 MB text on a server with the
default heap of ``kgrag server start`` (1 GB), while a reader counts what the namespace shows.

The text is the real-text corpus (bench/realtext.py) pages joined until 49 MB. A document
that large does not fit one transaction on that heap (it failed with
``MemoryPoolOutOfMemoryError``); kgrag now writes it in several transactions into a staging
namespace and publishes it in its last one. The reader (another connection, polling the
namespace's document and chunk counts every 50 ms) must only ever see nothing or the whole
document.

    python -m bench large_document [--megabytes 49] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .cli_ingest import kgrag
from .common import bench_server, clear_database, print_header, print_table, result_name, write_results
from .realtext import load_realtext

__all__ = ["add_arguments", "run"]

COUNT = (
    "OPTIONAL MATCH (d:Document {namespace: $ns}) WITH count(d) AS docs "
    "OPTIONAL MATCH (c:Chunk {namespace: $ns}) RETURN docs, count(c) AS chunks"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--megabytes", type=float, default=49.0, help="size of the text (default 49)")
    try:
        p.add_argument("--baseline", metavar="DIR", help="also run the command with the kgrag_neo4j of this checkout")
    except argparse.ArgumentError:
        pass


def make_text(dest: Path, megabytes: float) -> Path:
    corpus = load_realtext(10_000)
    target = int(megabytes * 1_000_000)
    parts, size, k = [], 0, 0
    names = sorted(p.name for p in corpus.folder.iterdir())
    while size < target:
        text = (corpus.folder / names[k % len(names)]).read_text(encoding="utf-8")
        parts.append(text)
        size += len(text.encode("utf-8")) + 2
        k += 1
    dest.write_text("\n\n".join(parts)[:target], encoding="utf-8")
    return dest


def run(args: argparse.Namespace) -> dict[str, Any]:
    systems = {"this checkout": None}
    if getattr(args, "baseline", None):
        systems[f"baseline ({args.baseline})"] = str(Path(args.baseline).resolve())
    head = print_header(
        "large_document",
        neo4j_version="(fresh server, heap 1g: kgrag server start's default)",
        embedder="wordllama",
        sizes=[args.megabytes],
        extra={"reader": "polls document and chunk counts every 50 ms"},
    )
    results: dict[str, Any] = {**head, "systems": {}}
    root = Path(tempfile.mkdtemp(prefix="kgrag-bench-large-"))
    try:
        big = make_text(root / "big.txt", args.megabytes)
        mb = big.stat().st_size / 1e6
        print(f"  text: {mb:.1f} MB", flush=True)
        with bench_server(heap="1g", pagecache="256m") as srv:
            results["neo4j"] = srv.neo4j_version
            kgrag(srv, "init", "--embedder", "wordllama")
            for system, checkout in systems.items():
                clear_database(srv.driver)
                seen: set[tuple[int, int]] = set()
                stop = threading.Event()

                def watch() -> None:
                    with srv.driver.session(database=srv.settings.database) as s:
                        while not stop.is_set():
                            r = s.run(COUNT, ns="large").single()
                            seen.add((r["docs"], r["chunks"]))
                            time.sleep(0.05)

                reader = threading.Thread(target=watch, name="large-document-reader")
                reader.start()
                try:
                    r = kgrag(srv, "ingest", str(big), "--namespace", "large", "--json", checkout=checkout)
                    error = None
                except RuntimeError as exc:
                    r, error = (
                        {"wall_seconds": None, "server_cpu_seconds": None, "output": None},
                        str(exc).splitlines()[-1][-300:],
                    )
                finally:
                    stop.set()
                    reader.join()
                with srv.driver.session(database=srv.settings.database) as s:
                    final = s.run(COUNT, ns="large").single()
                summary = (r.get("output") or {}).get("summary") or {}
                partial = sorted(x for x in seen if x not in ((0, 0), (final["docs"], final["chunks"])))
                results["systems"][system] = {
                    "megabytes": round(mb, 1),
                    "wall_seconds": r["wall_seconds"],
                    "server_cpu_seconds": r["server_cpu_seconds"],
                    "error": error,
                    "chunks": final["chunks"],
                    "documents": final["docs"],
                    "status": summary.get("new"),
                    "reader_saw": sorted(seen),
                    "partial_states_seen": partial,
                }
                print(
                    f"    {system}: {'failed: ' + error if error else 'ok'} in {r['wall_seconds']}s; "
                    f"{final['docs']} document, {final['chunks']:,} chunks; reader saw {len(seen)} states, partial: {partial or 'none'}",
                    flush=True,
                )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print_table(
        f"One {args.megabytes:g} MB document on a 1 GB heap",
        ["package", "wall s", "server CPU s", "chunks", "partial states a reader saw", "error"],
        [
            [k, v["wall_seconds"], v["server_cpu_seconds"], v["chunks"], len(v["partial_states_seen"]), v["error"] or ""]
            for k, v in results["systems"].items()
        ],
    )
    write_results(result_name("large_document", args), results, args.json)
    return results
