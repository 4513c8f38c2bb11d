"""Rendering the web page: Jinja templates (every value escaped), the texts in the viewer's language, times in
the zone of the memory shown, and the small pages that say what went wrong."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from bot.commands.invocation import Call
from bot.texts import TEXTS, counted, t
from bot.web_page.dates import shown_day, shown_moment, shown_yearly
from memory import NumberedKind, Scope, WebSession

ENV = Environment(loader=PackageLoader("bot.web_page", "templates"), autoescape=select_autoescape(default=True),
                  undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)

@dataclass(frozen=True)
class Viewer:
    """Who looks at which memory: the session, the scope shown, the language, the URL base of its pages."""

    session: WebSession
    scope: Scope  # the memory shown: the session's own, or a group's (admins only)
    lang: str
    base: str  # '/web' or '/web/g/<id>'
    call: Call  # for changes made exactly as the chat's commands make them
    groups: list[Scope]  # the groups this viewer may switch to
    zone: ZoneInfo  # the zone of the memory shown (the person's or group's setting, else the deployment's)
    companion: str  # the companion's name
    path: str = "/web/"  # the page being looked at (where the language switch comes back to)
    nav: tuple[tuple[str, str], ...] = ()  # the menu: (path below the base, text key) per section
    names: dict[int, str] = field(default_factory=dict)  # the groups' names by scope id, as their messenger gave them

    def t(self, key: str, **values: object) -> str:
        """The text `key` in the viewer's language."""
        return t(self.lang, key, **values)

    def today(self) -> dt.date:
        """Today in the zone of the memory shown (what a typed '24.12.' without a year counts from)."""
        return dt.datetime.fromtimestamp(self.call.engine.clock(), self.zone).date()


async def numbered(request: Request, viewer: Viewer, kind: NumberedKind) -> int:
    """The id of the item whose number the URL carries: the person's own number, as the chat shows it.

    The page never puts the ids all users share into a URL or a form (they would let anyone count the others'
    items from the gaps); a number of another scope, or one never given, raises NotFound (404).
    """
    return await viewer.call.store.numbers.item(viewer.scope, kind, request.path_params["number"])


def when(lang: str, zone: ZoneInfo, ts: float | None, day_only: bool = False) -> str:
    """A timestamp as the viewer reads it, in `zone` ('' for none): the page's one way (bot/web_page/dates.py)."""
    return shown_moment(ts, zone, lang, day_only)


def render(viewer: Viewer, template: str, status: int = 200, done: str | None = None, **values: Any) -> Response:
    """A page of the viewer's memory (`done`: a text key saying what the last change did, shown once on top)."""
    notice = viewer.t(done) if done and done.startswith("page_") and done in TEXTS else None
    body = ENV.get_template(template).render(
        v=viewer, t=viewer.t, base=viewer.base, csrf=viewer.session.csrf, lang=viewer.lang, nav=viewer.nav,
        notice=notice,
        when=lambda ts, day_only=False: when(viewer.lang, viewer.zone, ts, day_only),
        day=lambda d: shown_day(d, viewer.lang), yearly=lambda d: shown_yearly(d.month, d.day, None, viewer.lang),
        counted=lambda n, noun: counted(viewer.lang, n, noun), **values,
    )
    return HTMLResponse(body, status_code=status)


def problem_page(lang: str, key: str, status: int, back: str | None = "/web/", back_label: str = "",
                 **values: object) -> Response:
    """A short page saying what went wrong (not logged in, not found, an outdated form, bad input), with a way
    back: a link to `back` (the page's start unless said; none where there is nothing to go back to)."""
    body = ENV.get_template("problem.html").render(t=lambda k, **kw: t(lang, k, **kw), lang=lang, back=back,
                                                   back_label=back_label or t(lang, "page_way_back"),
                                                   message=t(lang, key, **values))
    return HTMLResponse(body, status_code=status)


def bad_input(viewer: Viewer, what: str) -> Response:
    """400: the input was not understood (and nothing changed); the way back leads to the section it came from."""
    section = viewer.path.removeprefix(viewer.base).strip("/").split("/", 1)[0]
    label = next((viewer.t(key) for path, key in viewer.nav if path.strip("/") == section), "")
    return problem_page(viewer.lang, "page_bad_input", 400, back=f"{viewer.base}/{section}", back_label=label,
                        what=what)


def back_to(viewer: Viewer, path: str, done: str = "page_saved") -> Response:
    """After a change: to the page `path` (below the viewer's base), saying what was done."""
    sep = "&" if "?" in path else "?"
    return RedirectResponse(f"{viewer.base}{path}{sep}done={done}", status_code=303)
