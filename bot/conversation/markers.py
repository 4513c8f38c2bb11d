"""Markers for models without tool calling: [RECALL: …], [THOUGHT: …], [FOLLOWUP: …], [RULE: …]."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_MARKER = re.compile(r"\[\s*(RECALL|THOUGHT|FOLLOWUP|RULE)\s*:\s*([^\[\]]*?)\s*\]", re.IGNORECASE)


@dataclass(frozen=True)
class Marker:
    """One marker the model wrote."""

    kind: str  # "recall" | "thought" | "followup" | "rule"
    content: str


def _key(kind: str, content: str) -> tuple[str, str]:
    """A marker as compared with what the model was given: without case, character width, spacing or escapes."""
    folded = unicodedata.normalize("NFKC", content).casefold().replace("\\", "")
    return kind.lower(), " ".join(folded.split())


def split_markers(reply: str, heard: str = "") -> tuple[str, list[Marker]]:
    """Strip every marker from the reply; return the clean text and the markers to execute.

    `heard` is what the model was given: the user's message, and for the engine also the memory, the earlier
    messages and tool results. A marker already in it (typed by the user, or by anyone into something stored)
    that the model merely repeated is stripped but never returned for execution.
    """
    given = {_key(m.group(1), m.group(2)) for m in _MARKER.finditer(unicodedata.normalize("NFKC", heard))}
    found = [
        Marker(m.group(1).lower(), m.group(2))
        for m in _MARKER.finditer(reply)
        if m.group(2) and _key(m.group(1), m.group(2)) not in given
    ]
    clean = _MARKER.sub("", reply)
    clean = "\n".join(re.sub(r"[ \t]{2,}", " ", line).strip() for line in clean.split("\n"))
    clean = re.sub(r"[ \t]+([.,!?;:])", r"\1", clean)
    clean = re.sub(r"\n{3,}", "\n\n", clean).strip()
    return clean, found


def defuse(user_text: str) -> str:
    """Make markers typed by a user inert before the text reaches the model."""
    return _MARKER.sub(lambda m: "(" + m.group(0)[1:-1] + ")", user_text)


_OPEN_MARKER = re.compile(r"\[[^\[\]]*$")


def preview_text(text: str, user_text: str = "") -> str:
    """The part of a half-written reply that may be shown: markers stripped, an unfinished '[…' cut off."""
    return split_markers(_OPEN_MARKER.sub("", text), user_text)[0]
