"""Deterministic entity extraction without a model: proper-noun phrases and co-occurrence."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..validation import check_choice, check_int
from .extract_llm import TextUnit
from .gazetteer import Gazetteer, NameMatch, lowercase_words, name_form
from .model import (
    Entity,
    EntityMention,
    EntityRelation,
    ExtractionResult,
    entity_id,
    normalise_name,
)

__all__ = [
    "CO_OCCURS",
    "OfflineEntityExtractor",
    "cooccurrence_weight",
    "describe_name",
    "evident_name",
    "is_name_word",
    "type_from_cues",
]

CO_OCCURS = "CO_OCCURS"


def cooccurrence_weight(count: float) -> float:
    """``count / (count + 1)``: 1 shared window -> 0.5, 2 -> 0.67, 9 -> 0.9; never 1. ``count``
    may be a strength (a sum of closeness values, see ``OfflineEntityExtractor``).

    It needs no corpus-wide normaliser, so a pair's weight does not change when unrelated
    documents are added.
    """
    return count / (count + 1.0)


# --- word lists (lower case) --------------------------------------------------------------

# Capitalised only because they open a sentence (or a title): never an entity on their own.
_STOPWORDS = frozenset(
    """a an the this that these those he she it they we i you his her its their our my your him
    them us me in on at by for from with without of to into onto after before during while when
    where why how what which who whom whose if but and or nor so yet as because although though
    since until unless then there here now later soon also however meanwhile still once some
    many most all both each every few several such no not yes one two three four five first
    second third last next another other only even just finally perhaps today yesterday
    tomorrow tonight between among over under above below through about against within upon
    despite do does did is was are were be been being has have had can could will would should
    may might must let lets let's please thus hence therefore instead indeed again always never
    sometimes often chapter part section table figure note see ok oh well yes dear""".split()
)
_MONTHS_DAYS = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()
)
# Lower-case words allowed *inside* a name: "University of Oxford", "Ludwig van Beethoven".
_CONNECTORS = frozenset("of de von van der den da del della di du la le the y bin al".split())
# Titles before a name: a PERSON cue; stripped from the name so "King Robert Baratheon" and
# "Robert Baratheon" are one entity. "Lord of X" makes X a LOCATION.
_HONORIFICS = frozenset(
    """mr mrs ms miss mx dr prof professor sir dame lord lady king queen prince princess ser
    president senator general captain capt colonel col lieutenant lt sergeant sgt judge maester
    emperor empress duke duchess baron baroness pope bishop rev reverend mayor governor gov
    chancellor archbishop cardinal premier""".split()
)
# Words written in capitals in code and its documentation, not names: Cypher and SQL keywords,
# type names, placeholders of a usage line (FOLDER, VALUE), log levels, and abbreviations of
# common nouns and units (CPU, ID, MB). An acronym spelling one of these is not a name.
_CODE_WORDS = frozenset(
    """add all alter and any as asc ascending begin boolean by call case commit constraint create
    database date datetime delete desc descending detach distinct drop duration else end exists
    explain false float for foreach from index integer is key limit list load map match merge node
    not null on optional or order path point profile pull remove return rollback run set show skip
    string text then true union unique unwind use value when where with xor yield select insert
    update into values table join left right inner outer group having offset default primary
    foreign references int bigint varchar char bool bytes byte double long number object array
    none void args arg kwargs options option command file files folder dir directory name names
    id ids uri url urls path query question answer note notes warning warnings error errors info
    debug trace fatal todo fixme new old version source target type types label labels
    relationship relationships property properties parent child concept entity person
    api apis cpu cpus gpu ram os ui gui cli sdk vm llm llms lts io ok eof tmp env
    kb mb gb tb kib mib gib tib ms ns us utc gmt""".split()
)
# Common English words (lower case): written in lower case at least three times as often as
# capitalised inside a sentence in encyclopaedic text ("film", "asked", "community"; not "new",
# "national", "apple"). A lone one capitalised is a name only where nothing else explains the
# capital. Made by `python -m bench entity_precision --write-common-words`.
_COMMON_WORDS = frozenset(Path(__file__).with_name("common_words.txt").read_text(encoding="utf-8").split())
_ARTICLES = frozenset(("a", "an"))
_PLACE_ABBREVIATIONS = frozenset(("st", "mt", "ft"))
_TRADEMARK = re.compile(r"\((?:R|TM)\)\s*$")
_LOCATION_PREPOSITIONS = frozenset("in near inside outside across throughout within".split())
# "near X" says X is a place; "in X" says so only after a verb of place ("lived in X"): "written
# in Python" or "in 1990" are not places. A bare "in" is a weak cue (see ``_type_of``).
_WEAK_PREPOSITIONS = frozenset("in within".split())
_LOCATIVE_VERBS = frozenset(
    """live lives lived living stay stays stayed staying born die dies died reside resides resided
    residing locate located situated base based settle settled settles headquartered arrive arrived
    arrives grew raised moved move moves buried stationed imprisoned exiled held elected
    hometown""".split()
)
_ORG_WORDS = frozenset(
    """university college institute institution school academy inc incorporated corp
    corporation company co ltd llc plc gmbh ag sa group bank agency association society council
    committee department ministry foundation party church club team union organization
    organisation commission court army navy press labs laboratory laboratories hospital museum
    house order guild brotherhood watch federation league fund trust bureau office
    parliament senate congress records pictures studios airlines airways network networks
    entertainment publishing publishers orchestra band""".split()
)
_LOCATION_WORDS = frozenset(
    """river mountain mountains mount mt lake sea ocean island isle islands isles valley city county
    street st road avenue bay coast desert forest kingdom republic province state states park
    bridge castle hill hills gulf peninsula canyon falls harbor harbour port fort square village
    town region district empire continent stadium arena airport station pond creek canal
    highway palace cathedral abbey monastery temple tower""".split()
)
# The last word of the names of events, works and programmes: not a person's.
_OTHER_WORDS = frozenset(
    """festival day war battle program programme series show award awards prize cup championship
    championships games olympics trilogy album song film novel revolution rebellion treaty""".split()
)
_LOCATION_FIRST = frozenset("new north south east west upper lower northern southern eastern western".split())
_SUFFIXES_PERSON = frozenset("jr sr ii iii iv".split())
# Words before a "." that do not end a sentence.
_ABBREVIATIONS = _HONORIFICS | frozenset(
    "st jr sr mt ft inc ltd co corp vs etc no fig e.g i.e al approx dept est univ".split()
)

_TOKEN = re.compile(r"[^\W_](?:[\w&'\u2019-]*[^\W_])?")
_SENTENCE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*\s+|\n\s*\n")
# the words of a name are spaces apart; a tab, or two spaces between a word in capitals and
# one that is not, separate the columns of a table or of a command's help ("TEXT  Tenant")
_NAME_GAP = re.compile(r"[ \u00a0]+")
# "APIs", "PDFs", "MERGEd", "CREATEs": an abbreviation or a keyword with an English ending
_ABBREVIATION_WITH_ENDING = re.compile(r"[A-Z][A-Z0-9]+(?:s|es|d|ed|ing)")
_ROMAN = re.compile(r"[IVXLC]+")
_TITLE_GAP = re.compile(r"\.?[ \t\u00a0]+")
_YEAR = re.compile(r"(?<!\w)(?<!\d[.,])(1[0-9]{3}|20[0-9]{2})(?!\w|[.,]\d)")
_SPACES = re.compile(r"\s+")
_POSSESSIVE = ("'s", "\u2019s")


def _split_sentences(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.group(0).lstrip().startswith("."):
            before = text[start : m.start()].rsplit(None, 1)
            word = before[-1].lower() if before else ""
            # "Mr. Stark", "e.g. this", "George R. Martin": the dot ends a word, not a sentence.
            if word.rstrip(".") in _ABBREVIATIONS or (len(word) == 1 and word.isalpha() and word.isupper()):
                continue
        end = m.start() + len(m.group(0).rstrip())
        if text[start:end].strip():
            spans.append((start, end))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


@dataclass(slots=True)
class _Occurrence:
    chunk_index: int
    sentence_index: int  # -1: not in the text (a chunk "about" the name)
    position: int
    end: int = -1


@dataclass(slots=True)
class _Candidate:
    name: str
    occurrences: list[_Occurrence] = field(default_factory=list)
    person_cues: int = 0
    location_cues: int = 0
    weak_location_cues: int = 0
    date: bool = False
    non_initial: bool = False  # seen somewhere other than as a lone sentence-initial word
    abbreviation: bool = False  # an acronym the text spells out in lower case: "(LDC)"


def _is_acronym(token: str) -> bool:
    letters = [c for c in token if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def _is_capitalised(token: str) -> bool:
    return token[0].isupper()


def is_name_word(token: str) -> bool:
    """Whether a capitalised word may be (part of) a name. Code and its documentation write
    words in capitals that are none: an identifier with an underscore (``RELATES_TO``,
    ``KGRAG_PORT``), a keyword, type name or placeholder in capitals (``MATCH``, ``STRING``,
    ``FOLDER``), an abbreviation of a common noun or a unit (``CPU``, ``MB``), an
    abbreviation or keyword with an English ending (``APIs``, ``PDFs``, ``MERGEd``), a
    compound ending in a lower-case word
    (``CPU-bound``, ``LLM-extracted``)."""
    if not token or not token[0].isupper() or "_" in token:
        return False
    if token.lower() in _CODE_WORDS and not token[1:].islower():  # "MATCH", "MiB"; not "Ms"
        return False
    if _ABBREVIATION_WITH_ENDING.fullmatch(token):
        return False
    return not ("-" in token and token.rsplit("-", 1)[1][:1].islower())


def _is_common_word(token: str) -> bool:
    """A capitalised common English word ("Refined", "Community"), not an acronym."""
    return token[1:].islower() and token.lower() in _COMMON_WORDS


def _is_code_word(token: str) -> bool:
    return token[:1].isupper() and not is_name_word(token)


def _opens_a_line(gap: str) -> bool:
    """Whether the text between two words starts a new line, a table column or a clause after
    a colon: the word after it is capitalised by its place, as at a sentence's start."""
    if "\n" in gap or "\t" in gap or "  " in gap:
        return True
    return gap.rstrip()[-1:] in (":", "|")


def _looks_like_a_person(words: Sequence[str]) -> bool:
    """Two or more plain capitalised words ("Atal Bihari Vajpayee", "John Feldmann"): an
    "of" after them starts another name ("... of Bharatiya Janata Party") rather than a
    longer one, unlike "University of", "Lord of", "Berenice II of"."""
    core = [w for w in words if w.lower() not in _STOPWORDS]
    if len(core) < 2:
        return False
    lowered = [w.lower().rstrip(".") for w in core]
    if any(w in _ORG_WORDS or w in _LOCATION_WORDS or w in _HONORIFICS or w in _OTHER_WORDS for w in lowered):
        return False
    if lowered[0] in _LOCATION_FIRST or _ROMAN.fullmatch(core[-1]) or any(_is_acronym(w) for w in core):
        return False
    return not any(w.endswith(_POSSESSIVE) for w in core)


#: the longest description, in characters (the offline extractor's default)
DESCRIPTION_CHARS = 300


def describe_name(content: str, name: str = "", first: int = -1, *, limit: int = DESCRIPTION_CHARS) -> str:
    """The sentence of ``content`` that speaks of a name: the one holding offset ``first``
    (where a chunk first mentions it); with no offset (a chunk about the name without
    writing it, -1), the first sentence writing ``name`` (any case, whole words), else the
    first sentence. A sentence over several lines (a heading, list items, a table joined to
    it: Markdown keeps no full stop there) is cut to the line holding the name. One line, at
    most ``limit`` characters (an ellipsis when cut)."""
    text = content or ""
    spans = _split_sentences(text)
    if not spans:
        return ""
    at = first if 0 <= first < len(text) else -1
    if at < 0 and name.strip():
        words = name.split()
        found = re.search(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", text, re.IGNORECASE)
        at = found.start() if found else -1
    if at < 0:
        start, end = spans[0]
    else:
        start, end = next(((a, b) for a, b in spans if a <= at < b), spans[-1])
        if "\n" in text[start:end] and start <= at < end:
            line_start = text.rfind("\n", start, at) + 1 or start
            line_end = text.find("\n", at, end)
            start, end = max(start, line_start), end if line_end < 0 else line_end
    out = _SPACES.sub(" ", text[start:end]).strip()
    if len(out) > limit:
        out = out[: limit - 1].rstrip() + "\u2026"
    return out


def _spelled_out(text: str, tokens: Sequence[tuple[int, int, str]], k: int) -> bool:
    """Whether the acronym at token ``k`` stands in parentheses right after the lower-case
    words it abbreviates ("least developed countries (LDC)")."""
    start, end, word = tokens[k]
    letters = [c.lower() for c in word if c.isalpha()]
    if text[start - 1 : start] != "(" or text[end : end + 1] != ")" or k < len(letters):
        return False
    before = [tokens[k - len(letters) + i][2] for i in range(len(letters))]
    return all(w.islower() for w in before) and [w[0] for w in before] == letters


def evident_name(name: str) -> bool:
    """A name wherever it is written, even alone at a sentence's start: an acronym ("NASA")
    or a software-shaped word ("Neo4j", "GraphRetriever")."""
    return _is_acronym(name) or _software_shaped(name)


def _software_shaped(name: str) -> bool:
    """One word with a digit among letters or a capital inside ("Neo4j", "WordLlama", "PyPI"):
    how software and products are named, never places."""
    if " " in name or _is_acronym(name):
        return False
    letters = name.lstrip("(").rstrip(")")
    return any(c.isdigit() for c in letters) or any(
        a.islower() and b.isupper() for a, b in zip(letters, letters[1:])
    )


def type_from_cues(name: str, *, occurrences: int, person: int = 0, location: int = 0, weak: int = 0) -> str:
    """The type the offline extractor gives a name from its words and the cues counted around
    its ``occurrences`` (see :class:`OfflineEntityExtractor`)."""
    words = [w.lower().rstrip(".") for w in name.split()]
    if not words:
        return "OTHER"
    if len(words) == 1 and _is_acronym(name):
        # "NASA", "CGT" name organisations; "UTF-8", "BM25", "MP3" name standards and things
        return "OTHER" if any(c.isdigit() for c in name) else "ORGANIZATION"
    if any(w in _ORG_WORDS for w in words):
        return "ORGANIZATION"
    if any(w in _LOCATION_WORDS for w in words) or (len(words) > 1 and words[0] in _LOCATION_FIRST):
        return "LOCATION"
    if words[-1] in _OTHER_WORDS:
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
    if len(words) > 1 and not any(w in ("of", "the") or w.endswith(_POSSESSIVE) for w in words):
        parts = name.split()
        capitals = [_is_acronym(w) and "." not in w for w in parts]
        if (any(capitals) and not all(capitals)) or any(_software_shaped(w) for w in parts):
            return "OTHER"  # "Intel Xeon", "Neo4j Browser", "BBC Radio": products and outlets
        return "PERSON"
    return "OTHER"


class OfflineEntityExtractor:
    """Entities from capitalisation and known names, types from cue words, relations from
    closeness in a sentence. No model.

    Two passes over the chunks:

    1. **Candidates** from capitalisation:

       - proper-noun phrases: runs of capitalised words separated by spaces only, with
         lower-case connectors inside ("University of Oxford", "Ludwig van Beethoven", "Bank of
         the West") and possessives joining a following name ("King's Landing"); a trailing
         possessive is cut ("Ned Stark's" -> "Ned Stark");
       - acronyms ("NASA", "AT&T");
       - leading stopwords and titles are cut ("When Ned Stark" -> "Ned Stark",
         "King Robert Baratheon" -> "Robert Baratheon");
       - a lone capitalised word that opens a sentence, a line, a table column or a clause
         after a colon counts only if the same word is also found capitalised elsewhere (in
         the same ``extract`` call) or is an acronym or software-shaped ("Neo4j"), so "Winter
         is coming." adds nothing; a lone common English word (``common_words.txt``), a
         lone word after "a"/"an" and runs of common words count nowhere;
       - code is no name: keywords and placeholders in capitals, identifiers with
         underscores, plurals of abbreviations, "-bound" compounds (:func:`is_name_word`);
       - with ``include_dates``, years 1000-2099 as ``DATE`` entities.

    2. **Mentions** from a gazetteer (:class:`~kgrag_neo4j.entities.gazetteer.Gazetteer`):
       every candidate name, every ``known_entities`` name and every name given in ``names``
       (document titles, a user's list) is looked for in every chunk, whatever its case, on
       word boundaries, longest name first. So "new york" and "NEW YORK" are mentions of "New
       York", and a title that the text never capitalises still links. A one-word name that the
       chunks mostly write in lower case ("Bank") counts only where capitalised.
       **Short forms**: inside one document, a one-word mention that is the first or last word
       of exactly one longer name mentioned in that document counts as that name ("Robert" ->
       "Robert Baratheon" where the document speaks of Robert Baratheon; elsewhere "Robert"
       stays "Robert").
       ``about`` (chunk id -> name) adds a mention of a name to a chunk that is about it though
       it may not spell it out: the first chunk of a document titled with that name.

    Types (:func:`type_from_cues`): ``ORGANIZATION`` for organisation words in the name
    (University, Inc, Bank, House, ...) or an acronym without digits; ``LOCATION`` for place words (River, Mount, City, ...) or a first word
    like New/North; then ``PERSON`` if some mention follows a title (Mr., Lord, King, ...);
    ``LOCATION`` if some mention follows "near/across/throughout/...", "in" after a verb of
    place ("lived in X", "born in X"), or is "Lord of X", when such cues are at least a fifth
    of its mentions and the name is not software-shaped; ``LOCATION`` as well when a bare "in X"
    is how most mentions read; otherwise a name seen after a bare "in" is ``OTHER`` (written in
    Python is not a place); ``PERSON`` for any other name of two or more capitalised words
    without "of"/"the" ("Ludwig van Beethoven" yes, "Game of Thrones" and "King's Landing" no);
    ``OTHER`` for the rest and for names known only from ``names``. Entities passed as
    ``known_entities`` keep their own type and id.

    Mentions: per chunk, the number of occurrences of the name; only the
    ``max_entities_per_chunk`` most frequent entities of a chunk are kept, and an entity with
    fewer than ``min_mentions`` mentions in the whole call is dropped. The description is the
    sentence of the first mention, cut to its line (:func:`describe_name`).

    Relations: one ``CO_OCCURS`` relation per pair of entities mentioned in one window (a
    sentence by default, and then at most ``max_gap`` words apart; a whole chunk with
    ``window="chunk"``). Each such window adds its closeness ``1 / (1 + gap / 10)`` (``gap`` = words between
    the nearest mentions of the two; 0 when adjacent) to the pair's strength ``s``; the weight
    is ``s / (s + 1)``: one adjacent co-mention gives 0.5, closer and more often approaches 1.
    Endpoints are ordered by id (the relation is symmetric); ``metadata["count"]`` is the
    number of shared windows.

    What it cannot do: a common word opening a sentence and followed by a connector joins the
    name ("Shares of Acme Inc fell." gives "Shares of Acme Inc"); pronouns ("he"); names broken
    by punctuation or line breaks ("George R. R. Martin" becomes "George" and "Martin");
    nested names (the longest wins); and any semantics: a type is a guess from cue words, and
    the same name may get different types in two calls that see different cues (pass
    ``known_entities`` to pin them).
    """

    def __init__(
        self,
        *,
        min_mentions: int = 1,
        max_entities_per_chunk: int = 20,
        window: str = "sentence",
        namespace: str = "default",
        include_dates: bool = False,
        min_cooccurrence: int = 1,
        description_chars: int = 300,
        max_gap: int = 30,
    ) -> None:
        for label, value in (
            ("min_mentions", min_mentions),
            ("max_entities_per_chunk", max_entities_per_chunk),
            ("min_cooccurrence", min_cooccurrence),
            ("description_chars", description_chars),
            ("max_gap", max_gap),
        ):
            check_int(value, label, minimum=1)
        check_choice(window, "window", ("chunk", "sentence"))
        self.min_mentions = min_mentions
        self.max_entities_per_chunk = max_entities_per_chunk
        self.window = window
        self.namespace = namespace
        self.include_dates = include_dates
        self.min_cooccurrence = min_cooccurrence
        self.description_chars = description_chars
        self.max_gap = max_gap

    # -- public -----------------------------------------------------------------------------

    def extract(
        self,
        chunks: Iterable[TextUnit],
        *,
        known_entities: Iterable[Entity] = (),
        names: Iterable[str] = (),
        about: Mapping[str, str] | None = None,
    ) -> ExtractionResult:
        """Entities, mentions and relations of ``chunks``.

        ``known_entities``: stored entities; found again, they keep their type and id.
        ``names``: more names to look for (document titles, a user's gazetteer); typed
        ``OTHER`` unless a candidate or a known entity says otherwise. ``about``: chunk id ->
        a name the chunk is about (its document's title), counted as one mention there.
        """
        units = list(chunks)
        about = dict(about or {})
        known: dict[str, Entity] = {}
        for e in known_entities:
            known.setdefault(normalise_name(e.name), e)

        candidates: dict[str, _Candidate] = {}
        sentences: list[list[tuple[int, int]]] = []
        for ci, unit in enumerate(units):
            text = unit.content or ""
            spans = _split_sentences(text)
            sentences.append(spans)
            for si, (start, end) in enumerate(spans):
                self._scan_sentence(text, start, end, ci, si, candidates)

        accepted = {
            key: c
            for key, c in candidates.items()
            if ((c.non_initial or evident_name(c.name)) and not c.abbreviation) or c.date or key in known
        }
        # every name the gazetteer looks for: gazetteer form -> entity key, and a display name
        display: dict[str, str] = {}
        form_to_key: dict[str, str] = {}
        for key, c in accepted.items():
            if not c.date:
                display.setdefault(key, c.name)
        for key, e in known.items():
            display.setdefault(key, e.name)
        for raw in list(names) + list(about.values()):
            if not isinstance(raw, str):
                raise InputError(f"names must be strings, got {type(raw).__name__}")
            key = normalise_name(raw)
            if key:
                display.setdefault(key, raw.strip())
        for key, name in display.items():
            form_to_key.setdefault(name_form(name), key)
            form_to_key.setdefault(name_form(key), key)
        gazetteer = Gazetteer(form_to_key)

        matches = [gazetteer.find(u.content or "") for u in units]
        lower_only = self._lowercase_words(matches, form_to_key)
        short = self._short_forms(units, matches, form_to_key, display)

        # Mentions per chunk: gazetteer matches (dates from the candidates), with positions
        per_chunk: list[dict[str, list[_Occurrence]]] = [{} for _ in units]
        for ci, found in enumerate(matches):
            doc = getattr(units[ci], "document_id", "") or ""
            spans = sentences[ci]
            for m in found:
                key = form_to_key[m.key]
                if key in lower_only and not m.surface[:1].isupper():
                    continue
                key = short.get((doc, key), key)
                si = _sentence_of(spans, m.start)
                per_chunk[ci].setdefault(key, []).append(_Occurrence(ci, si, m.start, m.end))
        for key, c in accepted.items():
            if c.date:
                for occ in c.occurrences:
                    per_chunk[occ.chunk_index].setdefault(key, []).append(occ)
        by_id = {u.id: ci for ci, u in enumerate(units)}
        for chunk_id, raw in about.items():
            at = by_id.get(chunk_id)
            key = normalise_name(raw)
            if at is not None and key and key not in per_chunk[at]:
                per_chunk[at][key] = [_Occurrence(at, -1, -1)]
        for ci, keyed in enumerate(per_chunk):
            if len(keyed) > self.max_entities_per_chunk:
                ranked = sorted(keyed, key=lambda k: (-len(keyed[k]), keyed[k][0].position))  # noqa: B023 (used at once)
                per_chunk[ci] = {k: keyed[k] for k in ranked[: self.max_entities_per_chunk]}

        totals: dict[str, int] = {}
        for keyed in per_chunk:
            for key, occs in keyed.items():
                totals[key] = totals.get(key, 0) + len(occs)
        kept = {k for k, n in totals.items() if n >= self.min_mentions}

        # Entities in order of first appearance.
        entities: dict[str, Entity] = {}
        for ci, keyed in enumerate(per_chunk):
            for key, occs in sorted(keyed.items(), key=lambda kv: kv[1][0].position):
                if key not in kept or key in entities:
                    continue
                cand = accepted.get(key)
                if cand is None:  # only a given name: nothing in the text says what it is
                    cand = _Candidate(name=display[key])
                    type_ = "OTHER"
                else:
                    type_ = self._type_of(cand)
                first = next((o for o in occs if o.sentence_index >= 0), occs[0])
                entities[key] = self._make_entity(key, cand, type_, known, units, sentences, ci, first)

        mentions = [
            EntityMention(units[ci].id, entities[key].id, len(occs))
            for ci, found in enumerate(per_chunk)
            for key, occs in sorted(found.items(), key=lambda kv: kv[1][0].position)
            if key in entities
        ]
        relations = self._cooccurrences(units, per_chunk, entities)
        return ExtractionResult(
            entities=tuple(entities.values()), relations=tuple(relations), mentions=tuple(mentions)
        )

    # -- linking ----------------------------------------------------------------------------

    @staticmethod
    def _lowercase_words(matches: Sequence[Sequence[NameMatch]], form_to_key: Mapping[str, str]) -> set[str]:
        counts: dict[str, tuple[int, int]] = {}
        for found in matches:
            for m in found:
                if " " in m.key:
                    continue
                upper, lower = counts.get(m.key, (0, 0))
                if m.surface[:1].isupper():
                    upper += 1
                else:
                    lower += 1
                counts[m.key] = (upper, lower)
        return {form_to_key[k] for k in lowercase_words(counts)}

    @staticmethod
    def _short_forms(
        units: Sequence[TextUnit],
        matches: Sequence[Sequence[NameMatch]],
        form_to_key: Mapping[str, str],
        display: Mapping[str, str],
    ) -> dict[tuple[str, str], str]:
        """(document id, one-word key) -> the one longer name of that document it is short for."""
        in_doc: dict[str, set[str]] = {}
        for unit, found in zip(units, matches):
            doc = getattr(unit, "document_id", "") or ""
            in_doc.setdefault(doc, set()).update(form_to_key[m.key] for m in found)
        out: dict[tuple[str, str], str] = {}
        for doc, keys in in_doc.items():
            longer: dict[str, set[str]] = {}
            for key in keys:
                words = name_form(display[key]).split()
                if len(words) < 2:
                    continue
                for end in {words[0], words[-1]}:
                    longer.setdefault(end, set()).add(key)
            for key in keys:
                if " " in key:
                    continue
                owners = longer.get(name_form(display[key]), set())
                if len(owners) == 1:
                    out[(doc, key)] = next(iter(owners))
        return out

    # -- scanning ---------------------------------------------------------------------------

    def _scan_sentence(
        self,
        text: str,
        start: int,
        end: int,
        ci: int,
        si: int,
        candidates: dict[str, _Candidate],
    ) -> None:
        tokens = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(text, start, end)]
        i = 0
        n = len(tokens)
        while i < n:
            if not is_name_word(tokens[i][2]):
                i += 1
                continue
            # Grow a run of capitalised words (connectors allowed between them).
            run = [i]
            j = i + 1
            while j < n:
                # j is always the token right after the run's last word.
                if not self._joined(text, tokens, j):
                    break
                if tokens[j - 1][2].endswith(_POSSESSIVE) and not _is_capitalised(tokens[j][2]):
                    break
                if is_name_word(tokens[j][2]):
                    if tokens[j][2] != tokens[j - 1][2] and any(tokens[x][2] == tokens[j][2] for x in run):
                        break  # "Victorian Government Victorian Coalition": two names side by side
                    run.append(j)
                    j += 1
                    continue
                # Connectors join only if a capitalised word follows them directly.
                k = j
                while k < n and tokens[k][2] in _CONNECTORS and self._joined(text, tokens, k):
                    k += 1
                if k > j and k < n and is_name_word(tokens[k][2]) and self._joined(text, tokens, k):
                    if tokens[j][2] == "of" and _looks_like_a_person([tokens[x][2] for x in run]):
                        break
                    run.extend(range(j, k + 1))
                    j = k + 1
                    continue
                break
            # a word at the start of a sentence, a line, a table column, after a colon or
            # right after code is capitalised by its place
            initial = i == 0 or _opens_a_line(text[tokens[i - 1][1] : tokens[i][0]]) or _is_code_word(tokens[i - 1][2])
            # "a Split pre-tokenizer", "a Mexican Trucking Company": a name takes no "a"; and
            # "Neo4j 5.26 Community", "Radio 6 Music": words after a name's number end that name
            # "Intel(R) Xeon(R) Processor": a trademark sign does not end the name before it
            described = i > 0 and (
                (tokens[i - 1][2] in _ARTICLES and len(run) == 1)
                or (i > 1 and tokens[i - 1][2][:1].isdigit() and is_name_word(tokens[i - 2][2]))
                or _TRADEMARK.search(text, max(start, tokens[i][0] - 6), tokens[i][0]) is not None
            )
            self._add_run(text, tokens, run, initial, ci, si, candidates, described=described)
            i = run[-1] + 1
        if self.include_dates:
            for m in _YEAR.finditer(text, start, end):
                c = candidates.setdefault(m.group(1), _Candidate(name=m.group(1), date=True))
                c.occurrences.append(_Occurrence(ci, si, m.start()))

    @staticmethod
    def _joined(text: str, tokens: Sequence[tuple[int, int, str]], k: int) -> bool:
        """Whether token ``k`` follows token ``k - 1`` after one space (no punctuation), or
        after the dot of "St.", "Mt.", "Ft." ("St. Moritz")."""
        prev_end, start = tokens[k - 1][1], tokens[k][0]
        if _NAME_GAP.fullmatch(text, prev_end, start) is not None:
            return start - prev_end == 1 or _is_acronym(tokens[k - 1][2]) == _is_acronym(tokens[k][2])
        return tokens[k - 1][2].lower() in _PLACE_ABBREVIATIONS and _NAME_GAP.fullmatch(text, prev_end + 1, start) is not None and text[prev_end] == "."

    def _add_run(
        self,
        text: str,
        tokens: Sequence[tuple[int, int, str]],
        run: list[int],
        sentence_initial: bool,
        ci: int,
        si: int,
        candidates: dict[str, _Candidate],
        *,
        described: bool = False,
    ) -> None:
        # "St. Moritz" keeps its dot, as the text writes it (the gazetteer finds it so)
        words = [tokens[k][2] + ("." if tokens[k][2].lower() in _PLACE_ABBREVIATIONS and text[tokens[k][1] : tokens[k][1] + 1] == "." and k != run[-1] else "") for k in run]
        person = location = weak_location = False
        # Context just before the run: "Mr. Smith", "lived in Winterfell", "near the North".
        first = run[0]
        if first > 0:
            prev = tokens[first - 1]
            gap_ok = _TITLE_GAP.fullmatch(text, prev[1], tokens[first][0]) is not None
            if gap_ok and prev[2].lower() in _HONORIFICS:
                person = True
            prev1 = prev[2].lower()
            prev2 = tokens[first - 2][2].lower() if first > 1 else ""
            preposition, before = (prev1, prev2) if prev1 != "the" else (prev2, tokens[first - 3][2].lower() if first > 2 else "")
            if preposition in _LOCATION_PREPOSITIONS:
                if preposition not in _WEAK_PREPOSITIONS or before in _LOCATIVE_VERBS:
                    location = True
                else:
                    weak_location = True
        stripped = 0
        while words:
            w = words[0].lower()
            if w in _HONORIFICS:
                if len(words) > 1 and words[1] == "of":
                    location = True  # "Lord of Winterfell": a domain, not a person
                else:
                    person = True
            elif w in _LOCATION_PREPOSITIONS:
                # "In Winterfell, ..." opening a sentence: as weak as any other bare "in"
                if w in _WEAK_PREPOSITIONS:
                    weak_location = True
                else:
                    location = True
            elif not (w in _STOPWORDS or w in _CONNECTORS):
                break
            words.pop(0)
            stripped += 1
        while words and words[-1] in _CONNECTORS:
            words.pop()
        if not words:
            return
        # "Print JSON", "Use CSV" opening a line: a capitalised word before an acronym there is
        # a verb or a heading's word ("World War II" keeps its numeral)
        # and a common word there is a verb or a heading's word: "Print Settings" is "Settings"
        if sentence_initial and stripped == 0 and len(words) > 1 and not _is_acronym(words[0]):
            if (_is_acronym(words[1]) and not _ROMAN.fullmatch(words[1])) or _is_common_word(words[0]):
                words.pop(0)
                stripped += 1
        if words[-1].endswith(_POSSESSIVE):
            words[-1] = words[-1][:-2]
        if words and words[-1].lower().rstrip(".") in _SUFFIXES_PERSON and len(words) > 1:
            person = True
        if len(words) == 1:
            w = words[0].lower()
            if w in _STOPWORDS or w in _MONTHS_DAYS or len(words[0]) < 2 or w in _HONORIFICS:
                return
        name = " ".join(words)
        key = normalise_name(name)
        if not key:
            return
        cand = candidates.get(key)
        if cand is None:
            cand = candidates[key] = _Candidate(name=name)
        lone = len(words) == 1 and (_is_common_word(words[0]) or (sentence_initial and stripped == 0))
        # "least developed countries (LDC)": an abbreviation of common words is no name
        spelled = len(words) == 1 and _is_acronym(words[0]) and _spelled_out(text, tokens, run[0])
        # "He is also Story Writer": common words capitalised for emphasis, not a name
        plain = len(words) > 1 and all(_is_common_word(w) for w in words)
        if not (lone or described or plain):
            cand.non_initial = True
        cand.abbreviation = cand.abbreviation or spelled
        cand.person_cues += person
        cand.location_cues += location
        cand.weak_location_cues += weak_location and not location
        cand.occurrences.append(_Occurrence(ci, si, tokens[run[0]][0]))

    # -- assembling -------------------------------------------------------------------------

    def _type_of(self, cand: _Candidate) -> str:
        if cand.date:
            return "DATE"
        return type_from_cues(cand.name, occurrences=len(cand.occurrences), person=cand.person_cues,
                              location=cand.location_cues, weak=cand.weak_location_cues)

    def _make_entity(
        self,
        key: str,
        cand: _Candidate,
        type_: str,
        known: dict[str, Entity],
        units: Sequence[TextUnit],
        sentences: Sequence[Sequence[tuple[int, int]]],
        ci: int,
        occ: _Occurrence,
    ) -> Entity:
        # the sentence writing the name (a chunk only "about" it: the first writing it)
        first = occ.position if occ.sentence_index >= 0 else -1
        description = describe_name(units[ci].content, cand.name, first, limit=self.description_chars)
        if key in known:
            k = known[key]
            return Entity(
                id=k.id,
                name=k.name,
                type=k.type,
                description=description,
                source_chunk_id=units[ci].id,
                namespace=k.namespace,
            )
        return Entity(
            id=entity_id(self.namespace, cand.name, type_),
            name=cand.name,
            type=type_,
            description=description,
            source_chunk_id=units[ci].id,
            namespace=self.namespace,
        )

    def _cooccurrences(
        self,
        units: Sequence[TextUnit],
        per_chunk: Sequence[dict[str, list[_Occurrence]]],
        entities: dict[str, Entity],
    ) -> list[EntityRelation]:
        strength: dict[tuple[str, str], float] = {}
        counts: dict[tuple[str, str], int] = {}
        for ci, found in enumerate(per_chunk):
            starts = [m.start() for m in _WORDS.finditer(units[ci].content or "")]
            # the windows: per sentence (or the whole chunk), each entity's mention positions
            windows: dict[int, dict[str, list[tuple[int, int]]]] = {}
            for key, occs in found.items():
                if key not in entities:
                    continue
                for o in occs:
                    if o.position < 0:  # an "about" mention has no place in the text
                        continue
                    w = 0 if self.window == "chunk" else o.sentence_index
                    windows.setdefault(w, {}).setdefault(entities[key].id, []).append((o.position, max(o.end, o.position)))
            for members in windows.values():
                ids = sorted(members)
                for i in range(len(ids)):
                    for j in range(i + 1, len(ids)):
                        gap = _word_gap(starts, members[ids[i]], members[ids[j]])
                        if gap > self.max_gap and self.window == "sentence":
                            continue
                        pair = (ids[i], ids[j])
                        strength[pair] = strength.get(pair, 0.0) + 1.0 / (1.0 + gap / 10.0)
                        counts[pair] = counts.get(pair, 0) + 1
        by_id = {e.id: e for e in entities.values()}
        unit = "chunk" if self.window == "chunk" else "sentence"
        out = []
        for (a, b), n in sorted(counts.items()):
            if n < self.min_cooccurrence:
                continue
            out.append(
                EntityRelation(
                    source_id=a,
                    target_id=b,
                    type=CO_OCCURS,
                    weight=cooccurrence_weight(strength[(a, b)]),
                    description=f"{by_id[a].name} and {by_id[b].name} appear together in {n} {unit}{'s' if n != 1 else ''}",
                    metadata={"count": n, "window": self.window},
                )
            )
        return out


_WORDS = re.compile(r"\w+")


def _sentence_of(spans: Sequence[tuple[int, int]], position: int) -> int:
    for i, (start, end) in enumerate(spans):
        if start <= position < end:
            return i
    return max(0, len(spans) - 1)


def _word_gap(word_starts: Sequence[int], a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> int:
    """Words between the nearest mentions of two names; mentions are (start, end) spans and
    ``word_starts`` the sorted start offsets of the chunk's words."""
    best: int | None = None
    for x in a:
        for y in b:
            first, second = (x, y) if x[0] <= y[0] else (y, x)
            # words starting in [end of the first mention, start of the second)
            gap = max(0, bisect.bisect_left(word_starts, second[0]) - bisect.bisect_left(word_starts, first[1]))
            if best is None or gap < best:
                best = gap
    return best or 0
