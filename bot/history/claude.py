"""Read a Claude export (conversations.json): the person's and Claude's text, in the shapes different accounts get."""
from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from bot.history.model import HistoryConversation, HistoryMessage, Speaker
from bot.history.source import Stream, json_items

SPEAKERS: dict[str, Speaker] = {"human": "person", "user": "person", "assistant": "other"}
ROOT = "00000000-0000-4000-8000-000000000000"  # the parent of a conversation's first message


def read(stream: Stream) -> Iterator[HistoryConversation]:
    """Every conversation of the export, one at a time (a conversation with no talk is skipped)."""
    for raw in json_items(stream):
        if isinstance(raw, dict) and (conversation := parse(raw)) is not None:
            yield conversation


def parse(raw: dict[str, Any]) -> HistoryConversation | None:
    """One exported conversation, oldest message first.

    Accounts get `chat_messages` (most) or `messages`, with `sender` (human/assistant) or `role` (user/assistant),
    the text in `text`, in `content` blocks, or both; when messages name their parent, only the branch that ends
    with the last message is kept (an edited question replaces the earlier one).
    """
    listed = raw.get("chat_messages")
    if listed is None:
        listed = raw.get("messages")
    if not isinstance(listed, list):
        return None
    started = isotime(raw.get("created_at")) or isotime(raw.get("updated_at"))
    messages = []
    for message in _branch([m for m in listed if isinstance(m, dict)]):
        if (said := _message(message, started)) is not None:
            messages.append(said)
            started = said.at
    if not messages:
        return None
    key = str(raw.get("uuid") or raw.get("id") or f"{raw.get('name', '')}@{raw.get('created_at')}")
    return HistoryConversation("claude", key, str(raw.get("name") or raw.get("title") or ""), tuple(messages))


def _branch(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages on the path to the last one, when every message names its parent; else all, in order."""
    if not messages or not all("parent_message_uuid" in m and m.get("uuid") for m in messages):
        return messages
    by_id = {m["uuid"]: m for m in messages}
    path, current, seen = [], messages[-1].get("uuid"), set()
    while current in by_id and current not in seen and current != ROOT:
        seen.add(current)
        path.append(by_id[current])
        current = by_id[current].get("parent_message_uuid")
    return path[::-1]


def _message(message: dict[str, Any], fallback: datetime | None) -> HistoryMessage | None:
    """One message as shown: its text blocks (thinking and tool calls left out), files as placeholders."""
    speaker = SPEAKERS.get(str(message.get("sender") or message.get("role")))
    if speaker is None:
        return None
    text = _text(message)
    files = [_file_name(f) for key in ("attachments", "files") for f in message.get(key) or []]
    files = [name for name in dict.fromkeys(files) if name]
    if files:
        text = " ".join(f"[file: {name}]" for name in files) + ("\n" + text if text else "")
    at = isotime(message.get("created_at")) or fallback
    if not text or at is None:
        return None
    return HistoryMessage(speaker, text, at)


def _text(message: dict[str, Any]) -> str:
    """The text blocks of `content` when there are any, else `text`."""
    blocks = message.get("content")
    if isinstance(blocks, list):
        parts = [str(b.get("text") or "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        if joined := "\n".join(p for p in parts if p.strip()).strip():
            return joined
    elif isinstance(blocks, str) and blocks.strip():
        return blocks.strip()
    text = message.get("text")
    return text.strip() if isinstance(text, str) else ""


def _file_name(item: Any) -> str:
    """The name of an attached or uploaded file."""
    if not isinstance(item, dict):
        return ""
    return str(item.get("file_name") or item.get("name") or "")


def isotime(value: Any) -> datetime | None:
    """An ISO 8601 time ("2024-05-01T10:00:00.123456Z") as an aware UTC datetime; a time without zone is UTC."""
    if not isinstance(value, str) or not value:
        return None
    try:
        at = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
