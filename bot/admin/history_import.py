"""`mnemo import-history`: read an export, show the preview, ask, and queue the person's facts for /review.

A user who never wrote to the companion (an id without its prefix) is refused before anything is read. The whole
export is read before anything is stored (to recognise it, then for the preview's count), so a file damaged in the
middle ends the command with one sentence and nothing stored. An export read to the end before does nothing,
whether it comes as the zip, its folder or its JSON (it is known by its parsed content); one cut off (an error,
Ctrl-C, the day's token budget) goes on where it stopped when the command runs again.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from bot.errors import HistoryError, LLMError
from bot.history.importer import ImportOutcome, file_hash, run_import
from bot.history.preview import render, tally
from bot.history.readers import NAMES, detect_format, read_history
from bot.history.source import content_hash
from bot.texts import counted, t

if TYPE_CHECKING:
    from bot.llm.port import LLM
    from bot.settings import Settings
    from memory import HistoryImport, MemoryStore, Scope

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
        """End the bar's line (once: a closed bar that draws again starts a new line)."""
        if self.drawn:
            self.out.write("\n")
            self.drawn = False


def amount(pos: int, size: int) -> str:
    """'12.5/312.4 MB' ('40/200 KB' for a small file): how much of the file is read."""
    if size < 2**20:
        return f"{pos // 1024}/{size // 1024} KB"
    return f"{pos / 2**20:.1f}/{size / 2**20:.1f} MB"


async def import_history(
    settings: Settings, args: argparse.Namespace, *, llm: LLM | None = None,
    ask: Callable[[str], str] = input, out: TextIO | None = None,
) -> int:
    """Run the command; returns the exit code (0 done or nothing to do, 1 declined, failed or an unknown user,
    2 an export that cannot be read, 3 paused). What it says is in the deployment's language."""
    from bot.embedding import make_embedders
    from memory import MemoryStore

    out, lang = out or sys.stdout, settings.language
    embedder, second = make_embedders(settings)
    store = await MemoryStore.open(settings.data_dir, embedder, database_url=settings.database_url, second=second)
    try:
        scope = await store.web.scope_of(settings.companion_id, args.user)
        if scope is None:  # before anything is read or asked: no model call, no user made up
            print(await _unknown_user(store, settings, args.user), file=sys.stderr)
            return 1
        return await _import(store, scope, settings, args, llm, ask, out)
    except HistoryError as exc:
        print(f"mnemo: {exc.said(lang)}", file=sys.stderr)
        return 2
    finally:
        await store.close()


async def _unknown_user(store: MemoryStore, settings: Settings, user: str) -> str:
    """Why nothing is imported for a user who never wrote; the prefixed id when that one did ('1001' -> 'tg:1001')."""
    said = t(settings.language, "import_unknown_user", user=user, companion=settings.companion_id)
    for known in (f"tg:{user}", f"@{user}"):
        if await store.web.scope_of(settings.companion_id, known) is not None:
            return f"{said} {t(settings.language, 'import_did_you_mean', known=known)}"
    return said


async def _import(store: MemoryStore, scope: Scope, settings: Settings, args: argparse.Namespace,
                  llm: LLM | None, ask: Callable[[str], str], out: TextIO) -> int:
    """Recognise the export, show the preview, ask, and run; the exit code."""
    from bot.app import make_models
    from bot.llm.metering import MeteredLLM
    from scheduler.budget import TokenBudget

    path: Path = args.file
    if not path.exists():
        raise HistoryError("history_no_such_path", name=str(path))
    fmt, lang = args.format or detect_format(path), settings.language
    reading = Bar(0, out)
    try:  # the content is read once to recognise it (the same export as a zip, a folder or its JSON is one import)
        digest = content_hash(path, reading.read)
        reading.close()  # the second reading, below, draws its bar on a line of its own
        earlier = await _earlier(store, scope, path, digest)
        if earlier is not None and earlier.finished_at is not None:
            print(_already(earlier, path, lang), file=out)
            return 0
        options: dict[str, Any] = {"since": args.since.isoformat() if args.since else None, "person": args.person,
                                   "chat": args.chat, "format": fmt}
        if earlier is not None:
            digest, options = earlier.file_hash, _resumed(earlier, options, args.preview, path, lang, reading, out)

        def conversations(progress: Any = None) -> Any:
            since = date.fromisoformat(options["since"]) if options.get("since") else None
            return read_history(path, options["format"], person=options.get("person"), since=since,
                                chat=options.get("chat"), progress=progress)

        preview = tally(conversations(reading.read), settings.background_tokens_per_day)  # damage shows here
    finally:
        reading.close()
    print(render(preview, lang), file=out)
    if args.preview:
        return 0
    if not args.yes and ask(t(lang, "import_ask")).strip().lower() not in ("y", "yes", "j", "ja"):
        print(t(lang, "import_declined"), file=out)
        return 1
    budget = TokenBudget(store.usage, settings.background_tokens_per_day, settings.zone)
    model = llm or MeteredLLM(make_models(settings)[1], budget)

    async def budget_allows() -> bool:
        return await budget.allows(time.time())

    bar = Bar(preview.conversations, out)
    try:
        outcome = await run_import(store, model, scope, conversations(), digest=digest, source=fmt, name=path.name,
                                   options=options, zone=settings.zone, may_continue=budget_allows, on_progress=bar)
    except LLMError as exc:
        bar.close()
        print(t(lang, "import_model_failed", error=exc), file=out)
        return 1
    bar.close()
    return await _report(outcome, preview.conversations, budget, out, lang)


async def _earlier(store: MemoryStore, scope: Scope, path: Path, digest: str) -> HistoryImport | None:
    """The import of this content before: by the content's hash, or (imports from before it) by the file's bytes."""
    earlier = await store.imports.find(scope, digest)
    if earlier is None and path.is_file():
        earlier = await store.imports.find(scope, file_hash(path))
    return earlier


def _already(earlier: HistoryImport, path: Path, lang: str) -> str:
    """The sentence for an export imported before, under this name or another (the zip, then its JSON)."""
    assert earlier.finished_at is not None
    values = {"name": path.name, "earlier": earlier.name, "day": _day(earlier.finished_at, lang),
              "suggestions": counted(lang, earlier.candidates, "suggestions")}
    return t(lang, "import_already" if earlier.name == path.name else "import_already_as", **values)


def _resumed(earlier: HistoryImport, asked: dict[str, Any], preview: bool, path: Path, lang: str, bar: Bar,
             out: TextIO) -> dict[str, Any]:
    """The options a cut-off import goes on with (its first run's), said with what differs from those asked now."""
    lines = []
    if not preview:  # a preview continues nothing
        lines.append(t(lang, "import_continuing", name=path.name,
                       conversations=counted(lang, earlier.conversations_done, "conversations")))
    if changed := _changed(asked, earlier.options, lang):  # said, not silently dropped
        lines.append(t(lang, "import_options_kept", changed=changed))
    if lines:
        bar.close()
        print("\n".join(lines), file=out)
    return earlier.options


async def _report(outcome: ImportOutcome, total: int, budget: Any, out: TextIO, lang: str) -> int:
    """Say how the run ended, and what to do next."""
    done = outcome.imported
    suggestions = counted(lang, done.candidates, "suggestions")
    if outcome.state == "paused":
        status = await budget.status(time.time())
        print(t(lang, "import_paused", spent=_number(status.spent, lang), cap=_number(status.cap, lang),
                done=done.conversations_done, total=total,
                suggestions=suggestions), file=out)
        return PAUSED
    if outcome.state == "erased":
        print(t(lang, "import_erased"), file=out)
        return 1
    print(t(lang, "import_done", conversations=counted(lang, done.conversations_done, "conversations"),
            calls=counted(lang, done.calls, "calls"), suggestions=suggestions), file=out)
    if done.failed_batches:
        print(t(lang, "import_skipped", batches=counted(lang, done.failed_batches, "batches")), file=out)
    return 0


def _changed(asked: dict[str, Any], first: dict[str, Any], lang: str) -> str:
    """The reading options given now that differ from the first run's, as '--since 2024-01-01, not 2023-01-01'."""
    none = t(lang, "import_option_none")
    return "; ".join(t(lang, "import_option_changed", option=key, asked=asked.get(key) or none,
                       first=first.get(key) or none)
                     for key in ("since", "person", "chat") if asked.get(key) != first.get(key))


def _number(value: int, lang: str) -> str:
    """A whole number with the language's thousands separator."""
    return f"{value:,}".replace(",", "." if lang != "en" else ",")


def _day(at: datetime, lang: str) -> str:
    """A day as people of the language write it."""
    return f"{at:%Y-%m-%d}" if lang == "en" else f"{at:%d.%m.%Y}"
