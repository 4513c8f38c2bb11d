"""The world the state machine over random interleavings drives (tests/test_interleavings.py): the real engine on a
real SQLite file, the commands, the scheduler's real OutboxSender with a sender that records what it delivers, a
fake clock, scripted models and a fake transcriber; one person. Every step is a message, a press, a reaction, one
of mnemo's own pushes, a clock jump or a restart; what mnemo sends is kept on one timeline, and `check` tells which
of issue 52's promises the last step broke (a list of `Broken`, each with its invariant's code)."""
from __future__ import annotations

import asyncio
import json
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from bot.channels.base import answer
from bot.commands.runner import Commands
from bot.conversation.engine import Engine
from bot.conversation.help_lines import crisis_help, crisis_help_other
from bot.exchange import Attachment, Incoming, Reaction
from bot.texts import t
from memory import ButtonRows, MemoryStore, Scope
from memory.storage.db import sqlite_module
from scheduler.delivery import DIARY_ON_TIME, OutboxSender
from tests.engine_kit import make_engine
from tests.fakes.clock import Clock
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import Call, ScriptedLLM
from tests.images import jpeg

T = TypeVar("T")
USER, CHANNEL = "tg:4242", "telegram"
START = 1_800_000_000.0  # 2027-01-15 08:00 UTC, 09:00 in Berlin
CRISIS = ("Ich will mich heute Nacht umbringen.", "I'm going to kill myself tonight.", "Ich will nicht mehr leben.")
YES, NO = ("ja", "ok"), ("nein",)
EVERYDAY = ("Der Film war toll", "Das Wetter ist heute richtig schön", "Ich war heute im Kino",
            "Hör bitte auf mit den Emojis", "Ich arbeite als Lehrerin", "Ich habe einen Hund namens Bello")
KUBA = "Ich ziehe nächsten Monat nach Kuba"
ASK_BACK = "Erinnere mich morgen um 9"  # mnemo asks back what to remind of
FULL_REQUEST = "Erinnere mich morgen um 9 an die Probe"
RULES = ("Keine Emojis verwenden.", "Antworte kürzer.", "Sprich mich mit Du an.", "Frag nicht nach dem Wetter.",
         "Schreib mir nie vor neun Uhr.", "Nenne mich Anna.", "Keine Ratschläge ungefragt.")
PUSH_KINDS = ("reminder", "checkin", "morning", "date", "diary", "notice")
QUIET_KINDS = frozenset({"checkin", "morning", "date", "diary"})  # never in the quiet hours (reminders: asked for)
# What the naive extraction model finds in a line of the transcript, whoever's line it is: (fact, profile entry).
FACTS = {KUBA: ("Zieht nächsten Monat nach Kuba.", ("life_events", "umzug", "nach Kuba")),
         "Ich arbeite als Lehrerin": ("Arbeitet als Lehrerin.", ("facts", "beruf", "Lehrerin")),
         "Ich habe einen Hund namens Bello": ("Hat einen Hund namens Bello.", None)}
# Where nothing of a message in incognito may appear: a new row in any of these tables.
KEPT_TABLES = ("messages", "notes", "docs", "vec_docs_rowids", "use_vectors", "embedding_cache", "reminders",
               "open_topics", "people", "person_dates", "thoughts", "diary_entries", "voice_recordings",
               "pending_profile", "fts_words_docsize", "sent_messages")
_LINE = re.compile(r"^\[(\d+)\] user\b[^:]*: (.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Sent:
    """One message mnemo sent: `kind` is 'help' (sent at once), 'reply' (a bubble), 'press' or an outbox kind."""

    kind: str
    text: str
    buttons: tuple[str, ...] = ()  # the data of the buttons under it


@dataclass(frozen=True)
class Event:
    """One entry of the conversation's timeline: a message of the person's, or one of mnemo's."""

    by: str  # 'person' | 'mnemo'
    kind: str
    text: str
    own: bool = True  # the person's own words (False: forwarded)


@dataclass
class Step:
    """What the last step did and what came of it, for the invariants."""

    name: str
    message: Incoming | None = None  # the person's message it brought (None: no message)
    kind: str = ""  # text, caption, voice, document, edit, forward, command, press, push, …
    crisis: bool = False  # a part of it that the crisis grammar certainly flags
    own: bool = True
    press: str = ""  # a button's data, for a press
    incognito: bool = False  # incognito was on (and not run out) when it came
    words: str = ""  # the words it brings besides its text (a voice note's, a document's)
    event: int | None = None  # its index on the timeline
    sent: list[Sent] = field(default_factory=list)


@dataclass(frozen=True)
class Broken:
    """An invariant the last step broke: its code ('b-typed-not-next') and what happened."""

    code: str
    what: str


@dataclass(frozen=True)
class Asked:
    """A yes/no question (or a reminder asked back) as the timeline saw it asked."""

    kind: str  # 'rule', 'profile', 'tool', 'askback'
    event: int  # the index of mnemo's message that asked it on the timeline
    item: int = 0  # the rule's or the profile fact's id
    number: int = 0  # the person's own number of it, which its buttons carry
    fact: tuple[str, str, str] = ("", "", "")  # a profile fact's category, key and value


class RecordingSender:
    """The scheduler's Sender port: records what it delivers and tells the engine, as a channel's push does."""

    def __init__(self, world: World) -> None:
        self.world = world

    async def deliver(self, scope: Scope, text: str, *, buttons: ButtonRows = ()) -> bool:
        await self.world.pushed(scope, text)
        return True


class Transcriber:
    """The transcriber port: a 'voice note' is b'OggS' and the words spoken."""

    async def transcribe(self, audio: bytes, filename: str) -> str:
        return audio[4:].decode()


def extraction(call: Call) -> str:
    """The background model: a naive extraction that takes every known sentence of every user line as the person's,
    whatever the prompt says of whose words they are; nothing else for its other calls."""
    found: dict[str, list[dict[str, Any]]] = {"facts": [], "content": [], "profile": []}
    if call.json_schema is None or "facts" not in call.json_schema.get("properties", {}):
        return json.dumps(found)
    for message in call.messages:
        for line_id, text in _LINE.findall(message.content):
            for sentence, (fact, profile) in FACTS.items():
                if sentence.lower() in text.lower():
                    found["facts"].append({"text": fact, "importance": 3, "source_ids": [int(line_id)]})
                    if profile is not None:
                        category, key, value = profile
                        found["profile"].append({"category": category, "key": key, "value": value,
                                                 "source_ids": [int(line_id)]})
    return json.dumps(found)


class World:
    """mnemo for one person, driven step by step on its own event loop."""

    template: Path | None = None  # a migrated empty database, made once per process

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.folder = Path(tempfile.mkdtemp(prefix="mnemo-interleavings-"))
        self.path = self.folder / "mnemo.sqlite3"
        self.clock = Clock(START)
        self.timeline: list[Event] = []
        self.asked: dict[str, Asked] = {}  # open questions by key, and 'askback'
        self.pushes: dict[str, tuple[str, float]] = {}  # a push's text: its kind, when it was written
        self.step = Step("start")
        self.shown_buttons: list[str] = []  # every question button mnemo showed, stale ones too
        self.incognito_tokens: list[str] = []
        self.quiet_breaks: list[Broken] = []
        self.foreign_seen: set[str] = set()
        self.counter = 0
        self.propose_next = False  # the chat model proposes a rule in its next answer
        self.chat = ScriptedLLM("chat")
        self.chat.responder = self._chat
        self.background = ScriptedLLM("background")
        self.background.responder = extraction
        self.run(self._open())

    def run(self, work: Awaitable[T]) -> T:
        return self.loop.run_until_complete(work)

    def close(self) -> None:
        try:
            self.run(self._close())
        finally:
            self.loop.close()
            shutil.rmtree(self.folder, ignore_errors=True)

    def _chat(self, call: Call) -> str:
        self.counter += 1
        if self.propose_next and "SAFETY" not in call.prompt:
            self.propose_next = False
            rule = RULES[self.counter % len(RULES)]
            return f"Mach ich, Antwort {self.counter}. [RULE: {rule}]"
        return f"Antwort {self.counter}."

    async def _open(self) -> None:
        if World.template is None or not World.template.exists():
            template = Path(tempfile.mkdtemp(prefix="mnemo-template-")) / "mnemo.sqlite3"
            await (await MemoryStore.open(template, FakeEmbedder())).close()
            World.template = template
        shutil.copy2(World.template, self.path)
        await self._start()

    async def _start(self) -> None:
        self.store = await MemoryStore.open(self.path, FakeEmbedder(), semantic_dedupe=0.97)
        self.engine: Engine = make_engine(self.store, self.chat, clock=self.clock, background=self.background,
                                          transcriber=Transcriber(), profile_consent=True)
        self.commands = Commands(self.engine)
        self.outbox = OutboxSender(self.store, RecordingSender(self), clock=self.clock)
        self.scope = await self.engine.scope_for(USER)

    async def _close(self) -> None:
        await self.engine.drain()
        await self.engine.close()
        await self.store.close()

    async def restart(self) -> None:
        """A restart: the engine and the store closed, a new engine on the same database file."""
        await self._close()
        await self._start()

    # --- what the steps do ---------------------------------------------------------------------------

    def fresh(self) -> str:
        self.counter += 1
        return str(self.counter)

    async def message(self, step: Step, text: str, *, forwarded: bool = False, attachment: Attachment | None = None,
                      command: bool = False, ref: str | None = None, help_at_once: bool = True) -> None:
        """The person's message, as a channel hands it over (`bot.channels.base.answer`)."""
        self.clock.now += 30
        incoming = Incoming(USER, text, CHANNEL, ref or f"m{self.fresh()}", attachment=attachment,
                            sent_at=self.clock.now, forwarded=forwarded)
        step.message, step.own = incoming, not forwarded
        on = await self.store.incognito.current(self.scope)
        step.incognito = on is not None and not on.over(self.clock.now)
        if step.incognito:  # its own marked words: never to be found in the database
            self.incognito_tokens.extend(w for w in f"{text} {step.words}".split() if w.startswith("Quokka"))
        step.event = self._note(Event("person", step.kind, text, not forwarded))
        self.step = step

        async def say_now(words: str) -> None:
            self._sent(Sent("help", words))

        reply, _ = await answer(self.engine, self.commands, incoming, command=command and not forwarded,
                                ref=incoming.channel_message_id, say_now=say_now if help_at_once else None)
        if reply is not None:
            for i, bubble in enumerate(reply.bubbles):
                last = i == len(reply.bubbles) - 1
                self._sent(Sent("reply", bubble, tuple(b.data for row in reply.buttons for b in row) if last else ()))
            refs = [f"{incoming.channel_message_id}:r{i}" for i in range(len(reply.bubbles))]
            await self.engine.delivered(USER, CHANNEL, refs, answering=incoming.channel_message_id)
        await self.engine.drain()

    async def press(self, step: Step, data: str) -> None:
        """A press on a button mnemo showed (maybe a stale one)."""
        self.clock.now += 10
        step.press, self.step = data, step
        pressed = await self.commands.press(USER, data, channel=CHANNEL, ref=f"p{self.fresh()}")
        step.sent.append(Sent("press", pressed.notice or pressed.text or ""))
        await self.engine.drain()

    async def react(self, step: Step, emoji: str) -> None:
        """A reaction on mnemo's last reply (a reaction is no message)."""
        self.step = step
        refs = [e for e in range(len(self.timeline)) if self.timeline[e].by == "mnemo"]
        if refs:
            await self.engine.feedback(Reaction(USER, CHANNEL, f"any:{refs[-1]}", emoji))

    async def push(self, step: Step, kind: str) -> None:
        """One of mnemo's own pushes, through the outbox as the scheduler sends it (a second after what came before:
        the fake clock never stands still between two events)."""
        self.step = step
        self.clock.now += 1
        text = {"reminder": "⏰ Tabletten", "checkin": "Wie geht es dir heute?", "morning": "Guten Morgen!",
                "date": "Heute hat Ben Geburtstag.", "diary": "Dein Tag in drei Zeilen.",
                "notice": "💾 gemerkt"}[kind] + f" #{self.fresh()}"
        self.pushes[text] = (kind, self.clock.now)
        await self.outbox.deliver(self.scope, text, kind, due_at=self.clock.now if kind == "reminder" else None)

    async def jump(self, step: Step, seconds: float) -> None:
        """Time passes; the outbox retries what waits (as the scheduler's planner flushes it)."""
        self.step = step
        self.clock.now += seconds
        await self.outbox.flush([self.scope])
        await self.engine.drain()

    async def pushed(self, scope: Scope, text: str) -> None:
        """What the recording sender delivered: on the timeline, checked against the quiet hours."""
        kind = self._push_kind(text)
        self._sent(Sent(kind, text))
        written = next((at for start, (_, at) in self.pushes.items() if text.startswith(start)), self.clock.now)
        local, hours = await self.local(self.clock.now)
        if in_quiet_hours(kind, local, hours, written, self.clock.now):
            self.quiet_breaks.append(Broken("d-push-in-quiet-hours", f"{kind} delivered at {local:%H:%M} "
                                            f"({local.tzinfo}), active hours {hours[0]}-{hours[1]}: {text!r}"))
        await self.engine.delivered(scope.user_id, CHANNEL, [f"push{self.fresh()}"], text=text)

    def _push_kind(self, text: str) -> str:
        return next((kind for written, (kind, _) in self.pushes.items() if text.startswith(written)), "push")

    def _note(self, event: Event) -> int:
        self.timeline.append(event)
        return len(self.timeline) - 1

    def _sent(self, sent: Sent) -> None:
        self.step.sent.append(sent)
        self._note(Event("mnemo", sent.kind, sent.text))
        self.shown_buttons.extend(d for d in sent.buttons if d.split(":")[0] in ("rule", "profile", "tool"))

    # --- what is looked at after a step ----------------------------------------------------------------

    async def decisions(self) -> dict[str, str]:
        """Every rule's and asked profile fact's state: 'rule:<id>' -> pending/active/rejected/…, 'profile:<id>' ->
        pending, active (stored: a yes) or dropped (gone unstored: a no, or dropped unanswered, which keeps nothing
        and may be asked again, so no decision)."""
        states = {f"rule:{r.id}": r.status for r in await self.store.rules.list(self.scope)}
        stored = {(e.category, e.key, e.value) for e in await self.store.profile.list(self.scope)}
        for key, asked in self.asked.items():
            if key.startswith("profile:"):
                pending = await self.store.profile.is_pending(self.scope, asked.item)
                states[key] = "pending" if pending else "active" if asked.fact in stored else "dropped"
        return states

    async def reminders(self) -> dict[int, str]:
        return {r.id: r.text for r in await self.store.reminders.active(self.scope)}

    def read(self, sql: str) -> list[Any]:
        """Rows of a query on the database file, read-only, beside the store's own connection."""
        module = sqlite_module()
        db = module.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            return list(db.execute(sql).fetchall())
        except module.Error:
            return []  # a virtual table of an extension this connection does not load
        finally:
            db.close()

    def counts(self) -> dict[str, int]:
        row = self.read("SELECT " + ", ".join(f"(SELECT count(*) FROM {name})" for name in KEPT_TABLES))[0]
        return dict(zip(KEPT_TABLES, row, strict=True))

    def tokens_kept(self) -> list[str]:
        """The incognito messages' own words found anywhere in the database (any table, any text)."""
        if not self.incognito_tokens:
            return []
        found: set[str] = set()
        for (table,) in self.read("SELECT name FROM sqlite_master WHERE type = 'table'"):
            for row in self.read(f'SELECT * FROM "{table}"'):
                blob = " ".join(v if isinstance(v, str) else v.decode(errors="ignore")
                                for v in row if isinstance(v, str | bytes)).lower()
                found.update(tok for tok in self.incognito_tokens if tok.lower() in blob)
        return sorted(found)

    async def helps(self) -> set[str]:
        person = await self.engine.person(self.scope)
        return {crisis_help(person.country, person.lang), crisis_help_other(person.country, person.lang)}

    async def local(self, at: float) -> tuple[datetime, tuple[int, int]]:
        prefs = await self.store.preferences.get(self.scope)
        zone = ZoneInfo(prefs.timezone) if prefs.timezone else self.engine.config.zone
        return datetime.fromtimestamp(at, zone), prefs.hours()

    async def ask_texts(self) -> set[str]:
        lang = (await self.engine.person(self.scope)).lang
        return {t(lang, "reminder_ask_text"), t(lang, "reminder_ask_time")}


def voice(words: str) -> Attachment:
    data = b"OggS" + words.encode()
    return Attachment("voice", data, "audio/ogg", len(data), seconds=3.0)


def photo() -> Attachment:
    data = jpeg(64, 48)
    return Attachment("image", data, "image/jpeg", len(data))


def document(words: str) -> Attachment:
    data = words.encode()
    return Attachment("document", data, "text/plain", len(data), name="notiz.txt")


def in_quiet_hours(kind: str, local: datetime, hours: tuple[int, int], written: float, now: float) -> bool:
    """Whether a push delivered at `local` broke the quiet hours: a check-in or a yearly date outside the active
    hours; a diary push or a morning brief outside them, unless within an hour of its writing (the time the person
    chose for it, `scheduler.delivery`)."""
    if kind not in QUIET_KINDS:
        return False
    start, end = hours
    inside = start <= local.hour < end if start <= end else local.hour >= start or local.hour < end
    if inside:
        return False
    return not (kind in ("diary", "morning") and now - written <= DIARY_ON_TIME.total_seconds())


async def nothing(*_: object) -> None:
    """A step that does nothing."""


Steps = Callable[..., Awaitable[None]]
