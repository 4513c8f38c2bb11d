"""The Embedder port over any OpenAI-compatible POST /v1/embeddings (Ollama, vLLM, text-embeddings-inference, OpenAI).

The vectors are recorded under the name `server/<model>` (with `@<dimensions>` when shortened), whichever host
serves them: a search only ever compares vectors of the recorded model (`SearchIndex.ensure_model`), so a switch
of model goes through `mnemo reindex`. When the server cannot answer, `embed` raises `EmbeddingUnavailable` and
the callers fall back to what needs no vector (`MemoryStore.search` by words only, `Journal` indexing later).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np

from memory.embedder import Purpose
from memory.errors import EmbeddingUnavailable

PROBE = "Hallo"  # what is embedded to learn the model's length when no dimensions are set


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
    """The name vectors of this server's model are recorded under."""
    return f"server/{server.model}" + (f"@{server.dimensions}" if server.dimensions else "")


def read_vectors(body: Any, count: int, dim: int | None) -> np.ndarray:
    """The rows of an embeddings answer in input order, L2-normalized; anything else is EmbeddingUnavailable."""
    try:
        rows = sorted(body["data"], key=lambda row: int(row["index"]))
        matrix = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
    except (KeyError, TypeError, ValueError) as exc:
        raise EmbeddingUnavailable(f"the embedding server's answer has no data[].embedding ({exc})") from exc
    if matrix.ndim != 2 or matrix.shape[0] != count or (dim is not None and matrix.shape[1] != dim):
        raise EmbeddingUnavailable(f"the embedding server answered shape {matrix.shape} for {count} texts"
                                   + (f" of {dim} dimensions" if dim is not None else ""))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(np.isfinite(matrix)) or not np.all(norms > 0):
        raise EmbeddingUnavailable("the embedding server answered a zero or non-finite vector")
    return matrix / norms


class ServerEmbedder:
    """Embeds by asking the server, in batches; its length from the settings, else from one probe at start."""

    def __init__(self, server: EmbeddingServer, transport: httpx.BaseTransport | None = None,
                 verify: Any = True) -> None:
        self.server = server
        self.name = server_name(server)
        headers = {"Authorization": f"Bearer {server.api_key}"} if server.api_key else {}
        self._client = httpx.Client(base_url=server.base_url.rstrip("/") + "/", headers=headers,
                                    timeout=server.timeout, transport=transport, verify=verify)
        self.dim = server.dimensions or self.probe()

    def probe(self) -> int:
        """The length of the model's vectors, asked of the server."""
        return int(self._ask([PROBE], None).shape[1])

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """Embed with the purpose's prefix, `batch_size` texts a request."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        prefix = self.server.query_prefix if purpose == "query" else self.server.document_prefix
        prefixed = [prefix + t for t in texts]
        size = max(1, self.server.batch_size)
        return np.concatenate([self._ask(prefixed[at:at + size], self.dim) for at in range(0, len(prefixed), size)])

    def _ask(self, texts: list[str], dim: int | None) -> np.ndarray:
        """One request; the server's failures as EmbeddingUnavailable."""
        body: dict[str, Any] = {"model": self.server.model, "input": texts, "encoding_format": "float"}
        if self.server.dimensions:
            body["dimensions"] = self.server.dimensions
        try:
            response = self._client.post("embeddings", json=body)
            response.raise_for_status()
            answer = response.json()
        except httpx.TimeoutException as exc:
            raise EmbeddingUnavailable(f"the embedding server {self.server.base_url} took longer than "
                                       f"{self.server.timeout:g} s") from exc
        except httpx.HTTPStatusError as exc:
            raise EmbeddingUnavailable(f"the embedding server {self.server.base_url} answered "
                                       f"{exc.response.status_code} for model {self.server.model}") from exc
        except (httpx.HTTPError, ValueError) as exc:
            raise EmbeddingUnavailable(f"the embedding server {self.server.base_url} cannot be reached: "
                                       f"{type(exc).__name__}") from exc
        return read_vectors(answer, len(texts), dim)

    def models(self) -> list[str]:
        """The model names the server lists at GET /models (empty when it lists none)."""
        try:
            response = self._client.get("models")
            response.raise_for_status()
            return [str(m["id"]) for m in response.json().get("data", [])]
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbeddingUnavailable(f"the embedding server {self.server.base_url} lists no models "
                                       f"({type(exc).__name__})") from exc

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

