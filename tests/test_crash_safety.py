"""Crash safety: the production command killed with SIGKILL at random moments loses nothing and answers once.

The reduced run of `bench/crash.py` (20 flows, about 25 kills, the deterministic embedder); the full run
(200 flows, the bundled embedder) is documented in docs/reliability.md. Beside it: the index check that
the bench and `mnemo doctor` use, and the two crash moments of a streamed reply, staged exactly.
"""
from __future__ import annotations

import json

import pytest

from bench import crash
from bot.conversation.engine import Engine
from memory.search import integrity
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.test_telegram_polish import USER, quiet, running

pytestmark = [pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
              pytest.mark.both_backends("transactions cut off by a kill")]


async def test_random_sigkills_of_the_running_bot_lose_nothing_and_double_nothing() -> None:
    report = await crash.run(flows=20, seed=11, embedder=crash.FAKE_EMBEDDER, life=1.2, final_timeout=120)
    assert report.kills >= 20 and report.messages >= 50, report
    assert (report.lost, report.duplicated, report.unanswered, report.unhandled_updates) == (0, 0, 0, 0), report
    assert report.index_problems == 0, report.problems
    assert report.doubled_outside_window == 0 and report.commands_unanswered == 0, report.problems
    assert report.unattributed_replies == 0 and report.secrets_in_logs == 0, report
    assert report.notes > 0 and report.thoughts > 0 and report.diary_entries > 0, report


async def test_the_index_check_names_every_kind_of_orphan(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "tg:1")
    notes = [(await store.notes.add(scope, f"Notiz {i} über den Garten")).note for i in range(4)]
    await store.thoughts.add(scope, "Ein Gedanke")
    await store.messages.add(scope, "user", "Hallo Garten")
    assert await integrity.check(store) == []
    async with store.db.transaction() as tx:
        doc = lambda i: tx.fetchone("SELECT doc_id FROM notes WHERE id = ?", (notes[i].id,))  # noqa: E731
        await tx.execute("DELETE FROM vec_docs WHERE doc_id = ?", ((await doc(0))[0],))  # a note without its vector
        await tx.execute("UPDATE notes SET doc_id = NULL WHERE id = ?", (notes[1].id,))  # a document without its note
        sqlite = tx.dialect == "sqlite"  # PostgreSQL's words are a column of the document: they cannot drift
        if sqlite:
            await tx.execute("DROP TRIGGER docs_ad_fts_words")
        await tx.execute("DELETE FROM docs WHERE id = ?", ((await doc(2))[0],))  # full text without its document
        await tx.execute("INSERT INTO messages(scope_id, role, text, created_at) VALUES (?, 'user', 'x', 0)",
                         (scope.id,))  # a message never indexed
    problems = "\n".join(await integrity.check(store))
    assert "document" in problems and "its vector is missing" in problems
    assert f"note {notes[1].id}: not in the search index" in problems
    assert "its note" in problems and "is gone or points elsewhere" in problems
    assert f"note {notes[2].id}: its search document" in problems and "vector" in problems
    assert ("full-text index fts_words does not match" in problems) == sqlite
    assert "message" in problems and "not in the search index" in problems


async def crashed_after_showing(store: MemoryStore, update_id: int, payload: str, shown: list[int],
                                reply_logged: bool) -> None:
    """Put the database where a SIGKILL leaves it: the update unhandled, its shown messages recorded."""
    async with store.db.transaction() as tx:
        await tx.execute("UPDATE inbox SET handled_at = NULL, payload = ?, shown = ? WHERE event_id = ?",
                         (payload, json.dumps([str(i) for i in shown]), str(update_id)))
        if not reply_logged:  # the reply, with its search entries, was never written
            docs = "SELECT doc_id FROM messages WHERE role = 'assistant'"
            await tx.execute(f"DELETE FROM vec_docs WHERE doc_id IN ({docs})")
            await tx.execute(f"DELETE FROM docs WHERE id IN ({docs})")
            await tx.execute("DELETE FROM messages WHERE role = 'assistant'")


@pytest.mark.parametrize("reply_logged", [True, False], ids=["after-the-reply-was-logged", "while-streaming"])
async def test_a_reply_shown_before_a_crash_is_edited_in_place_after_the_restart_never_sent_twice(
    tg: FakeTelegram, engine: Engine, store: MemoryStore, chat: ScriptedLLM, reply_logged: bool,
) -> None:
    chat.responder = lambda call: "Gut, und dir? Erzähl mal, was heute los war."
    async with running(tg, engine):
        update_id = tg.send_text(USER, "Wie geht's?")
        payload = json.dumps(tg.pending[-1])
        await tg.wait_for_sent(1)
        await quiet(tg)
    preview = tg.sent[0]["message_id"]
    async with store.db.reading() as tx:
        assert (await tx.fetchone("SELECT shown FROM inbox WHERE event_id = ?", (str(update_id),)))[0] == "[]"
    tg.messages[preview]["text"] = "Gut, und"  # what a crash in the middle of the stream leaves in the chat
    await crashed_after_showing(store, update_id, payload, [preview], reply_logged)
    async with running(tg, engine):
        await quiet(tg)
    assert len(tg.sent) == 1, [m["text"] for m in tg.sent]  # the same message, never a second one
    assert tg.messages[preview]["text"] == "Gut, und dir? Erzähl mal, was heute los war."
    assert len(chat.calls) == (1 if reply_logged else 2)
