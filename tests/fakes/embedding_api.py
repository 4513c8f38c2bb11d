"""A local fake of an OpenAI-compatible embedding server (POST /v1/embeddings, GET /v1/models) with a reranking
endpoint (POST /v1/rerank, Jina/Cohere style; POST /rerank, text-embeddings-inference style). Its vectors are
`FakeEmbedder`'s (texts sharing words are near); a test scripts its delay, an error status or a garbage body."""
from __future__ import annotations

import asyncio
import base64
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from aiohttp import web

from tests.fakes.embedder import FakeEmbedder
from tests.fakes.web import LocalServer


def shared_words(query: str, document: str) -> float:
    """The default rerank score: how many of the query's words the document holds."""
    words = set(re.findall(r"\w+", query.lower()))
    return float(len(words & set(re.findall(r"\w+", document.lower()))))


def encoded(row: np.ndarray, encoding: str) -> Any:
    """A vector as OpenAI's API sends it: a list of floats, or base64 of little-endian float32."""
    if encoding == "base64":
        return base64.b64encode(np.asarray(row, dtype="<f4").tobytes()).decode()
    return row.tolist()


class FakeEmbeddingServer(LocalServer):
    """Serves `model` with vectors of `dim`; `delay` seconds before each answer; `status` other than 200 fails."""

    def __init__(self, model: str = "bge-m3", dim: int = 48,
                 score: Callable[[str, str], float] = shared_words) -> None:
        super().__init__()
        self.model, self.dim = model, dim
        self.vectors = FakeEmbedder(dim, model)
        self.score = score
        self.delay = 0.0
        self.status = 200
        self.body: Any = None  # a body to answer instead of the real shape (to fake an unreadable answer)
        self.encodings = ("float", "base64")  # what encoding_format it takes (Ollama: float only)
        self.listed: Sequence[str] | None = None  # the models GET /v1/models names (default: this one)
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []  # path, headers, json
        self.seconds: list[float] = []  # the server's own time per answered embeddings request

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def inputs(self) -> list[str]:
        """Every text embedded so far, in order."""
        return [text for path, _h, body in self.requests if path.endswith("embeddings") for text in body["input"]]

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/rerank", self._rerank)
        app.router.add_post("/rerank", self._rerank)
        app.router.add_get("/fake/seconds", self._seconds)  # for a client in another process (bench/)
        return app

    async def _scripted(self, request: web.Request) -> tuple[dict[str, Any], web.Response | None]:
        body = await request.json()
        self.requests.append((request.path, {k.lower(): v for k, v in request.headers.items()}, body))
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.status != 200:
            return body, web.json_response({"error": {"message": "fake failure"}}, status=self.status)
        if self.body is not None:
            return body, web.json_response(self.body)
        return body, None

    async def _embeddings(self, request: web.Request) -> web.Response:
        started = time.perf_counter()
        body, scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        if body.get("model") != self.model:
            return web.json_response({"error": {"message": f"model {body.get('model')!r} not found"}}, status=404)
        if body.get("encoding_format", "float") not in self.encodings:
            return web.json_response({"error": {"message": "unknown encoding_format"}}, status=422)
        texts = [body["input"]] if isinstance(body["input"], str) else list(body["input"])
        matrix = self.vectors.embed(texts)
        data = [{"object": "embedding", "index": i, "embedding": encoded(row, body.get("encoding_format", "float"))}
                for i, row in enumerate(matrix)]
        answer = web.json_response({"object": "list", "model": self.model, "data": data[::-1],  # any order
                                    "usage": {"prompt_tokens": 1, "total_tokens": 1}})
        self.seconds.append(time.perf_counter() - started)
        return answer

    async def _seconds(self, request: web.Request) -> web.Response:
        return web.json_response(self.seconds)

    async def _models(self, request: web.Request) -> web.Response:
        names = [self.model] if self.listed is None else list(self.listed)
        return web.json_response({"object": "list", "data": [{"id": n, "object": "model"} for n in names]})

    async def _rerank(self, request: web.Request) -> web.Response:
        body, scripted = await self._scripted(request)
        if scripted is not None:
            return scripted
        documents = body.get("documents") or body.get("texts") or []
        scored = [{"index": i, "relevance_score": self.score(body["query"], d)} for i, d in enumerate(documents)]
        scored.sort(key=lambda row: -row["relevance_score"])
        if request.path == "/rerank":  # text-embeddings-inference's shape
            return web.json_response([{"index": r["index"], "score": r["relevance_score"]} for r in scored])
        return web.json_response({"model": body.get("model", ""), "results": scored})
