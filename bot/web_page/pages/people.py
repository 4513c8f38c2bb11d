"""People: who mnemo knows from the person's life and one person's facts; rename, merge, forget as the chat does."""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from bot.commands.people_views import display_name, forget
from bot.exchange import item_id
from bot.web_page.dates import shown_yearly_date
from bot.web_page.render import Viewer, back_to, bad_input, numbered, render
from bot.web_page.site import Page
from memory import Person, YearlyDate

REASON = "web page"


def yearly_date(date: YearlyDate, lang: str) -> str:
    """A person's yearly date as the page shows days: '🎂 Geburtstag 03.03.1986'."""
    return shown_yearly_date(date.kind, date.month, date.day, date.year, lang)


async def show_all(request: Request, viewer: Viewer) -> Response:
    """GET /people: a card per person with names, relation, yearly dates and how many facts are known."""
    store, scope = viewer.call.store, viewer.scope
    people = await store.people.all(scope)
    numbers = await store.numbers.of_many(scope, "person", [p.id for p in people])
    dates = await store.person_dates.all(scope)
    cards = [{"person": p, "number": numbers[p.id], "name": display_name(p),
              "dates": [yearly_date(d.date, viewer.lang) for d in dates if d.person_id == p.id],
              "facts": len(await store.people.facts(scope, p.id, 1000))} for p in people]
    return render(viewer, "people.html", done=request.query_params.get("done"), cards=cards)


async def show_one(request: Request, viewer: Viewer) -> Response:
    """GET /people/<number>: one person with their relations, dates and facts, and the forms to change them."""
    store, scope = viewer.call.store, viewer.scope
    person = await person_of(request, viewer)
    others = [p for p in await store.people.all(scope) if p.id != person.id]
    numbers = await store.numbers.of_many(scope, "person", [p.id for p in others])
    history = [(relation, end) for relation, _start, end in await store.people.history(scope, person.id)
               if end is not None]
    return render(viewer, "person.html", done=request.query_params.get("done"), person=person,
                  name=display_name(person), number=request.path_params["number"],
                  history=history, links=await store.people.links(scope, person.id),
                  dates=[yearly_date(d.date, viewer.lang) for d in await store.person_dates.of(scope, person.id)],
                  facts=await store.people.facts(scope, person.id, 1000),
                  others=[(numbers[p.id], display_name(p)) for p in others])


async def person_of(request: Request, viewer: Viewer) -> Person:
    """The person whose number the URL carries, of the scope shown (NotFound: 404)."""
    return await viewer.call.store.people.get(viewer.scope, await numbered(request, viewer, "person"))


async def rename(request: Request, viewer: Viewer) -> Response:
    """POST /people/<number>/rename: a new name; the old one stays as an alias."""
    person = await person_of(request, viewer)
    name = str((await request.form()).get("name") or "").strip()
    if not name:
        return bad_input(viewer, viewer.t("page_person_name_missing"))
    await viewer.call.store.people.rename(viewer.scope, person.id, name, reason=REASON)
    return back_to(viewer, f"/people/{request.path_params['number']}", "page_person_renamed")


async def merge(request: Request, viewer: Viewer) -> Response:
    """POST /people/<number>/merge: the other person picked (by number) becomes one with this one (this one is kept)."""
    person = await person_of(request, viewer)
    other = item_id(str((await request.form()).get("other") or ""))
    if other is None or other == request.path_params["number"]:
        return bad_input(viewer, viewer.t("page_person_other_missing"))
    store = viewer.call.store
    await store.people.merge(viewer.scope, person.id, await store.numbers.item(viewer.scope, "person", other),
                             reason=REASON)
    return back_to(viewer, f"/people/{request.path_params['number']}", "page_person_merged")


async def forget_person(request: Request, viewer: Viewer) -> Response:
    """POST /people/<number>/forget: forget them for good, and rewrite what was written about them (as the chat)."""
    person = await person_of(request, viewer)
    call = viewer.call
    await forget(call.store, viewer.scope, person, viewer.lang, call.engine.background, reason=REASON)
    return back_to(viewer, "/people", "page_person_forgotten")


PAGES = [Page("/people", show_all), Page("/people/{number:int}", show_one),  # the person's number, as in the chat
         Page("/people/{number:int}/rename", rename, ("POST",)),
         Page("/people/{number:int}/merge", merge, ("POST",)),
         Page("/people/{number:int}/forget", forget_person, ("POST",))]
MENU = ("/people", "page_people")

