"""Model replies: one parser from a chat model's text to a pydantic model of the JSON asked for.

A chat model is asked for JSON and answers with JSON, JSON in a Markdown fence, or JSON inside
a sentence. :func:`find_json` finds the value in all three; :func:`parse_reply` validates it
against the reply's model. Whatever is wrong becomes one :class:`ProviderResponseError` line
naming the reply, the place and the value (``rating reply: scores[0] is 11: must be a number
in 0..10``), so a caller can log it and skip the batch.

The envelope of a reply is strict (an ``edges`` that is not a list fails the reply); items a
caller drops one by one (an edge to a chunk outside the batch) are typed :data:`Lenient`: an
item that does not fit its model becomes ``None`` and the caller counts it, the others stay.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypeVar

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictFloat,
    StrictStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_validator,
)

from .errors import ProviderResponseError

__all__ = [
    "CommunityReportReply",
    "EdgeItem",
    "EdgesReply",
    "EntitiesReply",
    "EntityItem",
    "Lenient",
    "RatingsReply",
    "RelationItem",
    "TriplesReply",
    "find_json",
    "parse_reply",
]

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_EXCERPT = 120


def _excerpt(text: str) -> str:
    return text.strip().replace("\n", " ")[:_EXCERPT]


def find_json(text: Any, *, what: str = "the model's reply") -> Any:
    """The JSON value in a model's reply: each fenced block, then the whole text; in each, the
    whole of it, then the first value starting at the first ``{`` or ``[`` (prose around it).

    ``ProviderResponseError`` (with an excerpt of the reply) when there is none.
    """
    if not isinstance(text, str):
        raise ProviderResponseError(f"{what} must be text, got {type(text).__name__}")
    decoder = json.JSONDecoder()
    for candidate in [m.group(1) for m in _FENCE.finditer(text)] + [text]:
        candidate = candidate.strip()
        try:
            return json.loads(candidate)
        except ValueError:
            pass
        # Why: models often wrap the JSON in a sentence; decode from the first bracket on.
        for start in sorted(i for i in (candidate.find("{"), candidate.find("[")) if i >= 0):
            try:
                return decoder.raw_decode(candidate, start)[0]
            except ValueError:
                continue
    raise ProviderResponseError(f"{what} is not JSON: {_excerpt(text)!r}")


def parse_reply(text: Any, model: type[M], *, what: str = "the model's reply") -> M:
    """``model`` validated from the JSON in ``text`` (see :func:`find_json`)."""
    return validate_reply(find_json(text, what=what), model, what=what)


def validate_reply(data: Any, model: type[M], *, what: str = "the model's reply") -> M:
    """``model`` validated from an already decoded JSON value; one-line errors as above."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ProviderResponseError(_one_line(what, exc)) from None


# --- one line per validation error ---------------------------------------------------------

_PHRASES = {
    "missing": "is missing",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "string_type": "must be text",
    "float_type": "must be a number",
    "int_type": "must be a number",
    "finite_number": "must be a finite number",
}


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _one_line(what: str, exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0]
    kind = first["type"]
    if kind == "value_error":
        reason = str(first.get("ctx", {}).get("error", first["msg"]))
    else:
        reason = _PHRASES.get(kind) or first["msg"][0].lower() + first["msg"][1:]
    where = _path(tuple(first["loc"]))
    if kind == "missing":
        line = f"{what} has no {where!r}"
    elif where:
        line = f"{what}: {where} is {_short(first.get('input'))}: {reason}"
    else:
        line = f"{what}: {reason}"
    if len(errors) > 1:
        line += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return line


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --- lenient items -------------------------------------------------------------------------

T = TypeVar("T")


def _none_if_invalid(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    try:
        return handler(value)
    except ValidationError:
        return None


Lenient = Annotated[T | None, WrapValidator(_none_if_invalid)]
"""An item of a reply list that becomes ``None`` when it does not fit (counted as dropped by the
caller) instead of failing the whole reply."""


def _text_or(default: Any) -> Callable[[Any], Any]:
    """A model's free-text field: anything that is not text reads as ``default``."""

    def coerce(value: Any) -> Any:
        return value if isinstance(value, str) else default

    return coerce


FreeText = Annotated[str, BeforeValidator(_text_or(""))]


def _list_under(key: str, data: Any) -> Any:
    """A reply may be the bare list instead of ``{key: [...]}``."""
    if isinstance(data, list):
        return {key: data}
    if not isinstance(data, Mapping):
        raise ValueError(f"must be a list or an object with {key!r}, got {_short(data)}")
    return data


class _Reply(BaseModel):
    # Why: models add fields of their own (notes, reasoning); only the asked-for ones count.
    model_config = ConfigDict(extra="ignore", frozen=True)


# --- chunk edges (ingestion/edges.py) ------------------------------------------------------


class EdgeItem(_Reply):
    """One edge as the model gives it; batch ids and the relation kind are checked by the
    caller, which knows the batch."""

    source: StrictStr
    target: StrictStr
    relation: StrictStr
    weight: Annotated[StrictFloat, Field(gt=0.0, le=1.0, allow_inf_nan=False)]
    description: FreeText = ""


class EdgesReply(_Reply):
    """``{"edges": [...]}`` or the bare list; each invalid edge is ``None``."""

    edges: list[Lenient[EdgeItem]]

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, data: Any) -> Any:
        return _list_under("edges", data)


# --- rerank ratings (retrieval/rerank.py) --------------------------------------------------


def _rating(value: Any) -> Any:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value <= 10
    if not ok:
        raise ValueError("must be a number in 0..10")
    return float(value)


class RatingsReply(_Reply):
    """``{"scores": [...]}`` or the bare list: one 0..10 rating per passage, in order."""

    scores: list[Annotated[float, BeforeValidator(_rating)]]

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, data: Any) -> Any:
        return _list_under("scores", data)


# --- entity extraction (entities/extract_llm.py) -------------------------------------------


def _chunk_ids(value: Any) -> Any:
    """One id may come bare; anything else that is not a list means none were given."""
    if isinstance(value, str):
        return [value] if value else []
    return value if isinstance(value, list) else []


class EntityItem(_Reply):
    """One entity as the model gives it. Every field is lenient (a name that is not text reads
    as ""): the extractor drops the entity for a reason it counts (``empty_name``,
    ``ungrounded``, ...); ids are checked against the batch there, each on its own."""

    name: FreeText = ""
    type: Annotated[str | None, BeforeValidator(_text_or(None))] = None
    description: FreeText = ""
    chunk_ids: Annotated[list[Any], BeforeValidator(_chunk_ids)] = []


class RelationItem(_Reply):
    """One relationship as the model gives it; endpoints, type and strength are judged by the
    extractor (``unknown_endpoint``, ``bad_strength``, ...). ``weight`` is read for a missing
    ``strength``."""

    source: Any = None
    target: Any = None
    type: Any = None
    strength: Any = Field(default=None, validation_alias=AliasChoices("strength", "weight"))
    description: FreeText = ""


class EntitiesReply(_Reply):
    """``{"entities": [...], "relationships": [...]}`` (``relations`` accepted); an item that
    is not an object is ``None`` (the extractor counts it as ``malformed``)."""

    entities: list[Lenient[EntityItem]] = []
    relationships: list[Lenient[RelationItem]] = Field(default=[], validation_alias=AliasChoices("relationships", "relations"))

    @model_validator(mode="before")
    @classmethod
    def _object(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise ValueError(f"must be a JSON object, got {_short(data)}")
        return data


# --- community reports (communities/reports.py) --------------------------------------------


def _rating_or_none(value: Any) -> float | None:
    """A report's rating: a number in [0, 10], anything else recorded as None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if 0 <= value <= 10 else None  # NaN compares False: None


class CommunityReportReply(_Reply):
    """``{"title", "summary", "rating"}``: title and summary non-empty text (stripped)."""

    title: StrictStr
    summary: StrictStr
    rating: Annotated[float | None, BeforeValidator(_rating_or_none)] = None

    @field_validator("title", "summary")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must be non-empty text")
        return value.strip()


# --- triples (triples/parsing.py) ----------------------------------------------------------


class TriplesReply(_Reply):
    """``{"triples": [...]}`` or the bare list; items stay raw (the parser counts each
    dropped one with its reason)."""

    triples: list[Any]

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, data: Any) -> Any:
        return _list_under("triples", data)
