"""Tools the chat model may call: search_memory (notes, profile, thoughts, people), recall_chat, read_diary."""
from __future__ import annotations

import logging
import time as _time
from collections.abc import Sequence
from datetime import datetime, timedelta
from datetime import time as dtime
from typing import Any
from zoneinfo import ZoneInfo

from bot.conversation.prompt import quote
from bot.llm.port import ToolCall, ToolSpec
from memory.models import Scope, SearchHit
from memory.people import card_line
from memory.store import MemoryStore
from memory.timewords import time_window

log = logging.getLogger(__name__)

TOOLS = (
    ToolSpec(
        "search_memory",
        "Search what you remember about the person (notes, profile, your thoughts) and the people in their life"
        " ('who is Jana?', 'what do you know about my sister?', 'who works at the hospital?') by meaning and words.",
        {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    ),
    ToolSpec(
        "recall_chat",
        "Search the raw chat transcript. Time words in `when` or in the query ('gestern abend', 'letzte Woche',"
        " 'yesterday evening') or two dates (YYYY-MM-DD) limit it to that time, in the person's time zone.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "when": {"type": "string", "description": "time words, e.g. 'gestern abend'"},
                "from_date": {"type": "string", "description": "first day, YYYY-MM-DD"},
                "to_date": {"type": "string", "description": "last day, YYYY-MM-DD"},
            },
            "required": ["query"],
        },
    ),
    ToolSpec(
        "propose_rule",
        "Propose one behaviour rule (one sentence) after the person objected to how you behave; they confirm it.",
        {"type": "object", "properties": {"rule": {"type": "string"}}, "required": ["rule"]},
    ),
    ToolSpec(
        "read_diary",
        "Read your own latest diary entries.",
        {"type": "object", "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 5}}},
    ),
)
SAFE_TOOLS = tuple(tool for tool in TOOLS if tool.name != "propose_rule")  # a crisis turn changes no rule


def day_window(from_date: str | None, to_date: str | None, zone: ZoneInfo) -> tuple[float, float] | None:
    """Turn optional YYYY-MM-DD bounds into a [start, end) unix window in the zone; None when both are absent."""
    if not from_date and not to_date:
        return None
    start_day = datetime.strptime(from_date or "1970-01-02", "%Y-%m-%d").date()
    end_day = datetime.strptime(to_date or "9999-12-30", "%Y-%m-%d").date() + timedelta(days=1)
    start = datetime.combine(start_day, dtime(), zone).timestamp()
    end = datetime.combine(end_day, dtime(), zone).timestamp()
    return start, end


def recall_window(query: str, when: str | None, now: float, zone: ZoneInfo) -> tuple[str, tuple[float, float] | None]:
    """The search text and the hard time filter that time words in `when` or in the query name."""
    moment = datetime.fromtimestamp(now, zone)
    if when:
        window = time_window(when, moment, zone)
        if window:
            return query, window.as_unix()
    window = time_window(query, moment, zone)
    if window:
        return window.rest or query, window.as_unix()
    return query, None


async def run_tool(
    store: MemoryStore, scope: Scope, call: ToolCall, zone: ZoneInfo, current_id: int = 0, now: float | None = None,
) -> str:
    """Run one tool call and return its result as text for the model; bad arguments get a short error text.

    Messages from `current_id` on (the turn being answered) are left out of transcript results.
    """
    args: dict[str, Any] = call.arguments if isinstance(call.arguments, dict) else {}
    try:
        if call.name == "search_memory":
            return await search_memory(store, scope, str(args.get("query", "")), zone)
        if call.name == "recall_chat":
            query, window = recall_window(str(args.get("query", "")), args.get("when"), now or _time.time(), zone)
            window = day_window(args.get("from_date"), args.get("to_date"), zone) or window
            hits = await store.search(scope, query, ("message",), k=9, window=window)
            hits = [h for h in hits if not current_id or h.item_id < current_id][:8]
            return await transcript_lines(store, scope, sorted(hits, key=lambda h: h.created_at), zone)
        if call.name == "read_diary":
            count = max(1, min(5, int(args.get("count", 1) or 1)))
            entries = await store.diary.latest(scope, count)
            return _format([(e.created_at, e.text) for e in entries], zone) if entries else "The diary is empty."
    except (ValueError, TypeError) as exc:
        log.warning("tool %s got bad arguments %r: %s", call.name, args, exc)
        return f"error: bad arguments ({exc})"
    return f"error: unknown tool {call.name!r}"


async def search_memory(store: MemoryStore, scope: Scope, query: str, zone: ZoneInfo) -> str:
    """Notes, profile entries, thoughts and people that fit; a person found directly or through a note comes
    with their record (names, relation, relations, facts)."""
    hits = await store.search(scope, query, ("note", "profile", "thought", "person"), k=6, include_faded=True,
                              use=True)
    linked = await store.people.persons_of_notes(scope, [h.item_id for h in hits if h.source == "note"])
    ids = [h.item_id if h.source == "person" else linked.get(h.item_id) for h in hits]
    cards = await store.people.cards(scope, list(dict.fromkeys(i for i in ids if i is not None)), limit=3)
    found = await transcript_lines(store, scope, [h for h in hits if h.source != "person"], zone)
    if not cards:
        return found
    people = "People:\n" + "\n".join(f"- {card_line(card, facts=5)}" for card in cards)
    return people if found == NOTHING else f"{found}\n{people}"


NOTHING = "Nothing found."
SPEAKERS = {"user": "the person", "assistant": "you"}


def _format(items: list[tuple[datetime, str]], zone: ZoneInfo, limit: int = 400) -> str:
    """Dated lines of quoted text; every date and time in the person's zone."""
    if not items:
        return NOTHING
    return "\n".join(f"{when.astimezone(zone):%Y-%m-%d %H:%M}: {quote(text, limit)}" for when, text in items)


async def transcript_lines(store: MemoryStore, scope: Scope, hits: Sequence[SearchHit], zone: ZoneInfo,
                           limit: int = 400) -> str:
    """Search hits as dated lines in the person's zone; a message line says who wrote it."""
    if not hits:
        return NOTHING
    lines = []
    for hit in hits:
        when = f"{hit.created_at.astimezone(zone):%Y-%m-%d %H:%M}"
        message = await store.messages.get(scope, hit.item_id) if hit.source == "message" else None
        who = f" {SPEAKERS.get(message.role, message.role)}" if message is not None else ""
        lines.append(f"{when}{who}: {quote(hit.text, limit)}")
    return "\n".join(lines)
