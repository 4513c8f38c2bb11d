"""Splitting a long text into the messages a messenger takes: within its limits, at paragraphs, lines or words."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    """One limit of a messenger's message: at most `most`, each character counting `cost(char)` (None: one)."""

    most: int
    cost: Callable[[str], int] | None = None

    def size(self, text: str) -> int:
        """How much of this limit a text uses."""
        return len(text) if self.cost is None else sum(map(self.cost, text))


def split_text(text: str, limits: Sequence[Limit]) -> list[str]:
    """Split text into messages that keep every limit, preferring paragraph, line and word boundaries."""
    chunks: list[str] = []
    rest = text.strip()
    while any(limit.size(rest) > limit.most for limit in limits):
        end = _fitting(rest, limits)
        cut, skip = end, 0
        for separator in ("\n\n", "\n", " "):
            found = rest.rfind(separator, 0, end)
            if found >= end // 2:
                cut, skip = found, len(separator)
                break
        chunks.append(rest[:cut].rstrip())
        rest = rest[cut + skip:].lstrip()
    chunks.append(rest)
    return [c for c in chunks if c]


def _fitting(text: str, limits: Sequence[Limit]) -> int:
    """How many characters from the start of text keep every limit (at least one)."""
    used = [0] * len(limits)
    for i, char in enumerate(text):
        for n, limit in enumerate(limits):
            used[n] += 1 if limit.cost is None else limit.cost(char)
            if used[n] > limit.most:
                return max(i, 1)
    return len(text)
