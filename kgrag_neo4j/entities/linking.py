"""Link one document's chunks to the vocabulary: mentions and co-occurrence strengths, pure.

A document is linked as a whole (a short form such as "Robert" stands for "Robert Baratheon"
only where its document speaks of Robert Baratheon, and a one-word name the document mostly
writes in lower case counts only where it is capitalised), against the names of the
namespace's vocabulary that its text contains (:func:`span_keys` lists every key the text
could contain; the store answers which of them are names). What a chunk contributes is kept
with the chunk, in integers, so that deleting it subtracts exactly what it added.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..types.entities import normalise_name
from .cooccurrence import sentence_of as _sentence_of
from .cooccurrence import word_gap as _word_gap
from .extract_offline import OfflineEntityExtractor
from .gazetteer import Gazetteer, name_form
from .name_words import split_sentences as _split_sentences
from .names import maintained_entity_id

__all__ = ["ChunkLinks", "LinkOptions", "VocabularyMatcher", "VocabularyName", "closeness", "link_document", "span_keys"]

#: co-occurrence strengths are kept in millionths, so sums do not depend on their order
STRENGTH_UNIT = 1_000_000
_WORD = re.compile(r"[^\W_]+")
_MAX_SPAN_CHARS = 120


@dataclass(frozen=True, slots=True)
class LinkOptions:
    """``max_entities_per_chunk``: a chunk keeps its most mentioned names; ``max_gap``: two
    names further apart in a sentence (in words) do not co-occur; ``max_words``: the longest
    name looked for."""

    max_entities_per_chunk: int = 20
    max_gap: int = 30
    max_words: int = 8


@dataclass(frozen=True, slots=True)
class VocabularyName:
    key: str
    display: str
    forms: tuple[str, ...] = ()


@dataclass(slots=True)
class ChunkLinks:
    """What one chunk contributes: ``mentions`` key -> (count, offset of the first occurrence,
    -1 for a chunk that is about the name without writing it); ``pairs`` (entity id, entity
    id) -> (strength in millionths, sentences shared) (ids ordered)."""

    chunk_id: str
    mentions: dict[str, tuple[int, int]] = field(default_factory=dict)
    pairs: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)


def closeness(gap: int) -> int:
    """``1 / (1 + gap / 10)`` in millionths, rounded: what one shared sentence adds."""
    return (10 * STRENGTH_UNIT + (10 + gap) // 2) // (10 + gap)


def span_keys(texts: Iterable[str], *, max_words: int = 8) -> set[str]:
    """Every name key a text could contain: the normalised text of each run of up to
    ``max_words`` words starting and ending on a word boundary (a superset of what the
    gazetteer can match, so looking these keys up finds every vocabulary name in the text)."""
    out: set[str] = set()
    for text in texts:
        words = [(m.start(), m.end()) for m in _WORD.finditer(text or "")]
        for i, (start, _) in enumerate(words):
            for j in range(i, min(len(words), i + max_words)):
                end = words[j][1]
                if end - start > _MAX_SPAN_CHARS:
                    break
                key = normalise_name(text[start:end])
                if key:
                    out.add(key)
    return out


class VocabularyMatcher:
    """The gazetteer of a vocabulary, built once for every document linked against it."""

    def __init__(self, vocabulary: Mapping[str, VocabularyName]):
        self.vocabulary = vocabulary
        self.form_to_key: dict[str, str] = {}
        for key in sorted(vocabulary):
            v = vocabulary[key]
            for form in (v.display, key, *v.forms):
                if form:
                    self.form_to_key.setdefault(name_form(form), key)
        self.gazetteer = Gazetteer(self.form_to_key)


def link_document(
    namespace: str,
    chunks: Sequence[tuple[str, str]],
    vocabulary: Mapping[str, VocabularyName] | VocabularyMatcher,
    *,
    title_key: str = "",
    options: LinkOptions = LinkOptions(),
) -> list[ChunkLinks]:
    """Link a document's leaf chunks ``(id, text)`` (in order) to ``vocabulary`` (key -> name,
    or a :class:`VocabularyMatcher` made of it; any superset of the names the text contains
    gives the same answer). ``title_key``: the name the document's title stands for,
    mentioned by its first chunk."""
    matcher = vocabulary if isinstance(vocabulary, VocabularyMatcher) else VocabularyMatcher(vocabulary)
    vocabulary, form_to_key, gazetteer = matcher.vocabulary, matcher.form_to_key, matcher.gazetteer
    texts = [text or "" for _, text in chunks]
    matches = [gazetteer.find(t) for t in texts]
    # the extractor's rule, counted over this document's matches
    lower_only = OfflineEntityExtractor._lowercase_words(matches, form_to_key)
    short = _short_forms(matches, form_to_key, vocabulary)

    out: list[ChunkLinks] = []
    for (chunk_id, _), text, found in zip(chunks, texts, matches):
        spans = _split_sentences(text)
        occurrences: dict[str, list[tuple[int, int, int]]] = {}  # key -> [(sentence, start, end)]
        for m in found:
            key = form_to_key[m.key]
            if key in lower_only and not m.surface[:1].isupper():
                continue
            key = short.get(key, key)
            occurrences.setdefault(key, []).append((_sentence_of(spans, m.start), m.start, m.end))
        if title_key and not out and title_key in vocabulary and title_key not in occurrences:
            occurrences[title_key] = [(-1, -1, -1)]
        if len(occurrences) > options.max_entities_per_chunk:
            ranked = sorted(occurrences, key=lambda k: (-len(occurrences[k]), occurrences[k][0][1], k))
            occurrences = {k: occurrences[k] for k in ranked[: options.max_entities_per_chunk]}
        links = ChunkLinks(chunk_id)
        for key, occs in occurrences.items():
            first = next((o for o in occs if o[0] >= 0), occs[0])
            links.mentions[key] = (len(occs), first[1])
        links.pairs = _pairs(namespace, text, occurrences, options.max_gap)
        out.append(links)
    return out


def _short_forms(
    matches: Sequence[Sequence], form_to_key: Mapping[str, str], vocabulary: Mapping[str, VocabularyName]
) -> dict[str, str]:
    """One-word key -> the one longer name of the document it is the first or last word of."""
    keys = {form_to_key[m.key] for found in matches for m in found}
    longer: dict[str, set[str]] = {}
    for key in keys:
        words = name_form(vocabulary[key].display or key).split()
        if len(words) < 2:
            continue
        for end in {words[0], words[-1]}:
            longer.setdefault(end, set()).add(key)
    out: dict[str, str] = {}
    for key in keys:
        if " " in key:
            continue
        owners = longer.get(name_form(vocabulary[key].display or key), set())
        if len(owners) == 1:
            out[key] = next(iter(owners))
    return out


def _pairs(
    namespace: str, text: str, occurrences: Mapping[str, list[tuple[int, int, int]]], max_gap: int
) -> dict[tuple[str, str], tuple[int, int]]:
    starts = [m.start() for m in re.finditer(r"\w+", text)]
    windows: dict[int, dict[str, list[tuple[int, int]]]] = {}
    for key, occs in occurrences.items():
        eid = maintained_entity_id(namespace, key)
        for sentence, start, end in occs:
            if start < 0:
                continue
            windows.setdefault(sentence, {}).setdefault(eid, []).append((start, max(end, start)))
    pairs: dict[tuple[str, str], tuple[int, int]] = {}
    for members in windows.values():
        ids = sorted(members)
        for i in range(len(ids)):
            for j in range(i + 1, len(ids)):
                gap = _word_gap(starts, members[ids[i]], members[ids[j]])
                if gap > max_gap:
                    continue
                pair = (ids[i], ids[j])
                strength, shared = pairs.get(pair, (0, 0))
                pairs[pair] = (strength + closeness(gap), shared + 1)
    return pairs
