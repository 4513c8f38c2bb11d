"""The learned rules, reminders and open topics of the web page: what they show, every change as the chat makes it,
every refusal, and the seams: a rule the chat still asks about, a reminder moved under the running scheduler."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bot.conversation.engine import Engine, EngineConfig
from bot.exchange import Incoming
from bot.llm.port import ToolCall
from bot.llm.writer import LLMWriter
from bot.texts import t
from memory.ledgers.outbox import ButtonRows
from memory.models import Scope
from memory.store import MemoryStore
from scheduler.service import Scheduler
from tests.fakes.llm import ScriptedLLM
from tests.test_scheduler import BERLIN, QUARTER, Clock
from tests.web_kit import Browser, WebPage, web_page

ADMIN = "tg:1"
BERLIN_TEXT = str(BERLIN)


@pytest.fixture
def web_admins() -> frozenset[str]:
    """mnemo's admins on this module's web page."""
    return frozenset({ADMIN})


async def hello(web: WebPage, user: str = "tg:42") -> Scope:
    await web.engine.handle(Incoming(user, "Hallo"))
    return await web.engine.scope_for(user)


# --- learned rules ------------------------------------------------------------------------------------------


async def test_rules_are_shown_with_their_state_and_switched(web: WebPage) -> None:
    scope = await hello(web)
    store = web.engine.store
    rule = await store.rules.propose(scope, "Antworte kürzer.")
    await store.rules.decide(scope, rule.id, "active")
    number = await web.number(scope, "rule", rule.id)
    browser = await web.signed_in("tg:42")
    page = await browser.page("/web/rules")
    assert page.status_code == 200 and "Antworte kürzer." in page.text and "Aktiv" in page.text
    assert (await browser.post(f"/web/rules/{number}", {"action": "off"})).headers["location"] == \
        "/web/rules?done=page_rule_off"
    assert (await store.rules.get(scope, rule.id)).status == "disabled"
    assert "Ausgeschaltet" in (await browser.page("/web/rules")).text
    stale = await browser.post(f"/web/rules/{number}", {"action": "off"})  # switched off already
    assert stale.headers["location"] == "/web/rules?done=page_rule_stale"
    await browser.post(f"/web/rules/{number}", {"action": "on"})
    assert (await store.rules.get(scope, rule.id)).status == "active"
    await web.commands.run("tg:42", "/undo")
    assert (await store.rules.get(scope, rule.id)).status == "disabled", "/undo takes the page's change back"
    await browser.post(f"/web/rules/{number}", {"action": "del"})
    assert await store.rules.list(scope) == []
    await web.commands.run("tg:42", "/undo")
    assert [r.text for r in await store.rules.list(scope)] == ["Antworte kürzer."]


async def test_rule_refusals(web: WebPage) -> None:
    scope = await hello(web)
    store, their_scope = web.engine.store, await hello(web, "tg:77")
    await store.rules.decide(their_scope, (await store.rules.propose(their_scope, "Sei locker.")).id, "active")
    theirs = await store.rules.propose(their_scope, "Sag Sie.")
    their_number = await web.number(their_scope, "rule", theirs.id)  # their #2; this person has only #1
    mine = await store.rules.propose(scope, "<script>alert(1)</script>")
    number = await web.number(scope, "rule", mine.id)
    browser = await web.signed_in("tg:42")
    page = await browser.page("/web/rules")
    assert "<script>alert(1)</script>" not in page.text and "&lt;script&gt;" in page.text and "Sag Sie" not in page.text
    assert (await browser.post(f"/web/rules/{their_number}", {"action": "yes"})).status_code == 404
    assert (await browser.post(f"/web/rules/{number}", {"action": "yes"}, token=False)).status_code == 403
    assert (await browser.post(f"/web/rules/{number}", {"action": "maybe"})).status_code == 400
    assert (await web.engine.store.rules.get(scope, mine.id)).status == "pending"
    assert (await web.engine.store.rules.get(await web.engine.scope_for("tg:77"), theirs.id)).status == "pending"


async def test_a_rule_the_chat_asks_about_is_decided_once(web: WebPage, chat: ScriptedLLM) -> None:
    chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Antworte kürzer."})])
    chat.enqueue("Gern, ich fasse mich kurz.")
    asked = await web.engine.handle(Incoming("tg:42", "Kannst du dich bitte kurz fassen?"))
    assert asked is not None and asked.buttons, "the chat asks with yes/no buttons"
    scope = await web.engine.scope_for("tg:42")
    store = web.engine.store
    pending = await store.rules.pending(scope)
    assert pending is not None
    number = await store.numbers.of(scope, "rule", pending.id)

    browser = await web.signed_in("tg:42")
    page = await browser.page("/web/rules")
    assert "Wartet im Chat auf deine Antwort" in page.text and 'value="yes"' in page.text
    await browser.post(f"/web/rules/{number}", {"action": "yes"})
    assert (await store.rules.get(scope, pending.id)).status == "active"

    pressed = await web.commands.press("tg:42", f"rule:no:{number}")  # the chat's button, pressed afterwards
    assert pressed.notice == t("de", "button_stale") and pressed.stale and pressed.closes == (f"rule:{number}",)
    chat.enqueue("Schön.")
    typed = await web.engine.handle(Incoming("tg:42", "nein"))  # a typed no is no answer to it any more
    assert typed is not None and typed.bubbles == ("Schön.",) and f"rule:{number}" in typed.closes
    assert (await store.rules.get(scope, pending.id)).status == "active"
    decided = [e for e in await store.audit_log(scope) if e.item_type == "rule"]
    assert len(decided) == 1 and decided[0].reason == "web page"


async def test_a_rule_dropped_on_the_page_is_not_taken_by_a_later_yes_button(web: WebPage) -> None:
    scope = await hello(web)
    store = web.engine.store
    rule = await store.rules.propose(scope, "Schreib mehr Emojis.")
    number = await store.numbers.of(scope, "rule", rule.id)
    browser = await web.signed_in("tg:42")
    await browser.page("/web/rules")
    done = await browser.post(f"/web/rules/{number}", {"action": "no"})
    assert done.headers["location"] == "/web/rules?done=page_rule_dropped"
    assert (await web.commands.press("tg:42", f"rule:yes:{number}")).stale
    assert (await store.rules.get(scope, rule.id)).status == "rejected"


# --- open topics ------------------------------------------------------------------------------------------


async def test_topics_marked_done_or_dropped_and_undone(web: WebPage) -> None:
    scope = await hello(web)
    store = web.engine.store
    dentist = await store.topics.add(scope, "Wie war der Zahnarzt?", due_at=1_900_000_000.0)
    garden = await store.topics.add(scope, "Blüht der Garten?")
    their_scope = await hello(web, "tg:77")
    for text in ("Erstes", "Zweites"):
        await store.topics.add(their_scope, f"{text} Thema")
    theirs = await web.number(their_scope, "topic", (await store.topics.add(their_scope, "Geheimes Thema")).id)
    dentist_number, garden_number = [await web.number(scope, "topic", x.id) for x in (dentist, garden)]
    browser = await web.signed_in("tg:42")
    page = await browser.page("/web/topics")
    assert "Wie war der Zahnarzt?" in page.text and "Fällig: " in page.text and "Jederzeit" in page.text
    assert "Geheimes Thema" not in page.text
    assert f'/web/topics/{garden_number}"' in page.text
    assert theirs == 3 and (await browser.post(f"/web/topics/{theirs}", {"action": "done"})).status_code == 404
    assert (await browser.post(f"/web/topics/{dentist_number}", {"action": "done"}, token=False)).status_code == 403
    assert (await browser.post(f"/web/topics/{dentist_number}", {"action": "later"})).status_code == 400
    assert len(await store.topics.list(scope, "open")) == 2
    assert (await browser.post(f"/web/topics/{dentist_number}", {"action": "done"})).status_code == 303
    assert (await browser.post(f"/web/topics/{garden_number}", {"action": "drop"})).status_code == 303
    assert {x.id: x.status for x in await store.topics.all(scope)} == {dentist.id: "done", garden.id: "dropped"}
    assert (await browser.post(f"/web/topics/{garden_number}", {"action": "drop"})).status_code == 404  # not open
    await web.commands.run("tg:42", "/undo")
    assert [x.id for x in await store.topics.list(scope, "open")] == [garden.id]


# --- reminders --------------------------------------------------------------------------------------------


async def test_reminder_edit_and_delete_and_refusals(web: WebPage) -> None:
    scope = await hello(web)
    store = web.engine.store
    await store.preferences.set(scope, "timezone", BERLIN_TEXT)
    due = datetime.now(BERLIN).replace(second=0, microsecond=0) + timedelta(days=2)
    tea = await store.reminders.add(scope, "Tee <kochen>", due.timestamp(), "daily")
    their_scope = await hello(web, "tg:77")
    await store.reminders.add(their_scope, "Auch fremd", due.timestamp())
    stranger = await store.reminders.add(their_scope, "Fremd", due.timestamp())
    theirs = await web.number(their_scope, "reminder", stranger.id)
    number = await web.number(scope, "reminder", tea.id)
    browser = await web.signed_in("tg:42")
    page = await browser.page("/web/reminders")
    assert page.status_code == 200 and "Tee &lt;kochen&gt;" in page.text and "Fremd" not in page.text
    assert f'value="{due:%d.%m.%Y %H:%M}"' in page.text and f"jeden Tag um {due:%H:%M}" in page.text
    assert "Wann – Berlin (UTC+" in page.text and "Europe/Berlin" not in page.text, "a zone's name, not its IANA id"
    later = due + timedelta(hours=3)
    form = {"text": "Tee kochen", "due": f"{later:%d.%m.%Y %H:%M}"}  # typed as the page shows it
    assert theirs == 2 and (await browser.post(f"/web/reminders/{theirs}/edit", form)).status_code == 404
    assert (await browser.post(f"/web/reminders/{theirs}/delete")).status_code == 404
    assert (await browser.post(f"/web/reminders/{number}/edit", form, token=False)).status_code == 403
    past = datetime.now(BERLIN) - timedelta(hours=1)
    for bad in ({"text": "Tee", "due": f"{past:%Y-%m-%dT%H:%M}"}, {"text": "Tee", "due": ""},
                {"text": "Tee", "due": "morgen"}, {"text": "  ", "due": form["due"]}):
        assert (await browser.post(f"/web/reminders/{number}/edit", bad)).status_code == 400
    unchanged = await store.reminders.get(scope, tea.id)
    assert (unchanged.text, unchanged.due_at.timestamp()) == ("Tee <kochen>", due.timestamp())

    done = await browser.post(f"/web/reminders/{number}/edit", form)
    assert done.headers["location"] == "/web/reminders?done=page_reminder_changed"
    edited = await store.reminders.get(scope, tea.id)
    assert (edited.text, edited.due_at.astimezone(BERLIN), edited.repeat) == ("Tee kochen", later, "daily")
    await web.commands.run("tg:42", "/undo")
    back = await store.reminders.get(scope, tea.id)
    assert (back.text, back.due_at.timestamp(), back.status) == ("Tee <kochen>", due.timestamp(), "active")

    assert (await browser.post(f"/web/reminders/{number}/delete")).status_code == 303
    assert (await store.reminders.get(scope, tea.id)).status == "cancelled"
    assert (await browser.post(f"/web/reminders/{number}/edit", form)).status_code == 404  # not active any more
    assert "Keine aktiven Erinnerungen." in (await browser.page("/web/reminders")).text


class Sender:
    """A channel that records what it delivered, with the simulated time."""

    def __init__(self, clock: Clock) -> None:
        self.clock, self.sent = clock, list[tuple[float, str]]()

    async def deliver(self, scope: Scope, text: str, *, buttons: ButtonRows = ()) -> bool:
        self.sent.append((self.clock.now, text))
        return True


async def test_a_reminder_moved_on_the_page_fires_once_at_the_new_time(store: MemoryStore, tmp_path: Path) -> None:
    start = datetime(2031, 3, 4, 9, 0, tzinfo=BERLIN)  # far ahead: the real scheduler's jobs wait
    clock = Clock(start.timestamp())
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    engine = Engine(store, chat, background, EngineConfig(zone=BERLIN), clock=clock)
    sender = Sender(clock)
    scheduler = Scheduler(store, "mnemo", LLMWriter(background), engine, sender, BERLIN, tmp_path, clock=clock)
    scope = await store.scope("mnemo", "tg:42")
    await store.messages.add(scope, "user", "Erinnere mich um 10 an den Zahnarzt", created_at=clock.now)
    old, new = start + timedelta(hours=1), start + timedelta(hours=3)
    dentist = await store.reminders.add(scope, "Zahnarzt", old.timestamp())
    await scheduler.start()
    job = scheduler._aps.get_job(f"reminder:{dentist.id}") if scheduler._aps else None  # noqa: SLF001
    assert job is not None and job.next_run_time == old
    try:
        async for web in web_page(engine, clock=clock):
            browser = await web.signed_in("tg:42")
            await browser.page("/web/reminders")
            number = await web.number(scope, "reminder", dentist.id)
            moved = await browser.post(f"/web/reminders/{number}/edit",
                                       {"text": "Zahnarzt", "due": f"{new:%Y-%m-%dT%H:%M}"})
            assert moved.status_code == 303
            job = scheduler._aps.get_job(f"reminder:{dentist.id}") if scheduler._aps else None  # noqa: SLF001
            assert job is not None and job.next_run_time == new, "the page's change reached the scheduler"
    finally:
        await scheduler.stop()
    while clock.now < (new + timedelta(hours=2)).timestamp():
        before, clock.now = clock.now, clock.now + QUARTER
        await scheduler.run_due(before, clock.now)
    assert sender.sent == [(new.timestamp(), "⏰ Zahnarzt")], "once, at the new time, not at the old"
    assert (await store.reminders.get(scope, dentist.id)).status == "done"
    await engine.close()


async def test_a_groups_reminders_and_rules_for_an_admin(web: WebPage) -> None:
    group = "tg:group:-100"
    await web.engine.handle(Incoming(group, "Wir planen das Sommerfest.", sender="tg:42"))
    scope = await web.engine.scope_for(group)
    store = web.engine.store
    due = datetime.now(BERLIN) + timedelta(days=1)
    fest = await store.reminders.add(scope, "Sommerfest", due.timestamp())
    rule = await store.rules.propose(scope, "Fass dich kurz.")
    rule_number, fest_number = await web.number(scope, "rule", rule.id), await web.number(scope, "reminder", fest.id)
    member = await web.signed_in("tg:42")
    assert (await member.page(f"/web/g/{scope.id}/reminders")).status_code == 404
    admin: Browser = await web.signed_in(ADMIN)
    assert "Sommerfest" in (await admin.page(f"/web/g/{scope.id}/reminders")).text
    assert "Fass dich kurz." in (await admin.page(f"/web/g/{scope.id}/rules")).text
    assert (await admin.post(f"/web/rules/{rule_number}", {"action": "yes"})).status_code == 404  # not their own
    done = await admin.post(f"/web/g/{scope.id}/rules/{rule_number}", {"action": "yes"})
    assert done.headers["location"] == f"/web/g/{scope.id}/rules?done=page_rule_applied"
    assert (await store.rules.get(scope, rule.id)).status == "active"
    assert (await admin.post(f"/web/g/{scope.id}/reminders/{fest_number}/delete")).status_code == 303
    assert (await store.reminders.get(scope, fest.id)).status == "cancelled"
