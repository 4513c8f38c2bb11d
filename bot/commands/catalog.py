"""Every chat command and button kind, declared once; /help, the menus and who may press what are made from here.

A command is its name, what the menu says of it in German and English, its handler, whether a run changes
something (such a run is never repeated after a crash), and who may run it in a group. A button kind is the
first field of a button's data ('rule' in 'rule:yes:3'), its handler, and which of its presses only show
something (those anyone let into a group may press).
"""
from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from bot.commands import (
    account,
    checkins,
    incognito,
    inner_life,
    learned,
    memories,
    people_views,
    reminder_views,
    review,
    speaking,
    tool_calls,
    web_login,
)
from bot.commands.invocation import Call, Pressed
from bot.exchange import Button, Reply

CommandHandler = Callable[[Call, str], Awaitable[Reply]]  # (call, the text after the name) -> the answer
ButtonHandler = Callable[[Call, list[str]], Awaitable[Pressed | None]]  # (call, data fields after the kind)
Changes = Callable[[list[str]], bool]  # whether a run with these (lower-cased) words changes something


def shows_only(words: list[str]) -> bool:
    """A command that only shows something: after a crash cut it off, it simply runs again."""
    return False


def always_changes(words: list[str]) -> bool:
    """A command that always changes something."""
    return True


def switches_diary(words: list[str]) -> bool:
    """/diary an|aus switches the pushed diary; /diary and /diary 3 show it."""
    return bool(words) and words[0] in account.SWITCH_WORDS


def saves_setting(words: list[str]) -> bool:
    """/settings WORD VALUE saves; /settings shows."""
    return len(words) >= 2


def edits_people(words: list[str]) -> bool:
    """/people rename|merge|forget edit (forget only asks); /people and /people NAME show."""
    return bool(words) and words[0] in ("rename", "umbenennen", "merge", "zusammenführen", "forget", "vergessen")


@dataclass(frozen=True)
class Command:
    """One chat command, as the menus show it and as it runs."""

    name: str
    de: str  # the menu's and /help's line, in German
    en: str  # and in English
    handler: CommandHandler
    changes: Changes = shows_only
    in_group: Literal["admins", "everyone"] = "admins"  # who may run it in a group chat


@dataclass(frozen=True)
class ButtonKind:
    """One kind of button, by the first field of its data."""

    prefix: str
    handler: ButtonHandler  # None from it: data of this kind it does not know (answered 'unknown button')
    looking: str | None = None  # pattern of the data after 'prefix:' that only shows something ('': the bare prefix)

    def looking_pattern(self) -> str | None:
        """The whole data of this kind's presses that only show something, as a pattern (None: every press acts)."""
        if self.looking is None:
            return None
        return self.prefix if self.looking == "" else f"{self.prefix}:(?:{self.looking})"


async def start(call: Call, args: str) -> Reply:
    """/start: the companion's welcome."""
    companion = await call.store.companions.get(call.scope.companion_id)
    return Reply((call.t("start", name=companion.name if companion else call.engine.config.companion_name),))


async def help_text(call: Call, args: str) -> Reply:
    """/help: every command with its line in the user's language, in the menu's order."""
    lines = [call.t("help_head")] + [f"/{name} – {desc}" for name, desc in menu(call.lang)]
    return Reply(("\n".join(lines),))


async def cancel(call: Call, fields: list[str]) -> Pressed | None:
    """'cancel': nothing happens, and the question says so."""
    return None if fields else Pressed(call.t("cancelled"), call.t("cancelled"))


# The commands, in the menu's order.
DECLARED: tuple[Command, ...] = (
    Command("start", "Begrüßung", "Welcome", start),
    Command("help", "Alle Befehle", "All commands", help_text),
    Command("memories", "Was ich mir gemerkt habe – ansehen oder suchen", "List or search memories",
            memories.memories),
    Command("forget", "Etwas vergessen lassen", "Make me forget something", memories.forget, always_changes),
    Command("diary", "Mein Tagebuch lesen", "Read my diary", inner_life.diary, switches_diary),
    Command("rules", "Gelernte Regeln verwalten (aus, an, löschen: /rules aus 7)",
            "Manage learned rules (off, on, delete: /rules off 7)", learned.rules, learned.changes_rules),
    Command("profile", "Dein Profil", "Your profile", learned.profile),
    Command("thoughts", "Meine Gedanken", "My thoughts", inner_life.thoughts),
    Command("topics", "Offene Themen", "Open topics", inner_life.topics),
    Command("settings", "Tagebuch, Zeiten, Zeitzone, Nachfragen", "Diary, times, time zone, check-ins",
            account.settings, saves_setting),
    Command("voice", "Antworten auch als Sprachnachricht: an, aus, auto", "Replies as voice notes too: on, off, auto",
            speaking.voice, speaking.sets_mode),
    Command("checkins", "Warum ich (nicht) von mir aus schreibe", "Why I did or didn't write first",
            checkins.checkins),
    Command("export", "Alle deine Daten als JSON", "All your data as JSON", account.export),
    Command("deleteme", "Alles über dich löschen", "Delete everything about you", account.deleteme, always_changes),
    Command("why", "Woher ich etwas weiß", "Where I know something from", memories.why),
    Command("undo", "Letzte Änderung am Gedächtnis zurücknehmen", "Undo the last memory change", memories.undo,
            always_changes),
    Command("think", "Jetzt nachdenken", "Reflect now", inner_life.think, always_changes),
    Command("writediary", "Jetzt Tagebuch schreiben", "Write the diary now", inner_life.writediary, always_changes),
    Command("relationship", "Wo wir zwei stehen", "Where we two stand", inner_life.relationship),
    Command("people", "Menschen in deinem Leben", "People in your life", people_views.people, edits_people),
    Command("reminders", "Woran ich dich erinnern soll", "Your reminders", reminder_views.reminders),
    Command("incognito", "Reden, ohne dass ich mir etwas merke (aus: /incognito aus)",
            "Talk without me remembering anything (off: /incognito off)", incognito.incognito, always_changes),
    Command("review", "Importierte Erinnerungen prüfen und behalten", "Review and keep imported memories",
            review.review),
    Command("web", "Dein Gedächtnis im Browser (Link per Nachricht)", "Your memory in the browser (a link)",
            web_login.web),
)
BY_NAME: Mapping[str, Command] = MappingProxyType({c.name: c for c in DECLARED})

# Command name -> (German line, English line), in the menu's order.
COMMANDS: Mapping[str, tuple[str, str]] = MappingProxyType({c.name: (c.de, c.en) for c in DECLARED})

# Commands that never change anything, whatever follows their name.
READ_ONLY = frozenset(c.name for c in DECLARED if c.changes is shows_only)

BUTTONS: Mapping[str, ButtonKind] = MappingProxyType({kind.prefix: kind for kind in (
    ButtonKind("mem", memories.turn_page, looking=r"-?[0-9]+"),
    ButtonKind("forget", memories.press_forget),
    ButtonKind("why", memories.press_why),
    ButtonKind("rule", learned.press_rule),
    ButtonKind("rules", learned.turn_rules_page, looking=r"-?[0-9]+"),
    ButtonKind("profile", learned.press_profile),
    ButtonKind("deleteme", account.press_deleteme),
    ButtonKind("cancel", cancel, looking=""),
    ButtonKind("rem", reminder_views.press),
    ButtonKind("people", people_views.press, looking=r"show:[0-9]+"),
    ButtonKind("review", review.press),
    ButtonKind("tool", tool_calls.press_tool),
    ButtonKind("saved", memories.press_saved),
)})

# Button data that only shows something; in a group anyone let in may press it, the rest only admins.
_LOOKING = re.compile("|".join(p for kind in BUTTONS.values() if (p := kind.looking_pattern()) is not None), re.ASCII)


def menu(lang: str) -> list[tuple[str, str]]:
    """(command, description) pairs in the language, for a messenger's command menu."""
    return [(c.name, c.de if lang == "de" else c.en) for c in DECLARED]


def parse_command(text: str) -> tuple[str, str] | None:
    """Split '/name@bot args' or '!name args' into (name, args); None when it is no command."""
    match = re.match(r"^[/!]([A-Za-z_]+)(?:@\w+)?(?:\s+(.*))?$", text.strip(), re.S)
    if not match:
        return None
    return match.group(1).lower(), (match.group(2) or "").strip()


def changes_something(name: str, args: str) -> bool:
    """Whether a command changes something (and so must not run twice); a look at memory does not."""
    command = BY_NAME.get(name)
    return command is None or command.changes(args.lower().split())


def changes_memory(data: str) -> bool:
    """Whether pressing a button with this data may change memory (paging and showing do not)."""
    return not _LOOKING.fullmatch(data)


def owner_of(buttons: Sequence[Sequence[Button]], asker: str, may_decide: bool = True) -> str | None:
    """Who may press these buttons: the person who asked; anyone let in when they only show something.

    A group member who may not decide (no admin) owns nothing: any admin may answer, nobody else.
    """
    if not may_decide or not any(changes_memory(b.data) for row in buttons for b in row):
        return None
    return asker
