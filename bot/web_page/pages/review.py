"""The review queue of imported histories, as /review shows it in the chat: the next few candidates of one
conversation, duplicates marked and contradictions side by side, ✓/✗ each and "alle ✓" for the group; every
decision goes through the chat's own approve and reject (bot/commands/review.py)."""
from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from bot.commands.review import PAGE, Beside, beside, decide, group_heading, heading, numbered_candidate, span
from bot.history.shown import candidate_text
from bot.web_page.render import Viewer, back_to, bad_input, render
from bot.web_page.site import Page
from memory import ImportCandidate as Candidate

ACTIONS = {"yes": True, "no": False}  # the form's action: keep or leave out


@dataclass(frozen=True)
class Shown:
    """One candidate on the page: its text in the viewer's language and what it is beside the memory."""

    candidate: Candidate
    number: int  # the person's own number of the candidate, as the chat shows it (never the shared id)
    text: str
    beside: Beside


async def show(request: Request, viewer: Viewer) -> Response:
    """GET /review: the next group of waiting candidates; an empty queue says so."""
    store, scope = viewer.call.store, viewer.scope
    group = await store.imports.next_group(scope, PAGE)
    numbers = await store.numbers.of_many(scope, "candidate", [c.id for c in group])
    shown = [Shown(c, numbers[c.id], candidate_text(c, viewer.lang), await beside(store, scope, c, viewer.lang))
             for c in group]
    waiting = await store.imports.pending_count(scope)
    return render(viewer, "review.html", done=request.query_params.get("done"), shown=shown,
                  heading=heading(waiting, viewer.lang) if group else "",
                  group=group_heading(group[0], viewer.lang) if group else "")


def _number(value: object) -> int | None:
    """A candidate's number from the form, or None when it is none (or too long for SQLite's integers)."""
    text = str(value or "")
    return int(text) if text.isascii() and text.isdigit() and len(text) < 19 else None


async def decide_one(request: Request, viewer: Viewer) -> Response:
    """POST /review/one: `number` and action yes/no decide one candidate."""
    form = await request.form()
    action, number = str(form.get("action") or ""), _number(form.get("number"))
    if action not in ACTIONS or number is None:
        return bad_input(viewer, f"{action} {form.get('number') or ''}".strip() or "–")
    chosen = [await numbered_candidate(viewer.call.store, viewer.scope, number)]
    return await _decided(viewer, chosen, ACTIONS[action])


async def decide_group(request: Request, viewer: Viewer) -> Response:
    """POST /review/group: `first`, `last` (numbers) and action yes/no decide the group as it was shown ("alle ✓")."""
    form = await request.form()
    action, first_no, last_no = str(form.get("action") or ""), _number(form.get("first")), _number(form.get("last"))
    if action not in ACTIONS or first_no is None or last_no is None:
        return bad_input(viewer, f"{action} {form.get('first') or ''} {form.get('last') or ''}".strip() or "–")
    store, scope = viewer.call.store, viewer.scope
    first, last = await numbered_candidate(store, scope, first_no), await numbered_candidate(store, scope, last_no)
    return await _decided(viewer, await span(store, scope, first, last), ACTIONS[action])



async def _decided(viewer: Viewer, chosen: list[Candidate], keep: bool) -> Response:
    """Decide as the chat does; decided meanwhile (in the chat, another tab) changes nothing and says so."""
    if not await decide(viewer.call.store, viewer.scope, chosen, keep, viewer.call.engine.clock()):
        return back_to(viewer, "/review", "page_review_stale")
    return back_to(viewer, "/review", "page_review_kept" if keep else "page_review_dropped")


PAGES = [Page("/review", show), Page("/review/one", decide_one, ("POST",)),
         Page("/review/group", decide_group, ("POST",))]
MENU = ("/review", "page_review")
