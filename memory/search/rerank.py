"""Reranking the search's best candidates, optionally: the Reranker port, a /v1/rerank server, and the rule that the
fused order stands whenever the reranker is slow, down or answers garbage.

A reranker scores (query, document) pairs together, where the search compared their vectors apart. It is off
unless MNEMO_RERANK is set: a reranking server (text-embeddings-inference, vLLM, llama.cpp's server, Jina, Cohere)
or the chat model as a judge (`bot.conversation.rerank_judge`).
"""
from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from memory.models import SearchHit

log = logging.getLogger(__name__)

CountFailure = Callable[[str], Awaitable[None]]


class RerankFailed(Exception):
    """The reranker answered, but not with one real score per document; the fused order stands."""


class Reranker(Protocol):
    """Scores documents for a query: higher means more relevant."""

    async def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        """One score per document, in the documents' order."""
        ...


@dataclass(frozen=True)
class Reranking:
    """A reranker with its limits: how many of the fused candidates it sees, and how long it may take."""

    reranker: Reranker
    top: int = 20
    timeout: float = 1.0  # seconds; past them the fused order stands


def reordered(hits: Sequence[SearchHit], scores: Sequence[float]) -> list[SearchHit]:
    """The hits by the reranker's scores, best first; of equal scores, the fused order (pure)."""
    if len(scores) != len(hits):
        raise RerankFailed(f"{len(scores)} scores for {len(hits)} documents")
    if not all(isinstance(s, (int, float)) and not isinstance(s, bool) and math.isfinite(s) for s in scores):
        raise RerankFailed("a score that is not a real number")
    order = sorted(range(len(hits)), key=lambda at: -float(scores[at]))
    return [hits[at] for at in order]


async def reranked(hits: list[SearchHit], query: str, reranking: Reranking, count: CountFailure) -> list[SearchHit]:
    """The first `top` hits reordered by the reranker, the rest after them; the fused order when it fails in time."""
    head, tail = hits[:reranking.top], hits[reranking.top:]
    if len(head) < 2:
        return hits
    try:
        scores = await asyncio.wait_for(reranking.reranker.scores(query, [h.text for h in head]), reranking.timeout)
        return reordered(head, scores) + tail
    except TimeoutError:
        log.warning("the reranker took longer than %.1f s; the fused order stands", reranking.timeout)
        await count("rerank.timeout")
    except (RerankFailed, httpx.HTTPError, ValueError) as exc:
        log.warning("the reranker failed; the fused order stands: %s", exc)
        await count("rerank.error")
    return hits


def server_scores(body: Any, count: int) -> list[float]:
    """Scores from a rerank answer, in the documents' order: Jina/Cohere/vLLM's {"results": [{"index",
    "relevance_score"}]} or text-embeddings-inference's [{"index", "score"}]."""
    rows = body.get("results") if isinstance(body, dict) else body
    if not isinstance(rows, list):
        raise RerankFailed(f"no results in the reranker's answer ({type(body).__name__})")
    found: dict[int, float] = {}
    for row in rows:
        try:
            score = row["relevance_score"] if "relevance_score" in row else row["score"]
            found[int(row["index"])] = float(score)
        except (KeyError, TypeError, ValueError) as exc:
            raise RerankFailed(f"a result without index and score ({exc})") from exc
    if sorted(found) != list(range(count)):
        raise RerankFailed(f"scores for {len(found)} of {count} documents")
    return [found[at] for at in range(count)]


@dataclass(frozen=True)
class RerankServer:
    """Where the reranking server is (MNEMO_RERANK_URL, _MODEL, _API_KEY)."""

    base_url: str  # POST <base_url>/rerank, e.g. http://127.0.0.1:8080/v1 or text-embeddings-inference's root
    model: str = ""
    api_key: str | None = None


class ServerReranker:
    """Asks a /rerank endpoint; sends the documents as `documents` (Jina, Cohere, vLLM) and `texts` (TEI)."""

    def __init__(self, server: RerankServer, timeout: float, transport: httpx.AsyncBaseTransport | None = None,
                 verify: Any = True) -> None:
        self.server = server
        headers = {"Authorization": f"Bearer {server.api_key}"} if server.api_key else {}
        self._client = httpx.AsyncClient(base_url=server.base_url.rstrip("/") + "/", headers=headers,
                                         timeout=timeout, transport=transport, verify=verify)

    async def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        """One request; an error status or an unreadable answer raises."""
        body: dict[str, Any] = {"query": query, "documents": list(documents), "texts": list(documents),
                                "return_documents": False}
        if self.server.model:
            body["model"] = self.server.model
        response = await self._client.post("rerank", json=body)
        response.raise_for_status()
        return server_scores(response.json(), len(documents))

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.aclose()
