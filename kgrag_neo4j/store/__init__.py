"""The Neo4j adapter: the only package that imports the neo4j driver."""

from .namespaces import NamespaceInfo
from .neo4j_store import Neo4jStore
from .runner import CypherRunner, connect_driver

__all__ = ["CypherRunner", "NamespaceInfo", "Neo4jStore", "connect_driver"]
