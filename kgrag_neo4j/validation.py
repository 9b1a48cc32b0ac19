"""Checks of option values: one line naming the option, what it must be and what it got.

Every public constructor and option dataclass validates through these, so the wording is the
same everywhere and ``True`` is never taken for the integer 1 (``bool`` is an ``int`` in
Python). Options are configuration (``ConfigurationError``); values a caller passes per call
(``top_k`` of a query) are input (``InputError``): the caller says which with ``error=``.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

from .errors import ConfigurationError, KgragError

__all__ = ["MAX_TOP_K", "check_bool", "check_choice", "check_int", "check_number", "check_text"]

#: the most results one search may ask for; what a retriever asks of the store for them (a
#: multiple, to fuse or re-rank) is capped at it too, so a refusal names the caller's top_k
MAX_TOP_K = 1_000_000


def check_int(
    value: Any,
    name: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    error: type[KgragError] = ConfigurationError,
) -> int:
    """``value`` as an ``int`` within ``[minimum, maximum]`` (bounds inclusive, None: open)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{name} must be {_int_range(minimum, maximum)}, got {value!r}")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise error(f"{name} must be {_int_range(minimum, maximum)}, got {value!r}")
    return value


def check_number(
    value: Any,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    error: type[KgragError] = ConfigurationError,
) -> float:
    """``value`` as a finite ``float`` within ``[minimum, maximum]``; ``above`` is an exclusive
    lower bound (``above=0``: strictly positive)."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if ok and minimum is not None and value < minimum:
        ok = False
    if ok and maximum is not None and value > maximum:
        ok = False
    if ok and above is not None and not value > above:
        ok = False
    if not ok:
        raise error(f"{name} must be {_number_range(minimum, maximum, above)}, got {value!r}")
    return float(value)


def check_bool(value: Any, name: str, *, error: type[KgragError] = ConfigurationError) -> bool:
    if not isinstance(value, bool):
        raise error(f"{name} must be True or False, got {value!r}")
    return value


def check_choice(value: Any, name: str, choices: Collection[str], *, error: type[KgragError] = ConfigurationError) -> str:
    if not isinstance(value, str) or value not in choices:
        raise error(f"{name} must be one of {', '.join(sorted(choices))}, got {value!r}")
    return value


def check_text(value: Any, name: str, *, error: type[KgragError] = ConfigurationError) -> str:
    """Non-empty text (not only whitespace)."""
    if not isinstance(value, str) or not value.strip():
        raise error(f"{name} must be non-empty text, got {value!r}")
    return value


def _int_range(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f"an integer from {minimum} to {maximum}"
    if minimum == 1:
        return "a positive integer"
    if minimum == 0:
        return "a non-negative integer"
    if minimum is not None:
        return f"an integer of at least {minimum}"
    if maximum is not None:
        return f"an integer of at most {maximum}"
    return "an integer"


def _number_range(minimum: float | None, maximum: float | None, above: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f"a number in [{minimum:g}, {maximum:g}]"
    if above is not None:
        return "a positive number" if above == 0 else f"a number above {above:g}"
    if minimum is not None:
        return "a non-negative number" if minimum == 0 else f"a number of at least {minimum:g}"
    if maximum is not None:
        return f"a number of at most {maximum:g}"
    return "a finite number"
