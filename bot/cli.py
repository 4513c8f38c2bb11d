"""The `mnemo` command."""
from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from typing import TYPE_CHECKING

from bot.errors import BotError
from memory.errors import MemoryStoreError

if TYPE_CHECKING:
    from bot.settings import Settings


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(prog="mnemo", description="A companion with a long-term memory.")
    parser.add_argument("--env-file", default=".env", help="settings file (default: .env)")
    parser.add_argument("--log-level", default="WARNING")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("run", help="run the configured channels (default)")
    sub.add_parser("console", help="chat in the terminal")
    undo = sub.add_parser("undo", help="revert the latest memory change of a user")
    undo.add_argument("--user", required=True, help="user id as stored, e.g. tg:123456 or @anna:example.org")
    return parser.parse_args(argv)


async def undo(settings: "Settings", user_id: str) -> int:
    """Revert the newest processing of one user and print what changed."""
    from memory.embedder import make_embedder
    from memory.store import MemoryStore
    from memory.undo import undo_latest

    store = await MemoryStore.open(settings.data_dir, make_embedder(settings.embedding_model))
    try:
        scope = await store.scope(settings.companion_id, user_id)
        entries = await undo_latest(store, scope)
    finally:
        await store.close()
    if not entries:
        print("nothing to undo")
        return 1
    for e in entries:
        print(f"undone: {e.action} {e.item_type} #{e.item_id} ({e.processing_id})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: run mnemo; a configuration problem is one sentence and exit code 2."""
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    from bot import app
    from bot.settings import load_settings

    try:
        settings = load_settings(args.env_file)
        if args.command == "undo":
            return asyncio.run(undo(settings, args.user))
        if args.command == "console":
            settings = settings.model_copy(update={"channels": ["console"]})
        asyncio.run(app.main(settings))
    except (BotError, MemoryStoreError) as exc:
        print(f"mnemo: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
