"""Issue 52's one way out: everything the companion sends is logged with its kind, and a typed answer (to a yes/no
question, to a reminder asked back) counts only as the person's very next message with nothing of the companion's
in between and within the hour. Forwarded words never become the person's request or fact."""
from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from bot.conversation.engine import Engine, Incoming
from bot.conversation.help_lines import crisis_help
from bot.learning.extraction import accept, accept_people, accept_profile, accept_topics, transcript
from bot.texts import t
from memory import Message, NotFound, Scope
from memory.store import MemoryStore
from scheduler.delivery import OutboxSender
from scheduler.reminder_pushes import push_due
from tests.engine_kit import make_engine
from tests.fakes.llm import ScriptedLLM
from tests.test_engine_seams import Clock, ask_rule, background_llm

BERLIN = ZoneInfo("Europe/Berlin")
NOON = datetime(2026, 11, 30, 12, 0, tzinfo=BERLIN)


class Pushed:
    """The channel side of the outbox: what reached the person."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def deliver(self, scope: Scope, text: str, *, buttons: object = ()) -> bool:
        self.texts.append(text)
        return True


async def setup(store: MemoryStore) -> tuple[Engine, ScriptedLLM, Clock, OutboxSender, Pushed, Scope]:
    chat, clock, pushed = ScriptedLLM("chat"), Clock(NOON), Pushed()
    engine = make_engine(store, chat, clock=clock, background=background_llm())
    outbox = OutboxSender(store, pushed, clock, BERLIN)
    return engine, chat, clock, outbox, pushed, await engine.scope_for("anna")


async def fire_reminder(store: MemoryStore, outbox: OutboxSender, clock: Clock, scope: Scope, text: str) -> None:
    """A reminder set earlier comes due now and goes out (recorded, sent, logged)."""
    await store.reminders.add(scope, text, clock.now - 1, "", now=clock.now - 3600)
    assert await push_due(store, outbox, scope, clock.now, BERLIN, "de") == 1


async def test_a_reminder_between_the_rule_question_and_ok_leaves_the_rule_to_its_buttons(store: MemoryStore) -> None:
    """The issue's drive: a rule question open, '⏰ Tabletten' fires, the person answers the reminder with 'ok'."""
    engine, chat, clock, outbox, pushed, scope = await setup(store)
    await ask_rule(engine, chat)
    clock.now += 60
    await fire_reminder(store, outbox, clock, scope, "Tabletten")
    assert pushed.texts and "Tabletten" in pushed.texts[-1]
    chat.enqueue("Gut, dass du sie genommen hast.")
    reply = await engine.handle(Incoming("anna", "ok"))
    assert reply is not None and reply.bubbles == ("Gut, dass du sie genommen hast.",)  # the model's, no "📌 Gemerkt"
    assert await store.rules.list(scope, "active") == []
    assert (await store.rules.pending(scope)) is not None and await engine.open_question(scope) is not None
    kinds = [m.kind for m in await store.messages.recent(scope, 10) if m.role == "assistant"]
    assert kinds == ["reply", "reminder", "reply"]
    await engine.close()


async def test_every_kind_of_push_between_question_and_yes_leaves_it_to_the_buttons(store: MemoryStore) -> None:
    for kind in ("morning", "date", "diary", "checkin", "notice"):
        engine, chat, clock, outbox, _, scope = await setup(store)
        await ask_rule(engine, chat, user="anna")
        clock.now += 60
        assert await outbox.deliver(scope, f"eine Nachricht ({kind})", kind=kind)
        chat.enqueue("Schön.")
        reply = await engine.handle(Incoming("anna", "ja"))
        assert reply is not None and reply.bubbles == ("Schön.",), kind
        assert await store.rules.list(scope, "active") == [], kind
        await store.rules.discard_pending(scope, (await store.rules.pending(scope)).id)  # type: ignore[union-attr]
        await engine.close()


async def test_with_nothing_between_a_yes_still_decides_but_not_after_an_hour(store: MemoryStore) -> None:
    engine, chat, clock, _, _, scope = await setup(store)
    await ask_rule(engine, chat)
    clock.now += 59 * 60
    reply = await engine.handle(Incoming("anna", "ja"))
    assert reply is not None and "Keine Emojis verwenden." in reply.bubbles[0]
    assert [r.text for r in await store.rules.list(scope, "active")] == ["Keine Emojis verwenden."]
    await engine.close()

    engine, chat, clock, _, _, scope = await setup(store)
    chat.enqueue("[RULE: Kürzer antworten.] Mach ich.")
    await engine.handle(Incoming("anna", "Bitte kürzer"))
    clock.now += 61 * 60
    chat.enqueue("Wie war dein Tag?")
    reply = await engine.handle(Incoming("anna", "ja"))
    assert reply is not None and reply.bubbles == ("Wie war dein Tag?",)  # an hour on: only the buttons decide
    assert [r.text for r in await store.rules.list(scope, "active")] == ["Keine Emojis verwenden."]
    await engine.close()


async def test_an_ask_back_is_not_completed_by_words_after_a_reminder_fired(store: MemoryStore) -> None:
    """The issue's drive: 'Erinnere mich morgen um 9' -> 'Woran …?'; a reminder fires; 'Das Wetter ist heute richtig
    schön' became a reminder '…an: Wetter ist'."""
    engine, chat, clock, outbox, _, scope = await setup(store)
    reply = await engine.handle(Incoming("anna", "Erinnere mich morgen um 9"))
    assert reply is not None and reply.bubbles == (t("de", "reminder_ask_text"),)
    clock.now += 120
    await fire_reminder(store, outbox, clock, scope, "Tabletten")
    chat.enqueue("Oh ja, die Sonne!")
    reply = await engine.handle(Incoming("anna", "Das Wetter ist heute richtig schön"))
    assert reply is not None and reply.bubbles == ("Oh ja, die Sonne!",)
    assert await store.reminders.active(scope) == []
    await engine.close()


async def test_an_ask_back_is_completed_right_after_it_but_not_an_hour_later(store: MemoryStore) -> None:
    engine, chat, clock, _, _, scope = await setup(store)
    await engine.handle(Incoming("anna", "Erinnere mich morgen um 9"))
    clock.now += 300
    reply = await engine.handle(Incoming("anna", "an den Zahnarzt"))
    assert reply is not None and [r.text for r in await store.reminders.active(scope)] == ["Zahnarzt"]
    await engine.handle(Incoming("anna", "Erinnere mich morgen um 10"))
    clock.now += 3601
    chat.enqueue("Und sonst?")
    reply = await engine.handle(Incoming("anna", "an die Post"))
    assert reply is not None and reply.bubbles == ("Und sonst?",)
    assert [r.text for r in await store.reminders.active(scope)] == ["Zahnarzt"]
    await engine.close()


async def test_a_forwarded_reminder_request_is_no_request_of_the_persons(store: MemoryStore) -> None:
    engine, chat, _, _, _, scope = await setup(store)
    chat.enqueue("Das hat dir jemand geschickt, soll ich dich auch erinnern?")
    reply = await engine.handle(Incoming("anna", "Erinnere mich morgen um 9 an den Zahnarzt", forwarded=True))
    assert reply is not None and await store.reminders.active(scope) == []
    await engine.handle(Incoming("anna", "Erinnere mich morgen um 9"))  # asked back ...
    chat.enqueue("Aha.")
    await engine.handle(Incoming("anna", "an den Umzug nach Kuba", forwarded=True))  # ... not completed by a forward
    assert await store.reminders.active(scope) == []
    await engine.close()


async def test_a_replaced_question_is_not_kept_as_rejected(store: MemoryStore) -> None:
    engine, chat, _, _, _, scope = await setup(store)
    await ask_rule(engine, chat)
    first = await store.rules.pending(scope)
    assert first is not None
    chat.enqueue("[RULE: Kürzer antworten.] Mach ich.")
    await engine.handle(Incoming("anna", "Und bitte kürzer"))
    try:
        status = (await store.rules.get(scope, first.id)).status
    except NotFound:
        status = "gone"
    assert status == "gone"  # nobody said no
    await engine.close()


async def test_the_help_text_sent_first_is_logged_after_the_persons_message_with_its_kind(store: MemoryStore) -> None:
    engine, chat, _, _, _, scope = await setup(store)
    said: list[str] = []

    async def say_now(text: str) -> None:
        said.append(text)

    chat.enqueue("Ich bin da. Magst du mir sagen, wo du gerade bist?")
    await engine.handle(Incoming("anna", "Ich will mich heute Nacht umbringen."), say_now=say_now)
    assert said == [crisis_help("DE", "de")]
    logged = await store.messages.recent(scope, 5)
    assert [(m.role, m.kind) for m in logged] == [("user", ""), ("assistant", "help"), ("assistant", "reply")]
    assert logged[1].text == said[0]
    await engine.close()


def forwarded_exchange() -> list[Message]:
    at = NOON
    return [Message(1, "user", "Ich ziehe nächsten Monat nach Kuba.", at, origin="forwarded"),
            Message(2, "user", "Schau mal, was Ben schreibt.", at + timedelta(seconds=5)),
            Message(3, "assistant", "Spannend!", at + timedelta(seconds=9), kind="reply")]


def test_forwarded_words_become_no_fact_profile_topic_or_person_of_the_persons() -> None:
    """The issue's drive: a forwarded 'Ich ziehe nächsten Monat nach Kuba' was stored as a note about the person."""
    messages = forwarded_exchange()
    data = {"facts": [{"text": "Anna zieht nächsten Monat nach Kuba.", "importance": 8, "source_ids": [1]},
                      {"text": "Anna teilt Nachrichten von Ben.", "importance": 2, "source_ids": [1, 2]}],
            "content": [{"text": "Ben zieht nach Kuba.", "source_ids": [1, 3]}],
            "profile": [{"category": "life_events", "key": "umzug", "value": "Kuba", "source_ids": [1]}],
            "topics": [{"text": "Wie war der Umzug?", "due": "2027-01-01T10:00", "source_ids": [1]}],
            "people": [{"name": "Kuba-Freund", "source_ids": [1]}]}
    drafts = accept(data, messages)
    assert [d.text for d in drafts if d.kind == "fact"] == ["Anna teilt Nachrichten von Ben."]
    assert [d.text for d in drafts if d.kind == "content"] == ["Ben zieht nach Kuba."]
    assert accept_profile(data, messages) == []
    assert accept_topics(data, messages, NOON) == []
    assert accept_people(data, messages) == []
    assert "[1] user (forwarded: someone else's words): Ich ziehe" in transcript(messages)


async def test_a_command_answered_between_question_and_yes_leaves_the_question_to_its_buttons(
        store: MemoryStore) -> None:
    from bot.commands.runner import Commands

    engine, chat, clock, _, _, scope = await setup(store)
    await ask_rule(engine, chat)
    clock.now += 30
    listed = await Commands(engine).run("anna", "/memories", channel="telegram", ref="77")
    assert listed is not None  # the companion answered the command
    clock.now += 30
    chat.enqueue("Okay.")
    reply = await engine.handle(Incoming("anna", "ja"))
    assert reply is not None and reply.bubbles == ("Okay.",) and await store.rules.list(scope, "active") == []
    await engine.close()
