"""Markers for models without tool calling: [RECALL: …], [THOUGHT: …], [FOLLOWUP: …], [RULE: …] and
[SUGGESTION: …] (also the older [[VORSCHLAG: …]]); and with or without tools, [REACT: emoji], the companion's reaction
on the person's message, [PHOTO: …], a picture's description, and [CRISIS: …], the model's word that the message needs
the help line (the engine sends it at once). Doubled brackets and one level of brackets inside
are part of the marker; one that does not close is cut off with everything after it: never shown, never carried out."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_KINDS = {"recall": "recall", "thought": "thought", "followup": "followup", "rule": "rule",
          "suggestion": "suggestion", "vorschlag": "suggestion", "react": "react", "photo": "photo", "foto": "photo",
          "crisis": "crisis", "krise": "crisis"}
_NAMES = "|".join(_KINDS)
# greedy and without spaces around the content (stripped in code): a long unclosed marker costs linear time
_MARKER = re.compile(rf"\[?\[\s*({_NAMES})\s*:((?:[^\[\]]|\[[^\[\]]*\])*)\]\]?", re.IGNORECASE)
_DEFUSED = re.compile(rf"\(\s*({_NAMES})\s*:((?:[^()]|\([^()]*\))*)\)", re.IGNORECASE)  # as `defuse` leaves one
_ROUND = str.maketrans("()", "[]")
_BROKEN = re.compile(rf"\[?\[\s*(?:{_NAMES})\s*:.*", re.IGNORECASE | re.DOTALL)  # left open: cut off with the rest


@dataclass(frozen=True)
class Marker:
    """One marker the model wrote."""

    kind: str  # "recall" | "thought" | "followup" | "rule" | "suggestion" | "react" | "photo" | "crisis"
    content: str


def _key(kind: str, content: str) -> tuple[str, str]:
    """A marker as compared with what the model was given: without case, character width, spacing or escapes."""
    folded = unicodedata.normalize("NFKC", content).casefold().replace("\\", "").translate(_ROUND)
    return _KINDS[kind.lower()], " ".join(folded.split())


def _keys(text: str) -> set[tuple[str, str]]:
    """The keys of every marker in the text, defused ones and those nested in another's content included (a model
    that turns '(THOUGHT: x)' back into '[THOUGHT: x]' merely repeats it)."""
    found = set()
    for pattern in (_MARKER, _DEFUSED):
        for m in pattern.finditer(text):
            found.add(_key(m.group(1), m.group(2)))
            found |= _keys(m.group(2))
    return found


def split_markers(reply: str, heard: str = "") -> tuple[str, list[Marker]]:
    """Strip every marker from the reply; return the clean text and the markers to execute.

    `heard` is what the model was given: the user's message, and for the engine also the memory, the earlier
    messages and tool results. A marker already in it (typed by the user, or by anyone into something stored)
    that the model merely repeated is stripped but never returned for execution.
    """
    given = _keys(unicodedata.normalize("NFKC", heard))
    found = [
        Marker(_KINDS[m.group(1).lower()], m.group(2).strip())
        for m in _MARKER.finditer(reply)
        if m.group(2).strip() and _key(m.group(1), m.group(2)) not in given
    ]
    clean = _BROKEN.sub("", _MARKER.sub("", reply))
    clean = "\n".join(re.sub(r"[ \t]{2,}", " ", line).strip() for line in clean.split("\n"))
    clean = re.sub(r"[ \t]+([.,!?;:])", r"\1", clean)
    clean = re.sub(r"\n{3,}", "\n\n", clean).strip()
    return clean, found


_PARENS = str.maketrans("[]", "()")


def defuse(user_text: str) -> str:
    """Make markers typed by a user inert before the text reaches the model."""
    return _MARKER.sub(lambda m: f"({m.group(1)}: " + m.group(2).strip().translate(_PARENS) + ")", user_text)


_OPEN_MARKER = re.compile(r"\[?\[[^\[\]]*$")


def preview_text(text: str, user_text: str = "") -> str:
    """The part of a half-written reply that may be shown: markers stripped, an unfinished '[…' cut off."""
    return split_markers(_OPEN_MARKER.sub("", text), user_text)[0]


def flags_crisis(reply: str, heard: str = "") -> bool:
    """Whether the model wrote [CRISIS: …] of its own in the reply (one it merely repeated from `heard` is not)."""
    if "cris" not in reply.lower() and "krise" not in reply.lower():  # the common case, without a regex
        return False
    return any(marker.kind == "crisis" for marker in split_markers(reply, heard)[1])
