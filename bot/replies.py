"""What flows between channels and the engine: incoming messages and replies with buttons."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True)
class Incoming:
    """A message from a user on some channel."""

    user_id: str
    text: str
    channel: str = "console"
    channel_message_id: str | None = None


@dataclass(frozen=True)
class Button:
    """An inline button: a label and the data it sends back."""

    label: str
    data: str


@dataclass(frozen=True)
class Document:
    """A file to hand to the user (an export)."""

    filename: str
    content: bytes


@dataclass(frozen=True)
class Reply:
    """What the channel shows the user: up to three bubbles, maybe rows of buttons under the last one."""

    bubbles: tuple[str, ...]
    buttons: tuple[tuple[Button, ...], ...] = ()
    failed: bool = False
    document: Document | None = None


class Answer(NamedTuple):
    """What a button press answers: a short notice, and optionally a new text and buttons for its message."""

    notice: str
    text: str | None = None
    buttons: tuple[tuple[Button, ...], ...] = ()
