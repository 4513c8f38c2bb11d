"""Where Matrix meets the rest, against one real Synapse for the module: the companion's name in a room,
reactions that belong to the person who asked (across a restart), old options taken away, a resend after a
crash dropped by the homeserver, encrypted messages whose key comes late (or never), and '!' in bot texts."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any
from uuid import uuid4

import pytest
from nio import (
    Api,
    Event,
    MegolmEvent,
    ReactionEvent,
    RedactionEvent,
    RoomKeyRequest,
    RoomMessageText,
    RoomSendResponse,
    SyncResponse,
    ToDeviceResponse,
)

from bot.admin import ops
from bot.channels.matrix.channel import bang
from bot.channels.matrix.keys import UNREADABLE_AFTER
from bot.channels.matrix.messages import transaction_id, with_bang_commands
from bot.channels.matrix.rooms import Received, Route, from_inbox, inbox_payload, still_encrypted
from bot.commands.runner import reply_record
from bot.exchange import Reply
from bot.llm.port import ToolCall
from bot.texts import t
from memory.account.companions import Companion
from tests import test_matrix_polish as polish
from tests.test_matrix import Human, running
from tests.test_matrix_polish import Bot, quiet

ON_ONE_SYNAPSE = pytest.mark.asyncio(loop_scope="module")  # one homeserver for the whole module
syn, store, bot = polish.syn, polish.store, polish.bot  # the same fixtures: a Synapse for this module


# --- pure parts -------------------------------------------------------------------------------------


def test_command_names_are_written_with_an_exclamation_mark() -> None:
    names = ["help", "forget", "people", "memories"]
    text = "Mit /help siehst du alles (/forget 3); /people. Nicht: https://x.org/help, /helper, a/help, ~/forget"
    assert with_bang_commands(text, names) == \
        "Mit !help siehst du alles (!forget 3); !people. Nicht: https://x.org/help, /helper, a/help, ~/forget"
    assert bang(t("de", "pair_usage")).startswith("!pair – offene Anfragen, !pair CODE – freischalten")


def test_a_transaction_id_follows_from_what_is_answered() -> None:
    first = transaction_id("$event", "0", "Hallo")
    assert first == transaction_id("$event", "0", "Hallo") and first.startswith("mnemo.")
    assert len({first, transaction_id("$event", "1", "Hallo"), transaction_id("$other", "0", "Hallo")}) == 3
    assert first.replace(".", "").isalnum()  # safe in a URL path


def test_an_encrypted_event_is_kept_until_it_can_be_read() -> None:
    source = {"type": "m.room.encrypted", "event_id": "$1", "sender": "@anna:x", "origin_server_ts": 1,
              "content": {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgA", "sender_key": "k",
                          "session_id": "s", "device_id": "D"}}
    event = Event.parse_event(source)
    assert isinstance(event, MegolmEvent)
    payload = inbox_payload(Received("!r:x", event, Route("private", "@anna:x")))
    back = from_inbox(payload or "null")
    assert back is not None and isinstance(back.event, MegolmEvent) and back.event.room_id == "!r:x"
    assert still_encrypted([payload, None, '{"event": {"type": "m.room.message"}}']) == 1
    assert inbox_payload(Received("!r:x", event, Route("stranger", "@anna:x"))) is None


# --- helpers ------------------------------------------------------------------------------------------


def bot_reaction(bot: Bot, to: str) -> Callable[[Event], bool]:
    return lambda e: isinstance(e, ReactionEvent) and e.sender == bot.bot_id and e.reacts_to == to


def redaction_by(bot: Bot) -> Callable[[Event], bool]:
    return lambda e: isinstance(e, RedactionEvent) and e.sender == bot.bot_id


async def question_with_reactions(human: Human, room: str, bot: Bot,
                                  messages: int = 2) -> tuple[RoomMessageText, set[str]]:
    """The last of the bot's `messages` messages (the question) and the ids of the 👍/👎 it put under it."""
    events = await human.wait_for(room, lambda e: bot.said(e) or (isinstance(e, ReactionEvent)
                                                                  and e.sender == bot.bot_id), count=messages + 2)
    question = [e for e in events if bot.said(e)][-1]
    assert isinstance(question, RoomMessageText)
    reactions = {e.event_id: e.key for e in events if isinstance(e, ReactionEvent) and e.reacts_to == question.event_id}
    assert sorted(reactions.values()) == ["👍", "👎"]
    return question, set(reactions)


async def recorded(read: Callable[[], Awaitable[list[Any]]], seconds: float = 5.0) -> list[Any]:
    """What `read` finds, once it finds something (the bot records a choice right after its reactions)."""
    deadline = time.monotonic() + seconds
    while not (found := await read()) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return found


async def react(human: Human, room: str, event_id: str, key: str) -> None:
    content = {"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}}
    assert isinstance(await human.client.room_send(room, "m.reaction", content), RoomSendResponse)


async def texts_from(human: Human, room: str, bot: Bot, count: int = 1) -> list[str]:
    return [e.body for e in await human.wait_for(room, bot.said, count=count)]  # type: ignore[attr-defined]


# --- rooms: the companion's name, who decides ----------------------------------------------------------


@ON_ONE_SYNAPSE
async def test_in_a_room_the_companions_name_is_a_mention_and_a_choice_belongs_to_who_asked(bot: Bot) -> None:
    anna, eve = await bot.person("Anna"), await bot.person("Eve")
    await bot.store.companions.add(Companion("mnemo", "Lotte", None, "friend"))
    family = await anna.open_group(bot.bot_id, eve.user_id)
    await eve.client.join(family)
    group = await bot.engine.scope_for(f"mx:group:{family}")
    fact = await bot.store.profile.propose(group, "plans", "Ausflug", "Samstag in den Zoo")
    settings: dict[str, Any] = {"allowed_users": frozenset({anna.user_id}), "admins": frozenset({anna.user_id}),
                                "allowed_rooms": frozenset({family})}
    async with running(bot.channel(**settings)) as channel:
        await anna.wait_for(family, bot.joined)
        assert channel.client is not None
        await channel.client.set_displayname("Hausgeist")  # neither the account's name nor its localpart is Mnemo
        await anna.wait_for(family, lambda e: getattr(e, "state_key", None) == bot.bot_id
                            and e.source["content"].get("displayname") == "Hausgeist")

        bot.chat.enqueue("Kino, eindeutig.")
        asked = await eve.say(family, "Mnemo: Kino oder Park?")  # the configured companion name
        [answer] = await anna.wait_for(family, bot.said)
        assert answer.body == "Kino, eindeutig."  # type: ignore[attr-defined]
        assert answer.source["content"]["m.relates_to"] == {"m.in_reply_to": {"event_id": asked}}
        assert await quiet(anna, family, bot, 0.5) == []  # Eve is no admin: her message asks the room nothing
        bot.chat.enqueue("Gern.")
        await anna.say(family, "Lotte, kommst du mit?")  # the companion record's name
        question, reactions = await question_with_reactions(anna, family, bot)
        assert question.body == t("de", "profile_question_group", fact="Ausflug: Samstag in den Zoo") + \
            "\n\nReagiere mit: 👍 Ja · 👎 Nein"  # the group is asked, and told what the reactions do
        [choice] = await recorded(lambda: bot.store.choices.of_question(group, f"profile:{fact.id}"))
        assert (choice.owner, choice.message_ref, set(choice.extra["reactions"])) == (
            anna.user_id, question.event_id, reactions)

        await react(eve, family, question.event_id, "👍")  # Eve was not asked
        assert await texts_from(anna, family, bot) == [t("de", "choice_not_yours")]
        assert await bot.store.profile.is_pending(group, fact.id)
        bot.chat.enqueue("Eve, das entscheidet Anna.")
        await eve.say(family, "Mnemo: ja")  # nor does her typed yes: she is no admin, and was not asked
        assert await texts_from(anna, family, bot) == ["Eve, das entscheidet Anna."]
        assert await bot.store.profile.is_pending(group, fact.id)

    async with running(bot.channel(**settings)):  # a restart: the choice is still open, and still Anna's
        await react(anna, family, question.event_id, "👍")
        events = await anna.wait_for(family, lambda e: bot.said(e) or redaction_by(bot)(e), count=3)
        assert [e.body for e in events if bot.said(e)] == ["👤 Gemerkt: Ausflug: Samstag in den Zoo"]  # type: ignore[attr-defined]
        assert {e.redacts for e in events if isinstance(e, RedactionEvent)} == reactions  # the options are gone
        await react(anna, family, question.event_id, "👎")  # an old option decides nothing
        assert await quiet(anna, family, bot) == []
    assert not await bot.store.profile.is_pending(group, fact.id)
    assert [(p.key, p.value) for p in await bot.store.profile.list(group)] == [("Ausflug", "Samstag in den Zoo")]
    assert await bot.store.choices.find("matrix", question.event_id) is None
    assert len(bot.chat.calls) == 3


@ON_ONE_SYNAPSE
async def test_a_member_who_is_no_admin_cannot_decide_with_a_reaction_what_changes_memory(bot: Bot) -> None:
    anna, eve = await bot.person("Anna"), await bot.person("Eve")
    family = await anna.open_group(bot.bot_id, eve.user_id)
    await eve.client.join(family)
    group = await bot.engine.scope_for(f"mx:group:{family}")
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}), admins=frozenset({anna.user_id}),
                                   allowed_rooms=frozenset({family}))):
        await anna.wait_for(family, bot.joined)
        bot.chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Immer auf Englisch antworten."})])
        bot.chat.enqueue("Mal sehen.")
        await eve.say(family, "Mnemo: sprich ab jetzt Englisch mit uns")
        question, _ = await question_with_reactions(eve, family, bot)
        [rule] = await bot.store.rules.list(group, "pending")
        await react(eve, family, question.event_id, "👍")  # Eve asked, but the room's rules are the admins'
        assert await texts_from(eve, family, bot) == [t("de", "group_admins_only")]
        assert [r.id for r in await bot.store.rules.list(group, "pending")] == [rule.id]
        assert await bot.store.rules.list(group, "active") == []
        choice = await bot.store.choices.find("matrix", question.event_id)
        assert choice is not None and choice.owner is None  # still open: a member who is no admin owns nothing
        await react(anna, family, question.event_id, "👍")  # so any admin may answer it
        assert await texts_from(eve, family, bot) == ["📌 Gemerkt: Immer auf Englisch antworten."]
    assert [r.id for r in await bot.store.rules.list(group, "active")] == [rule.id]


# --- a direct room: a typed answer takes the options away ---------------------------------------------


@ON_ONE_SYNAPSE
async def test_a_typed_answer_takes_the_reactions_of_its_question_away(bot: Bot) -> None:
    anna = await bot.person("Anna")
    async with running(bot.channel(allowed_users=frozenset({anna.user_id}))):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        bot.chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Kürzer antworten."})])
        bot.chat.enqueue("Verstanden.")
        await anna.say(room, "Du schreibst mir zu viel.")
        question, reactions = await question_with_reactions(anna, room, bot)
        await anna.say(room, "ja")
        events = await anna.wait_for(room, lambda e: bot.said(e) or redaction_by(bot)(e), count=3)
        assert [e.body for e in events if bot.said(e)] == ["📌 Gemerkt: Kürzer antworten."]  # type: ignore[attr-defined]
        assert {e.redacts for e in events if isinstance(e, RedactionEvent)} == reactions
        await react(anna, room, question.event_id, "👎")  # the old option decides nothing
        assert await quiet(anna, room, bot) == []
    scope = await bot.engine.scope_for(anna.user_id)
    assert [r.text for r in await bot.store.rules.list(scope, "active")] == ["Kürzer antworten."]
    assert len(bot.chat.calls) == 2


# --- a resend after a crash ------------------------------------------------------------------------------


@ON_ONE_SYNAPSE
async def test_a_reply_sent_but_not_recorded_before_a_crash_is_not_shown_twice(bot: Bot) -> None:
    anna = await bot.person("Anna")
    allowed = frozenset({anna.user_id})
    bot.chat.enqueue("Gut, und dir?")
    async with running(bot.channel(allowed_users=allowed)) as channel:
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        asked = await anna.say(room, "Wie geht's?")
        message, reply = await anna.wait_for(room, lambda e: getattr(e, "event_id", None) == asked or bot.said(e),
                                             count=2)
        # The homeserver keeps one event per transaction id of a device.
        once = await channel.out.text(room, "Einmal.", txn=transaction_id("$test", "0"))
        assert await channel.out.text(room, "Einmal.", txn=transaction_id("$test", "0")) == once
        assert [e.event_id for e in await anna.wait_for(room, bot.said)] == [once]
    async with bot.store.db.reading() as tx:  # its place in the room's order: the homeserver's time, as recorded
        assert (await tx.fetchone("SELECT sent_order FROM inbox WHERE event_id = ?", (asked,)))[0] \
            == message.server_timestamp
    payload = inbox_payload(Received(room, message, Route("private", anna.user_id)))
    async with bot.store.db.transaction() as tx:  # as if the process died after the send, before recording it
        await tx.execute("UPDATE inbox SET handled_at = NULL, payload = ?, shown = '[]' WHERE event_id = ?",
                         (payload, asked))
    async with running(bot.channel(allowed_users=allowed)):  # the replay sends the same reply again
        assert await quiet(anna, room, bot, 1.5) == []  # ... and Synapse drops it
    async with bot.store.db.reading() as tx:
        row = await tx.fetchone("SELECT handled_at FROM inbox WHERE event_id = ?", (asked,))
    assert row[0] is not None and len(bot.chat.calls) == 1 and reply.body == "Gut, und dir?"  # type: ignore[attr-defined]


@ON_ONE_SYNAPSE
async def test_a_command_replayed_after_a_crash_runs_once_and_its_answer_is_not_shown_twice(bot: Bot) -> None:
    anna = await bot.person("Anna")
    scope = await bot.engine.scope_for(anna.user_id)
    for text in ("Anna mag Parks.", "Anna hat einen Hund.", "Anna spielt Cello."):
        await bot.store.notes.add(scope, text)
    allowed = frozenset({anna.user_id})
    async with running(bot.channel(allowed_users=allowed)):
        room = await anna.open_dm(bot.bot_id)
        await anna.wait_for(room, bot.joined)
        asked = await anna.say(room, "!undo")
        message, answer = await anna.wait_for(room, lambda e: getattr(e, "event_id", None) == asked or bot.said(e),
                                              count=2)
    assert answer.body.startswith(t("de", "undo_done"))  # type: ignore[attr-defined]
    kept = [n.text for n in await bot.store.notes.list(scope)]
    assert kept == ["Anna hat einen Hund.", "Anna mag Parks."]
    payload = inbox_payload(Received(room, message, Route("private", anna.user_id)))
    for killed in ("after the answer was delivered", "after the answer was recorded, before it was delivered"):
        async with bot.store.db.transaction() as tx:  # the event is not handled yet
            await tx.execute("UPDATE inbox SET handled_at = NULL, payload = ?, shown = '[]' WHERE event_id = ?",
                             (payload, asked))
        if killed.endswith("delivered"):
            await bot.store.runs.answer(scope, "matrix", asked, reply_record(Reply((answer.body,))))  # type: ignore[attr-defined]
        async with running(bot.channel(allowed_users=allowed)):
            assert await quiet(anna, room, bot, 1.5) == [], killed  # not run again, and not shown twice
        assert [n.text for n in await bot.store.notes.list(scope)] == kept, killed


# --- encrypted messages whose key comes late, or never -----------------------------------------------------


async def send_keeping_the_key(anna: Human, room: str, text: str, key: list[dict[str, Any]] | None) -> str:
    """Send an encrypted message with a new megolm session whose key (an m.room_key for the bot's device)
    is held back in `key` to be delivered later, or lost when `key` is None."""
    client = anna.client
    assert client.olm is not None
    if not client.rooms[room].members_synced:
        await client.joined_members(room)
    if client.should_query_keys:
        await client.keys_query()
    if missing := client.get_missing_sessions(room):
        await client.keys_claim(missing)
    client.olm.create_outbound_group_session(room)
    held = [message for _with, message in client.olm.share_group_session_parallel(
        room, list(client.rooms[room].users), ignore_unverified_devices=True)]
    assert held, "no device of the bot to share the key with"
    if key is not None:
        key += held
    client.olm.outbound_group_sessions[room].shared = True
    event_type, content = client.encrypt(room, "m.room.message", {"msgtype": "m.text", "body": text})
    method, path, data = Api.room_send(client.access_token, room, event_type, content, uuid4())
    sent = await client._send(RoomSendResponse, method, path, data, (room,))
    assert isinstance(sent, RoomSendResponse), sent
    return str(sent.event_id)


async def deliver(anna: Human, key: list[dict[str, Any]]) -> None:
    """Deliver the held-back key messages (to-device m.room.encrypted, as the sharing client sends them)."""
    for message in key:
        method, path, data = Api.to_device(anna.client.access_token, "m.room.encrypted", message, uuid4())
        assert isinstance(await anna.client._send(ToDeviceResponse, method, path, data, (None,)), ToDeviceResponse)


async def key_request_from(anna: Human, sender: str, seconds: float = 10.0) -> RoomKeyRequest:
    """Sync Anna's client until a request for a room key from `sender` arrives."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        response = await anna.client.sync(timeout=1000)
        assert isinstance(response, SyncResponse), response
        found = [e for e in response.to_device_events if isinstance(e, RoomKeyRequest) and e.sender == sender]
        if found:
            return found[0]
    raise AssertionError("no key request arrived")


async def unhandled(bot: Bot, settles_at: int | None = None, seconds: float = 5.0) -> int:
    """Events in the inbox not handled yet (waiting a moment for the count to reach `settles_at`)."""
    deadline = time.monotonic() + seconds
    while True:
        async with bot.store.db.reading() as tx:
            count = int((await tx.fetchone("SELECT count(*) FROM inbox WHERE handled_at IS NULL"))[0])
        if settles_at is None or count == settles_at or time.monotonic() > deadline:
            return count
        await asyncio.sleep(0.05)  # the event is marked handled right after its answer is sent


async def doctor_line(bot: Bot) -> str:
    settings = bot.settings.model_copy(update={"embedding_model": "tests.fakes.embedder:FakeEmbedder"})
    checks = await ops.doctor(settings, check_model=False)
    [check] = [c for c in checks if c.name == "matrix encrypted events"]
    return check.detail


@ON_ONE_SYNAPSE
async def test_an_encrypted_message_is_answered_when_its_key_comes_late_and_told_when_it_never_comes(bot: Bot) -> None:
    anna = await bot.person("Anna", store=True)
    allowed = frozenset({anna.user_id})
    async with running(bot.channel(allowed_users=allowed, encryption=True)):
        room = await anna.open_dm(bot.bot_id, encrypted=True)
        await anna.wait_for(room, bot.joined)
        key: list[dict[str, Any]] = []
        secret = await send_keeping_the_key(anna, room, "Mein Geheimnis: ich heiße Evelyn.", key)
        request = await key_request_from(anna, bot.bot_id)  # the bot asks the sender for the key
        assert request.session_id == anna.client.olm.outbound_group_sessions[room].id  # type: ignore[union-attr]
        assert await quiet(anna, room, bot) == [] and await unhandled(bot) == 1
    assert await doctor_line(bot) == "waiting for their key: 1; given up: 0"

    bot.chat.enqueue("Schön, Evelyn.")
    async with running(bot.channel(allowed_users=allowed, encryption=True)):  # kept across a restart
        await deliver(anna, key)  # the key comes after all
        [reply] = await anna.wait_for(room, bot.said)
        assert isinstance(reply, RoomMessageText) and reply.decrypted and reply.body == "Schön, Evelyn."
        assert "Mein Geheimnis: ich heiße Evelyn." in bot.chat.calls[-1].prompt
        assert await unhandled(bot, settles_at=0) == 0

        lost = await send_keeping_the_key(anna, room, "Das hier kommt nie an.", None)
        await key_request_from(anna, bot.bot_id)
        assert await quiet(anna, room, bot) == []
        bot.clock.offset += UNREADABLE_AFTER + 1  # minutes later, the key has still not come
        await anna.client.room_typing(room, True)  # anything that wakes the bot's sync
        [told] = await anna.wait_for(room, bot.said)
        assert told.body == t("de", "matrix_undecryptable")  # type: ignore[attr-defined]
        assert told.source["content"]["m.relates_to"] == {"m.in_reply_to": {"event_id": lost}}
        assert await unhandled(bot, settles_at=0) == 0 and await quiet(anna, room, bot) == []
    scope = await bot.engine.scope_for(anna.user_id)
    assert [m.text for m in await bot.store.messages.recent(scope) if m.role == "user"] == [
        "Mein Geheimnis: ich heiße Evelyn."]
    assert len(bot.chat.calls) == 1 and secret != lost
    assert await doctor_line(bot) == "waiting for their key: 0; given up: 1"  # the operator still sees it


@ON_ONE_SYNAPSE
async def test_mnemo_doctor_leaves_no_device_behind(bot: Bot) -> None:
    """The doctor's Matrix check uses the saved session, or logs its own device out again: no pile of devices."""
    import nio

    async def devices() -> list[str]:
        client = nio.AsyncClient(bot.syn.url, bot.bot_id)
        try:
            await client.login(bot.settings.matrix_password or "", device_name="counting")
            found = await client.devices()
            names = [d.display_name for d in found.devices if d.display_name != "counting"]
            await client.logout()
            return names
        finally:
            await client.close()

    settings = bot.settings.model_copy(update={"embedding_model": "tests.fakes.embedder:FakeEmbedder"})
    before = await devices()
    for _ in range(2):  # without a saved session: a password login, logged out again
        checks = await ops.doctor(settings, check_model=False)
        assert any(c.name == "matrix" and c.ok for c in checks)
    async with running(bot.channel()):  # the running bot saves its session; the doctor then uses it
        pass
    with_session = await devices()
    checks = await ops.doctor(settings, check_model=False)
    assert any(c.name == "matrix" and c.ok for c in checks)
    assert await devices() == with_session and with_session.count("mnemo-doctor") == before.count("mnemo-doctor") == 0


class RecordingClient:
    """Just enough of nio's AsyncClient for sending: it records each room_send and answers like a homeserver."""

    def __init__(self) -> None:
        self.rooms: dict[str, Any] = {}
        self.olm = None
        self.sent: list[dict[str, Any]] = []

    async def room_send(self, room_id: str, message_type: str, content: dict[str, Any], tx_id: str,
                        ignore_unverified_devices: bool = False) -> RoomSendResponse:
        self.sent.append(content)
        return RoomSendResponse(f"$sent{len(self.sent)}", room_id)


async def test_a_matrix_preview_replayed_after_a_crash_goes_on_from_the_words_it_showed(store) -> None:  # type: ignore[no-untyped-def]
    """What a preview showed is recorded with its event id; a replay keeps those words until the new text is longer."""
    from bot.channels.matrix.outgoing import Outgoing
    from bot.channels.shown import Shown

    inbox = store.inbox
    await inbox.record("matrix", [("$anna-1", "{}")], time.time())
    first = Shown(inbox, "matrix", "$anna-1")
    await first.put(0, "$preview", "Hallo Anna, heute war ein langer")  # shown when the process was killed
    earlier = Shown(inbox, "matrix", "$anna-1", await inbox.shown("matrix", "$anna-1"),
                    await inbox.shown_texts("matrix", "$anna-1"))
    client = RecordingClient()
    preview = Outgoing(client).preview("!room", None, False, earlier)  # type: ignore[arg-type]
    assert preview.handle == "$preview" and preview.shown == "Hallo Anna, heute war ein langer"
    await preview.update("Hallo Anna, heute")  # the replayed model is not there yet: nothing goes back
    await asyncio.sleep(0.05)
    assert client.sent == []
    await preview.update("Hallo Anna, heute war ein langer Tag, oder?")
    await asyncio.sleep(0.05)
    await preview.close()
    assert [c["m.new_content"]["body"] for c in client.sent] == ["Hallo Anna, heute war ein langer Tag, oder?"]
    assert await inbox.shown_texts("matrix", "$anna-1") == ["Hallo Anna, heute war ein langer Tag, oder?"]
