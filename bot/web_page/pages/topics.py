"""Open topics: what the companion means to ask about later, with when; mark one done or drop it (undoable)."""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from bot.web_page.render import Viewer, back_to, bad_input, numbered, render
from bot.web_page.site import Page
from memory import NotFound

# What a form's action sets a topic to, and the text saying so.
ACTIONS = {"done": ("done", "page_topic_done"), "drop": ("dropped", "page_topic_dropped")}


async def show(request: Request, viewer: Viewer) -> Response:
    """GET /topics: the open topics, soonest due first."""
    store, scope = viewer.call.store, viewer.scope
    topics = await store.topics.list(scope, "open")
    numbers = await store.numbers.of_many(scope, "topic", [topic.id for topic in topics])
    return render(viewer, "topics.html", done=request.query_params.get("done"), topics=topics, numbers=numbers)


async def change(request: Request, viewer: Viewer) -> Response:
    """POST /topics/<number>: action done or drop, for an open topic of the scope shown (else 404)."""
    store, scope = viewer.call.store, viewer.scope
    topic_id = await numbered(request, viewer, "topic")
    if topic_id not in {topic.id for topic in await store.topics.list(scope, "open")}:
        raise NotFound(f"open topic {topic_id}")
    action = ACTIONS.get(str((await request.form()).get("action") or ""))
    if action is None:
        return bad_input(viewer, viewer.t("page_topic_action_unknown"))
    status, done = action
    await store.topics.remove(scope, topic_id, status=status, reason="web page")
    return back_to(viewer, "/topics", done)


PAGES = [Page("/topics", show), Page("/topics/{number:int}", change, ("POST",))]
MENU = ("/topics", "page_topics")
