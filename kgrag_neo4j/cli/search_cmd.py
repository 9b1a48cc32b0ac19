"""``kgrag search``: every retriever behind one command."""

from __future__ import annotations

import click

from ..errors import ConfigurationError, InputError
from ..types import ChunkFilter, by_document, by_meta, by_source, created_after, created_before
from .context import FINITE_FLOAT, AppContext, emit_json, handle_errors, namespace_option, pass_app

MODES = ("vector", "hybrid", "graph", "entity", "local")
RERANKERS = ("none", "score", "cohere")

#: the shared options each mode honours (``MODE_FLAGS`` below holds each mode's tuning flags);
#: one given to a mode that cannot honour it is refused, never silently ignored
MODE_OPTIONS: dict[str, frozenset[str]] = {
    "vector": frozenset({"filters", "min_score"}),
    "hybrid": frozenset({"filters", "rerank", "min_score"}),
    "graph": frozenset({"filters", "rerank"}),
    "entity": frozenset({"filters"}),
    "local": frozenset(),
}
_FLAG = {"filters": "--filter", "rerank": "--rerank", "min_score": "--min-score"}


def refuse_unsupported(mode: str, given: set[str], *, rerank: str = "none") -> None:
    """Raise ``InputError`` naming the first option in ``given`` that ``mode`` cannot honour.
    ``--min-score`` is honoured in graph mode by ``--rerank score`` (its threshold)."""
    honoured = set(MODE_OPTIONS[mode])
    if mode == "graph" and rerank == "score":
        honoured.add("min_score")
    for name in _FLAG:
        if name in given and name not in honoured:
            modes = [m for m, opts in MODE_OPTIONS.items() if name in opts]
            where = f"--mode {', '.join(modes)}" if modes else "no mode"
            if name == "min_score":
                where += " (and --mode graph with --rerank score)"
            raise InputError(f"{_FLAG[name]} is not supported by --mode {mode}; it applies to {where}")


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
        if not -(2**63) <= seconds < 2**63:
            raise InputError(f"--filter {key}= takes unix seconds within the 64-bit range, got {value}")
        return created_after(seconds) if key == "after" else created_before(seconds)
    raise InputError(f"unknown --filter key {key!r}: use document=, source=, meta.KEY=, after= or before=")


#: the tuning flags of each mode (flag name -> option name of the retriever); a flag given
#: on the command line for a mode that does not use it is refused
MODE_FLAGS: dict[str, dict[str, str]] = {
    "vector": {},
    "hybrid": {"keyword_weight": "keyword_weight", "overfetch": "overfetch"},
    "graph": {
        "bidirectional": "bidirectional", "relations": "relation_filter", "seed_top_k": "seed_top_k",
        "graph_weight": "graph_weight", "vector_weight": "vector_weight", "hop_decay": "hop_decay",
        "min_traversal_score": "min_traversal_score", "seed_keyword_weight": "seed_keyword_weight",
    },
    "entity": {"boost_direct": "entity_boost_direct", "boost_indirect": "entity_boost_indirect",
               "query_entities": "query_entities_top_k"},
    "local": {"top_k_entities": "top_k_entities", "top_k_relationships": "top_k_relationships",
              "top_k_reports": "top_k_community_reports", "top_k_text_units": "top_k_text_units",
              "max_tokens": "max_text_unit_tokens"},
}
MODE_FLAGS["graph"]["hops"] = "max_hops"
MODE_FLAGS["entity"]["hops"] = "max_hops"


def parse_decay(text: str) -> tuple[float, ...]:
    """``1.0,0.7,0.5`` -> (1.0, 0.7, 0.5)."""
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise InputError(f"--hop-decay takes numbers separated by commas, got {text!r}") from None
    if not values:
        raise InputError("--hop-decay needs at least one number")
    return values


def build_retriever(mode: str, store, embedder, *, filters, reranker, min_score, hops=None, bidirectional=False,
                    relations=None, seed_top_k=10, tuning=None):
    """The retriever of ``mode``; ``tuning`` holds the mode's options by their library names."""
    from ..retrieval.retrievers import GraphRetriever, HybridRetriever, VectorRetriever

    tuning = dict(tuning or {})
    if mode == "vector":
        return VectorRetriever(store, embedder, filters=filters, min_score=min_score)
    if mode == "hybrid":
        return HybridRetriever(store, embedder, filters=filters, reranker=reranker, min_score=min_score, **tuning)
    if mode == "graph":
        options = {"bidirectional": bidirectional, "seed_top_k": seed_top_k, **tuning}
        if hops is not None:
            options["max_hops"] = hops
        if relations:
            options["relation_filter"] = tuple(r.strip() for r in relations.split(",") if r.strip())
        return GraphRetriever(store, embedder, filters=filters, reranker=reranker, **options)
    if mode == "entity":
        from ..retrieval.entity import EntityGraphRetriever

        kwargs = {"filters": filters, **tuning}
        if hops is not None:
            kwargs["max_hops"] = hops
        return EntityGraphRetriever(store, embedder, **kwargs)
    if mode == "local":
        from ..retrieval.local_search import LocalSearchRetriever

        return LocalSearchRetriever(store, embedder, **tuning)
    raise ConfigurationError(f"unknown mode {mode!r}")


def _given(ctx: click.Context, name: str) -> bool:
    """Whether the user set ``name`` (command line or environment), not its default."""
    from click.core import ParameterSource

    return ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


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
    @click.option("--min-score", type=FINITE_FLOAT, default=0.0, show_default=True)
    @click.option("--hops", type=int, help="graph / entity modes: hops to expand (default 2 / 1).")
    @click.option("--bidirectional", is_flag=True, help="graph mode: follow incoming edges too.")
    @click.option("--relations", help="graph mode: relation kinds to follow, comma-separated.")
    @click.option("--seed-top-k", type=int, default=10, show_default=True, help="graph mode: seed chunks from the vector search.")
    @click.option("--graph-weight", type=FINITE_FLOAT, default=0.3, show_default=True, help="graph mode: weight of graph scores in the blend.")
    @click.option("--vector-weight", type=FINITE_FLOAT, default=0.7, show_default=True, help="graph mode: weight of vector scores in the blend.")
    @click.option("--hop-decay", default="1.0,0.7,0.5", show_default=True, help="graph mode: score factor per hop (index 0 = seed chunks).")
    @click.option("--min-traversal-score", type=FINITE_FLOAT, default=0.0, show_default=True, help="graph mode: edges lighter than this are not followed.")
    @click.option("--seed-keyword-weight", type=FINITE_FLOAT, default=0.0, show_default=True, help="graph mode: keyword share of the seed search (RRF); 0 = vector only.")
    @click.option("--keyword-weight", type=FINITE_FLOAT, default=0.3, show_default=True, help="hybrid mode: keyword share of the rank fusion.")
    @click.option("--overfetch", type=int, default=3, show_default=True, help="hybrid mode: candidates fetched per result before fusion.")
    @click.option("--boost-direct", type=FINITE_FLOAT, default=0.3, show_default=True, help="entity mode: boost per query entity a chunk mentions.")
    @click.option("--boost-indirect", type=FINITE_FLOAT, default=0.1, show_default=True, help="entity mode: boost per related entity (times 1/distance x strength).")
    @click.option("--query-entities", type=int, default=3, show_default=True, help="entity mode: entities nearest the query to start from.")
    @click.option("--top-k-entities", type=int, default=10, show_default=True, help="local mode: entities nearest the query.")
    @click.option("--top-k-relationships", type=int, default=20, show_default=True, help="local mode: heaviest relationships of those entities.")
    @click.option("--top-k-reports", type=int, default=3, show_default=True, help="local mode: community reports.")
    @click.option("--top-k-text-units", type=int, default=10, show_default=True, help="local mode: text units at most.")
    @click.option("--max-tokens", type=int, default=4000, show_default=True, help="local mode: token budget of the text units.")
    @click.option("--embedder", envvar="KGRAG_EMBEDDER", show_envvar=True, help="hashing | wordllama | minilm | cohere (default: Cohere with a key, else WordLlama).")
    @namespace_option
    @click.option("--json", "as_json", is_flag=True, help="Print JSON: id, document, content, score and component scores per result.")
    @pass_app
    @handle_errors
    def search(app: AppContext, query, mode, top_k, filters, rerank, min_score, hops, bidirectional, relations, seed_top_k,
               graph_weight, vector_weight, hop_decay, min_traversal_score, seed_keyword_weight, keyword_weight,
               overfetch, boost_direct, boost_indirect, query_entities, top_k_entities, top_k_relationships,
               top_k_reports, top_k_text_units, max_tokens, embedder, namespace, as_json) -> None:
        """Search what was ingested; graph-found results show how they were reached.

        Each mode has its tuning flags (defaults shown); a flag of another mode is refused.

        Example: kgrag search "how are indexes created?" --mode graph --hops 2 --json
        """
        from ..providers.select import describe_embedder, select_embedder

        ctx = click.get_current_context()
        values = {
            "hops": hops, "bidirectional": bidirectional, "relations": relations, "seed_top_k": seed_top_k,
            "graph_weight": graph_weight, "vector_weight": vector_weight, "hop_decay": hop_decay,
            "min_traversal_score": min_traversal_score, "seed_keyword_weight": seed_keyword_weight,
            "keyword_weight": keyword_weight, "overfetch": overfetch, "boost_direct": boost_direct,
            "boost_indirect": boost_indirect, "query_entities": query_entities, "top_k_entities": top_k_entities,
            "top_k_relationships": top_k_relationships, "top_k_reports": top_k_reports,
            "top_k_text_units": top_k_text_units, "max_tokens": max_tokens,
        }
        given = [name for name in values if _given(ctx, name)]
        foreign = [name for name in given if name not in MODE_FLAGS[mode]]
        if foreign:
            flags = ", ".join("--" + n.replace("_", "-") for n in foreign)
            raise click.UsageError(f"{flags} cannot be used with --mode {mode}")
        # the shared options: a filter, a reranker or a minimum score a mode would ignore
        asked = {"filters": bool(filters), "rerank": rerank != "none", "min_score": _given(ctx, "min_score")}
        refuse_unsupported(mode, {k for k, v in asked.items() if v}, rerank=rerank)
        tuning = {}
        for name, option in MODE_FLAGS[mode].items():
            if name in ("hops", "bidirectional", "relations", "seed_top_k"):
                continue
            value = values[name]
            tuning[option] = parse_decay(value) if name == "hop_decay" else value
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
            tuning=tuning,
        )
        results = retriever.retrieve(query, top_k)
        if as_json:
            emit_json({"query": query, "mode": mode, "namespace": namespace, "results": [r.to_json() for r in results]})
            return
        from ..retrieval.format import format_knowledge

        click.echo(format_knowledge(results, show_scores=True, max_chars=400))
