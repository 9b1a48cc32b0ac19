"""Triples per second into a real Neo4j: through the GraphBuffer (its 64 triples / 2 s
defaults and larger batches) and straight through ``add_triples``; new triples, then the
same triples again (the idempotent re-write path).

    python -m bench.triples_throughput [--triples 20000] [--entities 5000] [--json-out PATH]

Each mode writes into a namespace of its own on a fresh local server; the clock runs from the
first enqueue until ``stop()`` has written the last batch (or the direct call returns), and
the count in the store is checked afterwards.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from kgrag_neo4j.triples import GraphBuffer
from kgrag_neo4j.types.triples import DEFAULT_PREDICATES, Triple

from .common import bench_server, print_header, print_table, write_results

SEED = 20240603
DIMENSIONS = 256


def make_triples(n: int, entities: int, *, seed: int = SEED) -> list[Triple]:
    """``n`` distinct triples over ``entities`` names with prefixes like real tool and error names."""
    rng = random.Random(seed)
    prefixes = ("error", "tool", "fix", "session", "observation", "concept")
    names = [f"{prefixes[i % len(prefixes)]}:{i}" for i in range(entities)]
    predicates = sorted(DEFAULT_PREDICATES)
    seen: set[tuple[str, str, str]] = set()
    out: list[Triple] = []
    while len(out) < n:
        s, o = rng.sample(names, 2)
        t = Triple(s, rng.choice(predicates), o, {"session": f"s{rng.randrange(100)}"})
        if t.key() not in seen:
            seen.add(t.key())
            out.append(t)
    return out


def through_buffer(store, triples: list[Triple], *, batch_size: int, flush_interval: float = 2.0) -> float:
    buffer = GraphBuffer(store.add_triples, batch_size=batch_size, flush_interval=flush_interval, max_queue=len(triples))
    buffer.start()
    t0 = time.perf_counter()
    for start in range(0, len(triples), 16):  # producers enqueue small groups, as extraction does
        buffer.enqueue(triples[start : start + 16])
    buffer.stop()
    elapsed = time.perf_counter() - t0
    if buffer.stats.failed:
        raise RuntimeError(f"{buffer.stats.failed} triples failed to write")
    return elapsed


def direct(store, triples: list[Triple]) -> float:
    t0 = time.perf_counter()
    store.add_triples(triples)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=20_000)
    parser.add_argument("--entities", type=int, default=5_000)
    parser.add_argument("--modes", help="comma-separated mode numbers to run (default: all)")
    parser.add_argument("--json-out")
    args = parser.parse_args(argv)
    triples = make_triples(args.triples, args.entities)

    modes: list[tuple[str, Callable]] = [
        ("buffer, batch 64 (the buffer's defaults)", lambda s, t: through_buffer(s, t, batch_size=64)),
        ("buffer, batch 500", lambda s, t: through_buffer(s, t, batch_size=500)),
        ("buffer, batch 2000", lambda s, t: through_buffer(s, t, batch_size=2000)),
        ("add_triples, one call", direct),
    ]
    if args.modes:
        modes = [modes[int(i)] for i in args.modes.split(",")]
    with bench_server() as server:
        head = print_header(
            "triples_throughput",
            neo4j_version=server.neo4j_version,
            embedder="none",
            sizes={"triples": args.triples, "entities": args.entities},
        )
        server.store("bench-schema").init_schema(DIMENSIONS, model="unknown")
        rows, results = [], []
        for i, (label, run) in enumerate(modes):
            store = server.store(f"bench-triples-{i}")
            before = store.runner.round_trips
            new_s = run(store, triples)
            statements = store.runner.round_trips - before
            print(f"  {label}: {len(triples) / new_s:,.0f} new triples/s", flush=True)
            again_s = run(store, triples)
            print(f"  {label}: {len(triples) / again_s:,.0f} re-written triples/s", flush=True)
            count = store.count_triples()
            if count != len(triples):
                raise RuntimeError(f"{label}: {count} triples stored, {len(triples)} written")
            rows.append(
                [label, len(triples), round(new_s, 2), int(len(triples) / new_s), int(len(triples) / again_s), statements]
            )
            results.append(
                {
                    "mode": label,
                    "triples": len(triples),
                    "seconds_new": new_s,
                    "triples_per_second_new": len(triples) / new_s,
                    "seconds_rewrite": again_s,
                    "triples_per_second_rewrite": len(triples) / again_s,
                    "statements": statements,
                }
            )
            store.clear_triples()
        print_table(
            f"Triples into Neo4j ({args.triples:,} triples over {args.entities:,} entities)",
            ["mode", "triples", "seconds", "new/s", "re-write/s", "statements"],
            rows,
        )
    write_results("triples_throughput", {**head, "results": results}, args.json_out)


if __name__ == "__main__":
    main()
