"""``python -m bench NAME [--sizes N ...] [--json OUT]``.

NAME is a module of this package that defines ``run(args)`` (and, optionally,
``add_arguments(parser)`` for its own options): ``bench/latency.py`` is ``latency``. A new
benchmark (``stress``, say) is one new module; ``BENCHMARKS`` only lists the ones this
package ships, for ``--help``. ``quick`` and ``all`` are suites of them (``bench/suites.py``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import signal
import sys
from types import ModuleType

BENCHMARKS = {
    "latency": "retrieval latency on real text: one-statement graph retrieval vs per-hop loop vs vector-only vs peers, at equal recall",
    "ingest": "real text from files (extract, chunk, embed, store) vs a raw UNWIND ... CREATE and the peers' writers",
    "cli_ingest": "kgrag ingest FOLDER (MuSiQue, 3,141 files), re-ingest, --similarity-edges; edges/entities build at three sizes",
    "large_document": "one 49 MB text on a 1 GB heap: written in several transactions, never half-visible",
    "quality": "recall@2 / recall@5 / all-gold@5 on MuSiQue, HotpotQA, 2WikiMultihopQA",
    "seed_recall": "vector seeds vs the exact top 10 on real text: recall and latency per vector_overfetch, the peers' k, the index's curve",
    "quick": "latency (10k), seed recall (10k), ingest (10k), cli_ingest (MuSiQue), quality (MuSiQue, 100 questions): a few minutes",
    "all": "every benchmark at full size, then report",
    "report": "regenerate docs/benchmarks.md and docs/img/*.png from bench/results/*.json",
    "stress": "concurrent ingest, edge building and retrieval for --seconds N: operations, errors, p95",
    "entity_graph": "kgrag entities build at two sizes (time against ingest, peak memory), again unchanged, then +3 / +100 files and a delete kept current",
    "scale": "the entity graph at 100k and 1M chunks of real text: ingest, build, +100/-100 documents, communities, namespace delete, retrieval p50",
    "reembed": "kgrag namespace reembed of the QA paragraphs (9,271 files) to another model while kgrag search runs: time, failed searches",
    "libraries": "hand-written Markdown scan, token estimate and retry loop vs markdown-it-py, tokenizers, tenacity (no Neo4j)",
}


def module_for(name: str) -> ModuleType:
    target = "bench.suites" if name in ("quick", "all") else f"bench.{name}"
    if not name.isidentifier() or importlib.util.find_spec(target) is None:
        known = ", ".join(BENCHMARKS)
        raise SystemExit(f"unknown benchmark {name!r}; choose one of: {known} (or add bench/{name}.py with run(args))")
    module = importlib.import_module(target)
    if not hasattr(module, "run"):
        raise SystemExit(f"bench/{name}.py has no run(args)")
    return module


def parser_for(name: str | None, module: ModuleType | None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="kgrag-neo4j benchmarks (tables on stdout, JSON in bench/results/).",
        epilog="\n".join(f"  {k:<8} {v}" for k, v in BENCHMARKS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", metavar="NAME", help="benchmark to run (see below)")
    p.add_argument("--sizes", type=int, nargs="+", help="corpus sizes (chunks) instead of the defaults")
    p.add_argument("--json", metavar="OUT", help="also write the results to this file")
    p.add_argument("--quick", action="store_true", help="the small sizes of the quick suite")
    if module is not None and hasattr(module, "add_arguments"):
        module.add_arguments(p)
    return p


def _stop_on_sigterm() -> None:
    # a SIGTERM must unwind the `with bench_server(...)` blocks so the server is stopped
    def handler(signum, frame):  # noqa: ARG001
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # NAME comes first, so its module can add its own options before the rest is parsed
    name = argv[0] if argv and not argv[0].startswith("-") else None
    module = module_for(name) if name else None
    args = parser_for(name, module).parse_args(argv)
    if module is None:
        raise SystemExit("name a benchmark")
    _stop_on_sigterm()
    module.run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
