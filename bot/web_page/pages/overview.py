"""The overview: what mnemo knows in numbers, what it learned per week, and how the relationship went."""
from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from bot.commands.relationship_view import describe_change
from bot.texts import TEXTS
from bot.web_page.render import Viewer, render, when
from bot.web_page.site import Page
from memory import RELATIONSHIP_VALUES, Week, notes_per_week, overview_counts

CHART_HEIGHT = 100  # the SVG's drawing height for the tallest bar (its width is 20 per week)


@dataclass(frozen=True)
class Bar:
    """One week's bar in the chart, in SVG units."""

    x: int
    y: int
    height: int
    week: Week


def bars(weeks: list[Week]) -> list[Bar]:
    """The chart's bars: the busiest week reaches the top, an empty week stays a line."""
    top = max((w.notes for w in weeks), default=0) or 1
    shown = []
    for i, week in enumerate(weeks):
        height = max(1, round(week.notes * CHART_HEIGHT / top))
        shown.append(Bar(i * 20 + 2, CHART_HEIGHT - height + 12, height, week))
    return shown


async def show(request: Request, viewer: Viewer) -> Response:
    """GET /: the counts of the memory shown, the notes per week, the relationship's values and changes."""
    store, scope = viewer.call.store, viewer.scope
    counts = await overview_counts(store.db, scope)
    weeks = await notes_per_week(store.db, scope, viewer.call.engine.clock(), viewer.zone)
    state = await store.relationships.get(scope)
    changes = [describe_change(viewer.lang, e, viewer.zone, when(viewer.lang, viewer.zone, e.created_at.timestamp(),
                                                                  day_only=True)).lstrip("• ")
               for e in await store.relationships.history(scope, limit=20)]
    stage = viewer.t(f"stage_{state.stage}") if f"stage_{state.stage}" in TEXTS else state.stage
    return render(viewer, "overview.html", done=request.query_params.get("done"), counts=counts,
                  bars=bars(weeks), chart_width=len(weeks) * 20, chart_height=CHART_HEIGHT + 30,
                  values=[(name, state.value(name)) for name in RELATIONSHIP_VALUES], stage=stage, changes=changes)


PAGES = [Page("/", show)]
MENU = ("/", "page_overview")  # where the section is in the menu: its path, its text
