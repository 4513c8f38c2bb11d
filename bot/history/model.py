"""What every history reader yields: conversations of the person and the other side, with their original times."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

Speaker = Literal["person", "other"]  # the person who imports, or whoever they talked with (a model, a friend)


@dataclass(frozen=True)
class HistoryMessage:
    """One message of an exported conversation: who said it, what (text only), and when (aware, UTC or local)."""

    speaker: Speaker
    text: str
    at: datetime


@dataclass(frozen=True)
class HistoryConversation:
    """One exported conversation: where it came from, its stable key in that export, a title, its messages in order.

    `source` is "chatgpt", "claude" or "telegram"; `key` is the export's own id of the conversation (the same on a
    second import of the same file), so an import can say which conversations it has done.
    """

    source: str
    key: str
    title: str
    messages: tuple[HistoryMessage, ...]
