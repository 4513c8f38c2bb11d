"""`mnemo import-history`: read an export, show the preview, ask, and queue the person's facts for /review.

The whole file is read once before anything is stored (the preview's count), so a file damaged in the
middle ends the command with one sentence and nothing stored. A file read to the end before does nothing;
one cut off (an error, Ctrl-C, the day's token budget) goes on where it stopped when the command runs again.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from bot.errors import HistoryError, LLMError
from bot.history.importer import ImportOutcome, file_hash, run_import
from bot.history.preview import render, tally
from bot.history.readers import NAMES, detect_format, read_history

if TYPE_CHECKING:
    from bot.llm.port import LLM
    from bot.settings import Settings

PAUSED = 3  # exit code: the day's token budget is spent; run again tomorrow


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of `mnemo import-history` (its name and help are `bot.cli`'s)."""
    p.add_argument("file", type=Path, help="the export: a zip, conversations.json, result.json or its folder")
    p.add_argument("--user", required=True, help="user id as stored, e.g. tg:123456 or @anna:example.org")
    p.add_argument("--format", choices=tuple(NAMES), help="the export's format (default: recognised from the file)")
    p.add_argument("--preview", action="store_true", help="show what would happen and stop (no model call)")
    p.add_argument("--since", type=date.fromisoformat, help="leave out everything before this day, YYYY-MM-DD")
    p.add_argument("--person", help="Telegram: who you are in the chat (name or id)")
    p.add_argument("--chat", help="Telegram: read only this chat of a full export")
    p.add_argument("--yes", action="store_true", help="start without asking")


class Bar:
    """A progress bar on one terminal line: conversations done of the total, or (`read`) the file's bytes read."""

    def __init__(self, total: int, out: TextIO, width: int = 30) -> None:
        self.total, self.out, self.width = max(total, 1), out, width
        self.drawn = False

    def __call__(self, done: int) -> None:
        self.draw(done, self.total, f"{done}/{self.total}")

    def read(self, pos: int, size: int) -> None:
        """The reader's progress hook: bytes read of the file's size."""
        self.draw(pos, max(size, 1), amount(pos, size))

    def draw(self, done: int, total: int, label: str) -> None:
        filled = self.width * min(done, total) // total
        self.out.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {label}")
        self.out.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.out.write("\n")


def amount(pos: int, size: int) -> str:
    """'12.5/312.4 MB' ('40/200 KB' for a small file): how much of the file is read."""
    if size < 2**20:
        return f"{pos // 1024}/{size // 1024} KB"
    return f"{pos / 2**20:.1f}/{size / 2**20:.1f} MB"


async def import_history(
    settings: Settings, args: argparse.Namespace, *, llm: LLM | None = None,
    ask: Callable[[str], str] = input, out: TextIO | None = None,
) -> int:
    """Run the command; returns the exit code (0 done or nothing to do, 1 declined or failed, 3 paused)."""
    from bot.app import make_models
    from bot.embedding import make_embedder
    from bot.llm.metering import MeteredLLM
    from memory.store import MemoryStore
    from scheduler.budget import TokenBudget

    out = out or sys.stdout
    path: Path = args.file
    if not path.exists():
        raise HistoryError(f"{path}: no such file or folder")
    fmt = args.format or detect_format(path)
    lang = settings.language
    store = await MemoryStore.open(settings.data_dir, make_embedder(settings),
                                   database_url=settings.database_url)
    try:
        scope = await store.scope(settings.companion_id, args.user)
        digest = file_hash(path) if path.is_file() else _folder_hash(path)
        earlier = await store.imports.find(scope, digest)
        if earlier is not None and earlier.finished_at is not None:
            print(f"{path.name} was imported on {earlier.finished_at:%Y-%m-%d} ({earlier.candidates} suggestions); "
                  "nothing to do. Review them with /review in the chat.", file=out)
            return 0
        options: dict[str, Any] = {"since": args.since.isoformat() if args.since else None, "person": args.person,
                                   "chat": args.chat, "format": fmt}
        if earlier is not None:
            if not args.preview:  # a preview continues nothing
                print(f"Continuing the import of {path.name} after {earlier.conversations_done} conversations.",
                      file=out)
            if changed := _changed(options, earlier.options):  # said, not silently dropped
                print(f"It goes on with the options it began with ({changed}).", file=out)
            options = earlier.options  # a resumed import reads the file as it began to

        def conversations(progress: Any = None) -> Any:
            since = date.fromisoformat(options["since"]) if options.get("since") else None
            return read_history(path, options["format"], person=options.get("person"), since=since,
                                chat=options.get("chat"), progress=progress)

        budget = TokenBudget(store.usage, settings.background_tokens_per_day, settings.zone)
        reading = Bar(0, out)
        try:  # reads it all, with the bytes read as a bar: damage shows here
            preview = tally(conversations(reading.read), settings.background_tokens_per_day)
        finally:
            reading.close()
        print(render(preview, lang), file=out)
        if args.preview:
            return 0
        if not args.yes and ask("Start the import? [y/N] ").strip().lower() not in ("y", "yes", "j", "ja"):
            print("Nothing imported.", file=out)
            return 1
        model = llm or MeteredLLM(make_models(settings)[1], budget)

        async def budget_allows() -> bool:
            return await budget.allows(time.time())

        bar = Bar(preview.conversations, out)
        try:
            outcome = await run_import(store, model, scope, conversations(), digest=digest, source=fmt,
                                       name=path.name, options=options, zone=settings.zone,
                                       may_continue=budget_allows, on_progress=bar)
        except LLMError as exc:
            bar.close()
            print(f"The background model failed ({exc}). What was read so far is kept; run the same command again "
                  "to continue where it stopped.", file=out)
            return 1
        bar.close()
        return await _report(outcome, preview.conversations, budget, out)
    finally:
        await store.close()


async def _report(outcome: ImportOutcome, total: int, budget: Any, out: TextIO) -> int:
    """Say how the run ended, and what to do next."""
    done = outcome.imported
    if outcome.state == "paused":
        status = await budget.status(time.time())
        print(f"Paused: the daily token budget for background work is spent ({status.describe()}). "
              f"{done.conversations_done} of {total} conversations are read, {done.candidates} suggestions wait. "
              "Run the same command again tomorrow; it continues where it stopped.", file=out)
        return PAUSED
    if outcome.state == "erased":
        print("Stopped: the person's memory was erased (/deleteme) while the import ran; nothing of it is kept.",
              file=out)
        return 1
    print(f"Done: {done.conversations_done} conversations read with {done.calls} background calls; "
          f"{done.candidates} suggestions wait for you. Nothing is remembered until you approve it: "
          "send /review in the chat. /undo (or `mnemo undo`) takes the whole import back.", file=out)
    if done.failed_batches:
        print(f"{done.failed_batches} batches were skipped: the model's answer was not the JSON asked for.", file=out)
    return 0


def _changed(asked: dict[str, Any], first: dict[str, Any]) -> str:
    """The reading options given now that differ from the first run's, as 'since 2024-01-01, not 2023-01-01'."""
    return "; ".join(f"--{key} {asked.get(key) or '(none)'}, not {first.get(key) or '(none)'}"
                     for key in ("since", "person", "chat") if asked.get(key) != first.get(key))


def _folder_hash(folder: Path) -> str:
    """The content hash of an export folder: that of its conversations.json or result.json."""
    for name in ("conversations.json", "result.json"):
        if (folder / name).is_file():
            return file_hash(folder / name)
    raise HistoryError(f"{folder}: holds no conversations.json or result.json")
