"""What mnemo learned about the user: /rules and /profile, and the rule and profile buttons."""
from __future__ import annotations

from bot.commands.call import Call, Pressed
from bot.conversation.questions import rule_buttons
from bot.conversation.replies import Button, Reply
from bot.profile_keys import profile_key


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


async def press_rule(call: Call, fields: list[str]) -> Pressed | None:
    """'rule:yes|no|off|on|del:<number>': answer a proposed rule, switch it off or on, or delete it."""
    if len(fields) != 2 or not fields[1].isdigit():
        return None
    action, number = fields[0], int(fields[1])
    store, scope = call.store, call.scope
    rule_id = await store.numbers.item(scope, "rule", number)
    rule = await store.rules.get(scope, rule_id)
    question = (f"rule:{number}",)
    if action in ("yes", "no"):
        if rule.status != "pending":
            return Pressed(call.t("button_stale"), closes=question, stale=True)
        if action == "yes":
            await store.rules.decide(scope, rule_id, "active", reason="button")
            text = call.t("rule_saved", rule=rule.text)
        else:
            await store.rules.decide(scope, rule_id, "rejected", reason="button")
            text = call.t("rule_dropped")
        return Pressed(text, text, closes=question)
    if action == "off" and rule.status == "active":
        await store.rules.decide(scope, rule_id, "disabled", reason="/rules")
        return Pressed(call.t("rule_turned_off", id=number))
    if action == "on" and rule.status == "disabled":
        await store.rules.decide(scope, rule_id, "active", reason="/rules")
        return Pressed(call.t("rule_turned_on", id=number))
    if action == "del":
        await store.rules.delete(scope, rule_id)
        return Pressed(call.t("rule_deleted", id=number), closes=question if rule.status == "pending" else ())
    return Pressed(call.t("button_stale"), stale=True)


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
