"""The `mnemo` command."""
from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from typing import TYPE_CHECKING

from bot.errors import BotError
from memory import MemoryStoreError

if TYPE_CHECKING:
    from bot.settings import Settings
    from memory import Embedder, MemoryStore

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# Subcommands whose arguments live beside their work in `bot.admin`: name -> (module, help). A module is imported
# only when its command is the one given, so `mnemo run` (started again after every restart) does not import the
# history importer, the PostgreSQL copier or the web page's links.
ADMIN_COMMANDS = {
    "companion": ("bot.admin.companions", "create or list companions (characters with a relationship)"),
    "import-history": ("bot.admin.history_import", "import a ChatGPT, Claude or Telegram export into the review queue"),
    "suggestions": ("bot.admin.suggestions", "what the companion suggested about mnemo itself (only you see them)"),
    "web-link": ("bot.admin.web_link", "print a one-time login link to a user's memory page (10 minutes)"),
    "migrate-to-postgres": ("bot.admin.move_to_postgres",
                            "copy the SQLite memory into PostgreSQL (resumable, verified)"),
    "safety-check": ("bot.admin.safety_check", "read one message a line on stdin, print 1<TAB>text when it would get "
                                               "the crisis help line, else 0<TAB>text"),
}
_VALUED = ("--env-file", "--log-level")  # the options before the command that take a value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(prog="mnemo", description="A companion with a long-term memory.")
    parser.add_argument("--env-file", default=".env", help="settings file (default: .env)")
    parser.add_argument("--log-level", type=str.upper, choices=LEVELS,
                        help="DEBUG, INFO, WARNING, ERROR (default: MNEMO_LOG_LEVEL from the environment or the "
                             "env file, else WARNING)")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("run", help="run the configured channels (default)")
    sub.add_parser("console", help="chat in the terminal")
    doctor = sub.add_parser("doctor", help="check configuration, database, model, messengers and clock")
    doctor.add_argument("--no-model", action="store_true", help="skip the call to the chat model")
    backup = sub.add_parser("backup", help="copy the database to a timestamped file (online)")
    backup.add_argument("target", nargs="?", help="file to write (default: DATA_DIR/backups/…)")
    migrate = sub.add_parser("migrate", help="show the schema migrations the next start applies")
    migrate.add_argument("--dry-run", action="store_true", default=True)
    sub.add_parser("stats", help="counts per kind and per user")
    sub.add_parser("reindex", help="re-embed every memory with the configured model (resumable)")
    export = sub.add_parser("export", help="write one user's memory as JSON")
    export.add_argument("--user", required=True)
    export.add_argument("--out", help="file (default: stdout)")
    load = sub.add_parser("import", help="load a user's memory exported by `mnemo export`")
    load.add_argument("file")
    load.add_argument("--user", help="import under another user id")
    undo = sub.add_parser("undo", help="revert the latest memory change of a user")
    undo.add_argument("--user", required=True, help="user id as stored, e.g. tg:123456 or @anna:example.org")
    _analyse_parser(sub)
    _pair_parser(sub)
    given = chosen_command(sys.argv[1:] if argv is None else argv)
    for name, (module, help_) in ADMIN_COMMANDS.items():
        p = sub.add_parser(name, help=help_)
        if name == given:
            importlib.import_module(module).add_arguments(p)
    return parser.parse_args(argv)


def chosen_command(argv: list[str]) -> str | None:
    """The subcommand named on the command line (the first word that is neither an option nor an option's value)."""
    words = iter(argv)
    for word in words:
        if word in _VALUED:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _pair_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `pair` subcommand: list, approve and revoke pairing requests of unknown messenger users."""
    p = sub.add_parser("pair", help="list, approve or revoke messenger users who asked to talk (pairing codes)")
    actions = p.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="open pairing requests and approved users")
    approve = actions.add_parser("approve", help="approve a pairing code; the user joins the allowlist")
    approve.add_argument("code", help="the 8-character code the user was given")
    revoke = actions.add_parser("revoke", help="take an approved user off the allowlist")
    revoke.add_argument("user", help="user id as stored, e.g. tg:123456 or @anna:example.org")


async def _safety_check(settings: Settings, args: argparse.Namespace) -> int:
    from bot.admin.safety_check import run_command

    return await run_command(settings, args)


async def _to_postgres(settings: Settings, args: argparse.Namespace) -> int:
    from bot.admin.move_to_postgres import run_command

    return await run_command(settings, args)


async def _import_history(settings: Settings, args: argparse.Namespace) -> int:
    from bot.admin.history_import import import_history

    return await import_history(settings, args)


def _analyse_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `analyse` subcommand: a second model's outside view of the transcripts."""
    from datetime import date
    from pathlib import Path

    p = sub.add_parser("analyse", help="let a second model analyse the transcripts (outside view)")
    p.add_argument("--user", help="user id as stored (default: the only user)")
    p.add_argument("--from", dest="start", type=date.fromisoformat, help="first day, YYYY-MM-DD")
    p.add_argument("--to", dest="end", type=date.fromisoformat, help="last day, YYYY-MM-DD")
    p.add_argument("--sample", type=int, help="an even sample of N conversations (first, last, evenly spaced)")
    p.add_argument("--keywords", help="comma-separated; keep only conversations mentioning one of them")
    p.add_argument("--gap-hours", type=float, help="a longer pause starts a new conversation (default: 6)")
    p.add_argument("--mode", choices=("blind", "blueprint"), default="blind")
    p.add_argument("--provider", choices=("openai", "anthropic"), help="analyst (default: the background model)")
    p.add_argument("--model")
    p.add_argument("--base-url")
    p.add_argument("--api-key")
    p.add_argument("--questions", type=Path, help="file with one question a line (default: six built-in ones)")
    p.add_argument("--preview", action="store_true", help="show the size of the run and stop")
    p.add_argument("--yes", action="store_true", help="start without asking")
    p.add_argument("--list", action="store_true", help="list saved reports")
    p.add_argument("--delete", metavar="NAME", help="delete a saved report")


async def undo(settings: Settings, user_id: str) -> int:
    """Revert the newest processing of one user and print what changed."""
    from bot.embedding import make_embedders
    from memory import MemoryStore, ReminderFired, is_final, undo_latest

    embedder, second = make_embedders(settings)
    store = await MemoryStore.open(settings.data_dir, embedder, database_url=settings.database_url, second=second,
                                   calibrate=True)
    try:
        scope = await store.scope(settings.companion_id, user_id)
        entries = await undo_latest(store, scope)
    except ReminderFired as fired:
        print(f"not undone: the reminder has fired since ({', '.join(fired.texts)})")
        return 1
    finally:
        await store.close()
    if not entries:
        print("nothing to undo")
        return 1
    restored = [e for e in entries if not is_final(e)]
    if not restored:
        print(f"forgotten for good, nothing to restore ({entries[0].processing_id})")
        return 1
    for e in restored:
        print(f"undone: {e.action} {e.item_type} #{e.item_id} ({e.processing_id})")
    return 0


async def _doctor(settings: Settings, args: argparse.Namespace) -> int:
    from bot.admin import ops

    checks = await ops.doctor(settings, check_model=not args.no_model)
    print(ops.format_checks(checks))
    return 0 if all(c.ok for c in checks) else 1


async def _backup(settings: Settings, args: argparse.Namespace) -> int:
    from pathlib import Path

    from bot.admin import ops

    print(await ops.make_backup(settings, Path(args.target) if args.target else None))
    return 0


async def _migrate(settings: Settings, args: argparse.Namespace) -> int:
    from bot.admin import ops

    todo = await ops.migration_plan(settings)
    print("\n".join(todo) if todo else "schema up to date")
    return 0


async def _stats(settings: Settings, args: argparse.Namespace) -> int:
    from bot.admin import ops

    for row in await ops.stats(settings):
        print("  ".join(f"{k}={v}" for k, v in row.items()))
    print(await ops.budget_line(settings))
    print(await ops.failures_line(settings))
    return 0


async def _export(settings: Settings, args: argparse.Namespace) -> int:
    import json

    from bot.admin import ops

    text = json.dumps(await ops.export_user(settings, args.user), ensure_ascii=False, indent=2)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        print(text)
    return 0


async def _import(settings: Settings, args: argparse.Namespace) -> int:
    import json

    from bot.admin import ops

    with open(args.file, encoding="utf-8") as f:
        data = json.load(f)
    counts = await ops.import_user(settings, data, args.user)
    print("imported: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


async def _analyse(settings: Settings, args: argparse.Namespace) -> int:
    from bot.admin import analysis

    return await analysis.run_command(settings, args)


async def _companion(settings: Settings, args: argparse.Namespace) -> int:
    from bot.admin import companions as persona

    return await persona.run_command(settings, args)


async def _pair(settings: Settings, args: argparse.Namespace) -> int:
    import time

    from bot.channels.access import run_pair
    from memory import AccessStore, migrate, open_database

    db = await open_database(settings.data_dir, settings.database_url)
    try:
        await migrate(db, backup_dir=settings.data_dir / "backups")
        code, text = await run_pair(AccessStore(db), args.action, getattr(args, "code", None) or
                                    getattr(args, "user", None), settings.language, time.time())
    finally:
        await db.close()
    print(text, file=sys.stdout if code == 0 else sys.stderr)
    return code


async def _suggestions(settings: Settings, args: argparse.Namespace) -> int:
    from bot.admin import suggestions

    return await suggestions.run_command(settings, args)


async def _web_link(settings: Settings, args: argparse.Namespace) -> int:
    from bot.admin import web_link

    return await web_link.run_command(settings, args)


async def _reindex(settings: Settings, args: argparse.Namespace) -> int:
    from bot.embedding import make_embedders
    from memory import MemoryStore, open_database, reindex

    def line(done: int, total: int) -> None:
        print(f"reindex: {done}/{total} ({100 * done // max(total, 1)}%)", file=sys.stderr, flush=True)

    embedder, second = await asyncio.to_thread(make_embedders, settings)
    db = await open_database(settings.data_dir, settings.database_url)
    try:
        result = await reindex(db, embedder, progress=line)
    finally:
        await db.close()
    if result.switched:
        print(f"reindexed {result.total} items; the memory now uses {result.recorded_model}")
    elif result.done == result.total:
        print(f"nothing to do: the memory already uses {result.recorded_model}")
    else:
        print(f"interrupted at {result.done}/{result.total}; run mnemo reindex again to continue")
        return 1
    store = await MemoryStore.open(settings.data_dir, embedder, database_url=settings.database_url, second=second)
    try:  # messages logged while the embedding server was down
        if caught_up := await store.messages.index_unindexed():
            print(f"indexed {caught_up} messages logged while the embedder was unavailable")
        if in_context := (await store.messages.catch_up_context())[0]:
            print(f"re-embedded {in_context} messages stored before messages were read in context")
        return await _fill_second(store, second)
    finally:
        await store.close()


async def _fill_second(store: MemoryStore, second: Embedder | None) -> int:
    """Give the documents without a vector of the second signal (USE) one, with progress; resumable."""
    from memory import fill_use_vectors

    if second is None:
        return 0

    def line(done: int, total: int) -> None:
        print(f"second signal: {done}/{total} ({100 * done // max(total, 1)}%)", file=sys.stderr, flush=True)

    done, total = await fill_use_vectors(store.db, second, progress=line)
    print(f"second signal (USE): {done}/{total} documents have their vector")
    return 0


OPS = {"doctor": _doctor, "backup": _backup, "migrate": _migrate, "stats": _stats, "export": _export,
       "import": _import, "analyse": _analyse, "companion": _companion,
       "pair": _pair, "reindex": _reindex, "import-history": _import_history, "suggestions": _suggestions,
       "web-link": _web_link, "migrate-to-postgres": _to_postgres, "safety-check": _safety_check}


def main(argv: list[str] | None = None) -> int:
    """Entry point: run mnemo; a configuration problem is one sentence and exit code 2."""
    args = parse_args(argv)
    from bot import logs
    from bot.settings import load_settings

    logs.install(args.log_level or "WARNING")  # until the settings are read
    try:
        settings = load_settings(args.env_file)
        logs.install(args.log_level or settings.log_level, secrets=settings.secrets())
        if args.command == "undo":
            return asyncio.run(undo(settings, args.user))
        if args.command in OPS:
            return asyncio.run(OPS[args.command](settings, args))
        if args.command == "console":
            settings = settings.model_copy(update={"channels": ["console"]})
        from bot import app  # the messengers and model SDKs load only when mnemo runs, not for `mnemo pair`

        asyncio.run(app.main(settings))
    except (BotError, MemoryStoreError) as exc:
        print(f"mnemo: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
