"""Which words can be (part of) a name, without a model: the word lists and patterns of the
offline extractor, sentence splitting, and the tests it makes of one word or a run of words."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "ARTICLES",
    "CONNECTORS",
    "HONORIFICS",
    "LOCATION_FIRST",
    "LOCATION_PREPOSITIONS",
    "LOCATION_WORDS",
    "LOCATIVE_VERBS",
    "MONTHS_DAYS",
    "NAME_GAP",
    "ORG_WORDS",
    "OTHER_WORDS",
    "PLACE_ABBREVIATIONS",
    "POSSESSIVE",
    "ROMAN",
    "SPACES",
    "STOPWORDS",
    "SUFFIXES_PERSON",
    "TITLE_GAP",
    "TOKEN",
    "TRADEMARK",
    "WEAK_PREPOSITIONS",
    "YEAR",
    "is_acronym",
    "is_capitalised",
    "is_code_word",
    "is_common_word",
    "is_name_word",
    "looks_like_a_person",
    "opens_a_line",
    "spelled_out",
    "split_sentences",
]


# Capitalised only because they open a sentence (or a title): never an entity on their own.
STOPWORDS = frozenset(
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
MONTHS_DAYS = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()
)
# Lower-case words allowed *inside* a name: "University of Oxford", "Ludwig van Beethoven".
CONNECTORS = frozenset("of de von van der den da del della di du la le the y bin al".split())
# Titles before a name: a PERSON cue; stripped from the name so "King Robert Baratheon" and
# "Robert Baratheon" are one entity. "Lord of X" makes X a LOCATION.
HONORIFICS = frozenset(
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
ARTICLES = frozenset(("a", "an"))
PLACE_ABBREVIATIONS = frozenset(("st", "mt", "ft"))
TRADEMARK = re.compile(r"\((?:R|TM)\)\s*$")
LOCATION_PREPOSITIONS = frozenset("in near inside outside across throughout within".split())
# "near X" says X is a place; "in X" says so only after a verb of place ("lived in X"): "written
# in Python" or "in 1990" are not places. A bare "in" is a weak cue (see ``_type_of``).
WEAK_PREPOSITIONS = frozenset("in within".split())
LOCATIVE_VERBS = frozenset(
    """live lives lived living stay stays stayed staying born die dies died reside resides resided
    residing locate located situated base based settle settled settles headquartered arrive arrived
    arrives grew raised moved move moves buried stationed imprisoned exiled held elected
    hometown""".split()
)
ORG_WORDS = frozenset(
    """university college institute institution school academy inc incorporated corp
    corporation company co ltd llc plc gmbh ag sa group bank agency association society council
    committee department ministry foundation party church club team union organization
    organisation commission court army navy press labs laboratory laboratories hospital museum
    house order guild brotherhood watch federation league fund trust bureau office
    parliament senate congress records pictures studios airlines airways network networks
    entertainment publishing publishers orchestra band""".split()
)
LOCATION_WORDS = frozenset(
    """river mountain mountains mount mt lake sea ocean island isle islands isles valley city county
    street st road avenue bay coast desert forest kingdom republic province state states park
    bridge castle hill hills gulf peninsula canyon falls harbor harbour port fort square village
    town region district empire continent stadium arena airport station pond creek canal
    highway palace cathedral abbey monastery temple tower""".split()
)
# The last word of the names of events, works and programmes: not a person's.
OTHER_WORDS = frozenset(
    """festival day war battle program programme series show award awards prize cup championship
    championships games olympics trilogy album song film novel revolution rebellion treaty""".split()
)
LOCATION_FIRST = frozenset("new north south east west upper lower northern southern eastern western".split())
SUFFIXES_PERSON = frozenset("jr sr ii iii iv".split())
# Words before a "." that do not end a sentence.
_ABBREVIATIONS = HONORIFICS | frozenset("st jr sr mt ft inc ltd co corp vs etc no fig e.g i.e al approx dept est univ".split())

TOKEN = re.compile(r"[^\W_](?:[\w&'\u2019-]*[^\W_])?")
_SENTENCE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*\s+|\n\s*\n")
# the words of a name are spaces apart; a tab, or two spaces between a word in capitals and
# one that is not, separate the columns of a table or of a command's help ("TEXT  Tenant")
NAME_GAP = re.compile(r"[ \u00a0]+")
# "APIs", "PDFs", "MERGEd", "CREATEs": an abbreviation or a keyword with an English ending
_ABBREVIATION_WITH_ENDING = re.compile(r"[A-Z][A-Z0-9]+(?:s|es|d|ed|ing)")
ROMAN = re.compile(r"[IVXLC]+")
TITLE_GAP = re.compile(r"\.?[ \t\u00a0]+")
YEAR = re.compile(r"(?<!\w)(?<!\d[.,])(1[0-9]{3}|20[0-9]{2})(?!\w|[.,]\d)")
SPACES = re.compile(r"\s+")
POSSESSIVE = ("'s", "\u2019s")


def split_sentences(text: str) -> list[tuple[int, int]]:
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


def is_acronym(token: str) -> bool:
    letters = [c for c in token if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def is_capitalised(token: str) -> bool:
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


def is_common_word(token: str) -> bool:
    """A capitalised common English word ("Refined", "Community"), not an acronym."""
    return token[1:].islower() and token.lower() in _COMMON_WORDS


def is_code_word(token: str) -> bool:
    return token[:1].isupper() and not is_name_word(token)


def opens_a_line(gap: str) -> bool:
    """Whether the text between two words starts a new line, a table column or a clause after
    a colon: the word after it is capitalised by its place, as at a sentence's start."""
    if "\n" in gap or "\t" in gap or "  " in gap:
        return True
    return gap.rstrip()[-1:] in (":", "|")


def looks_like_a_person(words: Sequence[str]) -> bool:
    """Two or more plain capitalised words ("Atal Bihari Vajpayee", "John Feldmann"): an
    "of" after them starts another name ("... of Bharatiya Janata Party") rather than a
    longer one, unlike "University of", "Lord of", "Berenice II of"."""
    core = [w for w in words if w.lower() not in STOPWORDS]
    if len(core) < 2:
        return False
    lowered = [w.lower().rstrip(".") for w in core]
    if any(w in ORG_WORDS or w in LOCATION_WORDS or w in HONORIFICS or w in OTHER_WORDS for w in lowered):
        return False
    if lowered[0] in LOCATION_FIRST or ROMAN.fullmatch(core[-1]) or any(is_acronym(w) for w in core):
        return False
    return not any(w.endswith(POSSESSIVE) for w in core)


def spelled_out(text: str, tokens: Sequence[tuple[int, int, str]], k: int) -> bool:
    """Whether the acronym at token ``k`` stands in parentheses right after the lower-case
    words it abbreviates ("least developed countries (LDC)")."""
    start, end, word = tokens[k]
    letters = [c.lower() for c in word if c.isalpha()]
    if text[start - 1 : start] != "(" or text[end : end + 1] != ")" or k < len(letters):
        return False
    before = [tokens[k - len(letters) + i][2] for i in range(len(letters))]
    return all(w.islower() for w in before) and [w[0] for w in before] == letters
