"""What a user waits for: ``kgrag ingest FOLDER`` and the build commands, run as commands.

- The MuSiQue folder: the 3,141 MuSiQue paragraphs written one file each (title on the first
  line, then the text), ingested with ``kgrag ingest FOLDER --embedder wordllama`` into a
  database that has its schema but no data; the same folder again (every file unchanged);
  then into an emptied database with ``--similarity-edges``. Next to it, in the same run, the
  raw ``UNWIND ... CREATE`` of the same paragraphs as chunks (precomputed WordLlama vectors,
  250 rows per transaction: the ceiling of bench/ingest.py, its rows handed to the driver as
  kgrag hands them), so the ratio holds on a busy machine.
- The build commands at three sizes (the paragraphs of MuSiQue, HotpotQA and 2Wiki, one file
  each: 1,600 / 3,200 / 6,400 files by default): ``kgrag edges build --no-sequence``
  (similarity edges over what is stored) and ``kgrag entities build``, each after an ingest
  without edges. Linear growth shows as a steady time per file.

Every figure is the wall time of the command as a user runs it (Python start and all), next
to the command's own ``seconds`` where it prints one, the CPU seconds the database server
spent on it (what it cost whatever else the machine did) and the load average before it.

``--baseline DIR`` runs the same commands with the package of another checkout (for example
``git worktree add /tmp/main main``) alternately with this one, two rounds in alternating
order, so a before/after comparison is side by side in one run; the faster round counts.

    python -m bench cli_ingest [--sizes 1600 3200 6400] [--skip-builds] [--skip-musique] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgrag_neo4j.store.runner import log_safe

from .common import (
    BenchServer,
    bench_cypher,
    bench_server,
    clear_database,
    load_average,
    print_header,
    print_table,
    result_name,
    write_results,
)
from .datasets import Paragraph, load

__all__ = ["add_arguments", "make_folder", "run"]

QUICK_SIZES = [800, 1_600, 3_200]
FULL_SIZES = [1_600, 3_200, 6_400]
EMBEDDER = "wordllama"
KGRAG = [sys.executable, "-m", "kgrag_neo4j"]
ROUNDS = 2
WARMUP_FILES = 600  # a first ingest warms the server's JIT; no one should pay it alone
RAW_ROWS = (250, 1_000)  # rows per transaction of the raw statement: the faster counts
THIS = "this checkout"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--skip-builds", action="store_true", help="skip the build commands at three sizes")
    p.add_argument("--skip-musique", action="store_true", help="skip the MuSiQue folder ingest")
    p.add_argument("--baseline", metavar="DIR", help="also run the commands with the kgrag_neo4j of this checkout")
    p.add_argument(
        "--rounds",
        type=int,
        default=ROUNDS,
        help=f"rounds of the MuSiQue commands, the order alternating; the fastest counts (default {ROUNDS})",
    )


def paragraphs(sets: Sequence[str] = ("musique", "hotpotqa", "2wikimultihopqa")) -> list[Paragraph]:
    out: list[Paragraph] = []
    for name in sets:
        out += load(name).paragraphs
    return out


def make_folder(dest: Path, items: Sequence[Paragraph]) -> Path:
    """One ``.txt`` file per paragraph (its key names it), title on the first line."""
    dest.mkdir(parents=True, exist_ok=True)
    for p in items:
        (dest / f"{p.key}.txt").write_text(f"{p.title}\n{p.text}\n", encoding="utf-8")
    return dest


def kgrag(srv: BenchServer, *args: str, checkout: str | None = None) -> dict[str, Any]:
    """Run one ``kgrag`` command against the bench server (with the package of ``checkout``
    when given); wall seconds, server CPU seconds, the load average before it, and its JSON
    output when it printed some."""
    env = {
        **os.environ,
        "NEO4J_URI": srv.settings.uri,
        "NEO4J_USERNAME": srv.settings.user or "neo4j",
        "NEO4J_PASSWORD": srv.settings.password or "",
        "KGRAG_EMBEDDER": EMBEDDER,
    }
    env.pop("NEO4J_DATABASE", None)
    if checkout:
        env["PYTHONPATH"] = checkout
    load = load_average()
    cpu = srv.cpu_seconds()
    t0 = time.perf_counter()
    done = subprocess.run([*KGRAG, *args], env=env, capture_output=True, text=True, cwd=checkout or None)
    wall = time.perf_counter() - t0
    server_cpu = round(srv.cpu_seconds() - cpu, 2) if cpu is not None else None
    if done.returncode != 0:
        raise RuntimeError(f"kgrag {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    try:
        output = json.loads(done.stdout)
    except ValueError:
        output = None
    return {
        "command": "kgrag " + " ".join(args),
        "wall_seconds": round(wall, 2),
        "server_cpu_seconds": server_cpu,
        "load_before": load,
        "output": output,
    }


def _clear_data(srv: BenchServer) -> None:
    """Empty the database, keeping its schema (the measured ingests do not build indexes)."""
    clear_database(srv.driver)


def raw_ceiling(srv: BenchServer, items: Sequence[Paragraph]) -> dict[str, Any]:
    """The same paragraphs as chunk nodes by the raw statement, WordLlama vectors computed
    beforehand (not timed), at 250 and 1,000 rows per transaction; the faster."""
    from kgrag_neo4j.providers import WordLlamaEmbedder

    texts = [f"{p.title}\n{p.text}" for p in items]
    vectors = WordLlamaEmbedder().embed(texts)
    created = int(time.time())
    rows = [
        {
            "id": f"raw{i:07d}",
            "embedding": v,
            "props": {
                "namespace": "raw",
                "document_id": f"raw{i:07d}",
                "content": t,
                "chunk_index": 0,
                "token_count": len(t) // 4,
                "metadata": "{}",
                "meta_pairs": [],
                "source": f"raw/{i}",
                "created_at": created,
            },
        }
        for i, (t, v) in enumerate(zip(texts, vectors))
    ]
    statement = bench_cypher("raw_create_chunks")
    best: dict[str, Any] | None = None
    for per_tx in RAW_ROWS:
        _clear_data(srv)
        load, cpu = load_average(), srv.cpu_seconds()
        t0 = time.perf_counter()
        with srv.driver.session(database=srv.settings.database) as s:
            for start in range(0, len(rows), per_tx):
                s.execute_write(lambda tx: tx.run(statement, log_safe({"rows": rows[start : start + per_tx]})).consume())
        secs = time.perf_counter() - t0
        r = {
            "wall_seconds": round(secs, 2),
            "chunks_per_s": round(len(rows) / secs, 1),
            "rows_per_tx": per_tx,
            "server_cpu_seconds": round(srv.cpu_seconds() - cpu, 2) if cpu is not None else None,
            "load_before": load,
        }
        if best is None or r["chunks_per_s"] > best["chunks_per_s"]:
            best = r
    assert best is not None
    return best


def _best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    best = dict(min(runs, key=lambda r: r["wall_seconds"]))
    best["rounds_wall_seconds"] = [r["wall_seconds"] for r in runs]
    return best


def musique_folder(
    srv: BenchServer, folder: Path, *, files: int, systems: dict[str, str | None], rounds: int = ROUNDS
) -> dict[str, Any]:
    steps = [
        ("ingest", ["--namespace", "musique"]),
        ("re-ingest, unchanged", ["--namespace", "musique"]),
        ("ingest --similarity-edges", ["--namespace", "musique-sim", "--similarity-edges"]),
    ]
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {s: {label: [] for label, _ in steps} for s in systems}
    raw: list[dict[str, Any]] = []
    musique = load("musique").paragraphs
    for round_no in range(rounds):
        order = list(systems) if round_no % 2 == 0 else list(systems)[::-1]
        raw.append(raw_ceiling(srv, musique))
        print(
            f"    round {round_no + 1}: raw UNWIND ... CREATE of the same paragraphs: {raw[-1]['chunks_per_s']:,.0f} chunks/s "
            f"(server CPU {raw[-1]['server_cpu_seconds']}s; load {raw[-1]['load_before']})",
            flush=True,
        )
        for system in order:
            for label, extra in steps:
                if label != "re-ingest, unchanged":
                    _clear_data(srv)
                r = kgrag(srv, "ingest", str(folder), *extra, "--json", checkout=systems[system])
                summary = (r.pop("output") or {}).get("summary", {})
                r["files_per_s"] = round(files / r["wall_seconds"], 1)
                r["summary"] = summary
                runs[system][label].append(r)
                print(
                    f"    round {round_no + 1}, {system}: {label}: {r['wall_seconds']:.1f}s = {r['files_per_s']:,.0f} files/s "
                    f"(its own time {summary.get('seconds')}s; server CPU {r['server_cpu_seconds']}s; new {summary.get('new')}, "
                    f"unchanged {summary.get('unchanged')}, edges {summary.get('edges')}; load {r['load_before']})",
                    flush=True,
                )
    ceiling = _best(raw)
    out: dict[str, Any] = {"files": files, "rounds": rounds, "raw_ceiling": ceiling, "systems": {}}
    for system, by_step in runs.items():
        out["systems"][system] = {label: _best(rs) for label, rs in by_step.items()}
        for r in out["systems"][system].values():
            r["x_raw_ceiling"] = round(r["files_per_s"] / ceiling["chunks_per_s"], 3)
    return out


def build_sizes(srv: BenchServer, root: Path, sizes: Sequence[int], systems: dict[str, str | None]) -> dict[str, Any]:
    corpus = paragraphs()
    out: dict[str, Any] = {s: {} for s in systems}
    for size in sizes:
        items = corpus[:size]
        folder = make_folder(root / f"build-{size}", items)
        for system, checkout in systems.items():
            _clear_data(srv)
            row: dict[str, Any] = {"files": len(items)}
            ing = kgrag(srv, "ingest", str(folder), "--namespace", "build", "--json", checkout=checkout)
            row["ingest"] = {
                "wall_seconds": ing["wall_seconds"],
                "server_cpu_seconds": ing["server_cpu_seconds"],
                "load_before": ing["load_before"],
            }
            edges = kgrag(srv, "edges", "build", "--namespace", "build", "--no-sequence", "--json", checkout=checkout)
            row["edges build"] = {
                "wall_seconds": edges["wall_seconds"],
                "server_cpu_seconds": edges["server_cpu_seconds"],
                "edges": (edges["output"] or {}).get("edges"),
                "load_before": edges["load_before"],
            }
            ents = kgrag(srv, "entities", "build", "--namespace", "build", "--json", checkout=checkout)
            eo = ents["output"] or {}
            row["entities build"] = {
                "wall_seconds": ents["wall_seconds"],
                "server_cpu_seconds": ents["server_cpu_seconds"],
                "entities": eo.get("entities"),
                "relations": eo.get("relations"),
                "mentions": eo.get("mentions"),
                "stage_seconds": eo.get("seconds"),
                "load_before": ents["load_before"],
            }
            out[system][str(len(items))] = row
            print(
                f"    {system}, {len(items):,} files: ingest {ing['wall_seconds']:.1f}s, edges build {edges['wall_seconds']:.1f}s "
                f"({row['edges build']['edges']} edges), entities build {ents['wall_seconds']:.1f}s "
                f"({eo.get('entities')} entities; stages {eo.get('seconds')}); load {ents['load_before']}",
                flush=True,
            )
        shutil.rmtree(folder, ignore_errors=True)
    return out


def _warm_up(srv: BenchServer, root: Path, systems: dict[str, str | None]) -> None:
    """Every system ingests a small folder once, with and without similarity edges, so the
    server's JIT is warm before anything is timed; the schema (indexes) stays."""
    folder = make_folder(root / "warmup", load("hotpotqa").paragraphs[:WARMUP_FILES])
    kgrag(srv, "init", "--embedder", EMBEDDER)
    for checkout in systems.values():
        _clear_data(srv)
        kgrag(srv, "ingest", str(folder), "--namespace", "warmup", checkout=checkout)
        _clear_data(srv)
        kgrag(srv, "ingest", str(folder), "--namespace", "warmup", "--similarity-edges", checkout=checkout)
    _clear_data(srv)


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = args.sizes or (QUICK_SIZES if getattr(args, "quick", False) else FULL_SIZES)
    systems: dict[str, str | None] = {THIS: None}
    if getattr(args, "baseline", None):
        systems[f"baseline ({args.baseline})"] = str(Path(args.baseline).resolve())
    head = print_header(
        "cli_ingest",
        neo4j_version="(fresh server)",
        embedder=f"{EMBEDDER} (the CLI's --embedder)",
        sizes=sizes,
        extra={
            "what": "kgrag commands as a user runs them; wall time per command",
            "systems": ", ".join(f"{k}" for k in systems),
        },
    )
    results: dict[str, Any] = {**head}
    root = Path(tempfile.mkdtemp(prefix="kgrag-bench-folder-"))
    try:
        with bench_server(heap="2g", pagecache="1g") as srv:
            results["neo4j"] = srv.neo4j_version
            _warm_up(srv, root, systems)
            if not getattr(args, "skip_musique", False):
                musique = load("musique").paragraphs
                folder = make_folder(root / "musique", musique)
                print(f"\n  [MuSiQue folder: {len(musique):,} files]", flush=True)
                results["musique"] = m = musique_folder(
                    srv, folder, files=len(musique), systems=systems, rounds=getattr(args, "rounds", ROUNDS)
                )
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
                print_table(
                    f"kgrag ingest of the MuSiQue folder ({len(musique):,} one-paragraph files, WordLlama; fastest of {m['rounds']} rounds)",
                    ["command", "package", "wall s", "files/s", "x raw", "server CPU s", "load avg before"],
                    rows,
                )
                write_results(result_name("cli_ingest", args), results, args.json)
            if not getattr(args, "skip_builds", False):
                print(f"\n  [build commands at {sizes} files]", flush=True)
                results["builds"] = build_sizes(srv, root, sizes, systems)
                rows = []
                for system, by_size in results["builds"].items():
                    for n, r in by_size.items():
                        for cmd in ("ingest", "edges build", "entities build"):
                            rows.append(
                                [
                                    cmd,
                                    system,
                                    int(n),
                                    r[cmd]["wall_seconds"],
                                    round(1000 * r[cmd]["wall_seconds"] / int(n), 2),
                                    r[cmd]["server_cpu_seconds"],
                                    r[cmd]["load_before"],
                                ]
                            )
                rows.sort(key=lambda x: (x[0], x[1], x[2]))
                print_table(
                    "Build commands at three sizes (linear growth = steady ms per file)",
                    ["command", "package", "files", "wall s", "ms per file", "server CPU s", "load avg before"],
                    rows,
                )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    write_results(result_name("cli_ingest", args), results, args.json)
    return results
