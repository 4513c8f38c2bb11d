"""Messenger polish on Telegram: pairing, groups, streamed replies, restart safety, flood control, proactive hygiene.

The unmodified python-telegram-bot Application talks to the local fake Bot API; `mnemo pair` runs as a real
process; a crash is a real SIGKILL of a child process that runs the channel.
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import logging
import os
import re
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.channels.access import Access, AccessConfig
from bot.channels.push import ChannelSender
from bot.channels.streaming import LivePreview, preview_text
from bot.channels.telegram.channel import TelegramChannel, TelegramConfig, group_text
from bot.channels.telegram.polling import backoff, stalled
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.errors import LLMUnavailable
from bot.llm.port import ToolCall
from bot.texts import t
from memory.account.pairing import GROUP_TITLE, PairingRequest, code_valid, normalize_code, pairing_step
from memory.models import Scope, is_group_scope
from memory.store import MemoryStore
from scheduler.checkin import check_in, repeats
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram

JSON = dict[str, Any]
USER, OTHER, STRANGER, MEMBER = 42, 43, 666, 777
GROUP, OTHER_GROUP = -1001, -1002
ROOT = Path(__file__).resolve().parents[1]
CODE = re.compile(r"\b([A-HJ-NP-Z2-9]{8})\b")

# PTB warns about its own RetryAfter.retry_after (int today, timedelta later) when it raises one.
pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


def make_channel(tg: FakeTelegram, engine: Engine, **config: Any) -> TelegramChannel:
    """A streaming channel for the fake; Anna (42) and Ben (43) are allowed, Anna is an admin."""
    clock = config.pop("clock", time.time)
    settings = TelegramConfig(token=tg.token, base_url=tg.base_url, allowed_users=frozenset({str(USER), str(OTHER)}),
                              admins=frozenset({f"tg:{USER}"}), allowed_groups=frozenset({str(GROUP)}))
    return TelegramChannel(engine, Commands(engine), dataclasses.replace(settings, **config), clock=clock)


@contextlib.asynccontextmanager
async def running(tg: FakeTelegram, engine: Engine, **config: Any) -> AsyncIterator[TelegramChannel]:
    """A started channel, stopped on exit (welcome_every: how often it looks for users approved elsewhere)."""
    welcome_every = config.pop("welcome_every", None)
    channel = make_channel(tg, engine, **config)
    if welcome_every is not None:
        channel.access.welcome_every = welcome_every
    await channel.start()
    try:
        yield channel
    finally:
        await channel.stop()


def texts_to(tg: FakeTelegram, chat_id: int) -> list[str]:
    """What a chat shows now: the current text of each message the bot sent there, in order."""
    return [tg.messages[m["message_id"]]["text"] for m in tg.sent if m["chat_id"] == chat_id]


async def answer(tg: FakeTelegram, user: int, text: str, replies: int = 1, **options: Any) -> list[str]:
    """Send a text and return the texts of the bot's next `replies` messages."""
    before = len(tg.sent)
    tg.send_text(user, text, **options)
    await tg.wait_for_sent(before + replies)
    return [m["text"] for m in tg.sent[before:]]


async def quiet(tg: FakeTelegram, seconds: float = 0.3) -> None:
    """Let the channel work through what is queued (nothing to wait for when it stays silent)."""
    await tg.wait_until(lambda: not tg.pending, what="the fake's queue to be fetched")
    await asyncio.sleep(seconds)


async def scope_ids(store: MemoryStore) -> set[str]:
    async with store.db.reading() as tx:
        return {row[0] for row in await tx.fetchall("SELECT user_id FROM scopes")}


async def mnemo(data_dir: Path, *args: str, store: MemoryStore | None = None) -> tuple[int, str]:
    """Run the real `mnemo` command line in a child process (on the store's database); its exit code and output."""
    env = {**os.environ, "MNEMO_DATA_DIR": str(data_dir), "MNEMO_EMBEDDING_MODEL": "fake"}
    if store is not None and store.db.url:
        env["MNEMO_DATABASE_URL"] = store.db.url  # type: ignore[attr-defined]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "--env-file", "/dev/null", *args, cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode()


# --- pairing --------------------------------------------------------------------------------------------


async def test_pairing_from_first_contact_to_an_approved_chat(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, chat: ScriptedLLM, tmp_path: Path,
) -> None:
    async with running(tg, engine, welcome_every=0.1):
        (code_text,) = await answer(tg, STRANGER, "Hallo, ich bin Eve. Mein Geheimnis: ich heiße eigentlich Evelyn.",
                                    first_name="Eve")
        code = CODE.search(code_text).group(1)  # type: ignore[union-attr]
        assert code_text == t("de", "pairing_code", code=code, minutes="10 Minuten")
        tg.send_text(STRANGER, "Hallo?? Antworte!", first_name="Eve")  # the code is valid: no second answer
        await quiet(tg)
        assert len(tg.sent) == 1 and chat.calls == []
        # Until approved, nothing of Eve is stored beyond the pending request.
        assert f"tg:{STRANGER}" not in await scope_ids(store)
        async with store.db.reading() as tx:
            assert await tx.fetchall("SELECT payload FROM inbox WHERE payload IS NOT NULL") == []
            rows = [row for table in ("pairing_requests", "inbox", "messages")
                    for row in await tx.fetchall(f"SELECT * FROM {table}")]
        dump = "\n".join(map(str, rows))
        assert "Evelyn" not in dump and "Antworte" not in dump
        assert [(r.code, r.user_id, r.display_name) for r in await store.access.pending(time.time())] == [
            (code, f"tg:{STRANGER}", "Eve")]

        status, listing = await mnemo(tmp_path, "pair", "list", store=store)
        assert status == 0 and code in listing and f"tg:{STRANGER}" in listing
        status, out = await mnemo(tmp_path, "pair", "approve", code.lower()[:4] + "-" + code.lower()[4:],
                                  store=store)
        assert status == 0 and out.splitlines()[-1] == t("de", "pair_approved", user=f"tg:{STRANGER}", name="Eve")
        assert "pairing approved: tg:666 (Eve) on telegram by cli" in out  # the log line
        # The running bot tells Eve, once, that she can write now (approved by another process).
        await tg.wait_for_sent(2)
        await asyncio.sleep(0.5)
        assert texts_to(tg, STRANGER) == [code_text, t("de", "paired_welcome")]

        chat.enqueue("Hallo Eve, schön dich kennenzulernen!")
        assert await answer(tg, STRANGER, "Jetzt aber: Hallo!", first_name="Eve") == [
            "Hallo Eve, schön dich kennenzulernen!"]
        (approved,) = await store.access.approved()
        assert (approved.user_id, approved.approved_by) == (f"tg:{STRANGER}", "cli")
        assert await store.access.pending(time.time()) == []

        status, out = await mnemo(tmp_path, "pair", "revoke", f"tg:{STRANGER}", store=store)
        assert status == 0 and "pairing revoked: tg:666 (Eve) on telegram by cli" in out
        (again,) = await answer(tg, STRANGER, "Bist du noch da?", first_name="Eve")
        assert CODE.search(again) and CODE.search(again).group(1) != code  # type: ignore[union-attr]
        assert len(chat.calls) == 1
        (revoked,) = await store.access.approved(with_revoked=True)
        assert revoked.revoked_by == "cli" and revoked.revoked_at is not None
        status, out = await mnemo(tmp_path, "pair", "approve", "ZZZZZZZZ", store=store)
        assert status == 1 and out.splitlines()[-1] == t("de", "pair_unknown", what="ZZZZZZZZ")


async def test_an_admin_approves_in_the_chat_and_an_old_code_has_expired(
    tg: FakeTelegram, engine: Engine, chat: ScriptedLLM,
) -> None:
    now = [time.time()]
    async with running(tg, engine, clock=lambda: now[0]):
        code = CODE.search((await answer(tg, STRANGER, "Hallo", first_name="Eve"))[0]).group(1)  # type: ignore[union-attr]
        (listing,) = await answer(tg, USER, "/pair")
        assert listing.startswith(t("de", "pair_list_head")) and code in listing and "Eve" in listing
        assert await answer(tg, OTHER, f"/pair {code}") == [t("de", "unknown_command")]  # Ben is no admin

        approved, welcome = await answer(tg, USER, f"/pair {code}", replies=2)
        assert approved == t("de", "pair_approved", user=f"tg:{STRANGER}", name="Eve")
        assert (tg.sent[-1]["chat_id"], welcome) == (STRANGER, t("de", "paired_welcome"))
        chat.enqueue("Hallo Eve!")
        assert await answer(tg, STRANGER, "Hallo!") == ["Hallo Eve!"]

        late = CODE.search((await answer(tg, 888, "Hallo", first_name="Max"))[0]).group(1)  # type: ignore[union-attr]
        now[0] += 11 * 60
        assert await answer(tg, USER, f"/pair {late}") == [t("de", "pair_expired", code=late)]
        assert await answer(tg, USER, f"/pair revoke tg:{STRANGER}") == [t("de", "pair_revoked", user=f"tg:{STRANGER}")]
        assert await answer(tg, USER, "/pair entziehen tg:12345") == [t("de", "pair_not_approved", user="tg:12345")]


async def test_refuse_and_silent_modes_and_the_flood_limit(store: MemoryStore) -> None:
    refusing = Access(store.access, AccessConfig(unknown_users="refuse"), "en")
    assert await refusing.turn_away("telegram", "tg:1", "A") == t("en", "refused")
    assert await refusing.turn_away("telegram", "tg:1", "A") is None  # once per process
    silent = Access(store.access, AccessConfig(unknown_users="silent"), "en")
    assert await silent.turn_away("telegram", "tg:2", "B") is None
    pairing = Access(store.access, AccessConfig(), "en")
    for n in range(20):
        assert CODE.search(await pairing.turn_away("telegram", f"tg:{100 + n}", "x") or "")
    assert await pairing.turn_away("telegram", "tg:999", "x") == t("en", "pairing_full")
    assert len(await store.access.pending(time.time())) == 20


def test_pairing_decisions_are_pure() -> None:
    request = PairingRequest("K7PQ2XMD", "telegram", "tg:1", "Eve", created_at=1000.0, expires_at=1600.0)
    assert code_valid(request, 1599.9) and not code_valid(request, 1600.0)
    assert pairing_step(request, 1500.0, open_requests=3) == "wait"
    assert pairing_step(request, 1700.0, open_requests=3) == "new"  # expired: a new code
    assert pairing_step(None, 1500.0, open_requests=20, limit=20) == "full"
    assert normalize_code(" k7pq-2xmd ") == "K7PQ2XMD"
    assert is_group_scope("tg:group:-1001") and is_group_scope("mx:group:!room:example.org")
    assert not is_group_scope("tg:42") and not is_group_scope("@anna:group:8448")


# --- groups ---------------------------------------------------------------------------------------------


async def test_a_groups_name_is_kept_as_telegram_gives_it(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    async with running(tg, engine):
        tg.send_text(USER, "@mnemo_bot wer kommt heute?", chat_id=GROUP, chat_type="supergroup", title="Lauftreff")
        await quiet(tg)
        scope = await engine.scope_for(f"tg:group:{GROUP}")
        assert await store.state.get(scope, GROUP_TITLE) == "Lauftreff"
        tg.send_text(USER, "@mnemo_bot und du?", chat_id=GROUP, chat_type="supergroup", title="Lauftreff Südvorstadt")
        await quiet(tg)
    assert await store.state.get(scope, GROUP_TITLE) == "Lauftreff Südvorstadt"
    assert await store.state.get(await engine.scope_for(f"tg:{USER}"), GROUP_TITLE) is None  # a person has none


async def test_in_a_group_mnemo_stays_silent_until_mentioned_and_keeps_the_groups_memory_apart(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    async with running(tg, engine) as channel:
        chat.enqueue("Privat: schön, Anna.")
        assert await answer(tg, USER, "Ich habe Angst vor der Prüfung.") == ["Privat: schön, Anna."]

        tg.send_text(MEMBER, "Hallo zusammen, wer kommt heute?", chat_id=GROUP, chat_type="supergroup",
                     first_name="Eve")
        tg.send_text(USER, "Ich!", chat_id=GROUP, chat_type="supergroup")
        tg.send_text(MEMBER, "/memories", chat_id=GROUP, chat_type="supergroup", first_name="Eve")  # no admin
        tg.send_text(MEMBER, "@mnemo_bot bist du da?", chat_id=OTHER_GROUP, chat_type="group", first_name="Eve")
        await quiet(tg)
        assert len(tg.sent) == 1 and len(chat.calls) == 1

        chat.enqueue("Ja, ich bin da!")
        asked = tg.send_text(MEMBER, "@mnemo_bot   was meinst du, Kino oder Park?", chat_id=GROUP,
                             chat_type="supergroup", first_name="Eve")
        await tg.wait_for_sent(2)
        reply = tg.sent[-1]
        assert (reply["chat_id"], reply["text"]) == (GROUP, "Ja, ich bin da!")
        question_id = max(i for i, m in tg.messages.items() if "Kino oder Park" in m.get("text", ""))
        assert reply["reply_parameters"]["message_id"] == question_id and asked

        chat.enqueue("Dann Kino.")
        assert await answer(tg, USER, "Und wenn es regnet?", chat_id=GROUP, chat_type="supergroup",
                            reply_to=reply["message_id"]) == ["Dann Kino."]
        assert "Ich habe Angst vor der Prüfung" not in chat.calls[-1].prompt  # no private memory in the group

        group = await engine.scope_for(f"tg:group:{GROUP}")
        assert [m.text for m in await store.messages.recent(group) if m.role == "user"] == [
            "Eve: was meinst du, Kino oder Park?", "Anna: Und wenn es regnet?"]
        private = await engine.scope_for(f"tg:{USER}")
        assert [m.text for m in await store.messages.recent(private)] == ["Ich habe Angst vor der Prüfung.",
                                                                         "Privat: schön, Anna."]
        assert f"tg:{MEMBER}" not in await scope_ids(store)

        # Proactive messages go only to private chats.
        assert not await ChannelSender({"telegram": channel}).deliver(group, "Na, wie war das Kino?")
        with pytest.raises(ValueError, match="private chats"):
            await channel.send(f"tg:group:{GROUP}", "Hallo Gruppe")
        decision = await check_in(store, Composer("Hallo Gruppe!"), Sender(), group, time.time(), ZoneInfo("UTC"))
        assert not decision.send and "group" in decision.reason
        assert len(tg.sent) == 3


def test_group_text_names_the_sender_and_drops_the_mention() -> None:
    assert group_text("@Mnemo_Bot wie geht's?", "mnemo_bot", "Eve") == "Eve: wie geht's?"
    assert group_text("Was sagst du, @mnemo_bot?", "mnemo_bot", "Eve") == "Eve: Was sagst du?"
    assert group_text("Hey @mnemo_bot, Kino oder Park?", "mnemo_bot", "Ben") == "Ben: Hey Kino oder Park?"


# --- streamed replies -------------------------------------------------------------------------------


async def test_a_streamed_reply_is_one_preview_edited_in_place_then_finalized(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    chat.chunks, chat.chunk_delay = 8, 0.2
    reply = "Das klingt nach einem schönen Tag. [THOUGHT: Anna mag Parks] Was hast du im Park gemacht, erzähl!"
    chat.enqueue(reply)
    async with running(tg, engine):
        tg.send_text(USER, "Ich war heute im Park.")
        await tg.wait_until(lambda: len(chat.calls) == 1 and bool(tg.edits) and
                            tg.messages[tg.sent[0]["message_id"]]["text"].endswith("erzähl!"), timeout=10,
                            what="the finalized reply")
        await quiet(tg, 0.1)
    (preview,) = tg.sent  # exactly one message: the preview, finalized in place
    final = "Das klingt nach einem schönen Tag. Was hast du im Park gemacht, erzähl!"
    assert texts_to(tg, USER) == [final] and chat.calls[0].streamed
    shown = [preview["text"]] + [e["text"] for e in tg.edits]
    assert len(shown) >= 3 and shown[-1] == final and all("[" not in s for s in shown)
    assert all(later.startswith(earlier[:10]) for earlier, later in itertools.pairwise(shown))
    gaps = [b - a for a, b in zip(tg.edit_times, tg.edit_times[1:-1])]  # the last edit is the finalization
    assert all(gap >= 0.55 for gap in gaps), gaps
    assert {"chat_id": USER, "action": "typing"} in tg.chat_actions
    scope = await engine.scope_for(f"tg:{USER}")
    assert [m.text for m in await store.messages.recent(scope)] == ["Ich war heute im Park.", final]
    assert [th.text for th in await store.thoughts.latest(scope, 5)] == ["Anna mag Parks"]


async def test_a_streamed_reply_with_several_bubbles_and_a_tool_round(
    tg: FakeTelegram, engine: Engine, chat: ScriptedLLM,
) -> None:
    chat.enqueue("", [ToolCall("c1", "search_memory", {"query": "Park"})])
    chat.enqueue("Erster Gedanke.\n\nZweiter Gedanke.\n\nDritter Gedanke.")
    async with running(tg, engine):
        tg.send_text(USER, "Was weißt du über den Park?")
        await tg.wait_for_sent(3)
        await quiet(tg, 0.1)
    assert texts_to(tg, USER) == ["Erster Gedanke.", "Zweiter Gedanke.", "Dritter Gedanke."]
    assert [c.streamed for c in chat.calls] == [True, True]


async def test_a_long_streamed_reply_never_shows_less_than_its_preview_did(
    tg: FakeTelegram, engine: Engine, chat: ScriptedLLM,
) -> None:
    paragraphs = [" ".join(f"Satz {p}.{i} über den langen Abend." for i in range(n)) for p, n in ((1, 30), (2, 70),
                                                                                                 (3, 20))]
    chat.chunks, chat.chunk_delay = 12, 0.15  # the preview is edited several times while the model writes
    chat.enqueue("\n\n".join(paragraphs))  # about 3,600 characters in three bubbles
    async with running(tg, engine):
        tg.send_text(USER, "Erzähl mir alles.")
        await tg.wait_for_sent(3)
        await quiet(tg, 0.2)
    preview = tg.sent[0]["message_id"]
    shown = [tg.sent[0]["text"]] + [e["text"] for e in tg.edits if e.get("message_id") == preview and "text" in e]
    assert texts_to(tg, USER) == paragraphs and len(shown) >= 2
    assert all(len(later) >= len(earlier) and later.startswith(earlier)
               for earlier, later in itertools.pairwise(shown)), [len(s) for s in shown]
    assert shown[-1] == paragraphs[0]  # it stopped growing at the first bubble: never more, so never shrunk


async def test_streaming_can_be_turned_off(tg: FakeTelegram, engine: Engine, chat: ScriptedLLM) -> None:
    chat.enqueue("Eins.\n\nZwei.")
    async with running(tg, engine, streaming=False):
        assert await answer(tg, USER, "Hallo", replies=2) == ["Eins.", "Zwei."]
    assert tg.edits == [] and not chat.calls[0].streamed


def test_preview_text_hides_markers_even_half_written() -> None:
    assert preview_text("Schön! [THOUGHT: mag Ce") == "Schön!"
    assert preview_text("Schön! [THOUGHT: mag Cello] Und") == "Schön! Und"
    assert preview_text("[RECALL: Urlaub]") == ""


async def test_a_live_preview_waits_for_a_send_in_flight_when_closed() -> None:
    shown: list[str] = []

    async def show(text: str) -> int:
        await asyncio.sleep(0.05)
        shown.append(text)
        return 7

    async def edit(handle: int, text: str) -> None:
        shown.append(text)

    preview: LivePreview[int] = LivePreview(show, edit, every=10)
    await preview.update("Hallo")
    await asyncio.sleep(0.01)
    await preview.update("Hallo du")  # within `every`: not shown
    assert await preview.close() == 7 and shown == ["Hallo"]


# --- restart safety -----------------------------------------------------------------------------------------


async def test_updates_sent_while_mnemo_was_down_are_answered_once_after_the_restart(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    chat.responder = lambda call: f"Antwort auf: {call.messages[-1].content.splitlines()[-1][:40]}"
    async with running(tg, engine):
        assert len(await answer(tg, USER, "Vor dem Neustart")) == 1
    ids = [tg.send_text(USER, "Eins"), tg.send_text(OTHER, "Zwei", first_name="Ben"), tg.send_text(USER, "Drei")]
    old = {"update_id": 1, "message": dict(tg.messages[1])}
    tg.send_update(old)  # Telegram delivers an update that was handled before the restart once more
    async with running(tg, engine):
        await tg.wait_for_sent(4)
        await quiet(tg)
    async with running(tg, engine):  # and nothing is answered twice by a third run
        await quiet(tg)
    assert len(tg.sent) == 4
    to_anna = [m["text"] for m in tg.sent if m["chat_id"] == USER]
    assert len(to_anna) == 3 and to_anna[1].count("Eins") == 1 and to_anna[2].count("Drei") == 1
    anna = await engine.scope_for(f"tg:{USER}")
    assert [m.text for m in await store.messages.recent(anna) if m.role == "user"] == [
        "Vor dem Neustart", "Eins", "Drei"]
    async with store.db.reading() as tx:
        rows = await tx.fetchall("SELECT event_id, handled_at IS NOT NULL, payload IS NULL FROM inbox ORDER BY rowid")
    assert [r[0] for r in rows] == ["1", *map(str, ids)] and all(r[1] and r[2] for r in rows)
    assert not tg.pending


CHILD = textwrap.dedent('''
    """Run the Telegram channel with a chat model that never answers, until killed."""
    import asyncio, sys
    from bot.commands.runner import Commands
    from bot.conversation.engine import Engine, EngineConfig
    from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
    from memory.store import MemoryStore
    from tests.fakes.embedder import FakeEmbedder

    from tests.fakes.llm import StuckLLM as Stuck

    async def main(db, base_url, database_url):
        store = await MemoryStore.open(db, FakeEmbedder(), semantic_dedupe=0.97, database_url=database_url or None)
        engine = Engine(store, Stuck(), Stuck(), EngineConfig(relevance_floor=0.0))
        config = TelegramConfig(token="123:ABC", base_url=base_url, allowed_users=frozenset({"42"}), streaming=False)
        await TelegramChannel(engine, Commands(engine), config).start()
        print("ready", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
''')


async def test_a_crash_in_the_middle_of_a_reply_loses_nothing(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, chat: ScriptedLLM, tmp_path: Path,
) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(tmp_path / "mnemo.sqlite3"), tg.base_url, store.db.url or "",
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=asyncio.subprocess.PIPE)
    assert child.stdout is not None
    try:
        assert (await asyncio.wait_for(child.stdout.readline(), 30)).strip() == b"ready"
        tg.send_text(USER, "Bist du da?")
        assert (await asyncio.wait_for(child.stdout.readline(), 10)).strip() == b"model called"
        tg.send_text(USER, "Hallo??")  # fetched, stored and confirmed, waiting behind the first
        await tg.wait_until(lambda: not tg.pending, what="Telegram to consider both updates delivered")
        async with store.db.reading() as tx:
            assert (await tx.fetchone("SELECT count(*) FROM inbox WHERE handled_at IS NULL"))[0] == 2
    finally:
        child.kill()  # SIGKILL: no graceful stop
        await child.wait()
    assert tg.sent == []

    chat.responder = lambda call: "Ja, jetzt!" if "Bist du da?" in call.messages[-1].content else "Hier bin ich."
    async with running(tg, engine):
        await tg.wait_for_sent(2)
        await quiet(tg)
    assert [m["text"] for m in tg.sent] == ["Ja, jetzt!", "Hier bin ich."]
    scope = await engine.scope_for(f"tg:{USER}")
    assert [(m.role, m.text) for m in await store.messages.recent(scope)] == [
        ("user", "Bist du da?"), ("assistant", "Ja, jetzt!"), ("user", "Hallo??"), ("assistant", "Hier bin ich.")]


async def test_a_reply_recorded_but_not_sent_before_a_crash_is_sent_after_the_restart(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, chat: ScriptedLLM,
) -> None:
    chat.enqueue("Gut, und dir?")
    async with running(tg, engine):
        update_id = tg.send_text(USER, "Wie geht's?")
        payload = json.dumps(tg.pending[-1])
        await tg.wait_for_sent(1)
    async with store.db.transaction() as tx:  # as if the process died between recording and sending
        await tx.execute("UPDATE inbox SET handled_at = NULL, payload = ? WHERE event_id = ?",
                         (payload, str(update_id)))
    async with running(tg, engine):
        await tg.wait_for_sent(2)
        await quiet(tg)
    assert [m["text"] for m in tg.sent] == ["Gut, und dir?", "Gut, und dir?"] and len(chat.calls) == 1


async def test_the_watchdog_restarts_polling_when_get_updates_hangs(
    tg: FakeTelegram, engine: Engine, chat: ScriptedLLM, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.channels.telegram.polling")
    tg.hang_updates = 1
    chat.enqueue("Wieder da.")
    async with running(tg, engine, watchdog=1.0) as channel:
        started = time.monotonic()
        tg.send_text(USER, "Hallo?")
        await tg.wait_for_sent(1, timeout=4)
        assert time.monotonic() - started < 3.5  # well before the HTTP read timeout (5 s) would end the call
        assert channel.poller is not None and channel.poller.restarts == 1
    assert any("restarting polling" in r.getMessage() for r in caplog.records)


def test_watchdog_and_backoff_decisions() -> None:
    assert not stalled(last_return=100.0, now=219.0, watchdog=120.0) and stalled(100.0, 221.0, 120.0)
    assert [backoff(n) for n in (1, 2, 3, 6, 9)] == [1.0, 2.0, 4.0, 30.0, 30.0]


async def test_flood_control_in_the_middle_of_a_long_reply_resumes_where_it_stopped(
    tg: FakeTelegram, engine: Engine, chat: ScriptedLLM,
) -> None:
    long = " ".join(f"wort{i}" for i in range(700))  # two messages of Telegram's 4096
    chat.enqueue(f"Erstens.\n\n{long}\n\nDrittens.")
    tg.fail_next("sendMessage", 429, retry_after=1, after=2)  # the third chunk is refused once
    async with running(tg, engine, streaming=False):
        tg.send_text(USER, "Erzähl mir alles.")
        await tg.wait_for_sent(4, timeout=6)
        await quiet(tg)
    texts = [m["text"] for m in tg.sent]
    assert texts[0] == "Erstens." and " ".join(texts[1:3]) == long and texts[3] == "Drittens."
    assert tg.calls.count("sendMessage") == 5  # four chunks, one of them twice: each arrives exactly once


# --- proactive hygiene ----------------------------------------------------------------------------------------


class Composer:
    """A composer that writes a fixed text, or fails like a model that is down."""

    def __init__(self, text: str = "", fail: bool = False) -> None:
        self.text, self.fail, self.calls = text, fail, 0

    async def compose_proactive(self, scope: Scope, reason: str, detail: str) -> str:
        self.calls += 1
        if self.fail:
            raise LLMUnavailable("model down")
        return self.text


class Sender:
    """Records what would be delivered."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def deliver(self, scope: Scope, text: str, *, buttons: object = ()) -> bool:
        self.sent.append(text)
        return True


async def test_an_identical_check_in_is_never_sent_twice_within_a_day_and_a_failing_model_sends_nothing(
    store: MemoryStore,
) -> None:
    zone = ZoneInfo("Europe/Berlin")
    now = datetime(2026, 3, 10, 12, 0, tzinfo=zone).timestamp()
    scope = await store.scope("mnemo", "tg:42")
    hour = 3600.0
    await store.messages.add(scope, "user", "Hallo", created_at=now - 30 * hour)
    await store.messages.add(scope, "assistant", "Wie geht es dir heute?", channel="proactive",
                             created_at=now - 22 * hour, proactive=True)
    await store.messages.add(scope, "user", "Gut!", created_at=now - 21 * hour)

    sender = Sender()
    same = await check_in(store, Composer("Wie  geht es dir HEUTE?"), sender, scope, now, zone, timedelta(hours=12))
    assert not same.send and "24 h" in same.reason and sender.sent == []
    failing = Composer(fail=True)
    with pytest.raises(LLMUnavailable):
        await check_in(store, failing, sender, scope, now, zone, timedelta(hours=12))
    assert failing.calls == 1 and sender.sent == []
    fresh = await check_in(store, Composer("Was macht der Park?"), sender, scope, now, zone, timedelta(hours=12))
    assert fresh.send and sender.sent == ["Was macht der Park?"]


def test_repeats_compares_whole_texts_ignoring_case_and_spacing() -> None:
    assert repeats("Wie geht's?", ["wie  geht's?"]) and not repeats("Wie geht's dir?", ["Wie geht's?"])


async def test_messages_written_while_mnemo_was_down_count_by_their_date(tg: FakeTelegram, store: MemoryStore) -> None:
    """24 messages 4 s apart (under 20 a minute) waiting for mnemo are all answered; the same 24 at once are not."""
    now = time.time()
    chat = ScriptedLLM()
    chat.responder = lambda call: "Gelesen: " + re.findall(r"Nachricht (\d+)", call.messages[-1].content)[-1]
    background = ScriptedLLM()
    background.responder = lambda call: json.dumps({"facts": [], "content": [], "profile": []})
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0, rate_limit_per_minute=20),
                    clock=lambda: now)  # mnemo comes back two minutes after the first message was written
    try:
        for n in range(24):
            tg.send_text(USER, f"Nachricht {n}", date=int(now - 120 + 4 * n))
        for n in range(24, 48):
            tg.send_text(OTHER, f"Nachricht {n}", date=int(now))
        async with running(tg, engine, streaming=False):
            await tg.wait_until(lambda: t("de", "rate_limited") in texts_to(tg, OTHER), what="the flood refused")
            await tg.wait_until(lambda: len(texts_to(tg, USER)) == 24, what="the backlog answered")
            await quiet(tg)
    finally:
        await engine.drain()
        await engine.close()
    assert texts_to(tg, USER) == [f"Gelesen: {n}" for n in range(24)]
    assert texts_to(tg, OTHER) == [f"Gelesen: {n}" for n in range(24, 44)] + [t("de", "rate_limited")]
