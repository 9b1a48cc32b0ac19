"""A namespace switched to another embedding model without downtime, as a user runs it: the
bench's QA paragraphs (one file each) ingested with WordLlama and their entity graph built,
then ``kgrag namespace reembed NS --embedder hashing`` (another model of the same size: a
second slot) while a loop of ``kgrag search`` without ``--embedder`` runs against the
namespace the whole time. Reports the re-embed's wall time, what it embedded and removed, and
the searches: how many, how many failed, how many found nothing.

``--target minilm`` (all-MiniLM-L6-v2 in numpy, providers/minilm.py) first measures how fast
that embedder goes on its own: chunks of 128 word pieces cut from the same paragraphs, embedded
in this process on one BLAS thread (as the embedder runs), wall and CPU seconds and the load
beside them. ``--throughput-only`` stops there. A run to another target than ``hashing`` is
recorded as ``reembed-TARGET``, beside the hashing run.

    python -m bench reembed [--sizes N] [--target hashing|minilm|wordllama] [--throughput-only]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .cli_ingest import EMBEDDER, KGRAG, kgrag, make_folder, paragraphs
from .common import bench_server, print_header, print_table, result_name, write_results

__all__ = ["add_arguments", "run"]

QUERIES = ("Which city is the capital?", "Who directed the film?", "When was the band formed?")


#: chunks embedded per throughput measurement, and their length in word pieces with [CLS] and [SEP]
THROUGHPUT_CHUNKS = 256
THROUGHPUT_TOKENS = 128


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", default="hashing", help="the model the namespace is re-embedded with")
    p.add_argument("--throughput-only", action="store_true", help="--target minilm: measure the embedder alone, no re-embed")


def _chunks_of_tokens(texts: Sequence[str], tokenizer: Any, count: int, tokens: int) -> list[str]:
    """``count`` pieces of the texts, run together, each ``tokens`` word pieces long with
    [CLS] and [SEP] (give or take one where a decoded piece splits a word again)."""
    ids: list[int] = []
    for text in texts:
        ids += tokenizer.encode(text, add_special_tokens=False).ids
        if len(ids) >= count * (tokens - 2):
            break
    step = tokens - 2
    return [tokenizer.decode(ids[i : i + step]) for i in range(0, count * step, step)]


def _throughput(corpus: list[Any]) -> dict[str, Any]:
    """MiniLMEmbedder alone on chunks of 128 word pieces, batches of 1,024 / 2,048 (its default:
    16 chunks) / 4,096 word pieces."""
    from tokenizers import Tokenizer

    from kgrag_neo4j.providers.minilm import MiniLMEmbedder

    loaded = time.perf_counter()
    embedder = MiniLMEmbedder().load()
    load_seconds = time.perf_counter() - loaded
    counter = Tokenizer.from_file(str(embedder.model_dir / "tokenizer.json"))
    counter.no_truncation()
    counter.no_padding()
    chunks = _chunks_of_tokens([p.text for p in corpus], counter, THROUGHPUT_CHUNKS, THROUGHPUT_TOKENS)
    lengths = [len(e.ids) for e in counter.encode_batch(chunks)]
    embedder.embed(chunks[:8])  # first products warm the BLAS buffers
    rows = []
    for batch in (1024, 2048, 4096):
        timed = MiniLMEmbedder(batch_tokens=batch)
        load = os.getloadavg()[0]
        wall, cpu = time.perf_counter(), time.process_time()
        timed.embed(chunks)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        rows.append(
            {
                "batch_tokens": batch,
                "chunks": len(chunks),
                "wall_seconds": round(wall, 2),
                "cpu_seconds": round(cpu, 2),
                "chunks_per_second": round(len(chunks) / wall, 1),
                "chunks_per_cpu_second": round(len(chunks) / cpu, 1),
                "load_1min_before": round(load, 1),
            }
        )
    print_table(
        f"MiniLMEmbedder (numpy, one BLAS thread): {len(chunks)} chunks of {THROUGHPUT_TOKENS} word pieces",
        ["batch tokens", "wall s", "CPU s", "chunks/s", "chunks/CPU s", "load before"],
        [
            [
                r["batch_tokens"],
                r["wall_seconds"],
                r["cpu_seconds"],
                r["chunks_per_second"],
                r["chunks_per_cpu_second"],
                r["load_1min_before"],
            ]
            for r in rows
        ],
    )
    return {"load_seconds": round(load_seconds, 2), "tokens_per_chunk": {"min": min(lengths), "max": max(lengths)}, "runs": rows}


def _search_loop(srv: Any, namespace: str, stop: threading.Event, tally: dict[str, int]) -> None:
    env = {
        **os.environ,
        "NEO4J_URI": srv.settings.uri,
        "NEO4J_USERNAME": srv.settings.user or "neo4j",
        "NEO4J_PASSWORD": srv.settings.password or "",
    }
    env.pop("KGRAG_EMBEDDER", None)  # the namespace's recorded model, as a user without --embedder
    env.pop("NEO4J_DATABASE", None)
    i = 0
    while not stop.is_set():
        done = subprocess.run(
            [*KGRAG, "search", QUERIES[i % len(QUERIES)], "--namespace", namespace, "--json"],
            env=env,
            capture_output=True,
            text=True,
        )
        i += 1
        tally["searches"] += 1
        if done.returncode != 0:
            tally["failed"] += 1
        elif '"results": []' in done.stdout:
            tally["empty"] += 1


def _corpus() -> list[Any]:
    """The dev paragraphs of the QA sets, then the train files' (MuSiQue, HotpotQA) not among
    them: 9,271 files, one chunk each but a few."""
    from .datasets import load

    out, seen = [], set()
    for p in [*paragraphs(), *load("musique", split="train").paragraphs, *load("hotpotqa", split="train").paragraphs]:
        if p.key not in seen:
            seen.add(p.key)
            out.append(p)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    corpus = _corpus()
    size = (args.sizes or [len(corpus)])[0]
    from kgrag_neo4j.neo4j_release import NEO4J_VERSION

    head = print_header("reembed", neo4j_version=NEO4J_VERSION, embedder=f"{EMBEDDER} -> {args.target}", sizes=[size])
    name = result_name("reembed" if args.target == "hashing" else f"reembed-{args.target}", args)
    throughput = _throughput(corpus) if args.target == "minilm" else None
    if getattr(args, "throughput_only", False):
        if throughput is None:
            raise SystemExit("--throughput-only measures --target minilm")
        results = {**head, "sizes": [], "throughput": throughput}
        write_results(f"{name}-throughput", results, getattr(args, "json", None))
        return results
    ns = "reembed"
    with bench_server() as srv, tempfile.TemporaryDirectory() as tmp:
        folder = make_folder(Path(tmp) / "files", corpus[:size])
        ingest = kgrag(srv, "ingest", str(folder), "--namespace", ns, "--json", "--no-entities")
        build = kgrag(srv, "entities", "build", "--namespace", ns, "--json")
        tally = {"searches": 0, "failed": 0, "empty": 0}
        stop = threading.Event()
        loop = threading.Thread(target=_search_loop, args=(srv, ns, stop, tally))
        loop.start()
        time.sleep(3)
        try:
            reembed = kgrag(srv, "namespace", "reembed", ns, "--embedder", args.target, "--json")
        finally:
            time.sleep(3)
            stop.set()
            loop.join()
    if isinstance(ingest["output"], dict):  # its summary, not a line per file
        ingest["output"] = {k: v for k, v in ingest["output"].items() if k != "files"}
    out = reembed["output"] or {}
    results = {
        **head,
        "files": size,
        "ingest": ingest,
        "build": build,
        "reembed": reembed,
        "searches": tally,
        **({"throughput": throughput} if throughput else {}),
    }
    print_table(
        "kgrag namespace reembed while kgrag search runs",
        [
            "files",
            "chunks",
            "entities",
            "vectors removed",
            "ingest s",
            "entities build s",
            "reembed s",
            "searches",
            "failed",
            "empty",
        ],
        [
            [
                size,
                out.get("chunks"),
                out.get("entities"),
                out.get("removed"),
                ingest["wall_seconds"],
                build["wall_seconds"],
                reembed["wall_seconds"],
                tally["searches"],
                tally["failed"],
                tally["empty"],
            ]
        ],
    )
    write_results(name, results, getattr(args, "json", None))
    return results
