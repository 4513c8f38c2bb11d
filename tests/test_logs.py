"""Log lines: one per event, secrets masked even inside tracebacks."""
from __future__ import annotations

import json
import logging
import re

import pytest

from bot import logs
from bot.commands.runner import Commands
from bot.exchange import Attachment, Incoming
from bot.llm.port import ToolCall
from bot.logs import LineFormatter
from bot.settings import Settings
from memory.store import MemoryStore
from tests.fakes.audio import spoken
from tests.fakes.llm import Call, ScriptedLLM
from tests.fakes.openai_audio import FakeAudioAPI
from tests.images import jpeg
from tests.test_voice import answer, make_engine, shut, voice_note


def test_secrets_never_reach_a_log_line() -> None:
    settings = Settings(_env_file=None, chat_api_key="sk-secret-123456", telegram_token="987654:TOKEN-abcdef")  # type: ignore[call-arg]
    formatter = LineFormatter(settings.secrets())
    try:
        raise RuntimeError("request to https://api.telegram.org/bot987654:TOKEN-abcdef/getMe failed")
    except RuntimeError:
        record = logging.LogRecord("bot", logging.ERROR, __file__, 1, "key %s rejected", ("sk-secret-123456",),
                                   exc_info=__import__("sys").exc_info())
    line = formatter.format(record)
    assert "sk-secret-123456" not in line and "TOKEN-abcdef" not in line
    assert line.count("***") >= 2 and "\n" not in line


# --- what people write stays out of the log at INFO and above ------------------------------------------------------

WORDS = ("Zwetschgenbaum", "Quittenmus", "Holunderwein", "Pustekuchenfest", "Marzipanschnecken", "Stachelbeerhecke",
         "Rhabarberschorle")


def learner(call: Call) -> str:
    """The background model: first an answer that is not JSON and quotes the person, then facts (one of them
    sourced only by the companion's words, which extraction drops)."""
    if "Zwetschgenbaum" in call.prompt and not learner.failed:  # type: ignore[attr-defined]
        learner.failed = True  # type: ignore[attr-defined]
        return "Gern! Der Zwetschgenbaum im Garten ist ein schöner Fakt."
    ids = dict(re.findall(r"^\[(\d+)\] (user|assistant):", call.messages[0].content, re.M))
    user = [int(i) for i, role in ids.items() if role == "user"]
    bot = [int(i) for i, role in ids.items() if role == "assistant"]
    facts = [{"text": "Anna hat einen Zwetschgenbaum im Garten.", "importance": 6, "source_ids": user[:1]}]
    if bot:
        facts.append({"text": "Anna mag Rhabarberschorle.", "importance": 5, "source_ids": bot[:1]})
    return json.dumps({"facts": facts, "content": [], "profile": []})


async def test_nothing_a_person_writes_reaches_a_log_record_at_info(
    store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM, audio: FakeAudioAPI,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    learner.failed = False  # type: ignore[attr-defined]
    background.responder = learner
    engine = make_engine(store, chat, background, audio, vision=True)
    commands = Commands(engine)
    try:
        chat.enqueue("Schön! Magst du Rhabarberschorle?")
        await answer(engine, Incoming("anna", "Im Garten steht ein alter Zwetschgenbaum."))  # extraction: no JSON
        await engine.drain()
        chat.enqueue("Erzähl mehr!")
        await answer(engine, Incoming("anna", "Der Zwetschgenbaum trägt dieses Jahr viel."))  # a note extracted
        await engine.drain()
        await answer(engine, Incoming("anna", "Erinnere mich morgen um 9 an das Quittenmus"))  # a reminder
        chat.enqueue("", [ToolCall("c1", "search_memory", {"query": ["Holunderwein"]})])  # bad arguments
        chat.enqueue("Dazu weiß ich nichts.")
        await answer(engine, Incoming("anna", "Was weißt du über Holunderwein?"))
        chat.enqueue("[PHOTO: ein Fest] Wie schön!")
        await answer(engine, Incoming("anna", "Vom Pustekuchenfest", channel="telegram",
                                      attachment=Attachment("image", jpeg(), "image/jpeg", len(jpeg()))))
        audio.hear("Ich habe heute Marzipanschnecken gebacken.")
        chat.enqueue("Lecker!")
        await answer(engine, voice_note(spoken("Marzipan")))
        await engine.drain()
        assert (await commands.run("anna", "/memories Stachelbeerhecke")) is not None  # a search query
        listing = await commands.run("anna", "/forget Zwetschgenbaum")
        assert listing is not None and listing.buttons
        scope = await engine.scope_for("anna")
        assert [n.text for n in await store.notes.list(scope)] == ["Anna hat einen Zwetschgenbaum im Garten."]
        assert len(await store.reminders.active(scope)) == 1
        await commands.press("anna", listing.buttons[0][0].data)
        await engine.drain()
        assert await store.notes.list(scope) == []
    finally:
        await shut(engine)
    assert len(caplog.records) >= 3  # the log did say what happened: without the words
    leaks = []
    for record in caplog.records:
        shown = record.getMessage() + (logging.Formatter().formatException(record.exc_info)
                                       if record.exc_info else "") + (record.exc_text or "")
        if record.levelno >= logging.INFO and any(word.lower() in shown.lower() for word in WORDS):
            leaks.append(f"{record.name} {record.levelname}: {shown}")
    assert leaks == []


def test_debug_says_once_at_start_that_the_log_now_holds_what_people_write(capsys: pytest.CaptureFixture[str]) -> None:
    logging.getLogger().setLevel(logging.WARNING)  # the root's level and handlers are put back after each test
    logs.install("INFO")
    assert "DEBUG" not in capsys.readouterr().err
    logs.install("DEBUG")  # as start-up does: once before the settings are read, once after
    logs.install("DEBUG")
    err = capsys.readouterr().err
    (line,) = err.splitlines()
    assert " warning bot.logs: DEBUG logging is on: the log now holds what people write" in line
