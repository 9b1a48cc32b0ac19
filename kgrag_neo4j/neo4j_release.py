"""The Neo4j releases kgrag runs: the 5.26 LTS by default, the calendar-versioned ones (2025.01
and later, what Aura runs) on request, with the Java majors and entry point each needs."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ServerError

__all__ = ["BROWSER_VERSION", "MAIN_CLASSES", "NEO4J_CALVER_VERSION", "NEO4J_VERSION", "Neo4jRelease", "release"]


NEO4J_VERSION = "5.26.29"
#: the calendar-versioned release the tests also run on (`make test`; what Aura runs is of this line)
NEO4J_CALVER_VERSION = "2025.10.1"
#: the newest org.neo4j.client:neo4j-browser on Maven Central; the server serves it at /browser/
BROWSER_VERSION = "5.24.0"
#: 2025.01 renamed the entry point; both names mark a process as a Neo4j of ours
MAIN_CLASSES = ("org.neo4j.server.CommunityEntryPoint", "org.neo4j.server.Neo4jCommunity")


_LTS = re.compile(r"^5\.26\.\d+$")
_CALVER = re.compile(r"^(20\d\d)\.(\d\d)\.(\d+)$")


@dataclass(frozen=True)
class Neo4jRelease:
    """A Neo4j version kgrag can run, with what it needs: the Java majors Neo4j supports for it
    and its entry-point class."""

    version: str
    calendar: bool
    java: tuple[int, ...]
    main_class: str

    @property
    def line(self) -> str:
        """What error messages call it: ``5.26`` or ``2025.10``."""
        return ".".join(self.version.split(".")[:2])

    @property
    def cypher_25(self) -> bool:
        """Whether the server offers Cypher 25 beside Cypher 5 (from 2025.06; from 2026.02 Neo4j's
        own neo4j.conf makes it the default language of new databases)."""
        year, month = (int(x) for x in self.version.split(".")[:2])
        return self.calendar and (year, month) >= (2025, 6)


def release(version: str) -> Neo4jRelease:
    """The release for ``version``: 5.26.x (the LTS) or a calendar version from 2025.01 on;
    anything else is refused (the Cypher in cypher/ needs 5.26's syntax and vector search)."""
    if _LTS.match(version):
        return Neo4jRelease(version, False, (17, 21), MAIN_CLASSES[0])
    m = _CALVER.match(version)
    if m and (int(m.group(1)), int(m.group(2))) >= (2025, 1) and 1 <= int(m.group(2)) <= 12:
        # Neo4j's upgrade guide: 2025.01 dropped Java 17; Java 25 is supported from 2025.10
        java = (21,) if (int(m.group(1)), int(m.group(2))) < (2025, 10) else (21, 25)
        return Neo4jRelease(version, True, java, MAIN_CLASSES[1])
    raise ServerError(
        f"Neo4j version {version!r} is not one kgrag runs: give 5.26.x (the LTS, default {NEO4J_VERSION}) "
        f"or a calendar version from 2025.01 on, such as {NEO4J_CALVER_VERSION}"
    )
