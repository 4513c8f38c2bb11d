"""How a relationship may change: the model proposes, these pure rules decide (the clock is passed in).

Per run each value moves at most ±5 and stays within 0-100; the stage moves at most one step, up only
when the next stage's minimum values are reached, down only when a value fell 10 points below the
current stage's minimum, never within 7 days of the last stage change, and never beyond the stage
that the relationship wish chosen at the companion's creation allows.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from memory import EVOLVING_FIELDS, RELATIONSHIP_VALUES, Companion, Relationship

log = logging.getLogger(__name__)

STAGES = ("acquaintance", "friend", "close_friend", "confidant")
# The minimum values a relationship needs to be at a stage.
THRESHOLDS: dict[str, dict[str, int]] = {
    "acquaintance": {},
    "friend": {"familiarity": 30, "trust": 30, "affection": 25},
    "close_friend": {"familiarity": 60, "trust": 60, "affection": 55},
    "confidant": {"familiarity": 80, "trust": 85, "affection": 75},
}
# Relationship wish chosen at creation -> the highest stage it allows.
WISHES: dict[str, str] = {
    "acquaintance": "acquaintance",
    "friendship": "friend",
    "close_friendship": "close_friend",
    "confidant": "confidant",
}
DEFAULT_WISH = "friendship"
# How long a silence has to last before the companion may write first, by stage.
SILENCE: dict[str, timedelta] = {
    "acquaintance": timedelta(hours=48),
    "friend": timedelta(hours=36),
    "close_friend": timedelta(hours=24),
    "confidant": timedelta(hours=12),
}
# After how long a silence the person's next message is a return after a long absence, by stage (closer: sooner
# noticed): the companion's first reply greets them back and may pick up what was open.
ABSENCE: dict[str, timedelta] = {
    "acquaintance": timedelta(days=7),
    "friend": timedelta(days=5),
    "close_friend": timedelta(days=4),
    "confidant": timedelta(days=3),
}
STEP_CAP = 5
LOW, HIGH = 0, 100
HYSTERESIS = 10
FREEZE = timedelta(days=7)
MAX_INTENTIONS = 5
KEEP_EVOLVING = 8
TEXT_CHARS = 200
NOTES_CHARS = 600
MOOD_CHARS = 60

REASONS = {
    "cap": f"capped at ±{STEP_CAP}",
    "clamp": f"clamped to {LOW}-{HIGH}",
    "up": "minimum values for '{detail}' reached",
    "down": f"hysteresis: {{detail}} ({HYSTERESIS} below the threshold)",
    "freeze": "stage frozen until {detail}",
    "wish": "stage limited by the wish '{detail}'",
    "limit": "above the limit of the wish '{detail}'",
}


@dataclass(frozen=True)
class Proposal:
    """What the reflection would like to change; nothing here is applied without the rules below."""

    deltas: Mapping[str, int] = field(default_factory=dict)
    why: str = ""
    mood: str | None = None
    notes: str | None = None
    intentions: tuple[str, ...] | None = None
    opinions: tuple[str, ...] = ()
    rituals: tuple[str, ...] = ()
    in_jokes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Change:
    """One decided change: a value (or the stage), what was asked, what was applied, and why."""

    value: str
    asked: int
    applied: int
    before: int | str
    after: int | str
    rules: tuple[tuple[str, str], ...] = ()  # (code, detail), e.g. ("freeze", "1764576000": the unix time it ends)

    @property
    def reason(self) -> str:
        """The rules that shaped the change, in words (for the audit log)."""
        if not self.rules:
            return "as proposed"
        return "; ".join(REASONS[code].format(detail=_utc(detail) if code == "freeze" else detail)
                         for code, detail in self.rules)


def max_stage(wish: str) -> str:
    """The highest stage a relationship wish allows (unknown wishes allow the default's)."""
    return WISHES.get(wish, WISHES[DEFAULT_WISH])


def wish_of(companion: Companion | None) -> str:
    """The companion's relationship wish, or the default for a deployment without a companion record."""
    return companion.wish if companion is not None and companion.wish in WISHES else DEFAULT_WISH


def silence_for(stage: str) -> timedelta:
    """How long the user has to be silent before a check-in, by stage (closer: sooner)."""
    return SILENCE.get(stage, SILENCE[STAGES[0]])


def absence_for(stage: str) -> timedelta:
    """How long a silence counts as a long absence at this stage."""
    return ABSENCE.get(stage, ABSENCE[STAGES[0]])


def meets(state: Relationship, stage: str) -> bool:
    """True when every value reaches the stage's minimum."""
    return all(state.value(name) >= minimum for name, minimum in THRESHOLDS[stage].items())


def _value_change(name: str, current: int, asked: int) -> Change:
    rules: list[tuple[str, str]] = []
    step = max(-STEP_CAP, min(STEP_CAP, asked))
    if step != asked:
        rules.append(("cap", ""))
    target = current + step
    final = max(LOW, min(HIGH, target))
    if final != target:
        rules.append(("clamp", ""))
    return Change(name, asked, final - current, current, final, tuple(rules))


def _utc(moment: str) -> str:
    """A freeze's end for the log (operators read UTC); the person sees it in their own zone (relationship_view)."""
    return datetime.fromtimestamp(float(moment), UTC).strftime("%Y-%m-%d %H:%M UTC")


def decide_stage(state: Relationship, now: float, wish: str) -> Change | None:
    """At most one step, up or down, by the thresholds, the hysteresis, the freeze and the wish; None for no move."""
    index, limit = STAGES.index(state.stage), STAGES.index(max_stage(wish))
    stage = state.stage
    if index > limit:  # the wish is a hard limit: no freeze holds a stage above it
        return Change("stage", -1, -1, stage, STAGES[index - 1], (("limit", wish),))
    fallen = [f"{name} {state.value(name)} < {minimum - HYSTERESIS}"
              for name, minimum in THRESHOLDS[stage].items() if state.value(name) < minimum - HYSTERESIS]
    if index > 0 and fallen:
        direction, rule = -1, ("down", ", ".join(fallen))
    elif index + 1 < len(STAGES) and meets(state, STAGES[index + 1]):
        direction, rule = 1, ("up", STAGES[index + 1])
    else:
        return None
    if direction > 0 and index + 1 > limit:
        return Change("stage", 1, 0, stage, stage, (rule, ("wish", wish)))
    frozen_until = state.stage_changed_at + FREEZE.total_seconds()
    if now < frozen_until:
        return Change("stage", direction, 0, stage, stage, (rule, ("freeze", f"{frozen_until:.0f}")))
    return Change("stage", direction, direction, stage, STAGES[index + direction], (rule,))


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _grow(kept: Sequence[str], added: Sequence[str]) -> tuple[str, ...]:
    """Add new lines (no duplicates, ignoring case), keeping the newest few."""
    seen = {line.casefold() for line in kept}
    out = list(kept)
    for line in (_clip(a, TEXT_CHARS) for a in added):
        if line and line.casefold() not in seen:
            out.append(line)
            seen.add(line.casefold())
    return tuple(out[-KEEP_EVOLVING:])


def _with_texts(state: Relationship, p: Proposal) -> Relationship:
    """Mood, notes and intentions are replaced when given; opinions, rituals and in-jokes grow."""
    changes: dict[str, Any] = {k: _grow(getattr(state, k), getattr(p, k)) for k in EVOLVING_FIELDS}
    if p.mood is not None and p.mood.strip():
        changes["mood"] = _clip(p.mood, MOOD_CHARS)
    if p.notes is not None and p.notes.strip():
        changes["notes"] = _clip(p.notes, NOTES_CHARS)
    if p.intentions is not None:
        changes["intentions"] = tuple(_clip(i, TEXT_CHARS) for i in p.intentions if i.strip())[:MAX_INTENTIONS]
    return replace(state, **changes)


def apply(state: Relationship, proposal: Proposal, now: float, wish: str) -> tuple[Relationship, list[Change]]:
    """Apply a proposal within the caps; returns the new state and every value and stage change with its reason."""
    changes = [_value_change(name, state.value(name), int(proposal.deltas[name]))
               for name in RELATIONSHIP_VALUES if int(proposal.deltas.get(name, 0)) != 0]
    values: dict[str, Any] = {c.value: c.after for c in changes}
    moved = replace(state, **values)
    stage = decide_stage(moved, now, wish)
    if stage is not None:
        changes.append(stage)
        if stage.applied:
            moved = replace(moved, stage=str(stage.after), stage_changed_at=now)
    return replace(_with_texts(moved, proposal), updated_at=now), changes


def _strings(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"relationship.{key} must be a list of strings")
    return tuple(v for v in value if v.strip())


def parse_proposal(data: object) -> Proposal:
    """Read the reflection's `relationship` object; ValueError when it is not the shape asked for."""
    if not isinstance(data, dict):
        raise ValueError("relationship must be an object")
    raw = data.get("changes") or {}
    if not isinstance(raw, dict):
        raise ValueError("relationship.changes must be an object")
    deltas: dict[str, int] = {}
    for name, delta in raw.items():
        if isinstance(delta, bool) or not isinstance(delta, (int, float)):
            raise ValueError(f"relationship.changes holds a value that is not a number ({type(delta).__name__})")
        if name not in RELATIONSHIP_VALUES:
            log.warning("reflection proposed a change to an unknown value (%d characters); ignored", len(name))
            log.debug("the unknown value: %r", name)
            continue
        deltas[name] = round(delta)
    for key in ("why", "mood", "notes"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise ValueError(f"relationship.{key} must be a string")
    return Proposal(
        deltas=deltas, why=str(data.get("why") or ""), mood=data.get("mood"), notes=data.get("notes"),
        intentions=_strings(data, "intentions") if data.get("intentions") is not None else None,
        opinions=_strings(data, "opinions"), rituals=_strings(data, "rituals"), in_jokes=_strings(data, "in_jokes"),
    )


def describe(state: Relationship, wish: str) -> str:
    """The relationship in a few lines of English, for the prompt and the reflection."""
    values = ", ".join(f"{name} {state.value(name)}" for name in RELATIONSHIP_VALUES)
    stage, limit = state.stage.replace("_", " "), max_stage(wish).replace("_", " ")
    lines = [f"Stage: {stage} (at most: {limit}). Values 0-100: {values}."]
    if state.mood:
        lines.append(f"Your mood towards the person: {state.mood}.")
    if state.notes:
        lines.append(f"Notes on the relationship: {state.notes}")
    if state.intentions:
        lines.append("Your inner intentions: " + "; ".join(state.intentions))
    return "\n".join(lines)
