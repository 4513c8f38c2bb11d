"""The saved notice: after an extraction run stored something, one short line "💾 gemerkt: …" with an undo button.

Opt-in per scope (`/settings notices an`; off by default). At most one notice per extraction run, and its button
('saved:undo:extract:<hex>') undoes exactly that run's processing (`memory.ledgers.undo.undo_processing`). The notice
goes through the scheduler's outbox (kind 'notice'), only into a private chat (never into a group), and only when:
- the run's messages show no signs of crisis, and neither did any of the person's messages in the last
  CRISIS_MEMORY_SECONDS (a check-in then speaks carefully; a notice would only be noise);
- the person's last message is at most NOTICE_FRESH old: the notice follows their own words, so it may go at any
  hour, but a run much later (after a restart, or when the day's budget let it go on) stays silent.
"""
from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence

from bot.conversation.model_answer import CRISIS_MARK, CRISIS_MEMORY_SECONDS
from bot.conversation.safety import signals_crisis
from bot.learning.extraction import ExtractionRun
from bot.quoting import clip
from bot.texts import t
from memory import AuditEntry, MemoryStore, Message, Scope, is_group_scope, standing_entries
from scheduler.delivery import OutboxSender

log = logging.getLogger(__name__)

NOTICE_FRESH = 3600.0  # seconds after the person's last message within which a notice may still follow it
SHOWN = 3  # items named in a notice; the rest are counted ("+2")
ITEM_CHARS = 80
BUTTON = "saved"  # the button kind: 'saved:undo:extract:<hex>' for the processing 'extract-<hex>'


def button_data(processing: str) -> str:
    """The undo button's data for an extraction's processing ('extract-1a2b…' -> 'saved:undo:extract:1a2b…')."""
    return f"{BUTTON}:undo:{processing.replace('-', ':')}"


def processing_of(fields: Sequence[str]) -> str | None:
    """The extraction's processing an undo button names (its data's fields after 'saved'), or None."""
    if len(fields) == 3 and fields[:2] == ["undo", "extract"] and re.fullmatch(r"[0-9a-f]{12}", fields[2]):
        return f"extract-{fields[2]}"
    return None


def items_of(entries: Sequence[AuditEntry]) -> list[str]:
    """What a processing stored, oldest first: new notes, profile entries set, people newly met."""
    items = []
    for e in sorted(entries, key=lambda entry: entry.id):
        after, before = e.after or {}, e.before or {}
        if e.item_type == "note" and e.action == "create":
            items.append(str(after.get("text", "")))
        elif e.item_type == "profile" and e.action in ("create", "update"):
            items.append(f"{after.get('key') or before.get('key', '')}: {after.get('value', '')}")
        elif e.item_type == "person" and e.action == "create":
            relation = str(after.get("relation") or "")
            items.append(f"{after.get('name', '')}" + (f" ({relation})" if relation else ""))
    return [clip(" ".join(item.split()), ITEM_CHARS) for item in items if item.strip()]


def listed(items: Sequence[str]) -> str:
    """'Anna mag Tee; Miriam (Schwester); +2': the first SHOWN items and how many more."""
    shown = "; ".join(items[:SHOWN])
    return f"{shown}; +{len(items) - SHOWN}" if len(items) > SHOWN else shown


def silent_because(read: Sequence[Message], recent: Sequence[Message], now: float,
                   crisis_at: float | None = None) -> str:
    """Why no notice may follow this run ('' when one may): a crisis in its messages or lately (`crisis_at`: when the
    detector last saw one), or a stale chat."""
    if any(m.role == "user" and signals_crisis(m.text) for m in read):
        return "the extracted messages show signs of crisis"
    own = [m for m in recent if m.role == "user"]
    since = now - CRISIS_MEMORY_SECONDS
    if (crisis_at is not None and crisis_at >= since
            or any(m.created_at.timestamp() >= since and signals_crisis(m.text) for m in own)):
        return "the person showed signs of crisis in the last days"
    if not own or now - max(m.created_at.timestamp() for m in own) > NOTICE_FRESH:
        return "the person's last message is too old for a notice to follow it"
    return ""


class SavedNotices:
    """Sends the saved notice after an extraction run, when the scope asked for it and the moment allows."""

    def __init__(self, store: MemoryStore, language: str, clock: Callable[[], float] = time.time) -> None:
        self.store, self.language, self.clock = store, language, clock
        self.outbox: OutboxSender | None = None  # the scheduler's outbox, set once it runs (no outbox: no notices)

    async def after_extraction(self, scope: Scope, run: ExtractionRun) -> bool:
        """Send one notice for what the run stored, if it may; True when it went out."""
        if self.outbox is None or not run.stored or is_group_scope(scope.user_id):
            return False
        if not (await self.store.preferences.get(scope)).notices:
            return False
        items = items_of(await standing_entries(self.store, scope, run.processing))
        if not items:  # only topics, or everything stored is already gone again
            return False
        marked = await self.store.state.get(scope, CRISIS_MARK)
        why_not = silent_because(run.read, await self.store.messages.recent(scope, 40), self.clock(),
                                 marked if isinstance(marked, (int, float)) else None)
        if why_not:
            log.info("no saved notice for %s in scope %s: %s", run.processing, scope.id, why_not)
            return False
        lang = self.language
        button = ((t(lang, "saved_undo"), button_data(run.processing)),)
        return await self.outbox.deliver(scope, t(lang, "saved_notice", items=listed(items)), kind="notice",
                                         buttons=(button,))
