"""``kgrag ingest PATH...``: files, folders and globs into the store, with a summary."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

import click

from ..ingestion.batch import IngestObserver
from .ask_cmd import chat_model, llm_on_command_line, llm_option
from .context import (
    FINITE_FLOAT,
    AppContext,
    emit_json,
    handle_errors,
    namespace_option,
    pass_app,
    printable,
    refuse_unused,
)

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar  # what click.progressbar returns; click exports no public name for it


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True)
@namespace_option
@click.option("--strategy", type=click.Choice(["flat", "parent-child"]), default="flat", show_default=True)
@click.option("--content-type", help="Override the type detected from extensions (e.g. text/markdown).")
@click.option("--embedder", envvar="KGRAG_EMBEDDER", show_envvar=True, help="hashing | wordllama | minilm | cohere.")
@click.option("--batch-size", type=int, default=64, show_default=True, help="Chunks per embedding call.")
@click.option(
    "--chunk-tokens",
    type=click.IntRange(min=1),
    help="Flat chunks of at most this many tokens, every file type alike (default: 512, Markdown split by headings).",
)
@click.option(
    "--chunk-overlap",
    type=click.IntRange(min=0),
    help="With --chunk-tokens: tokens shared by consecutive chunks (default: a tenth of --chunk-tokens).",
)
@click.option("--sequence-edges", is_flag=True, help="Link consecutive chunks (no LLM).")
@click.option("--similarity-edges", is_flag=True, help="similar_to edges to the nearest chunks (no LLM).")
@click.option(
    "--similarity-threshold", type=FINITE_FLOAT, default=0.75, show_default=True, help="Minimum cosine of a similar_to edge."
)
@click.option("--similarity-top-k", type=int, default=5, show_default=True, help="similar_to edges per chunk at most.")
@click.option("--extract-graph", is_flag=True, help="LLM edge extraction between chunks, with the chat model of --llm.")
@llm_option
@click.option("--graph-batch-size", type=int, default=5, show_default=True, help="Chunks per LLM extraction call.")
@click.option("--graph-batch-overlap", type=int, default=0, show_default=True, help="Chunks shared by consecutive LLM calls.")
@click.option("--graph-workers", type=int, default=3, show_default=True, help="Concurrent LLM extraction calls.")
@click.option(
    "--cross-document", is_flag=True, help="Also LLM edges to similar chunks of other documents (needs --extract-graph)."
)
@click.option(
    "--min-edge-weight",
    type=FINITE_FLOAT,
    default=0.0,
    show_default=True,
    help="Edges lighter than this are dropped (every source).",
)
@click.option("--max-edges-per-chunk", type=int, default=0, show_default=True, help="Heaviest edges kept per chunk; 0 = all.")
@click.option("--source", help="The document's identity (one file only; default: the file's resolved path).")
@click.option(
    "--follow-symlinks", is_flag=True, help="Follow symlinks that lead out of a folder (default: skipped and reported)."
)
@click.option(
    "--entities/--no-entities",
    "entities",
    default=None,
    help="Link what is written into the entity graph in the same run: names, mentions, relationships "
    "and shared-entity chunk links (default: when the namespace has an entity graph).",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary with one row per file.")
@pass_app
@handle_errors
def ingest(
    app: AppContext,
    paths,
    namespace,
    strategy,
    content_type,
    embedder,
    batch_size,
    chunk_tokens,
    chunk_overlap,
    sequence_edges,
    similarity_edges,
    similarity_threshold,
    similarity_top_k,
    extract_graph,
    graph_batch_size,
    graph_batch_overlap,
    graph_workers,
    cross_document,
    llm,
    min_edge_weight,
    max_edges_per_chunk,
    source,
    follow_symlinks,
    entities,
    as_json,
) -> None:
    """Ingest files, folders (recursive) and globs, many documents per transaction. A
    failing file is reported and the others go on; the exit code is 1 when any failed.
    Only regular files are read: FIFOs, devices and symlinks leading out of a folder are
    reported and skipped. A file is one document however it is reached (its resolved path
    is its identity, or --source). When the database cannot be reached after its retries
    the run stops at once, with a summary of what was not written.

    Example: kgrag ingest docs/ --sequence-edges --similarity-edges
    """
    from ..ingestion.ingestor import Ingestor
    from ..options import IngestGraphOptions
    from ..providers.select import describe_embedder, embedder_for_namespace

    ctx = click.get_current_context()
    refuse_unused(
        ctx, ("graph_batch_size", "graph_batch_overlap", "graph_workers", "cross_document"), "--extract-graph", extract_graph
    )
    refuse_unused(ctx, ("similarity_threshold", "similarity_top_k"), "--similarity-edges", similarity_edges)
    refuse_unused(ctx, ("chunk_overlap",), "--chunk-tokens", chunk_tokens is not None)
    chunker = None
    if chunk_tokens is not None:
        if strategy != "flat":
            raise click.UsageError("--chunk-tokens sizes flat chunks; --strategy parent-child has its own sizes")
        from ..ingestion.chunkers import RecursiveChunker

        overlap = chunk_tokens // 10 if chunk_overlap is None else chunk_overlap
        if overlap >= chunk_tokens:
            raise click.UsageError(f"--chunk-overlap must be smaller than --chunk-tokens ({chunk_tokens})")
        chunker = RecursiveChunker(max_tokens=chunk_tokens, overlap_tokens=overlap)
    if llm_on_command_line(ctx) and not extract_graph:
        raise click.UsageError("--llm chooses the model of --extract-graph; add --extract-graph (or drop --llm)")
    emb = embedder_for_namespace(embedder, None if embedder else app.store(namespace).embedding_model())
    click.echo(f"embedder: {describe_embedder(emb)}", err=True)
    graph = IngestGraphOptions(
        graph_extraction=chat_model(llm) if extract_graph else None,
        graph_batch_size=graph_batch_size,
        graph_batch_overlap=graph_batch_overlap,
        graph_extraction_workers=graph_workers,
        sequence_edges=sequence_edges,
        similarity_edges=similarity_edges,
        similarity_threshold=similarity_threshold,
        similarity_top_k=similarity_top_k,
        cross_document_edges=cross_document,
        min_edge_weight=min_edge_weight,
        max_edges_per_chunk=max_edges_per_chunk,
    )
    ingestor = Ingestor(
        app.store(namespace), emb, strategy=strategy, batch_size=batch_size, graph=graph, entities=entities, chunker=chunker
    )
    started = time.perf_counter()
    with _Terminal(quiet=as_json) as terminal:
        tally = ingestor.ingest_run(
            paths, content_type=content_type, source=source, follow_symlinks=follow_symlinks, observer=terminal
        )
    elapsed = time.perf_counter() - started
    summary = tally.summary(namespace=namespace, seconds=round(elapsed, 3), embedder=emb.name)
    if ingestor.last_maintenance is not None:  # the entity graph was kept current: what that took
        summary["entity_graph"] = ingestor.last_maintenance.as_dict()
    if as_json:
        emit_json({"summary": summary, "files": tally.rows})
    else:
        counts = tally.counts
        extra = "".join(f", {counts[k]} {k.replace('_', ' ')}" for k in ("skipped", "not_attempted") if counts[k])
        click.echo(
            f"documents: {counts['new']} new, {counts['unchanged']} unchanged, {counts['replaced']} replaced, "
            f"{counts['failed']} failed{extra}; chunks: {summary['chunks']}; edges: {summary['edges']}; "
            f"time: {elapsed:.1f}s"
        )
    if tally.failed:
        sys.exit(1)


class _Terminal(IngestObserver):
    """The run on stderr: what was skipped or failed, one line each, and a progress bar on a
    terminal (nothing but the JSON with --json)."""

    def __init__(self, *, quiet: bool):
        self.quiet = quiet
        self.bar: ProgressBar[int] | None = None

    def __enter__(self) -> _Terminal:
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def skipped(self, skipped) -> None:
        if not self.quiet:
            verb = "failed" if skipped.named else "skipped"
            click.echo(f"{verb}: {printable(skipped.path)}: {printable(skipped.reason)}", err=True)

    def started(self, files: int) -> None:
        if sys.stderr.isatty() and not self.quiet:
            self.bar = click.progressbar(length=files, label="ingesting", file=sys.stderr, show_pos=True)
            self.bar.__enter__()

    def finished(self, outcome) -> None:
        if outcome.error is not None and not self.quiet:
            click.echo(f"failed: {printable(outcome.path)}: {printable(outcome.exception)}", err=True)
        if self.bar is not None:
            self.bar.update(1)

    def stopped(self, exc, unwritten) -> None:
        if not self.quiet:
            click.echo(
                f"stopped: {printable(f'{type(exc).__name__}: {exc}')}; {len(unwritten)} files not written; "
                "run the same command again when the database is back (what was stored is kept)",
                err=True,
            )
