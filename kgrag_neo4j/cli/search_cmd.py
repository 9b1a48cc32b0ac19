"""``kgrag search``: every retriever behind one command."""

from __future__ import annotations

import click

from ..errors import InputError, NotFoundError
from ..retrieval.modes import MODE_OPTIONS, MODES
from ..types import GRAPH_BLENDS, ChunkFilter, by_document, by_meta, by_source, created_after, created_before
from .context import FINITE_FLOAT, AppContext, emit_json, given, handle_errors, namespace_option, pass_app, printable

RERANKERS = ("none", "score", "cohere")
SCORE_SCALES = ("cosine", "normalized")


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


#: flag (its click parameter name) -> the retriever option it sets; ``min_score`` is the
#: local retriever's ``min_similarity`` in local mode
FLAG_OPTIONS: dict[str, str] = {
    "min_score": "min_score", "rerank": "reranker", "hops": "max_hops", "bidirectional": "bidirectional",
    "relations": "relation_filter", "seed_top_k": "seed_top_k", "blend": "blend", "graph_weight": "graph_weight",
    "vector_weight": "vector_weight", "hop_decay": "hop_decay", "min_traversal_score": "min_traversal_score",
    "seed_keyword_weight": "seed_keyword_weight", "entity_seed_weight": "entity_seed_weight",
    "refine_seeds": "refine_seeds", "vector_candidates": "vector_candidates",
    "keyword_weight": "keyword_weight", "overfetch": "overfetch", "damping": "damping", "entity_share": "entity_share",
    "boost_direct": "entity_boost_direct", "boost_indirect": "entity_boost_indirect",
    "query_entities": "query_entities_top_k", "score_scale": "score_scale", "query_entity_floor": "query_entity_floor",
    "named_query_entities": "named_query_entities",
    "top_k_entities": "top_k_entities", "top_k_relationships": "top_k_relationships",
    "top_k_reports": "top_k_community_reports", "top_k_text_units": "top_k_text_units",
    "max_tokens": "max_text_unit_tokens",
}


def option_of(flag: str, mode: str) -> str:
    if flag == "min_score" and mode == "local":
        return "min_similarity"
    return FLAG_OPTIONS[flag]


def honoured_by_reranker(flag: str, mode: str, rerank: str) -> bool:
    """``--min-score`` with ``--rerank score`` is the reranker's threshold, so a mode that
    reranks (graph) honours it there even though its retriever takes no minimum score."""
    return flag == "min_score" and rerank == "score" and "reranker" in MODE_OPTIONS[mode]


def parse_decay(text: str) -> tuple[float, ...]:
    """``1.0,0.7,0.5`` -> (1.0, 0.7, 0.5)."""
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise InputError(f"--hop-decay takes numbers separated by commas, got {text!r}") from None
    if not values:
        raise InputError("--hop-decay needs at least one number")
    return values


def build_reranker(name: str, min_score: float):
    from ..providers.select import select_reranker

    return select_reranker(name, min_score=min_score)


@click.command("search")
@click.argument("query")
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True,
              help="vector | hybrid (vector + full text) | graph (chunk edges, entities named in the query) | "
                   "ppr (PageRank over chunks and entities) | entity (entity-boosted) | local (entities, "
                   "relationships, community reports, text units).")
@click.option("--top-k", type=int, default=5, show_default=True)
@click.option("--filter", "filters", multiple=True, help="document=ID[,ID], source=PREFIX, meta.KEY=VALUE, after=UNIX, before=UNIX (AND-combined; every mode).")
@click.option("--rerank", type=click.Choice(RERANKERS), default="none", show_default=True, help="hybrid and graph modes.")
@click.option("--min-score", type=FINITE_FLOAT, default=0.0, show_default=True, help="vector, hybrid and local modes (graph mode with --rerank score): drop results scoring below this.")
@click.option("--hops", type=int, help="graph / entity modes: hops to expand (default 2 / 1).")
@click.option("--bidirectional", is_flag=True, help="graph mode: follow incoming edges too.")
@click.option("--relations", help="graph mode: relation kinds to follow, comma-separated.")
@click.option("--seed-top-k", type=int, default=10, show_default=True, help="graph and ppr modes: seed chunks from the vector search.")
@click.option("--blend", type=click.Choice(GRAPH_BLENDS), default="propagate", show_default=True,
              help="graph mode: 'propagate' (relevance flows along edges; chunks mentioning an entity the query "
                   "names seed too) or 'seed' (the original formula: seeds always first).")
@click.option("--graph-weight", type=FINITE_FLOAT, default=0.3, show_default=True, help="graph mode: weight of graph scores in the blend.")
@click.option("--vector-weight", type=FINITE_FLOAT, default=0.7, show_default=True, help="graph mode: weight of vector scores in the blend.")
@click.option("--hop-decay", default="1.0,0.7,0.5", show_default=True, help="graph mode: score factor per hop (index 0 = seed chunks).")
@click.option("--min-traversal-score", type=FINITE_FLOAT, default=0.0, show_default=True, help="graph mode: edges lighter than this are not followed.")
@click.option("--seed-keyword-weight", type=FINITE_FLOAT, default=0.0, show_default=True, help="graph mode: keyword share of the seed search (RRF); 0 = vector only.")
@click.option("--entity-seed-weight", type=FINITE_FLOAT, help="graph mode: weight of the entities the query names (default 0.35 with --blend propagate, 0 with seed).")
@click.option("--refine-seeds/--no-refine-seeds", default=None, help="graph mode: also score the chunks one edge from the vector seeds by their cosine and keep the best, finding near copies the approximate index missed (default: on where one statement runs the retrieval).")
@click.option("--vector-candidates", type=int, help="graph mode: candidates asked of the vector index for the seeds (default: 4 per seed, at least 200).")
@click.option("--keyword-weight", type=FINITE_FLOAT, default=0.3, show_default=True, help="hybrid mode: keyword share of the rank fusion.")
@click.option("--overfetch", type=int, default=3, show_default=True, help="hybrid mode: candidates fetched per result before fusion.")
@click.option("--damping", type=FINITE_FLOAT, default=0.5, show_default=True, help="ppr mode: chance of following an edge at each step of the walk.")
@click.option("--entity-share", type=FINITE_FLOAT, default=0.2, show_default=True, help="ppr mode: share of the walk's restart mass on the entities the query names.")
@click.option("--boost-direct", type=FINITE_FLOAT, default=0.3, show_default=True, help="entity mode: boost per query entity a chunk mentions.")
@click.option("--boost-indirect", type=FINITE_FLOAT, default=0.1, show_default=True, help="entity mode: boost per related entity (times 1/distance x strength).")
@click.option("--query-entities", type=int, default=3, show_default=True, help="entity mode: entities nearest the query to start from.")
@click.option("--score-scale", type=click.Choice(SCORE_SCALES), default="cosine", show_default=True, help="entity mode: boosts add to the raw cosine or to the normalised (1 + cos) / 2.")
@click.option("--query-entity-floor", type=FINITE_FLOAT, default=0.0, show_default=True, help="entity mode: query entities less close than this (normalised cosine) boost nothing.")
@click.option("--named-query-entities/--no-named-query-entities", default=True, show_default=True,
              help="entity mode: entities the query names join the query entities.")
@click.option("--top-k-entities", type=int, default=10, show_default=True, help="local mode: entities nearest the query.")
@click.option("--top-k-relationships", type=int, default=20, show_default=True, help="local mode: heaviest relationships of those entities.")
@click.option("--top-k-reports", type=int, default=3, show_default=True, help="local mode: community reports.")
@click.option("--top-k-text-units", type=int, default=10, show_default=True, help="local mode: text units at most.")
@click.option("--max-tokens", type=int, default=4000, show_default=True, help="local mode: token budget of the text units.")
@click.option("--embedder", envvar="KGRAG_EMBEDDER", show_envvar=True, help="hashing | wordllama | minilm | cohere (default: Cohere with a key, else WordLlama).")
@click.option("--graph-view", "graph_view", is_flag=True,
              help="graph mode: print the retrieval as a graph instead (the chunks found and those graph-found ones "
                   "came from, and the edges between them), what cypher/graph/retrieve_graph draws in Neo4j Browser.")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON: id, document, content, score, its parts (graph mode: "
              "vector + graph + boost add up to the score) and explanation per result (local mode: entities, "
              "relationships, reports and text_units too).")
@pass_app
@handle_errors
def search(app: AppContext, query, mode, top_k, filters, rerank, embedder, namespace, as_json, graph_view, **flags) -> None:
    """Search what was ingested; graph-found results show how they were reached.

    Each mode has its tuning flags (defaults shown); a flag of another mode is refused.

    Example: kgrag search "how are indexes created?" --mode graph --hops 2 --json
    """
    from ..providers.select import describe_embedder, embedder_for_namespace
    from ..retrieval.modes import search as run_search

    options = retriever_options(click.get_current_context(), mode, rerank, flags)
    if graph_view and (mode != "graph" or rerank != "none"):
        raise click.UsageError("--graph-view takes --mode graph and no --rerank")
    store = app.store(namespace)
    emb = embedder_for_namespace(embedder, None if embedder else store.embedding_model())
    if not as_json:
        click.echo(f"embedder: {describe_embedder(emb)}", err=True)
    store.check_embedder(emb.name, emb.dimensions)
    if graph_view:
        from ..retrieval.modes import graph_view as retrieval_graph

        view = retrieval_graph(store, emb, query, top_k, filters=[parse_filter(f) for f in filters], **options)
        if not view["results"] and not store.has_documents():
            raise NotFoundError(f"namespace {namespace!r} has no documents (`kgrag namespace list` shows those that do)")
        if as_json:
            emit_json({"query": query, "mode": mode, "namespace": namespace, **view})
        else:
            print_graph_view(view, query, namespace)
        return
    response = run_search(mode, store, emb, query, top_k, filters=[parse_filter(f) for f in filters],
                          reranker=build_reranker(rerank, flags["min_score"]), **options)
    if not response.results and not store.has_documents():
        # a misspelt or empty namespace is a mistake to report, not a search that found nothing
        raise NotFoundError(f"namespace {namespace!r} has no documents (`kgrag namespace list` shows those that do)")
    _warn_unlinked(store, mode)
    if as_json:
        emit_json({"query": query, "mode": mode, "namespace": namespace, **response.to_json()})
    else:
        click.echo(response.to_text(max_chars=400))
        if response.context is None:
            click.echo("look a chunk up (its text, document, edges, entities): kgrag chunks show CHUNK_ID", err=True)


#: the modes whose answers follow the entity graph (entity seeds, shared-entity links, mentions)
ENTITY_MODES = frozenset({"graph", "ppr", "entity", "local"})


def _warn_unlinked(store, mode: str) -> None:
    if mode not in ENTITY_MODES:
        return
    unlinked = store.entity_unlinked_documents(limit=1000)
    if unlinked:
        more = "+" if unlinked >= 1000 else ""
        click.echo(f"note: {unlinked}{more} document(s) are not linked into the entity graph yet, so this search "
                   "cannot reach them through entities (`kgrag entities build` links them)", err=True)


def print_graph_view(view: dict, query: str, namespace: str) -> None:
    rank = {r["id"]: (i, r) for i, r in enumerate(view["results"], start=1)}
    click.echo(f"nodes ({len(view['nodes'])}):")
    for n in view["nodes"]:
        if n["id"] in rank:
            i, r = rank[n["id"]]
            edge = f"{r['came_from']} ({r['relation']})"
            how = f"hop {r['hop']} from {edge}" if r["hop"] else "seed" + (f", raised by {edge}" if r["came_from"] else "")
            note = f"result {i}, score {r['score']:.3f}, {how}"
        else:
            note = "not a result: a result came through it"
        click.echo(f"  {n['id']}  {printable(n['caption'])}  [{note}]")
    click.echo(f"relationships ({len(view['relationships'])}):")
    for e in view["relationships"]:
        click.echo(f"  {e['source']} -[{e['relation']} {float(e['weight']):.2f}, {e.get('origin') or '-'}]-> {e['target']}")
    click.echo(f'In Neo4j Browser: kgrag cypher params graph/retrieve_graph --namespace {namespace} --query "{printable(query)}"'
               ", run the line, then paste `kgrag cypher show graph/retrieve_graph`", err=True)


def retriever_options(ctx: click.Context, mode: str, rerank: str, flags: dict) -> dict:
    """The retriever options of the flags the user set (parsed, under the retriever's names);
    a flag ``mode`` cannot honour is a usage error naming it."""
    # in the order the options are declared, whatever order they were typed in
    typed = [p.name for p in ctx.command.params if p.name in flags and given(ctx, p.name)]
    if rerank != "none":
        typed.append("rerank")
    foreign = [name for name in typed
               if option_of(name, mode) not in MODE_OPTIONS[mode] and not honoured_by_reranker(name, mode, rerank)]
    if foreign:
        flags_text = ", ".join("--" + n.replace("_", "-") for n in foreign)
        raise click.UsageError(f"{flags_text} cannot be used with --mode {mode}")
    options = {}
    for name in typed:
        if name == "rerank" or option_of(name, mode) not in MODE_OPTIONS[mode]:
            continue  # the reranker's threshold (honoured_by_reranker), not a retriever option
        value = flags[name]
        if name == "hop_decay":
            value = parse_decay(value)
        elif name == "relations":
            value = tuple(r.strip() for r in value.split(",") if r.strip())
        options[option_of(name, mode)] = value
    return options
