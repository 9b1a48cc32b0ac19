"""Administration of a local server before any store exists: the first password.

``kgrag server start`` (``server.py``) calls this once a fresh server answers; it lives here
because ``store/`` is the only package that imports the driver.
"""

from __future__ import annotations

import time

from neo4j import GraphDatabase
from neo4j import exceptions as neo4j_exc

from ..cypher_registry import load_registry
from ..errors import ServerError

__all__ = ["set_initial_password"]


def set_initial_password(port: int, password: str) -> None:
    """Replace the initial neo4j/neo4j password (which must be changed before any query)."""
    uri = f"bolt://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with GraphDatabase.driver(uri, auth=("neo4j", "neo4j")) as driver:
                driver.execute_query(
                    load_registry()["server/set_initial_password"].text,
                    old="neo4j",
                    new=password,
                    database_="system",
                )
            return
        except neo4j_exc.AuthError:
            # already changed (a state file lost its flag): check the recorded one works
            with GraphDatabase.driver(uri, auth=("neo4j", password)) as driver:
                driver.verify_connectivity()
            return
        except (neo4j_exc.ServiceUnavailable, neo4j_exc.TransientError, OSError) as exc:
            last = exc
            time.sleep(0.5)
    raise ServerError(f"could not set the initial password on {uri}: {last}")
