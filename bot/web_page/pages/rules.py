"""Learned rules: each with its state; switch on or off, delete, and answer one the chat still asks about."""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from bot.commands.learned import RULE_ACTIONS, change_rule
from bot.web_page.render import Viewer, back_to, bad_input, numbered, render
from bot.web_page.site import Page

# The text saying what an action did, shown once after it.
DONE = {"yes": "page_rule_applied", "no": "page_rule_dropped", "on": "page_rule_on", "off": "page_rule_off",
        "del": "page_rule_deleted"}


async def show(request: Request, viewer: Viewer) -> Response:
    """GET /rules: the rules (not the rejected ones) with their state; a pending one waits for an answer."""
    store, scope = viewer.call.store, viewer.scope
    rules = await store.rules.list(scope)
    numbers = await store.numbers.of_many(scope, "rule", [r.id for r in rules])
    return render(viewer, "rules.html", done=request.query_params.get("done"), rules=rules, numbers=numbers)


async def change(request: Request, viewer: Viewer) -> Response:
    """POST /rules/<number>: action yes/no (a pending rule), on/off, or del; one decided meanwhile stays as it is."""
    store, scope = viewer.call.store, viewer.scope
    action = str((await request.form()).get("action") or "")
    rule = await store.rules.get(scope, await numbered(request, viewer, "rule"))
    if action not in RULE_ACTIONS:
        return bad_input(viewer, viewer.t("page_rule_action_unknown"))
    if not await change_rule(store, scope, rule, action, "web page"):
        return back_to(viewer, "/rules", "page_rule_stale")
    return back_to(viewer, "/rules", DONE[action])


PAGES = [Page("/rules", show), Page("/rules/{number:int}", change, ("POST",))]
MENU = ("/rules", "page_rules")
