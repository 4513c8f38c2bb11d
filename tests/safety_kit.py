"""What the crisis tests share: the real layered detector and the crisis set's vectors, each made once per process."""
from __future__ import annotations

import functools

import numpy as np

from bench.crisis import Row, heldout_rows, train_rows
from bot.conversation.crisis import LayeredDetector, e5_embedder, local_detector


@functools.cache
def real_detector() -> LayeredDetector:
    """Patterns and the shipped classifier on the process's own e5 (the test stores embed with a fake)."""
    return local_detector()


@functools.cache
def set_split(split: str) -> tuple[tuple[Row, ...], np.ndarray]:
    """A split of the crisis set and its query vectors (embedded once per test session: some seconds each)."""
    rows = tuple(train_rows() if split == "train" else heldout_rows())
    return rows, e5_embedder().embed([r.text for r in rows], "query")
