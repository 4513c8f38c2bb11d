"""A model whose cosines lie elsewhere than the bundled e5's: e5's vectors changed so that every cosine moves, the
order of most pairs kept. `FakeEmbeddingServer` serves it as a server's model (texts come with the prefixes
'query: ' / 'passage: ', as mnemo sends them when MNEMO_EMBEDDING_QUERY_PREFIX / _DOCUMENT_PREFIX say so).

- "high": a constant component added (8 more dimensions, together `LIFT` long: the bits of a vector come in bytes):
  a cosine c becomes (c + LIFT²) / (1 + LIFT²), e5's 0.7-1.0 become 0.94-1.0, so the fixed 0.82 merges every note
  and the fixed 0.3 lets every note in.
- "low": noise of its own added to each text (one of `PRIVATE` more dimensions, by the text's hash, `NOISE` long): a
  cosine c of two texts becomes c / (1 + NOISE²), e5's 0.7-1.0 become 0.21-0.31, so the fixed 0.3 keeps out a
  question's note that e5 lets in, and the fixed 0.82 merges no duplicate.
- "centred": e5's common direction taken out (the mean vector of `CENTRE_TEXTS`): the cosines spread over -0.1-1.0
  and the order of pairs changes (a model that is not e5 in disguise; bench/calibration.py).
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Literal

import numpy as np

from memory.search.embedder import Embedder, Purpose

Shift = Literal["high", "low", "centred"]
LIFT = 2.0
PRIVATE, NOISE = 4096, 1.5
QUERY, PASSAGE = "query: ", "passage: "
CENTRE_TEXTS = (
    "Heute war ein langer Tag.", "Ich habe morgen einen Termin beim Arzt.", "Das Wetter ist schön.",
    "Wir waren gestern im Kino.", "My sister called me yesterday.", "The train was late again.",
    "Ich koche gern Suppe.", "Der Bus fährt um acht Uhr.", "I bought a new phone.", "Meine Mutter hat Geburtstag.",
    "Das Buch war spannend.", "We planted flowers in the garden.",
)


class ShiftedEmbedder:
    """`inner`'s vectors shifted by `shift`; a text's purpose from its prefix when it has one."""

    def __init__(self, inner: Embedder, shift: Shift, name: str = "shifted") -> None:
        self.inner, self.shift, self.name = inner, shift, name
        self.dim = inner.dim + {"high": 8, "low": PRIVATE, "centred": 0}[shift]
        centre = np.asarray(inner.embed(list(CENTRE_TEXTS), "document"), dtype=np.float64).mean(axis=0)
        self._centre = centre

    def _moved(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        rows = np.asarray(vectors, dtype=np.float64)
        if self.shift == "high":
            rows = np.hstack([rows, np.full((len(rows), 8), LIFT / np.sqrt(8))])
        elif self.shift == "low":
            own = np.zeros((len(rows), PRIVATE))
            for i, text in enumerate(texts):
                slot = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "little") % PRIVATE
                own[i, slot] = NOISE
            rows = np.hstack([rows, own])
        else:
            rows = rows - self._centre
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)

    def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """Embed each text with the purpose its prefix names (else `purpose`), then shift."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for kind, prefix in (("query", QUERY), ("document", PASSAGE), (purpose, "")):
            at = [i for i, t in enumerate(texts) if t.startswith(prefix) and not out[i].any()]
            if at:
                plain = [texts[i][len(prefix):] for i in at]
                out[at] = self._moved(self.inner.embed(plain, kind), plain)  # type: ignore[arg-type]
        return out
