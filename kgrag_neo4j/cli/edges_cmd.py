"""``kgrag edges build``: chunk edges over what is already stored."""

from __future__ import annotations

import click

from .ask_cmd import chat_model, llm_on_command_line, llm_option
from .context import FINITE_FLOAT, AppContext, emit_json, handle_errors, namespace_option, pass_app, refuse_unused


@click.group()
def edges() -> None:
    """Chunk-to-chunk edges: sequence, similarity, LLM-extracted and cross-document."""


@edges.command("build")
@namespace_option
@click.option("--document", "documents", multiple=True, help="Only these documents (default: all).")
@click.option("--sequence/--no-sequence", default=True, show_default=True, help="Sequence edges (no LLM).")
@click.option("--similarity/--no-similarity", default=True, show_default=True, help="similar_to edges (no LLM).")
@click.option("--similarity-threshold", type=FINITE_FLOAT, default=0.75, show_default=True)
@click.option("--similarity-top-k", type=int, default=5, show_default=True)
@click.option("--extract-graph", is_flag=True, help="LLM edges within documents (the chat model of --llm).")
@click.option("--graph-batch-size", type=int, default=5, show_default=True, help="Chunks per LLM extraction call.")
@click.option("--graph-batch-overlap", type=int, default=0, show_default=True, help="Chunks shared by consecutive LLM calls.")
@click.option("--graph-workers", type=int, default=3, show_default=True, help="Concurrent LLM calls.")
@click.option("--cross-document", is_flag=True, help="LLM edges across documents (the chat model of --llm).")
@click.option(
    "--cross-document-threshold",
    type=FINITE_FLOAT,
    default=0.5,
    show_default=True,
    help="Minimum cosine of a cross-document candidate.",
)
@click.option(
    "--cross-document-max-pairs", type=int, default=3, show_default=True, help="Candidates per chunk from other documents."
)
@click.option("--cross-document-batch-size", type=int, default=5, show_default=True, help="Chunks per cross-document LLM call.")
@click.option(
    "--entity-edges",
    is_flag=True,
    help="Also link chunks that share a rare entity (references edges; needs `kgrag entities build`).",
)
@click.option(
    "--entity-edge-max-chunks", type=int, default=10, show_default=True, help="An entity in more chunks than this links none."
)
@click.option("--entity-edges-per-chunk", type=int, default=10, show_default=True, help="Heaviest entity links kept per chunk.")
@click.option(
    "--min-edge-weight",
    type=FINITE_FLOAT,
    default=0.0,
    show_default=True,
    help="Edges lighter than this are dropped (every source).",
)
@click.option("--max-edges-per-chunk", type=int, default=0, show_default=True, help="Heaviest edges kept per chunk; 0 = all.")
@llm_option
@click.option("--embedder", envvar="KGRAG_EMBEDDER", show_envvar=True, help="Embedder the namespace was ingested with.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def build(
    app: AppContext,
    namespace,
    documents,
    sequence,
    similarity,
    similarity_threshold,
    similarity_top_k,
    extract_graph,
    graph_batch_size,
    graph_batch_overlap,
    graph_workers,
    cross_document,
    cross_document_threshold,
    cross_document_max_pairs,
    cross_document_batch_size,
    entity_edges,
    entity_edge_max_chunks,
    entity_edges_per_chunk,
    min_edge_weight,
    max_edges_per_chunk,
    llm,
    embedder,
    as_json,
) -> None:
    """Build sequence / similarity / LLM / cross-document / entity edges for stored documents.

    Example: kgrag edges build --similarity-threshold 0.8
    """
    import dataclasses

    from ..ingestion.ingestor import Ingestor
    from ..options import IngestGraphOptions
    from ..providers.select import embedder_for_namespace

    ctx = click.get_current_context()
    refuse_unused(
        ctx,
        ("graph_batch_size", "graph_batch_overlap", "graph_workers"),
        "--extract-graph or --cross-document",
        extract_graph or cross_document,
    )
    refuse_unused(
        ctx,
        ("cross_document_threshold", "cross_document_max_pairs", "cross_document_batch_size"),
        "--cross-document",
        cross_document,
    )
    refuse_unused(ctx, ("entity_edge_max_chunks", "entity_edges_per_chunk"), "--entity-edges", entity_edges)
    if llm_on_command_line(ctx) and not (extract_graph or cross_document):
        raise click.UsageError("--llm chooses the model of --extract-graph / --cross-document; add one of them")
    chat = chat_model(llm) if extract_graph or cross_document else None
    graph = IngestGraphOptions(
        graph_extraction=chat if extract_graph else None,
        graph_batch_size=graph_batch_size,
        graph_batch_overlap=graph_batch_overlap,
        graph_extraction_workers=graph_workers,
        sequence_edges=sequence,
        similarity_edges=similarity,
        similarity_threshold=similarity_threshold,
        similarity_top_k=similarity_top_k,
        min_edge_weight=min_edge_weight,
        max_edges_per_chunk=max_edges_per_chunk,
    )
    store = app.store(namespace)
    emb = embedder_for_namespace(embedder, None if embedder else store.embedding_model())
    counts = Ingestor(store, emb, graph=graph).build_edges(list(documents) or None)
    if cross_document:
        # cross-document only: --cross-document alone must not also extract within documents
        cross = Ingestor(store, emb, graph=dataclasses.replace(graph, graph_extraction=chat))
        counts["cross_document"] = cross.extract_cross_document_edges(
            similarity_threshold=cross_document_threshold,
            max_pairs_per_chunk=cross_document_max_pairs,
            batch_size=cross_document_batch_size,
            document_ids=list(documents) or None,
        )
    if entity_edges:
        from ..entities.pipeline import build_entity_edges

        counts["entity_edges"] = build_entity_edges(store, max_chunks=entity_edge_max_chunks, per_chunk=entity_edges_per_chunk)
        if not counts["entity_edges"] and not as_json:
            click.echo("no entity edges: the namespace has no shared entities (run `kgrag entities build` first)", err=True)
    if as_json:
        emit_json(counts)
    else:
        line = f"documents: {counts['documents']}; edges stored: {counts['edges']}; cross-document: {counts['cross_document']}"
        if entity_edges:
            line += f"; entity edges: {counts['entity_edges']}"
        click.echo(line)
