"""Online backups of the SQLite file: a consistent copy while mnemo keeps running."""
from __future__ import annotations

import time
from pathlib import Path

from memory.db import Database


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
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        raise FileExistsError(f"{target} exists already")
    async with db.reading() as tx:
        await tx.execute("VACUUM INTO ?", (str(target),))
    return target
