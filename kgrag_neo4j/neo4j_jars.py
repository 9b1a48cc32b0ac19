"""The Neo4j server and Browser jars, resolved with one Maven step into a cache folder named
after the jar set, once; a half-resolved folder is never taken for a complete one."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .errors import ServerError
from .neo4j_release import BROWSER_VERSION, NEO4J_VERSION

__all__ = ["cache_root", "install", "jars_dir"]


_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kgrag-neo4j</groupId>
  <artifactId>neo4j-jars</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>org.neo4j</groupId>
      <artifactId>neo4j</artifactId>
      <version>{version}</version>
    </dependency>
    <dependency>
      <groupId>org.neo4j.client</groupId>
      <artifactId>neo4j-browser</artifactId>
      <version>{browser_version}</version>
    </dependency>
  </dependencies>
</project>
"""


def cache_root() -> Path:
    return Path(os.environ.get("KGRAG_CACHE_DIR") or Path.home() / ".cache" / "kgrag-neo4j")


def _jar_set(version: str, browser_version: str) -> str:
    return f"neo4j-{version}+browser-{browser_version}"


def jars_dir(version: str = NEO4J_VERSION, browser_version: str = BROWSER_VERSION) -> Path:
    """Each jar set has its own folder, so a cache holding an older set (another checkout, an
    older kgrag) stays usable by it while this one resolves its own."""
    return cache_root() / _jar_set(version, browser_version) / "lib"


def _complete(lib: Path, pom: str, version: str, browser_version: str) -> bool:
    """The marker names exactly the POM the folder was resolved from, and the jars it asks
    for are there: a folder from another jar set or a half-copied one is never taken."""
    try:
        marker = (lib.parent / ".complete").read_text()
    except OSError:
        return False
    return (
        marker == hashlib.sha256(pom.encode()).hexdigest()
        and (lib / f"neo4j-{version}.jar").is_file()
        and (lib / f"neo4j-browser-{browser_version}.jar").is_file()
    )


def install(version: str = NEO4J_VERSION, *, browser_version: str = BROWSER_VERSION, echo=None) -> Path:
    """Resolve the Neo4j server and Browser jars into the cache once; later calls return at once."""
    lib = jars_dir(version, browser_version)
    pom = _POM.format(version=version, browser_version=browser_version)
    if _complete(lib, pom, version, browser_version):
        return lib
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ServerError(
            "Maven (mvn) is not on PATH; it resolves the Neo4j jars. Install it "
            "(apt-get install maven) or point NEO4J_URI at a running server."
        )
    home = lib.parent
    home.mkdir(parents=True, exist_ok=True)
    (home / "pom.xml").write_text(pom)
    staging = Path(tempfile.mkdtemp(prefix="lib-", dir=home))
    if echo:
        echo(
            f"Resolving org.neo4j:neo4j:{version} and org.neo4j.client:neo4j-browser:{browser_version} with Maven into {lib} ..."
        )
    proc = subprocess.run(
        [
            mvn,
            "-q",
            "-B",
            "-f",
            str(home / "pom.xml"),
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={staging}",
        ],
        capture_output=True,
        text=True,
    )
    wanted = (f"neo4j-{version}.jar", f"neo4j-browser-{browser_version}.jar")
    if proc.returncode != 0 or not all((staging / name).is_file() for name in wanted):
        shutil.rmtree(staging, ignore_errors=True)
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise ServerError(
            f"Maven could not resolve org.neo4j:neo4j:{version} and org.neo4j.client:neo4j-browser:{browser_version}:\n{tail}"
        )
    (home / ".complete").unlink(missing_ok=True)
    if lib.exists():
        shutil.rmtree(lib)
    staging.rename(lib)  # atomic: a half-downloaded set is never taken for a complete one
    (home / ".complete").write_text(hashlib.sha256(pom.encode()).hexdigest())
    return lib
