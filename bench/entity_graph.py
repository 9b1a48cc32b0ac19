"""The entity graph kept current, as a user runs it: ``kgrag entities build`` on folders of
two sizes (peak memory of the command and its time against ``kgrag ingest`` of the same
files), the same build on the unchanged namespace, then what a growing corpus costs: 3 new
one-line files and 100 new files ingested (the entity graph maintained in the same run), and
one document deleted with ``kgrag docs delete``.

The files are the paragraphs of the bench's QA sets, one file each (title on the first line),
as ``bench/cli_ingest.py`` writes them. ``--baseline DIR`` runs the same commands with the
package of another checkout (``git worktree add /tmp/before <commit>``) in the same run: there
a new file is linked only by a full ``kgrag entities build``, which is what the row "3 new
files" then times after the plain ingest.

Peak memory is the command's own maximum resident set (``VmHWM``, see
``common.wait_measured``), Python start included.

    python -m bench entity_graph [--sizes 1530 6119] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from .cli_ingest import EMBEDDER, KGRAG, make_folder, paragraphs
from .common import (
    BenchServer,
    bench_server,
    clear_database,
    print_header,
    print_table,
    result_name,
    wait_measured,
    write_results,
)

__all__ = ["add_arguments", "run"]

SIZES = [1_530, 6_119]
QUICK_SIZES = [400, 1_600]
THIS = "this checkout"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--baseline", metavar="DIR", help="also run the commands with the kgrag_neo4j of this checkout")


def _kgrag(srv: BenchServer, *args: str, checkout: str | None = None) -> dict[str, Any]:
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
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([*KGRAG, *args], env=env, stdout=out, stderr=err, cwd=checkout or None)
        code, peak_mb = wait_measured(proc)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if code != 0:
        raise RuntimeError(f"kgrag {' '.join(args)} failed ({code}): {stderr.strip()[-2000:]}")
    try:
        output = json.loads(stdout)
    except ValueError:
        output = None
    return {"command": "kgrag " + " ".join(args), "wall_seconds": round(wall, 2), "peak_mb": peak_mb, "output": output}


def _one_size(srv: BenchServer, size: int, corpus: list, root: Path, checkout: str | None) -> dict[str, Any]:
    clear_database(srv.driver)
    ns = f"eg{size}"
    folder = make_folder(root / f"f{size}", corpus[:size])
    more = make_folder(root / f"more{size}", corpus[size : size + 100])
    three = root / f"three{size}"
    three.mkdir(exist_ok=True)
    for i, line in enumerate(
        (
            "Ada Lovelace wrote notes on the Analytical Engine.",
            "Charles Babbage designed the Analytical Engine in London.",
            "Ada Lovelace corresponded with Charles Babbage.",
        )
    ):
        (three / f"new{i}.txt").write_text(line + "\n", encoding="utf-8")
    no_entities = ["--no-entities"] if checkout is None else []
    out: dict[str, Any] = {"files": size}
    out["ingest"] = _kgrag(srv, "ingest", str(folder), "--namespace", ns, "--json", *no_entities, checkout=checkout)
    out["build"] = _kgrag(srv, "entities", "build", "--namespace", ns, "--json", checkout=checkout)
    out["build_unchanged"] = _kgrag(srv, "entities", "build", "--namespace", ns, "--json", checkout=checkout)
    out["add_3"] = _kgrag(srv, "ingest", str(three), "--namespace", ns, "--json", checkout=checkout)
    if checkout is not None:  # before: a new file is linked only by a whole build
        out["add_3_build"] = _kgrag(srv, "entities", "build", "--namespace", ns, "--json", checkout=checkout)
    out["add_100"] = _kgrag(srv, "ingest", str(more), "--namespace", ns, "--json", checkout=checkout)
    if checkout is not None:
        out["add_100_build"] = _kgrag(srv, "entities", "build", "--namespace", ns, "--json", checkout=checkout)
    if checkout is None:  # a baseline's docs delete may take ids only
        out["delete_1"] = _kgrag(srv, "docs", "delete", str(three / "new0.txt"), "--namespace", ns, "--json")
        out["status"] = _kgrag(srv, "entities", "status", "--namespace", ns, "--json")["output"]
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = args.sizes or (QUICK_SIZES if getattr(args, "quick", False) else SIZES)
    corpus = paragraphs()
    if max(sizes) + 100 > len(corpus):
        raise SystemExit(f"at most {len(corpus) - 100} files: the QA sets hold {len(corpus)} paragraphs")
    from kgrag_neo4j.neo4j_release import NEO4J_VERSION

    head = print_header("entity_graph", neo4j_version=NEO4J_VERSION, embedder=EMBEDDER, sizes=sizes)
    checkouts: list[tuple[str, str | None]] = [(THIS, None)]
    if args.baseline:
        checkouts.append((f"baseline {args.baseline}", str(Path(args.baseline).resolve())))
    results: dict[str, Any] = {**head, "runs": {}}
    with bench_server() as srv, tempfile.TemporaryDirectory() as tmp:
        for label, checkout in checkouts:
            results["runs"][label] = [
                _one_size(srv, size, corpus, Path(tmp) / label.replace(" ", "_").replace("/", "_"), checkout) for size in sizes
            ]
    rows = []
    for label, runs in results["runs"].items():
        for r in runs:
            add3 = r["add_3"]["wall_seconds"] + r.get("add_3_build", {}).get("wall_seconds", 0.0)
            add100 = r["add_100"]["wall_seconds"] + r.get("add_100_build", {}).get("wall_seconds", 0.0)
            rows.append(
                [
                    label,
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
    print_table(
        "wall seconds of each command (peak MB of the build)",
        [
            "code",
            "files",
            "ingest",
            "build",
            "build/ingest",
            "build peak MB",
            "build again",
            "+3 files",
            "+100 files",
            "delete 1",
        ],
        rows,
    )
    write_results(result_name("entity_graph", args), results, getattr(args, "json", None))
    return results
