"""Voice notes in and spoken replies out, through the engine: the real openai SDK against the local fake of the
OpenAI audio API, real OGG/Opus made by espeak-ng and opusenc, a real store in tmp_path, a scripted chat model."""
from __future__ import annotations

import base64
import dataclasses
import json
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.admin import ops
from bot.app import engine_config, voice_backends
from bot.channels.base import answer as channel_answer
from bot.commands.runner import Commands
from bot.conversation.config import EngineConfig
from bot.conversation.engine import Engine
from bot.conversation.help_lines import crisis_help
from bot.conversation.prompt import origin_note
from bot.conversation.tools import transcript_lines
from bot.conversation.turn import Turn
from bot.conversation.voice_notes import HEARD, megabytes, voice_problem, with_transcript
from bot.conversation.why import explain
from bot.errors import LLMUnavailable
from bot.exchange import Attachment, Incoming, Reply
from bot.llm.port import ToolCall
from bot.settings import Settings, load_settings
from bot.texts import t
from bot.voice.audio import audio_format, ogg_seconds
from bot.voice.openai_audio import OpenAISpeaker, OpenAITranscriber
from bot.voice.recordings import move_old_files, where_kept
from bot.voice.spoken import speakable, speaks
from memory.store import MemoryStore
from tests import engine_kit
from tests.fakes.audio import ogg_problem, spoken, wav_silence
from tests.fakes.llm import ScriptedLLM
from tests.fakes.openai_audio import FakeAudioAPI

CAKE = "Ich habe heute einen Kuchen gebacken"


# --- pure parts -------------------------------------------------------------------------------------


def test_a_reply_is_spoken_in_whole_sentences_without_links_markup_or_emoji() -> None:
    text = ("Das klingt **toll** 🎂! Schau mal hier: https://example.org/kuchen. Magst du mir das Rezept geben? "
            + "Ich würde es gern einmal selbst ausprobieren, am liebsten schon am Wochenende. " * 10)
    said = speakable(text, 120)
    assert said == "Das klingt toll! Schau mal hier. Magst du mir das Rezept geben?"
    assert len(said) <= 120 and said[-1] in ".!?"
    assert speakable("Kurz und gut.", 600) == "Kurz und gut."
    whole = speakable(text, 10_000)
    for limit in (60, 100, 200, 400, 600):  # whatever the limit: the first whole sentences that fit
        cut = speakable(text, limit)
        assert len(cut) <= limit and cut[-1] in ".!?" and whole.startswith(cut) and whole[len(cut)] == " "
        assert len(whole[: whole.index(".", len(cut) + 1) + 1]) > limit  # the next sentence would not have fit


def test_a_first_sentence_longer_than_the_limit_is_spoken_whole_or_not_at_all() -> None:
    long_one = "Ein Satz, der einfach immer weiter und weiter geht, ohne je zu enden, " * 3 + "und dann endet. Kurz."
    assert speakable(long_one, 150) == long_one.removesuffix(" Kurz.")  # up to twice the limit: whole
    assert speakable(long_one, 100) == ""  # longer still: nothing is spoken, the text goes alone


def test_which_replies_are_spoken() -> None:
    assert speaks("on", False) and speaks("on", True)
    assert speaks("auto", True) and not speaks("auto", False)
    assert not speaks("off", True) and not speaks(None, True)


def test_audio_is_told_by_its_bytes_and_an_ogg_by_its_length() -> None:
    voice = spoken(CAKE)
    assert audio_format(voice) == "ogg" and audio_format(wav_silence()) == "wav"
    assert audio_format(b"%PDF-1.7 ...") is None and audio_format(b"") is None
    assert audio_format(b"ID3\x04rest") == audio_format(b"\xff\xfb\x90rest") == "mp3"
    assert audio_format(b"\x00\x00\x00\x20ftypM4A ") == "mp4"
    seconds = ogg_seconds(voice)
    assert seconds is not None and 1.0 < seconds < 5.0  # espeak-ng says the sentence in about two seconds
    assert ogg_seconds(wav_silence()) is None and ogg_seconds(b"OggS") is None


def test_a_voice_note_is_refused_before_it_is_heard_for_size_length_and_format() -> None:
    config = EngineConfig(voice_max_bytes=20_000_000, voice_max_seconds=300)
    ogg = spoken("Hallo")
    assert voice_problem(Attachment("voice", ogg, "audio/ogg", len(ogg), seconds=1.0), config) is None
    assert voice_problem(Attachment("voice", b"", "audio/ogg", 60_000_000), config) == \
        ("voice_too_big", {"size": "60", "limit": "20"})
    assert voice_problem(Attachment("voice", ogg, "audio/ogg", len(ogg), seconds=900), config) == \
        ("voice_too_long", {"seconds": "900", "limit": "300"})
    assert voice_problem(Attachment("voice", b"%PDF-1.7", "audio/ogg", 8), config) == ("voice_unsupported", {})
    assert megabytes(500_000, "de") == "0,5" and megabytes(500_000, "en") == "0.5"


def test_a_transcript_stands_after_the_caption_and_after_a_group_members_name() -> None:
    assert with_transcript("", "Hallo du", group=False) == "Hallo du"
    assert with_transcript("Hör mal", "Hallo du", group=False) == "Hör mal\nHallo du"
    assert with_transcript("Anna: ", "ja", group=True) == "Anna: ja"
    assert with_transcript("Anna: Hör mal", "ja", group=True) == "Anna: Hör mal ja"
    assert origin_note("voice") == " (voice message)" and origin_note("text") == ""


def test_the_fakes_ogg_check_finds_a_broken_stream() -> None:
    voice = spoken(CAKE)
    broken = bytearray(voice)
    broken[len(broken) // 2] ^= 0xFF
    assert ogg_problem(voice) is None and ogg_problem(bytes(broken)) is not None
    assert ogg_problem(voice[: len(voice) // 2]) is not None


# --- the engine with the real SDK against the fake audio API ------------------------------------------


def make_engine(store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM, audio: FakeAudioAPI | None,
                speaker: bool = True, timeout: float = 5.0, **config: Any) -> Engine:
    """The shared engine (tests/engine_kit.py) hearing through the fake (None: no backend set up) and, with
    `speaker`, speaking through it."""
    transcriber = OpenAITranscriber("whisper-1", audio.base_url, "sk-voice", timeout=timeout) if audio else None
    voice = OpenAISpeaker("tts-1", "alloy", audio.base_url, "sk-voice", timeout=timeout) if audio and speaker else None
    return engine_kit.make_engine(store, chat, background=background, transcriber=transcriber, speaker=voice, **config)


@pytest.fixture
async def engine(store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM,
                 audio: FakeAudioAPI) -> AsyncIterator[Engine]:
    e = make_engine(store, chat, background, audio)
    yield e
    await shut(e)


@pytest.fixture
async def keeping(store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM,
                  audio: FakeAudioAPI) -> AsyncIterator[Engine]:
    """An engine that keeps the audio of the voice notes it hears (MNEMO_VOICE_KEEP)."""
    e = make_engine(store, chat, background, audio, voice_keep=True)
    yield e
    await shut(e)


async def shut(e: Engine) -> None:
    """Let the engine's background work finish, then close it and its voice backends."""
    await e.drain()
    await e.close()
    for backend in (e.voice.transcriber, e.voice.speaker):
        if backend is not None:
            await backend.aclose()  # type: ignore[union-attr]


_refs = iter(range(1, 10_000))


def voice_note(data: bytes, caption: str = "", user: str = "anna", seconds: float | None = 2.0,
               size: int | None = None, ref: str | None = None) -> Incoming:
    """A voice note as a channel hands it over."""
    attachment = Attachment("voice", data, "audio/ogg", len(data) if size is None else size, seconds=seconds)
    return Incoming(user, caption, channel="telegram", channel_message_id=ref or f"v{next(_refs)}",
                    attachment=attachment)


async def answer(engine: Engine, incoming: Incoming) -> Reply:
    reply = await engine.handle(incoming)
    assert reply is not None
    return reply


async def rows(store: MemoryStore) -> list[tuple[str, str, str]]:
    async with store.db.reading() as tx:
        return [tuple(r) for r in await tx.fetchall("SELECT role, text, origin FROM messages ORDER BY id")]


async def test_a_voice_note_is_heard_logged_as_spoken_and_answered_like_a_typed_message(
    engine: Engine, chat: ScriptedLLM, store: MemoryStore, audio: FakeAudioAPI,
) -> None:
    sent = spoken(CAKE)
    audio.hear(f"{CAKE}.")
    chat.enqueue("Oh, was für einer?")
    reply = await answer(engine, voice_note(sent))
    assert reply.bubbles == ("Oh, was für einer?",) and reply.voice is None  # /voice is off until set
    [upload] = audio.uploads
    assert upload.data == sent and upload.filename == "voice.ogg" and upload.content_type == "audio/ogg"
    assert upload.fields["model"] == "whisper-1" and upload.authorization == "Bearer sk-voice"
    assert await rows(store) == [("user", f"{CAKE}.", "voice"), ("assistant", "Oh, was für einer?", "text")]
    prompt = chat.calls[-1]
    assert prompt.messages[-1].content.endswith(f"{CAKE}.") and HEARD in prompt.prompt

    chat.enqueue("Schön.")
    await answer(engine, Incoming("anna", "Mit Kirschen", channel="telegram", channel_message_id="t1"))
    assert f"(voice message) {CAKE}." in chat.calls[-1].prompt  # the next prompt shows how it came

    scope = await engine.scope_for("anna")
    hits = await store.search(scope, "Kuchen gebacken", ("message",), k=3)
    lines = await transcript_lines(store, scope, hits, engine.config.zone)
    assert f"the person (voice message): \"{CAKE}.\"" in lines  # recall_chat and [RECALL] show it
    voice_id = next(m.id for m in await store.messages.recent(scope) if m.origin == "voice")
    note = (await store.notes.add(scope, "Anna hat einen Kuchen gebacken", source_message_ids=[voice_id])).note
    why = "\n".join((await explain(store, scope, [note.id], "de", engine.config.zone)).bubbles)
    assert "(Sprachnachricht): „Ich habe heute einen Kuchen gebacken.“" in why and "du sagtest am" in why
    why_en = "\n".join((await explain(store, scope, [note.id], "en", engine.config.zone)).bubbles)
    assert "you said on" in why_en and "(voice message)" in why_en


async def test_the_audio_is_not_kept_anywhere_after_the_transcript(
    engine: Engine, chat: ScriptedLLM, store: MemoryStore, audio: FakeAudioAPI, tmp_path: Path,
) -> None:
    sent = spoken("Mein Geheimnis ist der Zimt")
    audio.hear("Mein Geheimnis ist der Zimt.")
    await answer(engine, voice_note(sent))
    await engine.drain()
    pieces = [sent[at:at + 64] for at in range(0, len(sent) - 64, 499)]
    pieces = [piece for piece in pieces if len(set(piece)) > 40]  # slices of the sound (not the headers' padding)
    assert len(pieces) >= 10
    for path in tmp_path.rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert not any(piece in content for piece in pieces), f"the voice note's audio is in {path}"


def audio_pieces(sent: bytes) -> list[bytes]:
    """Slices of a voice note's sound (not the headers' padding), to look for in files."""
    pieces = [sent[at:at + 64] for at in range(0, len(sent) - 64, 499)]
    pieces = [piece for piece in pieces if len(set(piece)) > 40]
    assert len(pieces) >= 10
    return pieces


def files_holding(folder: Path, sent: bytes) -> list[Path]:
    """The files under folder that hold any slice of the voice note's sound."""
    pieces = audio_pieces(sent)
    return [p for p in folder.rglob("*") if p.is_file() and any(piece in p.read_bytes() for piece in pieces)]


async def test_with_voice_keep_the_audio_is_kept_with_its_message_exported_and_gone_after_deleteme(
    keeping: Engine, store: MemoryStore, chat: ScriptedLLM, audio: FakeAudioAPI, tmp_path: Path,
) -> None:
    engine = keeping
    commands = Commands(engine)
    sent, bens = spoken(CAKE), spoken("Ich war heute schwimmen")
    audio.hear(status=500)  # not heard: nothing kept, as nothing is logged
    await answer(engine, voice_note(sent))
    carla = await engine.scope_for("carla")
    await engine.incognito.switch_on(carla, None)  # incognito: heard and answered, nothing of it kept
    audio.hear("Ganz unter uns.")
    chat.enqueue("Bleibt unter uns.")
    assert (await answer(engine, voice_note(spoken("Ganz unter uns"), user="carla"))).bubbles[-1] == \
        "Bleibt unter uns."
    assert audio.uploads[-1].fields["model"] == "whisper-1" and len(audio.uploads) == 2  # it was heard
    assert await store.voice_recordings.count() == 0
    for user, data, heard in (("anna", sent, f"{CAKE}."), ("ben", bens, "Ich war heute schwimmen.")):
        audio.hear(heard)
        chat.enqueue("Schön!")
        await answer(engine, voice_note(data, user=user))
    anna, ben = await engine.scope_for("anna"), await engine.scope_for("ben")
    [message] = [m for m in await store.messages.recent(anna) if m.role == "user"]
    [kept] = await store.voice_recordings.of(anna)
    assert (kept.message_id, kept.format, kept.audio) == (message.id, "ogg", sent) and message.origin == "voice"
    assert not (tmp_path / "recordings").exists()  # no file of a worker's own: the database holds it
    assert where_kept(tmp_path, True) == ("kept (MNEMO_VOICE_KEEP) in the database, with their messages; deleted "
                                          "with the person's /deleteme")

    exported = await commands.run("anna", "/export")
    assert exported is not None and exported.document is not None
    listed = json.loads(exported.document.content)["voice_recordings"]
    assert listed == [{"message_id": message.id, "format": "ogg", "bytes": len(sent), "kept_at": kept.kept_at,
                       "audio_base64": base64.b64encode(sent).decode("ascii")}]
    operator = Settings(_env_file=None, data_dir=tmp_path,  # type: ignore[call-arg]
                        embedding_model="tests.fakes.embedder:FakeEmbedder")
    assert (await ops.export_user(operator, "anna"))["voice_recordings"] == listed  # `mnemo export`: the same

    await commands.run("anna", "/deleteme")
    await commands.press("anna", "deleteme:yes")
    assert await store.voice_recordings.of(anna) == []
    assert [r.audio for r in await store.voice_recordings.of(ben)] == [bens]  # only the caller's went
    assert files_holding(tmp_path, sent) == []  # zeroed in the database file, not only unlisted


async def test_a_recording_whose_message_deleteme_took_meanwhile_is_not_left_behind(
    keeping: Engine, store: MemoryStore, chat: ScriptedLLM, audio: FakeAudioAPI, tmp_path: Path,
) -> None:
    engine = keeping
    commands = Commands(engine)
    sent = spoken(CAKE)
    audio.hear(f"{CAKE}.")
    chat.enqueue("Schön!")
    await answer(engine, voice_note(sent))
    anna = await engine.scope_for("anna")
    [message] = [m for m in await store.messages.recent(anna) if m.role == "user"]
    await commands.run("anna", "/deleteme")
    await commands.press("anna", "deleteme:yes")
    assert await store.voice_recordings.count() == 0
    # A turn of that voice note between its log step and its keep step while /deleteme ran: the keep comes last.
    late = Turn(voice_note(sent), crisis=False, found_scope=anna, logged_id=message.id, recording=sent)
    await engine.voice.keep(late)
    assert await store.voice_recordings.count() == 0
    assert late.recording == b""  # the audio is let go all the same


@pytest.mark.both_backends("two workers on one database: the recording is a row every worker reaches")
async def test_a_recording_kept_by_one_worker_is_exported_and_erased_by_another(
    store: MemoryStore, second_store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM,
    audio: FakeAudioAPI, tmp_path: Path,
) -> None:
    worker_a = make_engine(store, chat, background, audio, voice_keep=True)
    worker_b = make_engine(second_store, chat, background, audio, voice_keep=True)
    try:
        sent = spoken(CAKE)
        audio.hear(f"{CAKE}.")
        chat.enqueue("Schön!")
        await answer(worker_a, voice_note(sent))  # heard and kept through worker A
        await worker_a.drain()
        commands_b = Commands(worker_b)
        exported = await commands_b.run("anna", "/export")  # asked of worker B
        assert exported is not None and exported.document is not None
        [listed] = json.loads(exported.document.content)["voice_recordings"]
        assert base64.b64decode(listed["audio_base64"]) == sent and listed["bytes"] == len(sent)

        await commands_b.run("anna", "/deleteme")
        await commands_b.press("anna", "deleteme:yes")
        assert await store.voice_recordings.count() == 0  # worker A sees it gone too
        again = await commands_b.run("anna", "/export")
        assert again is not None and again.document is not None
        assert json.loads(again.document.content)["voice_recordings"] == []
        assert files_holding(tmp_path, sent) == []  # no byte of it in worker A's data directory
    finally:
        await shut(worker_a)
        await shut(worker_b)


async def test_files_an_earlier_version_kept_are_moved_into_the_database_at_start(
    store: MemoryStore, tmp_path: Path,
) -> None:
    anna = await store.scope("mnemo", "anna")
    said = await store.messages.add(anna, "user", f"{CAKE}.")
    sent, orphan = spoken(CAKE), spoken("Ich war heute schwimmen")
    folder = tmp_path / "recordings" / "mnemo" / str(anna.id)
    folder.mkdir(parents=True)
    (folder / f"{said.id}.ogg").write_bytes(sent)
    (folder / f"{said.id + 99}.ogg").write_bytes(orphan)  # its message is gone: it goes too
    assert where_kept(tmp_path, True).endswith(f"; 2 file(s) an earlier version kept in {tmp_path / 'recordings'} "
                                               "are moved into the database at the next start")
    assert await move_old_files(store, tmp_path, 1000.0) == 1
    assert [(r.message_id, r.format, r.audio) for r in await store.voice_recordings.of(anna)] == \
        [(said.id, "ogg", sent)]
    assert not (tmp_path / "recordings").exists()
    assert await move_old_files(store, tmp_path, 1001.0) == 0  # the next start finds nothing


async def test_a_crisis_said_in_a_voice_note_gets_the_crisis_answer_as_text_only(
    engine: Engine, chat: ScriptedLLM, store: MemoryStore, audio: FakeAudioAPI,
) -> None:
    scope = await engine.scope_for("anna")
    await engine.voice.set_mode(scope, "on")  # even when every reply is spoken
    audio.hear("Ich will nicht mehr leben.")
    chat.enqueue("Ich bin da und höre dir zu.")
    reply = await answer(engine, voice_note(spoken("Ich will nicht mehr leben")))
    text = "\n\n".join(reply.bubbles)
    assert crisis_help("DE", "de") in text and "Ich bin da" in text
    assert reply.voice is None and audio.speech_requests == []  # the help lines are to be read, not heard
    assert chat.calls[-1].system[0].text.startswith("SAFETY FIRST")


async def test_a_spoken_ja_answers_the_open_question_like_a_typed_one(
    engine: Engine, chat: ScriptedLLM, store: MemoryStore, audio: FakeAudioAPI,
) -> None:
    chat.enqueue("", [ToolCall("c1", "propose_rule", {"rule": "Antworte kürzer."})])
    chat.enqueue("Gut, ich fasse mich kurz.")
    asked = await answer(engine, Incoming("anna", "Deine Antworten sind mir zu lang", channel_message_id="t1"))
    assert "Soll ich mir das merken?" in asked.bubbles[-1]
    audio.hear("Ja.")
    decided = await answer(engine, voice_note(spoken("Ja")))
    assert decided.bubbles == (t("de", "rule_saved", rule="Antworte kürzer."),)
    scope = await engine.scope_for("anna")
    assert [r.text for r in await store.rules.list(scope, "active")] == ["Antworte kürzer."]
    assert len(chat.calls) == 2  # decided by the program, as a typed "ja" is


async def test_a_transcript_never_runs_a_command(
    engine: Engine, chat: ScriptedLLM, store: MemoryStore, audio: FakeAudioAPI,
) -> None:
    audio.hear("/deleteme")
    chat.enqueue("Das klang wie ein Befehl – den führe ich nur aus, wenn du ihn tippst.")
    commands = Commands(engine)
    reply, ran = await channel_answer(engine, commands, voice_note(spoken("slash delete me")), command=False)
    assert not ran and reply is not None and "Befehl" in reply.bubbles[0]
    scope = await engine.scope_for("anna")
    assert await store.messages.count(scope) == 2  # nothing erased, the transcript logged as a message


async def test_bad_voice_notes_get_a_short_answer_store_nothing_and_the_next_message_is_answered(
    store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM, audio: FakeAudioAPI,
) -> None:
    engine = make_engine(store, chat, background, audio, timeout=0.5)
    ogg = spoken(CAKE)
    broken = bytearray(ogg)
    broken[len(broken) // 2] ^= 0xFF
    cases: list[tuple[Incoming, str, int]] = [  # the voice note, what it is told, how many uploads it makes
        (voice_note(b"", size=60 * 1024 * 1024), t("de", "voice_too_big", size="62,9", limit="20"), 0),
        (voice_note(ogg, seconds=3600), t("de", "voice_too_long", seconds="3600", limit="300"), 0),
        (voice_note(b"%PDF-1.7\n" + b"x" * 500), t("de", "voice_unsupported"), 0),
        (voice_note(bytes(broken)), t("de", "voice_unreadable"), 1),  # the backend refuses it (400)
        (voice_note(ogg), t("de", "voice_backend_down"), 1),  # 500
        (voice_note(ogg), t("de", "voice_backend_down"), 1),  # no answer within the timeout
        (voice_note(ogg), t("de", "voice_empty"), 1),  # nothing heard
        (voice_note(ogg), t("de", "voice_too_many_words", size=str(len("bla " * 1025) - 1), limit="4000"), 1),
    ]
    audio.hear(status=500)
    audio.hear("zu spät", delay=2.0)
    audio.hear("   ")
    audio.hear("bla " * 1025)
    try:
        for incoming, told, uploads in cases:
            before = len(audio.uploads)
            reply = await answer(engine, incoming)
            assert reply.bubbles == (told,) and reply.failed, incoming.attachment
            assert len(audio.uploads) - before == uploads
            assert await rows(store) == []  # nothing half-stored
        chat.enqueue("Jetzt klappt es.")
        audio.hear(f"{CAKE}.")
        assert (await answer(engine, voice_note(ogg))).bubbles == ("Jetzt klappt es.",)
        assert audio.uploads[-1].data == ogg
        chat.enqueue("Und getippt auch.")
        assert (await answer(engine, Incoming("anna", "Hallo"))).bubbles == ("Und getippt auch.",)
    finally:
        await engine.drain()
        await engine.close()


async def test_a_caption_in_crisis_keeps_the_help_lines_when_the_voice_note_cannot_be_heard(
    engine: Engine, audio: FakeAudioAPI,
) -> None:
    audio.hear(status=503)
    reply = await answer(engine, voice_note(spoken("Hallo"), caption="Ich will nicht mehr leben"))
    assert reply.bubbles == (crisis_help("DE", "de"), t("de", "voice_backend_down"))


async def test_without_a_backend_one_plain_sentence_and_the_operators_log_says_what_to_set(
    store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    for lang in ("de", "en"):
        engine = make_engine(store, chat, background, None, language=lang)
        reply = await answer(engine, voice_note(spoken("Hallo")))
        assert reply.bubbles == (t(lang, "voice_not_set_up"),) and "MNEMO_" not in reply.bubbles[0]
        said = await Commands(engine).run("anna", "/voice on" if lang == "en" else "/voice an")
        assert said is not None and said.bubbles == (t(lang, "voice_speaker_not_set_up"),)
        assert "MNEMO_" not in said.bubbles[0]
        await engine.close()
    assert "MNEMO_TRANSCRIBE_BASE_URL" in caplog.text and "MNEMO_SPEECH_BASE_URL" in caplog.text
    assert await rows(store) == [] and chat.calls == []


async def test_a_voice_note_logged_before_a_crash_is_answered_from_its_transcript_not_heard_again(
    engine: Engine, chat: ScriptedLLM, store: MemoryStore, audio: FakeAudioAPI,
) -> None:
    sent = spoken(CAKE)
    audio.hear(f"{CAKE}.")
    chat.enqueue_error(LLMUnavailable("the process was killed here"))  # logged, not answered
    first = await answer(engine, voice_note(sent, ref="42:7"))
    assert first.failed
    chat.enqueue("Jetzt aber: was für ein Kuchen?")
    replayed = await answer(engine, voice_note(sent, ref="42:7"))  # the channel hands it over again
    assert replayed.bubbles == ("Jetzt aber: was für ein Kuchen?",)
    assert len(audio.uploads) == 1 and chat.calls[-1].messages[-1].content.endswith(f"{CAKE}.")
    assert await rows(store) == [("user", f"{CAKE}.", "voice"), ("assistant", "Jetzt aber: was für ein Kuchen?",
                                                                     "text")]
    assert await engine.handle(voice_note(sent, ref="42:7")) is None  # answered: never again


async def test_voice_replies_follow_the_scopes_mode(
    engine: Engine, chat: ScriptedLLM, store: MemoryStore, audio: FakeAudioAPI,
) -> None:
    commands = Commands(engine)

    async def command(text: str) -> str:
        reply = await commands.run("anna", text)
        assert reply is not None
        return reply.bubbles[0]

    assert (await command("/voice")).startswith("Sprachantworten: aus.")
    chat.enqueue("Getippt, also geschrieben.")
    assert (await answer(engine, Incoming("anna", "Hallo"))).voice is None

    assert (await command("/voice auto")).startswith("Sprachantworten: auto")
    chat.enqueue("Geschrieben.")
    assert (await answer(engine, Incoming("anna", "Hallo"))).voice is None
    audio.hear("Hallo, hörst du mich?")
    chat.enqueue("Ja, ich höre dich gut. Schön, deine Stimme zu hören!")
    spoken_reply = await answer(engine, voice_note(spoken("Hallo, hörst du mich")))
    assert spoken_reply.bubbles == ("Ja, ich höre dich gut. Schön, deine Stimme zu hören!",)
    assert spoken_reply.voice is not None and spoken_reply.voice.data == audio.speech_sent[-1]
    assert spoken_reply.voice.mime == "audio/ogg" and spoken_reply.voice.seconds == ogg_seconds(audio.speech_sent[-1])
    assert audio.speech_requests[-1] == {"model": "tts-1", "voice": "alloy", "response_format": "opus",
                                         "input": "Ja, ich höre dich gut. Schön, deine Stimme zu hören!"}

    assert (await command("/voice an")).startswith("Sprachantworten: an.")
    long = "Das ist eine lange Antwort mit vielen Sätzen, die niemand ganz hören will. " * 20
    chat.enqueue(long.strip())
    reply = await answer(engine, Incoming("anna", "Erzähl mir alles"))
    assert "".join(reply.bubbles).replace("\n", "").replace(" ", "") == long.replace(" ", "")  # all of it as text
    said = audio.speech_requests[-1]["input"]
    assert len(said) <= 600 and said.endswith("will.") and long.startswith(said)

    assert (await command("/voice aus")).startswith("Sprachantworten: aus.")
    chat.enqueue("Wieder nur Text.")
    audio.hear("Und jetzt?")
    assert (await answer(engine, voice_note(spoken("Und jetzt")))).voice is None
    assert await command("/voice laut") == t("de", "voice_usage")
    scope = await engine.scope_for("anna")
    assert await engine.voice.mode(scope) == "off"


async def test_a_failing_or_garbled_speaker_leaves_the_reply_as_text(
    engine: Engine, chat: ScriptedLLM, store: MemoryStore, audio: FakeAudioAPI,
) -> None:
    scope = await engine.scope_for("anna")
    await engine.voice.set_mode(scope, "on")
    audio.say(status=500)
    audio.say(audio=b"<html>Bad gateway</html>", content_type="text/html")
    for text in ("Erste Antwort.", "Zweite Antwort."):
        chat.enqueue(text)
        reply = await answer(engine, Incoming("anna", "Hallo"))
        assert reply.bubbles == (text,) and reply.voice is None and not reply.failed
    assert [r[1] for r in await rows(store) if r[0] == "assistant"] == ["Erste Antwort.", "Zweite Antwort."]
    chat.enqueue("Dritte Antwort.")
    assert (await answer(engine, Incoming("anna", "Hallo"))).voice is not None  # the next one is spoken again


async def test_in_a_group_the_transcript_stands_after_the_members_name(
    engine: Engine, chat: ScriptedLLM, store: MemoryStore, audio: FakeAudioAPI,
) -> None:
    group = "tg:group:-100"
    audio.hear("Was meint ihr zum Ausflug?")
    chat.enqueue("Ich bin dafür!")
    incoming = dataclasses.replace(voice_note(spoken("Was meint ihr zum Ausflug"), caption="Anna: ", user=group),
                                   sender="tg:42")
    assert (await answer(engine, incoming)).bubbles == ("Ich bin dafür!",)
    scope = await engine.scope_for(group)
    assert [(m.text, m.origin) for m in await store.messages.recent(scope)][0] == \
        ("Anna: Was meint ihr zum Ausflug?", "voice")


async def test_deleteme_erases_the_transcripts_with_everything_else(
    engine: Engine, chat: ScriptedLLM, store: MemoryStore, audio: FakeAudioAPI,
) -> None:
    audio.hear(f"{CAKE}.")
    await answer(engine, voice_note(spoken(CAKE)))
    commands = Commands(engine)
    await commands.run("anna", "/voice auto")
    await commands.run("anna", "/deleteme")
    await commands.press("anna", "deleteme:yes")
    scope = await engine.scope_for("anna")
    assert await store.messages.count(scope) == 0 and await engine.voice.mode(scope) == "off"
    assert await store.search(scope, "Kuchen gebacken", ("message",), k=3) == []


def test_every_voice_setting_is_in_the_env_example_and_its_values_set_both_backends_up(tmp_path: Path) -> None:
    example = (Path(__file__).parent.parent / ".env.example").read_text(encoding="utf-8")
    lines = [line[1:].split("  #")[0].strip() for line in example.splitlines()
             if re.match(r"#MNEMO_(TRANSCRIBE|SPEECH|VOICE)_", line)]
    names = {line.split("=", 1)[0].removeprefix("MNEMO_").lower() for line in lines}
    assert names == {n for n in Settings.model_fields if n.startswith(("transcribe_", "speech_", "voice_"))}
    (tmp_path / ".env").write_text("\n".join(lines) + "\n", encoding="utf-8")
    settings = load_settings(tmp_path / ".env")
    transcriber, speaker = voice_backends(settings)
    assert transcriber is not None and speaker is not None and transcriber.language == "de"
    assert engine_config(settings).voice_max_bytes == 20_000_000 and settings.speech_max_chars == 600
    nothing = voice_backends(load_settings(None))
    assert nothing == (None, None)  # with nothing set, mnemo starts as before
