"""A reply in bubbles: at most three messages, split at blank lines, the last one taking the rest."""
from __future__ import annotations

from collections.abc import Sequence

MAX_BUBBLES = 3


def fit_bubbles(parts: Sequence[str], limit: int = MAX_BUBBLES) -> tuple[str, ...]:
    """The non-empty parts as at most `limit` bubbles; the last one takes the rest."""
    kept = tuple(part for part in parts if part.strip())
    if len(kept) <= limit:
        return kept
    return kept[: limit - 1] + ("\n\n".join(kept[limit - 1 :]),)


def first_bubble(text: str) -> str:
    """What of a reply written so far its first bubble will show: the first paragraph with words in it (a streamed
    reply's preview never grows past it, so the finished reply, split into bubbles, never shows less)."""
    return next((part.strip() for part in text.split("\n\n") if part.strip()), "")


def split_bubbles(text: str, limit: int = MAX_BUBBLES) -> tuple[str, ...]:
    """Split a reply at blank lines into at most `limit` bubbles (the last one takes the rest)."""
    return fit_bubbles([part.strip() for part in text.split("\n\n")], limit)
