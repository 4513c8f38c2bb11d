"""What /relationship shows: the stage, the four values, mood, intentions and the latest changes."""
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo

from bot.quoting import clip
from bot.texts import TEXTS, t
from memory import LIST_FIELDS, RELATIONSHIP_VALUES, AuditEntry, Relationship
from scheduler.relationship_rules import max_stage

TEXT_FIELDS = ("mood", "notes", *LIST_FIELDS)


def _stage(lang: str, stage: str) -> str:
    return t(lang, f"stage_{stage}") if f"stage_{stage}" in TEXTS else stage


def frozen_until(detail: str, zone: tzinfo) -> str:
    """When a stage freeze ends, in the person's zone; an entry from before carries its text, shown as it is."""
    try:
        moment = float(detail)
    except ValueError:
        return detail
    return datetime.fromtimestamp(moment, zone).strftime("%d.%m.%Y %H:%M")


def _why(lang: str, entry: AuditEntry, zone: tzinfo, *, asked: bool) -> str:
    """The rules behind a change (and what the reflection asked for), in the user's language and zone."""
    after = entry.after or {}
    rules = after.get("rules") or []
    parts = [t(lang, "rel_asked", asked=int(after["asked"]))] if asked and rules and after.get("asked") else []
    for code, detail in rules:
        shown = (_stage(lang, max_stage(detail)) if code in ("wish", "limit")
                 else frozen_until(detail, zone) if code == "freeze" else detail)
        parts.append(t(lang, f"rel_rule_{code}", detail=shown))
    return f" ({'; '.join(parts)})" if parts else ""


def describe_change(lang: str, entry: AuditEntry, zone: tzinfo, when: str | None = None) -> str:
    """One line for one audited relationship change, its times in `zone` (the person's); `when` its day as the
    caller shows days (the web page), else the chat's '03.12.'."""
    before, after = entry.before or {}, entry.after or {}
    when = entry.created_at.astimezone(zone).strftime("%d.%m.") if when is None else when
    if "stage" in before:
        move = _stage(lang, str(before["stage"]))
        if after.get("stage") != before["stage"]:
            move += f" → {_stage(lang, str(after.get('stage')))}"
        return f"• {when} {t(lang, 'value_stage')}: {move}{_why(lang, entry, zone, asked=False)}"
    for name in RELATIONSHIP_VALUES:
        if name in before:
            label = t(lang, f"value_{name}")
            return f"• {when} {label} {before[name]} → {after.get(name)}{_why(lang, entry, zone, asked=True)}"
    for name in TEXT_FIELDS:
        if name in after:
            if name == "mood":
                return f"• {when} {t(lang, 'relationship_mood', mood=clip(str(after[name]), 60))}"
            return f"• {when} {t(lang, 'relationship_updated', field=t(lang, f'field_{name}'))}"
    return f"• {when} {entry.reason}"


def show(lang: str, state: Relationship, wish: str, history: Sequence[AuditEntry], zone: tzinfo) -> str:
    """The whole /relationship answer."""
    lines = [t(lang, "relationship_head", stage=_stage(lang, state.stage), limit=_stage(lang, max_stage(wish))),
             " · ".join(f"{t(lang, f'value_{name}')} {state.value(name)}" for name in RELATIONSHIP_VALUES)]
    if state.mood:
        lines.append(t(lang, "relationship_mood", mood=state.mood))
    if state.intentions:
        lines += [t(lang, "relationship_intentions")] + [f"• {clip(i, 200)}" for i in state.intentions]
    if history:
        lines += [t(lang, "relationship_changes")] + [describe_change(lang, e, zone) for e in history]
    else:
        lines.append(t(lang, "relationship_no_changes"))
    return "\n".join(lines)
