"""Link one document's chunks to the vocabulary: mentions and co-occurrence strengths, pure.

A chunk is linked in its document's context (a short form such as "Robert" stands for
"Robert Baratheon" only where its document speaks of Robert Baratheon, and a one-word name the
document mostly writes in lower case counts only where it is capitalised: :class:`LinkContext`),
against the names of the namespace's vocabulary that its text contains (:func:`text_words`
lists the words their keys can start with; the store answers which names start so). The
context is a function of the forms the document's chunks write (:func:`document_context`),
each chunk's share kept with it (:func:`chunk_forms`), so that a document can have some
chunks linked again without reading the others. What a chunk contributes is kept with the
chunk, in integers, so that deleting it subtracts exactly what it added.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..types.entities import normalise_name
from .cooccurrence import sentence_of as _sentence_of
from .cooccurrence import word_gap as _word_gap
from .gazetteer import Gazetteer, fold, name_form
from .name_words import split_sentences as _split_sentences
from .names import maintained_entity_id

__all__ = [
    "ChunkForms",
    "ChunkLinks",
    "DocumentForms",
    "LinkContext",
    "LinkOptions",
    "VocabularyMatcher",
    "VocabularyName",
    "add_forms",
    "chunk_forms",
    "closeness",
    "document_context",
    "first_word",
    "key_words",
    "form_key",
    "link_chunk",
    "link_document",
    "sum_forms",
    "text_words",
]

#: co-occurrence strengths are kept in millionths, so sums do not depend on their order
STRENGTH_UNIT = 1_000_000
_WORD = re.compile(r"[^\W_]+")


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
    forms: dict[str, tuple[int, int]] = field(default_factory=dict)


def closeness(gap: int) -> int:
    """``1 / (1 + gap / 10)`` in millionths, rounded: what one shared sentence adds."""
    return (10 * STRENGTH_UNIT + (10 + gap) // 2) // (10 + gap)


def first_word(key: str) -> str:
    """The first word (run of letters and digits) of a name's key: what the store looks a
    name up by (:func:`text_words`); "" for a key with none."""
    m = _WORD.search(key)
    return m.group() if m else ""


def key_words(key: str) -> list[str]:
    """The distinct words (runs of letters and digits) of a name's key, in order: all of them
    are among the :func:`text_words` of any text the gazetteer finds the name in."""
    return list(dict.fromkeys(_WORD.findall(key)))


def text_words(texts: Iterable[str], known: dict[str, tuple[str, ...]] | None = None) -> set[str]:
    """Every word of ``texts`` as a name's key writes it: the names whose :func:`first_word` is
    among these are a superset of the names the gazetteer can find in the texts (a match
    writes each word of its name's key, in some case). ``known``: a cache of the words' keys,
    kept across calls."""
    cache = known if known is not None else {}
    out: set[str] = set()
    for text in texts:
        for word in set(_WORD.findall(fold(text or ""))):
            keyed = cache.get(word)
            if keyed is None:
                # NFKC and case folding may turn a word into several (a ligature, a compatibility form)
                keyed = cache[word] = tuple(_WORD.findall(normalise_name(word))) or (word,)
            out.update(keyed)
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
    texts = [text or "" for _, text in chunks]
    matches = [matcher.gazetteer.find(t) for t in texts]
    forms = [chunk_forms(found) for found in matches]
    context = document_context(sum_forms(forms))
    return [
        link_chunk(namespace, chunk_id, text, found, matcher, context, title_key=title_key if i == 0 else "", options=options)
        for i, ((chunk_id, _), text, found) in enumerate(zip(chunks, texts, matches))
    ]


#: form -> (capitalised, lower case) occurrences in one chunk
ChunkForms = dict[str, tuple[int, int]]
#: form -> (capitalised, lower case, chunks writing it) over a document
DocumentForms = dict[str, tuple[int, int, int]]


@dataclass(frozen=True, slots=True)
class LinkContext:
    """What linking a chunk takes from its whole document: the one-word names the document
    writes mostly in lower case (``lower_only``: only their capitalised occurrences count) and
    the one-word names that stand for the one longer name of the document they open or end
    (``short``: "Robert" for "Robert Baratheon")."""

    lower_only: frozenset[str] = frozenset()
    short: Mapping[str, str] = field(default_factory=dict)

    def changed_keys(self, other: LinkContext) -> set[str]:
        """The names whose occurrences count or resolve differently under ``other``."""
        changed = set(self.lower_only ^ other.lower_only)
        changed.update(k for k in set(self.short) | set(other.short) if self.short.get(k) != other.short.get(k))
        return changed


def chunk_forms(matches: Sequence) -> ChunkForms:
    """The forms a chunk's matches write, with how often capitalised and how often not: what
    the chunk adds to its document's :class:`LinkContext` (kept with the chunk, so that a chunk
    linked again can take its old share out)."""
    out: dict[str, list[int]] = {}
    for m in matches:
        counts = out.setdefault(m.key, [0, 0])
        counts[0 if m.surface[:1].isupper() else 1] += 1
    return {form: (c[0], c[1]) for form, c in out.items()}


def sum_forms(chunks: Iterable[Mapping[str, tuple[int, int]]]) -> DocumentForms:
    """A document's forms: its chunks' counts summed, and the chunks writing each."""
    out: dict[str, list[int]] = {}
    for forms in chunks:
        for form, (upper, lower) in forms.items():
            total = out.setdefault(form, [0, 0, 0])
            total[0] += upper
            total[1] += lower
            total[2] += 1
    return {form: (t[0], t[1], t[2]) for form, t in out.items()}


def add_forms(document: dict[str, tuple[int, int, int]], chunk: Mapping[str, tuple[int, int]], sign: int) -> None:
    """Add one chunk's forms to ``document`` (``sign`` 1) or take them out (-1), in place; a
    form no chunk writes any more is dropped."""
    for form, (upper, lower) in chunk.items():
        u, lo, n = document.get(form, (0, 0, 0))
        total = (u + sign * upper, lo + sign * lower, n + sign)
        if total[2] > 0:
            document[form] = total
        else:
            document.pop(form, None)


def form_key(form: str) -> str:
    """The vocabulary key a matched form stands for (every form of a name normalises to it)."""
    return _form_keys.get(form) or _form_keys.setdefault(form, normalise_name(form))


_form_keys: dict[str, str] = {}


def document_context(forms: Mapping[str, tuple[int, int, int]]) -> LinkContext:
    """The :class:`LinkContext` of a document whose chunks write ``forms``.

    A one-word name counts only capitalised where the document writes its form more often in
    lower case (the extractor's rule, ``gazetteer.lowercase_words``). A one-word name is short
    for the one longer name of the document whose first or last word it is (by the names'
    keys, which do not change as the corpus grows, unlike the forms chosen for display)."""
    lower_only = {form_key(f) for f, (upper, lower, _) in forms.items() if " " not in f and lower > upper}
    keys = {form_key(f) for f in forms}
    longer: dict[str, set[str]] = {}
    for key in keys:
        words = key.split()
        if len(words) < 2:
            continue
        for end in {words[0], words[-1]}:
            longer.setdefault(end, set()).add(key)
    short: dict[str, str] = {}
    for key in keys:
        if " " in key:
            continue
        owners = longer.get(key, set())
        if len(owners) == 1:
            short[key] = next(iter(owners))
    return LinkContext(frozenset(lower_only), short)


def link_chunk(
    namespace: str,
    chunk_id: str,
    text: str,
    matches: Sequence,
    matcher: VocabularyMatcher,
    context: LinkContext,
    *,
    title_key: str = "",
    options: LinkOptions = LinkOptions(),
    forms: ChunkForms | None = None,
) -> ChunkLinks:
    """One chunk's links, from its matches and its document's context. ``title_key``: the
    name of the document's title, given for its first chunk only; ``forms``: the matches'
    :func:`chunk_forms`, when already counted."""
    form_to_key = matcher.form_to_key
    spans = _split_sentences(text)
    occurrences: dict[str, list[tuple[int, int, int]]] = {}  # key -> [(sentence, start, end)]
    for m in matches:
        key = form_to_key[m.key]
        if key in context.lower_only and not m.surface[:1].isupper():
            continue
        key = context.short.get(key, key)
        occurrences.setdefault(key, []).append((_sentence_of(spans, m.start), m.start, m.end))
    if title_key and title_key in matcher.vocabulary and title_key not in occurrences:
        occurrences[title_key] = [(-1, -1, -1)]
    if len(occurrences) > options.max_entities_per_chunk:
        ranked = sorted(occurrences, key=lambda k: (-len(occurrences[k]), occurrences[k][0][1], k))
        occurrences = {k: occurrences[k] for k in ranked[: options.max_entities_per_chunk]}
    links = ChunkLinks(chunk_id, forms=chunk_forms(matches) if forms is None else dict(forms))
    for key, occs in occurrences.items():
        first = next((o for o in occs if o[0] >= 0), occs[0])
        links.mentions[key] = (len(occs), first[1])
    links.pairs = _pairs(namespace, text, occurrences, options.max_gap)
    return links


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
