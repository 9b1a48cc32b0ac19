"""Hand-written code against the maintained library that could replace it (issue 17).

``python -m bench libraries [--repeat N]`` prints one table: for each pair, the time of one
call of kgrag's code and of the library doing the same job, and their ratio (library / ours;
above 1 the library is slower). Needs no Neo4j.

- Markdown structure: ``scan_markdown`` (and ``markdown_to_text``) over this repository's
  own Markdown (README.md and docs/*.md: real documents with headings, tables, fences, lists)
  against ``markdown-it-py``'s CommonMark parser with tables (parse only: the least a
  replacement would cost, before turning tokens into blocks).
- Token counts: ``estimate_tokens`` (characters / 4) against the
  ``tokenizers`` package encoding with WordLlama's own tokenizer, on MuSiQue paragraphs
  (real text, one chunk each); also how far the estimate is from the real count.
- Retries: ``RetryingProvider._call`` against ``tenacity.Retrying`` with the same policy
  (stop after N attempts, exponential backoff, no real sleep), for a call that succeeds at
  once and for one that fails twice with a retryable error first.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MUSIQUE = Path("/work/shared/bench-data/musique/musique.json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds per row (the median is shown)")


def _pair(label: str, ours: Callable[[], Any], theirs: Callable[[], Any], repeat: int) -> tuple[str, float, float]:
    """Median seconds of each, timed round-robin (ours, theirs, ours, ...) so that a change
    of load on a shared machine falls on both alike."""
    ours(), theirs()  # warm-up: imports, regex compilation, caches
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for fn, into in ((ours, samples[0]), (theirs, samples[1])):
            started = time.perf_counter()
            fn()
            into.append(time.perf_counter() - started)
    return label, statistics.median(samples[0]), statistics.median(samples[1])


def _markdown_documents() -> list[str]:
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [p.read_text(encoding="utf-8") for p in paths]


def _paragraphs(limit: int = 3000) -> list[str]:
    texts: list[str] = []
    seen: set[str] = set()
    with MUSIQUE.open(encoding="utf-8") as handle:
        for line in handle:
            for p in json.loads(line).get("paragraphs", []):
                text = p.get("paragraph_text", "")
                if text and text not in seen:
                    seen.add(text)
                    texts.append(text)
                if len(texts) >= limit:
                    return texts
    return texts


def _blocks_with_markdown_it(md: Any, text: str) -> list[tuple[str, str, Any]]:
    """The least a markdown-it-py ``scan_markdown`` would do: parse, then one (kind, text,
    lines) per heading, paragraph, table cell and code block, inline text joined (no per-line
    split, no HTML or comment handling, which ours also does)."""
    tokens = md.parse(text)
    blocks: list[tuple[str, str, Any]] = []
    for i, token in enumerate(tokens):
        if token.type == "inline":
            opener = tokens[i - 1].type
            kind = "heading" if opener == "heading_open" else "row" if opener in ("th_open", "td_open") else "text"
            words = "".join(c.content for c in token.children or () if c.type in ("text", "code_inline"))
            blocks.append((kind, words, token.map))
        elif token.type in ("fence", "code_block"):
            blocks.append(("code", token.content, token.map))
    return blocks


def _wordllama_tokenizer() -> Any:
    import wordllama
    from tokenizers import Tokenizer

    config = Path(wordllama.__file__).parent / "tokenizers" / "l2_supercat_tokenizer_config.json"
    return Tokenizer.from_file(str(config))


class _Flaky:
    """A provider call that fails ``failures`` times with a retryable error, then answers."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.left = failures

    def reset(self) -> None:
        self.left = self.failures

    def __call__(self, **kwargs: Any) -> str:
        if self.left:
            self.left -= 1
            raise TimeoutError("slow")
        return "ok"


def _retry_rows(repeat: int) -> list[tuple[str, float, float]]:
    import tenacity

    from kgrag_neo4j.providers._retry import Failure, RetryingProvider, backoff_delay

    class Provider(RetryingProvider):
        vendor = "bench"

        def __init__(self) -> None:
            self._init_common("m", timeout=5.0, max_retries=4, sleep=lambda s: None)

        def _classify(self, exc: BaseException) -> Failure | None:
            return Failure("timeout") if isinstance(exc, TimeoutError) else None

    provider = Provider()

    # built once, as a provider would hold it: the per-call cost is tenacity's loop alone
    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(5),
        wait=lambda state: backoff_delay(state.attempt_number - 1, jitter=random.random()),
        retry=tenacity.retry_if_exception(lambda e: provider._classify(e) is not None),
        sleep=lambda s: None,
        reraise=True,
    )

    def tenacity_call(fn: Callable[..., Any]) -> Any:
        return retrying(fn)

    rows = []
    calls = 2000
    for failures, label in ((0, "retries: a call that succeeds"), (2, "retries: 2 failures, then success")):
        flaky = _Flaky(failures)

        def ours() -> None:
            for _ in range(calls):
                flaky.reset()
                provider._call("embed", flaky)

        def theirs() -> None:
            for _ in range(calls):
                flaky.reset()
                tenacity_call(flaky)

        _, ours_s, theirs_s = _pair(label, ours, theirs, repeat)
        rows.append((label, ours_s / calls, theirs_s / calls))
    return rows


def run(args: argparse.Namespace) -> None:
    import logging

    from markdown_it import MarkdownIt

    from kgrag_neo4j.ingestion.extractors import markdown_to_text, scan_markdown
    from kgrag_neo4j.ingestion.tokens import estimate_tokens

    logging.getLogger("kgrag_neo4j.providers").setLevel(logging.ERROR)  # the retry warnings
    repeat = max(1, getattr(args, "repeat", 5))
    rows: list[tuple[str, float, float]] = []

    documents = _markdown_documents()
    size = sum(len(d) for d in documents)
    md = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    rows.append(_pair(
        f"Markdown: {len(documents)} documents, {size / 1e3:.0f} kB: scan_markdown vs md.parse",
        lambda: [scan_markdown(d) for d in documents],
        lambda: [md.parse(d) for d in documents],
        repeat,
    ))  # fmt: skip
    rows.append(_pair(
        "Markdown: scan_markdown vs md.parse + blocks (least replacement)",
        lambda: [scan_markdown(d) for d in documents],
        lambda: [_blocks_with_markdown_it(md, d) for d in documents],
        repeat,
    ))  # fmt: skip
    rows.append(_pair(
        "Markdown: markdown_to_text vs md.render (HTML: its one-call output)",
        lambda: [markdown_to_text(d) for d in documents],
        lambda: [md.render(d) for d in documents],
        repeat,
    ))  # fmt: skip

    paragraphs = _paragraphs()
    tokenizer = _wordllama_tokenizer()
    rows.append(_pair(
        f"tokens: {len(paragraphs)} MuSiQue paragraphs, one by one",
        lambda: [estimate_tokens(p) for p in paragraphs],
        lambda: [len(tokenizer.encode(p, add_special_tokens=False).ids) for p in paragraphs],
        repeat,
    ))  # fmt: skip
    rows.append(_pair(
        "tokens: the same, batched (encode_batch)",
        lambda: [estimate_tokens(p) for p in paragraphs],
        lambda: [len(e.ids) for e in tokenizer.encode_batch(paragraphs, add_special_tokens=False)],
        repeat,
    ))  # fmt: skip
    rows += _retry_rows(repeat)

    width = max(len(r[0]) for r in rows)
    print(f"{'what':<{width}}  {'ours':>12}  {'library':>12}  {'library/ours':>12}")
    for label, ours, theirs in rows:
        print(f"{label:<{width}}  {_fmt(ours):>12}  {_fmt(theirs):>12}  {theirs / ours:>11.1f}x")

    real = [len(e.ids) for e in tokenizer.encode_batch(paragraphs, add_special_tokens=False)]
    estimated = [estimate_tokens(p) for p in paragraphs]
    errors = sorted(e / r - 1 for e, r in zip(estimated, real) if r)
    print(
        f"\nchars/4 against WordLlama's tokenizer on {len(paragraphs)} paragraphs: median error "
        f"{statistics.median(errors):+.1%}, 10th-90th percentile {errors[len(errors) // 10]:+.1%} .. "
        f"{errors[9 * len(errors) // 10]:+.1%}"
    )


def _fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    run(parser.parse_args())
