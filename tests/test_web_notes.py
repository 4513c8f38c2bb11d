"""The web page's notes and profile: list, search and filters, one note with its sources, edit, wrong, outdated,
forget, profile entries deleted; every refusal (another scope's id, no form token, bad input) changes nothing."""
from __future__ import annotations

import datetime as dt

import pytest

from bot.exchange import Incoming
from memory.errors import NotFound
from memory.ledgers import audit
from memory.models import Note, Scope
from memory.records.kinship import PersonDraft
from tests.fakes.llm import ScriptedLLM
from tests.web_kit import Browser, WebPage

ADMIN = "tg:1"
USER = "tg:42"


@pytest.fixture
def web_admins() -> frozenset[str]:
    """mnemo's admins on this module's web page."""
    return frozenset({ADMIN})


async def signed_in(web: WebPage, user_id: str = USER) -> tuple[Browser, Scope]:
    browser = await web.signed_in(user_id)
    return browser, await web.engine.scope_for(user_id)


async def add(web: WebPage, scope: Scope, text: str, **kw: object) -> Note:
    return (await web.engine.store.notes.add(scope, text, dedupe=False, **kw)).note  # type: ignore[arg-type]


def days_ago(n: int) -> str:
    return (dt.date.today() - dt.timedelta(days=n)).isoformat()


def day(text: str, web: WebPage) -> float:
    return dt.datetime.combine(dt.date.fromisoformat(text), dt.time(12), web.engine.config.zone).timestamp()


async def test_the_list_shows_live_notes_newest_first_with_their_numbers(web: WebPage) -> None:
    browser, scope = await signed_in(web)
    old = await add(web, scope, "Anna mag Jazz", created_at=day("2026-01-05", web))
    new = await add(web, scope, "Anna spielt Cello", created_at=day("2026-02-05", web))
    closed = await add(web, scope, "Anna wohnt in Köln")
    await web.engine.store.notes.close(scope, closed.id)
    numbers = await web.engine.store.numbers.of_many(scope, "note", [old.id, new.id])
    page = await browser.page("/web/notes")
    assert page.status_code == 200
    assert page.text.index("Anna spielt Cello") < page.text.index("Anna mag Jazz")
    assert f"#{numbers[new.id]}</a> Anna spielt Cello" in page.text
    assert "Köln" not in page.text
    assert "Notizen" in page.text  # the menu entry


async def test_search_uses_the_chats_search_and_filters_narrow_it(web: WebPage) -> None:
    browser, scope = await signed_in(web)
    store = web.engine.store
    web.engine.floor = 0.5  # as the chat's keyword commands: only what names the words or is close in meaning
    # recent notes: the chat's search leaves out notes faded from lack of use (a keyword search finds them too)
    cats = await add(web, scope, "Anna mag Katzen sehr.", created_at=day(days_ago(9), web))
    await add(web, scope, "Der Zahnarzttermin ist am Montag.", created_at=day(days_ago(5), web))
    ben = await store.people.observe(scope, PersonDraft("Ben", relation="Bruder"), processing=audit.new_processing("t"))
    about_ben = await add(web, scope, "Ben hat auch Katzen.", kind="content", created_at=day(days_ago(2), web))
    await store.people.link_notes(scope, ben.id, [about_ben.id], processing=audit.new_processing("t"))
    found = await browser.page("/web/notes?q=Katzen")
    assert "Anna mag Katzen" in found.text and "Ben hat auch Katzen" in found.text and "Zahnarzt" not in found.text
    by_person = await browser.page(f"/web/notes?q=Katzen&person={await web.number(scope, 'person', ben.id)}")
    assert "Ben hat auch Katzen" in by_person.text and "Anna mag Katzen" not in by_person.text
    by_kind = await browser.page("/web/notes?kind=fact")
    assert "Anna mag Katzen" in by_kind.text and "Zahnarzt" in by_kind.text and "Ben hat" not in by_kind.text
    by_date = await browser.page(f"/web/notes?from={days_ago(12)}&to={days_ago(9)}")
    cats_link = f'/web/notes/{await web.number(scope, "note", cats.id)}"'
    assert cats_link in by_date.text and "Zahnarzt" not in by_date.text and "Ben hat" not in by_date.text
    for bad in ("kind=secret", "from=2026-13-01", "to=gestern", "person=abc", "page=-1"):
        refused = await browser.page(f"/web/notes?{bad}")
        assert refused.status_code == 400, bad


async def test_the_list_is_paged(web: WebPage) -> None:
    browser, scope = await signed_in(web)
    for i in range(23):
        await add(web, scope, f"Notiz {i:02d} über Pflanze{i}", created_at=1_700_000_000.0 + i)
    first = await browser.page("/web/notes")
    assert "Notiz 22" in first.text and "Notiz 02" not in first.text and "page=1" in first.text
    second = await browser.page("/web/notes?page=1")
    assert "Notiz 02" in second.text and "Notiz 22" not in second.text


async def test_a_note_shows_where_it_came_from_and_user_text_stays_text(web: WebPage) -> None:
    browser, scope = await signed_in(web)
    said = await web.engine.store.messages.add(scope, "user", "Ich höre so gern <b>Jazz</b>")
    note = await add(web, scope, "<script>alert(1)</script> mag Jazz", source_message_ids=[said.id])
    page = await browser.page(f"/web/notes/{await web.number(scope, 'note', note.id)}")
    assert page.status_code == 200
    assert "<script>alert(1)</script>" not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "Ich höre so gern &lt;b&gt;Jazz&lt;/b&gt;" in page.text
    listed = await browser.page("/web/notes")
    assert "<script>alert" not in listed.text


async def test_editing_a_note_changes_what_the_chats_next_prompt_holds_and_undo_takes_it_back(
    web: WebPage, chat: ScriptedLLM,
) -> None:
    browser, scope = await signed_in(web)
    store = web.engine.store
    note = await add(web, scope, "Anna trinkt gern Kaffee")
    chat.enqueue("Das weiß ich.")
    await web.engine.handle(Incoming(USER, "Was trinke ich gern?"))
    assert "Anna trinkt gern Kaffee" in chat.calls[-1].prompt
    number = await web.number(scope, "note", note.id)
    await browser.page(f"/web/notes/{number}")
    done = await browser.post(f"/web/notes/{number}/edit", {"text": "Anna trinkt nur noch Tee"})
    assert done.status_code == 303 and done.headers["location"].startswith(f"/web/notes/{number}?done=")
    assert (await store.notes.get(scope, note.id)).text == "Anna trinkt nur noch Tee"
    assert [h.item_id for h in await store.search(scope, "Tee", ("note",))] == [note.id]
    assert await store.search(scope, "Kaffee", ("note",), words_pass=True, min_cosine=0.99) == []
    chat.enqueue("Tee also.")
    await web.engine.handle(Incoming(USER, "Und was trinke ich jetzt gern?"))
    prompt = chat.calls[-1].prompt
    assert "Anna trinkt nur noch Tee" in prompt and "Anna trinkt gern Kaffee" not in prompt
    [entry] = [e for e in await store.audit_log(scope) if e.action == "update" and e.item_type == "note"]
    assert entry.reason == "web page" and entry.before and entry.before["text"] == "Anna trinkt gern Kaffee"
    undone = await web.commands.run(USER, "/undo")
    assert undone is not None and (await store.notes.get(scope, note.id)).text == "Anna trinkt gern Kaffee"


async def test_bad_text_is_refused_and_changes_nothing(web: WebPage) -> None:
    browser, scope = await signed_in(web)
    note = await add(web, scope, "Anna mag Jazz")
    number = await web.number(scope, "note", note.id)
    await browser.page(f"/web/notes/{number}")
    limit = web.engine.config.max_message_chars
    for text in ("", "   ", "x" * (limit + 1)):
        refused = await browser.post(f"/web/notes/{number}/edit", {"text": text})
        assert refused.status_code == 400
    assert (await web.engine.store.notes.get(scope, note.id)).text == "Anna mag Jazz"


async def test_wrong_and_outdated_close_the_note_and_undo_opens_it_again(web: WebPage) -> None:
    browser, scope = await signed_in(web)
    store = web.engine.store
    wrong = await add(web, scope, "Anna hat einen Hund")
    old = await add(web, scope, "Anna arbeitet bei der Post")
    wrong_number, old_number = await web.number(scope, "note", wrong.id), await web.number(scope, "note", old.id)
    await browser.page(f"/web/notes/{wrong_number}")
    assert (await browser.post(f"/web/notes/{wrong_number}/wrong")).status_code == 303
    assert (await browser.post(f"/web/notes/{old_number}/outdated")).status_code == 303
    assert (await store.notes.get(scope, wrong.id)).valid_to is not None
    assert (await store.notes.get(scope, old.id)).valid_to is not None
    reasons = {e.item_id: e.reason for e in await store.audit_log(scope) if e.action == "close"}
    assert reasons == {wrong.id: "web page: wrong", old.id: "web page: outdated"}
    assert "Hund" not in (await browser.page("/web/notes")).text
    closed = await browser.page(f"/web/notes/{wrong_number}")
    assert closed.status_code == 200 and "/edit" not in closed.text  # a closed note shows, without actions
    again = await browser.post(f"/web/notes/{wrong_number}/edit", {"text": "Anna hat eine Katze"})
    assert again.status_code == 303 and (await store.notes.get(scope, wrong.id)).text == "Anna hat einen Hund"
    await web.commands.run(USER, "/undo")
    assert (await store.notes.get(scope, old.id)).valid_to is None


async def test_forget_goes_the_chats_forget_way(web: WebPage) -> None:
    browser, scope = await signed_in(web)
    store = web.engine.store
    note = await add(web, scope, "Anna raucht")
    number = await web.number(scope, "note", note.id)
    await browser.page(f"/web/notes/{number}")
    done = await browser.post(f"/web/notes/{number}/forget")
    assert done.status_code == 303 and done.headers["location"] == "/web/notes?done=page_note_forgotten"
    with pytest.raises(NotFound):
        await store.notes.get(scope, note.id)
    assert (await store.audit_log(scope))[0].action == "erase"
    assert (await browser.page(f"/web/notes/{number}")).status_code == 404
    assert (await browser.page("/web/notes?done=page_note_forgotten")).text.count("Vergessen.") == 1


async def test_another_persons_note_is_not_found_and_a_post_without_token_is_forbidden(web: WebPage) -> None:
    browser, _ = await signed_in(web)
    other = await web.engine.scope_for("tg:77")
    theirs = await add(web, other, "Ben hat Geheimnisse")
    their_number = await web.number(other, "note", theirs.id)  # their #1; this person has no note yet
    assert (await browser.page(f"/web/notes/{their_number}")).status_code == 404
    assert (await browser.page(f"/web/notes/{theirs.id}")).status_code == 404
    for action, data in (("edit", {"text": "hacked"}), ("wrong", {}), ("outdated", {}), ("forget", {})):
        assert (await browser.post(f"/web/notes/{their_number}/{action}", data)).status_code == 404, action
    assert (await browser.page("/web/notes?q=Geheimnisse")).text.count("Geheimnisse") == 1  # only in the box
    ben = await web.engine.store.people.observe(other, PersonDraft("Ben"), processing=audit.new_processing("t"))
    assert (await browser.page(f"/web/notes?person={await web.number(other, 'person', ben.id)}")).status_code == 404
    _, scope = await signed_in(web)
    mine = await add(web, scope, "Anna mag Jazz")
    for action in ("edit", "wrong", "outdated", "forget"):
        forbidden = await browser.post(f"/web/notes/{await web.number(scope, 'note', mine.id)}/{action}", {"text": "x"},
                                       token=False)
        assert forbidden.status_code == 403, action
    assert (await web.engine.store.notes.get(other, theirs.id)).text == "Ben hat Geheimnisse"
    assert (await web.engine.store.notes.get(scope, mine.id)).valid_to is None


async def test_in_incognito_the_page_still_edits(web: WebPage) -> None:
    browser, scope = await signed_in(web)
    note = await add(web, scope, "Anna mag Jazz")
    await web.commands.run(USER, "/incognito")
    assert await web.engine.store.incognito.current(scope) is not None
    number = await web.number(scope, "note", note.id)
    await browser.page(f"/web/notes/{number}")
    assert (await browser.post(f"/web/notes/{number}/edit", {"text": "Anna mag Blues"})).status_code == 303
    assert (await web.engine.store.notes.get(scope, note.id)).text == "Anna mag Blues"


async def test_after_deleteme_the_note_is_gone_from_the_page(web: WebPage) -> None:
    browser, scope = await signed_in(web)
    note = await add(web, scope, "Anna mag Jazz")
    number = await web.number(scope, "note", note.id)
    await browser.page(f"/web/notes/{number}")
    await web.commands.run(USER, "/deleteme")
    await web.commands.press(USER, "deleteme:yes")
    assert (await browser.page(f"/web/notes/{number}")).status_code == 401  # /deleteme ended its sessions too
    assert (await browser.post(f"/web/notes/{number}/edit", {"text": "Anna mag Blues"})).status_code == 401
    again, _ = await signed_in(web)  # a new login: a fresh memory, the old note's number leads nowhere
    assert (await again.page(f"/web/notes/{number}")).status_code == 404
    assert (await again.post(f"/web/notes/{number}/edit", {"text": "Anna mag Blues"})).status_code == 404
    assert "Anna mag" not in (await again.page("/web/notes")).text


async def test_a_groups_notes_for_an_admin(web: WebPage) -> None:
    group = "tg:group:-100"
    await web.engine.handle(Incoming(group, "Wir planen das Sommerfest.", sender=USER))
    scope = await web.engine.scope_for(group)
    note = await add(web, scope, "Das Sommerfest ist im Juli")
    number = await web.number(scope, "note", note.id)
    member, _ = await signed_in(web)
    assert (await member.page(f"/web/g/{scope.id}/notes")).status_code == 404
    admin, _ = await signed_in(web, ADMIN)
    page = await admin.page(f"/web/g/{scope.id}/notes")
    assert page.status_code == 200 and "Sommerfest ist im Juli" in page.text
    assert f'href="/web/g/{scope.id}/notes/{number}"' in page.text
    await admin.page(f"/web/g/{scope.id}/notes/{number}")
    done = await admin.post(f"/web/g/{scope.id}/notes/{number}/edit", {"text": "Das Sommerfest ist im August"})
    assert done.status_code == 303 and done.headers["location"].startswith(f"/web/g/{scope.id}/notes/{number}")
    assert (await web.engine.store.notes.get(scope, note.id)).text == "Das Sommerfest ist im August"
    assert (await admin.page(f"/web/notes/{number}")).status_code == 404  # not in the admin's own memory


async def test_the_profile_shows_entries_by_their_names_and_deletes_one(web: WebPage) -> None:
    browser, scope = await signed_in(web)
    store = web.engine.store
    work = await store.profile.set(scope, "life", "work", "Bäckerin <em>")
    await store.profile.set(scope, "life", "pets", "eine Katze")
    page = await browser.page("/web/profile")
    assert page.status_code == 200 and "Arbeit" in page.text and "Bäckerin &lt;em&gt;" in page.text
    assert "Haustiere" in page.text
    other = await web.engine.scope_for("tg:77")
    await store.profile.set(other, "life", "work", "Lehrer")
    await store.profile.set(other, "life", "pets", "ein Hund")
    theirs = await store.profile.set(other, "life", "home", "Köln")
    their_number = await web.number(other, "profile_entry", theirs.id)  # their #3; this person has #1 and #2
    number = await web.number(scope, "profile_entry", work.id)
    assert f'/web/profile/{number}/delete"' in page.text and their_number == 3
    assert (await browser.post(f"/web/profile/{their_number}/delete")).status_code == 404
    assert (await browser.post(f"/web/profile/{number}/delete", token=False)).status_code == 403
    done = await browser.post(f"/web/profile/{number}/delete")
    assert done.status_code == 303 and done.headers["location"] == "/web/profile?done=page_profile_deleted"
    assert [e.key for e in await store.profile.list(scope)] == ["pets"]
    assert sorted(e.key for e in await store.profile.list(other)) == ["home", "pets", "work"]
    assert [(e.action, e.item_type) for e in await store.audit_log(scope)][0] == ("delete", "profile")
    await web.commands.run(USER, "/undo")
    assert sorted(e.key for e in await store.profile.list(scope)) == ["pets", "work"]
    english = await browser.post("/web/lang", {"lang": "en", "back": "/web/profile"})
    assert english.status_code == 303
    assert "Work" in (await browser.page("/web/profile")).text
