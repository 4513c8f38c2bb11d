"""Read a Telegram Desktop export (result.json, one chat or the full export): message by message, in bounded memory.

A chat is cut into conversations at pauses of GAP (or every MAX_MESSAGES messages), so a chat of years never sits in
memory whole; a conversation's key is the chat id and its first message id, the same on every import of the file.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import ijson

from bot.errors import HistoryError
from bot.history.model import HistoryConversation, HistoryMessage
from bot.history.source import JSON_ERRORS, Stream, json_failure
from bot.texts import counted

BASES = ("", "chats.list.item", "left_chats.list.item")  # where a chat's fields live: one chat, or the full export
CHANNELS = ("public_channel", "private_channel")  # broadcasts: read only when chosen by name
GAP = timedelta(hours=8)  # a pause this long starts a new conversation
MAX_MESSAGES = 500
SAVED_MESSAGES = "Saved Messages"  # the account's own chat, stored as Telegram names it; shown translated
MEDIA = {"sticker": "sticker", "voice_message": "voice message", "video_message": "video message",
         "video_file": "video", "animation": "GIF", "audio_file": "audio"}


@dataclass(frozen=True)
class Sender:
    """A participant as the export names them: `from_id` ("user123456") and the display name."""

    id: str
    name: str


@dataclass
class Senders:
    """Who wrote how many messages (service messages not counted); `complete` when the whole export was read."""

    counts: Counter[Sender] = field(default_factory=Counter)
    complete: bool = True

    def describe(self, lang: str = "en", limit: int = 10) -> str:
        """The most active participants as "Anna Beispiel (user111, 120 messages)", for an error message ('–' for
        nobody)."""
        if not self.complete:
            return ", ".join(f"{s.name or '?'} ({s.id})" for s in self.counts) or "–"
        separator = "," if lang == "en" else "."
        return ", ".join(f"{s.name or '?'} ({s.id}, {counted(lang, n, 'messages', f'{n:,}'.replace(',', separator))})"
                         for s, n in self.counts.most_common(limit)) or "–"


def records(stream: Stream) -> Iterator[tuple[str, Any]]:
    """("chat", fields) before each chat's messages, then ("message", raw) for each of them."""
    events = ijson.parse(stream, use_float=True)
    chats: dict[str, dict[str, Any]] = {}
    try:
        for prefix, event, value in events:
            base, _, key = prefix.rpartition(".") if "." in prefix else ("", "", prefix)
            if key == "item" and event == "start_map" and base.endswith("messages") and _base(base) in BASES:
                chat = chats.pop(_base(base), None)
                if chat is not None:
                    yield "chat", chat
                yield "message", _build(events, prefix)
                stream.item_done()
            elif event == "start_map" and prefix in BASES:
                chats[prefix] = {}
            elif base in BASES and key in ("name", "type", "id") and event in ("string", "number", "null"):
                chats.setdefault(base, {})[key] = value
    except JSON_ERRORS as exc:
        raise json_failure(stream, exc) from exc


def _base(messages_prefix: str) -> str:
    """The chat's prefix, from the prefix of its messages array."""
    return messages_prefix[: -len("messages")].rstrip(".")


def _build(events: Iterator[tuple[str, str, Any]], prefix: str) -> Any:
    """The message object that just started at prefix, built from the events up to its end."""
    builder = ijson.ObjectBuilder()
    builder.event("start_map", None)
    for p, event, value in events:
        builder.event(event, value)
        if p == prefix and event == "end_map":
            break
    return builder.value


def senders(stream: Stream, wanted: str | None = None, enough: int = 0) -> Senders:
    """Who writes in the export: stops at the first sender matching `wanted`, or after `enough` distinct senders."""
    found = Senders()
    for kind, value in records(stream):
        if kind == "message" and isinstance(value, dict) and value.get("type", "message") == "message":
            sender = Sender(str(value.get("from_id") or ""), str(value.get("from") or ""))
            if not sender.id:
                continue
            found.counts[sender] += 1
            if (wanted is not None and matches(sender, wanted)) or (enough and len(found.counts) >= enough):
                found.complete = False
                break
    return found


def matches(sender: Sender, wanted: str) -> bool:
    """Whether `wanted` names this sender: the id ("user123456" or "123456") or the display name (any case)."""
    wanted = wanted.strip()
    return wanted in (sender.id, sender.id.removeprefix("user")) or (
        bool(sender.name) and wanted.casefold() == sender.name.casefold())


def read(stream: Stream, person_id: str, chat: str | None = None) -> Iterator[HistoryConversation]:
    """The chats' messages as conversations; `chat` (name or id) keeps only that chat. Raises HistoryError at the
    end when `chat` matched none (naming the chats there are)."""
    current: dict[str, Any] | None = None
    names: list[str] = []
    chosen = False
    pending: list[HistoryMessage] = []
    first_id = ""
    for kind, value in records(stream):
        if kind == "chat":
            if current is not None and pending:
                yield _conversation(current, first_id, pending)
            pending = []
            names.append(str(value.get("name") or value.get("id") or "?"))
            keep = _chosen(value, chat)
            chosen = chosen or keep
            current = value if keep else None
        elif kind == "message" and current is not None and isinstance(value, dict):
            said = message(value, person_id, group="group" in str(current.get("type", "")))
            if said is None:
                continue
            if pending and (said.at - pending[-1].at > GAP or len(pending) >= MAX_MESSAGES):
                yield _conversation(current, first_id, pending)
                pending = []
            if not pending:
                first_id = str(value.get("id", ""))
            pending.append(said)
    if current is not None and pending:
        yield _conversation(current, first_id, pending)
    if chat is not None and not chosen:
        raise HistoryError("history_no_such_chat", name=stream.name, chat=chat, chats=", ".join(names[:20]) or "–")


def _chosen(chat_fields: dict[str, Any], wanted: str | None) -> bool:
    """Whether to read this chat: the one named, or (none named) every chat but a broadcast channel."""
    if wanted is None:
        return chat_fields.get("type") not in CHANNELS
    name = str(chat_fields.get("name") or "")
    return wanted.strip() in (str(chat_fields.get("id")), name) or wanted.strip().casefold() == name.casefold()


def _conversation(chat: dict[str, Any], first_id: str, messages: list[HistoryMessage]) -> HistoryConversation:
    """A piece of a chat as one conversation."""
    title = str(chat.get("name") or (SAVED_MESSAGES if chat.get("type") == "saved_messages" else ""))
    return HistoryConversation("telegram", f"{chat.get('id', '')}/{first_id}", title, tuple(messages))


def message(raw: dict[str, Any], person_id: str, group: bool = False) -> HistoryMessage | None:
    """One message as text, or None for service messages and messages without any content.

    Media become placeholders ("[photo]", "[voice message]") before the caption. A forwarded message is the other
    side's words even when the person forwarded it; in a group, another member's message starts with their name.
    """
    if raw.get("type", "message") != "message":
        return None
    at = _time(raw)
    text = " ".join(p for p in (_media(raw), _text(raw.get("text"))) if p).strip()
    if at is None or not text:
        return None
    sender = str(raw.get("from_id") or "")
    if raw.get("forwarded_from") is not None:
        return HistoryMessage("other", f"[forwarded from {raw['forwarded_from'] or '?'}] {text}", at)
    if sender == person_id:
        return HistoryMessage("person", text, at)
    return HistoryMessage("other", f"{raw.get('from') or '?'}: {text}" if group else text, at)


def _text(value: Any) -> str:
    """The text of a message: a string, or a list of strings and entities ({"type": "bold", "text": …})."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(p if isinstance(p, str) else str(p.get("text") or "") for p in value
                       if isinstance(p, str | dict))
    return ""


def _media(raw: dict[str, Any]) -> str:
    """A placeholder for what the message carries besides text."""
    kind = raw.get("media_type")
    if kind == "sticker":
        return f"[sticker {raw.get('sticker_emoji') or ''}]".replace(" ]", "]")
    if kind in MEDIA:
        return f"[{MEDIA[kind]}]"
    if "photo" in raw:
        return "[photo]"
    if "file" in raw:
        return f"[file: {raw.get('file_name') or str(raw['file']).rsplit('/', 1)[-1]}]"
    if isinstance(raw.get("poll"), dict):
        return f"[poll: {raw['poll'].get('question') or ''}]"
    if "location_information" in raw:
        return "[location]"
    if "contact_information" in raw:
        return "[contact]"
    return ""


def _time(raw: dict[str, Any]) -> datetime | None:
    """When it was sent: `date_unixtime` (exports since 2021), else `date` (local time without zone, read as UTC)."""
    try:
        return datetime.fromtimestamp(int(raw["date_unixtime"]), UTC)
    except (KeyError, TypeError, ValueError, OverflowError, OSError):
        pass
    try:
        return datetime.fromisoformat(str(raw.get("date"))).replace(tzinfo=UTC)
    except ValueError:
        return None
