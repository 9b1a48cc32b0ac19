"""Every retrieval mode, collected from its declaration (:mod:`.declaration`).

The registry holds, in this order: the modes this package ships (declared in the retriever
modules), the modes other packages declare under the entry-point group ``kgrag_neo4j.modes``
(``toy = "my_package.toy:TOY_MODE"`` in their ``pyproject.toml``; each entry point names a
:class:`RetrievalMode`), and those a program adds with :func:`register_mode`. It is read on
first use, not at import: ``import kgrag_neo4j`` and ``kgrag --help`` import no retriever and
look up no entry point.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

from ..errors import ConfigurationError
from .declaration import ModeOption, RetrievalMode

__all__ = [
    "DEFAULT_MODE",
    "ENTRY_POINT_GROUP",
    "generation",
    "get_mode",
    "mode_names",
    "modes",
    "register_mode",
    "unregister_mode",
]

#: what ``kgrag search`` and ``kgrag ask`` use without ``--mode``
DEFAULT_MODE = "hybrid"
#: the entry-point group other packages declare their modes under
ENTRY_POINT_GROUP = "kgrag_neo4j.modes"

log = logging.getLogger("kgrag_neo4j.retrieval")

_lock = threading.RLock()
_loaded: dict[str, RetrievalMode] | None = None
_added: dict[str, RetrievalMode] = {}  # by register_mode, in registration order
_generation = 0
#: (generation, modes, names) as last read: the same tuples while nothing changes
_snapshot: tuple[int, tuple[RetrievalMode, ...], tuple[str, ...]] | None = None


def _shipped() -> tuple[RetrievalMode, ...]:
    """The modes of this package, in the order ``--mode`` lists them."""
    from .entity import ENTITY_MODE
    from .local_search import LOCAL_MODE
    from .ppr import PPR_MODE
    from .retrievers import GRAPH_MODE, HYBRID_MODE, VECTOR_MODE

    return (VECTOR_MODE, HYBRID_MODE, GRAPH_MODE, PPR_MODE, ENTITY_MODE, LOCAL_MODE)


def _plugins() -> list[RetrievalMode]:
    """The modes of the installed packages' entry points, by entry-point name. One that fails
    to load is left out with a warning: a broken plugin must not take every search down."""
    from importlib.metadata import entry_points

    found = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        try:
            mode = ep.load()
            if not isinstance(mode, RetrievalMode):
                raise ConfigurationError(f"{ep.value} is a {type(mode).__name__}, not a RetrievalMode")
        except Exception as exc:
            log.warning("retrieval mode %r (%s) left out: %s", ep.name, ep.value, exc)
            continue
        found.append(mode)
    return found


def _load() -> dict[str, RetrievalMode]:
    global _loaded
    with _lock:
        if _loaded is None:
            table: dict[str, RetrievalMode] = {}
            for mode in _shipped():
                _add(table, mode)
            for mode in _plugins():
                try:
                    _add(table, mode)
                except ConfigurationError as exc:
                    log.warning("retrieval mode %r left out: %s", mode.name, exc)
            _loaded = table
        return _loaded


def _table() -> dict[str, RetrievalMode]:
    table = dict(_load())
    table.update(_added)
    return table


def _add(table: dict[str, RetrievalMode], mode: RetrievalMode) -> None:
    """Add ``mode`` to ``table``, refusing a name taken or a flag another mode gives another type."""
    if mode.name in table:
        raise ConfigurationError(f"retrieval mode {mode.name!r} is already registered")
    _check_flags(mode, table.values())
    table[mode.name] = mode


def _check_flags(mode: RetrievalMode, others: Iterable[RetrievalMode]) -> None:
    """A flag two modes share is one ``kgrag search`` option: one type, one set of choices."""
    for option in mode.options:
        if option.flag is None:
            continue
        for other in others:
            theirs = other.flag_option(option.flag)
            if theirs is not None and _shape(theirs) != _shape(option):
                raise ConfigurationError(
                    f"mode {mode.name!r}: --{option.flag} is {other.name!r}'s {theirs.name} ({theirs.type}); "
                    f"{option.name} ({option.type}) needs another flag"
                )


def _shape(option: ModeOption) -> tuple[object, ...]:
    return (option.value_type, option.item_type, option.choices)


def register_mode(mode: RetrievalMode) -> RetrievalMode:
    """Add ``mode`` (a :func:`~kgrag_neo4j.retrieval.declaration.declare_mode`) to the modes
    ``build_retriever``, ``kgrag search`` and the MCP server offer; returns it. A name already
    taken is refused (``unregister_mode`` first to replace one)."""
    global _generation
    if not isinstance(mode, RetrievalMode):
        raise ConfigurationError(f"register_mode takes a RetrievalMode (declare_mode), got {type(mode).__name__}")
    with _lock:
        table = _table()
        _add(table, mode)
        _added[mode.name] = mode
        _generation += 1
    return mode


def unregister_mode(name: str) -> None:
    """Remove a mode ``register_mode`` added (the shipped and plugin modes stay)."""
    global _generation
    with _lock:
        if name not in _added:
            raise ConfigurationError(f"retrieval mode {name!r} was not added by register_mode")
        del _added[name]
        _generation += 1


def _current() -> tuple[int, tuple[RetrievalMode, ...], tuple[str, ...]]:
    global _snapshot
    with _lock:
        if _snapshot is None or _snapshot[0] != _generation:
            table = _table()
            _snapshot = (_generation, tuple(table.values()), tuple(table))
        return _snapshot


def modes() -> tuple[RetrievalMode, ...]:
    """Every mode: the shipped ones, then plugins', then those ``register_mode`` added."""
    return _current()[1]


def mode_names() -> tuple[str, ...]:
    """The names of :func:`modes` (the same tuple while no mode is added or removed)."""
    return _current()[2]


def get_mode(name: str) -> RetrievalMode:
    """The declaration of mode ``name``; an unknown name is a ``ConfigurationError`` listing the modes."""
    found = _current()[1]
    mode = next((m for m in found if m.name == name), None)
    if mode is None:
        raise ConfigurationError(f"unknown mode {name!r}; choose one of {', '.join(m.name for m in found)}")
    return mode


def generation() -> int:
    """Changes whenever ``register_mode`` or ``unregister_mode`` changes the modes: what a
    command line built from them compares to know it is current (cheap: reads nothing)."""
    return _generation
