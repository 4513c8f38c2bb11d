"""Read an exported history (ChatGPT, Claude, Telegram) as a stream of conversations: detect the format, choose the
person, drop what is older than `since`."""
from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from bot.errors import HistoryError
from bot.history import chatgpt, claude, telegram
from bot.history.model import HistoryConversation
from bot.history.source import Progress, open_export, sniff_events

FORMATS = ("chatgpt", "claude", "telegram")
NAMES = {"chatgpt": "ChatGPT", "claude": "Claude", "telegram": "Telegram"}
TELEGRAM_KEYS = ("messages", "chats", "left_chats", "personal_information")


def detect_format(path: Path | str) -> str:
    """Which export this is: "chatgpt", "claude" or "telegram"; HistoryError for anything else (or an empty one)."""
    found = _sniff(Path(path))
    if found is None:
        raise HistoryError(f"{Path(path).name}: holds no conversations")
    return found


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
        raise HistoryError(f"unknown format {fmt!r}; use chatgpt, claude or telegram")
    found = _sniff(path)
    if fmt is not None and found is not None and found != fmt:
        raise HistoryError(f"{path.name}: this is a {NAMES[found]} export, not {NAMES[fmt]}")
    fmt = fmt or found
    if fmt is None:
        return iter(())
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


def _sniff(path: Path) -> str | None:
    """The format by the first keys of the file's JSON; None for a JSON array without conversations."""
    with open_export(path) as stream:
        events = sniff_events(stream)
        name = stream.name
    found = decide(events)
    if found == "empty":
        return None
    if found is None:
        what = "is JSON, but" if events else "is"
        raise HistoryError(f"{name}: {what} not a ChatGPT, Claude or Telegram export")
    return found


def decide(events: list[tuple[str, str, Any]]) -> str | None:
    """The format the parser events of a file's start show: "chatgpt", "claude", "telegram", "empty" or None."""
    if not events:
        return None
    if events[0][1] == "start_array":
        if len(events) > 1 and events[1][1] == "end_array":
            return "empty"
        keys: set[str] = set()
        for prefix, event, value in events:
            if prefix == "item" and event == "map_key":
                if value == "mapping":
                    return "chatgpt"
                if value == "chat_messages":
                    return "claude"
                keys.add(value)
            elif prefix == "item" and event == "end_map":
                return "claude" if "uuid" in keys and "messages" in keys else None
        return None
    if events[0][1] == "start_map":
        for prefix, event, value in events:
            if prefix == "" and event == "map_key" and value in TELEGRAM_KEYS:
                return "telegram"
    return None


def _person(path: Path, person: str | None) -> str:
    """The `from_id` of the importing person in a Telegram export; HistoryError naming the candidates otherwise."""
    with open_export(path) as stream:
        events = sniff_events(stream)
    owner = _owner(events)
    if owner is not None and (person is None or telegram.matches(owner, person)):
        return owner.id
    personal = any(p in ("type", "chats.list.item.type") and v == "personal_chat" for p, _, v in events)
    with open_export(path) as stream:
        found = telegram.senders(stream, wanted=person, enough=0 if person is not None or not personal else 2)
    if person is not None:
        for sender in found.counts:
            if telegram.matches(sender, person):
                return sender.id
        raise HistoryError(f"{path.name}: nobody called {person!r} writes here; "
                           f"the participants are: {found.describe() or 'none'}")
    raise HistoryError(f"{path.name}: say which participant you are (--person NAME or ID): {found.describe()}")


def _owner(events: list[tuple[str, str, Any]]) -> telegram.Sender | None:
    """The exporting account, from a full export's personal_information (at the file's start)."""
    fields = {p.rpartition(".")[2]: v for p, e, v in events if p.startswith("personal_information.")}
    if not fields.get("user_id"):
        return None
    name = " ".join(str(fields.get(k) or "") for k in ("first_name", "last_name")).strip()
    return telegram.Sender(f"user{fields['user_id']}", name)
