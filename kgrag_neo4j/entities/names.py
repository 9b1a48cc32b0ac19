"""What one chunk says about names, and what all chunks say together: the pure half of the
maintained entity graph.

A chunk's *scan* depends on its text alone: the capitalised phrases it writes, each with the
cues around it (a title before it, a place preposition, how often it opens a sentence). The
store keeps each chunk's scan beside it and adds it into one statistics node per name
(``EntityName``), so the statistics of a name are the sum over the chunks that exist, whatever
order they came in; deleting a chunk subtracts exactly what it added. A name belongs to the
namespace's vocabulary while some chunk writes it as a name (not only as a lone word opening a
sentence), or a document is titled with it, or the user gave it; its type and its display
name are functions of the sums (:func:`name_type`, :func:`display_name`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..types.entities import entity_id, normalise_name
from .extract_offline import OfflineEntityExtractor, _Candidate
from .name_types import evident_name, type_from_cues
from .name_words import is_acronym, split_sentences

__all__ = [
    "ENTITY_NAME_TYPE",
    "ChunkScan",
    "NameStats",
    "display_name",
    "maintained_entity_id",
    "name_type",
    "scan_chunk",
]

#: the type part of a maintained entity's id: the type itself is a property that may change
#: as documents come and go (a "Mr." seen later makes a name a PERSON), the id must not
ENTITY_NAME_TYPE = "NAME"


@functools.lru_cache(maxsize=1 << 16)
def maintained_entity_id(namespace: str, key: str) -> str:
    """The id of the entity a vocabulary name stands for: namespace and normalised name only."""
    # remembered: linking asks for the same few thousand names' ids once per mention
    return entity_id(namespace, key, ENTITY_NAME_TYPE)


@dataclass(frozen=True, slots=True)
class NameStats:
    """One name's statistics in one chunk, or summed over many.

    ``support``: occurrences written as a name (not a lone word opening a sentence, or an
    acronym); ``person``, ``location``, ``weak``: occurrences after a person cue, a place cue,
    a bare "in"; ``occurrences``: every capitalised occurrence; ``titles``: documents titled
    with the name; ``form``: how the text writes it (the first occurrence in the chunk)."""

    key: str
    form: str
    support: int = 0
    person: int = 0
    location: int = 0
    weak: int = 0
    occurrences: int = 0
    titles: int = 0

    def row(self) -> dict[str, object]:
        return {
            "key": self.key,
            "form": self.form,
            "support": self.support,
            "person": self.person,
            "location": self.location,
            "weak": self.weak,
            "occurrences": self.occurrences,
            "titles": self.titles,
        }


@dataclass(frozen=True, slots=True)
class ChunkScan:
    """The names a chunk's text writes, in order of first appearance."""

    chunk_id: str
    names: tuple[NameStats, ...] = field(default_factory=tuple)


_SCANNER = OfflineEntityExtractor()


def scan_chunk(chunk_id: str, text: str, *, title_name: str = "") -> ChunkScan:
    """Scan one chunk (deterministic: the same text gives the same scan). ``title_name``: the
    name its document's title stands for, counted once on the document's first chunk."""
    candidates: dict[str, _Candidate] = {}
    for si, (start, end) in enumerate(split_sentences(text or "")):
        # a name starts with a capitalised word: a sentence in lower case holds none
        if text[start:end] != text[start:end].lower():
            _SCANNER._scan_sentence(text, start, end, 0, si, candidates)
    inside_title = _title_spans(text or "", title_name)
    out: dict[str, NameStats] = {}
    for key, c in candidates.items():
        if c.date:
            continue
        evident = (c.non_initial or evident_name(c.name)) and not c.abbreviation
        if evident and inside_title and " " not in c.name and not is_acronym(c.name):
            # "Alright" of "It'll Be Alright on the Night", "Turd" of "Douche and Turd": a word
            # capitalised only inside the document's title is the title's, not a name of its own
            evident = not all(any(a <= o.position < b for a, b in inside_title) for o in c.occurrences)
        support = len(c.occurrences) if evident else 0
        out[key] = NameStats(
            key=key,
            form=c.name,
            support=support,
            person=c.person_cues,
            location=c.location_cues,
            weak=c.weak_location_cues,
            occurrences=len(c.occurrences),
        )
    title_key = normalise_name(title_name) if title_name else ""
    if title_key:
        old = out.get(title_key)
        if old is None:
            out[title_key] = NameStats(key=title_key, form=title_name.strip(), titles=1)
        else:
            out[title_key] = NameStats(
                key=old.key,
                form=old.form,
                support=old.support,
                person=old.person,
                location=old.location,
                weak=old.weak,
                occurrences=old.occurrences,
                titles=1,
            )
    return ChunkScan(chunk_id, tuple(out.values()))


def _title_spans(text: str, title_name: str) -> list[tuple[int, int]]:
    """Where the text writes its document's title name (any case, whole words)."""
    title = " ".join(title_name.split()) if title_name else ""
    if " " not in title:
        return []
    pattern = re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in title.split()) + r"(?!\w)", re.IGNORECASE)
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def name_type(form: str, stats: Mapping[str, int]) -> str:
    """The type the summed statistics give a name (the offline extractor's cue rules): a name
    seen only as a title or a given name is ``OTHER``."""
    occurrences = int(stats.get("occurrences", 0))
    if occurrences <= 0:
        return "OTHER"
    return type_from_cues(
        form,
        occurrences=occurrences,
        person=int(stats.get("person", 0)),
        location=int(stats.get("location", 0)),
        weak=int(stats.get("weak", 0)),
    )


def display_name(forms: Sequence[str], counts: Sequence[int]) -> str:
    """The name shown for an entity: the form the chunks write most often; on a tie, one not
    all in capitals, then the smallest (an order of its own, so adding and deleting documents
    in any order ends on the same name)."""
    best: tuple[int, int, str] | None = None
    # a name only given (by the user) has forms no chunk counts: then those
    written = any(count > 0 for count in counts)
    for form, count in zip(forms, counts):
        if (written and count <= 0) or count < 0 or not form:
            continue
        rank = (-int(count), 1 if form.isupper() and len(form) > 1 else 0, form)
        if best is None or rank < best:
            best = rank
    return best[2] if best is not None else ""
