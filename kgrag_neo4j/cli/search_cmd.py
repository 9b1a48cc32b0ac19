"""``kgrag search``: every retriever behind one command."""

from __future__ import annotations

import click

from ..errors import InputError, NotFoundError
from ..retrieval.registry import DEFAULT_MODE
from ..types import ChunkFilter, by_document, by_meta, by_source, created_after, created_before
from .context import AppContext, emit_json, given, handle_errors, namespace_option, pass_app, printable
from .mode_flags import ModeChoice, ModeCommand, ModeFlag, mode_flags, modes_text, parse_flag_value

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
        if not -(2**63) <= seconds < 2**63:
            raise InputError(f"--filter {key}= takes unix seconds within the 64-bit range, got {value}")
        return created_after(seconds) if key == "after" else created_before(seconds)
    raise InputError(f"unknown --filter key {key!r}: use document=, source=, meta.KEY=, after= or before=")


def _flags() -> dict[str, ModeFlag]:
    """The modes' flags by click parameter name (``--hops``: ``hops``)."""
    return {flag.param: flag for flag, _ in mode_flags()}


def option_of(flag: str, mode: str) -> str | None:
    """The option of ``mode`` that flag ``flag`` (its click parameter name) sets; None when the
    mode takes none (``--rerank`` sets the reranker of a mode that reranks)."""
    from ..retrieval.registry import get_mode

    declared = get_mode(mode)
    if flag == "rerank":
        return "reranker" if declared.option("reranker") is not None else None
    option = declared.flag_option(flag.replace("_", "-"))
    return option.name if option is not None else None


def honoured_by_reranker(flag: str, mode: str, rerank: str) -> bool:
    """``--min-score`` with ``--rerank score`` is the reranker's threshold, so a mode that
    reranks (graph) honours it there even though its retriever takes no minimum score."""
    return flag == "min_score" and rerank == "score" and option_of("rerank", mode) is not None


def search_params(declared: list[click.Parameter]) -> list[click.Parameter]:
    """``kgrag search``'s parameters: ``--mode`` after the query, the modes' flags after
    ``--rerank``, each help naming the modes that take it."""
    from ..errors import ConfigurationError
    from ..retrieval.registry import modes

    known = {p.name for p in declared}
    choices = " | ".join(f"{m.name} ({m.summary})" if m.summary else m.name for m in modes())
    mode = click.Option(["--mode"], type=ModeChoice(), default=DEFAULT_MODE, show_default=True, help=f"{choices}.")
    rerankers = [m.name for m in modes() if m.option("reranker") is not None]
    rerank_help = f"{modes_text(rerankers)}." if rerankers else "no mode reranks."
    flags = []
    for flag, option in mode_flags():
        if flag.param in known or flag.param == "mode":
            raise ConfigurationError(f"--{flag.flag} of {', '.join(flag.options)} mode is a kgrag search option already")
        if flag.param == "min_score":  # also the threshold of --rerank score, in a mode that reranks without one
            only = [m for m in rerankers if m not in flag.options]
            if only:
                head, _, tail = (option.help or "").partition(": ")
                option.help = f"{head} ({modes_text(only)} with --rerank score): {tail}"
        flags.append(option)
    out: list[click.Parameter] = []
    for param in declared:
        if param.name == "rerank" and isinstance(param, click.Option):
            param.help = rerank_help
        out.append(param)
        if param.name == "query":
            out.append(mode)
        elif param.name == "rerank":
            out.extend(flags)
    return out


def build_reranker(name: str, min_score: float):
    from ..providers.select import select_reranker

    return select_reranker(name, min_score=min_score)


@click.command("search", cls=ModeCommand, mode_params=search_params)
@click.argument("query")
@click.option("--top-k", type=int, default=5, show_default=True)
@click.option(
    "--filter",
    "filters",
    multiple=True,
    help="document=ID[,ID], source=PREFIX, meta.KEY=VALUE, after=UNIX, before=UNIX (AND-combined; every mode).",
)
@click.option("--rerank", type=click.Choice(RERANKERS), default="none", show_default=True, help="the modes that rerank.")
@click.option(
    "--embedder",
    envvar="KGRAG_EMBEDDER",
    show_envvar=True,
    help="hashing | wordllama | minilm | cohere (default: Cohere with a key, else WordLlama).",
)
@click.option(
    "--graph-view",
    "graph_view",
    is_flag=True,
    help="graph mode: print the retrieval as a graph instead (the chunks found and those graph-found ones "
    "came from, and the edges between them), what cypher/graph/retrieve_graph draws in Neo4j Browser.",
)
@namespace_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON: id, document, content, score, its parts (graph mode: "
    "vector + graph + boost add up to the score) and explanation per result (local mode: entities, "
    "relationships, reports and text_units too).",
)
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
    response = run_search(
        mode,
        store,
        emb,
        query,
        top_k,
        filters=[parse_filter(f) for f in filters],
        reranker=build_reranker(rerank, flags.get("min_score", 0.0)),
        **options,
    )
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


def _warn_unlinked(store, mode: str) -> None:
    from ..retrieval.registry import get_mode

    if not get_mode(mode).follows_entities:
        return
    unlinked = store.entity_unlinked_documents(limit=1000)
    if unlinked:
        more = "+" if unlinked >= 1000 else ""
        click.echo(
            f"note: {unlinked}{more} document(s) are not linked into the entity graph yet, so this search "
            "cannot reach them through entities (`kgrag entities build` links them)",
            err=True,
        )


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
    click.echo(
        f'In Neo4j Browser: kgrag cypher params graph/retrieve_graph --namespace {namespace} --query "{printable(query)}"'
        ", run the line, then paste `kgrag cypher show graph/retrieve_graph`",
        err=True,
    )


def retriever_options(ctx: click.Context, mode: str, rerank: str, flags: dict) -> dict:
    """The retriever options of the flags the user set (parsed, under the retriever's names);
    a flag ``mode`` cannot honour is a usage error naming it."""
    # in the order the options are declared, whatever order they were typed in
    typed = [p.name for p in ctx.command.params if p.name in flags and given(ctx, p.name)]
    if rerank != "none":
        typed.append("rerank")
    foreign = [name for name in typed if option_of(name, mode) is None and not honoured_by_reranker(name, mode, rerank)]
    if foreign:
        flags_text = ", ".join("--" + n.replace("_", "-") for n in foreign)
        raise click.UsageError(f"{flags_text} cannot be used with --mode {mode}")
    declared = _flags()
    options = {}
    for name in typed:
        option = option_of(name, mode)
        if name == "rerank" or option is None:
            continue  # the reranker's threshold (honoured_by_reranker), not a retriever option
        options[option] = parse_flag_value(declared[name], flags[name])
    return options
