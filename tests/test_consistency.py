"""What a user notices where features meet: one export format, the interface in one language, the log level."""
from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.channels.access import run_pair
from bot.cli import main
from bot.commands.catalog import COMMANDS, menu
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.texts import TEXTS
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.both_backends("the export read from every table")

# English words that showed in the German interface (whole words, any case).
ENGLISH = re.compile(r"\b(diary|reflection|hours|checkins|push|delete|create|update|note|rule|work|approved|"
                     r"revoked|by|on|off)\b", re.IGNORECASE)


@pytest.fixture
async def commands(store: MemoryStore) -> AsyncIterator[Commands]:
    engine = Engine(store, ScriptedLLM(), ScriptedLLM(), EngineConfig(relevance_floor=0.0))
    yield Commands(engine)
    await engine.close()


@pytest.fixture
def root_logging() -> Iterator[None]:
    """`mnemo` installs its own log handler; put pytest's back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


async def said(commands: Commands, text: str) -> str:
    reply = await commands.run("anna", text)
    assert reply is not None
    return "\n".join(reply.bubbles)


# --- one export format ------------------------------------------------------------------------------


def test_the_chats_export_is_what_mnemo_import_reads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str], root_logging: None) -> None:
    async def export() -> bytes:
        async with await MemoryStore.open(tmp_path / "a.sqlite3", FakeEmbedder()) as store:
            engine = Engine(store, ScriptedLLM(), ScriptedLLM(), EngineConfig(relevance_floor=0.0))
            scope = await engine.scope_for("tg:42")
            message = await store.messages.add(scope, "user", "Ich spiele Cello im Orchester.")
            await store.notes.add(scope, "Anna spielt Cello im Orchester.", source_message_ids=[message.id])
            await store.profile.set(scope, "facts", "work", "Cellistin")
            rule = await store.rules.propose(scope, "Antworte kurz.")
            await store.rules.decide(scope, rule.id, "active")
            reply = await Commands(engine).run("tg:42", "/export")
            await engine.close()
            assert reply is not None and reply.document is not None
            return reply.document.content

    exported = tmp_path / "mnemo-export.json"
    exported.write_bytes(asyncio.run(export()))
    monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path / "b"))
    monkeypatch.setenv("MNEMO_EMBEDDING_MODEL", "tests.fakes.embedder:FakeEmbedder")
    assert main(["--env-file", str(tmp_path / "none.env"), "import", str(exported), "--user", "tg:99"]) == 0
    assert "imported: messages 1, notes 1, profile 1, thoughts 0, diary 0, topics 0, rules 1" in capsys.readouterr().out

    async def imported() -> tuple[list[str], list[str], list[str]]:
        async with await MemoryStore.open(tmp_path / "b", FakeEmbedder()) as store:
            scope = await store.scope("mnemo", "tg:99")
            [note] = await store.notes.list(scope)
            source = await store.messages.get(scope, note.source_message_ids[0])
            return ([note.text, source.text if source else ""], [e.value for e in await store.profile.list(scope)],
                    [r.text for r in await store.rules.list(scope, "active")])

    assert asyncio.run(imported()) == (["Anna spielt Cello im Orchester.", "Ich spiele Cello im Orchester."],
                                       ["Cellistin"], ["Antworte kurz."])


# --- the German interface says everything in German -----------------------------------------------


async def test_settings_speak_german_and_take_german_words(commands: Commands) -> None:
    shown = await said(commands, "/settings")
    assert shown.splitlines()[1:5] == ["Tagebuch: 23:45 Uhr (zuschicken: aus)", "Nachdenken: 22:00 Uhr",
                                       "Aktive Zeiten: 9-21 Uhr", "Nachfragen von mir: an"]
    assert not ENGLISH.search(shown), shown
    changed = await said(commands, "/settings nachfragen aus")
    assert "Nachfragen von mir: aus" in changed and changed.startswith("Gespeichert.")
    assert "Tagebuch: 23:45 Uhr (zuschicken: an)" in await said(commands, "/settings tagebuch an")
    assert await said(commands, "/settings nachfragen vielleicht") == "Das verstehe ich nicht – erwartet: an oder aus"
    assert await said(commands, "/settings zeiten 9 bis 21") == "Das verstehe ich nicht – erwartet: Stunden wie 9-21"
    english = await said(commands, "/settings sprache en")  # the person's own language: the answer in it already
    assert english.startswith("Saved.") and "Check-ins: off" in english and "Language: English" in english


async def test_profile_keys_and_undo_lines_are_german(commands: Commands, store: MemoryStore) -> None:
    scope = await commands.engine.scope_for("anna")
    await store.profile.set(scope, "facts", "work", "Ärztin im Krankenhaus")
    await store.profile.set(scope, "facts", "name", "Anna")
    await store.profile.set(scope, "facts", "lieblingsfarbe", "Blau")
    profile = await said(commands, "/profile")
    assert profile.splitlines()[0] == "Dein Profil:"
    assert sorted(profile.splitlines()[1:]) == ["Arbeit: Ärztin im Krankenhaus", "Name: Anna", "lieblingsfarbe: Blau"]
    rule = await store.rules.propose(scope, "Antworte kurz.")
    await store.rules.decide(scope, rule.id, "active")
    assert await said(commands, "/undo") == "Rückgängig gemacht:\n• Regel #1 geändert: Antworte kurz."
    assert await said(commands, "/undo") == "Rückgängig gemacht:\n• Profileintrag angelegt: Blau"
    assert not ENGLISH.search(await said(commands, "/undo"))


# A command with its sub-command or argument word in a usage line ('/people rename', '!pair revoke').
SUBCOMMAND = re.compile(r"[/!]([a-z]+) ([a-zäöüß]+)\b")
SAME_IN_BOTH = {"auto", "status"}  # '/voice auto' and '/incognito status' are German too


async def test_german_usage_and_help_texts_show_the_german_sub_commands(commands: Commands) -> None:
    english = {m.groups() for text in TEXTS.values() for m in SUBCOMMAND.finditer(text["en"])}
    english = {pair for pair in english if pair[1] not in SAME_IN_BOTH}
    assert ("people", "rename") in english and ("pair", "revoke") in english  # the check sees what it looks for
    shown = {key: text["de"] for key, text in TEXTS.items()}
    shown |= {"/help": await said(commands, "/help"), "/people x": await said(commands, "/people umbenennen")}
    found = {key: pair for key, text in shown.items() for m in SUBCOMMAND.finditer(text)
             if (pair := m.groups()) in english}
    assert found == {}
    assert "/people umbenennen 3 Mia" in TEXTS["people_usage"]["de"] and "/pair entziehen" in TEXTS["pair_usage"]["de"]


def test_the_menu_names_memories_and_reminders_apart() -> None:
    german = dict(menu("de"))
    assert sum("Erinnerung" in german[name] for name in ("memories", "reminders")) <= 1, german
    assert len(set(german.values())) == len(COMMANDS) and len(set(dict(menu("en")).values())) == len(COMMANDS)


async def test_pair_list_speaks_one_language(store: MemoryStore) -> None:
    now = time.time()
    _step, request = await store.access.request("telegram", "tg:666", "Eve", now, 600)
    assert request is not None
    await store.access.approve(request.code, "cli", now)
    await store.access.revoke("tg:666", "tg:42", now + 60)
    code, german = await run_pair(store.access, "list", None, "de", now + 120)
    assert code == 0 and not ENGLISH.search(german), german
    assert "tg:666  Eve  freigeschaltet am " in german and "von der Kommandozeile, entzogen am " in german
    code, english = await run_pair(store.access, "list", None, "en", now + 120)
    assert "Approved:" in english and " by the command line, revoked " in english and "freigeschaltet" not in english


# --- the log level of the env file -----------------------------------------------------------------


def test_the_env_files_log_level_applies_and_the_command_line_wins(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, root_logging: None) -> None:
    monkeypatch.delenv("MNEMO_LOG_LEVEL", raising=False)
    monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path))
    env = tmp_path / "mnemo.env"
    env.write_text("MNEMO_LOG_LEVEL=info\n", encoding="utf-8")
    assert main(["--env-file", str(env), "migrate"]) == 0
    assert logging.getLogger().level == logging.INFO
    assert main(["--env-file", str(env), "--log-level", "error", "migrate"]) == 0
    assert logging.getLogger().level == logging.ERROR
    assert main(["--env-file", str(tmp_path / "none.env"), "migrate"]) == 0
    assert logging.getLogger().level == logging.WARNING
    env.write_text("MNEMO_LOG_LEVEL=loud\n", encoding="utf-8")
    assert main(["--env-file", str(env), "migrate"]) == 2



async def test_an_export_names_its_format_first(store: MemoryStore) -> None:
    data = await store.export(await store.scope("mnemo", "tg:1"))
    assert list(data)[:3] == ["format", "companion_id", "user_id"] and data["format"] == "mnemo-export-1"
    assert json.loads(json.dumps(data)) == data


def test_the_env_example_names_every_setting() -> None:
    from bot.settings import Settings

    listed = set(re.findall(r"\bMNEMO_[A-Z0-9_]+", (Path(__file__).parents[1] / ".env.example").read_text("utf-8")))
    assert {f"MNEMO_{name.upper()}" for name in Settings.model_fields} <= listed
