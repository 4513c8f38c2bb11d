"""Markers for models without tool calling: [RECALL: …], [THOUGHT: …], [FOLLOWUP: …], [RULE: …]."""
from __future__ import annotations

import re
from dataclasses import dataclass

_MARKER = re.compile(r"\[\s*(RECALL|THOUGHT|FOLLOWUP|RULE)\s*:\s*([^\[\]]*?)\s*\]", re.IGNORECASE)


@dataclass(frozen=True)
class Marker:
    """One marker the model wrote."""

    kind: str  # "recall" | "thought" | "followup" | "rule"
    content: str


def split_markers(reply: str, user_text: str = "") -> tuple[str, list[Marker]]:
    """Strip every marker from the reply; return the clean text and the markers to execute.

    A marker that the user typed themselves (and the model merely echoed) is stripped but never
    returned for execution.
    """
    typed = {m.group(0).casefold() for m in _MARKER.finditer(user_text)}
    found = [
        Marker(m.group(1).lower(), m.group(2))
        for m in _MARKER.finditer(reply)
        if m.group(2) and m.group(0).casefold() not in typed
    ]
    clean = _MARKER.sub("", reply)
    clean = "\n".join(re.sub(r"[ \t]{2,}", " ", line).strip() for line in clean.split("\n"))
    clean = re.sub(r"[ \t]+([.,!?;:])", r"\1", clean)
    clean = re.sub(r"\n{3,}", "\n\n", clean).strip()
    return clean, found


def defuse(user_text: str) -> str:
    """Make markers typed by a user inert before the text reaches the model."""
    return _MARKER.sub(lambda m: "(" + m.group(0)[1:-1] + ")", user_text)
