"""A namespace switched to another embedding model without downtime, as a user runs it: the
bench's QA paragraphs (one file each) ingested with WordLlama and their entity graph built,
then ``kgrag namespace reembed NS --embedder hashing`` (another model of the same size: a
second slot) while a loop of ``kgrag search`` without ``--embedder`` runs against the
namespace the whole time. Reports the re-embed's wall time, what it embedded and removed, and
the searches: how many, how many failed, how many found nothing.

    python -m bench reembed [--sizes N] [--target hashing]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .cli_ingest import EMBEDDER, KGRAG, kgrag, make_folder, paragraphs
from .common import bench_server, print_header, print_table, result_name, write_results

__all__ = ["add_arguments", "run"]

QUERIES = ("Which city is the capital?", "Who directed the film?", "When was the band formed?")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", default="hashing", help="the model the namespace is re-embedded with")


def _search_loop(srv: Any, namespace: str, stop: threading.Event, tally: dict[str, int]) -> None:
    env = {**os.environ, "NEO4J_URI": srv.settings.uri, "NEO4J_USERNAME": srv.settings.user or "neo4j",
           "NEO4J_PASSWORD": srv.settings.password or ""}
    env.pop("KGRAG_EMBEDDER", None)  # the namespace's recorded model, as a user without --embedder
    env.pop("NEO4J_DATABASE", None)
    i = 0
    while not stop.is_set():
        done = subprocess.run([*KGRAG, "search", QUERIES[i % len(QUERIES)], "--namespace", namespace, "--json"],
                              env=env, capture_output=True, text=True)
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
    results = {**head, "files": size, "ingest": ingest, "build": build, "reembed": reembed, "searches": tally}
    print_table("kgrag namespace reembed while kgrag search runs", ["files", "chunks", "entities", "vectors removed",
                "ingest s", "entities build s", "reembed s", "searches", "failed", "empty"],
                [[size, out.get("chunks"), out.get("entities"), out.get("removed"), ingest["wall_seconds"],
                  build["wall_seconds"], reembed["wall_seconds"], tally["searches"], tally["failed"], tally["empty"]]])
    write_results(result_name("reembed", args), results, getattr(args, "json", None))
    return results
