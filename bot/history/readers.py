"""Read an exported history (ChatGPT, Claude, Telegram) as a stream of conversations: detect the format, choose the
person, drop what is older than `since`."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from bot.errors import HistoryError
from bot.history import chatgpt, claude, telegram
from bot.history.model import HistoryConversation
from bot.history.source import Progress, head_events, open_export

FORMATS = ("chatgpt", "claude", "telegram")
NAMES = {"chatgpt": "ChatGPT", "claude": "Claude", "telegram": "Telegram"}
TELEGRAM_KEYS = ("messages", "chats", "left_chats", "personal_information")


def detect_format(path: Path | str) -> str:
    """Which export this is: "chatgpt", "claude" or "telegram"; HistoryError for anything else (or an empty one)."""
    head = sniff(Path(path))
    if head.format == "empty":
        raise HistoryError("history_no_conversations", name=head.name)
    if head.format is None:
        raise HistoryError("history_json_not_an_export" if head.json else "history_not_an_export", name=head.name)
    return head.format


def read_history(
    path: Path | str, fmt: str | None = None, *, person: str | None = None, since: date | datetime | None = None,
    chat: str | None = None, progress: Progress | None = None,
) -> Iterator[HistoryConversation]:
    """The export's conversations, one at a time, each with the messages at or after `since` (None: all).

    Args:
        fmt: "chatgpt", "claude" or "telegram"; None detects it (a given format that the file is not is an error).
        person: Telegram only: who the importing person is, by display name or id ("user123456" or "123456");
            without it, the exporting account of a full export, else a HistoryError listing the participants.
        since: a date (midnight UTC) or a time; older messages are dropped, and conversations left empty.
        chat: Telegram only: read just this chat (name or id) of a full export.
        progress: called with (bytes read, bytes in total) about every MiB, for a progress bar.

    The format, the person and the file's start are checked here, before the first conversation; damage further
    in raises HistoryError while iterating, saying roughly where.
    """
    path = Path(path)
    if fmt is not None and fmt not in FORMATS:
        raise HistoryError("history_unknown_format", fmt=fmt)
    if fmt is None:
        fmt = detect_format(path)
    else:
        head = sniff(path)
        if head.format in FORMATS and head.format != fmt:
            raise HistoryError("history_other_format", name=path.name, found=NAMES[head.format], asked=NAMES[fmt])
    person_id = _person(path, person) if fmt == "telegram" else ""
    return _since(_read(path, fmt, person_id, chat, progress), _moment(since))


def _read(path: Path, fmt: str, person_id: str, chat: str | None,
          progress: Progress | None) -> Iterator[HistoryConversation]:
    """The reader of the format over a fresh stream of the file."""
    with open_export(path, progress) as stream:
        if fmt == "chatgpt":
            yield from chatgpt.read(stream)
        elif fmt == "claude":
            yield from claude.read(stream)
        else:
            yield from telegram.read(stream, person_id, chat)


def _since(conversations: Iterator[HistoryConversation], since: datetime | None) -> Iterator[HistoryConversation]:
    """Each conversation with its messages from `since` on; one with none left is skipped."""
    for conversation in conversations:
        if since is None:
            yield conversation
            continue
        kept = tuple(m for m in conversation.messages if m.at >= since)
        if kept:
            yield HistoryConversation(conversation.source, conversation.key, conversation.title, kept)


def _moment(since: date | datetime | None) -> datetime | None:
    """`since` as an aware time: a date is its midnight in UTC, a time without zone is UTC."""
    if since is None or isinstance(since, datetime):
        return since if since is None or since.tzinfo else since.replace(tzinfo=UTC)
    return datetime(since.year, since.month, since.day, tzinfo=UTC)


@dataclass(frozen=True)
class Head:
    """What the start of an export shows: its format ("empty": a JSON array without items; None: unknown), whether it
    is JSON at all, and for Telegram the exporting account and the chat's type."""

    name: str
    format: str | None
    json: bool
    owner: telegram.Sender | None = None
    chat_type: str | None = None


def sniff(path: Path) -> Head:
    """Read the first keys of the export's JSON (at most its first MiB, stopping as soon as they tell)."""
    with open_export(path) as stream:
        events = head_events(stream)
        first = next(events, None)
        kind = first[1] if first else None
        if kind == "start_array":
            return Head(stream.name, _array_format(events), True)
        if kind == "start_map":
            return _telegram_head(stream.name, events)
        return Head(stream.name, None, first is not None)


def _array_format(events: Iterator[tuple[str, str, Any]]) -> str | None:
    """ChatGPT or Claude, by the keys of the first conversation."""
    keys: set[str] = set()
    for prefix, event, value in events:
        if prefix == "" and event == "end_array":
            return "empty"
        if prefix == "item" and event == "map_key":
            if value == "mapping":
                return "chatgpt"
            if value == "chat_messages":
                return "claude"
            keys.add(value)
        elif prefix == "item" and event == "end_map":
            return "claude" if {"uuid", "messages"} <= keys else None
    return None


def _telegram_head(name: str, events: Iterator[tuple[str, str, Any]]) -> Head:
    """A Telegram export, by its top-level keys, with the exporting account and a single chat's type."""
    found, chat_type = False, None
    fields: dict[str, Any] = {}
    for prefix, event, value in events:
        if prefix == "" and event == "map_key":
            found = found or value in TELEGRAM_KEYS
            if value in ("messages", "chats"):
                break  # the account and the chat's type come before these
        elif prefix == "type" and event == "string":
            chat_type = value
        elif prefix.startswith("personal_information.") and event in ("string", "number"):
            fields[prefix.rpartition(".")[2]] = value
    owner = None
    if fields.get("user_id"):
        owner_name = " ".join(str(fields.get(k) or "") for k in ("first_name", "last_name")).strip()
        owner = telegram.Sender(f"user{fields['user_id']}", owner_name)
    return Head(name, "telegram" if found else None, True, owner, chat_type)


def _person(path: Path, person: str | None) -> str:
    """The `from_id` of the importing person in a Telegram export; HistoryError naming the candidates otherwise."""
    head = sniff(path)
    if head.owner is not None and (person is None or telegram.matches(head.owner, person)):
        return head.owner.id
    enough = 2 if person is None and head.chat_type == "personal_chat" else 0  # a personal chat has two people
    with open_export(path) as stream:
        found = telegram.senders(stream, wanted=person, enough=enough)
    if person is not None:
        for sender in found.counts:
            if telegram.matches(sender, person):
                return sender.id
        raise HistoryError("history_no_such_person", name=path.name, person=person, participants=found.describe)
    raise HistoryError("history_which_person", name=path.name, participants=found.describe)
