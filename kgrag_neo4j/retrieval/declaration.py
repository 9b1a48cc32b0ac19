"""A retrieval mode, declared once, next to its retriever.

    VECTOR_MODE = declare_mode(
        "vector", VectorRetriever,
        description="semantic (embedding) search over the passages",
        options={"min_score": "drop results scoring below this."},
    )

A declaration names the mode, its retriever class, what the mode is for, and which of the
retriever's keywords are the mode's options, each with its help. The type and the default of
every option are read from the retriever's signature, or from the fields of its option
dataclass (``options_from``), so they are written once, where the retriever defines them.
``build_retriever``, ``kgrag search`` (its ``--mode`` choices, flags, refusals and help),
``kgrag ask``, the MCP tools and the package's exports read declarations through the
registry (:mod:`kgrag_neo4j.retrieval.registry`).

An option whose type a command line can carry (a number, a flag, text, a comma-separated list
of those) becomes a ``kgrag search`` flag named after it (``max_hops`` -> ``--max-hops``)
unless ``mode_option(flag=...)`` names another, or ``flag=None`` keeps it off the command line.
Two modes that give an option the same flag share it (``--hops`` is graph's and entity's
``max_hops``), so they must agree on its type.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError

__all__ = ["ModeOption", "OptionSpec", "RetrievalMode", "declare_mode", "mode_option"]

#: a mode name: it is a ``--mode`` choice and part of an MCP tool name (``search_<mode>``)
MODE_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
#: a flag name, without its dashes
FLAG_NAME = re.compile(r"[a-z][a-z0-9-]{0,59}")
#: the value types a command line carries (a list is these, comma-separated)
SCALARS = (bool, int, float, str)


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """What a declaration says of one option besides its type and default: see :func:`mode_option`."""

    help: str
    flag: str | None = ""
    choices: tuple[str, ...] = ()


def mode_option(help: str, *, flag: str | None = "", choices: Sequence[str] = ()) -> OptionSpec:
    """An option's help (one sentence, ending with a full stop); ``flag``: its ``kgrag search``
    flag without dashes when not the option's name, or None for none; ``choices``: the values
    a text option takes."""
    return OptionSpec(help=help, flag=flag, choices=tuple(choices))


@dataclass(frozen=True, slots=True)
class ModeOption:
    """One option of a mode: the retriever's keyword ``name``, its type and default (read from
    the retriever), its help and its ``kgrag search`` flag (None: not on the command line)."""

    name: str
    type: Any
    default: Any
    help: str
    flag: str | None = None
    choices: tuple[str, ...] = ()

    @property
    def nullable(self) -> bool:
        """None is a value of it (``int | None``): None means "the retriever decides"."""
        return type(None) in typing.get_args(self.type) and _is_union(self.type)

    @property
    def value_type(self) -> Any:
        """The type without ``None`` (``int | None`` -> ``int``)."""
        if _is_union(self.type):
            rest = [a for a in typing.get_args(self.type) if a is not type(None)]
            return rest[0] if len(rest) == 1 else self.type
        return self.type

    @property
    def item_type(self) -> Any:
        """The type of the items of a list option (``tuple[float, ...]`` -> ``float``); None
        for an option that is no list."""
        origin = typing.get_origin(self.value_type)
        if origin in (tuple, list, Sequence, frozenset, set):
            args = [a for a in typing.get_args(self.value_type) if a is not Ellipsis]
            return args[0] if len(set(args)) == 1 else None
        return None

    @property
    def command_line(self) -> bool:
        """Its type is one a command line carries: a number, a flag, text, or a list of them."""
        item = self.item_type
        if item is not None:
            return isinstance(item, type) and issubclass(item, (int, float, str)) and not issubclass(item, bool)
        value = self.value_type
        return isinstance(value, type) and value in SCALARS


@dataclass(frozen=True, slots=True)
class RetrievalMode:
    """A retrieval mode: its name, its retriever, what it is for (``description``, for agents
    and MCP clients; ``summary``, the few words ``kgrag search --help`` puts after its name),
    its options, and what it needs of the store."""

    name: str
    retriever: Callable[..., Any]
    description: str
    options: tuple[ModeOption, ...] = ()
    summary: str = ""
    #: the store capability (a runtime-checkable protocol) the mode needs, and how to name it
    needs: type | None = None
    needs_text: str = ""
    #: its answers follow the entity graph (entity seeds, shared-entity links, mentions), so
    #: documents not linked into it yet cannot be reached that way
    follows_entities: bool = False

    @property
    def option_names(self) -> frozenset[str]:
        """The keywords the mode honours (besides ``filters``, which every mode honours)."""
        return frozenset(o.name for o in self.options)

    def option(self, name: str) -> ModeOption | None:
        return next((o for o in self.options if o.name == name), None)

    def flag_option(self, flag: str) -> ModeOption | None:
        """The option the ``kgrag search`` flag ``flag`` (no dashes) sets in this mode."""
        return next((o for o in self.options if o.flag == flag), None)

    def build(self, store: Any, embedder: Any, *, filters: Sequence[Any] = (), **options: Any) -> Any:
        """The retriever over ``store`` with ``options`` (checked by the caller:
        ``modes.build_retriever``); a store without the capability the mode needs is refused."""
        if self.needs is not None and not isinstance(store, self.needs):
            raise ConfigurationError(f"{self.name} mode needs a store with {self.needs_text or self.needs.__name__}")
        return self.retriever(store, embedder, filters=tuple(filters), **options)


def declare_mode(
    name: str,
    retriever: type,
    *,
    description: str,
    options: Mapping[str, OptionSpec | str] = {},  # noqa: B006 (read only)
    options_from: type | None = None,
    summary: str = "",
    needs: type | None = None,
    needs_text: str = "",
    follows_entities: bool = False,
) -> RetrievalMode:
    """The declaration of mode ``name``, whose retriever is ``retriever`` (called as
    ``retriever(store, embedder, filters=..., **options)``). ``options``: option name -> help
    (or :func:`mode_option`), in the order ``--help`` lists them; each is a keyword-only
    parameter of the retriever or a field of ``options_from``, the dataclass its extra keywords
    go to. A declaration the retriever contradicts is a ``ConfigurationError``."""
    if not isinstance(name, str) or not MODE_NAME.fullmatch(name):
        raise ConfigurationError(f"mode name {name!r}: lower-case letters, digits and _, starting with a letter")
    if not description or not isinstance(description, str):
        raise ConfigurationError(f"mode {name!r} needs a description")
    params, hints = _keywords(retriever)
    if "filters" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        raise ConfigurationError(f"mode {name!r}: {retriever.__name__} takes no filters keyword (every mode honours filters)")
    fields, field_hints = _fields(options_from) if options_from is not None else ({}, {})
    declared = []
    for option_name, spec in options.items():
        spec = OptionSpec(help=spec) if isinstance(spec, str) else spec
        param = params.get(option_name)
        if param is not None and param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD):
            if param.default is param.empty:
                raise ConfigurationError(f"mode {name!r}: option {option_name!r} of {retriever.__name__} has no default")
            kind, default = hints.get(option_name, Any), param.default
        elif option_name in fields:
            kind, default = field_hints.get(option_name, Any), fields[option_name]
        else:
            where = f"{retriever.__name__}" + (f" or {options_from.__name__}" if options_from is not None else "")
            raise ConfigurationError(f"mode {name!r}: {where} takes no option {option_name!r}")
        declared.append(_option(name, option_name, kind, default, spec))
    return RetrievalMode(
        name=name, retriever=retriever, description=description, options=tuple(declared), summary=summary,
        needs=needs, needs_text=needs_text, follows_entities=follows_entities,
    )  # fmt: skip


def _option(mode: str, name: str, kind: Any, default: Any, spec: OptionSpec) -> ModeOption:
    option = ModeOption(name=name, type=kind, default=default, help=spec.help, choices=spec.choices)
    if spec.flag is None:
        return option
    if not option.command_line:
        if spec.flag:  # asked for a flag its type cannot have
            raise ConfigurationError(f"mode {mode!r}: option {name!r} ({kind}) cannot be a command-line flag")
        return option  # e.g. a reranker object: an option in Python only
    flag = spec.flag or name.replace("_", "-")
    if not FLAG_NAME.fullmatch(flag) or flag.startswith("no-"):
        raise ConfigurationError(f"mode {mode!r}: option {name!r} cannot be the flag --{flag}")
    if not spec.help:
        raise ConfigurationError(f"mode {mode!r}: option {name!r} needs a help text (its flag's)")
    return dataclasses.replace(option, flag=flag)


def _keywords(retriever: type) -> tuple[Mapping[str, inspect.Parameter], dict[str, Any]]:
    """The parameters of ``retriever``'s constructor and their types, resolved."""
    try:
        params = inspect.signature(retriever).parameters
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"cannot read the signature of {retriever!r}: {exc}") from None
    constructor: Any = retriever  # its __init__ holds the annotations, a class's own are its attributes
    return params, _hints(constructor.__init__ if isinstance(retriever, type) else retriever, retriever)


def _fields(options_from: type) -> tuple[dict[str, Any], dict[str, Any]]:
    if not dataclasses.is_dataclass(options_from):
        raise ConfigurationError(f"options_from must be a dataclass, got {options_from!r}")
    defaults: dict[str, Any] = {}
    for f in dataclasses.fields(options_from):
        if f.default is not dataclasses.MISSING:
            defaults[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            defaults[f.name] = f.default_factory()
    return defaults, _hints(options_from, options_from)


def _hints(obj: Any, owner: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj)
    except Exception as exc:  # an annotation naming what only a type checker imports
        raise ConfigurationError(f"cannot resolve the annotations of {getattr(owner, '__name__', owner)}: {exc}") from None


def _is_union(kind: Any) -> bool:
    return typing.get_origin(kind) in (typing.Union, types.UnionType)
