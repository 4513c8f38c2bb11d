"""`mnemo web-link --user …`: a one-time login link to a person's (or, for an admin to pass on, a group's) page.

The link is printed for the operator to hand over; it works once, for ten minutes. A user mnemo never talked to
is one sentence, exit code 1, and no link.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, TextIO

from bot.commands.web_links import LINK_MINUTES, base_url
from memory import WebAccess, migrate, open_database

if TYPE_CHECKING:
    from bot.settings import Settings


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of `mnemo web-link` (its name and help are `bot.cli`'s)."""
    p.add_argument("--user", required=True, help="user id as stored, e.g. tg:123456 or @anna:example.org")


async def run_command(settings: Settings, args: argparse.Namespace, out: TextIO | None = None,
                      now: float | None = None) -> int:
    """Print the link; return the exit code."""
    out = out or sys.stdout
    if not settings.web_listen:
        print("the web page is off: set MNEMO_WEB_LISTEN (e.g. 127.0.0.1:8377) and restart mnemo", file=sys.stderr)
        return 1
    db = await open_database(settings.data_dir, settings.database_url)
    try:
        await migrate(db, backup_dir=settings.data_dir / "backups")
        web = WebAccess(db)
        scope = await web.scope_of(settings.companion_id, args.user)
        if scope is None:
            print(f"{args.user!r} has not talked to {settings.companion_id} yet; no link", file=sys.stderr)
            return 1
        token = await web.issue_link(scope, time.time() if now is None else now, LINK_MINUTES * 60)
    finally:
        await db.close()
    link = f"{base_url(settings.web_base_url, settings.web_listen)}/web/login?t={token}"
    print(f"{link}\n(works once, for {LINK_MINUTES} minutes)", file=out)
    return 0
