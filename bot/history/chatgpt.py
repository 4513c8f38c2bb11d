"""Read a ChatGPT data export (conversations.json): each conversation's visible branch, the person's and the model's
text."""
from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from bot.history.model import HistoryConversation, HistoryMessage, Speaker
from bot.history.source import Stream, json_items

SPEAKERS: dict[str, Speaker] = {"user": "person", "assistant": "other"}
TEXT_TYPES = ("text", "multimodal_text")  # code, execution_output, thoughts, user_editable_context… are not talk


def read(stream: Stream) -> Iterator[HistoryConversation]:
    """Every conversation of the export, one at a time (a conversation with no talk left is skipped)."""
    for raw in json_items(stream):
        if isinstance(raw, dict) and (conversation := parse(raw)) is not None:
            yield conversation


def parse(raw: dict[str, Any]) -> HistoryConversation | None:
    """One exported conversation: the branch that ends at `current_node` (the one last shown), oldest first."""
    mapping = raw.get("mapping")
    if not isinstance(mapping, dict):
        return None
    started = timestamp(raw.get("create_time")) or timestamp(raw.get("update_time"))
    messages = []
    for node in branch(mapping, raw.get("current_node")):
        message = node.get("message") if isinstance(node, dict) else None
        if isinstance(message, dict) and (said := _message(message, started)) is not None:
            messages.append(said)
            started = said.at  # a message without a time is placed at the one before it
    if not messages:
        return None
    key = str(raw.get("conversation_id") or raw.get("id") or f"{raw.get('title', '')}@{raw.get('create_time')}")
    return HistoryConversation("chatgpt", key, str(raw.get("title") or ""), tuple(messages))


def branch(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """The nodes from the root to `current` (without it: to the newest leaf), in order; a cycle ends the walk."""
    if current not in mapping:
        current = _newest_leaf(mapping)
    path, seen = [], set()
    while isinstance(current, str) and current in mapping and current not in seen:
        seen.add(current)
        node = mapping[current]
        if not isinstance(node, dict):
            break
        path.append(node)
        current = node.get("parent")
    return path[::-1]


def _newest_leaf(mapping: dict[str, Any]) -> str | None:
    """The leaf with the latest message, for an export without a usable `current_node`."""
    leaves = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("children")]

    def made(key: str) -> float:
        message = mapping[key].get("message")
        return float((message or {}).get("create_time") or 0) if isinstance(message, dict) else 0.0

    return max(leaves, key=made, default=None)


def _message(message: dict[str, Any], fallback: datetime | None) -> HistoryMessage | None:
    """One message as the person saw it, or None: system, tool, hidden, addressed to a tool, or without text."""
    speaker = SPEAKERS.get(str((message.get("author") or {}).get("role")))
    metadata = message.get("metadata") or {}
    if speaker is None or metadata.get("is_visually_hidden_from_conversation") or metadata.get(
            "is_user_system_message") or message.get("recipient", "all") != "all":
        return None
    content = message.get("content") or {}
    if content.get("content_type", "text") not in TEXT_TYPES:
        return None
    text = "\n".join(p for p in map(_part, content.get("parts") or []) if p).strip()
    files = [a.get("name") for a in metadata.get("attachments") or [] if isinstance(a, dict) and a.get("name")]
    if files:  # an uploaded image is named here; its "[image]" part would say it twice
        text = "\n".join(line for line in text.split("\n") if line != "[image]").strip()
        text = " ".join(f"[file: {name}]" for name in files) + ("\n" + text if text else "")
    at = timestamp(message.get("create_time")) or fallback
    if not text or at is None:
        return None
    return HistoryMessage(speaker, text, at)


def _part(part: Any) -> str:
    """The text of one content part: a string, a voice transcript, or a placeholder for an image."""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    kind = part.get("content_type")
    if kind == "audio_transcription":
        return str(part.get("text") or "")
    if kind == "image_asset_pointer":
        return "[image]"
    return ""


def timestamp(value: Any) -> datetime | None:
    """A Unix time (float, int or numeric string) as an aware UTC datetime; None for anything else."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    if not 0 < seconds < 32503680000:  # before the year 3000
        return None
    return datetime.fromtimestamp(seconds, UTC)
