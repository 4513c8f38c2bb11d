"""The people section of the web page: cards, one person's facts, rename, merge and forget (as the chat does it),
and every refusal: another scope's person, a form without its token, bad input."""
from __future__ import annotations

import pytest

from bot.exchange import Incoming
from memory.ledgers import audit
from memory.models import Person, Scope
from memory.records.kinship import PersonDraft
from memory.records.person_dates import YearlyDate
from memory.store import MemoryStore
from tests.web_kit import WebPage

ADMIN = "tg:1"


@pytest.fixture
def web_admins() -> frozenset[str]:
    """mnemo's admins on this module's web page."""
    return frozenset({ADMIN})


async def person(store: MemoryStore, scope: Scope, name: str, aliases: tuple[str, ...] = (), relation: str = "",
                 facts: tuple[str, ...] = ()) -> Person:
    processing = audit.new_processing("test")
    found = await store.people.observe(scope, PersonDraft(name, aliases, relation), processing=processing)
    notes = [(await store.notes.add(scope, fact)).note.id for fact in facts]
    await store.people.link_notes(scope, found.id, notes, processing=processing)
    return found


async def miriam(web: WebPage, user: str = "tg:42") -> tuple[Scope, Person]:
    await web.engine.handle(Incoming(user, "Hallo"))
    scope = await web.engine.scope_for(user)
    store = web.engine.store
    found = await person(store, scope, "Miriam", ("Miri",), "Schwester", ("Miriam arbeitet im Krankenhaus.",))
    await store.person_dates.note(scope, found.id, YearlyDate("birthday", 3, 3, 1986), processing="test")
    return scope, found


async def test_the_cards_show_names_relation_dates_and_how_much_is_known(web: WebPage) -> None:
    scope, found = await miriam(web)
    number = await web.number(scope, "person", found.id)
    browser = await web.signed_in("tg:42")
    page = await browser.page("/web/people")
    assert page.status_code == 200
    for shown in ("Miriam", "Schwester", "Miri", "🎂 Geburtstag 03.03.1986", "Bekannte Fakten: 1",
                  f'href="/web/people/{number}"'):
        assert shown in page.text
    await web.engine.store.people.relate(scope, found.id, None, "Mitbewohnerin", processing="test")
    detail = await browser.page(f"/web/people/{number}")
    assert detail.status_code == 200 and "Miriam arbeitet im Krankenhaus." in detail.text
    assert "Früher: Schwester (bis " in detail.text
    assert 'data-confirm="Miriam und 1 Fakt für immer vergessen?' in detail.text
    menu = await browser.page("/web/")
    assert 'href="/web/people"' in menu.text and 'href="/web/rules"' in menu.text


async def test_what_a_person_wrote_is_shown_as_text(web: WebPage) -> None:
    await web.engine.handle(Incoming("tg:42", "Hallo"))
    scope = await web.engine.scope_for("tg:42")
    found = await person(web.engine.store, scope, "<script>alert(1)</script>", facts=("<b>fett</b>",))
    browser = await web.signed_in("tg:42")
    number = await web.number(scope, "person", found.id)
    for path in ("/web/people", f"/web/people/{number}"):
        page = await browser.page(path)
        assert "<script>alert(1)</script>" not in page.text and "&lt;script&gt;" in page.text
    assert "<b>fett</b>" not in (await browser.page(f"/web/people/{number}")).text


async def test_rename_keeps_the_old_name_and_undo_takes_it_back(web: WebPage) -> None:
    scope, found = await miriam(web)
    store = web.engine.store
    browser = await web.signed_in("tg:42")
    number = await web.number(scope, "person", found.id)
    await browser.page(f"/web/people/{number}")
    done = await browser.post(f"/web/people/{number}/rename", {"name": "Mia"})
    assert done.status_code == 303 and done.headers["location"] == f"/web/people/{number}?done=page_person_renamed"
    renamed = await store.people.get(scope, found.id)
    assert renamed.name == "Mia" and "Miriam" in renamed.aliases
    assert "Umbenannt." in (await browser.page(done.headers["location"])).text
    reply = await web.commands.run("tg:42", "/undo")
    assert reply is not None
    assert (await store.people.get(scope, found.id)).name == "Miriam"


async def test_merge_makes_two_one(web: WebPage) -> None:
    scope, found = await miriam(web)
    store = web.engine.store
    other = await person(store, scope, "Mimi", facts=("Mimi spielt Cello.",))
    browser = await web.signed_in("tg:42")
    number, other_number = await web.number(scope, "person", found.id), await web.number(scope, "person", other.id)
    page = await browser.page(f"/web/people/{number}")
    assert f'<option value="{other_number}">Mimi</option>' in page.text
    done = await browser.post(f"/web/people/{number}/merge", {"other": str(other_number)})
    assert done.status_code == 303
    assert [p.id for p in await store.people.all(scope)] == [found.id]
    kept = await store.people.get(scope, found.id)
    assert "Mimi" in kept.aliases
    assert {n.text for n in await store.people.facts(scope, found.id)} == {"Miriam arbeitet im Krankenhaus.",
                                                                            "Mimi spielt Cello."}
    await web.commands.run("tg:42", "/undo")
    assert [p.id for p in await store.people.all(scope)] == [found.id, other.id]


async def test_forget_goes_the_chats_way_and_rewrites_what_was_written(web: WebPage) -> None:
    scope, found = await miriam(web)
    store = web.engine.store
    await store.diary.add(scope, "2026-11-24", "Heute war Anna fröhlich. Miriams Besuch hat ihr gutgetan. "
                                               "Abends gab es Pizza.")
    await store.thoughts.add(scope, "Miri ruft Anna fast jeden Tag an.")
    browser = await web.signed_in("tg:42")
    number = await web.number(scope, "person", found.id)
    await browser.page(f"/web/people/{number}")
    done = await browser.post(f"/web/people/{number}/forget")
    assert done.status_code == 303 and done.headers["location"] == "/web/people?done=page_person_forgotten"
    assert await store.people.all(scope) == []
    assert [e.text for e in await store.diary.all(scope)] == ["Heute war Anna fröhlich. Abends gab es Pizza."]
    assert await store.thoughts.all(scope) == []
    async with store.db.reading() as tx:
        rows = await tx.fetchall("SELECT coalesce(before, '') || coalesce(after, '') || reason FROM audit_log"
                                 " WHERE scope_id = ?", (scope.id,))
    assert not any("Miri" in r[0] or "Krankenhaus" in r[0] for r in rows)
    assert "Miriam" not in (await browser.page("/web/people")).text


async def test_refusals(web: WebPage) -> None:
    scope, found = await miriam(web)
    their_scope, _ = await miriam(web, "tg:77")
    store = web.engine.store
    await person(store, their_scope, "Ben")
    theirs = await web.number(their_scope, "person", (await person(store, their_scope, "Carla")).id)  # their #3
    other = await person(store, scope, "Mimi")
    number = await web.number(scope, "person", found.id)
    browser = await web.signed_in("tg:42")
    await browser.page("/web/people")
    assert theirs == 3 and (await browser.page(f"/web/people/{theirs}")).status_code == 404  # this person has 2
    for action, data in (("rename", {"name": "X"}), ("merge", {"other": str(number)}), ("forget", {})):
        assert (await browser.post(f"/web/people/{theirs}/{action}", data)).status_code == 404
        assert (await browser.post(f"/web/people/{number}/{action}", data, token=False)).status_code == 403
    assert (await browser.post(f"/web/people/{number}/merge", {"other": str(theirs)})).status_code == 404
    for action, data in (("rename", {"name": "  "}), ("merge", {"other": "x"}), ("merge", {"other": str(number)})):
        assert (await browser.post(f"/web/people/{number}/{action}", data)).status_code == 400
    assert [p.name for p in await store.people.all(scope)] == ["Miriam", "Mimi"]
    assert [p.id for p in await store.people.all(scope)] == [found.id, other.id]
    assert [p.name for p in await store.people.all(their_scope)] == ["Miriam", "Ben", "Carla"]


async def test_a_groups_people_for_an_admin(web: WebPage) -> None:
    group = "tg:group:-100"
    await web.engine.handle(Incoming(group, "Wir planen das Sommerfest.", sender="tg:42"))
    scope = await web.engine.scope_for(group)
    found = await person(web.engine.store, scope, "Jonas", relation="Kollege")
    number = await web.number(scope, "person", found.id)
    member = await web.signed_in("tg:42")
    assert (await member.page(f"/web/g/{scope.id}/people")).status_code == 404
    admin = await web.signed_in(ADMIN)
    page = await admin.page(f"/web/g/{scope.id}/people")
    assert page.status_code == 200 and "Jonas" in page.text
    assert f'href="/web/g/{scope.id}/people/{number}"' in page.text
    assert (await admin.page(f"/web/people/{number}")).status_code == 404  # not in the admin's own memory
    done = await admin.post(f"/web/g/{scope.id}/people/{number}/rename", {"name": "Jonas B."})
    assert done.headers["location"] == f"/web/g/{scope.id}/people/{number}?done=page_person_renamed"
    assert (await web.engine.store.people.get(scope, found.id)).name == "Jonas B."
