"""`mnemo migrate-to-postgres`: copy the SQLite memory to PostgreSQL (`memory.storage.postgres_copy`), report, say how
to switch."""
from __future__ import annotations

import argparse
import sys
from typing import TextIO

from bot.settings import Settings
from memory import DB_FILENAME, CopyReport, Database, PostgresDatabase, copy_to_postgres, is_postgres, shown_url


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of `mnemo migrate-to-postgres` (its name and help are `bot.cli`'s)."""
    p.add_argument("--to", metavar="URL", help="postgresql://user:password@host/database "
                                               "(default: MNEMO_DATABASE_URL)")
    p.add_argument("--batch", type=int, default=1000, help="rows per transaction (default: 1000)")


async def run_command(settings: Settings, args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Copy, print the report and the way to switch; return the exit code."""
    out = out or sys.stdout
    url = args.to or settings.database_url
    source_path = settings.data_dir / DB_FILENAME
    if not url or not is_postgres(url):
        print("name the PostgreSQL database: --to postgresql://user:password@host/database "
              "(or set MNEMO_DATABASE_URL)", file=sys.stderr)
        return 2
    if not source_path.exists():
        print(f"no SQLite memory at {source_path} (MNEMO_DATA_DIR): nothing to copy", file=sys.stderr)
        return 2
    if args.batch < 1:
        print("--batch must be at least 1", file=sys.stderr)
        return 2
    source = await Database.open(source_path)
    try:
        target = await PostgresDatabase.connect(url, settings.data_dir)
        try:
            report = await copy_to_postgres(source, target, batch=args.batch)
        finally:
            await target.close()
    finally:
        await source.close()
    print(report_text(report, str(source_path), url), file=out)
    return 0 if report.verified else 1


def report_text(report: CopyReport, source: str, url: str) -> str:
    """What was copied, the counts on both sides, the integrity check, and the next steps."""
    where = shown_url(url)
    if report.already_done:
        head = f"{source} was copied to {where} earlier; checked again:"
    else:
        head = (f"copied {sum(report.copied.values())} rows from {source} to {where}"
                f"{' (continued where the last run stopped)' if report.resumed else ''}:")
    rows = [f"  {c.table:<22} {c.source:>8} {c.target:>8}{'' if c.equal else '  DIFFERENT'}" for c in report.counts]
    lines = [head, f"  {'table':<22} {'sqlite':>8} {'postgres':>8}", *rows]
    if report.problems:
        lines += [f"index integrity: {len(report.problems)} problems, e.g. " + "; ".join(report.problems[:3])]
    else:
        lines += ["index integrity: every item has its document and vector"]
    if not report.verified:
        differ = [c.table for c in report.counts if not c.equal]
        lines += [f"NOT verified{': counts differ in ' + ', '.join(differ) if differ else ''}. Was mnemo still "
                  "running on the SQLite file? Stop it and copy into a new, empty database."]
        return "\n".join(lines)
    lines += [
        "verified. To switch:",
        "  1. keep mnemo stopped (what it writes to the SQLite file now is not copied)",
        f"  2. set MNEMO_DATABASE_URL={where} (with its password) in the environment or .env",
        "  3. start mnemo again; `mnemo doctor` checks the connection",
        f"  keep {source} as a backup; without MNEMO_DATABASE_URL mnemo uses it again",
    ]
    return "\n".join(lines)
