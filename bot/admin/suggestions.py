"""`mnemo suggestions`: what the companion suggested about mnemo itself; `dismiss N` puts one away.

Only the operator sees them. Each line says how often and when it was noted, in which chat, and the start of the
message it reacted to. A number that is not a suggestion's is one sentence, exit code 1, and nothing changes.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, TextIO
from zoneinfo import ZoneInfo

from memory import Suggestion, Suggestions, migrate, open_database

if TYPE_CHECKING:
    from bot.settings import Settings


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of `mnemo suggestions` (its name and help are `bot.cli`'s)."""
    p.add_argument("--all", action="store_true", help="show the dismissed ones too")
    actions = p.add_subparsers(dest="action")
    dismiss = actions.add_parser("dismiss", help="dismiss one suggestion by its number")
    dismiss.add_argument("number", help="the number shown by `mnemo suggestions`, e.g. 7")


def _when(at: float, zone: ZoneInfo) -> str:
    return f"{datetime.fromtimestamp(at, zone):%Y-%m-%d %H:%M}"


def describe(item: Suggestion, companion_id: str, zone: ZoneInfo) -> str:
    """One suggestion as the operator reads it: number, kind, count, first and last seen, chat, text, context."""
    who = item.user_id if item.companion_id == companion_id else f"{item.user_id} (companion {item.companion_id})"
    head = (f"#{item.id}  {item.kind}  {item.count}x  first {_when(item.first_at, zone)}, "
            f"last {_when(item.last_at, zone)}  {who}")
    if item.dismissed_at is not None:
        head += f"  dismissed {_when(item.dismissed_at, zone)}"
    lines = [head, f"    {item.text}"]
    if item.context:
        lines.append(f'    on: "{item.context}"')
    return "\n".join(lines)


def listing(items: Sequence[Suggestion], companion_id: str, zone: ZoneInfo, everything: bool) -> str:
    """The list, the last seen first, with a count above it."""
    if not items:
        return "no suggestions" if everything else "no open suggestions"
    what = "suggestions" if everything else "open suggestions"
    return f"{len(items)} {what}, the last seen first:\n\n" + "\n\n".join(
        describe(item, companion_id, zone) for item in items)


def suggestion_number(text: str) -> int | None:
    """The number the operator typed, or None when it cannot be one ('abc', '-3', '0')."""
    text = text.strip().removeprefix("#")
    return int(text) if text.isascii() and text.isdigit() and 0 < int(text) < 1 << 62 else None


async def run_command(settings: Settings, args: argparse.Namespace, out: TextIO | None = None,
                      now: float | None = None) -> int:
    """List the suggestions, or dismiss one; return the exit code."""
    out = out or sys.stdout
    db = await open_database(settings.data_dir, settings.database_url)
    try:
        await migrate(db, backup_dir=settings.data_dir / "backups")
        suggestions = Suggestions(db)
        if args.action != "dismiss":
            items = await suggestions.list(dismissed=args.all)
            print(listing(items, settings.companion_id, settings.zone, args.all), file=out)
            return 0
        number = suggestion_number(args.number)
        if number is None:
            print(f"{args.number!r} is not a suggestion number; `mnemo suggestions` shows them", file=sys.stderr)
            return 1
        found = await suggestions.dismiss(number, time.time() if now is None else now)
    finally:
        await db.close()
    if found is None:
        print(f"there is no suggestion #{number}; `mnemo suggestions --all` shows them", file=sys.stderr)
        return 1
    if found.dismissed_at is not None:
        print(f"#{number} was dismissed already", file=out)
        return 0
    print(f"dismissed #{number}: {found.text}", file=out)
    return 0
