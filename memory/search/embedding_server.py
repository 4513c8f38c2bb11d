"""The Embedder port over any OpenAI-compatible POST /v1/embeddings (Ollama, vLLM, text-embeddings-inference, OpenAI).

The vectors are recorded under the name `server/<model>` (with `@<dimensions>` when shortened), whichever host
serves them: a search only ever compares vectors of the recorded model (`SearchIndex.ensure_model`), so a switch
of model goes through `mnemo reindex`. When the server cannot answer, `embed` raises `EmbeddingUnavailable` and
the callers fall back to what needs no vector (`MemoryStore.search` by words only, `Journal` indexing later).
"""
from __future__ import annotations

import base64
import binascii
import ssl
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
import httpx
import numpy as np

from memory.errors import EmbeddingUnavailable
from memory.search.embedder import Purpose
from memory.search.mismatch import PREFIXES

PROBE = "Hallo"  # what is embedded to learn the model's length when no dimensions are set
# Seconds the turn's path leaves a failed server alone: a server that hangs costs one turn its timeout, not each
# turn each of its two or three embeddings.
RESTING = 30.0


@dataclass(frozen=True)
class EmbeddingServer:
    """Where the server is and how to ask it (MNEMO_EMBEDDING_*)."""

    base_url: str  # the API's base, e.g. http://127.0.0.1:11434/v1
    model: str  # the name the server gives the model, e.g. bge-m3
    api_key: str | None = None
    dimensions: int | None = None  # shorter vectors (OpenAI's `dimensions`); None: the model's own length
    timeout: float = 10.0  # seconds per request
    batch_size: int = 64  # texts per request
    query_prefix: str = ""  # e.g. 'search_query: ' for nomic-embed-text, 'query: ' for e5
    document_prefix: str = ""  # e.g. 'search_document: ', 'passage: '


def server_name(server: EmbeddingServer) -> str:
    """The name vectors of this server's model are recorded under: the model, its length when shortened, and the
    prefixes when there are any (a vector of "search_query: X" is not one of "X": changing them needs a reindex)."""
    name = f"server/{server.model}" + (f"@{server.dimensions}" if server.dimensions else "")
    if server.query_prefix or server.document_prefix:
        both = f"{server.query_prefix}\0{server.document_prefix}".encode()
        name += f"{PREFIXES}{zlib.crc32(both):08x}"
    return name


def read_vectors(body: Any, count: int, dim: int | None) -> np.ndarray:
    """The rows of an embeddings answer in input order, L2-normalized; anything else is EmbeddingUnavailable."""
    try:
        rows = sorted(body["data"], key=lambda row: int(row["index"]))
        matrix = np.asarray([_floats(row["embedding"]) for row in rows], dtype=np.float32)
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise EmbeddingUnavailable(f"the embedding server's answer has no data[].embedding ({exc})") from exc
    if matrix.ndim != 2 or matrix.shape[0] != count or (dim is not None and matrix.shape[1] != dim):
        raise EmbeddingUnavailable(f"the embedding server answered shape {matrix.shape} for {count} texts"
                                   + (f" of {dim} dimensions" if dim is not None else ""))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(np.isfinite(matrix)) or not np.all(norms > 0):
        raise EmbeddingUnavailable("the embedding server answered a zero or non-finite vector")
    return matrix / norms


def may_ask(failed_at: float | None, now: float, resting: float = RESTING) -> bool:
    """Whether the turn's path may ask the server: it never failed, or its rest is over (pure)."""
    return failed_at is None or now - failed_at >= resting


def _floats(embedding: Any) -> Any:
    """One vector as the answer gives it: a list of numbers, or base64 of little-endian float32."""
    if isinstance(embedding, str):
        return np.frombuffer(base64.b64decode(embedding, validate=True), dtype="<f4")
    return embedding


class ServerEmbedder:
    """Embeds by asking the server, in batches; its length from the settings, else from one probe at start."""

    def __init__(self, server: EmbeddingServer, verify: Any = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.server, self._clock = server, clock
        self._failed_at: float | None = None  # when the turn's path last found the server failing
        self.name = server_name(server)
        headers = {"Authorization": f"Bearer {server.api_key}"} if server.api_key else {}
        # The blocking path (the probe, `mnemo reindex`, `mnemo doctor`) opens a client per call: nothing to close.
        self._blocking = {"base_url": server.base_url.rstrip("/") + "/", "headers": headers,
                          "timeout": server.timeout, "verify": verify}
        # The turn's path: asked from the event loop, no thread hand-off, with aiohttp (a request costs a third of
        # httpx's CPU time: bench/embedding_server.py); made in the loop at the first ask.
        self._headers, self._verify = headers, verify
        self._session: aiohttp.ClientSession | None = None
        # base64 costs a fraction of a float list to read (1 ms per 1,024-dimension vector at a busy machine's
        # load); a server that refuses it is asked for floats from then on, one that ignores it answers floats.
        self.encoding = "base64"
        self.dim = server.dimensions or self.probe()

    def probe(self) -> int:
        """The length of the model's vectors, asked of the server."""
        return int(self._ask([PROBE], None).shape[1])

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """Embed with the purpose's prefix, `batch_size` texts a request (blocking: `reindex`, `mnemo doctor`)."""
        batches = self._batches(texts, purpose)
        return np.concatenate([self._ask(b, self.dim) for b in batches]) if batches else self._none()

    async def aembed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """`embed` from the event loop (`SearchIndex.embed` prefers it); for `RESTING` seconds after a failure it
        raises at once instead of asking."""
        if not may_ask(self._failed_at, self._clock()):
            raise EmbeddingUnavailable(f"the embedding server {self.server.base_url} failed less than "
                                       f"{RESTING:g} s ago; it is asked again after that")
        try:
            found = [await self._aask(b) for b in self._batches(texts, purpose)]
        except EmbeddingUnavailable:
            self._failed_at = self._clock()
            raise
        self._failed_at = None
        return np.concatenate(found) if found else self._none()

    def _none(self) -> np.ndarray:
        return np.zeros((0, self.dim), dtype=np.float32)

    def _batches(self, texts: Sequence[str], purpose: Purpose) -> list[list[str]]:
        prefix = self.server.query_prefix if purpose == "query" else self.server.document_prefix
        size = max(1, self.server.batch_size)
        prefixed = [prefix + t for t in texts]
        return [prefixed[at:at + size] for at in range(0, len(prefixed), size)]

    def _body(self, texts: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.server.model, "input": texts, "encoding_format": self.encoding}
        if self.server.dimensions:
            body["dimensions"] = self.server.dimensions
        return body

    def _ask(self, texts: list[str], dim: int | None) -> np.ndarray:
        """One request; the server's failures as EmbeddingUnavailable."""
        try:
            with httpx.Client(**self._blocking) as client:
                response = client.post("embeddings", json=self._body(texts))
                if self._refused_base64(response.status_code):
                    response = client.post("embeddings", json=self._body(texts))
                response.raise_for_status()
                answer = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise self._unavailable(exc) from exc
        return read_vectors(answer, len(texts), dim)

    async def _aask(self, texts: list[str]) -> np.ndarray:
        if self._session is None:
            verify = self._verify if isinstance(self._verify, ssl.SSLContext) else bool(self._verify)
            self._session = aiohttp.ClientSession(
                headers=self._headers, timeout=aiohttp.ClientTimeout(total=self.server.timeout),
                connector=aiohttp.TCPConnector(ssl=verify))
        url = self.server.base_url.rstrip("/") + "/embeddings"
        try:
            for _attempt in range(2):
                async with self._session.post(url, json=self._body(texts)) as response:
                    if self._refused_base64(response.status):
                        continue
                    if response.status >= 400:
                        raise EmbeddingUnavailable(f"the embedding server {self.server.base_url} answered "
                                                   f"{response.status} for model {self.server.model}")
                    answer = await response.json(content_type=None)
                    return read_vectors(answer, len(texts), self.dim)
        except TimeoutError as exc:
            raise EmbeddingUnavailable(f"the embedding server {self.server.base_url} took longer than "
                                       f"{self.server.timeout:g} s") from exc
        except (aiohttp.ClientError, ValueError) as exc:
            raise EmbeddingUnavailable(f"the embedding server {self.server.base_url} cannot be reached: "
                                       f"{type(exc).__name__}") from exc
        raise EmbeddingUnavailable(f"the embedding server {self.server.base_url} refused both encodings")

    def _refused_base64(self, status: int) -> bool:
        """Whether the server refused base64 (a 400 or 422 to the first ask): floats from now on."""
        if self.encoding == "base64" and status in (400, 422):
            self.encoding = "float"
            return True
        return False

    def _unavailable(self, exc: Exception) -> EmbeddingUnavailable:
        """An HTTP client's failure in words."""
        where = f"the embedding server {self.server.base_url}"
        if isinstance(exc, httpx.TimeoutException):
            return EmbeddingUnavailable(f"{where} took longer than {self.server.timeout:g} s")
        if isinstance(exc, httpx.HTTPStatusError):
            return EmbeddingUnavailable(f"{where} answered {exc.response.status_code} for model {self.server.model}")
        return EmbeddingUnavailable(f"{where} cannot be reached: {type(exc).__name__}")

    def models(self) -> list[str]:
        """The model names the server lists at GET /models (empty when it lists none)."""
        try:
            with httpx.Client(**self._blocking) as client:
                response = client.get("models")
            response.raise_for_status()
            return [str(m["id"]) for m in response.json().get("data", [])]
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbeddingUnavailable(f"the embedding server {self.server.base_url} lists no models "
                                       f"({type(exc).__name__})") from exc

    async def aclose(self) -> None:
        """Close the event loop's connections (`MemoryStore.close` does; the next ask opens them again)."""
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

