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
    while rest:
        chunk, rest = _cut(rest, limits)
        chunks.append(chunk)
    return [c for c in chunks if c]


def first_part(text: str, limits: Sequence[Limit]) -> str:
    """The first message split_text makes of a text, without measuring the rest (a streamed preview's message)."""
    return _cut(text.strip(), limits)[0]


def _cut(rest: str, limits: Sequence[Limit]) -> tuple[str, str]:
    """The first message of a (stripped) text, and what is left after it."""
    end = _fitting(rest, limits)
    if end == len(rest):
        return rest, ""
    cut, skip = end, 0
    for separator in ("\n\n", "\n", " "):
        found = rest.rfind(separator, 0, end)
        if found >= end // 2:
            cut, skip = found, len(separator)
            break
    return rest[:cut].rstrip(), rest[cut + skip:].lstrip()


def _fitting(text: str, limits: Sequence[Limit]) -> int:
    """How many characters from the start of text keep every limit (at least one)."""
    used = [0] * len(limits)
    for i, char in enumerate(text):
        for n, limit in enumerate(limits):
            used[n] += 1 if limit.cost is None else limit.cost(char)
            if used[n] > limit.most:
                return max(i, 1)
    return len(text)
