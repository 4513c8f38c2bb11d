"""The nightly diary: the companion writes, in the first person, how the day with the person was."""
from __future__ import annotations

import logging
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from memory import DiaryEntry, MemoryStore, Scope
from scheduler.errors import BadModelOutput
from scheduler.ports import Writer

log = logging.getLogger(__name__)

INSTRUCTIONS = """You are a companion writing your private diary at the end of the day, in the first person
("Ich"), in the language of the conversations. How was the day for me with this person? What stayed
with me, what moved me, what am I curious about? Continue your earlier entries, do not repeat them.
You are an AI and do not invent a human daily life. Plain text, at most 1200 characters."""


async def write_diary(
    store: MemoryStore, writer: Writer, scope: Scope, now: float, zone: ZoneInfo,
) -> DiaryEntry | None:
    """Write today's entry; skipped (None) when there was no conversation in the last 24 hours."""
    start = now - 24 * 3600
    messages = await store.messages.between(scope, start, now + 1, limit=1000)
    if not any(m.role == "user" for m in messages):
        return None
    messages = messages[-80:]  # the 40 latest exchanges
    lines = []
    for m in messages:
        limit, who = (400, "Person") if m.role == "user" else (600, "Ich")
        lines.append(f"{who}: {m.text[:limit]}")
    day_start = datetime.fromtimestamp(now, zone) - timedelta(hours=24)
    thoughts = [th for th in await store.thoughts.latest(scope, 20) if th.created_at >= day_start][:3]
    earlier = await store.diary.latest(scope, 3)
    profile = await store.profile.list(scope)
    material = "\n\n".join([
        "Profile of the person:\n" + "\n".join(f"- {p.key}: {p.value}" for p in profile),
        "Today's conversation:\n" + "\n".join(lines),
        "My thoughts today:\n" + "\n".join(f"- ({th.origin}) {th.text}" for th in thoughts),
        "My last entries:\n" + "\n".join(f"- {e.day}: {e.text[:400]}" for e in reversed(earlier)),
    ])
    text = (await writer(INSTRUCTIONS, material, max_tokens=700)).strip()
    if not text:
        raise BadModelOutput("the diary model returned an empty entry")
    day = datetime.fromtimestamp(now, zone).strftime("%Y-%m-%d")
    return await store.diary.add(scope, day, text[:2000], created_at=now)
