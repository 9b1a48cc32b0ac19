"""What a user waits for: ``kgrag ingest FOLDER`` and the build commands, run as commands.

- The MuSiQue folder: the 3,141 MuSiQue paragraphs written one file each (title on the first
  line, then the text), ingested with ``kgrag ingest FOLDER --embedder wordllama`` into an
  empty database; the same folder again (every file unchanged); then into an emptied database
  with ``--similarity-edges``.
- The build commands at three sizes (the paragraphs of MuSiQue, HotpotQA and 2Wiki, one file
  each: 1,600 / 3,200 / 6,400 files by default): ``kgrag edges build --no-sequence`` (similarity
  edges over what is stored) and ``kgrag entities build``, each after an ingest without edges.
  Linear growth shows as a steady time per file.

Every figure is the wall time of the command as a user runs it (Python start, model load and
all), next to the command's own ``seconds`` where it prints one; the load average is recorded
with each, since the machine may be shared.

    python -m bench cli_ingest [--sizes 1600 3200 6400] [--skip-builds] [--skip-musique]
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
from pathlib import Path
from typing import Any, Sequence

from .common import BenchServer, bench_server, clear_database, load_average, print_header, print_table, result_name, write_results
from .datasets import Paragraph, load

__all__ = ["add_arguments", "make_folder", "run"]

QUICK_SIZES = [800, 1_600, 3_200]
FULL_SIZES = [1_600, 3_200, 6_400]
EMBEDDER = "wordllama"
KGRAG = [sys.executable, "-m", "kgrag_neo4j"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--skip-builds", action="store_true", help="skip the build commands at three sizes")
    p.add_argument("--skip-musique", action="store_true", help="skip the MuSiQue folder ingest")


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


def kgrag(srv: BenchServer, *args: str) -> dict[str, Any]:
    """Run one ``kgrag`` command against the bench server; wall seconds, the load average
    before it, and its JSON output when it printed some."""
    env = {**os.environ, "NEO4J_URI": srv.settings.uri, "NEO4J_USERNAME": srv.settings.user or "neo4j",
           "NEO4J_PASSWORD": srv.settings.password or "", "KGRAG_EMBEDDER": EMBEDDER}
    env.pop("NEO4J_DATABASE", None)
    load = load_average()
    t0 = time.perf_counter()
    done = subprocess.run([*KGRAG, *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"kgrag {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    try:
        output = json.loads(done.stdout)
    except ValueError:
        output = None
    return {"command": "kgrag " + " ".join(args), "wall_seconds": round(wall, 2), "load_before": load, "output": output}


def _summary_seconds(r: dict[str, Any]) -> float | None:
    out = r.get("output") or {}
    return (out.get("summary") or {}).get("seconds") if isinstance(out, dict) else None


def musique_folder(srv: BenchServer, folder: Path, *, files: int) -> dict[str, Any]:
    out: dict[str, Any] = {"files": files}
    clear_database(srv.driver, drop_vector_indexes=True)
    steps = [("ingest", ["ingest", str(folder), "--namespace", "musique", "--json"]),
             ("re-ingest, unchanged", ["ingest", str(folder), "--namespace", "musique", "--json"]),
             ("ingest --similarity-edges", ["ingest", str(folder), "--namespace", "musique-sim", "--similarity-edges", "--json"])]
    for label, args in steps:
        if label.startswith("ingest --similarity"):
            clear_database(srv.driver, drop_vector_indexes=True)
        r = kgrag(srv, *args)
        summary = (r["output"] or {}).get("summary", {})
        r["files_per_s"] = round(files / r["wall_seconds"], 1)
        r["summary"] = summary
        r.pop("output", None)
        out[label] = r
        print(f"    {r['command'].replace(str(folder), 'FOLDER')}: {r['wall_seconds']:.1f}s = {r['files_per_s']:,.0f} files/s "
              f"(its own time {summary.get('seconds')}s; new {summary.get('new')}, unchanged {summary.get('unchanged')}, "
              f"edges {summary.get('edges')}; load {r['load_before']})", flush=True)
    return out


def build_sizes(srv: BenchServer, root: Path, sizes: Sequence[int]) -> dict[str, Any]:
    corpus = paragraphs()
    out: dict[str, Any] = {}
    for size in sizes:
        items = corpus[:size]
        folder = make_folder(root / f"build-{size}", items)
        clear_database(srv.driver, drop_vector_indexes=True)
        row: dict[str, Any] = {"files": len(items)}
        ing = kgrag(srv, "ingest", str(folder), "--namespace", "build", "--json")
        row["ingest"] = {"wall_seconds": ing["wall_seconds"], "seconds": _summary_seconds(ing), "load_before": ing["load_before"]}
        edges = kgrag(srv, "edges", "build", "--namespace", "build", "--no-sequence", "--json")
        row["edges build"] = {"wall_seconds": edges["wall_seconds"], "edges": (edges["output"] or {}).get("edges"),
                              "load_before": edges["load_before"]}
        ents = kgrag(srv, "entities", "build", "--namespace", "build", "--json")
        eo = ents["output"] or {}
        row["entities build"] = {"wall_seconds": ents["wall_seconds"], "entities": eo.get("entities"),
                                 "relations": eo.get("relations"), "mentions": eo.get("mentions"),
                                 "stage_seconds": eo.get("seconds"), "load_before": ents["load_before"]}
        out[str(len(items))] = row
        print(f"    {len(items):,} files: ingest {ing['wall_seconds']:.1f}s, edges build {edges['wall_seconds']:.1f}s "
              f"({row['edges build']['edges']} edges), entities build {ents['wall_seconds']:.1f}s "
              f"({eo.get('entities')} entities; stages {eo.get('seconds')}); load {ents['load_before']}", flush=True)
        shutil.rmtree(folder, ignore_errors=True)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = args.sizes or (QUICK_SIZES if getattr(args, "quick", False) else FULL_SIZES)
    head = print_header("cli_ingest", neo4j_version="(fresh server)", embedder=f"{EMBEDDER} (the CLI's --embedder)",
                        sizes=sizes, extra={"what": "kgrag commands as a user runs them; wall time per command"})
    results: dict[str, Any] = {**head}
    root = Path(tempfile.mkdtemp(prefix="kgrag-bench-folder-"))
    try:
        with bench_server(heap="2g", pagecache="1g") as srv:
            results["neo4j"] = srv.neo4j_version
            kgrag(srv, "schema", "status")  # a first command warms the server (and the OS caches)
            if not getattr(args, "skip_musique", False):
                musique = load("musique").paragraphs
                folder = make_folder(root / "musique", musique)
                print(f"\n  [MuSiQue folder: {len(musique):,} files]", flush=True)
                results["musique"] = musique_folder(srv, folder, files=len(musique))
                m = results["musique"]
                print_table(f"kgrag ingest of the MuSiQue folder ({len(musique):,} one-paragraph files, WordLlama)",
                            ["command", "wall s", "files/s", "its own s", "load avg before"],
                            [[k, v["wall_seconds"], v["files_per_s"], v["summary"].get("seconds"), v["load_before"]]
                             for k, v in m.items() if isinstance(v, dict)])
                write_results(result_name("cli_ingest", args), results, args.json)
            if not getattr(args, "skip_builds", False):
                print(f"\n  [build commands at {sizes} files]", flush=True)
                results["builds"] = build_sizes(srv, root, sizes)
                rows = []
                for n, r in results["builds"].items():
                    for cmd in ("ingest", "edges build", "entities build"):
                        rows.append([cmd, int(n), r[cmd]["wall_seconds"], round(1000 * r[cmd]["wall_seconds"] / int(n), 2),
                                     r[cmd]["load_before"]])
                rows.sort(key=lambda x: (x[0], x[1]))
                print_table("Build commands at three sizes (linear growth = steady ms per file)",
                            ["command", "files", "wall s", "ms per file", "load avg before"], rows)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    write_results(result_name("cli_ingest", args), results, args.json)
    return results
