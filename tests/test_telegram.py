"""The Telegram channel: the unmodified python-telegram-bot Application against the local fake Bot API."""
from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import signal
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.app import build_channels, telegram_config, until_stopped
from bot.channels.telegram.channel import TelegramChannel, TelegramConfig, telegram_id
from bot.channels.telegram.messages import split_message
from bot.commands.catalog import COMMANDS, menu
from bot.commands.runner import Commands
from bot.conversation.engine import Button, Engine
from bot.errors import ConfigError
from bot.llm.port import ToolCall
from bot.settings import Settings
from bot.texts import t
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.images import jpeg

JSON = dict[str, Any]
USER, OTHER, STRANGER = 42, 43, 666


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_channel(tg: FakeTelegram, engine: Engine, **config: Any) -> TelegramChannel:
    """A channel for the fake; Anna (42) and Ben (43, written the other accepted way) are allowed.

    Replies are not streamed here (one sendMessage per bubble); tests/test_telegram_polish.py streams.
    """
    settings = TelegramConfig(token=tg.token, base_url=tg.base_url, allowed_users=frozenset({str(USER), f"tg:{OTHER}"}),
                              streaming=False)
    return TelegramChannel(engine, Commands(engine), dataclasses.replace(settings, **config))


@pytest.fixture
async def channel(tg: FakeTelegram, engine: Engine) -> AsyncIterator[TelegramChannel]:
    ch = make_channel(tg, engine)
    await ch.start()
    yield ch
    await ch.stop()


async def exchange(tg: FakeTelegram, text: str, user: int = USER, replies: int = 1) -> list[JSON]:
    """Send a text as the user and return the bot's next `replies` messages."""
    before = len(tg.sent)
    tg.send_text(user, text)
    sent = await tg.wait_for_sent(before + replies)
    return sent[before:]


async def press(tg: FakeTelegram, message_id: int, data: str, user: int = USER, edits: int = 0) -> JSON:
    """Press a button and return the callback answer once the press (and its `edits`) is done."""
    answers, edited = len(tg.callback_answers), len(tg.edits)
    tg.press_button(user, message_id, data)
    await tg.wait_until(lambda: len(tg.callback_answers) > answers and len(tg.edits) >= edited + edits,
                        what=f"answer to the press of {data!r}")
    return tg.callback_answers[-1]


def buttons(message: JSON) -> list[list[tuple[str, str]]]:
    """The (label, data) rows of a sent message's inline keyboard."""
    rows = (message.get("reply_markup") or {}).get("inline_keyboard", [])
    return [[(b["text"], b["callback_data"]) for b in row] for row in rows]


async def stored_messages(store: MemoryStore) -> int:
    async with store.db.reading() as tx:
        return int((await tx.fetchone("SELECT count(*) FROM messages"))[0])


# --- polling, chat, typing, menu ----------------------------------------------------------------


async def test_polling_chat_reply_with_typing_and_command_menu(
    tg: FakeTelegram, channel: TelegramChannel, chat: ScriptedLLM, store: MemoryStore, engine: Engine,
) -> None:
    assert tg.commands[("default", "de")] == [{"command": c, "description": d} for c, d in menu("de")]
    assert tg.commands[("default", "en")] == [{"command": c, "description": d} for c, d in menu("en")]
    assert tg.commands[("default", "")] == tg.commands[("default", "de")]  # the configured language

    chat.enqueue("Hallo Anna! <b>Schön</b> *dich* zu sehen & so.")
    (reply,) = await exchange(tg, "Hallo")
    assert reply["chat_id"] == USER and reply["text"] == "Hallo Anna! <b>Schön</b> *dich* zu sehen & so."
    assert reply["parse_mode"] is None and reply["reply_markup"] is None
    assert {"chat_id": USER, "action": "typing"} in tg.chat_actions

    scope = await engine.scope_for("tg:42")
    logged = await store.messages.recent(scope)
    assert (logged[0].role, logged[0].text, logged[0].channel) == ("user", "Hallo", "telegram")
    user_message_id = max(i for i, m in tg.messages.items() if m.get("text") == "Hallo")
    assert logged[0].channel_message_id == f"{USER}:{user_message_id}"
    assert tg.calls[:2] == ["getMe", "setMyCommands"] and "getUpdates" in tg.calls and tg.unknown == []


async def test_a_reply_arrives_as_bubbles_and_a_long_one_is_split_at_4096(
    tg: FakeTelegram, channel: TelegramChannel, chat: ScriptedLLM,
) -> None:
    chat.enqueue("Eins\n\nZwei\n\nDrei\n\nVier")
    assert [m["text"] for m in await exchange(tg, "Erzähl was", replies=3)] == ["Eins", "Zwei", "Drei\n\nVier"]

    long = " ".join(f"wort{i}" for i in range(700))  # 5,489 characters
    chat.enqueue(long)
    parts = await exchange(tg, "Erzähl mehr", replies=2)
    assert all(len(p["text"]) <= 4096 for p in parts) and len(parts[0]["text"]) > 4000
    assert " ".join(p["text"] for p in parts) == long  # cut at a space, nothing lost


def test_split_message_prefers_paragraphs_then_lines_then_words() -> None:
    assert split_message("kurz") == ["kurz"]
    assert split_message("a" * 10 + "\n\n" + "b" * 10 + "\n" + "c" * 5, limit=24) == [
        "a" * 10 + "\n\n" + "b" * 10, "c" * 5]
    assert split_message("x" * 25, limit=10) == ["x" * 10, "x" * 10, "x" * 5]
    emoji = split_message("😀" * 6, limit=5)  # each counts 2 in Telegram's UTF-16 units
    assert emoji == ["😀😀", "😀😀", "😀😀"]
    assert split_message("   ") == []


def test_telegram_ids() -> None:
    assert telegram_id("tg:42") == 42 and telegram_id("42") == 42
    with pytest.raises(ValueError):
        telegram_id("@anna:example.org")


# --- webhook ----------------------------------------------------------------------------------------


async def test_webhook_mode_checks_the_secret_and_processes_a_redelivery_once(
    tg: FakeTelegram, engine: Engine, chat: ScriptedLLM, store: MemoryStore,
) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/tg-hook"
    ch = make_channel(tg, engine, webhook_url=url, webhook_port=port, webhook_secret="s3cret")
    await ch.start()
    try:
        assert tg.webhook["url"] == url and tg.webhook["secret_token"] == "s3cret"
        assert "getUpdates" not in tg.calls
        chat.enqueue("Über den Webhook!")
        tg.send_text(USER, "Hallo Webhook")
        update = dict(tg.pending[-1])
        assert await tg.deliver_webhook(secret_token="wrong") == [403]
        assert await tg.deliver_webhook() == [200]
        (reply,) = await tg.wait_for_sent(1)
        assert reply["text"] == "Über den Webhook!"

        tg.send_update(update)  # Telegram delivers the same update again
        assert await tg.deliver_webhook() == [200]
        chat.enqueue("Noch da.")
        tg.send_text(USER, "Noch da?")
        assert await tg.deliver_webhook() == [200]
        sent = await tg.wait_for_sent(2)
        assert [m["text"] for m in sent] == ["Über den Webhook!", "Noch da."]
        scope = await engine.scope_for("tg:42")
        assert [m.text for m in await store.messages.recent(scope) if m.role == "user"] == ["Hallo Webhook", "Noch da?"]
    finally:
        await ch.stop()


# --- commands --------------------------------------------------------------------------------------


async def test_simple_commands_answer_in_the_users_chat(tg: FakeTelegram, channel: TelegramChannel) -> None:
    (start,) = await exchange(tg, "/start")
    assert start["text"] == t("de", "start", name="Mnemo")
    (help_,) = await exchange(tg, "/help@mnemo_bot")
    assert help_["text"].splitlines()[0] == t("de", "help_head") and "/memories" in help_["text"]
    expected = {
        "/diary": t("de", "diary_empty"), "/profile": t("de", "profile_empty"),
        "/thoughts": t("de", "thoughts_empty"), "/topics": t("de", "topics_empty"),
        "/rules": t("de", "rules_empty"), "/think": t("de", "not_yet"), "/writediary": t("de", "not_yet"),
        "/memories": t("de", "memories_empty"), "/forget": t("de", "forget_usage"),
        "/nosuchcommand": t("de", "unknown_command"),
    }
    for command, text in expected.items():
        (reply,) = await exchange(tg, command)
        assert reply["text"] == text, command


async def test_every_menu_command_gets_an_answer(tg: FakeTelegram, channel: TelegramChannel) -> None:
    for name in COMMANDS:
        (reply,) = await exchange(tg, f"/{name}")
        assert reply["text"] and reply["text"] != t("de", "failed"), name


async def test_commands_show_what_is_stored(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore,
) -> None:
    scope = await engine.scope_for("tg:42")
    await store.profile.set(scope, "facts", "name", "Anna")
    await store.thoughts.add(scope, "Anna wirkt heute fröhlich")
    await store.topics.add(scope, "Wie war das Konzert?")
    await store.diary.add(scope, "2024-05-01", "Heute habe ich viel über Cellos gelernt.")
    assert "Name: Anna" in (await exchange(tg, "/profile"))[0]["text"]
    assert "Anna wirkt heute fröhlich" in (await exchange(tg, "/thoughts"))[0]["text"]
    assert "Wie war das Konzert?" in (await exchange(tg, "/topics"))[0]["text"]
    assert "Cellos" in (await exchange(tg, "/diary"))[0]["text"]


async def test_memories_are_paged_with_buttons_and_forget_asks_first(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore,
) -> None:
    scope = await engine.scope_for("tg:42")
    ids = [(await store.notes.add(scope, f"Notiz Nummer {i} über Thema{i}", dedupe=False)).note.id for i in range(12)]

    (page,) = await exchange(tg, "/memories")
    assert page["text"].startswith(t("de", "memories_head", first=1, last=10, total=12))
    assert buttons(page) == [[(t("de", "next"), "mem:10")]]
    await press(tg, page["message_id"], "mem:10", edits=1)
    assert tg.edits[-1]["text"].startswith(t("de", "memories_head", first=11, last=12, total=12))
    assert tg.messages[page["message_id"]]["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "mem:0"
    edits = len(tg.edits)
    answer = await press(tg, page["message_id"], "mem:10")  # the same page again: "not modified" is fine
    assert "text" not in answer and len(tg.edits) == edits

    (search,) = await exchange(tg, "/memories Thema3")
    assert f"#{ids[3]} " in search["text"]
    assert t("de", "failed") not in [m["text"] for m in tg.sent]

    (confirm,) = await exchange(tg, f"/forget {ids[0]}")
    assert buttons(confirm) == [[(t("de", "forget"), f"forget:{ids[0]}"), (t("de", "cancel"), "cancel")]]
    answer = await press(tg, confirm["message_id"], f"forget:{ids[0]}", edits=1)
    assert answer["text"].startswith(t("de", "forget_done", text="")) and await store.notes.count(scope) == 11
    (pick,) = await exchange(tg, "/forget Thema5")
    assert (t("de", "cancel"), "cancel") in buttons(pick)[-1]
    answer = await press(tg, pick["message_id"], "cancel", edits=1)
    assert answer["text"] == t("de", "cancelled") and await store.notes.count(scope) == 11


async def test_rules_get_disable_and_delete_buttons(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore,
) -> None:
    scope = await engine.scope_for("tg:42")
    rule = await store.rules.propose(scope, "Antworte kürzer.")
    await store.rules.decide(scope, rule.id, "active")
    (listing,) = await exchange(tg, "/rules")
    assert buttons(listing) == [[(t("de", "rule_off", id=rule.id), f"rule:off:{rule.id}"),
                                 (t("de", "rule_delete", id=rule.id), f"rule:del:{rule.id}")]]
    answer = await press(tg, listing["message_id"], f"rule:off:{rule.id}")
    assert answer["text"] == t("de", "rule_turned_off", id=rule.id)
    assert (await store.rules.get(scope, rule.id)).status == "disabled"
    answer = await press(tg, listing["message_id"], f"rule:del:{rule.id}")
    assert answer["text"] == t("de", "rule_deleted", id=rule.id) and await store.rules.list(scope) == []


async def test_export_sends_a_json_document_and_deleteme_removes_everything_after_a_yes(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    chat.enqueue("Schön, dass du da bist.")
    await exchange(tg, "Ich spiele Cello.")
    await engine.drain()
    scope = await engine.scope_for("tg:42")
    await store.notes.add(scope, "Anna spielt Cello.")

    (ready,) = await exchange(tg, "/export")
    assert ready["text"] == t("de", "export_ready")
    await tg.wait_until(lambda: bool(tg.documents), what="the export document")
    (document,) = tg.documents
    assert document["chat_id"] == USER and document["document"]["filename"] == "mnemo-export.json"
    exported = json.loads(document["document"]["content"])
    assert exported["user_id"] == "tg:42" and "Ich spiele Cello." in [m["text"] for m in exported["messages"]]

    (confirm,) = await exchange(tg, "/deleteme")
    assert [data for _label, data in buttons(confirm)[0]] == ["deleteme:yes", "cancel"]
    assert await store.messages.count(scope) == 2  # nothing happens before the yes
    answer = await press(tg, confirm["message_id"], "deleteme:yes", edits=1)
    assert answer["text"] == t("de", "deleteme_done") and tg.edits[-1]["text"] == t("de", "deleteme_done")
    assert await store.messages.count(scope) == 0 and await store.notes.count(scope) == 0
    assert (await store.export(scope))["messages"] == []


# --- the yes/no flow ----------------------------------------------------------------------------------


async def test_a_proposed_rule_is_confirmed_with_a_button_and_stale_or_forged_presses_change_nothing(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Antworte kürzer."})])
    chat.enqueue("Gern, ich fasse mich kurz.")
    first, question = await exchange(tg, "Kannst du dich bitte kurz fassen?", replies=2)
    assert first["text"] == "Gern, ich fasse mich kurz." and first["reply_markup"] is None
    scope = await engine.scope_for("tg:42")
    pending = await store.rules.pending(scope)
    assert pending is not None and pending.text == "Antworte kürzer."
    assert question["text"] == t("de", "rule_question", rule="Antworte kürzer.")
    assert buttons(question) == [[("Ja", f"rule:yes:{pending.id}"), ("Nein", f"rule:no:{pending.id}")]]

    (other_reply,) = await exchange(tg, "Hallo, ich bin Ben", user=OTHER)
    answer = await press(tg, other_reply["message_id"], f"rule:yes:{pending.id}", user=OTHER)
    assert answer["text"] == t("de", "button_unknown")  # another user's rule id
    answer = await press(tg, question["message_id"], "rule:yes:999")  # forged
    assert answer["text"] == t("de", "button_unknown")
    assert (await store.rules.get(scope, pending.id)).status == "pending" and tg.edits == []

    answer = await press(tg, question["message_id"], f"rule:yes:{pending.id}", edits=1)
    saved = t("de", "rule_saved", rule="Antworte kürzer.")
    assert answer["text"] == saved and tg.edits[-1]["text"] == saved
    assert tg.messages[question["message_id"]]["text"] == saved
    assert "reply_markup" not in tg.messages[question["message_id"]]  # the buttons are gone
    assert [r.text for r in await store.rules.list(scope, "active")] == ["Antworte kürzer."]

    answer = await press(tg, question["message_id"], f"rule:no:{pending.id}")  # a second press
    assert answer["text"] == t("de", "button_stale") and len(tg.edits) == 1
    assert [r.text for r in await store.rules.list(scope, "active")] == ["Antworte kürzer."]
    other_scope = await engine.scope_for("tg:43")
    assert await store.rules.list(other_scope) == []


async def test_a_typed_ja_decides_the_pending_rule(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Duze mich."})])
    chat.enqueue("Mache ich.")
    await exchange(tg, "Sag bitte du zu mir.", replies=2)
    (decided,) = await exchange(tg, "ja")
    assert decided["text"] == t("de", "rule_saved", rule="Duze mich.")
    scope = await engine.scope_for("tg:42")
    assert [r.text for r in await store.rules.list(scope, "active")] == ["Duze mich."]


# --- access, robustness --------------------------------------------------------------------------------


async def test_an_unknown_user_is_refused_once_and_nothing_is_stored(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    channel = make_channel(tg, engine, unknown_users="refuse")  # pairing: tests/test_telegram_polish.py
    await channel.start()
    try:
        await _refused_once(tg, store, chat)
    finally:
        await channel.stop()


async def _refused_once(tg: FakeTelegram, store: MemoryStore, chat: ScriptedLLM) -> None:
    (refusal,) = await exchange(tg, "Hallo, wer bist du?", user=STRANGER)
    assert (refusal["chat_id"], refusal["text"]) == (STRANGER, t("de", "refused"))
    tg.send_text(STRANGER, "/export")
    tg.send_update({"message": {
        "message_id": 900, "date": int(time.time()), "chat": {"id": STRANGER, "type": "private"},
        "from": {"id": STRANGER, "is_bot": False, "first_name": "Eve"}, "sticker": {
            "file_id": "S1", "file_unique_id": "s1", "type": "regular", "width": 1, "height": 1,
            "is_animated": False, "is_video": False}}})
    chat.enqueue("Hallo Anna.")
    (reply,) = await exchange(tg, "Hallo")  # processed after the stranger's updates
    assert reply["chat_id"] == USER
    assert [m["chat_id"] for m in tg.sent] == [STRANGER, USER] and tg.documents == []
    assert await stored_messages(store) == 2  # Anna's message and the reply only
    async with store.db.reading() as tx:
        assert await tx.fetchall("SELECT id FROM scopes WHERE user_id = ?", (f"tg:{STRANGER}",)) == []
    assert len(chat.calls) == 1


async def test_an_unknown_user_meets_silence_when_refusals_are_off(
    tg: FakeTelegram, engine: Engine, store: MemoryStore,
) -> None:
    ch = make_channel(tg, engine, unknown_users="silent")
    await ch.start()
    try:
        tg.send_text(STRANGER, "Hallo?")
        (reply,) = await exchange(tg, "/start")
        assert reply["chat_id"] == USER and len(tg.sent) == 1
        assert await stored_messages(store) == 0
    finally:
        await ch.stop()


async def test_photos_stickers_edits_and_group_chats_never_crash(
    tg: FakeTelegram, channel: TelegramChannel, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    sender = {"id": USER, "is_bot": False, "first_name": "Anna"}
    private = {"id": USER, "type": "private"}
    chat.enqueue("Sieht gut aus.")  # a photo is answered (tests/test_telegram_photos.py): here without vision
    tg.send_photo(USER, jpeg(90, 90), "Schau mal")
    answer, unseen = await tg.wait_for_sent(2)
    assert (answer["text"], unseen["text"]) == ("Sieht gut aus.", t("de", "photo_not_seen"))
    assert answer["chat_id"] == USER

    tg.send_update({"message": {"message_id": 902, "date": int(time.time()), "chat": private, "from": sender,
                                "voice": {"file_id": "V1", "file_unique_id": "v1", "duration": 3}}})
    await tg.wait_for_sent(3)
    tg.send_update({"edited_message": {"message_id": 903, "date": int(time.time()), "edit_date": int(time.time()),
                                       "chat": private, "from": sender, "text": "korrigiert"}})
    tg.send_text(USER, "Hallo Gruppe", chat_id=-100, chat_type="group")
    chat.enqueue("Da bin ich.")
    (reply,) = await exchange(tg, "Bist du da?")
    assert reply["text"] == "Da bin ich." and len(tg.sent) == 4  # nothing for the edit or the group
    assert await stored_messages(store) == 4


async def test_a_duplicated_update_gets_one_reply(
    tg: FakeTelegram, channel: TelegramChannel, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    chat.responder = lambda call: "Einmal."
    tg.send_text(USER, "Hallo zweimal")
    update = dict(tg.pending[-1])
    tg.send_update(update)  # the same update id, in the same getUpdates batch
    tg.send_update({"message": update["message"]})  # the same message under a new update id
    tg.send_text(USER, "/start")  # answered after all three (one user's updates run in order)
    await tg.wait_for_sent(2)
    assert [m["text"] for m in tg.sent] == ["Einmal.", t("de", "start", name="Mnemo")]
    scope = await engine.scope_for("tg:42")
    assert [m.text for m in await store.messages.recent(scope)] == ["Hallo zweimal", "Einmal."]


async def test_a_failure_becomes_one_short_sentence_and_the_bot_keeps_running(
    tg: FakeTelegram, channel: TelegramChannel, chat: ScriptedLLM, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="bot.channels.telegram.channel")
    def broken(call: object) -> str:
        raise RuntimeError("database on fire")

    chat.responder = broken
    (answer,) = await exchange(tg, "Hallo")
    assert answer["text"] == t("de", "failed")
    chat.responder = lambda call: "Wieder da."
    tg.fail_next("sendMessage", status=400, description="Bad Request: chat not found")
    (answer,) = await exchange(tg, "Hallo?")  # the reply failed; the apology got through
    assert answer["text"] == t("de", "failed")
    (answer,) = await exchange(tg, "Und jetzt?")
    assert answer["text"] == "Wieder da."
    failures = [r for r in caplog.records if r.name == "bot.channels.telegram.channel" and r.levelno == logging.ERROR]
    assert [type(r.exc_info[1]).__name__ for r in failures if r.exc_info] == ["RuntimeError", "BadRequest"]


async def test_a_wrong_token_is_one_sentence_for_the_operator(tg: FakeTelegram, engine: Engine) -> None:
    ch = make_channel(tg, engine, token="999:WRONG")
    with pytest.raises(ConfigError, match="MNEMO_TELEGRAM_TOKEN"):
        await ch.start()
    assert not ch.app.running


# --- pushes -----------------------------------------------------------------------------------------------


async def test_push_arrives_as_a_telegram_message(tg: FakeTelegram, channel: TelegramChannel) -> None:
    await channel.send("tg:42", "Hallo")
    await channel.send(str(OTHER), "Wie war das Konzert?", [[Button("Gut", "cancel")]])
    await channel.send("tg:666", "Niemals")  # not on the allowlist: not sent
    assert [(m["chat_id"], m["text"]) for m in tg.sent] == [(USER, "Hallo"), (OTHER, "Wie war das Konzert?")]
    assert buttons(tg.sent[1]) == [[("Gut", "cancel")]] and tg.sent[0]["reply_markup"] is None


# --- wiring --------------------------------------------------------------------------------------------------


async def test_build_channels_needs_a_token_and_wires_the_settings(engine: Engine, tmp_path: Any) -> None:
    base = {"_env_file": None, "data_dir": tmp_path, "channels": ["telegram"]}
    with pytest.raises(ConfigError, match="MNEMO_TELEGRAM_TOKEN"):
        build_channels(Settings(**base), engine, Commands(engine))  # type: ignore[arg-type]
    settings = Settings(**base, telegram_token="1:X", telegram_allowed_users="42, 43",  # type: ignore[arg-type]
                        telegram_webhook_url="https://bot.example.org/hook", telegram_refuse_unknown=False)
    (channel,) = build_channels(settings, engine, Commands(engine))
    assert isinstance(channel, TelegramChannel) and channel.name == "telegram"
    config = telegram_config(settings)
    assert config.allowed_users == {"42", "43"} and config.webhook_port == 8443
    assert config.unknown_users == "silent"  # the old MNEMO_TELEGRAM_REFUSE_UNKNOWN=false still means silence
    assert channel.webhook_secret  # a random secret when none is set
    with pytest.raises(ValueError, match="/bot"):
        Settings(**base, telegram_base_url="http://127.0.0.1:8081/")  # type: ignore[arg-type]
    assert build_channels(Settings(**{**base, "channels": ["console"]}), engine, Commands(engine)) == []  # type: ignore[arg-type]


async def test_until_stopped_returns_on_a_signal() -> None:
    waiting = asyncio.create_task(until_stopped())
    await asyncio.sleep(0.01)
    os.kill(os.getpid(), signal.SIGINT)
    await asyncio.wait_for(waiting, 2)
