"""Deterministic entity extraction without a model: proper-noun phrases and co-occurrence."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import InputError
from ..types.entities import Entity, EntityMention, EntityRelation, ExtractionResult, entity_id, normalise_name
from ..validation import check_choice, check_int
from .cooccurrence import CO_OCCURS, WORDS, cooccurrence_weight, sentence_of, word_gap
from .descriptions import describe_name
from .extract_llm import TextUnit
from .gazetteer import Gazetteer, NameMatch, lowercase_words, name_form
from .name_types import evident_name, type_from_cues
from .name_words import (
    ARTICLES,
    CONNECTORS,
    HONORIFICS,
    LOCATION_PREPOSITIONS,
    LOCATIVE_VERBS,
    MONTHS_DAYS,
    NAME_GAP,
    PLACE_ABBREVIATIONS,
    POSSESSIVE,
    ROMAN,
    STOPWORDS,
    SUFFIXES_PERSON,
    TITLE_GAP,
    TOKEN,
    TRADEMARK,
    WEAK_PREPOSITIONS,
    YEAR,
    is_acronym,
    is_capitalised,
    is_code_word,
    is_common_word,
    is_name_word,
    looks_like_a_person,
    opens_a_line,
    spelled_out,
    split_sentences,
)

__all__ = ["OfflineEntityExtractor"]


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
            spans = split_sentences(text)
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
                si = sentence_of(spans, m.start)
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
        return ExtractionResult(entities=tuple(entities.values()), relations=tuple(relations), mentions=tuple(mentions))

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
        tokens = [(m.start(), m.end(), m.group(0)) for m in TOKEN.finditer(text, start, end)]
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
                if tokens[j - 1][2].endswith(POSSESSIVE) and not is_capitalised(tokens[j][2]):
                    break
                if is_name_word(tokens[j][2]):
                    if tokens[j][2] != tokens[j - 1][2] and any(tokens[x][2] == tokens[j][2] for x in run):
                        break  # "Victorian Government Victorian Coalition": two names side by side
                    run.append(j)
                    j += 1
                    continue
                # Connectors join only if a capitalised word follows them directly.
                k = j
                while k < n and tokens[k][2] in CONNECTORS and self._joined(text, tokens, k):
                    k += 1
                if k > j and k < n and is_name_word(tokens[k][2]) and self._joined(text, tokens, k):
                    if tokens[j][2] == "of" and looks_like_a_person([tokens[x][2] for x in run]):
                        break
                    run.extend(range(j, k + 1))
                    j = k + 1
                    continue
                break
            # a word at the start of a sentence, a line, a table column, after a colon or
            # right after code is capitalised by its place
            initial = i == 0 or opens_a_line(text[tokens[i - 1][1] : tokens[i][0]]) or is_code_word(tokens[i - 1][2])
            # "a Split pre-tokenizer", "a Mexican Trucking Company": a name takes no "a"; and
            # "Neo4j 5.26 Community", "Radio 6 Music": words after a name's number end that name
            # "Intel(R) Xeon(R) Processor": a trademark sign does not end the name before it
            described = i > 0 and (
                (tokens[i - 1][2] in ARTICLES and len(run) == 1)
                or (i > 1 and tokens[i - 1][2][:1].isdigit() and is_name_word(tokens[i - 2][2]))
                or TRADEMARK.search(text, max(start, tokens[i][0] - 6), tokens[i][0]) is not None
            )
            self._add_run(text, tokens, run, initial, ci, si, candidates, described=described)
            i = run[-1] + 1
        if self.include_dates:
            for m in YEAR.finditer(text, start, end):
                c = candidates.setdefault(m.group(1), _Candidate(name=m.group(1), date=True))
                c.occurrences.append(_Occurrence(ci, si, m.start()))

    @staticmethod
    def _joined(text: str, tokens: Sequence[tuple[int, int, str]], k: int) -> bool:
        """Whether token ``k`` follows token ``k - 1`` after one space (no punctuation), or
        after the dot of "St.", "Mt.", "Ft." ("St. Moritz")."""
        prev_end, start = tokens[k - 1][1], tokens[k][0]
        if NAME_GAP.fullmatch(text, prev_end, start) is not None:
            return start - prev_end == 1 or is_acronym(tokens[k - 1][2]) == is_acronym(tokens[k][2])
        return (
            tokens[k - 1][2].lower() in PLACE_ABBREVIATIONS
            and NAME_GAP.fullmatch(text, prev_end + 1, start) is not None
            and text[prev_end] == "."
        )

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
        words = [
            tokens[k][2]
            + (
                "."
                if tokens[k][2].lower() in PLACE_ABBREVIATIONS and text[tokens[k][1] : tokens[k][1] + 1] == "." and k != run[-1]
                else ""
            )
            for k in run
        ]
        person = location = weak_location = False
        # Context just before the run: "Mr. Smith", "lived in Winterfell", "near the North".
        first = run[0]
        if first > 0:
            prev = tokens[first - 1]
            gap_ok = TITLE_GAP.fullmatch(text, prev[1], tokens[first][0]) is not None
            if gap_ok and prev[2].lower() in HONORIFICS:
                person = True
            prev1 = prev[2].lower()
            prev2 = tokens[first - 2][2].lower() if first > 1 else ""
            preposition, before = (prev1, prev2) if prev1 != "the" else (prev2, tokens[first - 3][2].lower() if first > 2 else "")
            if preposition in LOCATION_PREPOSITIONS:
                if preposition not in WEAK_PREPOSITIONS or before in LOCATIVE_VERBS:
                    location = True
                else:
                    weak_location = True
        stripped = 0
        while words:
            w = words[0].lower()
            if w in HONORIFICS:
                if len(words) > 1 and words[1] == "of":
                    location = True  # "Lord of Winterfell": a domain, not a person
                else:
                    person = True
            elif w in LOCATION_PREPOSITIONS:
                # "In Winterfell, ..." opening a sentence: as weak as any other bare "in"
                if w in WEAK_PREPOSITIONS:
                    weak_location = True
                else:
                    location = True
            elif not (w in STOPWORDS or w in CONNECTORS):
                break
            words.pop(0)
            stripped += 1
        while words and words[-1] in CONNECTORS:
            words.pop()
        if not words:
            return
        # "Print JSON", "Use CSV" opening a line: a capitalised word before an acronym there is
        # a verb or a heading's word ("World War II" keeps its numeral)
        # and a common word there is a verb or a heading's word: "Print Settings" is "Settings"
        if sentence_initial and stripped == 0 and len(words) > 1 and not is_acronym(words[0]):
            if (is_acronym(words[1]) and not ROMAN.fullmatch(words[1])) or is_common_word(words[0]):
                words.pop(0)
                stripped += 1
        if words[-1].endswith(POSSESSIVE):
            words[-1] = words[-1][:-2]
        if words and words[-1].lower().rstrip(".") in SUFFIXES_PERSON and len(words) > 1:
            person = True
        if len(words) == 1:
            w = words[0].lower()
            if w in STOPWORDS or w in MONTHS_DAYS or len(words[0]) < 2 or w in HONORIFICS:
                return
        name = " ".join(words)
        key = normalise_name(name)
        if not key:
            return
        cand = candidates.get(key)
        if cand is None:
            cand = candidates[key] = _Candidate(name=name)
        lone = len(words) == 1 and (is_common_word(words[0]) or (sentence_initial and stripped == 0))
        # "least developed countries (LDC)": an abbreviation of common words is no name
        spelled = len(words) == 1 and is_acronym(words[0]) and spelled_out(text, tokens, run[0])
        # "He is also Story Writer": common words capitalised for emphasis, not a name
        plain = len(words) > 1 and all(is_common_word(w) for w in words)
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
        return type_from_cues(
            cand.name,
            occurrences=len(cand.occurrences),
            person=cand.person_cues,
            location=cand.location_cues,
            weak=cand.weak_location_cues,
        )

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
            starts = [m.start() for m in WORDS.finditer(units[ci].content or "")]
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
                        gap = word_gap(starts, members[ids[i]], members[ids[j]])
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
