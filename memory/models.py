"""The plain records the store hands out."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from memory.records import kinship
from memory.records.kinship import Known

Source = Literal["message", "note", "profile", "thought", "diary", "person"]
SEARCHABLE: tuple[Source, ...] = ("message", "note", "profile", "thought", "diary", "person")


def ts(value: float | None) -> datetime | None:
    """Turn a stored unix time into an aware UTC datetime."""
    return None if value is None else datetime.fromtimestamp(value, tz=UTC)


@dataclass(frozen=True)
class Scope:
    """One companion talking with one user; every row belongs to exactly one scope."""

    id: int
    companion_id: str
    user_id: str


# What the companion sends, each logged with its kind: its reply to a message, a crisis's help text sent before it,
# what came of a press, and its pushes ('push': one logged before the kind was kept). A saved notice ("notice") is
# recorded in the outbox only: no words of the conversation.
SENT_KINDS = frozenset({"reply", "help", "press", "checkin", "reminder", "morning", "date", "diary", "push"})


@dataclass(frozen=True)
class Message:
    """One line of the verbatim session log."""

    id: int
    role: str
    text: str
    created_at: datetime
    channel: str = ""
    channel_message_id: str | None = None
    proactive: bool = False
    origin: str = "text"  # how it came: 'text' typed, 'voice' a voice note (`text` is its transcript), 'forwarded'
    kind: str = ""  # the companion's: what it sent (`SENT_KINDS`); '' for the person's own


@dataclass(frozen=True)
class Note:
    """A fact about the user or the content of a conversation."""

    id: int
    kind: str
    text: str
    importance: int
    created_at: datetime
    updated_at: datetime
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: int | None = None
    source_message_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class NoteWrite:
    """What add_note did: stored a new note, or found an exact or semantic duplicate."""

    note: Note
    created: bool
    duplicate: Literal["", "exact", "semantic"] = ""


@dataclass(frozen=True)
class ProfileEntry:
    """A structured, always-present fact (category/key/value)."""

    id: int
    category: str
    key: str
    value: str
    importance: int
    updated_at: datetime


@dataclass(frozen=True)
class Thought:
    """Something the companion concluded while reflecting."""

    id: int
    text: str
    origin: str
    created_at: datetime


@dataclass(frozen=True)
class DiaryEntry:
    """The companion's own diary entry for one day."""

    id: int
    day: str
    text: str
    created_at: datetime


@dataclass(frozen=True)
class OpenTopic:
    """Something to ask about later, due at a time."""

    id: int
    text: str
    due_at: datetime | None
    origin: str
    status: str
    created_at: datetime


@dataclass(frozen=True)
class LearnedRule:
    """A behaviour rule; only 'active' rules reach the prompt, and only after the user's yes."""

    id: int
    text: str
    status: str
    created_at: datetime


@dataclass(frozen=True)
class AuditEntry:
    """One change in one processing, with the item before and after."""

    id: int
    processing_id: str
    action: str
    item_type: str
    item_id: int | None
    before: dict | None
    after: dict | None
    reason: str
    created_at: datetime


@dataclass(frozen=True)
class Components:
    """The separate signals behind a search hit, kept for debugging and tuning."""

    cosine: float = 0.0
    words: float = 0.0
    trigram: float = 0.0
    age_days: float = 0.0
    importance: int = 5
    second: float | None = None  # the second signal's (USE's) cosine, where it joined the query; else None


@dataclass(frozen=True)
class SearchHit:
    """One search result with its fused score and component scores."""

    source: Source
    item_id: int
    text: str
    score: float
    created_at: datetime
    components: Components = field(default_factory=Components)


@dataclass(frozen=True)
class Person:
    """Someone in the user's life."""

    id: int
    name: str
    aliases: tuple[str, ...]
    relation: str
    valid_from: datetime | None
    valid_to: datetime | None
    created_at: datetime
    updated_at: datetime
    merged_into: int | None = None

    @property
    def named(self) -> bool:
        """Whether the user gave a real name (not only 'meine Schwester')."""
        return not kinship.is_description(self.name)

    def known(self) -> Known:
        """The fields matching works on."""
        return Known(self.id, self.name, self.aliases, self.relation)


@dataclass(frozen=True)
class Link:
    """A relation between two people: `a` is `relation` of `b` ('Miriam' is 'Ehefrau' of 'Tobias')."""

    id: int
    a: str
    relation: str
    b: str


@dataclass(frozen=True)
class PersonCard:
    """A person with their latest facts and relations, for the prompt and for search answers."""

    person: Person
    facts: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()


_GROUP = re.compile(r"[a-z]+:group:.+")  # a group chat's scope user id: tg:group:-1001234, mx:group:!room


def group_scope(prefix: str, chat_id: object) -> str:
    """The scope user id of a group chat, e.g. 'tg:group:-1001234'; never mixed with a member's own scope."""
    return f"{prefix}:group:{chat_id}"


def is_group_scope(user_id: str) -> bool:
    """Whether a scope belongs to a group chat (no proactive messages go there)."""
    return bool(_GROUP.fullmatch(user_id))
