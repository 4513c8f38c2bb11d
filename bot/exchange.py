"""What flows between channels and the engine: incoming messages (with a voice note or a picture, a quoted
message) and replies (with buttons, a voice note, a reaction); reactions on the companion's messages."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

MAX_DATA = 64  # Telegram's limit for a button's data, in bytes
_ID = re.compile(r"#?([0-9]{1,18})", re.ASCII)  # SQLite integers have at most 19 digits
_FIELD = re.compile(r"-?[0-9]{1,18}|[0-9]*[a-z][a-z0-9]*", re.ASCII)


MediaKind = Literal["voice", "image", "document"]


@dataclass(frozen=True)
class Attachment:
    """A voice note, a picture or a document, as the channel downloaded it.

    voice: a voice note, an audio file or a video note; image: a photo, an image file or a sticker; document: any
    other file (a PDF, a text; the engine says what it does not read). A channel
    downloads nothing larger than the engine's limit (`EngineConfig`): it passes the size it was told with no
    data, and the engine answers that it is too large.
    """

    kind: MediaKind
    data: bytes
    mime: str  # as the messenger names it: audio/ogg, video/mp4, image/jpeg, image/webp, …
    size: int  # bytes, as the messenger says (the length of `data` when it was downloaded)
    name: str = ""  # the file's name, when it has one
    seconds: float | None = None  # a voice note's length, when the messenger says
    undecryptable: bool = False  # end-to-end encrypted, and the channel could not decrypt it (no data then)


@dataclass(frozen=True)
class Quoted:
    """The message a user's message replies to, as the channel found it."""

    text: str
    by_companion: bool  # the companion wrote it (else the user, or in a group a member)
    ref: str | None = None  # the channel's id of a quoted message without words on the wire (a voice note): its
    #                         words are the ones logged for it (the transcript), found by the channel


@dataclass(frozen=True)
class Incoming:
    """A message from a user on some channel."""

    user_id: str  # the scope's user: the person in a private chat, the group's scope in a group
    text: str
    channel: str = "console"
    channel_message_id: str | None = None
    sender: str = ""  # who wrote it (in a group: the member); empty: the scope's user
    may_decide: bool = True  # whether the sender may answer the scope's open question (groups: admins only)
    attachment: Attachment | None = None  # a voice note or a picture; `text` is then its caption, maybe empty
    quoted: Quoted | None = None  # the older message this one replies to
    addressed: bool = True  # in a group: the companion was named or replied to (a reaction of its own is allowed)
    sent_at: float | None = None  # when the person sent it, as the messenger says (the rate limit counts it then)
    forwarded: bool = False  # someone else's words the person forwarded (Telegram: forward_origin; Matrix: only
    #                          where the client marks a forward, MSC2723's m.forwarded; Element does not)
    language: str = ""  # the language the messenger names for the sender ('en-US'); empty: it names none


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
    voice: Voice | None = None  # the reply spoken: sent as a voice note, the bubbles still go along as text
    reaction: str = ""  # one emoji the companion puts on the user's message, or ''


@dataclass(frozen=True)
class Voice:
    """A reply spoken by the Speaker: an OGG/Opus voice note."""

    data: bytes
    mime: str = "audio/ogg"
    seconds: float | None = None


@dataclass(frozen=True)
class Reaction:
    """A user's reaction on one of the companion's messages (an emoji added; `removed` when taken back)."""

    user_id: str  # the scope's user, as in Incoming
    channel: str
    message_ref: str  # the channel's id of the companion's message it is on
    emoji: str
    sender: str = ""  # who reacted (in a group: the member)
    removed: bool = False
    ref: str = ""  # the reaction's own id where it has one (a Matrix event): its redaction names only that


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
