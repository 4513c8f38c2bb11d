"""What mnemo learned about the user: /rules and /profile, and the rule and profile buttons."""
from __future__ import annotations

from bot.commands.invocation import Call, Pressed
from bot.conversation.questions import rule_buttons
from bot.exchange import Button, Reply
from bot.profile_keys import profile_key
from memory import LearnedRule, MemoryStore, Scope


async def rules(call: Call, args: str) -> Reply:
    """/rules: the learned rules with their state, each with buttons to answer, switch or delete it."""
    found = await call.store.rules.list(call.scope)
    if not found:
        return Reply((call.t("rules_empty"),))
    status = {"active": call.t("rule_active"), "disabled": call.t("rule_disabled"), "pending": call.t("rule_pending")}
    numbers = await call.store.numbers.of_many(call.scope, "rule", [r.id for r in found])
    lines = [call.t("rules_head")] + [f"#{numbers[r.id]} {r.text} ({status.get(r.status, r.status)})" for r in found]
    rows = []
    for r in found:
        number = numbers[r.id]
        if r.status == "pending":
            rows.append(rule_buttons(number, call.lang))
            continue
        toggle = (Button(call.t("rule_off", id=number), f"rule:off:{number}") if r.status == "active"
                  else Button(call.t("rule_on", id=number), f"rule:on:{number}"))
        rows.append((toggle, Button(call.t("rule_delete", id=number), f"rule:del:{number}")))
    return Reply(("\n".join(lines),), buttons=tuple(rows))


# What each action does to a rule in the status it is in: (action, status now) -> status after.
RULE_MOVES = {("yes", "pending"): "active", ("no", "pending"): "rejected",
              ("off", "active"): "disabled", ("on", "disabled"): "active"}
RULE_ACTIONS = ("yes", "no", "off", "on", "del")


async def change_rule(store: MemoryStore, scope: Scope, rule: LearnedRule, action: str, reason: str) -> bool:
    """Answer, switch or delete a rule as its status allows (the chat's buttons and the web page both do it so);
    False when the action does not fit its status any more (decided meanwhile): nothing changed.

    A pending rule is the chat's open yes/no question: once decided here, its buttons answer "no longer valid"
    and the question is dropped at the next message (`OpenQuestions.current`), so it is never decided twice.
    """
    if action == "del":
        await store.rules.delete(scope, rule.id)
        return True
    status = RULE_MOVES.get((action, rule.status))
    if status is None:
        return False
    await store.rules.decide(scope, rule.id, status, reason=reason)
    return True


async def press_rule(call: Call, fields: list[str]) -> Pressed | None:
    """'rule:yes|no|off|on|del:<number>': answer a proposed rule, switch it off or on, or delete it."""
    if len(fields) != 2 or not fields[1].isdigit() or fields[0] not in RULE_ACTIONS:
        return None
    action, number = fields[0], int(fields[1])
    store, scope = call.store, call.scope
    rule = await store.rules.get(scope, await store.numbers.item(scope, "rule", number))
    question = (f"rule:{number}",)
    reason = "button" if action in ("yes", "no") else "/rules"
    if not await change_rule(store, scope, rule, action, reason):
        return Pressed(call.t("button_stale"), closes=question if action in ("yes", "no") else (), stale=True)
    if action == "yes":
        text = call.t("rule_saved", rule=rule.text)
        return Pressed(text, text, closes=question)
    if action == "no":
        return Pressed(call.t("rule_dropped"), call.t("rule_dropped"), closes=question)
    if action == "del":
        return Pressed(call.t("rule_deleted", id=number), closes=question if rule.status == "pending" else ())
    return Pressed(call.t("rule_turned_off" if action == "off" else "rule_turned_on", id=number))


async def profile(call: Call, args: str) -> Reply:
    """/profile: the facts about the user, by their keys in the user's language."""
    entries = await call.store.profile.list(call.scope)
    if not entries:
        return Reply((call.t("profile_empty"),))
    lines = [f"{profile_key(e.key, call.lang)}: {e.value}" for e in entries]
    return Reply(("\n".join([call.t("profile_head")] + lines),))


async def press_profile(call: Call, fields: list[str]) -> Pressed | None:
    """'profile:yes|no:<number>': keep or drop a proposed profile fact."""
    if len(fields) != 2 or fields[0] not in ("yes", "no") or not fields[1].isdigit():
        return None
    pending = await call.store.numbers.item(call.scope, "profile", int(fields[1]))
    fact = await call.store.profile.decide(call.scope, pending, fields[0] == "yes")
    done = (call.t("profile_saved", fact=f"{profile_key(fact.key, call.lang)}: {fact.value}") if fields[0] == "yes"
            else call.t("rule_dropped"))
    return Pressed(done, done, closes=(f"profile:{fields[1]}",))
