"""``kgrag search``: every retriever behind one command."""

from __future__ import annotations

import click

import math

from ..errors import InputError
from ..retrieval.modes import MODE_OPTIONS, MODES
from ..types import GRAPH_BLENDS, ChunkFilter, by_document, by_meta, by_source, created_after, created_before
from .context import AppContext, emit_json, handle_errors, namespace_option, pass_app

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


def build_reranker(name: str, min_score: float):
    if name == "none":
        return None
    if name == "score":
        from ..retrieval.rerank import ScoreReranker

        return ScoreReranker(min_score)
    from ..providers.cohere import CohereReranker

    return CohereReranker()


#: option name in the library -> the flag a user typed (for the refusal message)
_FLAGS = {"min_score": "--min-score", "reranker": "--rerank", "hops": "--hops", "bidirectional": "--bidirectional",
          "relations": "--relations", "seed_top_k": "--seed-top-k", "blend": "--blend", "damping": "--damping"}


def _given(ctx: click.Context, names: dict[str, str]) -> set[str]:
    """The library options whose flags the user gave (defaults do not count)."""
    out = set()
    for option, param in names.items():
        source = ctx.get_parameter_source(param)
        if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
            out.add(option)
    return out


def register(cli: click.Group) -> None:
    @cli.command("search")
    @click.argument("query")
    @click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True,
                  help="vector | hybrid (vector + full text) | graph (chunk edges) | ppr (PageRank over chunks and "
                       "entities) | entity (entity-boosted) | local (entities, relationships, reports, text units).")
    @click.option("--top-k", type=click.IntRange(min=1), default=5, show_default=True)
    @click.option("--filter", "filters", multiple=True, help="document=ID[,ID], source=PREFIX, meta.KEY=VALUE, after=UNIX, before=UNIX (AND-combined; every mode).")
    @click.option("--rerank", type=click.Choice(RERANKERS), default="none", show_default=True, help="hybrid and graph modes.")
    @click.option("--min-score", type=float, help="vector, hybrid and local modes: drop results below this score.")
    @click.option("--hops", type=int, help="graph / entity modes: hops to expand (default 2 / 1).")
    @click.option("--bidirectional", is_flag=True, default=None, help="graph mode: follow incoming edges too.")
    @click.option("--relations", help="graph mode: relation kinds to follow, comma-separated.")
    @click.option("--seed-top-k", type=click.IntRange(min=1), help="graph and ppr modes: seeds from the vector search (default 10).")
    @click.option("--blend", type=click.Choice(GRAPH_BLENDS), help="graph mode: 'propagate' (default: relevance flows along edges, "
                  "entities named in the query seed too) or 'seed' (the original formula: seeds always first).")
    @click.option("--damping", type=float, help="ppr mode: chance of following an edge at each step (default 0.5).")
    @click.option("--embedder", envvar="KGRAG_EMBEDDER", show_envvar=True, help="hashing | wordllama | minilm | cohere (default: Cohere with a key, else WordLlama).")
    @namespace_option
    @click.option("--json", "as_json", is_flag=True, help="Print JSON: id, document, content, score and component scores per result "
                  "(local mode: entities, relationships, reports and text_units too).")
    @pass_app
    @handle_errors
    def search(app: AppContext, query, mode, top_k, filters, rerank, min_score, hops, bidirectional, relations, seed_top_k,
               blend, damping, embedder, namespace, as_json) -> None:
        """Search what was ingested; graph-found results show how they were reached.

        Example: kgrag search "how are indexes created?" --mode graph --hops 2 --json
        """
        from ..providers.select import describe_embedder, select_embedder
        from ..retrieval.modes import build_retriever

        given = _given(click.get_current_context(), {"min_score": "min_score", "reranker": "rerank", "hops": "hops",
                                                     "bidirectional": "bidirectional", "relations": "relations",
                                                     "seed_top_k": "seed_top_k", "blend": "blend", "damping": "damping"})
        if rerank == "none":
            given.discard("reranker")
        if min_score is not None and not math.isfinite(min_score):
            raise InputError(f"--min-score must be a finite number, got {min_score}")
        options = {
            "min_score": min_score, "reranker": build_reranker(rerank, min_score or 0.0) if rerank != "none" else None,
            "hops": hops, "bidirectional": bidirectional,
            "relations": tuple(r.strip() for r in relations.split(",") if r.strip()) if relations else None,
            "seed_top_k": seed_top_k, "blend": blend, "damping": damping,
        }
        unsupported = sorted(given - MODE_OPTIONS[mode])
        if unsupported:
            takers = {o: [m for m in MODES if o in MODE_OPTIONS[m]] for o in unsupported}
            raise InputError(f"--mode {mode} cannot honour " + "; ".join(
                f"{_FLAGS[o]} (only {', '.join(takers[o])})" for o in unsupported))
        emb = select_embedder(embedder)
        if not as_json:
            click.echo(f"embedder: {describe_embedder(emb)}", err=True)
        store = app.store(namespace)
        store.check_embedder(emb.name, emb.dimensions)
        retriever = build_retriever(mode, store, emb, filters=[parse_filter(f) for f in filters],
                                    **{k: v for k, v in options.items() if k in given})
        if mode == "local":
            context = retriever.context(query)
            results = retriever.retrieve_from(context, top_k)
            if as_json:
                emit_json({"query": query, "mode": mode, "namespace": namespace, **context.to_json(),
                           "results": [r.to_json() for r in results]})
            else:
                click.echo(context.to_text())
            return
        results = retriever.retrieve(query, top_k)
        if as_json:
            emit_json({"query": query, "mode": mode, "namespace": namespace, "results": [r.to_json() for r in results]})
            return
        from ..retrieval.format import format_knowledge

        click.echo(format_knowledge(results, show_scores=True, max_chars=400))
