"""The chat commands and button presses, one implementation shared by every channel."""
from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from bot.admin.analysis_report import delete_reports_about
from bot.commands import people_views as people
from bot.commands import relationship_view as relationship
from bot.conversation import reminder_requests as reminders
from bot.conversation.engine import Button, Document, Engine, Reply, check_input, rule_buttons
from bot.conversation.prompt import clip
from bot.conversation.replies import Answer, item_id, well_formed
from bot.errors import LLMBadOutput, LLMError
from bot.learning import forgetting
from bot.learning.why import explain
from bot.profile_keys import profile_key
from bot.texts import TEXTS, t
from memory import audit
from memory.errors import NotFound
from memory.models import AuditEntry, Scope, SearchHit
from memory.numbers import Kind
from memory.pairing import is_group_scope
from memory.preferences import parse_value
from memory.runs import Run
from memory.undo import is_final, latest_processing, undo_latest
from scheduler.diary import write_diary
from scheduler.errors import BadModelOutput
from scheduler.reflection import reflect
from scheduler.relationship_rules import wish_of
from scheduler.service import Scheduler

log = logging.getLogger(__name__)

PAGE = 10

# Words a user may type in /settings, German and English, and the preference each one sets.
SETTING_KEYS = {"diary": "diary_time", "tagebuch": "diary_time", "reflection": "reflection_time",
                "nachdenken": "reflection_time", "hours": "active_hours", "stunden": "active_hours",
                "zeiten": "active_hours", "checkins": "checkins", "check-ins": "checkins",
                "nachfragen": "checkins"}
# What a preference's value must look like, as a text key (a wrong value is answered with it).
SETTING_EXPECTS = {"diary_push": "settings_expect_onoff", "checkins": "settings_expect_onoff",
                   "diary_time": "settings_expect_time", "reflection_time": "settings_expect_time",
                   "active_hours": "settings_expect_hours"}

# Command name -> (German description, English description); the order is the menu's.
COMMANDS: dict[str, tuple[str, str]] = {
    "start": ("Begrüßung", "Welcome"),
    "help": ("Alle Befehle", "All commands"),
    "memories": ("Was ich mir gemerkt habe – ansehen oder suchen", "List or search memories"),
    "forget": ("Etwas vergessen lassen", "Make me forget something"),
    "diary": ("Mein Tagebuch lesen", "Read my diary"),
    "rules": ("Gelernte Regeln verwalten", "Manage learned rules"),
    "profile": ("Dein Profil", "Your profile"),
    "thoughts": ("Meine Gedanken", "My thoughts"),
    "topics": ("Offene Themen", "Open topics"),
    "settings": ("Tagebuch, Zeiten, Nachfragen einstellen", "Diary, times, check-ins"),
    "export": ("Alle deine Daten als JSON", "All your data as JSON"),
    "deleteme": ("Alles über dich löschen", "Delete everything about you"),
    "why": ("Woher ich etwas weiß", "Where I know something from"),
    "undo": ("Letzte Änderung am Gedächtnis zurücknehmen", "Undo the last memory change"),
    "think": ("Jetzt nachdenken", "Reflect now"),
    "writediary": ("Jetzt Tagebuch schreiben", "Write the diary now"),
    "relationship": ("Wo wir zwei stehen", "Where we two stand"),
    "people": ("Menschen in deinem Leben", "People in your life"),
    "reminders": ("Woran ich dich erinnern soll", "Your reminders"),
}


# Audit item types whose items carry the user's own numbers (#3), and the kind of number.
NUMBERED: dict[str, Kind] = {"note": "note", "rule": "rule", "reminder": "reminder", "person": "person"}


def _item_text(entry: AuditEntry) -> str:
    item = entry.before or entry.after or {}
    return clip(str(item.get("text") or item.get("summary") or item.get("value") or item.get("name")
                    or item.get("status") or ""), 120)


def undo_line(entry: AuditEntry, number: int | None, lang: str) -> str:
    """One line of /undo in the user's language: '• Notiz #3 gelöscht: Anna mag Tee'."""
    item = f"undo_item_{entry.item_type}" if f"undo_item_{entry.item_type}" in TEXTS else "undo_item_other"
    action = f"undo_action_{entry.action}" if f"undo_action_{entry.action}" in TEXTS else "undo_action_other"
    text = _item_text(entry)
    return t(lang, "undo_line", item=t(lang, item), number=f" #{number}" if number else "",
             action=t(lang, action), text=f": {text}" if text else "")


def menu(lang: str) -> list[tuple[str, str]]:
    """(command, description) pairs in the language, for a messenger's command menu."""
    return [(name, de if lang == "de" else en) for name, (de, en) in COMMANDS.items()]


def parse_command(text: str) -> tuple[str, str] | None:
    """Split '/name@bot args' or '!name args' into (name, args); None when it is no command."""
    match = re.match(r"^[/!]([A-Za-z_]+)(?:@\w+)?(?:\s+(.*))?$", text.strip(), re.S)
    if not match:
        return None
    return match.group(1).lower(), (match.group(2) or "").strip()


@dataclass(frozen=True)
class Pressed:
    """What a button press does: a short notice, and optionally a new text/buttons for its message."""

    notice: str
    text: str | None = None
    buttons: tuple[tuple[Button, ...], ...] = ()
    closes: tuple[str, ...] = ()  # questions this press decided ('rule:12'): their other buttons go too
    stale: bool = False  # the pressed buttons are no longer valid (done, or their item is gone): take them away


# Buttons that only show something; in a group anyone let in may press them, the rest only admins.
_LOOKING = re.compile(r"mem:-?[0-9]+|people:show:[0-9]+|cancel", re.ASCII)

# Commands that only show something: after a crash cut one off, it simply runs again.
READ_ONLY = frozenset({"start", "help", "memories", "diary", "rules", "profile", "thoughts", "topics", "export",
                       "why", "relationship", "reminders", "people"})


def failure_key(exc: BaseException, job: str) -> str:
    """The text key that says truly why /think or /writediary (job 'think' or 'diary') failed."""
    if isinstance(exc, (BadModelOutput, LLMBadOutput)):
        return f"{job}_unusable"
    if isinstance(exc, LLMError):
        return "job_failed"
    return "job_error"


def changes_memory(data: str) -> bool:
    """Whether pressing a button with this data may change memory (paging and showing do not)."""
    return not _LOOKING.fullmatch(data)


def changes_something(name: str, args: str) -> bool:
    """Whether a command changes something (and so must not run twice); a look at memory does not."""
    words = args.lower().split()
    if name == "diary":
        return bool(words) and words[0] in ("on", "an", "off", "aus")
    if name == "settings":
        return len(words) >= 2
    if name == "people":
        return bool(words) and words[0] in ("rename", "umbenennen", "merge", "zusammenführen", "forget", "vergessen")
    return name not in READ_ONLY


def owner_of(buttons: Sequence[Sequence[Button]], asker: str, may_decide: bool = True) -> str | None:
    """Who may press these buttons: the person who asked; anyone let in when they only show something.

    A group member who may not decide (no admin) owns nothing: any admin may answer, nobody else.
    """
    if not may_decide or not any(changes_memory(b.data) for row in buttons for b in row):
        return None
    return asker


def reply_record(reply: Reply) -> dict[str, Any]:
    """A reply as JSON-ready data, to deliver it again after a crash (a document is never kept)."""
    return {"bubbles": list(reply.bubbles), "buttons": _rows_record(reply.buttons), "failed": reply.failed,
            "closes": list(reply.closes)}


def reply_from(record: dict[str, Any]) -> Reply:
    """The reply recorded by `reply_record`."""
    return Reply(tuple(record["bubbles"]), buttons=_rows_from(record["buttons"]), failed=record["failed"],
                 closes=tuple(record["closes"]))


def _rows_record(rows: Sequence[Sequence[Button]]) -> list[list[list[str]]]:
    return [[[b.label, b.data] for b in row] for row in rows]


def _rows_from(rows: list[list[list[str]]]) -> tuple[tuple[Button, ...], ...]:
    return tuple(tuple(Button(label, data) for label, data in row) for row in rows)


class Commands:
    """Runs commands and button presses for a user, always within that user's own scope."""

    def __init__(self, engine: Engine, scheduler: Scheduler | None = None) -> None:
        self.engine = engine
        self.scheduler = scheduler
        self.store = engine.store
        self.lang = engine.config.language

    def _t(self, key: str, **values: object) -> str:
        return t(self.lang, key, **values)

    async def run(self, user_id: str, text: str, *, channel: str = "", ref: str | None = None) -> Reply | None:
        """Answer a command; None when the text is not a command at all.

        With `ref` (the channel's id of the message), the command runs once: it is recorded before it runs and
        its reply after, so a replay of the message delivers that reply again (nothing, once delivered). A command
        that changes something and was cut off by a crash is not run again; the user gets one sentence instead.
        """
        parsed = parse_command(text)
        if parsed is None:
            return None
        name, args = parsed
        handler = getattr(self, f"cmd_{name}", None)
        if name not in COMMANDS or handler is None:
            return Reply((self._t("unknown_command"),))
        limit = self.engine.config.max_message_chars
        problem = check_input(text, limit)
        if problem:
            return Reply((self._t(problem, size=len(text), limit=limit),), failed=True)
        scope = await self.engine.scope_for(user_id)
        earlier = await self.store.runs.begin(scope, channel, ref) if ref is not None else None
        if earlier is not None:
            replayed = await self._replayed(scope, channel, ref, earlier, changes_something(name, args))
            if replayed is not None:
                return replayed
        elif (verdict := self.engine.limiter.check(user_id)) != "pass":  # commands count like messages, replays not
            return Reply((self._t("rate_limited"),) if verdict == "tell" else (), failed=True)
        reply: Reply = await handler(scope, args)
        if ref is not None and changes_something(name, args):
            await self.store.runs.answer(scope, channel, ref, reply_record(reply))
        return reply

    async def _replayed(self, scope: Scope, channel: str, ref: str | None, earlier: Run,
                        changing: bool) -> Reply | None:
        """What a replayed command shows: its recorded reply, nothing, or why it does not run again (None: run it)."""
        assert ref is not None  # only a command with a channel id has an earlier run
        if earlier.reply is not None:
            return reply_from(earlier.reply)
        if earlier.state == "delivered":
            return Reply(())
        if not changing:
            return None
        log.warning("command %s in %s was cut off by a restart; not run again", ref, channel)
        reply = Reply((self._t("command_interrupted"),))
        await self.store.runs.answer(scope, channel, ref, reply_record(reply))
        return reply

    async def delivered(self, user_id: str, channel: str, ref: str) -> None:
        """Note that the answer to a command or press (by its `ref`) was delivered, so its recorded reply goes."""
        await self.store.runs.delivered(await self.engine.scope_for(user_id), channel, ref)

    async def cmd_start(self, scope: Scope, args: str) -> Reply:
        companion = await self.store.companions.get(scope.companion_id)
        return Reply((self._t("start", name=companion.name if companion else self.engine.config.companion_name),))

    async def cmd_help(self, scope: Scope, args: str) -> Reply:
        lines = [self._t("help_head")] + [f"/{name} – {desc}" for name, desc in menu(self.lang)]
        return Reply(("\n".join(lines),))

    async def cmd_memories(self, scope: Scope, args: str) -> Reply:
        if args:
            hits = await self._keyword_search(scope, args, PAGE)
            if not hits:
                return Reply((self._t("memories_none_found"),))
            numbers = await self.store.numbers.of_many(scope, "note", [h.item_id for h in hits])
            lines = [self._t("memories_found")] + [f"#{numbers[h.item_id]} {clip(h.text, 200)}" for h in hits]
            return Reply(("\n".join(lines),))
        return await self.memories_page(scope, 0)

    async def memories_page(self, scope: Scope, offset: int) -> Reply:
        """One page of notes, newest first, with paging buttons."""
        total = await self.store.notes.count(scope)
        if total == 0:
            return Reply((self._t("memories_empty"),))
        offset = max(0, min(offset, (total - 1) // PAGE * PAGE))
        notes = await self.store.notes.list(scope, limit=PAGE, offset=offset)
        numbers = await self.store.numbers.of_many(scope, "note", [n.id for n in notes])
        head = self._t("memories_head", first=offset + 1, last=offset + len(notes), total=total)
        lines = [head] + [f"#{numbers[n.id]} {clip(n.text, 200)}" for n in notes]
        row = []
        if offset > 0:
            row.append(Button(self._t("back"), f"mem:{offset - PAGE}"))
        if offset + PAGE < total:
            row.append(Button(self._t("next"), f"mem:{offset + PAGE}"))
        return Reply(("\n".join(lines),), buttons=(tuple(row),) if row else ())

    async def cmd_forget(self, scope: Scope, args: str) -> Reply:
        if not args:
            return Reply((self._t("forget_usage"),))
        cancel = Button(self._t("cancel"), "cancel")
        if (number := item_id(args)) is not None:
            try:
                note = await self.store.notes.get(scope, await self.store.numbers.item(scope, "note", number))
            except NotFound:
                return Reply((self._t("memories_none_found"),))
            return Reply((f"{self._t('forget_confirm')}\n#{number} {note.text}",),
                         buttons=((Button(self._t("forget"), f"forget:{number}"), cancel),))
        hits = await self._keyword_search(scope, args, 3)
        if not hits:
            return Reply((self._t("memories_none_found"),))
        numbers = await self.store.numbers.of_many(scope, "note", [h.item_id for h in hits])
        lines = [self._t("forget_pick")] + [f"#{numbers[h.item_id]} {clip(h.text, 200)}" for h in hits]
        rows = tuple((Button(f"{self._t('forget')} #{numbers[h.item_id]}", f"forget:{numbers[h.item_id]}"),)
                     for h in hits)
        return Reply(("\n".join(lines),), buttons=rows + ((cancel,),))

    async def _keyword_search(self, scope: Scope, words: str, k: int) -> list[SearchHit]:
        """Notes about what the person typed: those holding the words, or close in meaning above the chat's floor."""
        return await self.store.search(scope, words, ("note",), k=k, min_cosine=self.engine.floor, words_pass=True)

    async def cmd_diary(self, scope: Scope, args: str) -> Reply:
        if args.lower() in ("on", "an", "off", "aus"):
            return await self.cmd_settings(scope, f"diary {args}")
        count = max(1, min(10, int(args))) if args.isdigit() else 1
        entries = await self.store.diary.latest(scope, count)
        if not entries:
            return Reply((self._t("diary_empty"),))
        return Reply(tuple(f"📔 {e.day}\n{e.text}" for e in reversed(entries))[-3:])

    async def cmd_rules(self, scope: Scope, args: str) -> Reply:
        rules = await self.store.rules.list(scope)
        if not rules:
            return Reply((self._t("rules_empty"),))
        status = {"active": self._t("rule_active"), "disabled": self._t("rule_disabled"),
                  "pending": self._t("rule_pending")}
        numbers = await self.store.numbers.of_many(scope, "rule", [r.id for r in rules])
        lines = [self._t("rules_head")] + [f"#{numbers[r.id]} {r.text} ({status.get(r.status, r.status)})"
                                           for r in rules]
        rows = []
        for r in rules:
            number = numbers[r.id]
            if r.status == "pending":
                rows.append(rule_buttons(number, self.lang))
                continue
            toggle = (Button(self._t("rule_off", id=number), f"rule:off:{number}") if r.status == "active"
                      else Button(self._t("rule_on", id=number), f"rule:on:{number}"))
            rows.append((toggle, Button(self._t("rule_delete", id=number), f"rule:del:{number}")))
        return Reply(("\n".join(lines),), buttons=tuple(rows))

    async def cmd_profile(self, scope: Scope, args: str) -> Reply:
        entries = await self.store.profile.list(scope)
        if not entries:
            return Reply((self._t("profile_empty"),))
        lines = [f"{profile_key(e.key, self.lang)}: {e.value}" for e in entries]
        return Reply(("\n".join([self._t("profile_head")] + lines),))

    async def cmd_thoughts(self, scope: Scope, args: str) -> Reply:
        thoughts = await self.store.thoughts.latest(scope, 5)
        if not thoughts:
            return Reply((self._t("thoughts_empty"),))
        return Reply(("\n".join([self._t("thoughts_head")] + [f"• {th.text}" for th in thoughts]),))

    async def cmd_topics(self, scope: Scope, args: str) -> Reply:
        topics = await self.store.topics.list(scope)
        if not topics:
            return Reply((self._t("topics_empty"),))
        lines = [self._t("topics_head")] + [
            f"• {tp.text}" + (f" ({tp.due_at.astimezone(self.engine.config.zone):%d.%m. %H:%M})" if tp.due_at else "")
            for tp in topics
        ]
        return Reply(("\n".join(lines),))

    async def cmd_export(self, scope: Scope, args: str) -> Reply:
        data = await self.store.export(scope)
        body = json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")
        return Reply((self._t("export_ready"),), document=Document("mnemo-export.json", body))

    async def cmd_deleteme(self, scope: Scope, args: str) -> Reply:
        return Reply((self._t("deleteme_confirm"),),
                     buttons=((Button(self._t("deleteme_yes"), "deleteme:yes"), Button(self._t("cancel"), "cancel")),))

    async def cmd_undo(self, scope: Scope, args: str) -> Reply:
        numbers = await self._numbers_of(scope, await latest_processing(self.store, scope))  # what is there now
        entries = await undo_latest(self.store, scope)
        if not entries:
            return Reply((self._t("undo_nothing"),))
        restored = [e for e in entries if not is_final(e)]
        if not restored:
            return Reply((self._t("undo_final"),))
        numbers |= await self._numbers_of(scope, restored)  # what is back now (the same number as before)
        zone = self.engine.config.zone
        lines = [self._t("undo_done")] + [
            relationship.describe_change(self.lang, e, zone) if e.item_type == "relationship"
            else undo_line(e, numbers.get((e.item_type, e.item_id or 0)), self.lang) for e in restored]
        return Reply(("\n".join(lines),))

    async def _numbers_of(self, scope: Scope, entries: list[AuditEntry]) -> dict[tuple[str, int], int]:
        """The user's numbers of the numbered items that audit entries name, where the item exists (or did)."""
        found: dict[tuple[str, int], int] = {}
        for item_type, kind in NUMBERED.items():
            ids = [e.item_id for e in entries if e.item_type == item_type and e.item_id is not None]
            found |= {(item_type, i): n for i, n in (await self.store.numbers.of_many(scope, kind, ids)).items()}
        return found

    async def cmd_why(self, scope: Scope, args: str) -> Reply:
        if (number := item_id(args)) is not None:
            try:
                ids = [await self.store.numbers.item(scope, "note", number)]
            except NotFound:
                ids = []
        elif args:
            ids = [h.item_id for h in await self._keyword_search(scope, args, 3)]
        else:
            ids = await self.engine.last_notes(scope)
        return await explain(self.store, scope, ids, self.lang, self.engine.config.zone)

    async def cmd_settings(self, scope: Scope, args: str) -> Reply:
        words = args.split()
        if len(words) >= 2:
            key = SETTING_KEYS.get(words[0].lower())
            value = " ".join(words[1:])
            if key == "diary_time" and value.lower() in ("on", "an", "off", "aus"):
                key = "diary_push"
            if key is None:
                return Reply((self._t("settings_usage"),))
            try:
                parsed = parse_value(key, value)
            except ValueError:
                return Reply((self._t("settings_bad", expected=self._t(SETTING_EXPECTS[key])),))
            await self.store.preferences.set(scope, key, parsed)
            if self.scheduler is not None:
                await self.scheduler.sync_jobs()
            head = self._t("settings_saved")
        else:
            head = self._t("settings_head")
        p = await self.store.preferences.get(scope)
        onoff = {True: self._t("on"), False: self._t("off")}
        shown = self._t("settings_lines", diary=p.diary_time, push=onoff[p.diary_push], reflection=p.reflection_time,
                        hours=p.active_hours, checkins=onoff[p.checkins])
        return Reply(("\n".join([head, shown, self._t("settings_usage")]),))

    async def cmd_think(self, scope: Scope, args: str) -> Reply:
        if self.scheduler is None:
            return Reply((self._t("not_yet"),))
        try:
            result = await reflect(self.store, self.scheduler.writer, scope, force=True)
        except Exception as exc:
            log.exception("reflection on demand failed")
            return Reply((self._t(failure_key(exc, "think")),))
        thoughts = [th.text for th in result.thoughts] if result else []
        if not thoughts:
            return Reply((self._t("think_nothing"),))
        return Reply(("\n".join([self._t("thoughts_head")] + [f"• {th}" for th in thoughts]),))

    async def cmd_people(self, scope: Scope, args: str) -> Reply:
        return await people.command(self.store, scope, args, self.lang)

    async def cmd_reminders(self, scope: Scope, args: str) -> Reply:
        return await reminders.listing(self.store, scope, self.lang, self.engine.config.zone)

    async def _press_reminder_or_person(self, scope: Scope, parts: list[str]) -> Answer | None:
        """Buttons of /reminders, pushed reminders and /people (None: some other button)."""
        if parts[0] == "rem":
            return await reminders.press(self.store, scope, parts, self.lang, self.engine.config.zone,
                                         self.engine.clock())
        if parts[0] == "people":
            return await people.press(self.store, scope, parts, self.lang, self.engine.background)
        return None

    async def cmd_relationship(self, scope: Scope, args: str) -> Reply:
        state = await self.store.relationships.get(scope)
        wish = wish_of(await self.store.companions.get(scope.companion_id))
        history = await self.store.relationships.history(scope, 6)
        return Reply((relationship.show(self.lang, state, wish, history, self.engine.config.zone),))

    async def cmd_writediary(self, scope: Scope, args: str) -> Reply:
        if self.scheduler is None:
            return Reply((self._t("not_yet"),))
        prefs = await self.store.preferences.get(scope)
        zone = ZoneInfo(prefs.timezone) if prefs.timezone else self.engine.config.zone
        try:
            entry = await write_diary(self.store, self.scheduler.writer, scope, time.time(), zone)
        except Exception as exc:
            log.exception("diary on demand failed")
            return Reply((self._t(failure_key(exc, "diary")),))
        if entry is None:
            return Reply((self._t("diary_nothing"),))
        return Reply((f"📔 {entry.day}\n{entry.text}",))

    async def press(self, user_id: str, data: str, *, admin: bool = True, channel: str = "",
                    ref: str | None = None) -> Pressed:
        """Act on a button's data in the scope of `user_id`; forged or stale data changes nothing.

        In a group scope, `admin` says whether the person who pressed is one of the group's admins:
        only they may change the group's memory (paging and showing are open to every member).
        With `ref` (the channel's id of the press), a replayed press answers what it answered before;
        one cut off by a crash runs again, which every button allows (each checks what it acts on first).
        """
        if not well_formed(data):
            log.info("malformed button data %r from %s", data[:80], user_id)
            return Pressed(self._t("button_unknown"))
        if is_group_scope(user_id) and not admin and changes_memory(data):
            log.info("press %r in %s by a member who is no admin: refused", data, user_id)
            return Pressed(self._t("group_admins_only"))
        scope = await self.engine.scope_for(user_id)
        earlier = await self.store.runs.begin(scope, channel, ref) if ref is not None else None
        if earlier is not None and earlier.reply is not None:
            return _pressed_from(earlier.reply)
        if earlier is not None and earlier.state == "delivered":
            return Pressed("")
        pressed = await self._press(scope, data)
        if ref is not None:
            await self.store.runs.answer(scope, channel, ref, _pressed_record(pressed))
        return pressed

    async def _press(self, scope: Scope, data: str) -> Pressed:
        """Act on well-formed button data within the scope."""
        user_id = scope.user_id
        parts = data.split(":")
        try:
            answer = await self._press_reminder_or_person(scope, parts)
            if answer is not None:
                return Pressed(*answer)
            if parts == ["cancel"]:
                return Pressed(self._t("cancelled"), self._t("cancelled"))
            if parts[0] == "mem" and len(parts) == 2 and parts[1].lstrip("-").isdigit():
                page = await self.memories_page(scope, int(parts[1]))
                return Pressed("", page.bubbles[0], page.buttons)
            if parts[0] == "forget" and len(parts) == 2 and parts[1].isdigit():
                note_id = await self.store.numbers.item(scope, "note", int(parts[1]))
                async with self.engine.learning_paused(scope):
                    return await self._forget_note(scope, note_id)
            if parts[0] == "rule" and len(parts) == 3 and parts[2].isdigit():
                return await self._press_rule(scope, parts[1], int(parts[2]))
            if parts[0] == "why" and len(parts) == 3 and parts[1] in ("wrong", "old") and parts[2].isdigit():
                note_id = await self.store.numbers.item(scope, "note", int(parts[2]))
                return await self._close_from_why(scope, parts[1], note_id)
            if parts[0] == "profile" and len(parts) == 3 and parts[1] in ("yes", "no") and parts[2].isdigit():
                pending = await self.store.numbers.item(scope, "profile", int(parts[2]))
                fact = await self.store.profile.decide(scope, pending, parts[1] == "yes")
                done = (self._t("profile_saved", fact=f"{profile_key(fact.key, self.lang)}: {fact.value}")
                        if parts[1] == "yes"
                        else self._t("rule_dropped"))
                return Pressed(done, done, closes=(f"profile:{parts[2]}",))
            if parts == ["deleteme", "yes"]:
                async with self.engine.learning_paused(scope):
                    await self.store.delete_scope(scope)
                delete_reports_about(self.store.db.path.parent, scope.user_id)  # `mnemo analyse` quoted them
                return Pressed(self._t("deleteme_done"), self._t("deleteme_done"))
        except NotFound:
            log.info("button %r from %s names nothing in their scope", data, user_id)
            return Pressed(self._t("button_unknown"), stale=True)
        log.info("unrecognised button data %r from %s", data, user_id)
        return Pressed(self._t("button_unknown"))

    async def _forget_note(self, scope: Scope, note_id: int) -> Pressed:
        """Delete a note for good, then rewrite what was written from it (diary, thoughts, summary, relationship)."""
        processing = audit.new_processing("forget")
        note = await self.store.notes.erase(scope, note_id, reason="/forget")
        copies = await forgetting.forget(self.store, self.engine.background, scope, forgetting.Forgotten((note.text,)),
                                         processing=processing, reason="/forget", final=True)
        done = forgetting.with_copies(self._t("forget_done", text=clip(note.text, 200)), copies, self.lang)
        return Pressed(done, done)

    async def _close_from_why(self, scope: Scope, verdict: str, note_id: int) -> Pressed:
        """Close a note the person called wrong or outdated under /why; a wrong one leaves its copies too (undoable)."""
        if (await self.store.notes.get(scope, note_id)).valid_to is not None:
            return Pressed(self._t("button_stale"), stale=True)
        processing = audit.new_processing("why")
        reason = "why: wrong" if verdict == "wrong" else "why: outdated"
        note = await self.store.notes.close(scope, note_id, processing=processing, reason=reason)
        done = self._t("why_closed", text=clip(note.text, 200))
        if verdict == "wrong":
            copies = await forgetting.forget(self.store, self.engine.background, scope,
                                             forgetting.Forgotten((note.text,)), processing=processing, reason=reason,
                                             final=False)
            done = forgetting.with_copies(done, copies, self.lang)
        return Pressed(done, done)

    async def _press_rule(self, scope: Scope, action: str, number: int) -> Pressed:
        rule_id = await self.store.numbers.item(scope, "rule", number)
        rule = await self.store.rules.get(scope, rule_id)
        question = (f"rule:{number}",)
        if action in ("yes", "no"):
            if rule.status != "pending":
                return Pressed(self._t("button_stale"), closes=question, stale=True)
            if action == "yes":
                await self.store.rules.decide(scope, rule_id, "active", reason="button")
                text = self._t("rule_saved", rule=rule.text)
            else:
                await self.store.rules.decide(scope, rule_id, "rejected", reason="button")
                text = self._t("rule_dropped")
            return Pressed(text, text, closes=question)
        if action == "off" and rule.status == "active":
            await self.store.rules.decide(scope, rule_id, "disabled", reason="/rules")
            return Pressed(self._t("rule_turned_off", id=number))
        if action == "on" and rule.status == "disabled":
            await self.store.rules.decide(scope, rule_id, "active", reason="/rules")
            return Pressed(self._t("rule_turned_on", id=number))
        if action == "del":
            await self.store.rules.delete(scope, rule_id)
            return Pressed(self._t("rule_deleted", id=number), closes=question if rule.status == "pending" else ())
        return Pressed(self._t("button_stale"), stale=True)


def _pressed_record(pressed: Pressed) -> dict[str, Any]:
    return {"notice": pressed.notice, "text": pressed.text, "buttons": _rows_record(pressed.buttons),
            "closes": list(pressed.closes), "stale": pressed.stale}


def _pressed_from(record: dict[str, Any]) -> Pressed:
    return Pressed(record["notice"], record["text"], _rows_from(record["buttons"]), tuple(record["closes"]),
                   record["stale"])
