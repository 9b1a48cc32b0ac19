"""``report``: docs/benchmarks.md and docs/img/*.png from bench/results/*.json.

Full-run results (``latency.json``, ...) are preferred; a benchmark only run by the quick
suite is reported from its ``*-quick.json``, and the page says so.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .common import BENCH_DIR, RESULTS_DIR

__all__ = ["run"]

DOCS = BENCH_DIR.parent / "docs"
IMG = DOCS / "img"
OUT = DOCS / "benchmarks.md"
VECTOR = "vector only (kgrag search_chunks)"
NATIVE = "kgrag graph, one statement"
PER_HOP = "kgrag graph, per-hop loop"


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
    return (f"{res['date']}; Neo4j {res.get('neo4j')} Community (local jars); {m['cores']} cores, {m['memory_gib']} GiB RAM "
            f"({m['cpu']}); load average at start {m.get('load_average_at_start', '?')}; Python {m['python']}; {pk}")


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
            ax.plot([int(h) for h in hops], [r["hops"][h]["one statement"]["p50"] for h in hops], marker="o",
                    label=f"one statement, {r['size']:,}")
            ax.plot([int(h) for h in hops], [r["hops"][h]["per-hop loop"]["p50"] for h in hops], marker="s", linestyle="--",
                    label=f"per-hop loop, {r['size']:,}")
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
    parts = [f"## Retrieval latency\n\nSource: `bench/results/` {source}; {_machine(lat)}.\n",
             f"Setup: precomputed query vectors (count per table), the same for every system; graph: {lat.get('graph')}; retrieval: {lat.get('retrieval')}. "
             "Each system gets the same precomputed query vectors (embedding time excluded) and is timed round-robin, "
             "query by query, so background load falls on all of them alike. `x vector` is p50 over vector-only p50; "
             "`same results` is the share of the one statement's result ids the system returns too (the peers' "
             "variable-length pattern scores a neighbour by its best path, kgrag's BFS by its first hop, so a few "
             "ties and hop-2 scores differ).\n"]
    for r in lat["runs"]:
        rows = [[n, s.get("n"), s["p50"], s["p95"], s["mean"], s["ratio_p50_to_vector"], s["round_trips"], s["overlap_with_native"]]
                for n, s in r["systems"].items()]
        parts.append(f"### {r['size']:,} chunks, {r['edges']:,} edges (loaded in {r['load_seconds']:,.0f}s, edges in {r['edge_seconds']:,.0f}s)\n\n"
                     + _table(["system", "queries", "p50 ms", "p95 ms", "mean ms", "x vector", "round trips", "same results"], rows, 2) + "\n")
        nat, per, vec = r["systems"][NATIVE], r["systems"][PER_HOP], r["systems"][VECTOR]
        lines = [f"- one statement vs per-hop loop: {per['p50'] / nat['p50']:.2f}x faster at p50",
                 f"- one statement vs vector-only: {nat['p50'] / vec['p50']:.2f}x the vector-only p50"]
        for n, s in r["systems"].items():
            if n not in (NATIVE, PER_HOP, VECTOR):
                ratio = s["p50"] / nat["p50"]
                verdict = f"kgrag {ratio:.2f}x faster" if ratio >= 1 else f"kgrag {1 / ratio:.2f}x slower"
                lines.append(f"- one statement vs {n}: {verdict} at p50")
        parts.append("\n".join(lines) + "\n")
        if r.get("note"):
            parts.append(f"({r['note']}.)\n")
        rows = [[h, m["one statement"]["p50"], m["per-hop loop"]["p50"], round(m["per-hop loop"]["p50"] / m["one statement"]["p50"], 2)]
                for h, m in sorted(r.get("hops", {}).items())]
        if rows:
            parts.append(f"Hops at {r['size']:,} chunks (p50 ms):\n\n" + _table(["hops", "one statement", "per-hop loop", "per-hop / one"], rows, 2) + "\n")
        if "dense" in r:
            d = r["dense"]
            rows = [[h, d["profile"][h]["db_hits_mean"], d["latency"][h]["one statement"]["p50"], d["latency"][h]["per-hop loop"]["p50"]]
                    for h in sorted(d["profile"])]
            extra = ""
            if d.get("peer_profile_2_hops"):
                extra = (f"\nThe peers' 2-hop retrieval query (variable-length pattern, `bench/cypher/peer_two_hop.cypher`) "
                         f"costs {d['peer_profile_2_hops']['db_hits_mean']:,} db hits on the same graph and queries, against "
                         f"{d['profile']['2']['db_hits_mean']:,} for the one statement at 2 hops.")
                if d.get("peer_latency_2_hops"):
                    pl = d["peer_latency_2_hops"]
                    extra += (f" p50 on this graph: one statement {pl['one statement']['p50']:.1f} ms, neo4j-graphrag "
                              f"{pl['neo4j-graphrag VectorCypherRetriever']['p50']:.1f} ms.")
            parts.append(f"Dense graph ({r['size']:,} chunks, {d['out_degree']} edges per chunk, {d['edges']:,} edges): "
                         "PROFILE db hits of the one statement (mean over the queries) and p50 latency:\n\n"
                         + _table(["hops", "db hits", "one statement ms", "per-hop loop ms"], rows, 2) + "\n" + extra + "\n")
    emb = lat.get("embedding")
    if emb:
        rows = []
        for name, e in emb.items():
            if e.get("available"):
                rows.append([f"{e['model']}", e["query"]["p50"], e["query"]["mean"], e["batch_64"]["p50"], e["batch_64"]["mean"]])
            else:
                rows.append([f"{name}: not available ({e['reason']})", None, None, None, None])
        parts.append("### Embedding time (not included above)\n\nMuSiQue questions one at a time, and MuSiQue paragraphs in batches of 64:\n\n"
                     + _table(["embedder", "query p50 ms", "query mean ms", "64-batch p50 ms", "64-batch mean ms"], rows, 2) + "\n")
    return "\n".join(parts)


def _seed_recall_section(sr: dict[str, Any], source: str) -> str:
    parts = [f"## Vector seeds: recall against the exact top 10\n\nSource: `bench/results/{source}`; {_machine(sr)}.\n",
             "Neo4j's vector index is approximate. Each setting's share of the exact top 10 (brute-force cosine over "
             "every stored vector) and its latency, timed round-robin on the same queries; the first row is the index "
             "call the peers make (k = 10), the others kgrag's `search_chunks` at each `vector_overfetch`.\n"]
    for r in sr["runs"]:
        rows = [[n, s["fetch_k"], s["recall_at_10"], s["p50"], s["p95"]] for n, s in r["settings"].items()]
        parts.append(f"### {r['size']:,} chunks\n\n" + _table(["setting", "asked of the index", "recall@10", "p50 ms", "p95 ms"], rows, 3) + "\n")
    return "\n".join(parts)


def _ingest_ratios(systems: dict[str, Any]) -> str:
    """kgrag's rows against the raw statement at the same transaction size and each peer."""
    ours = [n for n in systems if n.startswith("kgrag")]
    raw_same = next((n for n in systems if n.startswith("raw") and "ceiling" not in n), None)
    lines = []
    for mine in ours:
        rate = systems[mine]["chunks_per_s"]
        for other in [raw_same] + [n for n in systems if not n.startswith(("kgrag", "raw"))]:
            if other and other in systems:
                ratio = rate / systems[other]["chunks_per_s"]
                lines.append(f"- {mine} vs {other}: {ratio:.2f}x its throughput")
    return "\n".join(lines)


def _ingest_section(ing: dict[str, Any], source: str) -> str:
    parts = [f"## Ingest throughput\n\nSource: `bench/results/{source}`; {_machine(ing)}.\n",
             f"Schema: {ing.get('schema')}. Every system writes the same 384-dim float32 vectors and chunk properties into an "
             "emptied database whose chunk indexes were dropped and recreated; building the Python inputs is not timed. "
             "The ceiling is `bench/cypher/raw_create_chunks.cypher` (CREATE, no document node, no MERGE, no checks) at its "
             "fastest transaction size; the same statement at 5,000 rows per transaction writes the corpus in kgrag's "
             "transaction size. Two rounds, the second in reverse order; the faster round of each system is shown, "
             "both under `rounds`.\n"]
    for r in ing["runs"]:
        rows = [[n, s["chunks"], s["seconds"], s["chunks_per_s"], s["share_of_ceiling"],
                 " / ".join(f"{x:,.0f}" for x in s.get("rounds_per_s", [])), s["note"]] for n, s in r["systems"].items()]
        rows.append(["kgrag store_edges (edges)", r["edges"]["edges"], r["edges"]["seconds"], r["edges"]["edges_per_s"], None, "", r["edges"]["note"]])
        parts.append(f"### {r['size']:,} chunks\n\n" + _table(["system", "items", "seconds", "per second", "x ceiling", "rounds /s", "how"], rows, 2) + "\n")
        parts.append(_ingest_ratios(r["systems"]) + "\n")
    m = ing.get("musique")
    if m:
        rows = [[m[k]["embedder"], m[k]["seconds"], m[k]["paragraphs_per_s"], m[k]["embedding_seconds"], m[k]["path"]] for k in ("hashing", "wordllama") if k in m]
        parts.append(f"### MuSiQue corpus from text ({m['paragraphs']:,} paragraphs, one document each)\n\n"
                     + _table(["embedder", "seconds", "paragraphs/s", "embedding alone, s", "path"], rows, 2) + "\n")
    return "\n".join(parts)


def _quality_section(q: dict[str, Any], source: str) -> str:
    parts = [f"## Retrieval quality on multi-hop questions\n\nSource: `bench/results/{source}`; {_machine(q)}.\n",
             "Protocol (bench-data README): the whole corpus of a set ingested once, one document per paragraph "
             "(its title the document title), then `kgrag entities build` offline (names from the text and from "
             "titles, found wherever written; `references` edges between chunks sharing a rare entity); top 5 "
             "paragraphs per question from the whole corpus; recall@k = share of the gold (supporting) paragraphs in "
             "the top k, averaged over questions; all-gold@5 = share of questions with every gold paragraph in the "
             "top 5. Every retriever runs with its defaults, chosen on the train files only "
             "(`python -m bench quality --tune`); `exact vector` is numpy over the stored vectors.\n"]
    settings: dict[str, str] = {}
    for set_name, by_emb in q["sets"].items():
        for emb, res in by_emb.items():
            vec = res["rows"]["vector"]
            rows = []
            for n, m in res["rows"].items():
                settings.setdefault(n, m["settings"])
                if "recall@5" in m:
                    rows.append([n, m["recall@2"], m["recall@5"], m["all@5"], round(m["recall@5"] - vec["recall@5"], 3),
                                 round(m["all@5"] - vec["all@5"], 3), m["ms_per_query"]])
                else:
                    rows.append([n, None, None, None, None, None, None])
            g = res.get("graphs", {})
            graph_note = (f"entities: {_f(g.get('entities'))} ({_f(g.get('mentions'))} mentions, {_f(g.get('relations'))} "
                          f"relations), entity edges: {_f(g.get('entity_edges'))}, built in {_f(g.get('seconds'))}s")
            parts.append(f"### {set_name}, {res['embedder']} ({res['questions']} questions, {res['paragraphs']:,} paragraphs; "
                         f"ingested in {res['ingest_seconds']:,.0f}s via {res['ingest_path']}; {graph_note})\n\n"
                         + _table(["configuration", "recall@2", "recall@5", "all-gold@5", "R@5 − vector", "all@5 − vector",
                                   "ms/query"], rows, 3) + "\n")
    parts.append("Configurations (fixed for every set and embedder):\n\n" + "\n".join(f"- **{n}**: {s}" for n, s in settings.items()) + "\n")
    return "\n".join(parts)


def run(args: argparse.Namespace | None = None) -> Path:
    lat, lat_src = _load_latency()
    ing, ing_src = _load("ingest")
    seeds, seeds_src = _load("seed_recall")
    qual, qual_src = _load("quality")
    images = _plots(lat, qual)
    sections = [
        "# Benchmarks\n",
        "Generated by `python -m bench report` from `bench/results/*.json` (regenerate after a run; `make bench` runs "
        "everything and ends with this report). Benchmarks print tables and write JSON; they are not tests and "
        "assert nothing about timings.\n",
        "## Commands\n\n```sh\nmake bench-quick            # python -m bench quick: latency 10k, ingest 5k, quality MuSiQue x 100 questions\n"
        "make bench                  # python -m bench all: the full sizes, then this page\n"
        "python -m bench latency --sizes 10000 100000 [--queries 200] [--no-peers] [--json OUT]\n"
        "python -m bench seed_recall --sizes 10000 100000\n"
        "python -m bench ingest --sizes 20000 100000 [--skip-musique]\n"
        "python -m bench quality [--sets musique hotpotqa 2wikimultihopqa] [--questions N] [--embedders wordllama hashing]\n"
        "python -m bench quality --tune   # the graph-settings grid, on the train files only\n"
        "python -m bench report\n```\n\n"
        "Peers: `pip install \"kgrag-neo4j[bench]\"` (neo4j-graphrag, langchain-neo4j, matplotlib). MiniLM rows: "
        "`pip install \"kgrag-neo4j[local]\"` (sentence-transformers and torch; the quality benchmark adds MiniLM to a full "
        "run when it is installed).\n",
    ]
    for name, res, src in (("latency", lat, lat_src), ("seed recall", seeds, seeds_src), ("ingest", ing, ing_src), ("quality", qual, qual_src)):
        if res and src.endswith("-quick.json") and "+" not in src:
            sections.append(f"> The {name} figures below come from the quick suite (`{src}`): small sizes.\n")
    if lat:
        sections.append(_latency_section(lat, lat_src))
        if "latency_vs_size.png" in images:
            sections.append("![latency vs size](img/latency_vs_size.png)\n\n![latency vs hops](img/latency_vs_hops.png)\n\n"
                            "(Each size ran on its own fresh server, one after another; compare systems within one size "
                            "first, then the slope across sizes.)\n")
    if seeds:
        sections.append(_seed_recall_section(seeds, seeds_src))
    if ing:
        sections.append(_ingest_section(ing, ing_src))
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
