"""``kgrag ingest PATH...``: files, folders and globs into the store, with a summary."""

from __future__ import annotations

import sys
import time

import click

from .ask_cmd import chat_model, llm_on_command_line, llm_option
from .context import AppContext, emit_json, handle_errors, namespace_option, pass_app


def register(cli: click.Group) -> None:
    @cli.command("ingest")
    @click.argument("paths", nargs=-1, required=True)
    @namespace_option
    @click.option("--strategy", type=click.Choice(["flat", "parent-child"]), default="flat", show_default=True)
    @click.option("--content-type", help="Override the type detected from extensions (e.g. text/markdown).")
    @click.option("--embedder", envvar="KGRAG_EMBEDDER", show_envvar=True, help="hashing | wordllama | minilm | cohere.")
    @click.option("--batch-size", type=int, default=64, show_default=True, help="Chunks per embedding call.")
    @click.option("--sequence-edges", is_flag=True, help="Link consecutive chunks (no LLM).")
    @click.option("--similarity-edges", is_flag=True, help="similar_to edges to the nearest chunks (no LLM).")
    @click.option("--similarity-threshold", type=float, default=0.75, show_default=True, help="Minimum cosine of a similar_to edge.")
    @click.option("--similarity-top-k", type=int, default=5, show_default=True, help="similar_to edges per chunk at most.")
    @click.option("--extract-graph", is_flag=True, help="LLM edge extraction between chunks, with the chat model of --llm.")
    @llm_option
    @click.option("--graph-batch-size", type=int, default=5, show_default=True, help="Chunks per LLM extraction call.")
    @click.option("--graph-batch-overlap", type=int, default=0, show_default=True, help="Chunks shared by consecutive LLM calls.")
    @click.option("--graph-workers", type=int, default=3, show_default=True, help="Concurrent LLM extraction calls.")
    @click.option("--cross-document", is_flag=True, help="Also LLM edges to similar chunks of other documents (needs --extract-graph).")
    @click.option("--min-edge-weight", type=float, default=0.0, show_default=True, help="Edges lighter than this are dropped (every source).")
    @click.option("--max-edges-per-chunk", type=int, default=0, show_default=True, help="Heaviest edges kept per chunk; 0 = all.")
    @click.option("--json", "as_json", is_flag=True, help="Print a JSON summary with one row per file.")
    @pass_app
    @handle_errors
    def ingest(app: AppContext, paths, namespace, strategy, content_type, embedder, batch_size, sequence_edges,
               similarity_edges, similarity_threshold, similarity_top_k, extract_graph, graph_batch_size,
               graph_batch_overlap, graph_workers, cross_document, llm, min_edge_weight, max_edges_per_chunk, as_json) -> None:
        """Ingest files, folders (recursive) and globs, many documents per transaction. A
        failing file is reported and the others go on; the exit code is 1 when any failed.

        Example: kgrag ingest docs/ --sequence-edges --similarity-edges
        """
        from ..ingestion.edges import IngestGraphOptions
        from ..ingestion.extractors import ExtractorRegistry
        from ..ingestion.files import expand_paths
        from ..ingestion.ingestor import Ingestor
        from ..providers.select import describe_embedder, select_embedder

        from .search_cmd import _given

        ctx = click.get_current_context()
        for flags, needs, on in (
            (("graph_batch_size", "graph_batch_overlap", "graph_workers", "cross_document"), "--extract-graph", extract_graph),
            (("similarity_threshold", "similarity_top_k"), "--similarity-edges", similarity_edges),
        ):
            unused = [f for f in flags if _given(ctx, f)] if not on else []
            if unused:
                names = ", ".join("--" + f.replace("_", "-") for f in unused)
                raise click.UsageError(f"{names} need(s) {needs}")
        if llm_on_command_line(ctx) and not extract_graph:
            raise click.UsageError("--llm chooses the model of --extract-graph; add --extract-graph (or drop --llm)")
        registry = ExtractorRegistry.default()
        files = expand_paths(paths, extensions=registry.extensions)
        emb = select_embedder(embedder)
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
        ingestor = Ingestor(app.store(namespace), emb, strategy=strategy, batch_size=batch_size, graph=graph, extractors=registry)
        started = time.perf_counter()
        counts = {"new": 0, "unchanged": 0, "replaced": 0, "failed": 0}
        show_bar = sys.stderr.isatty() and not as_json
        bar = click.progressbar(length=len(files), label="ingesting", file=sys.stderr, show_pos=True) if show_bar else None

        def report(outcome) -> None:
            counts[outcome.status] += 1
            if outcome.error is not None and not as_json:
                click.echo(f"failed: {outcome.path}: {outcome.exception}", err=True)
            if bar is not None:
                bar.update(1)

        with bar if bar is not None else _plain(None):
            outcomes = ingestor.ingest_paths(files, content_type=content_type, on_result=report)
        rows = []
        for outcome in outcomes:
            if outcome.error is not None:
                rows.append({"path": outcome.path, "status": "failed", "error": outcome.error})
                continue
            r = outcome.result
            rows.append({"path": outcome.path, "status": r.status, "document_id": r.document_id,
                         "chunks": r.chunk_count, "edges": r.edge_count, "skipped": r.skipped})
        elapsed = time.perf_counter() - started
        chunks = sum(r.get("chunks", 0) for r in rows if r["status"] in ("new", "replaced"))
        summary = {"namespace": namespace, "files": len(files), **counts, "chunks": chunks,
                   "edges": sum(r.get("edges", 0) for r in rows), "seconds": round(elapsed, 3),
                   "embedder": emb.name}
        if as_json:
            emit_json({"summary": summary, "files": rows})
        else:
            click.echo(
                f"documents: {counts['new']} new, {counts['unchanged']} unchanged, {counts['replaced']} replaced, "
                f"{counts['failed']} failed; chunks: {chunks}; edges: {summary['edges']}; time: {elapsed:.1f}s"
            )
        if counts["failed"]:
            sys.exit(1)


class _plain:
    def __init__(self, items):
        self.items = items

    def __enter__(self):
        return self.items

    def __exit__(self, *exc):
        return False
