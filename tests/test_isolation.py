"""Access control and isolation: a randomized two-user attack finds no leak, through the commands and on Telegram.

Anna and Ben each own notes, a profile, thoughts, a diary, rules, topics, people, reminders and messages,
every item marked with their own secret code. With a fixed seed, hundreds of operations run as one of them
against the other's ids: commands (/forget, /why, /people, /undo, /export, /deleteme …), forged button data,
messages whose model calls tools and cites the other's messages. After each operation nothing the caller
was shown (text, buttons, document, the model's prompt) holds the other's code, and the other's data is
unchanged to the byte.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.invocation import Pressed
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming, Reply
from bot.llm.port import ToolCall
from memory.models import Scope
from memory.records.kinship import PersonDraft
from memory.store import MemoryStore
from tests.fakes.llm import Call, ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram

ANNA, BEN, EVE = 42, 43, 666
SECRET = {f"tg:{ANNA}": "ANNASECRET", f"tg:{BEN}": "BENSECRET"}
OPERATIONS = 400

pytestmark = [pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
              pytest.mark.both_backends("scoping of every query")]


@dataclass
class Owned:
    """The ids one user's items have, as an attacker would send them."""

    notes: list[int] = field(default_factory=list)
    rules: list[int] = field(default_factory=list)
    pending_profile: list[int] = field(default_factory=list)
    people: list[int] = field(default_factory=list)
    reminders: list[int] = field(default_factory=list)
    messages: list[int] = field(default_factory=list)

    def any(self, rng: random.Random) -> int:
        """One of the ids (or a made-up one when there are none)."""
        pool = self.notes + self.rules + self.pending_profile + self.people + self.reminders + self.messages
        return rng.choice(pool) if pool else rng.randint(1, 500)


async def populate(engine: Engine, user: str) -> Owned:
    """Give a user one of everything, each item carrying the user's secret code."""
    store, secret, name = engine.store, SECRET[user], "Anna" if user.endswith(str(ANNA)) else "Ben"
    scope = await engine.scope_for(user)
    owned = Owned()
    for i in range(4):
        owned.notes.append((await store.notes.add(scope, f"{name} mag Kaffee und den Garten {secret}{i}")).note.id)
    await store.profile.set(scope, "facts", "name", f"{name} {secret}")
    owned.pending_profile.append((await store.profile.propose(scope, "facts", "work", f"Garten {secret}")).id)
    await store.thoughts.add(scope, f"{name} wirkt müde vom Kaffee {secret}")
    await store.diary.add(scope, "2026-11-28", f"Heute mit {name} über Kaffee gesprochen {secret}")
    active = await store.rules.propose(scope, f"Sprich über Kaffee {secret}")
    await store.rules.decide(scope, active.id, "active", reason="test")
    owned.rules += [active.id, (await store.rules.propose(scope, f"Keine Emojis {secret}")).id]
    await store.topics.add(scope, f"Wie war der Garten {secret}?", due_at=time.time() - 60)
    person = await store.people.observe(scope, PersonDraft("Miriam", (f"Mimi{secret}",), "Schwester"),
                                        processing="test")
    owned.people.append(person.id)
    owned.reminders.append((await store.reminders.add(scope, f"Kaffee kaufen {secret}", time.time() + 3600)).id)
    message = await store.messages.add(scope, "user", f"Ich trinke Kaffee im Garten {secret}")
    owned.messages.append(message.id)
    return owned


async def snapshot(store: MemoryStore, scope: Scope) -> str:
    """Everything stored for a scope, with its search documents, as one comparable text."""
    data = await store.export(scope)
    async with store.db.reading() as tx:
        data["docs"] = await tx.fetchall("SELECT id, source, item_id, text FROM docs WHERE scope_id = ? ORDER BY id",
                                         (scope.id,))
        data["vectors"] = (await tx.fetchone("SELECT count(*) FROM vec_docs WHERE scope_id = ?", (scope.id,)))[0]
    return json.dumps(data, sort_keys=True, default=str)


def shown(result: Reply | Pressed | None) -> str:
    """Everything an operation showed its caller: texts, buttons and the document."""
    if result is None:
        return ""
    if isinstance(result, Pressed):
        return " ".join([result.notice, result.text or ""] + [f"{b.label} {b.data}" for row in result.buttons
                                                               for b in row])
    parts = list(result.bubbles) + [f"{b.label} {b.data}" for row in result.buttons for b in row]
    if result.document is not None:
        parts.append(result.document.content.decode("utf-8", errors="replace"))
    return " ".join(parts)


def hostile_model(victim_messages: list[int]) -> Any:
    """A background model that cites the other user's messages as sources (they must be ignored)."""
    def respond(call: Call) -> str:
        cited = victim_messages[:2] + [1, 2, 3]
        return json.dumps({"facts": [{"text": "Die Person mag Tee.", "source_ids": cited}], "content": [],
                           "profile": [{"category": "facts", "key": "drink", "value": "Tee", "source_ids": cited}],
                           "topics": [], "people": [{"name": "Miriam", "facts": ["Miriam ist Ärztin."],
                                                     "source_ids": cited}]})
    return respond


COMMANDS = ("/forget {id}", "/forget #{id}", "/forget Kaffee", "/why {id}", "/why Kaffee", "/why", "/memories",
            "/memories Kaffee Garten", "/people", "/people {id}", "/people forget {id}", "/people rename {id} Eve",
            "/people merge {own} {id}", "/people merge {id} {own}", "/people Miriam", "/reminders", "/rules",
            "/profile", "/thoughts", "/topics", "/diary 10", "/export", "/undo", "/relationship", "/settings",
            "/deleteme", "/help")
PRESSES = ("forget:{id}", "rule:yes:{id}", "rule:no:{id}", "rule:off:{id}", "rule:on:{id}", "rule:del:{id}",
           "why:wrong:{id}", "why:old:{id}", "profile:yes:{id}", "profile:no:{id}", "mem:{id}", "mem:-{id}",
           "people:show:{id}", "people:forget:{id}", "people:forgetyes:{id}", "rem:cancel:{id}",
           "rem:snooze:1h:{id}", "rem:snooze:tomorrow:{id}", "cancel", "forget:{id}:{id}",
           "forget:9{id}999999999999999999999",
           "rule:yes:-{id}", "", "deleteme:yes", "x" * 300, "forget:١٢")


async def operation(rng: random.Random, engine: Engine, commands: Commands, chat: ScriptedLLM,
                    caller: str, own: Owned, other: Owned) -> str:
    """One random operation as `caller`, mostly with the other user's ids; returns what it showed."""
    target = other.any(rng) if rng.random() < 0.8 else own.any(rng)
    kind = rng.random()
    if kind < 0.45:
        text = rng.choice(COMMANDS).format(id=target, own=own.any(rng))
        reply = await commands.run(caller, text)
        seen = shown(reply)
        if reply is not None and reply.buttons and rng.random() < 0.5:  # press one of the offered buttons
            seen += " " + shown(await commands.press(caller,
                                                     rng.choice([b for row in reply.buttons for b in row]).data))
        return seen
    if kind < 0.85:
        return shown(await commands.press(caller, rng.choice(PRESSES).format(id=target)))
    chat.enqueue("", [ToolCall("t1", rng.choice(["search_memory", "recall_chat"]), {"query": "Kaffee Garten"}),
                      ToolCall("t2", "read_diary", {})])
    chat.enqueue(f"[RECALL: Kaffee] [THOUGHT: #{target}] Schön.")
    chat.enqueue("Okay.")
    before = len(chat.calls)
    reply = await engine.handle(Incoming(caller, f"Was weißt du über Kaffee, #{target} und Miriam?"))
    await engine.drain()
    prompts = " ".join(call.prompt for call in chat.calls[before:])
    return shown(reply) + " " + prompts


@pytest.fixture
async def two_users(store: MemoryStore) -> AsyncIterator[tuple[Engine, Commands, ScriptedLLM]]:
    chat, background = ScriptedLLM("chat"), ScriptedLLM("background")
    engine = Engine(store, chat, background, EngineConfig(relevance_floor=0.0))
    yield engine, Commands(engine), chat
    await engine.drain()
    await engine.close()


async def test_a_randomized_two_user_attack_through_the_commands_finds_no_leak(two_users, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, chat = two_users
    rng = random.Random(20261129)
    users = [f"tg:{ANNA}", f"tg:{BEN}"]
    owned = {u: await populate(engine, u) for u in users}
    engine.background.responder = hostile_model(owned[users[1]].messages)  # type: ignore[attr-defined]
    leaks, changes, kinds = [], [], 0
    for step in range(OPERATIONS):
        caller, victim = rng.sample(users, 2)
        victim_scope = await engine.scope_for(victim)
        before = await snapshot(store, victim_scope)
        seen = await operation(rng, engine, commands, chat, caller, owned[caller], owned[victim])
        if SECRET[victim] in seen:
            leaks.append((step, caller, seen[:300]))
        if (after := await snapshot(store, victim_scope)) != before:  # which parts moved, for the failure's message
            old, new = json.loads(before), json.loads(after)
            changes.append((step, caller, [(k, old.get(k), new.get(k)) for k in sorted(set(old) | set(new))
                                           if old.get(k) != new.get(k)]))
        caller_scope = await engine.scope_for(caller)
        if await store.notes.count(caller_scope) == 0:  # the caller forgot or deleted their own: give them more
            owned[caller] = await populate(engine, caller)
            kinds += 1
    assert leaks == [] and changes == [], (leaks[:3], changes[:3])
    assert kinds > 0, "the run should include a caller deleting their own data"


async def test_deleteme_and_export_touch_only_the_callers_scope_with_its_index(two_users, store: MemoryStore) -> None:  # type: ignore[no-untyped-def]
    engine, commands, _chat = two_users
    anna, ben = f"tg:{ANNA}", f"tg:{BEN}"
    await populate(engine, anna)
    await populate(engine, ben)
    ben_before = await snapshot(store, await engine.scope_for(ben))
    exported = await commands.run(anna, "/export")
    assert exported is not None and exported.document is not None
    assert "ANNASECRET" in exported.document.content.decode() and "BENSECRET" not in exported.document.content.decode()
    await commands.press(anna, "deleteme:yes")
    anna_scope = await engine.scope_for(anna)
    async with store.db.reading() as tx:
        left = (await tx.fetchone("SELECT count(*) FROM docs WHERE scope_id = ?", (anna_scope.id,)))[0]
        vectors = (await tx.fetchone("SELECT count(*) FROM vec_docs WHERE scope_id = ?", (anna_scope.id,)))[0]
    assert (left, vectors) == (0, 0)
    assert await snapshot(store, await engine.scope_for(ben)) == ben_before


# --- the Telegram channel ----------------------------------------------------------------------------------


def chat_texts(tg: FakeTelegram, chat_id: int) -> str:
    """Everything a chat shows: each bot message's current text and buttons, and every callback notice."""
    parts = []
    for sent in tg.sent:
        if sent["chat_id"] == chat_id:
            message = tg.messages[sent["message_id"]]
            parts.append(message.get("text", ""))
            parts.append(json.dumps(message.get("reply_markup") or {}, ensure_ascii=False))
    parts += [str(d.get("document", {}).get("content", b""), "utf-8", "replace") for d in tg.documents
              if d.get("chat_id") == chat_id]
    return "\n".join(parts)


async def settle(tg: FakeTelegram, seconds: float = 0.15) -> None:
    """Let the channel work through what is queued."""
    await tg.wait_until(lambda: not tg.pending, what="the fake's queue to be fetched")
    await asyncio.sleep(seconds)


async def test_on_telegram_forged_presses_foreign_ids_and_strangers_reach_nothing(
    tg: FakeTelegram, two_users, store: MemoryStore,  # type: ignore[no-untyped-def]
) -> None:
    engine, commands, chat = two_users
    chat.responder = lambda call: "Alles klar."
    owned = {ANNA: await populate(engine, f"tg:{ANNA}"), BEN: await populate(engine, f"tg:{BEN}")}
    channel = TelegramChannel(engine, commands, TelegramConfig(
        token=tg.token, base_url=tg.base_url, allowed_users=frozenset({str(ANNA), str(BEN)}), streaming=False,
        unknown_users="refuse"))
    rng = random.Random(7)
    await channel.start()
    try:
        for user in (ANNA, BEN, EVE):
            tg.send_text(user, "/memories", first_name=str(user))
        await settle(tg)
        pressers: list[int] = []  # the fake numbers callback queries 1, 2, 3 …
        for _ in range(60):
            user = rng.choice([ANNA, BEN, EVE])
            other = BEN if user == ANNA else ANNA
            target = owned[other].any(rng)
            if rng.random() < 0.4:
                tg.send_text(user, rng.choice(COMMANDS).format(id=target, own=target), first_name=str(user))
            else:  # a press on one of the bot's messages, in any chat (Telegram would never send the foreign ones)
                message = rng.choice([m["message_id"] for m in tg.sent])
                tg.press_button(user, message, rng.choice(PRESSES).format(id=target))
                pressers.append(user)
            await settle(tg, 0.05)
        await settle(tg, 0.3)
    finally:
        await channel.stop()
    assert "BENSECRET" not in chat_texts(tg, ANNA) and "ANNASECRET" not in chat_texts(tg, BEN)
    eve_saw = chat_texts(tg, EVE)
    assert "SECRET" not in eve_saw and len([m for m in tg.sent if m["chat_id"] == EVE]) == 1  # one refusal
    for answer in tg.callback_answers:  # the short notice a press shows its presser
        presser = pressers[int(answer["callback_query_id"]) - 1]
        foreign = [s for u, s in SECRET.items() if u != f"tg:{presser}"]
        assert not any(s in str(answer.get("text") or "") for s in foreign), answer
    async with store.db.reading() as tx:
        users = {r[0] for r in await tx.fetchall("SELECT user_id FROM scopes")}
    assert f"tg:{EVE}" not in users
