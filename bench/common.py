"""What every benchmark shares: the fresh server, the machine description, timing
statistics, tables and the JSON results."""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import neo4j

from kgrag_neo4j.errors import ServerError
from kgrag_neo4j.neo4j_release import NEO4J_CALVER_VERSION, NEO4J_VERSION, release
from kgrag_neo4j.server import disposable_server
from kgrag_neo4j.settings import Neo4jSettings
from kgrag_neo4j.store import Neo4jStore
from kgrag_neo4j.store.runner import connect_driver

__all__ = [
    "BENCH_DIR",
    "RESULTS_DIR",
    "BenchServer",
    "add_version_argument",
    "bench_cypher",
    "bench_server",
    "clear_database",
    "fmt",
    "machine_info",
    "package_versions",
    "load_average",
    "print_header",
    "print_table",
    "process_cpu_seconds",
    "result_name",
    "stats_ms",
    "time_calls",
    "write_results",
]

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
CYPHER_DIR = BENCH_DIR / "cypher"


# --- machine ------------------------------------------------------------------------------


def _meminfo_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def package_versions(
    names: Sequence[str] = ("neo4j", "neo4j-rust-ext", "neo4j-graphrag", "langchain-neo4j", "wordllama", "numpy"),
) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def load_average() -> str:
    """The 1/5/15-minute load average: other work on the machine shows here."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def machine_info() -> dict[str, Any]:
    return {
        "load_average_at_start": load_average(),
        "cores": os.cpu_count(),
        "memory_gib": _meminfo_gib(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": package_versions(),
    }


# --- server -------------------------------------------------------------------------------


@dataclass
class BenchServer:
    """A fresh local server, a driver on it and the facts a report prints about it."""

    settings: Neo4jSettings
    driver: neo4j.Driver
    neo4j_version: str
    heap: str
    pagecache: str
    pid: int | None = None

    def cpu_seconds(self) -> float | None:
        """CPU seconds the server process has used so far (user + system): what a write cost
        the database whatever else the machine was doing."""
        return process_cpu_seconds(self.pid) if self.pid else None

    def store(self, namespace: str = "bench", **options: Any) -> Neo4jStore:
        return Neo4jStore(self.driver, namespace=namespace, database=self.settings.database, **options)


@contextlib.contextmanager
def bench_server(*, heap: str = "2g", pagecache: str = "1g", version: str | None = None) -> Iterator[BenchServer]:
    """An empty database on a fresh local Neo4j (``version``, default the LTS), stopped and
    deleted afterwards."""
    started = time.perf_counter()
    with disposable_server(heap=heap, pagecache=pagecache, version=version) as server:
        settings = server.status().settings()
        driver = connect_driver(settings, max_retry_seconds=60.0)
        try:
            version = Neo4jStore(driver).verify()["version"]
            print(
                f"  (fresh Neo4j {version} on {settings.redacted_uri}, heap {heap}, page cache {pagecache}, "
                f"started in {time.perf_counter() - started:.1f}s)",
                flush=True,
            )
            yield BenchServer(settings, driver, version, heap, pagecache, server.status().pid)
        finally:
            driver.close()


def bench_cypher(name: str) -> str:
    """A statement of ``bench/cypher/<name>.cypher`` without its ``//`` header lines.

    Benchmark Cypher (the raw ceiling, the peers' retrieval queries) is not library code,
    so it lives here and not in the library's registry; it is parameterised all the same.
    """
    lines = (CYPHER_DIR / f"{name}.cypher").read_text().splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("//")).strip()


def clear_database(driver: neo4j.Driver, *, drop_vector_indexes: bool = False) -> None:
    """Empty the database (nodes and relationships); optionally drop the chunk vector and
    full-text indexes too, for a run that must start from empty indexes or other dimensions."""
    with driver.session() as session:
        session.run(bench_cypher("clear_database")).consume()
        if drop_vector_indexes:
            for statement in bench_cypher("drop_chunk_indexes").split(";"):
                if statement.strip():
                    session.run(statement).consume()


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process (Linux ``/proc``), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


# --- timing -------------------------------------------------------------------------------


def wait_measured(proc: subprocess.Popen) -> tuple[int, float]:
    """Wait for ``proc``; return its exit code and its peak resident set in MB.

    The peak is the kernel's high-water mark of the process's own memory (``VmHWM``), read
    until it exits: ``wait4``'s ``ru_maxrss`` is no good here, since Linux carries the
    parent's resident set at the fork over the exec, so a child of a large benchmark process
    reported the benchmark's size."""
    peak_kb = 0
    status_file = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            for line in status_file.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak_kb = max(peak_kb, int(line.split()[1]))
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    return proc.returncode, round(peak_kb / 1024, 1)


def stats_ms(samples: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / mean / min / max in milliseconds of durations given in seconds."""
    ms = sorted(s * 1000.0 for s in samples)
    if not ms:
        return {"n": 0}

    def pct(q: float) -> float:
        # nearest-rank on the sorted samples, as most latency tools report
        k = max(0, min(len(ms) - 1, int(round(q * (len(ms) - 1)))))
        return ms[k]

    return {
        "n": len(ms),
        "p50": round(pct(0.50), 3),
        "p95": round(pct(0.95), 3),
        "mean": round(statistics.fmean(ms), 3),
        "min": round(ms[0], 3),
        "max": round(ms[-1], 3),
    }


def time_calls(fn: Callable[[Any], Any], inputs: Sequence[Any], *, warmup: int = 20) -> tuple[list[float], list[Any]]:
    """Call ``fn`` once per input after ``warmup`` untimed calls; durations in seconds."""
    for x in list(inputs)[:warmup]:
        fn(x)
    durations, outputs = [], []
    for x in inputs:
        t0 = time.perf_counter()
        out = fn(x)
        durations.append(time.perf_counter() - t0)
        outputs.append(out)
    return durations, outputs


# --- output -------------------------------------------------------------------------------


def fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[fmt(c) for c in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) if cells else len(str(h)) for i, h in enumerate(headers)]
    print(f"\n{title}")
    print("  " + "  ".join(str(h).ljust(w) if i == 0 else str(h).rjust(w) for i, (h, w) in enumerate(zip(headers, widths))))
    print("  " + "  ".join("-" * w for w in widths))
    for r in cells:
        print("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    sys.stdout.flush()


def print_header(
    name: str, *, neo4j_version: str, embedder: str, sizes: Any, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Print and return the facts every result carries."""
    info = machine_info()
    head = {
        "benchmark": name,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "neo4j": neo4j_version,
        "embedder": embedder,
        "sizes": sizes,
        "machine": info,
        "command": "python -m bench " + " ".join(sys.argv[1:]),
        **(extra or {}),
    }
    print(f"\n=== {name} ===")
    print(f"  date      {head['date']}")
    print(f"  neo4j     {neo4j_version} (Community, local jars)")
    print(f"  machine   {info['cores']} cores, {info['memory_gib']} GiB RAM, {info['cpu']}")
    print(f"  load avg  {info['load_average_at_start']} (1/5/15 min, at start)")
    print(f"  python    {info['python']}; " + ", ".join(f"{k} {v}" for k, v in info["packages"].items()))
    print(f"  embedder  {embedder}")
    print(f"  sizes     {sizes}")
    for k, v in (extra or {}).items():
        print(f"  {k:<9} {v}")
    sys.stdout.flush()
    return head


def result_name(name: str, args: Any) -> str:
    """``latency`` for a full run, ``latency-quick`` for the quick suite's small sizes; a run on
    another Neo4j than the default adds its version (``latency-2025.10.1``), so it sits beside
    the LTS results instead of replacing them."""
    base = f"{name}-quick" if getattr(args, "quick", False) else name
    version = getattr(args, "neo4j_version", None)
    return f"{base}-{version}" if version and version != NEO4J_VERSION else base


def add_version_argument(p: argparse.ArgumentParser) -> None:
    """``--neo4j-version`` (the latency and ingest benchmarks; once on a suite's shared parser)."""
    try:
        p.add_argument(
            "--neo4j-version",
            dest="neo4j_version",
            type=_neo4j_version,
            default=None,
            help=f"Neo4j version of the fresh server (default {NEO4J_VERSION}; e.g. {NEO4J_CALVER_VERSION})",
        )
    except argparse.ArgumentError:
        pass


def _neo4j_version(text: str) -> str:
    try:
        return release(text).version
    except ServerError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def write_results(name: str, payload: dict[str, Any], json_out: str | None = None) -> Path:
    """``bench/results/<name>.json`` (what ``report`` reads), plus ``json_out`` if given."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    text = json.dumps(payload, indent=2, default=str)
    path.write_text(text)
    if json_out:
        Path(json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(json_out).write_text(text)
    print(f"\n  results -> {path}" + (f" and {json_out}" if json_out else ""))
    return path
