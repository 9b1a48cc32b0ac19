"""The multi-hop QA sets of ``/work/shared/bench-data`` (see its README.md and SOURCE.md files)
as a corpus of paragraphs plus questions with their gold paragraphs.

- MuSiQue: paragraphs are unique by (title, text) (216 titles have several passages); gold =
  the record's paragraphs with ``is_supporting``.
- HotpotQA: one paragraph per title, text = ``"".join(sentences)``; gold = the titles of
  ``supporting_facts``.
- 2WikiMultihopQA: as HotpotQA with ``" ".join(sentences)``; the 36 records without
  ``context`` are dropped.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DATA_DIR", "Dataset", "Paragraph", "Question", "SETS", "load"]

DATA_DIR = Path(os.environ.get("KGRAG_BENCH_DATA", "/work/shared/bench-data"))
SETS = ("musique", "hotpotqa", "2wikimultihopqa")


@dataclass(frozen=True)
class Paragraph:
    key: str
    title: str
    text: str


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    gold: frozenset[str]
    kind: str = ""


@dataclass
class Dataset:
    name: str
    split: str
    paragraphs: list[Paragraph] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    def subset(self, n: int | None) -> Dataset:
        """The first ``n`` questions over the whole corpus (the corpus is never cut)."""
        if not n or n >= len(self.questions):
            return self
        return Dataset(self.name, self.split, self.paragraphs, self.questions[:n])


def _key(title: str, text: str) -> str:
    return "p_" + hashlib.blake2b(f"{title}\x1f{text}".encode(), digest_size=10).hexdigest()


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class _Corpus:
    def __init__(self) -> None:
        self.by_key: dict[str, Paragraph] = {}

    def add(self, title: str, text: str, *, key: str | None = None) -> str:
        key = key or _key(title, text)
        if key not in self.by_key:
            self.by_key[key] = Paragraph(key, title, text)
        return key


def _musique(records: list[dict], corpus: _Corpus) -> list[Question]:
    questions = []
    for r in records:
        gold = set()
        for p in r["paragraphs"]:
            key = corpus.add(p["title"], p["paragraph_text"])
            if p.get("is_supporting"):
                gold.add(key)
        questions.append(Question(r["id"], r["question"], frozenset(gold), r["id"].split("__")[0]))
    return questions


def _titled(records: list[dict], corpus: _Corpus, *, joiner: str) -> list[Question]:
    """HotpotQA and 2Wiki: a title is a paragraph; keys are titles."""
    questions = []
    for r in records:
        if not r.get("context"):
            continue
        for title, sentences in r["context"]:
            corpus.add(title, joiner.join(sentences), key=_key(title, ""))
        gold = frozenset(_key(title, "") for title, _ in r["supporting_facts"])
        questions.append(Question(r["_id"], r["question"], gold, r.get("type", "")))
    return questions


def load(name: str, *, split: str = "dev") -> Dataset:
    """``split`` "dev" is the evaluation file; "train" the tuning file with its own corpus."""
    corpus = _Corpus()
    if name == "musique":
        if split == "dev":
            questions = _musique(_jsonl(DATA_DIR / "musique" / "musique.json"), corpus)
        else:
            for p in json.loads((DATA_DIR / "musique" / "musique_train_corpus.json").read_text()):
                corpus.add(p["title"], p["text"])
            questions = _musique(json.loads((DATA_DIR / "musique" / "musique_train.json").read_text()), corpus)
    elif name == "hotpotqa":
        if split == "dev":
            questions = _titled(_jsonl(DATA_DIR / "hotpotqa" / "hotpot.json"), corpus, joiner="")
        else:
            extra = json.loads((DATA_DIR / "hotpotqa" / "hotpotqa_train_corpus.json").read_text())
            for title, sentences in extra.items():
                corpus.add(title, "".join(sentences), key=_key(title, ""))
            questions = _titled(json.loads((DATA_DIR / "hotpotqa" / "hotpotqa_train.json").read_text()), corpus, joiner="")
    elif name == "2wikimultihopqa":
        if split != "dev":
            raise ValueError("2WikiMultihopQA has no train file here")
        questions = _titled(_jsonl(DATA_DIR / "2wikimultihopqa" / "wikihop.json"), corpus, joiner=" ")
    else:
        raise ValueError(f"unknown set {name!r}; choose one of {', '.join(SETS)}")
    return Dataset(name, split, list(corpus.by_key.values()), questions)
