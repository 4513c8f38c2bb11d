"""/checkins warum: why the companion last did or did not write first, and when it could next (every time in the
person's zone, also one they chose after the decision); the learned hours."""
from __future__ import annotations

from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.commands.invocation import Call
from bot.exchange import Reply
from bot.texts import counted
from memory import Preferences, is_group_scope
from scheduler.checkin import LAST_DECISION, chances, moved_to
from scheduler.rhythm import describe, learned, spans, week_of_likely_hours

WHY_WORDS = ("", "warum", "why", "wieso")
# The planner's reasons (scheduler.planner.decide_checkin, scheduler.checkin) and the text that tells each.
RULE_TEXTS = {
    "disabled": "checkins_rule_disabled",
    "never wrote": "checkins_rule_never_wrote",
    "outside active hours": "checkins_rule_outside_hours",
    "conversation too recent": "checkins_rule_recent",
    "talking in incognito": "checkins_rule_incognito",
    "budget: one proactive message per 20 hours": "checkins_rule_budget",
    "previous proactive message unanswered": "checkins_rule_unanswered",
    "not a likely hour": "checkins_rule_unlikely_hour",
    "away": "checkins_rule_away",
    "nothing to say": "checkins_rule_waiting",
    "due topic": "checkins_rule_sent", "reflection concern": "checkins_rule_sent", "silence": "checkins_rule_sent",
    "welcome back": "checkins_rule_sent", "another worker writes in this slot": "checkins_rule_sent",
    "model declined": "checkins_rule_declined", "same text sent within 24 h": "checkins_rule_declined",
}


def when(call: Call, at: float, zone: ZoneInfo) -> str:
    """A moment as the person reads it: 'Mi 25.11. um 19:00'."""
    local = datetime.fromtimestamp(at, zone)
    return call.t("checkins_time", day=call.t("weekdays_short").split()[local.weekday()], date=local)


def explain(call: Call, d: dict[str, Any]) -> str:
    """The recorded decision in plain words: when it was made, the rule, the back-off, the next chance; every time
    in the record's zone (`moved_to` brings it to the person's)."""
    zone = ZoneInfo(d.get("zone") or "UTC")
    start, end = d.get("active_hours") or (9, 21)
    likely = " ".join(f"{a}–{b}" for a, b in spans(frozenset(d.get("likely_hours") or ())))
    key = RULE_TEXTS.get(d["reason"])
    back = date.fromisoformat(d["away_until"]) if d.get("away_until") else None
    silence = counted(call.lang, round(d.get("silence_hours", 0)), "hours")
    rule = call.t(key, hours=f"{start}–{end}", likely=likely, silence=silence,
                  back=call.t("checkins_day", date=back) if back else "") \
        if key else call.t("checkins_rule_other", reason=d["reason"])
    checked = "checkins_checked_old_zone" if d.get("moved_from") else "checkins_checked"
    lines = [call.t(checked, when=when(call, d["at"], zone)), rule]
    if d.get("factor", 1) > 1:
        lines.append(call.t("checkins_backoff", messages=counted(call.lang, d["streak"], "messages"),
                            hours=counted(call.lang, round(d["answer_within_hours"]), "hours"),
                            factor=d["factor"]))
    chance, held_by = chances(d)
    if d["send"]:
        lines.append(call.t("checkins_after_sent"))
    elif chance is not None:
        lines.append(call.t("checkins_next", when=when(call, chance, zone)))
    elif held_by == "previous proactive message unanswered":
        lines.append(call.t("checkins_next_after_answer"))
    else:
        lines.append(call.t("checkins_next_none"))
    return "\n".join(lines)


async def checkins(call: Call, args: str) -> Reply:
    """/checkins warum: the last check-in decision explained (in a group: that groups get none)."""
    if args.strip().lower() not in WHY_WORDS:
        return Reply((call.t("checkins_usage"),))
    if is_group_scope(call.scope.user_id):
        return Reply((call.t("checkins_group"),))
    decision = await call.store.state.get(call.scope, LAST_DECISION)
    if not isinstance(decision, dict):
        return Reply((call.t("checkins_none"),))
    zone = await call.engine.zone_for(call.scope)
    if decision.get("zone") != zone.key:  # the person changed their zone since: every time on their clock now
        decision = moved_to(decision, zone, await call.store.rhythm.histogram(call.scope, call.engine.clock()))
    return Reply((explain(call, decision),))


async def learned_hours_line(call: Call, prefs: Preferences) -> str:
    """/settings' line on the learned hours: per weekday, or that they are still being learned."""
    hist = await call.store.rhythm.histogram(call.scope, call.engine.clock())
    if not learned(hist):
        return call.t("settings_rhythm_none")
    return call.t("settings_rhythm", hours=describe(week_of_likely_hours(hist, prefs.hours()),
                                                    call.t("weekdays_short").split()))
