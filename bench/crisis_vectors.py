"""The crisis classifier's vectors of the bench's texts, as the bot makes them, cached on disk.

The bot's own embedders (`bot.conversation.crisis.e5_embedder` for e5's query vectors, `use_embedder` for USE's)
embed each text's first `SCAN_CHARS` characters, as the classifier reads them; each vector is kept in
~/.cache/mnemo-bench/<hash of model and purpose>.npz (MNEMO_BENCH_CACHE moves it) under the sha1 of the text it was
made from, so a second run embeds only texts it has not seen. The file holds vectors and hashes, never a text.
"""
from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memory import Purpose

CACHE = Path(os.environ.get("MNEMO_BENCH_CACHE", "~/.cache/mnemo-bench")).expanduser()
CHUNK = 256  # texts embedded between two writes of the cache


def sha1(text: str) -> str:
    """The key of a text's vector."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class DiskCache:
    """One model's vectors (under one purpose) by the sha1 of their text, in one .npz file."""

    def __init__(self, model: str, purpose: str, folder: Path = CACHE) -> None:
        self.path = folder / f"{sha1(f'{model}|{purpose}')[:16]}.npz"
        self.keys: list[str] = []
        self.rows: list[np.ndarray] = []
        if self.path.exists():
            with np.load(self.path) as saved:
                self.keys, self.rows = [str(k) for k in saved["keys"]], list(saved["vectors"])
        self.at = {k: i for i, k in enumerate(self.keys)}

    def missing(self, texts: Sequence[str]) -> list[str]:
        """The distinct texts without a vector yet, in order."""
        return [t for t in dict.fromkeys(texts) if sha1(t) not in self.at]

    def add(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Keep the vectors of texts and write the file (whole, then moved in place)."""
        for text, vector in zip(texts, np.asarray(vectors, np.float32)):
            self.at[sha1(text)] = len(self.keys)
            self.keys.append(sha1(text))
            self.rows.append(vector)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        part = self.path.with_suffix(".part.npz")
        np.savez(part, keys=np.array(self.keys), vectors=np.stack(self.rows).astype(np.float32))
        os.replace(part, self.path)

    def get(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of texts that all have one."""
        return np.stack([self.rows[self.at[sha1(t)]] for t in texts]).astype(np.float32)


def vectors(texts: Sequence[str], features: Sequence[str]) -> np.ndarray:
    """Each feature's vectors of the texts (as the classifier reads them), side by side in the order given."""
    from bot.conversation.crisis import SCAN_CHARS, e5_embedder, use_embedder

    read = [t[:SCAN_CHARS] for t in texts]
    parts = []
    for feature in features:
        embedder = e5_embedder() if feature == "e5" else use_embedder()
        purpose: Purpose = "query" if feature == "e5" else "document"
        cache = DiskCache(embedder.name, purpose)
        todo = cache.missing(read)
        started = time.perf_counter()
        for at in range(0, len(todo), CHUNK):
            chunk = todo[at:at + CHUNK]
            cache.add(chunk, embedder.embed(chunk, purpose))
        if todo:
            print(f"{feature}: embedded {len(todo)} new texts in {time.perf_counter() - started:.1f} s",
                  file=sys.stderr)
        parts.append(cache.get(read) if read else np.zeros((0, embedder.dim), np.float32))
    return np.hstack(parts)
