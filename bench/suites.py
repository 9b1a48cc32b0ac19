"""``quick`` and ``all``: the latency, seed recall, ingest, CLI ingest and quality benchmarks.

``quick`` uses each benchmark's small defaults (latency, seed recall and ingest on 10k chunks
of real text, the MuSiQue folder through ``kgrag ingest`` without the build commands,
quality on MuSiQue's first 100 questions) and writes ``bench/results/*-quick.json``; it never
needs the 100k-chunk corpus. ``all`` runs the full ones (100k chunks, the build commands at
three sizes), then regenerates docs/benchmarks.md. A benchmark that fails is reported and the
suite goes on with the next.
"""

from __future__ import annotations

import argparse
import copy
import time
import traceback
from typing import Any

from . import cli_ingest, ingest, latency, quality, report, seed_recall

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    latency.add_arguments(p)
    ingest.add_arguments(p)
    quality.add_arguments(p)
    seed_recall.add_arguments(p)
    cli_ingest.add_arguments(p)
    p.add_argument("--latency-sizes", type=int, nargs="+", help="latency corpus sizes")
    p.add_argument("--ingest-sizes", type=int, nargs="+", help="ingest corpus sizes")
    p.add_argument("--cli-sizes", type=int, nargs="+", help="build-command sizes of cli_ingest (files)")
    p.add_argument(
        "--only", nargs="+", choices=["latency", "seed_recall", "ingest", "cli_ingest", "quality"], help="run only these"
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    args.quick = args.name == "quick"
    started = time.perf_counter()
    out: dict[str, Any] = {}
    if args.quick:
        args.skip_builds = True  # the build commands at three sizes are for full runs
    plan = [
        ("latency", latency, args.latency_sizes),
        ("seed_recall", seed_recall, args.latency_sizes),
        ("ingest", ingest, args.ingest_sizes),
        ("cli_ingest", cli_ingest, args.cli_sizes),
        ("quality", quality, None),
    ]
    if args.neo4j_version and set(args.only or [name for name, _, _ in plan]) - {"latency", "ingest"}:
        raise SystemExit("--neo4j-version is honoured by the latency and ingest benchmarks only: add --only latency ingest")
    for name, module, sizes in plan:
        if args.only and name not in args.only:
            continue
        sub = copy.copy(args)
        sub.sizes = sizes or args.sizes
        sub.json = None
        t0 = time.perf_counter()
        try:
            module.run(sub)
            out[name] = {"ok": True}
        except Exception as exc:  # one failing benchmark must not hide the others' results
            traceback.print_exc()
            out[name] = {"ok": False, "error": str(exc)}
        out[name]["seconds"] = round(time.perf_counter() - t0, 1)
        print(f"\n  {name} took {out[name]['seconds']:.0f}s", flush=True)
    if not args.quick:
        report.run(args)
    print(
        f"\n  {args.name} suite: {time.perf_counter() - started:.0f}s in all; "
        + ", ".join(f"{k} {'ok' if v['ok'] else 'FAILED'} ({v['seconds']:.0f}s)" for k, v in out.items()),
        flush=True,
    )
    return out
