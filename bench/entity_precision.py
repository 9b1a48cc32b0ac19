"""Precision of the offline entity names against 200 names labelled by hand
(``tests/fixtures/entity_precision.jsonl``; how they were drawn and labelled:
``tests/fixtures/entity_precision.md``).

The names are what the maintained entity graph makes of a corpus, computed here without a
server: every chunk scanned (``names.scan_chunk``, with its document's title), the scans summed
per name, a name in the vocabulary while its sums say so (written as a name somewhere, or a
title), its type and display name from the sums (``name_type``, ``display_name``), as
``entity_graph/apply_scans`` and ``maintain._settle_entities`` do.

Three corpora: ``demo`` (the demo's ``docs/*.md`` and ``README.md`` as of :data:`DEMO_COMMIT`,
read with ``git show`` so later edits of the docs do not move the figure, cut by the demo's
Markdown chunker), ``musique`` and ``hotpotqa`` (the train corpora of the quality benchmark,
one chunk per paragraph, "title\\ntext", titled with the paragraph's title).

Figures: **precision** = labelled entities among the fixture's names the extractor still
produces; **kept entities** = the labelled entities still produced (what a stricter rule cost);
**type accuracy** = the right type among the entities produced. Names the extractor produces
now that the fixture does not hold are counted (``new names``): the fixture was drawn from the
output of the code before (see the .md), so precision is measured on what both produce.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .common import write_results

__all__ = ["DEMO_COMMIT", "FIXTURE", "corpus_chunks", "measure", "run", "vocabulary"]

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "entity_precision.jsonl"
#: the demo corpus as it was when the fixture was drawn
DEMO_COMMIT = "629ea26"
CORPORA = ("demo", "musique", "hotpotqa")
COMMON_WORDS = ROOT / "kgrag_neo4j" / "entities" / "common_words.txt"
_STATS = ("support", "person", "location", "weak", "occurrences", "titles")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fixture", default=str(FIXTURE), help="the labelled names (JSON Lines)")
    p.add_argument("--show", action="store_true", help="list every fixture name with its label and what the extractor says")
    p.add_argument(
        "--write-common-words",
        action="store_true",
        help=f"write {COMMON_WORDS.relative_to(ROOT)} from the train corpora (see common_words) and stop",
    )


def _git_show(path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{DEMO_COMMIT}:{path}"], capture_output=True, text=True, check=True
    ).stdout


def corpus_chunks(name: str) -> list[tuple[str, str, str]]:
    """``(chunk id, text, document title)`` per chunk; the title on a document's first chunk only."""
    if name == "demo":
        from kgrag_neo4j.ingestion.chunkers import MarkdownChunker

        try:
            listing = subprocess.run(
                ["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", DEMO_COMMIT, "docs", "README.md"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
        except (OSError, subprocess.CalledProcessError) as exc:
            raise SystemExit(
                f"entity_precision: the demo corpus is read from git commit {DEMO_COMMIT}, which is not here ({exc})"
            ) from None
        chunker = MarkdownChunker(max_tokens=512)  # the demo's: Ingestor's Markdown default
        out = []
        for path in sorted(p for p in listing if p.endswith(".md")):
            pieces = [p for p in chunker.chunk(_git_show(path)) if p.content.strip()]
            out.extend((f"{path}#{i}", p.content, path.rsplit("/", 1)[-1] if i == 0 else "") for i, p in enumerate(pieces))
        return out
    from .datasets import load
    from .quality import chunk_text

    return [(p.key, chunk_text(p), p.title) for p in load(name, split="train").paragraphs]


def vocabulary(chunks: Iterable[tuple[str, str, str]]) -> dict[str, dict[str, Any]]:
    """key -> {name, type, sums} of every name the maintained graph would hold."""
    from kgrag_neo4j.entities.chunk_links import title_name
    from kgrag_neo4j.entities.names import display_name, name_type, scan_chunk

    sums: dict[str, dict[str, int]] = {}
    forms: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for chunk_id, text, title in chunks:
        for n in scan_chunk(chunk_id, text, title_name=title_name(title) if title else "").names:
            total = sums.setdefault(n.key, dict.fromkeys(_STATS, 0))
            for stat in _STATS:
                total[stat] += getattr(n, stat)
            forms[n.key][n.form] += n.occurrences
    out = {}
    for key, total in sums.items():
        if total["support"] + total["titles"] <= 0:
            continue
        written = sorted(forms[key])
        name = display_name(written, [forms[key][f] for f in written]) or key
        out[key] = {"name": name, "type": name_type(name, total), **total}
    return out


def common_words() -> list[str]:
    """The words the offline extractor takes for common English words
    (``kgrag_neo4j/entities/common_words.txt``): in the MuSiQue and HotpotQA train corpora
    (encyclopaedic English, 2,884 paragraphs), letters only, at least 3 of them, written in
    lower case at least 3 times and at least 3 times as often as capitalised inside a sentence.
    "film", "asked", "community" are; "new", "national", "twins", "apple" are not (capitalised
    too often, or too rare)."""
    import re

    from .datasets import load

    word = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")
    lower: dict[str, int] = defaultdict(int)
    capitalised: dict[str, int] = defaultdict(int)
    for name in ("musique", "hotpotqa"):
        for p in load(name, split="train").paragraphs:
            for sentence in re.split(r"(?<=[.!?])\s+|\n", p.text):
                for i, w in enumerate(word.findall(sentence)):
                    if w.islower():
                        lower[w] += 1
                    elif i > 0 and w[0].isupper() and w[1:].islower():
                        capitalised[w.lower()] += 1
    return sorted(w for w, n in lower.items() if len(w) >= 3 and n >= 3 and n >= 3 * capitalised[w])


def _load_fixture(path: str) -> list[dict[str, Any]]:
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as exc:
        raise SystemExit(f"entity_precision: cannot read the fixture {path}: {exc.strerror}") from None
    return [json.loads(line) for line in lines if line.strip()]


def measure(rows: Sequence[dict[str, Any]], vocabularies: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """The figures of :mod:`bench.entity_precision` per corpus and over all rows."""
    from kgrag_neo4j.types.entities import normalise_name

    def figures(subset: Sequence[dict[str, Any]]) -> dict[str, Any]:
        produced = [r for r in subset if normalise_name(r["name"]) in vocabularies[r["corpus"]]]
        right = [r for r in produced if r["entity"]]
        typed = [r for r in right if vocabularies[r["corpus"]][normalise_name(r["name"])]["type"] == r["type"]]
        entities = sum(1 for r in subset if r["entity"])
        return {
            "names": len(subset),
            "produced": len(produced),
            "entities_kept": len(right),
            "entities": entities,
            "precision": round(len(right) / len(produced), 3) if produced else None,
            "kept": round(len(right) / entities, 3) if entities else None,
            "type_accuracy": round(len(typed) / len(right), 3) if right else None,
        }

    out: dict[str, Any] = {"all": figures(rows)}
    for corpus in sorted({r["corpus"] for r in rows}):
        labelled = {normalise_name(r["name"]) for r in rows if r["corpus"] == corpus}
        voc = vocabularies[corpus]
        out[corpus] = {
            **figures([r for r in rows if r["corpus"] == corpus]),
            "vocabulary": len(voc),
            "from_text": sum(1 for v in voc.values() if v["support"] > 0),
        }
        out[corpus]["fixture_share"] = round(len(labelled & set(voc)) / max(1, len(voc)), 4)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from kgrag_neo4j.types.entities import normalise_name

    if getattr(args, "write_common_words", False):
        words = common_words()
        COMMON_WORDS.write_text("\n".join(words) + "\n")
        print(f"{len(words)} words -> {COMMON_WORDS}")
        return {"common_words": len(words)}
    rows = _load_fixture(args.fixture)
    unknown = sorted({r["corpus"] for r in rows} - set(CORPORA))
    if unknown:
        raise SystemExit(f"entity_precision: the fixture names corpora this benchmark does not know: {', '.join(unknown)}")
    vocabularies = {c: vocabulary(corpus_chunks(c)) for c in CORPORA if any(r["corpus"] == c for r in rows)}
    result = measure(rows, vocabularies)
    print(f"\n=== entity_precision: {len(rows)} labelled names, demo corpus at {DEMO_COMMIT} ===")
    print(f"  {'corpus':<10} {'produced':>9} {'precision':>10} {'entities kept':>14} {'type accuracy':>14} {'vocabulary':>11}")
    for corpus in [*CORPORA, "all"]:
        if corpus not in result:
            continue
        f = result[corpus]
        print(
            f"  {corpus:<10} {f['produced']:>4} / {f['names']:<3} {f['precision']!s:>10} "
            f"{f['entities_kept']:>6} / {f['entities']:<6} {f['type_accuracy']!s:>14} {f.get('vocabulary', ''):>11}"
        )
    if getattr(args, "show", False):
        for r in rows:
            v = vocabularies[r["corpus"]].get(normalise_name(r["name"]))
            said = f"{v['name']} ({v['type']})" if v else "-"
            label = r["type"] if r["entity"] else "not an entity"
            print(f"  {r['corpus']:<9} {r['name'][:45]:<46} {label:<14} {said}")
    write_results(
        "entity_precision",
        {"fixture": str(Path(args.fixture).name), "demo_commit": DEMO_COMMIT, "figures": result},
        getattr(args, "json", None),
    )
    return result
