"""/deleteme and /forget on Telegram, after extraction and a backup: then no byte of the words is in any file.

Anna and Ben chat with mnemo through the unmodified python-telegram-bot Application against the fake Bot
API; the background model answers extraction with notes, a profile entry and a person drawn from their
messages; a backup is made as `mnemo backup` makes it. After Anna's /deleteme (or /forget of one note) and
its button, every file under the data folder (the database, its write-ahead log and shared memory, the
backups) is searched byte for byte for her words in every spelling SQLite or a JSON payload keeps, and for
the hashes the embedding cache keyed her texts by.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bot.analysis_reports import ReportHeader, list_reports, render_report, save_report
from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.learning.extraction import SCHEMA
from bot.texts import t
from memory.storage.backup import backup, backup_name
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import Call, ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.scenarios.traces import files, spellings, traces

ANNA, BEN = 42, 43
# what each one writes, and what extraction takes from it: (fact, profile (key, value), person (name, relation))
ANNA_SAYS = {
    "Ich wohne jetzt im Quirlbachtal, direkt neben der Hängemattenfabrik.":
        ("Anna wohnt im Quirlbachtal neben der Hängemattenfabrik.", ("home", "Quirlbachtal"), None),
    "Meine Schwester Wilhelmine Zwetschgenbaum besucht mich am Sonntag.":
        ("Wilhelmine Zwetschgenbaum besucht Anna am Sonntag.", None, ("Wilhelmine Zwetschgenbaum", "Schwester")),
    "Mein Lieblingsessen ist Bärlauchknödel mit Schnittlauchsoße.":
        ("Anna isst am liebsten Bärlauchknödel.", None, None),
}
ANNA_WORDS = ("Quirlbachtal", "Hängemattenfabrik", "Wilhelmine", "Zwetschgenbaum", "Bärlauchknödel", "Schnittlauchsoße")
BEN_SAYS = {"Ich repariere alte Xylophonklöppel in meiner Werkstatt.":
            ("Ben repariert Xylophonklöppel.", ("work", "Xylophonklöppelwerkstatt"), None)}
FORGET_SAYS = {
    "Ich sammle kleine Ritter aus Zinn, die Sammlung ist vom Großvater.":
        ("Anna sammelt Zinnsoldatenfiguren vom Großvater.", None, None),
    "Ich spiele Bandoneon in einem Tangoorchester.": ("Anna spielt Bandoneon im Tangoorchester.", None, None),
}
SCRIPT = {**ANNA_SAYS, **BEN_SAYS, **FORGET_SAYS}


def extraction(call: Call) -> str:
    """The background model: for each user line of the transcript, what SCRIPT says extraction finds."""
    if call.json_schema is not SCHEMA:
        return "Anna und Ben haben erzählt."
    facts, profile, people = [], [], []
    for msg_id, text in re.findall(r"^\[(\d+)\] user: (.*)$", call.messages[-1].content, re.MULTILINE):
        if text not in SCRIPT:
            continue
        fact, entry, person = SCRIPT[text]
        source = [int(msg_id)]
        facts.append({"text": fact, "importance": 7, "source_ids": source})
        if entry:
            profile.append({"category": "facts", "key": entry[0], "value": entry[1], "source_ids": source})
        if person:
            people.append({"name": person[0], "relation": person[1], "facts": [fact], "source_ids": source})
    return json.dumps({"facts": facts, "content": [], "profile": profile, "topics": [], "people": people})


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[FakeTelegram, MemoryStore, Engine, Path]]:
    """The data folder, its store, an engine whose background model extracts, and the fake Bot API."""
    data = tmp_path / "data"
    store = await MemoryStore.open(data, FakeEmbedder(), semantic_dedupe=0.97)
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    chat.responder = lambda call: "Danke, dass du mir das erzählst."
    background.responder = extraction
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0, admission=None))
    fake = FakeTelegram(token="123:ABC")
    async with fake:
        settings = TelegramConfig(token=fake.token, base_url=fake.base_url, streaming=False,
                                  allowed_users=frozenset({str(ANNA), str(BEN)}))
        channel = TelegramChannel(engine, Commands(engine), dataclasses.replace(settings))
        await channel.start()
        try:
            yield fake, store, engine, data
        finally:
            await channel.stop()
            await engine.drain()
            await engine.close()
            await store.close()


async def say(tg: FakeTelegram, engine: Engine, user: int, text: str) -> dict[str, Any]:
    """Send a message as the user; return the bot's answer once extraction has run."""
    before = len(tg.sent)
    tg.send_text(user, text, first_name="Anna" if user == ANNA else "Ben")
    sent = await tg.wait_for_sent(before + 1)
    await engine.drain()
    return sent[before]


async def press(tg: FakeTelegram, store: MemoryStore, user: int, message: dict[str, Any], data: str) -> None:
    """Press a button under a message and wait until its update is handled (its inbox row done)."""
    answers = len(tg.callback_answers)
    tg.press_button(user, message["message_id"], data)
    await tg.wait_until(lambda: len(tg.callback_answers) > answers, what=f"the answer to {data}")
    for _ in range(400):
        async with store.db.reading() as tx:
            (left,) = await tx.fetchone("SELECT count(*) FROM inbox WHERE handled_at IS NULL")
        wal = store.db.path.with_name(store.db.path.name + "-wal")
        if left == 0 and (not wal.exists() or wal.stat().st_size == 0):
            return
        await asyncio.sleep(0.005)


def data_of(message: dict[str, Any]) -> list[str]:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard", [])
    return [b["callback_data"] for row in rows for b in row]


async def hashes(store: MemoryStore, scope_id: int) -> set[str]:
    """The content hashes the scope's documents and their cached embeddings go by."""
    async with store.db.reading() as tx:
        return {r[0] for r in await tx.fetchall("SELECT content_hash FROM docs WHERE scope_id = ?", (scope_id,))}


async def test_deleteme_leaves_no_byte_of_the_users_words_in_any_file(world) -> None:  # type: ignore[no-untyped-def]
    tg, store, engine, data = world
    for text in ANNA_SAYS:
        await say(tg, engine, ANNA, text)
    for text in BEN_SAYS:
        await say(tg, engine, BEN, text)
    anna, ben = await engine.scope_for(f"tg:{ANNA}"), await engine.scope_for(f"tg:{BEN}")
    assert await store.notes.count(anna) == 3 and [p.name for p in await store.people.all(anna)] == [
        "Wilhelmine Zwetschgenbaum"]
    assert [e.value for e in await store.profile.list(anna)] == ["Quirlbachtal"]
    copy = await backup(store.db, backup_name(data / "backups"))
    # `mnemo analyse` quoted both
    for user, said in ((f"tg:{ANNA}", next(iter(ANNA_SAYS))), (f"tg:{BEN}", next(iter(BEN_SAYS)))):
        header = ReportHeader(datetime.now(), "scripted", "blind", f"user {user}; first message to last message",
                              "1 conversation")
        save_report(data, render_report(header, f"Sie schrieb: „{said}“", []), header.created)
    shared = await hashes(store, ben.id)  # mnemo's replies were the same to both
    needles = {s for word in ANNA_WORDS for s in spellings(word)} | (await hashes(store, anna.id) - shared)
    before = traces(data, needles)
    assert set(before) == needles and all("backups/" + copy.name in where for where in before.values()), (
        "the search finds every spelling and hash of Anna's words in the files while they are stored")

    confirm = await say(tg, engine, ANNA, "/deleteme")
    assert data_of(confirm) == ["deleteme:yes", "cancel"]
    await press(tg, store, ANNA, confirm, "deleteme:yes")

    assert tg.edits[-1]["text"] == t("de", "deleteme_done")
    assert traces(data, needles) == {}, f"left behind in {files(data)}"
    ben_words = spellings("Xylophonklöppel") | await hashes(store, ben.id)
    assert set(traces(data, ben_words)) == ben_words, "Ben's words are all still there"
    assert [r.summary["Selection"].split(";")[0] for r in list_reports(data)] == [f"user tg:{BEN}"]
    assert [h.text for h in await store.search(ben, "Xylophonklöppel")][:1] == ["Ben repariert Xylophonklöppel."]


async def test_forget_leaves_no_byte_of_the_note_and_the_other_notes_stay(world) -> None:  # type: ignore[no-untyped-def]
    tg, store, engine, data = world
    for text in FORGET_SAYS:
        await say(tg, engine, ANNA, text)
    anna = await engine.scope_for(f"tg:{ANNA}")
    notes = {n.text: n for n in await store.notes.list(anna)}
    gone, kept = (notes["Anna sammelt Zinnsoldatenfiguren vom Großvater."],
                  notes["Anna spielt Bandoneon im Tangoorchester."])
    await backup(store.db, backup_name(data / "backups"))
    async with store.db.reading() as tx:
        (gone_hash,) = await tx.fetchone("SELECT content_hash FROM docs WHERE source = 'note' AND item_id = ?",
                                         (gone.id,))
    needles = spellings("Zinnsoldatenfiguren") | {gone.text, gone_hash}
    assert set(traces(data, needles)) == needles

    pick = await say(tg, engine, ANNA, "/forget Zinnsoldatenfiguren")
    assert gone.text in pick["text"] and f"forget:{gone.id}" in data_of(pick)
    await press(tg, store, ANNA, pick, f"forget:{gone.id}")

    assert tg.edits[-1]["text"] == t("de", "forget_done", text=gone.text)
    assert traces(data, needles) == {}, f"left behind in {files(data)}"
    assert [h.item_id for h in await store.search(anna, "Tangoorchester Bandoneon")][:1] == [kept.id]
    assert set(traces(data, spellings("Tangoorchester"))) == spellings("Tangoorchester")
    assert "Großvater" in json.dumps([m.text for m in await store.messages.recent(anna)], ensure_ascii=False), (
        "the conversation itself is kept: /forget takes a note, not what was said")
