"""What mnemo learned about the user: /rules (paged, and /rules aus|an|löschen N) and /profile, and the rule, rules
and profile buttons."""
from __future__ import annotations

from bot.commands.invocation import Call, Pressed
from bot.conversation.questions import rule_buttons
from bot.exchange import Button, Reply
from bot.profile_keys import profile_key
from memory import LearnedRule, MemoryStore, NotFound, Scope

RULES_PAGE = 4  # rules per page: their buttons and the paging fit Matrix's ten numbered reactions
# The words after /rules that act on a rule by its number ('/rules aus 7'), in German and English.
RULE_WORDS = {"aus": "off", "off": "off", "an": "on", "ein": "on", "on": "on",
              "löschen": "del", "loeschen": "del", "delete": "del", "del": "del"}


def rule_words(args: str) -> tuple[str, int] | None:
    """'/rules aus 7' as ('off', 7), '/rules delete #9' as ('del', 9); None when the words are no such order."""
    words = args.lower().split()
    if len(words) != 2 or words[0] not in RULE_WORDS or not words[1].lstrip("#").isdigit():
        return None
    return RULE_WORDS[words[0]], int(words[1].lstrip("#"))


def changes_rules(words: list[str]) -> bool:
    """/rules aus|an|löschen N changes a rule; /rules shows them."""
    return bool(words) and words[0] in RULE_WORDS


async def rules(call: Call, args: str) -> Reply:
    """/rules: the first page of learned rules; /rules aus|an|löschen N (off|on|delete N): act on rule #N."""
    if not args:
        return await rules_page(call, 0)
    order = rule_words(args)
    if order is None:
        return Reply((call.t("rules_usage"),))
    action, number = order
    store, scope = call.store, call.scope
    try:
        rule = await store.rules.get(scope, await store.numbers.item(scope, "rule", number))
    except NotFound:
        return Reply((call.t("rule_unknown", id=number),))
    if not await change_rule(store, scope, rule, action, "/rules"):
        status = call.t({"active": "rule_active", "disabled": "rule_disabled"}.get(rule.status, "rule_pending"))
        return Reply((call.t("rule_unchanged", id=number, status=status),))
    done = {"off": "rule_turned_off", "on": "rule_turned_on", "del": "rule_deleted"}[action]
    return Reply((call.t(done, id=number),), closes=(f"rule:{number}",) if rule.status == "pending" else ())


async def rules_page(call: Call, offset: int) -> Reply:
    """One page of learned rules with their state, each with buttons to answer, switch or delete it, and paging."""
    found = await call.store.rules.list(call.scope)
    if not found:
        return Reply((call.t("rules_empty"),))
    offset = max(0, min(offset, (len(found) - 1) // RULES_PAGE * RULES_PAGE))
    shown = found[offset:offset + RULES_PAGE]
    status = {"active": call.t("rule_active"), "disabled": call.t("rule_disabled"), "pending": call.t("rule_pending")}
    numbers = await call.store.numbers.of_many(call.scope, "rule", [r.id for r in shown])
    head = call.t("rules_head", first=offset + 1, last=offset + len(shown), total=len(found))
    lines = [head] + [f"#{numbers[r.id]} {r.text} ({status.get(r.status, r.status)})" for r in shown]
    rows: list[tuple[Button, ...]] = []
    for r in shown:
        number = numbers[r.id]
        if r.status == "pending":
            rows.append(rule_buttons(number, call.lang))
            continue
        toggle = (Button(call.t("rule_off", id=number), f"rule:off:{number}") if r.status == "active"
                  else Button(call.t("rule_on", id=number), f"rule:on:{number}"))
        rows.append((toggle, Button(call.t("rule_delete", id=number), f"rule:del:{number}")))
    paging = [Button(call.t("back"), f"rules:{offset - RULES_PAGE}")] if offset > 0 else []
    if offset + RULES_PAGE < len(found):
        paging.append(Button(call.t("next"), f"rules:{offset + RULES_PAGE}"))
    if len(found) > RULES_PAGE:
        lines.append(call.t("rules_by_word"))
    return Reply(("\n".join(lines),), buttons=tuple(rows) + ((tuple(paging),) if paging else ()))


async def turn_rules_page(call: Call, fields: list[str]) -> Pressed | None:
    """'rules:<offset>': show that page of rules in the message."""
    if len(fields) != 1 or not fields[0].lstrip("-").isdigit():
        return None
    shown = await rules_page(call, int(fields[0]))
    return Pressed("", shown.bubbles[0], shown.buttons)


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
