"""The chat commands and button presses, one implementation shared by every channel."""
from __future__ import annotations

import json
import logging
import re
import time
from zoneinfo import ZoneInfo
from dataclasses import dataclass

from bot import people, relationship, reminders
from bot.engine import Button, Document, Engine, Reply, check_input, rule_buttons
from bot.replies import item_id, well_formed
from bot.prompt import clip
from bot.replies import Answer
from bot.texts import t
from bot.why import explain
from memory.access import is_group_scope
from memory.errors import NotFound
from memory.models import AuditEntry, Scope
from memory.preferences import parse_value
from memory.undo import undo_latest
from scheduler.diary import write_diary
from scheduler.reflection import reflect
from scheduler.relationship import wish_of
from scheduler.service import Scheduler

log = logging.getLogger(__name__)

PAGE = 10

# Words a user may type in /settings, German and English, and the preference each one sets.
SETTING_KEYS = {"diary": "diary_time", "tagebuch": "diary_time", "reflection": "reflection_time",
                "nachdenken": "reflection_time", "hours": "active_hours", "stunden": "active_hours",
                "zeiten": "active_hours", "checkins": "checkins", "check-ins": "checkins"}

# Command name -> (German description, English description); the order is the menu's.
COMMANDS: dict[str, tuple[str, str]] = {
    "start": ("Begrüßung", "Welcome"),
    "help": ("Alle Befehle", "All commands"),
    "memories": ("Erinnerungen ansehen oder suchen", "List or search memories"),
    "forget": ("Etwas vergessen lassen", "Make me forget something"),
    "diary": ("Mein Tagebuch lesen", "Read my diary"),
    "rules": ("Gelernte Regeln verwalten", "Manage learned rules"),
    "profile": ("Dein Profil", "Your profile"),
    "thoughts": ("Meine Gedanken", "My thoughts"),
    "topics": ("Offene Themen", "Open topics"),
    "settings": ("Tagebuch, Zeiten, Check-ins einstellen", "Diary, times, check-ins"),
    "export": ("Alle deine Daten als JSON", "All your data as JSON"),
    "deleteme": ("Alles über dich löschen", "Delete everything about you"),
    "why": ("Woher ich etwas weiß", "Where I know something from"),
    "undo": ("Letzte Änderung am Gedächtnis zurücknehmen", "Undo the last memory change"),
    "think": ("Jetzt nachdenken", "Reflect now"),
    "writediary": ("Jetzt Tagebuch schreiben", "Write the diary now"),
    "relationship": ("Wo wir zwei stehen", "Where we two stand"),
    "people": ("Menschen in deinem Leben", "People in your life"),
    "reminders": ("Deine Erinnerungen", "Your reminders"),
}


def _item_text(entry: AuditEntry) -> str:
    if entry.item_type == "relationship":
        return clip(entry.reason, 120)
    item = entry.before or entry.after or {}
    return clip(str(item.get("text") or item.get("value") or item.get("status") or ""), 120)


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


# Buttons that only show something; in a group anyone let in may press them, the rest only admins.
_LOOKING = re.compile(r"mem:-?[0-9]+|people:show:[0-9]+|cancel", re.ASCII)


def changes_memory(data: str) -> bool:
    """Whether pressing a button with this data may change memory (paging and showing do not)."""
    return not _LOOKING.fullmatch(data)


class Commands:
    """Runs commands and button presses for a user, always within that user's own scope."""

    def __init__(self, engine: Engine, scheduler: Scheduler | None = None) -> None:
        self.engine = engine
        self.scheduler = scheduler
        self.store = engine.store
        self.lang = engine.config.language

    def _t(self, key: str, **values: object) -> str:
        return t(self.lang, key, **values)

    async def run(self, user_id: str, text: str) -> Reply | None:
        """Answer a command; None when the text is not a command at all."""
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
        if (verdict := self.engine.limiter.check(user_id)) != "pass":  # commands count like messages
            return Reply((self._t("rate_limited"),) if verdict == "tell" else (), failed=True)
        scope = await self.engine.scope_for(user_id)
        reply: Reply = await handler(scope, args)
        return reply

    async def cmd_start(self, scope: Scope, args: str) -> Reply:
        companion = await self.store.companions.get(scope.companion_id)
        return Reply((self._t("start", name=companion.name if companion else self.engine.config.companion_name),))

    async def cmd_help(self, scope: Scope, args: str) -> Reply:
        lines = [self._t("help_head")] + [f"/{name} – {desc}" for name, desc in menu(self.lang)]
        return Reply(("\n".join(lines),))

    async def cmd_memories(self, scope: Scope, args: str) -> Reply:
        if args:
            hits = await self.store.search(scope, args, ("note",), k=PAGE)
            if not hits:
                return Reply((self._t("memories_none_found"),))
            lines = [self._t("memories_found")] + [f"#{h.item_id} {clip(h.text, 200)}" for h in hits]
            return Reply(("\n".join(lines),))
        return await self.memories_page(scope, 0)

    async def memories_page(self, scope: Scope, offset: int) -> Reply:
        """One page of notes, newest first, with paging buttons."""
        total = await self.store.notes.count(scope)
        if total == 0:
            return Reply((self._t("memories_empty"),))
        offset = max(0, min(offset, (total - 1) // PAGE * PAGE))
        notes = await self.store.notes.list(scope, limit=PAGE, offset=offset)
        head = self._t("memories_head", first=offset + 1, last=offset + len(notes), total=total)
        lines = [head] + [f"#{n.id} {clip(n.text, 200)}" for n in notes]
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
        if (note_id := item_id(args)) is not None:
            try:
                note = await self.store.notes.get(scope, note_id)
            except NotFound:
                return Reply((self._t("memories_none_found"),))
            return Reply((f"{self._t('forget_confirm')}\n#{note.id} {note.text}",),
                         buttons=((Button(self._t("forget"), f"forget:{note.id}"), cancel),))
        hits = await self.store.search(scope, args, ("note",), k=3)
        if not hits:
            return Reply((self._t("memories_none_found"),))
        lines = [self._t("forget_pick")] + [f"#{h.item_id} {clip(h.text, 200)}" for h in hits]
        rows = tuple((Button(f"{self._t('forget')} #{h.item_id}", f"forget:{h.item_id}"),) for h in hits)
        return Reply(("\n".join(lines),), buttons=rows + ((cancel,),))

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
        lines = [self._t("rules_head")] + [f"#{r.id} {r.text} ({status.get(r.status, r.status)})" for r in rules]
        rows = []
        for r in rules:
            if r.status == "pending":
                rows.append(rule_buttons(r.id, self.lang))
                continue
            toggle = (Button(self._t("rule_off", id=r.id), f"rule:off:{r.id}") if r.status == "active"
                      else Button(self._t("rule_on", id=r.id), f"rule:on:{r.id}"))
            rows.append((toggle, Button(self._t("rule_delete", id=r.id), f"rule:del:{r.id}")))
        return Reply(("\n".join(lines),), buttons=tuple(rows))

    async def cmd_profile(self, scope: Scope, args: str) -> Reply:
        entries = await self.store.profile.list(scope)
        if not entries:
            return Reply((self._t("profile_empty"),))
        return Reply(("\n".join([self._t("profile_head")] + [f"{e.key}: {e.value}" for e in entries]),))

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
        entries = await undo_latest(self.store, scope)
        if not entries:
            return Reply((self._t("undo_nothing"),))
        lines = [self._t("undo_done")] + [f"• {e.action} {e.item_type} #{e.item_id}: {_item_text(e)}" for e in entries]
        return Reply(("\n".join(lines),))

    async def cmd_why(self, scope: Scope, args: str) -> Reply:
        if (note_id := item_id(args)) is not None:
            ids = [note_id]
        elif args:
            ids = [h.item_id for h in await self.store.search(scope, args, ("note",), k=3)]
        else:
            ids = self.engine.last_note_ids.get(scope.id, [])
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
            except ValueError as exc:
                return Reply((self._t("settings_bad", expected=str(exc)),))
            await self.store.preferences.set(scope, key, parsed)
            if self.scheduler is not None:
                await self.scheduler.sync_jobs()
            head = self._t("settings_saved")
        else:
            head = self._t("settings_head")
        p = await self.store.preferences.get(scope)
        onoff = {True: self._t("on"), False: self._t("off")}
        lines = [head, f"diary: {p.diary_time} (push {onoff[p.diary_push]})", f"reflection: {p.reflection_time}",
                 f"hours: {p.active_hours}", f"checkins: {onoff[p.checkins]}", self._t("settings_usage")]
        return Reply(("\n".join(lines),))

    async def cmd_think(self, scope: Scope, args: str) -> Reply:
        if self.scheduler is None:
            return Reply((self._t("not_yet"),))
        try:
            result = await reflect(self.store, self.scheduler.writer, scope, force=True)
        except Exception:
            log.exception("reflection on demand failed")
            return Reply((self._t("job_failed"),))
        thoughts = [th.text for th in result.thoughts if th.text != "(nichts Neues)"] if result else []
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
            return await people.press(self.store, scope, parts, self.lang)
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
        except Exception:
            log.exception("diary on demand failed")
            return Reply((self._t("job_failed"),))
        if entry is None:
            return Reply((self._t("diary_nothing"),))
        return Reply((f"📔 {entry.day}\n{entry.text}",))

    async def press(self, user_id: str, data: str, *, admin: bool = True) -> Pressed:
        """Act on a button's data in the scope of `user_id`; forged or stale data changes nothing.

        In a group scope, `admin` says whether the person who pressed is one of the group's admins:
        only they may change the group's memory (paging and showing are open to every member).
        """
        if not well_formed(data):
            log.info("malformed button data %r from %s", data[:80], user_id)
            return Pressed(self._t("button_unknown"))
        if is_group_scope(user_id) and not admin and changes_memory(data):
            log.info("press %r in %s by a member who is no admin: refused", data, user_id)
            return Pressed(self._t("group_admins_only"))
        scope = await self.engine.scope_for(user_id)
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
                note = await self.store.notes.erase(scope, int(parts[1]), reason="/forget")
                done = self._t("forget_done", text=clip(note.text, 200))
                return Pressed(done, done)
            if parts[0] == "rule" and len(parts) == 3 and parts[2].isdigit():
                return await self._press_rule(scope, parts[1], int(parts[2]))
            if parts[0] == "why" and len(parts) == 3 and parts[1] in ("wrong", "old") and parts[2].isdigit():
                reason = "why: wrong" if parts[1] == "wrong" else "why: outdated"
                if (await self.store.notes.get(scope, int(parts[2]))).valid_to is not None:
                    return Pressed(self._t("button_stale"))
                note = await self.store.notes.close(scope, int(parts[2]), reason=reason)
                done = self._t("why_closed", text=clip(note.text, 200))
                return Pressed(done, done)
            if parts[0] == "profile" and len(parts) == 3 and parts[1] in ("yes", "no") and parts[2].isdigit():
                fact = await self.store.profile.decide(scope, int(parts[2]), parts[1] == "yes")
                done = (self._t("profile_saved", fact=f"{fact.key}: {fact.value}") if parts[1] == "yes"
                        else self._t("rule_dropped"))
                return Pressed(done, done)
            if parts == ["deleteme", "yes"]:
                await self.store.delete_scope(scope)
                return Pressed(self._t("deleteme_done"), self._t("deleteme_done"))
        except NotFound:
            log.info("button %r from %s names nothing in their scope", data, user_id)
            return Pressed(self._t("button_unknown"))
        log.info("unrecognised button data %r from %s", data, user_id)
        return Pressed(self._t("button_unknown"))

    async def _press_rule(self, scope: Scope, action: str, rule_id: int) -> Pressed:
        rule = await self.store.rules.get(scope, rule_id)
        if action in ("yes", "no"):
            if rule.status != "pending":
                return Pressed(self._t("button_stale"))
            if action == "yes":
                await self.store.rules.decide(scope, rule_id, "active", reason="button")
                text = self._t("rule_saved", rule=rule.text)
            else:
                await self.store.rules.decide(scope, rule_id, "rejected", reason="button")
                text = self._t("rule_dropped")
            return Pressed(text, text)
        if action == "off" and rule.status == "active":
            await self.store.rules.decide(scope, rule_id, "disabled", reason="/rules")
            return Pressed(self._t("rule_turned_off", id=rule_id))
        if action == "on" and rule.status == "disabled":
            await self.store.rules.decide(scope, rule_id, "active", reason="/rules")
            return Pressed(self._t("rule_turned_on", id=rule_id))
        if action == "del":
            await self.store.rules.delete(scope, rule_id)
            return Pressed(self._t("rule_deleted", id=rule_id))
        return Pressed(self._t("button_stale"))
