"""Find known names in text: an Aho-Corasick automaton over every name, matched without
regard to case, on word boundaries, leftmost-longest.

Capitalisation finds a name only where a writer capitalised it; a gazetteer finds it wherever
it is written. Every known name (extracted names, document titles, names the user supplies)
goes into one automaton (``pyahocorasick``), so a pass over a chunk costs its length, not
the number of names.

Rules of a match:

- case-insensitive (``str.lower`` per character, so offsets into the original text hold);
- whole words only: the characters before and after must not be letters or digits, so "Art"
  is not found in "Arthur" and "Ned" not in "Nedda";
- runs of whitespace in the text match the single space of a name ("New  York" is "New York");
- overlapping candidates: the longest wins, then the leftmost, and a found name is never
  part of another found name ("Robert Baratheon" hides the "Robert" inside it);
- a one-word name that the corpus mostly writes in lower case ("Bank", "Python" in a text
  about snakes) counts only where it is capitalised: see :func:`lowercase_words`.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ..errors import ConfigurationError

__all__ = ["Gazetteer", "NameMatch", "fold", "lowercase_words", "name_form", "query_name_keys"]

_SPACES = re.compile(r"\s+")


def fold(text: str) -> str:
    """Lower case that keeps every offset: a character whose lower case is longer ("İ") is
    kept as it is, so a match in the folded text is the same span in the original."""
    out = text.lower()
    if len(out) == len(text):
        return out
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def name_form(name: str) -> str:
    """How a name is stored in the automaton: NFKC, folded, single spaces, trimmed."""
    return _SPACES.sub(" ", fold(unicodedata.normalize("NFKC", name))).strip()


@dataclass(frozen=True, slots=True)
class NameMatch:
    """A name found in a text: ``key`` is the name's form (:func:`name_form`), ``start`` and
    ``end`` the span in the original text, ``surface`` the text as written there."""

    key: str
    start: int
    end: int
    surface: str


class Gazetteer:
    """An automaton over names; ``find(text)`` returns their non-overlapping matches.

    ``names`` maps a display name (or any string) to anything; the gazetteer keys on
    :func:`name_form` and keeps the first value given for a form. Names shorter than
    ``min_length`` characters, or made only of digits and punctuation, are left out: they
    would match everywhere and mean nothing.
    """

    def __init__(self, names: Iterable[str], *, min_length: int = 2):
        try:
            import ahocorasick
        except ImportError as exc:  # a core dependency: only a broken install gets here
            raise ConfigurationError('the gazetteer needs pyahocorasick: pip install "kgrag-neo4j"') from exc
        self._automaton = ahocorasick.Automaton()
        self.keys: set[str] = set()
        for name in names:
            key = name_form(name)
            if len(key) < min_length or not any(c.isalpha() for c in key) or key in self.keys:
                continue
            self.keys.add(key)
            self._automaton.add_word(key, key)
        if self.keys:
            self._automaton.make_automaton()

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name_form(name) in self.keys

    def find(self, text: str) -> list[NameMatch]:
        """Matches in ``text``, in order of position."""
        if not self.keys or not text:
            return []
        # Whitespace runs become one space so that "New  York" matches "new york"; the map
        # takes a position of the squeezed text back to the original.
        squeezed, shifts = _squeeze(fold(text))
        candidates = list(self._candidates(squeezed))
        size = len(squeezed)
        # longest first, then leftmost; a taken span blocks every candidate overlapping it
        candidates.sort(key=lambda c: (-(c[1] - c[0]), c[0]))
        taken = bytearray(size)  # 1 where a chosen match lies: one scan per candidate
        chosen: list[tuple[int, int, str]] = []
        for start, end, key in candidates:
            if taken.find(1, start, end) >= 0:
                continue
            taken[start:end] = b"\x01" * (end - start)
            chosen.append((start, end, key))
        chosen.sort()
        out = []
        for start, end, key in chosen:
            a, b = _origin(shifts, start), _origin(shifts, end - 1) + 1
            out.append(NameMatch(key, a, b, text[a:b]))
        return out

    def writes_any(self, text: str) -> bool:
        """Whether ``text`` writes one of the names where a match could be (whole words): a
        text for which this is false has none of them among its matches, whatever other names
        an automaton holds."""
        return bool(self.keys and text and next(self._candidates(_squeeze(fold(text))[0]), None))

    def _candidates(self, squeezed: str) -> Iterator[tuple[int, int, str]]:
        """Every occurrence of a name on word boundaries in a folded, squeezed text."""
        size = len(squeezed)
        for end, key in self._automaton.iter(squeezed):
            start = end - len(key) + 1
            if start > 0 and squeezed[start - 1].isalnum():
                continue
            if end + 1 < size and squeezed[end + 1].isalnum():
                continue
            yield start, end + 1, key

    def iter_keys(self, text: str) -> Iterator[str]:
        for m in self.find(text):
            yield m.key


def _squeeze(text: str) -> tuple[str, tuple[list[int], list[int]] | None]:
    """``text`` with every whitespace run made one space, and how positions moved: None when
    none did (only single whitespace characters), else, for each run longer than one
    character, the squeezed position just after its space and the characters removed up to
    there (see :func:`_origin`)."""
    squeezed = _SPACES.sub(" ", text)
    if len(squeezed) == len(text):
        return squeezed, None
    after: list[int] = []
    removed: list[int] = []
    total = 0
    for m in _SPACES.finditer(text):
        n = m.end() - m.start()
        if n > 1:
            after.append(m.start() - total + 1)
            total += n - 1
            removed.append(total)
    return squeezed, (after, removed)


def _origin(shifts: tuple[list[int], list[int]] | None, position: int) -> int:
    """The offset in the original text of a squeezed text's ``position`` (a run's space maps
    to the run's first character)."""
    if shifts is None:
        return position
    k = bisect.bisect_right(shifts[0], position) - 1
    return position + shifts[1][k] if k >= 0 else position


def lowercase_words(counts: Mapping[str, tuple[int, int]]) -> set[str]:
    """One-word names that the text writes mostly in lower case.

    ``counts`` maps a one-word name form to ``(capitalised, lower)`` occurrence counts over the
    whole corpus. A word seen in lower case more often than capitalised is a common word that
    is sometimes a name ("Bank" in "Bank of England" vs "the river bank"), so only its
    capitalised occurrences are taken as the name.
    """
    return {key for key, (upper, lower) in counts.items() if lower > upper}


_QUERY_TOKEN = re.compile(r"\S+")
_POSSESSIVES = ("'s", "\u2019s", "'", "\u2019")


def query_name_keys(text: str, *, max_words: int = 8, max_keys: int = 512) -> list[dict[str, object]]:
    """The entity name keys (``normalise_name``) a query could be naming, with their word span:
    every run of up to ``max_words`` words, as written and with a trailing possessive cut
    ("Ned Stark's sword" gives "ned stark"), as ``{"key", "start", "end"}`` (words
    ``[start, end)``). Looked up by exact key, they find an entity named in the query whatever
    its case, the way the gazetteer finds it in a chunk, with one index seek each; the store
    keeps, like the gazetteer, only the longest of overlapping found names (so "Robert
    Baratheon" in the query does not also name "Robert"). At most ``max_keys`` runs, shortest
    first (a pasted page does not make the lookup unbounded)."""
    from ..types.entities import normalise_name

    words = _QUERY_TOKEN.findall(text or "")
    out: list[dict[str, object]] = []
    seen: set[tuple[str, int, int]] = set()
    for size in range(1, max_words + 1):
        for start in range(0, len(words) - size + 1):
            run = " ".join(words[start : start + size])
            for variant in (run, _cut_possessive(run)):
                key = normalise_name(variant)
                if key and any(ch.isalnum() for ch in key) and (key, start, start + size) not in seen:
                    seen.add((key, start, start + size))
                    out.append({"key": key, "start": start, "end": start + size})
            if len(out) >= max_keys:
                return out[:max_keys]
    return out


def _cut_possessive(run: str) -> str:
    trimmed = run.rstrip("?!.,;:\"')]}\u201d")
    for suffix in _POSSESSIVES:
        if trimmed.endswith(suffix) and len(trimmed) > len(suffix):
            return trimmed[: -len(suffix)]
    return trimmed
