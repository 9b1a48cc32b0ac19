"""Connection settings. The library takes them explicitly; only the CLI reads the environment."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from .errors import ConfigurationError

__all__ = ["Neo4jSettings", "DEFAULT_NAMESPACE", "validate_namespace"]

DEFAULT_NAMESPACE = "default"
_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


@dataclass(frozen=True)
class Neo4jSettings:
    """Where the database is and who we are. ``password`` never appears in ``repr``."""

    uri: str = "bolt://127.0.0.1:7687"
    user: str = "neo4j"
    password: str | None = field(default=None, repr=False)
    database: str | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.uri)
        try:
            parts.port  # noqa: B018 (reading it validates it: ValueError for a bad port)
        except ValueError:
            # the message names the host only: the URI may carry a password
            raise ConfigurationError(
                f"the port in Neo4j URI {parts.scheme}://{parts.hostname or ''} is not a number in 0..65535"
            ) from None
        if parts.scheme not in _SCHEMES:
            raise ConfigurationError(
                f"unsupported Neo4j URI scheme {parts.scheme!r} in {self.redacted_uri}; use one of: {', '.join(_SCHEMES)}"
            )

    @property
    def redacted_uri(self) -> str:
        """The URI without any ``user:password@`` part."""
        parts = urlsplit(self.uri)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return f"{parts.scheme}://{host}{parts.path}"

    @property
    def routing(self) -> bool:
        return self.uri.startswith("neo4j")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: str | None) -> Neo4jSettings:
        """Read ``NEO4J_URI``, ``NEO4J_USERNAME``, ``NEO4J_PASSWORD``, ``NEO4J_DATABASE``;
        keyword overrides that are not None win."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {
            "uri": env.get("NEO4J_URI") or cls.uri,
            "user": env.get("NEO4J_USERNAME") or env.get("NEO4J_USER") or cls.user,
            "password": env.get("NEO4J_PASSWORD"),
            "database": env.get("NEO4J_DATABASE") or None,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def with_(self, **changes: Any) -> Neo4jSettings:
        return replace(self, **changes)

    def public_dict(self) -> dict[str, str | None]:
        """What may be printed: never the password."""
        return {"uri": self.redacted_uri, "user": self.user, "database": self.database}


_NAMESPACE_MAX = 128


#: characters a namespace may not hold: controls, format characters (zero-width, bidi
#: overrides), surrogates, private-use and unassigned code points, line and paragraph
#: separators. Two names that print alike must be one name.
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

#: scripts one name may mix (Unicode's "highly restrictive" identifiers, UTS #39): Japanese,
#: Chinese and Korean names are written in several scripts, each with Latin; any other name
#: keeps to one script, so a Cyrillic "і" cannot pass for the Latin "i" of another tenant
_SCRIPT_SETS = (
    frozenset({"LATIN", "CJK", "IDEOGRAPHIC", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA"}),
    frozenset({"LATIN", "CJK", "IDEOGRAPHIC", "BOPOMOFO"}),
    frozenset({"LATIN", "CJK", "IDEOGRAPHIC", "HANGUL"}),
)


def _script(ch: str) -> str | None:
    """The script of a letter, as the first word of its Unicode name (LATIN, CYRILLIC, GREEK,
    CJK, ...); None for digits, punctuation, symbols, spaces and marks, which any script uses."""
    if not unicodedata.category(ch).startswith("L"):
        return None
    word = unicodedata.name(ch, "").split(" ")[0]
    return None if word in ("", "MODIFIER") else word


def validate_namespace(namespace: str, *, look_alikes: bool = True) -> str:
    """Namespaces are parameter values, never Cypher text; still, keep them visible and short
    so they read well in Browser and in logs, and so no two look the same: no leading or
    trailing space (" victim" is not "victim"), nothing invisible, the Unicode normal form
    NFKC (no compatibility look-alikes such as a full-width "ｖ"), and letters of one script
    (or of Japanese, Chinese or Korean with Latin). ``look_alikes=False`` skips the last
    three: for a name the database already holds, made before they were refused, so it can
    still be deleted."""
    if not isinstance(namespace, str) or not namespace.strip():
        raise ConfigurationError("namespace must be a non-empty string")
    if len(namespace) > _NAMESPACE_MAX:
        raise ConfigurationError(f"namespace is longer than {_NAMESPACE_MAX} characters")
    for i, ch in enumerate(namespace):
        if unicodedata.category(ch) in _INVISIBLE:
            raise ConfigurationError(
                f"namespace must hold only visible characters; character {i + 1} is U+{ord(ch):04X} "
                f"({unicodedata.name(ch, 'a control, format or unassigned character')})"
            )
    if not look_alikes:
        return namespace
    if namespace != namespace.strip():
        raise ConfigurationError(f"namespace {namespace!r} starts or ends with a space; write it as {namespace.strip()!r}")
    normal = unicodedata.normalize("NFKC", namespace)
    if normal != namespace:
        raise ConfigurationError(
            f"namespace {namespace!r} is not in Unicode normal form NFKC (it has look-alike characters); write it as {normal!r}"
        )
    scripts = {s for s in map(_script, namespace) if s is not None}
    if len(scripts) > 1 and not any(scripts <= allowed for allowed in _SCRIPT_SETS):
        raise ConfigurationError(
            f"namespace {namespace!r} mixes the letters of {', '.join(sorted(scripts))} "
            "(look-alike letters could pass for another namespace); write it in one script"
        )
    return namespace
