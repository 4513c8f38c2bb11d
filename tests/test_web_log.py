"""The web page's overview chart, diary and thoughts, conversation log and change log with undo, over HTTP, with
every refusal; changes made on the page and in the chat see each other."""
from __future__ import annotations

import re
import time

from bot.exchange import Incoming
from memory.ledgers import audit
from memory.models import Scope
from tests.web_kit import WebPage

USER = "tg:42"
OTHER = "tg:43"


async def scope_of(web: WebPage, user_id: str) -> Scope:
    return await web.engine.scope_for(user_id)


def undo_buttons(html: str) -> list[str]:
    """The processing ids that have an undo button on a change log page."""
    return re.findall(r'name="processing" value="([\w-]+)"', html)


async def live_notes(web: WebPage, scope: Scope) -> list[str]:
    return sorted(n.text for n in await web.engine.store.notes.list(scope))


async def test_the_overview_charts_the_notes_per_week_and_shows_the_relationship(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await scope_of(web, USER)
    for text in ("Anna mag Tee", "Anna wohnt in Köln", "Anna spielt Geige"):
        await web.engine.store.notes.add(scope, text)
    await web.engine.store.notes.add(scope, "Anna war in Rom", created_at=time.time() - 3 * 7 * 86400)
    page = await browser.page("/web/")
    assert page.status_code == 200
    assert page.text.count("<rect ") == 12
    assert re.search(r"<title>[^<]*: 3</title>", page.text) and re.search(r"<title>[^<]*: 1</title>", page.text)
    assert "Was ich pro Woche gelernt habe" in page.text
    assert "Vertrautheit" in page.text or "Unsere Beziehung" in page.text
    assert 'style="' not in page.text  # the CSP allows no inline styles


async def test_diary_and_thoughts_are_paged_newest_first_and_escaped(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await scope_of(web, USER)
    for day in range(1, 13):
        await web.engine.store.diary.add(scope, f"2026-11-{day:02d}", f"Eintrag {day} <script>x</script>")
    await web.engine.store.thoughts.add(scope, "Sie braucht Ruhe <b>jetzt</b>", origin="reflection")
    first = await browser.page("/web/diary")
    assert first.status_code == 200
    assert first.text.index("Eintrag 12") < first.text.index("Eintrag 3 ")
    assert "Eintrag 2 " not in first.text and "&lt;script&gt;" in first.text and "<script>x" not in first.text
    second = await browser.page("/web/diary?page=2")
    assert "Eintrag 2 " in second.text and "Eintrag 1 " in second.text and "Eintrag 12" not in second.text
    thoughts = await browser.page("/web/diary?show=thoughts")
    assert "Sie braucht Ruhe &lt;b&gt;jetzt&lt;/b&gt;" in thoughts.text
    assert (await browser.page("/web/diary?page=zwei")).status_code == 400
    assert (await browser.page("/web/diary?show=secrets")).status_code == 400


async def test_the_log_searches_words_and_days_and_refuses_a_date_that_is_no_date(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await scope_of(web, USER)
    journal = web.engine.store.messages
    day = 86400.0
    old = 1_790_000_000.0  # 2026-09-21 in Berlin
    await journal.add(scope, "user", "Wir waren im Zoo <script>alert(1)</script>", created_at=old)
    await journal.add(scope, "assistant", "Wie schön, der Zoo!", created_at=old + 60)
    await journal.add(scope, "user", "Heute regnet es", created_at=old + 3 * day)
    await journal.add(scope, "user", "Ich habe es eingesprochen", created_at=old + 4 * day, origin="voice")
    page = await browser.page("/web/log")
    assert page.status_code == 200
    assert page.text.index("eingesprochen") < page.text.index("regnet") < page.text.index("im Zoo")
    assert "(Sprachnachricht)" in page.text and "&lt;script&gt;" in page.text
    found = await browser.page("/web/log?q=zoo")
    assert "im Zoo" in found.text and "der Zoo" in found.text and "regnet" not in found.text
    await journal.add(scope, "user", "Äpfel von der Straße", created_at=old + 5 * day)
    for query in ("äpfel", "ÄPFEL", "STRASSE", "straße"):  # case folded beyond ASCII, as German needs it
        assert "Äpfel von der Straße" in (await browser.page(f"/web/log?q={query}")).text, query
    assert "Äpfel" not in (await browser.page("/web/log?q=apfel")).text  # folding keeps the umlaut
    days = await browser.page("/web/log?from=2026-09-24&to=2026-09-24")
    assert "regnet" in days.text and "Zoo" not in days.text.split("</form>", 1)[1]
    assert (await browser.page("/web/log?from=2026-13-40")).status_code == 400
    assert (await browser.page("/web/log?to=9999-12-31")).status_code == 400  # the day after it is out of range
    assert (await browser.page("/web/log?to=gestern")).status_code == 400
    assert (await browser.page("/web/log?page=-1")).status_code == 400


async def test_an_incognito_stretch_shows_only_that_it_happened(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    await web.commands.run(USER, "/incognito")
    await web.engine.handle(Incoming(USER, "Mein Geheimnis heißt Zitronenbaum"))
    await web.commands.run(USER, "/incognito aus")
    page = await browser.page("/web/log")
    assert "Inkognito von" in page.text and "1 Nachricht, nichts davon gespeichert" in page.text
    assert "Zitronenbaum" not in page.text and "Geheimnis" not in page.text
    searched = await browser.page("/web/log?q=Zitronenbaum")
    assert "Keine Nachrichten gefunden." in searched.text


async def test_undo_on_the_page_takes_a_processing_back_once(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await scope_of(web, USER)
    await web.engine.store.notes.add(scope, "Anna mag Tee", processing="extract-aaaa", dedupe=False)
    await web.engine.store.notes.add(scope, "Ben spielt Schach", processing="extract-bbbb", dedupe=False)
    page = await browser.page("/web/changes")
    assert page.status_code == 200 and undo_buttons(page.text) == ["extract-bbbb", "extract-aaaa"]
    assert "Notiz #1 angelegt: Anna mag Tee" in page.text
    done = await browser.post("/web/changes/undo", {"processing": "extract-aaaa"})  # not the newest one
    assert done.status_code == 303 and done.headers["location"] == "/web/changes?done=page_undone"
    assert await live_notes(web, scope) == ["Ben spielt Schach"]
    after = await browser.page(done.headers["location"])
    assert "Rückgängig gemacht." in after.text and undo_buttons(after.text) == ["extract-bbbb"]
    again = await browser.post("/web/changes/undo", {"processing": "extract-aaaa"})  # a second press, forged
    assert again.headers["location"].endswith("done=page_undo_nothing")
    assert await live_notes(web, scope) == ["Ben spielt Schach"]


async def test_the_change_log_refuses_what_is_not_the_viewers(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    other = await web.signed_in(OTHER)
    theirs = await scope_of(web, OTHER)
    await web.engine.store.notes.add(theirs, "Geheimnis von 43", processing="extract-cccc")
    assert (await browser.post("/web/changes/undo", {"processing": "extract-cccc"})).status_code == 404
    assert await live_notes(web, theirs) == ["Geheimnis von 43"]
    assert "Geheimnis von 43" not in (await browser.page("/web/changes")).text
    await other.page("/web/changes")
    assert (await other.post("/web/changes/undo", {"processing": "extract-cccc"}, token=False)).status_code == 403
    assert (await other.post("/web/changes/undo", {"processing": ""})).status_code == 400
    assert await live_notes(web, theirs) == ["Geheimnis von 43"]
    assert (await other.page("/web/changes?page=x")).status_code == 400


async def test_a_processing_undone_in_the_chat_has_no_button_and_a_forged_undo_changes_nothing(
        web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await scope_of(web, USER)
    await web.engine.store.notes.add(scope, "Anna mag Tee", processing="extract-aaaa")
    reply = await web.commands.run(USER, "/undo")
    assert reply is not None and "Anna mag Tee" in reply.bubbles[0]
    page = await browser.page("/web/changes")
    assert "extract-aaaa" not in undo_buttons(page.text) and "rückgängig gemacht" in page.text
    entries = await audit.processings(web.engine.store.db, scope.id)
    forged = await browser.post("/web/changes/undo", {"processing": "extract-aaaa"})
    assert forged.headers["location"].endswith("done=page_undo_nothing")
    assert await live_notes(web, scope) == []
    assert await audit.processings(web.engine.store.db, scope.id) == entries
    undo_of_undo = await browser.post("/web/changes/undo", {"processing": entries[0].id})
    assert entries[0].id.startswith("undo-") and undo_of_undo.status_code == 303
    assert await live_notes(web, scope) == []


async def test_a_change_made_in_the_chat_is_undone_on_the_page_and_the_chat_sees_it(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await scope_of(web, USER)
    await web.engine.store.notes.add(scope, "Anna mag Kaffee", processing="extract-aaaa")
    pressed = await web.commands.press(USER, "why:wrong:1")  # the chat marks the note wrong: a processing
    assert pressed is not None and await live_notes(web, scope) == []
    page = await browser.page("/web/changes")
    [newest, _] = undo_buttons(page.text)
    assert (await browser.post("/web/changes/undo", {"processing": newest})).status_code == 303
    assert await live_notes(web, scope) == ["Anna mag Kaffee"]
    reply = await web.commands.run(USER, "/undo")  # the chat's /undo now takes back the next one, the extraction
    assert reply is not None and "Anna mag Kaffee" in reply.bubbles[0]
    assert await live_notes(web, scope) == []
    assert undo_buttons((await browser.page("/web/changes")).text) == []


async def test_a_note_forgotten_for_good_says_so_and_has_no_button(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    scope = await scope_of(web, USER)
    await web.engine.store.notes.add(scope, "Anna hat Schulden", processing="extract-aaaa")
    await web.commands.press(USER, "forget:1")
    page = await browser.page("/web/changes")
    assert undo_buttons(page.text) == [] and "endgültig vergessen" in page.text
    assert "Schulden" not in page.text
    forged = await browser.post("/web/changes/undo", {"processing": "extract-aaaa"})
    assert forged.headers["location"].endswith("done=page_undo_final")
    assert await live_notes(web, scope) == []


async def test_the_sections_are_in_the_menu_and_speak_english(web: WebPage) -> None:
    browser = await web.signed_in(USER)
    await browser.post("/web/lang", {"lang": "en", "back": "/web/"})
    for path, heading in (("/web/diary", "Diary and thoughts"), ("/web/log", "Conversation log"),
                          ("/web/changes", "Changes"), ("/web/account", "Export and delete")):
        page = await browser.page(path)
        assert page.status_code == 200 and f"<h1>{heading}</h1>" in page.text and f'href="{path}"' in page.text
    assert (await web.browser().http.get("/web/changes")).status_code == 401
