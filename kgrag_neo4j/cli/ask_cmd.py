"""``kgrag ask``: retrieval, then a chat model's answer with citations."""

from __future__ import annotations

import click

from ..retrieval.modes import build_retriever
from ..retrieval.registry import DEFAULT_MODE
from .context import AppContext, emit_json, handle_errors, namespace_option, pass_app
from .mode_flags import ModeChoice
from .search_cmd import parse_filter

#: the ``--llm`` choices every LLM command shares
LLM_CHOICES = ("cohere", "openai")
LLM_HELP = (
    "Chat model: cohere (CO_API_KEY) | openai (OPENAI_API_KEY / OPENAI_BASE_URL, OPENAI_MODEL). Default: whichever is configured."
)


def llm_option(fn):
    return click.option("--llm", type=click.Choice(LLM_CHOICES), envvar="KGRAG_LLM", show_envvar=True, help=LLM_HELP)(fn)


def llm_on_command_line(ctx: click.Context) -> bool:
    """``--llm`` typed on this command line (KGRAG_LLM in the environment asks for nothing)."""
    from click.core import ParameterSource

    return ctx.get_parameter_source("llm") == ParameterSource.COMMANDLINE


def chat_model(llm: str | None):
    """The chat model ``--llm`` names (or the environment configures), announced on stderr."""
    from ..providers.select import describe_chat, select_chat

    chat = select_chat(llm)
    click.echo(f"chat model: {describe_chat(chat)}", err=True)
    return chat


@click.command("ask")
@click.argument("question")
@click.option("--mode", type=ModeChoice(), default=DEFAULT_MODE, show_default=True, help="Retriever that finds the passages.")
@click.option("--top-k", type=click.IntRange(min=1), default=5, show_default=True, help="Passages given to the model.")
@click.option(
    "--filter", "filters", multiple=True, help="As for search: document=ID, source=PREFIX, meta.KEY=VALUE, after=, before=."
)
@click.option("--stream", is_flag=True, help="Print the answer as the model writes it.")
@llm_option
@click.option(
    "--embedder", envvar="KGRAG_EMBEDDER", show_envvar=True, help="hashing | wordllama | minilm | cohere | openai (as at ingest)."
)
@namespace_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON: answer, model, citations (chunk ids, sources, cited or not) and the results.",
)
@pass_app
@handle_errors
def ask(app: AppContext, question, mode, top_k, filters, stream, llm, embedder, namespace, as_json) -> None:
    """Answer a question from what was ingested, citing the passages used ([1], [2], ...).

    Example: kgrag ask "How are vector indexes created?" --mode graph --llm openai --stream
    """
    from ..errors import InputError
    from ..providers.select import describe_embedder, embedder_for_namespace
    from ..retrieval.answer import Answer, AnswerStream, answer

    if stream and as_json:
        raise InputError("--stream and --json do not go together: JSON is printed once the answer is whole")
    chat = chat_model(llm)
    store = app.store(namespace)
    emb = embedder_for_namespace(embedder, None if embedder else store.embedding_model())
    click.echo(f"embedder: {describe_embedder(emb)}", err=True)
    store.check_embedder(emb.name, emb.dimensions)
    retriever = build_retriever(mode, store, emb, filters=[parse_filter(f) for f in filters])
    if stream:
        streamed = answer(question, retriever=retriever, chat=chat, top_k=top_k, stream=True)
        assert isinstance(streamed, AnswerStream)  # what stream=True returns
        for piece in streamed:
            click.echo(piece, nl=False)
        click.echo("")
        _print_sources(streamed.citations)
        return
    result = answer(question, retriever=retriever, chat=chat, top_k=top_k)
    assert isinstance(result, Answer)  # what stream=False returns
    if as_json:
        emit_json({"mode": mode, "namespace": namespace, **result.to_json()})
        return
    click.echo(result.text)
    _print_sources(result.citations)


def _print_sources(citations) -> None:
    cited = [c for c in citations if c.cited]
    if not citations:
        return
    click.echo("")
    click.echo("Sources:" if cited else "Sources (the answer cites none of them):")
    for c in cited or citations:
        where = " - ".join(x for x in (c.title, c.source) if x) or c.document_id
        click.echo(f"  [{c.number}] {where}  ({c.chunk_id})")
