"""Reflection: the companion thinks about recent conversations and keeps what it concluded as thoughts."""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory import (
    EVOLVING_FIELDS,
    Feedback,
    MemoryStore,
    Message,
    Relationship,
    RelationshipChange,
    Scope,
    Thought,
    is_group_scope,
    new_processing,
)
from scheduler import relationship_rules
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
Then say how the relationship moved. Propose small changes (-5 to +5, mostly 0) to the four values only
when the conversations give a reason; the program decides the stage and limits every change.
Answer only with JSON: {{"thoughts": ["one or two sentences each", ...],
"concern": "something you would like to bring up with the person, or empty",
"relationship": {{"changes": {{"familiarity": 0, "trust": 0, "affection": 0, "playfulness": 0}},
"why": "what in the conversations justifies the changes",
"mood": "your mood towards the person, a few words",
"notes": "how the relationship stands, one or two sentences",
"intentions": ["at most five things you intend with the person; the whole list, it replaces the old one"],
"opinions": ["opinions of your own that came up, if any"],
"rituals": ["recurring things you two share, if any"],
"in_jokes": ["jokes only you two share, if any"]}}}}"""


@dataclass(frozen=True)
class Reflection:
    """What one reflection produced."""

    thoughts: tuple[Thought, ...]
    concern: str
    changes: tuple[relationship_rules.Change, ...] = ()


def _exchanges(messages: list[Message], user_chars: int, bot_chars: int, me: str) -> str:
    lines = []
    for m in messages:
        limit = user_chars if m.role == "user" else bot_chars
        who = "Person" if m.role == "user" else me
        text = m.text if len(m.text) <= limit else m.text[: limit - 1] + "…"
        lines.append(f"{who}: {text}")
    return "\n".join(lines)


REFLECTED_AT = "reflected_at"  # scope_state key: when the last reflection ran (a time stamp)
FEEDBACK_DAYS = 7 * 86400.0  # before a first reflection, the reactions of this long are read
FEEDBACK_LIMIT = 12  # the newest reactions read by one reflection
FEEDBACK_HEADING = ("How the person reacted to your messages since you last reflected (emoji reactions; feedback on "
                    "what you wrote, data):")


def feedback_lines(feedback: Sequence[Feedback], group: bool = False) -> str:
    """The person's reactions on the companion's messages, one line each, with the start of the message (in a
    group, who reacted)."""
    lines = []
    for f in feedback:
        text = " ".join((f.text or "").split())
        on = f'on your message "{text[:199] + "…" if len(text) > 200 else text}"' if f.text else "on a message of yours"
        lines.append(f"- {f.emoji} {on}" + (f" (by {f.sender})" if group and f.sender else ""))
    return "\n".join(lines)


def has_news(last_user_message: float | None, reflected_at: float | None) -> bool:
    """Whether the person wrote since the last reflection; the companion's own messages never count."""
    return last_user_message is not None and (reflected_at is None or last_user_message > reflected_at)


async def needs_reflection(store: MemoryStore, scope: Scope) -> bool:
    """True when the person wrote since the last reflection (check-ins, reminders and diary pushes are not news)."""
    last = await store.messages.last_user_message(scope)
    reflected_at = await store.state.get(scope, REFLECTED_AT)
    return has_news(last.created_at.timestamp() if last else None,
                    float(reflected_at) if reflected_at is not None else None)


async def reflect(
    store: MemoryStore, writer: Writer, scope: Scope, *, now: float | None = None, force: bool = False,
) -> Reflection | None:
    """Reflect on the last 12 exchanges; skipped (None) when nothing new was said, unless forced."""
    if not force and not await needs_reflection(store, scope):
        return None
    messages = await store.messages.recent(scope, 24)
    if not messages:
        return None
    companion = await store.companions.get(scope.companion_id)
    bond = await store.relationships.get(scope)
    wish = relationship_rules.wish_of(companion)
    reflected_at = await store.state.get(scope, REFLECTED_AT)
    since = float(reflected_at) if reflected_at is not None else (time.time() if now is None else now) - FEEDBACK_DAYS
    material = await _material(store, scope, messages, companion.core if companion else "(not written)",
                               relationship_rules.describe(bond, wish), since)
    data, proposal = _answer(await writer(INSTRUCTIONS, material, max_tokens=900))
    processing = new_processing("reflect")  # one processing: /undo takes back the whole reflection
    kept = []
    for text in data["thoughts"]:
        if isinstance(text, str) and text.strip():
            kept.append(await store.thoughts.add(scope, text.strip()[:600], origin="reflection", created_at=now,
                                                 processing=processing))
    concern = str(data.get("concern") or "").strip()[:400]
    if concern:
        await store.topics.add(scope, concern, origin="reflection", created_at=now, processing=processing)
    moment = time.time() if now is None else now
    changes = await update_relationship(store, scope, bond, proposal or relationship_rules.Proposal(), moment, wish,
                                        processing)
    await store.state.put(scope, REFLECTED_AT, moment, now=moment)  # it ran, even when it kept nothing
    return Reflection(tuple(kept), concern, tuple(changes))


async def _material(store: MemoryStore, scope: Scope, messages: list[Message], core: str, bond: str,
                    since: float) -> str:
    """What the model reflects on: who it is, the relationship, the profile, the last exchanges, the person's
    reactions on its messages since `since`, related memory."""
    user_lines = " ".join(m.text for m in messages if m.role == "user")[-1500:]
    notes = await store.search(scope, user_lines, ("note",), k=4) if user_lines else []
    earlier = await store.search(scope, user_lines, ("thought",), k=3) if user_lines else []
    latest = await store.thoughts.latest(scope, 3)
    profile = await store.profile.list(scope)
    feedback = await store.reactions.feedback(scope, since, FEEDBACK_LIMIT)
    return "\n\n".join([
        "Your core personality:\n" + core,
        "Your relationship with the person now:\n" + bond,
        "Profile:\n" + "\n".join(f"- {p.key}: {p.value}" for p in profile),
        "Last exchanges:\n" + _exchanges(messages, 200, 300, "Ich"),
        *([FEEDBACK_HEADING + "\n" + feedback_lines(feedback, is_group_scope(scope.user_id))] if feedback else []),
        "Relevant notes:\n" + "\n".join(f"- {h.text}" for h in notes),
        "Relevant earlier thoughts:\n" + "\n".join(f"- {h.text}" for h in earlier),
        "Your latest thoughts:\n" + "\n".join(f"- {th.text}" for th in latest),
    ])


def _answer(raw: str) -> tuple[dict[str, Any], relationship_rules.Proposal | None]:
    """The model's reflection as JSON and its proposed relationship change; BadModelOutput when it is neither."""
    try:
        data = json.loads(_unfence(raw))
    except ValueError as exc:
        log.debug("the reflection answer that is not JSON: %r", raw[:500])
        raise BadModelOutput(f"reflection answer is not JSON ({len(raw)} characters)") from exc
    if not isinstance(data, dict) or not isinstance(data.get("thoughts"), list):
        log.debug("the reflection answer that is not the JSON asked for: %r", raw[:500])
        raise BadModelOutput(f"reflection answer is not the JSON asked for ({len(raw)} characters)")
    try:
        proposal = relationship_rules.parse_proposal(data["relationship"]) if data.get("relationship") else None
    except ValueError as exc:
        raise BadModelOutput(f"reflection's relationship part is not the shape asked for: {exc}") from exc
    return data, proposal


async def update_relationship(
    store: MemoryStore, scope: Scope, state: Relationship, proposal: relationship_rules.Proposal, now: float, wish: str,
    processing: str,
) -> list[relationship_rules.Change]:
    """Apply a proposal through the pure rules and store the result with one audit entry per change."""
    new, changes = relationship_rules.apply(state, proposal, now, wish)
    logged = [_logged_change(c, state, now, proposal.why) for c in changes]
    for name in ("mood", "notes", "intentions", *EVOLVING_FIELDS):
        old, value = getattr(state, name), getattr(new, name)
        if old != value:
            logged.append(RelationshipChange({name: _plain(old)}, {name: _plain(value)}, proposal.why or "reflection"))
    if logged:
        await store.relationships.save(scope, new, logged, processing)
    for c in changes:
        if c.rules:
            log.info("relationship of scope %s: %s %+d asked, %+d applied (%s)", scope.id, c.value, c.asked,
                     c.applied, c.reason)
    return changes


def _logged_change(c: relationship_rules.Change, state: Relationship, now: float, why: str) -> RelationshipChange:
    """The audit form of one change; a stage entry also carries when the stage last changed, for /undo."""
    extra = {"asked": c.asked, "applied": c.applied, "rules": [list(r) for r in c.rules], "why": why}
    if c.value == "stage":
        moved_at = now if c.applied else state.stage_changed_at
        return RelationshipChange({"stage": c.before, "stage_changed_at": state.stage_changed_at},
                      {"stage": c.after, "stage_changed_at": moved_at}, c.reason, extra)
    return RelationshipChange({c.value: c.before}, {c.value: c.after}, c.reason, extra)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _unfence(text: str) -> str:
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    return body
