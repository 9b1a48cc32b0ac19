"""``kgrag search``: every retriever behind one command."""

from __future__ import annotations

import click

from ..errors import ConfigurationError, InputError
from ..types import ChunkFilter, by_document, by_meta, by_source, created_after, created_before
from .context import AppContext, emit_json, handle_errors, namespace_option, pass_app

MODES = ("vector", "hybrid", "graph", "entity", "local")
RERANKERS = ("none", "score", "cohere")


def parse_filter(text: str) -> ChunkFilter:
    """``document=ID``, ``source=PREFIX``, ``meta.KEY=VALUE``, ``after=UNIX``, ``before=UNIX``."""
    key, sep, value = text.partition("=")
    if not sep:
        raise InputError(f"--filter takes key=value, got {text!r}")
    key = key.strip()
    if key == "document":
        return by_document(*[v for v in value.split(",") if v])
    if key == "source":
        return by_source(value)
    if key.startswith("meta.") and len(key) > 5:
        return by_meta(key[5:], value)
    if key in ("after", "before"):
        try:
            seconds = int(value)
        except ValueError:
            raise InputError(f"--filter {key}= takes unix seconds, got {value!r}") from None
        return created_after(seconds) if key == "after" else created_before(seconds)
    raise InputError(f"unknown --filter key {key!r}: use document=, source=, meta.KEY=, after= or before=")


def build_retriever(mode: str, store, embedder, *, filters, reranker, min_score, hops, bidirectional, relations, seed_top_k):
    from ..retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever

    if mode == "vector":
        return VectorRetriever(store, embedder, filters=filters, min_score=min_score)
    if mode == "hybrid":
        return HybridRetriever(store, embedder, filters=filters, reranker=reranker, min_score=min_score)
    if mode == "graph":
        options = {"bidirectional": bidirectional, "seed_top_k": seed_top_k}
        if hops is not None:
            options["max_hops"] = hops
        if relations:
            options["relation_filter"] = tuple(r.strip() for r in relations.split(",") if r.strip())
        return GraphRetriever(store, embedder, filters=filters, reranker=reranker, **options)
    if mode == "entity":
        from ..retrieval.entity import EntityGraphRetriever

        kwargs = {"filters": filters}
        if hops is not None:
            kwargs["max_hops"] = hops
        return EntityGraphRetriever(store, embedder, **kwargs)
    if mode == "local":
        from ..retrieval.local_search import LocalSearchRetriever

        return LocalSearchRetriever(store, embedder)
    raise ConfigurationError(f"unknown mode {mode!r}")


def build_reranker(name: str, min_score: float):
    if name == "none":
        return None
    if name == "score":
        from ..retrieval.rerank import ScoreReranker

        return ScoreReranker(min_score)
    from ..providers.cohere import CohereReranker

    return CohereReranker()


def register(cli: click.Group) -> None:
    @cli.command("search")
    @click.argument("query")
    @click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
    @click.option("--top-k", type=int, default=5, show_default=True)
    @click.option("--filter", "filters", multiple=True, help="document=ID[,ID], source=PREFIX, meta.KEY=VALUE, after=UNIX, before=UNIX (AND-combined).")
    @click.option("--rerank", type=click.Choice(RERANKERS), default="none", show_default=True)
    @click.option("--min-score", type=float, default=0.0, show_default=True)
    @click.option("--hops", type=int, help="graph / entity modes: hops to expand (default 2 / 1).")
    @click.option("--bidirectional", is_flag=True, help="graph mode: follow incoming edges too.")
    @click.option("--relations", help="graph mode: relation kinds to follow, comma-separated.")
    @click.option("--seed-top-k", type=int, default=10, show_default=True, help="graph mode: seeds from the vector search.")
    @click.option("--embedder", envvar="KGRAG_EMBEDDER", show_envvar=True, help="hashing | wordllama | minilm | cohere (default: Cohere with a key, else WordLlama).")
    @namespace_option
    @click.option("--json", "as_json", is_flag=True, help="Print JSON: id, document, content, score and component scores per result.")
    @pass_app
    @handle_errors
    def search(app: AppContext, query, mode, top_k, filters, rerank, min_score, hops, bidirectional, relations, seed_top_k, embedder, namespace, as_json) -> None:
        """Search what was ingested; graph-found results show how they were reached.

        Example: kgrag search "how are indexes created?" --mode graph --hops 2 --json
        """
        from ..providers.select import describe_embedder, select_embedder

        emb = select_embedder(embedder)
        if not as_json:
            click.echo(f"embedder: {describe_embedder(emb)}", err=True)
        store = app.store(namespace)
        store.check_embedder(emb.name, emb.dimensions)
        retriever = build_retriever(
            mode,
            store,
            emb,
            filters=[parse_filter(f) for f in filters],
            reranker=build_reranker(rerank, min_score),
            min_score=min_score,
            hops=hops,
            bidirectional=bidirectional,
            relations=relations,
            seed_top_k=seed_top_k,
        )
        results = retriever.retrieve(query, top_k)
        if as_json:
            emit_json({"query": query, "mode": mode, "namespace": namespace, "results": [r.to_json() for r in results]})
            return
        from ..retrieval.format import format_knowledge

        click.echo(format_knowledge(results, show_scores=True, max_chars=400))
