"""What flows between channels and the engine: incoming messages and replies with buttons."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

MAX_DATA = 64  # Telegram's limit for a button's data, in bytes
_ID = re.compile(r"#?([0-9]{1,18})", re.ASCII)  # SQLite integers have at most 19 digits
_FIELD = re.compile(r"-?[0-9]{1,18}|[0-9]*[a-z][a-z0-9]*", re.ASCII)


@dataclass(frozen=True)
class Incoming:
    """A message from a user on some channel."""

    user_id: str  # the scope's user: the person in a private chat, the group's scope in a group
    text: str
    channel: str = "console"
    channel_message_id: str | None = None
    sender: str = ""  # who wrote it (in a group: the member); empty: the scope's user
    may_decide: bool = True  # whether the sender may answer the scope's open question (groups: admins only)


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
    closes: tuple[str, ...] = ()  # questions decided or dropped in this turn ('rule:12'): their old buttons go


class Answer(NamedTuple):
    """What a button press answers: a short notice, and optionally a new text and buttons for its message."""

    notice: str
    text: str | None = None
    buttons: tuple[tuple[Button, ...], ...] = ()


_QUESTION_DATA = re.compile(r"(rule|profile|tool):(?:yes|no):([0-9]{1,18})", re.ASCII)


def question_of(buttons: tuple[tuple[Button, ...], ...] | list[list[Button]]) -> str:
    """The yes/no question a set of buttons answers ('rule:12', 'profile:3', 'tool:2'), or '' when they answer none."""
    for row in buttons:
        for button in row:
            found = _QUESTION_DATA.fullmatch(button.data)
            if found:
                return f"{found.group(1)}:{found.group(2)}"
    return ""


def item_id(text: str) -> int | None:
    """The id a user typed or a button carries ('12', '#12'); None for anything else (other digits, too long)."""
    found = _ID.fullmatch(text.strip())
    return int(found.group(1)) if found else None


def well_formed(data: str) -> bool:
    """Whether button data has the shape mnemo's buttons have: short ASCII fields, numbers of at most 18 digits."""
    return 0 < len(data.encode()) <= MAX_DATA and all(_FIELD.fullmatch(f) for f in data.split(":"))
