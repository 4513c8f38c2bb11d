"""Reminders end to end: asked for in the chat, pushed through Telegram at their time, snoozed, repeated, restarted."""
from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bot.commands.runner import Commands
from bot.conversation.engine import Button, Engine, EngineConfig, Incoming
from bot.llm.writer import LLMWriter
from memory.ledgers.outbox import ButtonRows
from memory.models import Scope
from memory.store import MemoryStore
from scheduler.checkin import gather
from scheduler.reminder_times import next_due, snooze_until
from scheduler.service import Scheduler
from tests.fakes.llm import ScriptedLLM
from tests.test_scheduler import BERLIN, Clock, background_model, drive, on_telegram
from tests.test_telegram import buttons, exchange, press

pytestmark = pytest.mark.both_backends("reminders fired once")

WEDNESDAY = datetime(2026, 11, 25, 14, 30, tzinfo=BERLIN)


@pytest.fixture
async def world(store: MemoryStore) -> AsyncIterator[tuple[Engine, Commands, ScriptedLLM, Clock]]:
    clock = Clock(WEDNESDAY.timestamp())
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    background.responder = background_model(None)  # type: ignore[assignment]
    engine = Engine(store, chat, background, EngineConfig(zone=BERLIN), clock=clock)
    yield engine, Commands(engine), chat, clock
    await engine.close()


async def ask(engine: Engine, text: str, user: str = "anna") -> tuple[str, ...]:
    reply = await engine.handle(Incoming(user, text))
    assert reply is not None
    await engine.drain()
    return reply.bubbles


async def test_a_request_is_confirmed_by_the_program_not_the_model(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat, clock = world
    reply = await engine.handle(Incoming("anna", "Erinnere mich morgen um 9 an den Zahnarzt"))
    assert reply is not None and reply.bubbles == ("⏰ Ich erinnere dich am Do, 26.11. um 09:00 an: Zahnarzt",)
    scope = await engine.scope_for("anna")
    [reminder] = await store.reminders.active(scope)
    assert reply.buttons == ((Button("✖ Löschen", f"rem:cancel:{reminder.id}"),),)
    assert reminder.due_at.astimezone(BERLIN) == datetime(2026, 11, 26, 9, 0, tzinfo=BERLIN)
    assert chat.calls == [], "the model only answers when there is no reminder"
    assert [m.role for m in await store.messages.recent(scope)] == ["user", "assistant"]


async def test_english_and_relative_times(store: MemoryStore) -> None:
    engine = Engine(store, ScriptedLLM(), ScriptedLLM(), EngineConfig(language="en", zone=BERLIN),
                    clock=Clock(WEDNESDAY.timestamp()))
    assert await ask(engine, "remind me in two hours to water the plants") == (
        "⏰ I'll remind you on Wed, 25 Nov at 16:30: water the plants",)
    assert await ask(engine, "every Monday at 8 remind me to stretch") == (
        "⏰ I'll remind you every Monday at 08:00: stretch",)
    await engine.close()


async def test_an_unclear_time_is_asked_back_and_the_answer_completes_it(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat, clock = world
    assert await ask(engine, "Erinnere mich morgen an den Zahnarzt") == (
        "Wann genau soll ich dich erinnern? Zum Beispiel „morgen um 9“ oder „in 2 Stunden“.",)
    assert await ask(engine, "um 9") == ("⏰ Ich erinnere dich am Do, 26.11. um 09:00 an: Zahnarzt",)
    assert await ask(engine, "Erinnere mich übermorgen um 7") == ("Woran soll ich dich erinnern?",)
    assert await ask(engine, "Flug nach Rom") == ("⏰ Ich erinnere dich am Fr, 27.11. um 07:00 an: Flug nach Rom",)
    assert chat.calls == []


async def test_a_statement_is_no_request(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat, clock = world
    chat.enqueue("Schön, dass du so regelmäßig schwimmst!")
    assert await ask(engine, "Jeden Montag um 8 gehe ich schwimmen.") == ("Schön, dass du so regelmäßig schwimmst!",)
    assert await store.reminders.active(await engine.scope_for("anna")) == []


async def test_reminders_lists_and_cancels_only_the_owners(world, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat, clock = world
    await ask(engine, "Erinnere mich jeden Montag um 8 an das Training")
    await ask(engine, "Erinnere mich in 10 Minuten an den Tee")
    listed = await commands.run("anna", "/reminders")
    assert listed is not None
    scope = await engine.scope_for("anna")
    tea, training = await store.reminders.active(scope)
    assert listed.bubbles[0].splitlines() == ["Deine Erinnerungen:", f"#{tea.id} am Mi, 25.11. um 14:40 – Tee",
                                              f"#{training.id} jeden Montag um 08:00 – Training"]
    cancel = listed.buttons[1][0]
    assert cancel.data == f"rem:cancel:{training.id}"
    assert (await commands.press("bob", cancel.data)).notice == "Diese Auswahl gibt es nicht (mehr)."
    assert (await commands.press("anna", cancel.data)).notice == "Gelöscht: ⏰ Training"
    assert [r.text for r in await store.reminders.active(scope)] == ["Tee"]
    assert (await commands.press("anna", cancel.data)).notice == "Diese Auswahl gibt es nicht (mehr)."
    assert (await commands.run("bob", "/reminders")).bubbles[0].startswith("Du hast gerade keine Erinnerungen")  # type: ignore[union-attr]


async def test_pushed_through_telegram_at_its_time_snoozed_and_pushed_again(store: MemoryStore, tmp_path: Path) -> None:
    clock = Clock(WEDNESDAY.timestamp())
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    background.responder = background_model(None)  # type: ignore[assignment]
    async with on_telegram(store, tmp_path, clock, chat, background,
                           silence=timedelta(hours=48)) as (tg, engine, scheduler):
        [confirm] = await exchange(tg, "Erinnere mich morgen um 9 an den Zahnarzt", user=42)
        assert confirm["text"] == "⏰ Ich erinnere dich am Do, 26.11. um 09:00 an: Zahnarzt"
        scope = await engine.scope_for("tg:42")
        [reminder] = await store.reminders.active(scope)

        await drive(scheduler, clock, datetime(2026, 11, 26, 8, 45, tzinfo=BERLIN))
        assert len(tg.sent) == 1, "nothing before its time"
        await drive(scheduler, clock, datetime(2026, 11, 26, 9, 0, tzinfo=BERLIN))
        pushed = tg.sent[-1]
        assert pushed["text"] == "⏰ Zahnarzt"
        assert buttons(pushed) == [[("💤 10 Min.", f"rem:snooze:10m:{reminder.id}"),
                                    ("💤 1 Std.", f"rem:snooze:1h:{reminder.id}"),
                                    ("💤 Morgen", f"rem:snooze:tomorrow:{reminder.id}")]]

        answer = await press(tg, pushed["message_id"], f"rem:snooze:10m:{reminder.id}", user=42, edits=1)
        assert answer["text"] == "💤 Ich erinnere dich am Do, 26.11. um 09:10 wieder."
        assert tg.edits[-1]["text"] == "⏰ Zahnarzt\n💤 Ich erinnere dich am Do, 26.11. um 09:10 wieder."
        await drive(scheduler, clock, datetime(2026, 11, 26, 10, 0, tzinfo=BERLIN))
    assert [m["text"] for m in tg.sent[1:]] == ["⏰ Zahnarzt", "⏰ Zahnarzt"], "pushed again after the snooze, once"
    assert [(i.kind, i.status) for i in await store.outbox.items(scope)] == [("reminder", "sent")] * 2
    assert (await store.reminders.get(scope, reminder.id)).status == "done"
    facts = await gather(store, scope, clock.now, BERLIN, timedelta(hours=48))
    assert facts.last_proactive is None and not facts.proactive_unanswered, "reminders leave the check-in budget alone"


class ButtonSender:
    """A channel that records what it delivered, with the buttons."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, ButtonRows]] = []

    async def deliver(self, scope: Scope, text: str, *, buttons: ButtonRows = ()) -> bool:
        self.sent.append((text, buttons))
        return True


async def test_a_weekly_reminder_survives_a_restart(store: MemoryStore, tmp_path: Path) -> None:
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.asyncio import AsyncIOScheduler
    from apscheduler.triggers.date import DateTrigger

    scope = await store.scope("mnemo", "tg:1")
    await store.messages.add(scope, "user", "Erinnere mich jeden Montag um 8 an das Training")
    first = datetime.now(BERLIN).replace(microsecond=0) + timedelta(hours=1)
    reminder = await store.reminders.add(scope, "Training", first.timestamp(), "weekly")
    writer, chat = LLMWriter(ScriptedLLM()), ScriptedLLM()
    engine = Engine(store, chat, chat, EngineConfig(zone=BERLIN))
    before = Scheduler(store, "mnemo", writer, engine, ButtonSender(), BERLIN, tmp_path)
    await before.start()
    await before.stop()
    await asyncio.sleep(0.1)

    # While mnemo was down, the reminder's time passed: move it and its stored job into the past
    # (straight in the job store: a second scheduler in this process would run the job itself).
    missed = datetime.now(BERLIN).replace(microsecond=0) - timedelta(minutes=30)
    async with store.db.transaction() as tx:
        await tx.execute("UPDATE reminders SET due_at = ? WHERE id = ?", (missed.timestamp(), reminder.id))
    jobstore = SQLAlchemyJobStore(url=before.jobs_url)
    jobstore.start(AsyncIOScheduler(), "default")
    job = jobstore.lookup_job(f"reminder:{reminder.id}")
    assert job is not None, "the reminder's job was stored"
    job._modify(trigger=DateTrigger(run_date=missed, timezone=BERLIN), next_run_time=missed)  # noqa: SLF001
    jobstore.update_job(job)
    jobstore.shutdown()

    sender = ButtonSender()
    after = Scheduler(store, "mnemo", writer, engine, sender, BERLIN, tmp_path)
    await after.start()
    try:
        for _ in range(50):
            moved = await store.reminders.get(scope, reminder.id)
            job = after._aps.get_job(f"reminder:{reminder.id}") if after._aps else None  # noqa: SLF001
            if sender.sent and job is not None and job.next_run_time > datetime.now(BERLIN):
                break
            await asyncio.sleep(0.1)
        late = f"(verspätet – fällig war {missed:%H:%M})" if missed.date() == datetime.now(BERLIN).date() \
            else f"(verspätet – fällig war {missed:%d.%m. %H:%M})"
        assert [text for text, _ in sender.sent] == [f"⏰ Training\n{late}"], "the missed one once, late, no burst"
        assert sender.sent[0][1][-1] == (("✖ Nicht mehr erinnern", f"rem:cancel:{reminder.id}"),)
        assert moved.status == "active" and moved.due_at.astimezone(BERLIN) == missed + timedelta(days=7)
        assert job is not None and job.next_run_time == moved.due_at
        tea = await store.reminders.add(scope, "Tee", time.time() + 3600)
        assert after._aps is not None and after._aps.get_job(f"reminder:{tea.id}") is not None  # noqa: SLF001
        await store.reminders.cancel(scope, tea.id)
        assert after._aps.get_job(f"reminder:{tea.id}") is None, "a cancelled reminder's job is gone"  # noqa: SLF001
    finally:
        await after.stop()
        await engine.close()
    await asyncio.sleep(0.1)
    assert len(sender.sent) == 1


def test_next_due_keeps_the_wall_clock_across_the_dst_change() -> None:
    monday = datetime(2026, 3, 23, 8, 0, tzinfo=BERLIN)  # the clocks go forward on Sunday the 29th
    following = next_due(monday, "weekly", monday, BERLIN)
    assert following is not None and following.strftime("%Y-%m-%d %H:%M %Z") == "2026-03-30 08:00 CEST"
    assert following.timestamp() - monday.timestamp() == 7 * 86400 - 3600
    late = next_due(monday, "daily", datetime(2026, 4, 2, 12, 0, tzinfo=BERLIN), BERLIN)
    assert late is not None and late.strftime("%Y-%m-%d %H:%M") == "2026-04-03 08:00", "missed days are skipped"
    assert next_due(monday, "", monday, BERLIN) is None


def test_snooze_times() -> None:
    saturday = datetime(2026, 3, 28, 21, 0, tzinfo=BERLIN)
    due = datetime(2026, 3, 28, 9, 0, tzinfo=BERLIN)
    assert snooze_until("10m", saturday, due, BERLIN).strftime("%H:%M") == "21:10"
    assert snooze_until("tomorrow", saturday, due, BERLIN).strftime("%Y-%m-%d %H:%M %Z") == "2026-03-29 09:00 CEST"
    night = datetime(2026, 3, 29, 1, 30, tzinfo=BERLIN)
    assert snooze_until("1h", night, due, BERLIN).strftime("%H:%M %Z") == "03:30 CEST", "an hour is an hour"
