"""What a command's or button's handler is given (`Call`) and what a button press answers (`Pressed`)."""
from __future__ import annotations

from dataclasses import dataclass
from zoneinfo import ZoneInfo

from bot.commands.web_links import WebLinks
from bot.conversation.engine import Engine
from bot.exchange import Button
from bot.texts import addressed, t
from memory import MemoryStore, Scope, is_group_scope
from scheduler.service import Scheduler


@dataclass(frozen=True)
class Call:
    """One command or press: the scope it acts in (never another), the user's language, and what it may use."""

    engine: Engine
    scheduler: Scheduler | None  # None until the scheduler runs (and in tests without one)
    scope: Scope
    lang: str
    web: WebLinks | None = None  # login links to the web page; None while it is off

    @property
    def store(self) -> MemoryStore:
        """The memory store the engine works on."""
        return self.engine.store

    @property
    def zone(self) -> ZoneInfo:
        """The deployment's time zone (a person's own setting wins where they are shown a time: Engine.zone_for)."""
        return self.engine.config.zone

    @property
    def group(self) -> bool:
        """Whether the command or press came from a group chat (its texts then speak to the group)."""
        return is_group_scope(self.scope.user_id)

    def t(self, key: str, **values: object) -> str:
        """The text `key` in the user's language, in its group form in a group (`bot.texts.addressed`)."""
        return t(self.lang, addressed(key, self.group), **values)


@dataclass(frozen=True)
class Pressed:
    """What a button press does: a short notice, and optionally a new text/buttons for its message."""

    notice: str
    text: str | None = None
    buttons: tuple[tuple[Button, ...], ...] = ()
    closes: tuple[str, ...] = ()  # questions this press decided ('rule:12'): their other buttons go too
    stale: bool = False  # the pressed buttons are no longer valid (done, or their item is gone): take them away
