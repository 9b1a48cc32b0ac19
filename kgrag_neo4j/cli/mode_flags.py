"""The command-line side of the retrieval modes: ``--mode`` choices and the tuning flags of
``kgrag search``, made from the modes' declarations (``retrieval/declaration.py``).

They are made when a command is parsed or its help is shown, not when the CLI is imported:
``kgrag --help`` and the commands that search nothing import no retriever and look up no
plugin. A mode registered later (``register_mode``) is in the next parse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import click

from ..errors import InputError
from .context import FINITE_FLOAT

__all__ = ["ModeChoice", "ModeCommand", "ModeFlag", "mode_flags", "modes_text", "parse_flag_value"]


class ModeChoice(click.Choice):
    """``--mode``'s choices: the registered modes, read when first needed."""

    def __init__(self) -> None:
        super().__init__(())

    @property  # click stores choices as an attribute; these are read live
    def choices(self) -> tuple[str, ...]:
        from ..retrieval.registry import mode_names

        return mode_names()

    @choices.setter
    def choices(self, value: Any) -> None:
        pass  # the registry is the only source


class ModeCommand(click.Command):
    """A command some of whose parameters come from the modes: ``mode_params`` turns the
    declared parameters into the whole list, made on first use and again after the modes
    changed (``registry.generation``)."""

    def __init__(self, *args: Any, mode_params: Callable[[list[click.Parameter]], list[click.Parameter]], **kwargs: Any) -> None:
        self._mode_params = mode_params
        self._declared: list[click.Parameter] = []
        self._made: tuple[int, list[click.Parameter]] | None = None
        super().__init__(*args, **kwargs)
        # the command is defined where its callback is (search_cmd), not where its class is
        self.__module__ = getattr(self.callback, "__module__", __name__)

    @property  # click stores params as an attribute; some are made on use
    def params(self) -> list[click.Parameter]:
        from ..errors import KgragError
        from ..retrieval.registry import generation

        now = generation()
        if self._made is None or self._made[0] != now:
            try:
                self._made = (now, self._mode_params(list(self._declared)))
            except KgragError as exc:  # a mode whose flags cannot be made: one line, not a traceback
                raise click.ClickException(str(exc)) from None
        return self._made[1]

    @params.setter
    def params(self, value: list[click.Parameter]) -> None:
        self._declared = list(value)
        self._made = None


@dataclass(frozen=True, slots=True)
class ModeFlag:
    """One ``kgrag search`` flag and the option it sets in each mode that takes it."""

    flag: str
    #: mode name -> the option (its retriever keyword) the flag sets there
    options: dict[str, str]
    item_type: Any = None  # a list option's item type: the flag takes them comma-separated

    @property
    def param(self) -> str:
        return self.flag.replace("-", "_")


def modes_text(names: Sequence[str]) -> str:
    """``graph mode``, ``graph and ppr modes``, ``vector, hybrid and local modes``."""
    if len(names) == 1:
        return f"{names[0]} mode"
    return f"{', '.join(names[:-1])} and {names[-1]} modes"


def mode_flags() -> list[tuple[ModeFlag, click.Option]]:
    """Every flag the modes declare, in the order of the modes and then of their options; a
    flag two modes share is one option (``--hops``), its default shown when they agree."""
    from ..retrieval.registry import modes

    takers: dict[str, list[tuple[str, Any]]] = {}
    for mode in modes():
        for option in mode.options:
            if option.flag is not None:
                takers.setdefault(option.flag, []).append((mode.name, option))
    return [_flag(flag, found) for flag, found in takers.items()]


def _flag(flag: str, takers: list[tuple[str, Any]]) -> tuple[ModeFlag, click.Option]:
    first = takers[0][1]
    defaults = [_shown(o) for _, o in takers]
    default = defaults[0] if len(set(map(repr, defaults))) == 1 else None
    help_text = first.help
    if default is None and any(d is not None for d in defaults):  # the modes differ: say each one's
        help_text = help_text.rstrip(".") + f" (default {' / '.join(str(d) for d in defaults)})."
    help_text = f"{modes_text([m for m, _ in takers])}: {help_text}"
    value, kwargs = first.value_type, {}
    if first.item_type is not None:
        kind: Any = str
    elif value is bool:
        kind = None
        kwargs = {"is_flag": True} if first.default is False and not first.nullable else {}
    elif value is float:
        kind = FINITE_FLOAT
    elif first.choices:
        kind = click.Choice(first.choices)
    else:
        kind = value
    decls = [f"--{flag}"] if value is not bool or kwargs else [f"--{flag}/--no-{flag}"]
    show = default is not None and default is not False
    option = click.Option(decls, type=kind, default=default, show_default=show, help=help_text, **kwargs)
    return ModeFlag(flag, {m: o.name for m, o in takers}, first.item_type), option


def _shown(option: Any) -> Any:
    """The default as the command line writes it (a list comma-separated; none: None)."""
    default = option.default
    if option.item_type is not None:
        return ",".join(str(getattr(v, "value", v)) for v in default) if default else None
    return default


def parse_flag_value(flag: ModeFlag, value: Any) -> Any:
    """A flag's value as its option takes it: a list flag's text split at commas (numbers
    checked), any other as click parsed it."""
    if flag.item_type is None:
        return value
    items = [v.strip() for v in str(value).split(",") if v.strip()]
    if issubclass(flag.item_type, (int, float)) and not issubclass(flag.item_type, bool):
        try:
            numbers = tuple(flag.item_type(v) for v in items)
        except ValueError:
            raise InputError(f"--{flag.flag} takes numbers separated by commas, got {value!r}") from None
        if not numbers:
            raise InputError(f"--{flag.flag} needs at least one number")
        return numbers
    return tuple(items)
