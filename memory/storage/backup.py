"""Online backups of the SQLite file: a consistent copy while mnemo keeps running.

A backup is readable only by its owner (0600, in a 0700 folder). Backups in the data folder's backups/ lose
what a user erases later, as the database does (memory.account.erasure); copies elsewhere are the operator's.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from memory.errors import MemoryStoreError
from memory.storage.db import PRIVATE_DIR, PRIVATE_FILE, Database


def backup_name(directory: Path, reason: str = "backup") -> Path:
    """A timestamped file name in directory, e.g. mnemo-backup-20261129-201500.sqlite3."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime())
    candidate = directory / f"mnemo-{reason}-{stamp}.sqlite3"
    n = 1
    while candidate.exists():
        n += 1
        candidate = directory / f"mnemo-{reason}-{stamp}-{n}.sqlite3"
    return candidate


async def backup(db: Database, target: Path) -> Path:
    """Write a consistent copy of the whole database (vectors and full text included) to target."""
    if db.dialect != "sqlite":
        raise MemoryStoreError("mnemo backup copies an SQLite file; a PostgreSQL database is backed up by its "
                               "server (pg_dump)")
    target.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    # An empty file made first gives the copy its mode: SQLite would create it readable by everyone.
    os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    try:
        async with db.reading() as tx:
            await tx.execute("VACUUM INTO ?", (str(target),))
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return target


def prune(directory: Path, reason: str, keep: int) -> list[Path]:
    """Delete all but the newest `keep` backups made for `reason` in directory (by their timestamped names);
    the ones deleted. Backups made by hand (`mnemo backup`) are never touched."""
    made = sorted(directory.glob(f"mnemo-{reason}-*.sqlite3"), key=lambda p: (p.stat().st_mtime, p.name))
    old = made[:-keep] if keep > 0 else made
    for path in old:
        path.unlink()
    return old

