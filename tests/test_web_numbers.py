"""The web page's URLs and forms carry each person's own numbers (as the chat does), never the ids all users share:
the second person's items are #1 on every page, and a number only the first person has leads nowhere."""
from __future__ import annotations

import re
import time

import pytest

from bot.exchange import Incoming
from memory.ledgers import audit
from memory.models import Scope
from memory.records.kinship import PersonDraft
from memory.records.notes import NoteFilter
from tests.web_kit import WebPage

pytestmark = pytest.mark.both_backends("each person's numbering through the web page")

FIRST, SECOND = "tg:41", "tg:42"
PAGES = ("/web/notes", "/web/notes/1", "/web/people", "/web/people/1", "/web/rules", "/web/reminders",
         "/web/topics", "/web/profile")
LINKED = re.compile(r'/web/(notes|people|rules|reminders|topics|profile)/(\d+)')
PERSON_OPTION = re.compile(r'<select name="(?:person|other)">.*?</select>', re.S)


async def fill(web: WebPage, user: str, count: int) -> Scope:
    """`count` items of every kind the page links to, for `user`; each person about one note."""
    await web.engine.handle(Incoming(user, "Hallo"))
    scope, store = await web.engine.scope_for(user), web.engine.store
    for i in range(count):
        note = (await store.notes.add(scope, f"{user} Notiz {i} über Pflanzen", dedupe=False)).note
        person = await store.people.observe(scope, PersonDraft(f"Mensch{i}x{user[-2:]}"),
                                            processing=audit.new_processing("t"))
        await store.people.link_notes(scope, person.id, [note.id], processing=audit.new_processing("t"))
        rule = await store.rules.propose(scope, f"Regel {i}")
        await store.rules.decide(scope, rule.id, "active")
        await store.reminders.add(scope, f"Erinnerung {i}", time.time() + 86_400 * (i + 1))
        await store.topics.add(scope, f"Thema {i}")
        await store.profile.set(scope, "life", f"key{i}", f"Wert {i}")
    return scope


async def test_the_second_persons_pages_carry_their_own_numbers_from_one(web: WebPage) -> None:
    first = await fill(web, FIRST, 3)  # the shared ids 1-3 of every kind are the first person's
    second = await fill(web, SECOND, 1)
    store = web.engine.store
    [note] = await store.notes.find(second, NoteFilter())
    assert note.id == 4, "the second person's items have shared ids the numbers must not show"
    browser = await web.signed_in(SECOND)
    seen: set[tuple[str, str]] = set()
    for path in PAGES:
        page = await browser.page(path)
        assert page.status_code == 200, path
        seen |= set(LINKED.findall(page.text))
        for select in PERSON_OPTION.findall(page.text):  # the notes' person filter
            assert re.findall(r'value="(\d+)"', select) == ["1"], path
    assert seen == {(kind, "1") for kind in ("notes", "people", "rules", "reminders", "topics", "profile")}

    for path in ("/web/notes/2", "/web/people/2"):  # the first person has a #2; this person has not
        assert (await browser.page(path)).status_code == 404, path
    for path, data in (("/web/notes/2/forget", {}), ("/web/people/2/forget", {}), ("/web/rules/2", {"action": "del"}),
                       ("/web/reminders/2/delete", {}), ("/web/topics/2", {"action": "done"}),
                       ("/web/profile/2/delete", {}), ("/web/people/1/merge", {"other": "2"})):
        assert (await browser.post(path, data)).status_code == 404, path
    assert (await browser.page("/web/notes?person=2")).status_code == 404
    assert await store.notes.count(first) == 3 and len(await store.people.all(first)) == 3
    assert len(await store.rules.list(first)) == 3 and len(await store.reminders.active(first)) == 3
    assert len(await store.topics.list(first, "open")) == 3 and len(await store.profile.list(first)) == 3

    forgotten = await browser.post("/web/notes/1/forget", {})  # the person's own #1 is their note
    assert forgotten.status_code == 303 and await store.notes.count(second) == 0
    assert await store.notes.count(first) == 3
