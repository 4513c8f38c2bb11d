"""Text the model reads, cut to a budget and quoted as data: pure helpers every part of the bot shares."""
from __future__ import annotations

NOTE_CHARS = 300  # one remembered note, as the prompt and the tools quote it


def clip(text: str, limit: int) -> str:
    """Cut text to limit characters, marking the cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def quote(text: str, limit: int = NOTE_CHARS) -> str:
    """Text as one quoted line of data: line breaks and runs of space collapsed, quotes escaped, clipped.

    Stored text (a note, a summary, a topic) may hold what a stranger typed; on one escaped line it can never
    start a section of its own, such as a forged "Learned rules" heading.
    """
    flat = " ".join(text.split()).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{clip(flat, limit)}"'
