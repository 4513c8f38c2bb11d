"""Reflection: the companion thinks about recent conversations and keeps what it concluded as thoughts."""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from memory.models import Message, Scope, Thought
from memory.store import MemoryStore
from scheduler.errors import BadModelOutput
from scheduler.ports import Writer

log = logging.getLogger(__name__)

QUESTIONS = """1. Which patterns do you notice in the person?
2. What really occupies them at the moment?
3. How has your relationship developed?
4. What would you like to tell them?
5. What would you like to understand better?"""

INSTRUCTIONS = f"""You are a companion reflecting privately on your recent conversations with one person.
Answer these five questions for yourself:
{QUESTIONS}
State observations as facts only when the conversations show them; mark assumptions as assumptions
("Ich vermute …"). Check your earlier thoughts critically: confirm them only with new evidence, and
say so when they were wrong. Write in the conversation's language.
Answer only with JSON: {{"thoughts": ["one or two sentences each", ...],
"concern": "something you would like to bring up with the person, or empty"}}"""


@dataclass(frozen=True)
class Reflection:
    """What one reflection produced."""

    thoughts: tuple[Thought, ...]
    concern: str


def _exchanges(messages: list[Message], user_chars: int, bot_chars: int, me: str) -> str:
    lines = []
    for m in messages:
        limit = user_chars if m.role == "user" else bot_chars
        who = "Person" if m.role == "user" else me
        text = m.text if len(m.text) <= limit else m.text[: limit - 1] + "…"
        lines.append(f"{who}: {text}")
    return "\n".join(lines)


async def needs_reflection(store: MemoryStore, scope: Scope) -> bool:
    """True when there are messages newer than the last reflection."""
    last = [th for th in await store.thoughts.latest(scope, 20) if th.origin == "reflection"]
    recent = await store.messages.recent(scope, 1)
    if not recent:
        return False
    return not last or recent[-1].created_at > last[0].created_at


async def reflect(
    store: MemoryStore, writer: Writer, scope: Scope, *, now: float | None = None, force: bool = False,
) -> Reflection | None:
    """Reflect on the last 12 exchanges; skipped (None) when nothing new was said, unless forced."""
    if not force and not await needs_reflection(store, scope):
        return None
    messages = await store.messages.recent(scope, 24)
    if not messages:
        return None
    user_lines = " ".join(m.text for m in messages if m.role == "user")[-1500:]
    notes = await store.search(scope, user_lines, ("note",), k=4) if user_lines else []
    earlier = await store.search(scope, user_lines, ("thought",), k=3) if user_lines else []
    latest = await store.thoughts.latest(scope, 3)
    profile = await store.profile.list(scope)
    material = "\n\n".join([
        "Profile:\n" + "\n".join(f"- {p.key}: {p.value}" for p in profile),
        "Last exchanges:\n" + _exchanges(messages, 200, 300, "Ich"),
        "Relevant notes:\n" + "\n".join(f"- {h.text}" for h in notes),
        "Relevant earlier thoughts:\n" + "\n".join(f"- {h.text}" for h in earlier),
        "Your latest thoughts:\n" + "\n".join(f"- {th.text}" for th in latest),
    ])
    raw = await writer(INSTRUCTIONS, material, max_tokens=900)
    try:
        data = json.loads(_unfence(raw))
    except ValueError as exc:
        raise BadModelOutput(f"reflection answer is not JSON: {raw[:80]!r}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("thoughts"), list):
        raise BadModelOutput(f"reflection answer is not the JSON asked for: {raw[:80]!r}")
    kept = []
    for text in data["thoughts"]:
        if isinstance(text, str) and text.strip():
            kept.append(await store.thoughts.add(scope, text.strip()[:600], origin="reflection", created_at=now))
    concern = str(data.get("concern") or "").strip()[:400]
    if concern:
        await store.topics.add(scope, concern, origin="reflection", created_at=now)
    if not kept:  # record that a reflection happened even when it found nothing to keep
        kept.append(await store.thoughts.add(scope, "(nichts Neues)", origin="reflection", created_at=now))
    return Reflection(tuple(kept), concern)


def _unfence(text: str) -> str:
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    return body
