"""``kgrag edges build``: chunk edges over what is already stored."""

from __future__ import annotations

import click

from .context import AppContext, emit_json, handle_errors, namespace_option, pass_app


def register(cli: click.Group) -> None:
    @cli.group()
    def edges() -> None:
        """Chunk-to-chunk edges: sequence, similarity, LLM-extracted and cross-document."""

    @edges.command("build")
    @namespace_option
    @click.option("--document", "documents", multiple=True, help="Only these documents (default: all).")
    @click.option("--sequence/--no-sequence", default=True, show_default=True, help="Sequence edges (no LLM).")
    @click.option("--similarity/--no-similarity", default=True, show_default=True, help="similar_to edges (no LLM).")
    @click.option("--similarity-threshold", type=float, default=0.75, show_default=True)
    @click.option("--similarity-top-k", type=int, default=5, show_default=True)
    @click.option("--extract-graph", is_flag=True, help="LLM edges within documents (Cohere chat).")
    @click.option("--cross-document", is_flag=True, help="LLM edges across documents (Cohere chat).")
    @click.option("--min-edge-weight", type=float, default=0.0, show_default=True)
    @click.option("--max-edges-per-chunk", type=int, default=0, show_default=True)
    @click.option("--embedder", envvar="KGRAG_EMBEDDER", show_envvar=True, help="Embedder the namespace was ingested with.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @pass_app
    @handle_errors
    def build(app: AppContext, namespace, documents, sequence, similarity, similarity_threshold, similarity_top_k,
              extract_graph, cross_document, min_edge_weight, max_edges_per_chunk, embedder, as_json) -> None:
        """Build sequence / similarity / LLM / cross-document edges for stored documents.

        Example: kgrag edges build --similarity-threshold 0.8
        """
        from ..ingestion.edges import IngestGraphOptions
        from ..ingestion.ingestor import Ingestor
        from ..providers.select import select_embedder

        chat = None
        if extract_graph or cross_document:
            from ..providers.cohere import CohereChat

            chat = CohereChat()
        graph = IngestGraphOptions(
            graph_extraction=chat, sequence_edges=sequence, similarity_edges=similarity,
            similarity_threshold=similarity_threshold, similarity_top_k=similarity_top_k,
            cross_document_edges=cross_document, min_edge_weight=min_edge_weight,
            max_edges_per_chunk=max_edges_per_chunk,
        )
        ingestor = Ingestor(app.store(namespace), select_embedder(embedder), graph=graph)
        counts = ingestor.build_edges(list(documents) or None)
        if as_json:
            emit_json(counts)
        else:
            click.echo(f"documents: {counts['documents']}; edges stored: {counts['edges']}; cross-document: {counts['cross_document']}")
