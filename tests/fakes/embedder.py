"""A deterministic embedder for tests: hashed bag of words and character trigrams, unit length."""
from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np


class FakeEmbedder:
    """Texts sharing words get similar vectors; identical texts get identical ones."""

    def __init__(self, dim: int = 64, name: str = "fake-embedder") -> None:
        self.dim = dim
        self.name = name
        self.calls: list[list[str]] = []
        self.purposes: list[str] = []  # the purpose of each call, beside `calls`

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
            vec[h % self.dim] += 1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0:
            vec[0] = 1.0
            norm = 1.0
        return vec / norm

    def embed(self, texts: Sequence[str], purpose: str = "document") -> np.ndarray:
        """Embed without any prefix; records each call."""
        self.calls.append(list(texts))
        self.purposes.append(purpose)
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


class FakeSentenceEncoder(FakeEmbedder):
    """The second signal's stand-in (USE: no prefixes): a hashed bag of concepts, where words of one concept
    (`concepts`: word -> concept) share a dimension, so it finds paraphrases the word-hashing embedder misses."""

    def __init__(self, concepts: dict[str, str] | None = None, dim: int = 48, name: str = "fake-use") -> None:
        super().__init__(dim, name)
        self.concepts = concepts or {}

    def _vector(self, text: str) -> np.ndarray:
        words = [self.concepts.get(w, w) for w in re.findall(r"\w+", text.lower())]
        return super()._vector(" ".join(words))
