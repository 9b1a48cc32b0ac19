"""The type the offline extractor gives a name (PERSON, ORGANIZATION, LOCATION, OTHER) from its
words and the cues counted around its mentions."""

from __future__ import annotations

from .name_words import LOCATION_FIRST, LOCATION_WORDS, ORG_WORDS, OTHER_WORDS, POSSESSIVE, is_acronym

__all__ = [
    "evident_name",
    "type_from_cues",
]


def evident_name(name: str) -> bool:
    """A name wherever it is written, even alone at a sentence's start: an acronym ("NASA")
    or a software-shaped word ("Neo4j", "GraphRetriever")."""
    return is_acronym(name) or _software_shaped(name)


def _software_shaped(name: str) -> bool:
    """One word with a digit among letters or a capital inside ("Neo4j", "WordLlama", "PyPI"):
    how software and products are named, never places."""
    if " " in name or is_acronym(name):
        return False
    letters = name.lstrip("(").rstrip(")")
    return any(c.isdigit() for c in letters) or any(a.islower() and b.isupper() for a, b in zip(letters, letters[1:]))


def type_from_cues(name: str, *, occurrences: int, person: int = 0, location: int = 0, weak: int = 0) -> str:
    """The type the offline extractor gives a name from its words and the cues counted around
    its ``occurrences`` (see :class:`OfflineEntityExtractor`)."""
    words = [w.lower().rstrip(".") for w in name.split()]
    if not words:
        return "OTHER"
    if len(words) == 1 and is_acronym(name):
        # "NASA", "CGT" name organisations; "UTF-8", "BM25", "MP3" name standards and things
        return "OTHER" if any(c.isdigit() for c in name) else "ORGANIZATION"
    if any(w in ORG_WORDS for w in words):
        return "ORGANIZATION"
    if any(w in LOCATION_WORDS for w in words) or (len(words) > 1 and words[0] in LOCATION_FIRST):
        return "LOCATION"
    if words[-1] in OTHER_WORDS:
        return "OTHER"
    if person:
        return "PERSON"
    # A place cue has to be a real share of the mentions ("lived in Lucene" once among
    # fourteen is a parse of "based in Lucene's index", not a place), and software-shaped
    # names ("Neo4j") are never places.
    if not _software_shaped(name):
        if location and location * 5 >= occurrences:
            return "LOCATION"
        # Bare "in X" is a place only when it is how the text mostly speaks of X: "in Paris"
        # twice out of three, yes; "written in Python" once among ten mentions, no.
        if weak >= 2 and (weak + location) * 3 >= 2 * occurrences:
            return "LOCATION"
    if weak or location:
        return "OTHER"
    # "Ludwig van Beethoven" reads as a person; "Game of Thrones" does not.
    # A possessive inside ("King's Landing", "Robert's Rebellion") is a place or an event.
    if len(words) > 1 and not any(w in ("of", "the") or w.endswith(POSSESSIVE) for w in words):
        parts = name.split()
        capitals = [is_acronym(w) and "." not in w for w in parts]
        if (any(capitals) and not all(capitals)) or any(_software_shaped(w) for w in parts):
            return "OTHER"  # "Intel Xeon", "Neo4j Browser", "BBC Radio": products and outlets
        return "PERSON"
    return "OTHER"
