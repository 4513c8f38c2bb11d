"""Export and delete everything on the web page: the chat's /export file, /deleteme behind a typed word, and the
session that goes with the memory; a group's memory only for mnemo's admins."""
from __future__ import annotations

import json

import pytest

from bot.exchange import Incoming
from tests.web_kit import WebPage

USER = "tg:42"
ADMIN = "tg:1"
GROUP = "tg:group:-100"


@pytest.fixture
def web_admins() -> frozenset[str]:
    """mnemo's admins on this module's web page."""
    return frozenset({ADMIN})


async def test_the_export_is_the_chats_file_as_a_download(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await web.engine.scope_for(USER)
    await web.engine.store.notes.add(scope, "Anna mag Tee")
    page = await browser.page("/web/account")
    assert page.status_code == 200 and 'href="/web/account/export"' in page.text
    download = await browser.page("/web/account/export")
    assert download.status_code == 200
    assert download.headers["content-disposition"] == 'attachment; filename="mnemo-export.json"'
    reply = await web.commands.run(USER, "/export")
    assert reply is not None and reply.document is not None
    assert download.content == reply.document.content
    assert json.loads(download.content)["notes"][0]["text"] == "Anna mag Tee"
    assert (await web.browser().http.get("/web/account/export")).status_code == 401


async def test_delete_everything_needs_the_typed_word_and_the_form_token(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await web.engine.scope_for(USER)
    await web.engine.store.notes.add(scope, "Anna mag Tee")
    confirm = await browser.page("/web/account/delete")
    assert confirm.status_code == 200 and "LÖSCHEN" in confirm.text
    assert (await browser.post("/web/account/delete", {"word": "ja"})).status_code == 400
    assert (await browser.post("/web/account/delete", {"word": ""})).status_code == 400
    assert (await browser.post("/web/account/delete", {"word": "LÖSCHEN"}, token=False)).status_code == 403
    assert len(await web.engine.store.notes.list(scope)) == 1
    assert (await browser.page("/web/")).status_code == 200


async def test_export_then_delete_everything_then_the_export_link_is_logged_out(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await web.engine.scope_for(USER)
    await web.engine.store.notes.add(scope, "Anna mag Tee")
    assert (await browser.page("/web/account/export")).status_code == 200
    await browser.page("/web/account/delete")
    gone = await browser.post("/web/account/delete", {"word": "löschen"})
    assert gone.status_code == 200 and "Ich habe alles über dich gelöscht" in gone.text
    assert await web.engine.store.notes.list(scope) == []
    assert await web.engine.store.messages.count(scope) == 0
    assert (await browser.http.get("/web/account/export")).status_code == 401
    assert (await browser.http.get("/web/")).status_code == 401


async def test_a_groups_memory_is_deleted_only_by_an_admin(web: WebPage) -> None:
    await web.engine.handle(Incoming(GROUP, "Wir planen das Sommerfest.", sender=USER))
    group = await web.engine.scope_for(GROUP)
    await web.engine.store.notes.add(group, "Das Sommerfest ist im Juli")
    member = await web.signed_in(USER)
    assert (await member.page(f"/web/g/{group.id}/account/delete")).status_code == 404
    assert (await member.post(f"/web/g/{group.id}/account/delete", {"word": "LÖSCHEN"})).status_code == 404
    assert (await member.page(f"/web/g/{group.id}/account/export")).status_code == 404
    assert len(await web.engine.store.notes.list(group)) == 1
    admin = await web.signed_in(ADMIN)
    export = await admin.page(f"/web/g/{group.id}/account/export")
    assert json.loads(export.content)["user_id"] == GROUP
    await admin.page(f"/web/g/{group.id}/account/delete")
    done = await admin.post(f"/web/g/{group.id}/account/delete", {"word": "DELETE"})
    assert done.status_code == 303 and done.headers["location"] == "/web/?done=page_group_deleted"
    assert await web.engine.store.notes.list(group) == []
    page = await admin.page(done.headers["location"])
    assert page.status_code == 200 and "Das Gedächtnis der Gruppe ist gelöscht." in page.text
    assert (await member.page("/web/")).status_code == 200  # the member's own memory is untouched
