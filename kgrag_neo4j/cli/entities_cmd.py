"""``kgrag entities build|list|show``: the entity graph of a namespace."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import InputError
from .ask_cmd import chat_model, llm_option
from .context import FINITE_FLOAT, AppContext, emit_json, handle_errors, namespace_option, pass_app


def _progress(stage: str, done: int, total: int) -> None:
    # on stderr (stdout stays data); a stage whose total is not known ahead (0) counts up
    if total == 0:
        click.echo(f"{stage}: {done} {_UNITS.get(stage, 'done')}", err=True)
    elif done in (0, total) or total <= 1:
        click.echo(f"{stage}: {done}/{total}", err=True)


_UNITS = {"scan": "chunks", "link": "chunks", "entities": "entities", "references": "edges"}


@click.group()
def entities() -> None:
    """Entities, their relationships and mentions (for entity-boosted and local search)."""


@entities.command("build")
@namespace_option
@click.option(
    "--embedder",
    envvar="KGRAG_EMBEDDER",
    show_envvar=True,
    help="hashing | wordllama | minilm | cohere (default: wordllama, or cohere with a key).",
)
@click.option("--document", "documents", multiple=True, help="Only this document id (repeatable; default: all).")
@click.option(
    "--merge-threshold",
    type=FINITE_FLOAT,
    help="Also merge same-type entities whose description embeddings have at least this cosine.",
)
@click.option("--batch-size", type=int, default=64, show_default=True, help="Texts per embedding call.")
@llm_option
@click.option("--entity-types", help="With --llm: the entity types to extract, comma-separated (others are dropped).")
@click.option("--relation-types", help="With --llm: the relationship types to extract, comma-separated (others are dropped).")
@click.option(
    "--schema",
    "schema_file",
    type=click.Path(dir_okay=False),
    help='With --llm: a JSON file {"entity_types": [...] or {NAME: description}, "relation_types": ...}.',
)
@click.option(
    "--names",
    "names_file",
    type=click.Path(dir_okay=False),
    help="A file of names to find in every chunk, one per line (a gazetteer; offline extraction).",
)
@click.option(
    "--titles/--no-titles",
    default=True,
    show_default=True,
    help="Document titles are names too (found wherever the text writes them; offline extraction).",
)
@click.option(
    "--entity-edges/--no-entity-edges",
    default=True,
    show_default=True,
    help="Link chunks that share a rare entity (references edges, which graph search follows).",
)
@click.option(
    "--reextract",
    is_flag=True,
    help="With --llm: send every chunk to the model again (default: only chunks it has not read with this model and schema).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def build(
    app: AppContext,
    namespace,
    embedder,
    documents,
    merge_threshold,
    batch_size,
    llm,
    entity_types,
    relation_types,
    schema_file,
    names_file,
    titles,
    entity_edges,
    reextract,
    as_json,
) -> None:
    """Extract entities from the stored chunks, embed and store them: offline (no model),
    or with a chat model (--llm) and, if given, your entity and relationship types.

    Idempotent: re-running over the same chunks changes nothing.

    Example: kgrag entities build --llm openai --entity-types PERSON,COMPANY --relation-types WORKS_FOR
    """
    from ..entities.pipeline import build_entities
    from ..providers.select import describe_embedder, embedder_for_namespace

    extractor = None
    declared = entity_types or relation_types or schema_file
    if declared and not llm:
        raise InputError("--entity-types, --relation-types and --schema need --llm: the offline extractor has its own types")
    if reextract and not llm:
        raise InputError("--reextract is for --llm: the offline build already reads only what changed")
    titles_given = click.get_current_context().get_parameter_source("titles") == click.core.ParameterSource.COMMANDLINE
    if llm and (names_file or titles_given):
        raise InputError(
            "--names and --titles/--no-titles are for the offline extractor: with --llm the model reads the text itself"
        )
    if llm:
        from ..entities.extract_llm import ExtractionSchema, LLMEntityExtractor

        schema = ExtractionSchema.from_file(schema_file) if schema_file else ExtractionSchema()
        schema = schema.merged(ExtractionSchema(entity_types or (), relation_types or ()))
        if schema:
            extractor = LLMEntityExtractor(
                chat_model(llm),
                namespace=namespace,
                entity_types=schema.entity_types,
                relation_types=schema.relation_types,
                strict_types=True,
            )
        else:
            extractor = LLMEntityExtractor(chat_model(llm), namespace=namespace)
    names: list[str] = []
    if names_file:
        try:
            raw = Path(names_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"--names {names_file}: {exc}") from None
        names = [line.strip() for line in raw.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    chosen = embedder_for_namespace(embedder, None if embedder else app.store(namespace).embedding_model())
    click.echo(f"embedder: {describe_embedder(chosen)}", err=True)
    result = build_entities(
        app.store(namespace),
        chosen,
        extractor=extractor,
        document_ids=list(documents) or None,
        batch_size=batch_size,
        reextract=reextract,
        merge_threshold=merge_threshold,
        progress=_progress,
        names=names,
        titles=titles,
        entity_edges=entity_edges,
    )
    if as_json:
        emit_json(result.as_dict())
    else:
        click.echo(
            f"{result.entities} entities, {result.relations} relationships, {result.mentions} mentions "
            f"from {result.chunks} chunks of {result.documents} documents; entity edges: {result.entity_edges}"
        )


@entities.command("status")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def status(app: AppContext, namespace, as_json) -> None:
    """How current the entity graph is: documents and chunks linked since their last change
    (and chunks marked to be linked again: a name they may write entered or left the
    vocabulary), entities, communities (stale: a member changed since its report), the last build.

    Example: kgrag entities status --json
    """
    state = app.store(namespace).entity_graph_state()
    keys = (
        "documents",
        "documents_linked",
        "chunks",
        "chunks_linked",
        "chunks_to_relink",
        "entities",
        "communities",
        "stale_communities",
        "last_build",
    )
    out = {k: state[k] for k in keys}
    if as_json:
        emit_json(out)
        return
    click.echo(f"documents: {out['documents_linked']}/{out['documents']} linked")
    again = f" ({out['chunks_to_relink']} to be linked again)" if out["chunks_to_relink"] else ""
    click.echo(f"chunks: {out['chunks_linked']}/{out['chunks']} linked{again}")
    click.echo(f"entities: {out['entities']}")
    click.echo(f"communities: {out['communities']} ({out['stale_communities']} stale)")
    click.echo(f"last build: {out['last_build'] or 'never'}")


@entities.command("list")
@namespace_option
@click.option("--limit", type=int, default=50, show_default=True, help="Most entities to show.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def list_cmd(app: AppContext, namespace, limit, as_json) -> None:
    """Entities, most mentioned first, with mention and relationship counts.

    Example: kgrag entities list --limit 20
    """
    rows = app.store(namespace).list_entities(limit=limit)
    if as_json:
        emit_json(
            [
                {
                    "id": r.entity.id,
                    "name": r.entity.name,
                    "type": r.entity.type,
                    "description": r.entity.description,
                    "mentions": r.mentions,
                    "degree": r.degree,
                }
                for r in rows
            ]
        )
        return
    for r in rows:
        click.echo(f"{r.mentions:6} {r.degree:5}  {r.entity.name} ({r.entity.type})")


@entities.command("show")
@click.argument("name")
@namespace_option
@click.option("--limit", type=int, default=20, show_default=True, help="Most relationships and mentions to show.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
@handle_errors
def show(app: AppContext, name, namespace, limit, as_json) -> None:
    """An entity (every type with this name), its relationships and the chunks mentioning it.

    Example: kgrag entities show "Ned Stark"
    """
    found = app.store(namespace).get_entity_by_name(name, limit=limit)
    if as_json:
        emit_json(
            [
                {
                    "id": d.entity.id,
                    "name": d.entity.name,
                    "type": d.entity.type,
                    "description": d.entity.description,
                    "source_chunk_id": d.entity.source_chunk_id,
                    "mention_total": d.mention_total,
                    "relations": d.relations,
                    "mentions": d.mentions,
                }
                for d in found
            ]
        )
        return
    for d in found:
        click.echo(f"{d.entity.name} ({d.entity.type})  {d.entity.id}")
        if d.entity.description:
            click.echo(f"  {d.entity.description}")
        click.echo(f"  relationships ({len(d.relations)} shown):")
        for r in d.relations:
            arrow = f"-[{r['type']} {r['weight']:.2f}]->" if r["outgoing"] else f"<-[{r['type']} {r['weight']:.2f}]-"
            click.echo(f"    {arrow} {r['other']} ({r['other_type']})")
        click.echo(f"  mentioned by {d.mention_total} chunks ({len(d.mentions)} shown):")
        for m in d.mentions:
            snippet = " ".join((m["content"] or "").split())[:80]
            click.echo(f"    {m['chunk_id']} x{m['count']}: {snippet}")
