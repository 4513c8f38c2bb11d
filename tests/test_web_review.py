"""The review queue on the web page: the same queue as /review in the chat (grouped, duplicates marked,
contradictions side by side), ✓/✗ and "alle ✓" through the chat's own approve and reject, and every refusal."""
from __future__ import annotations

import httpx
import pytest

from bot.exchange import Incoming
from bot.texts import t
from memory.models import Scope
from memory.records.history_imports import Candidate
from tests.test_history_import import MARCH, fact, queued
from tests.test_review_channels import queue
from tests.test_web_rules_reminders import ADMIN, hello
from tests.web_kit import Browser, WebPage


@pytest.fixture
def web_admins() -> frozenset[str]:
    """mnemo's admins on this module's web page."""
    return frozenset({ADMIN})


async def test_the_queue_is_shown_as_in_the_chat_and_an_empty_one_says_so(web: WebPage) -> None:
    scope = await hello(web)
    await queue(web.engine.store, scope, 2)
    browser = await web.signed_in("tg:42")
    page = await browser.page("/web/review")
    assert page.status_code == 200 and 'href="/web/review"' in page.text
    assert t("de", "review_head", count=2) in page.text
    assert "Plaudern" in page.text and "aus ChatGPT, 2023-03-02" in page.text
    assert "Instrument Nummer 0" in page.text and "Instrument Nummer 1" not in page.text  # one conversation at a time
    assert "Instrument Nummer 0" in (await web.commands.run("tg:42", "/review")).bubbles[0]  # the chat's first, too
    await hello(web, "tg:77")
    other = await web.signed_in("tg:77")
    assert t("de", "review_empty") in (await other.page("/web/review")).text


async def first_decided(web: WebPage, conversations: int,
                        action: str) -> tuple[Scope, Candidate, Browser, httpx.Response]:
    """Anna's queue of `conversations` imported conversations on the page, its first candidate decided by `action`."""
    scope = await hello(web)
    await queue(web.engine.store, scope, conversations)
    (first,) = await web.engine.store.imports.next_group(scope, 10)
    browser = await web.signed_in("tg:42")
    await browser.page("/web/review")
    decided = await browser.post("/web/review/one", {"number": str(await web.number(scope, "candidate", first.id)),
                                                     "action": action})
    return scope, first, browser, decided


async def test_a_yes_stores_the_note_with_its_original_time_and_provenance(web: WebPage) -> None:
    scope, _, browser, kept = await first_decided(web, 2, "yes")
    store = web.engine.store
    assert kept.status_code == 303 and kept.headers["location"] == "/web/review?done=page_review_kept"
    (note,) = await store.notes.list(scope)
    assert note.text == "Anna spiele seit Jahren Instrument Nummer 0." and note.created_at == MARCH
    assert (await store.imports.provenance(scope, [note.id]))[note.id].source == "chatgpt"
    assert "aus ChatGPT, 2023-03-02" in (await browser.page("/web/notes")).text
    page = await browser.page("/web/review?done=page_review_kept")
    assert t("de", "page_review_kept") in page.text and "Instrument Nummer 1" in page.text  # the next group
    await web.commands.run("tg:42", "/undo")
    assert await store.notes.list(scope) == [], "/undo takes the import back, the web page's ✓ included"


async def test_a_no_stores_nothing(web: WebPage) -> None:
    scope, first, browser, dropped = await first_decided(web, 1, "no")
    store = web.engine.store
    assert dropped.headers["location"] == "/web/review?done=page_review_dropped"
    assert await store.notes.count(scope) == 0 and await store.imports.pending_count(scope) == 0
    assert (await store.imports.candidate(scope, first.id)).status == "rejected"
    assert t("de", "review_empty") in (await browser.page("/web/review")).text


async def test_all_yes_decides_the_shown_group_and_no_other(web: WebPage) -> None:
    scope = await hello(web)
    store = web.engine.store
    group = await queued(store, scope, fact("Anna wohnt in Leipzig."), fact("Anna hat einen Kater."),
                         fact("Anna läuft gern.", key="other-chat", title="Miriam"))
    assert len(group) == 2
    browser = await web.signed_in("tg:42")
    page = await browser.page("/web/review")
    assert "Anna hat einen Kater." in page.text and "Anna läuft gern." not in page.text
    kept = await browser.post("/web/review/group", {"first": str(await web.number(scope, "candidate", group[0].id)),
                                                    "last": str(await web.number(scope, "candidate", group[1].id)),
                                                    "action": "yes"})
    assert kept.headers["location"] == "/web/review?done=page_review_kept"
    assert sorted(n.text for n in await store.notes.list(scope)) == ["Anna hat einen Kater.", "Anna wohnt in Leipzig."]
    assert [c.text for c in await store.imports.next_group(scope, 10)] == ["Anna läuft gern."]


async def test_duplicates_are_marked_and_contradictions_side_by_side_in_the_persons_language(web: WebPage) -> None:
    scope = await hello(web)
    store = web.engine.store
    home = (await store.notes.add(scope, "Anna wohnt in Leipzig.")).note
    tea = (await store.notes.add(scope, "Anna trinkt morgens Tee.")).note
    await queued(store, scope, fact("Anna wohnt in Dresden.", contradicts=home.id),
                 fact("Anna trinkt jeden Morgen Tee.", duplicate_of=tea.id),
                 fact("[photo] <script>alert(1)</script> Balkon"))
    browser = await web.signed_in("tg:42")
    page = (await browser.page("/web/review")).text
    assert "<td>Anna wohnt in Leipzig.</td><td>Anna wohnt in Dresden.</td>" in page
    assert "Schon bekannt: Anna trinkt morgens Tee." in page
    assert "[Foto] &lt;script&gt;alert(1)&lt;/script&gt; Balkon" in page and "<script>alert" not in page
    assert "Gespeicherte Nachrichten" in page and "Saved Messages" not in page and "[photo]" not in page
    chat = (await web.commands.run("tg:42", "/review")).bubbles[0]  # the chat marks the same
    assert "↔ bisher: „Anna wohnt in Leipzig.“" in chat and "≈ schon bekannt: „Anna trinkt morgens Tee.“" in chat


async def test_refusals_change_nothing(web: WebPage) -> None:
    scope = await hello(web)
    store = web.engine.store
    (mine,) = await queued(store, scope, fact("Anna wohnt in Leipzig."))
    other = await hello(web, "tg:77")
    _, theirs = await queued(store, other, fact("Bernd wohnt in Rom."), fact("Bernd spielt Geige."))
    browser = await web.signed_in("tg:42")
    await browser.page("/web/review")
    mine_no, theirs_no = str(await web.number(scope, "candidate", mine.id)), str(await web.number(
        other, "candidate", theirs.id))
    assert (mine_no, theirs_no) == ("1", "2")  # numbers per person: the other's 2 is no number of this person
    assert (await browser.post("/web/review/one", {"number": theirs_no, "action": "yes"})).status_code == 404
    assert (await browser.post("/web/review/group", {"first": theirs_no, "last": theirs_no,
                                                     "action": "yes"})).status_code == 404
    no_token = await browser.post("/web/review/one", {"number": mine_no, "action": "yes"}, token=False)
    assert no_token.status_code == 403
    for bad in ({"number": "abc", "action": "yes"}, {"number": "", "action": "yes"}, {"number": "-1", "action": "no"},
                {"number": "9" * 30, "action": "no"}, {"number": mine_no, "action": "maybe"}, {"number": mine_no}):
        assert (await browser.post("/web/review/one", bad)).status_code == 400, bad
    assert (await browser.post("/web/review/group", {"first": mine_no, "last": "x", "action": "yes"})
            ).status_code == 400
    assert await store.notes.count(scope) == 0 and (await store.imports.candidate(scope, mine.id)).status == "pending"
    assert (await store.imports.candidate(other, theirs.id)).status == "pending"


async def test_a_groups_queue_is_for_mnemos_admins_only(web: WebPage) -> None:
    group = "tg:group:-100"
    await web.engine.handle(Incoming(group, "Wir planen das Sommerfest.", sender="tg:42"))
    scope = await web.engine.scope_for(group)
    (candidate,) = await queued(web.engine.store, scope, fact("Das Sommerfest ist im Juli.", title="Lauftreff"))
    await hello(web)
    member = await web.signed_in("tg:42")
    assert (await member.page(f"/web/g/{scope.id}/review")).status_code == 404
    number = str(await web.number(scope, "candidate", candidate.id))
    refused = await member.post(f"/web/g/{scope.id}/review/one", {"number": number, "action": "yes"})
    assert refused.status_code == 404 and await web.engine.store.notes.count(scope) == 0
    await hello(web, ADMIN)
    admin = await web.signed_in(ADMIN)
    assert "Das Sommerfest ist im Juli." in (await admin.page(f"/web/g/{scope.id}/review")).text
    kept = await admin.post(f"/web/g/{scope.id}/review/one", {"number": number, "action": "yes"})
    assert kept.headers["location"] == f"/web/g/{scope.id}/review?done=page_review_kept"
    assert [n.text for n in await web.engine.store.notes.list(scope)] == ["Das Sommerfest ist im Juli."]


async def test_a_candidate_decided_in_the_chat_meanwhile_is_left_as_it_is(web: WebPage) -> None:
    scope = await hello(web)
    store = web.engine.store
    await queue(store, scope, 1)
    (first,) = await store.imports.next_group(scope, 10)
    browser = await web.signed_in("tg:42")
    assert "Instrument Nummer 0" in (await browser.page("/web/review")).text  # shown on the page, then …
    await web.commands.run("tg:42", "/review")
    assert (await web.commands.press("tg:42", "review:no:1")).text.startswith(t("de", "review_dropped", text=""))
    number = str(await web.number(scope, "candidate", first.id))
    for path, form in (("/web/review/one", {"number": number}),
                       ("/web/review/group", {"first": number, "last": number})):
        stale = await browser.post(path, form | {"action": "yes"})
        assert stale.headers["location"] == "/web/review?done=page_review_stale"
    assert await store.notes.count(scope) == 0 and (await store.imports.candidate(scope, first.id)).status == "rejected"
    assert t("de", "page_review_stale") in (await browser.page("/web/review?done=page_review_stale")).text
