"""What erasing costs: /forget of one note and /deleteme of one user in a database of realistic size.

Usage: .venv/bin/python bench/erasure.py [--users 5] [--messages 8000] [--notes 2000] [--forgets 20] [--backups 2]

Each user gets `messages` messages and `notes` notes through the real store (rows, audit, `docs`, both FTS5
indexes, the vec0 vector, the embedding cache), embedded by the deterministic test embedder at 384
dimensions (the size of the bundled model's vectors; where a vector comes from does not change what
deleting it costs). `backups` copies are made in the backups folder, as `mnemo backup` makes them. Then:

- /forget: `Notes.erase` of `forgets` random notes of the first user (the transaction, then `settle`:
  checkpoint and every backup), beside `Notes.delete`, the undoable delete a correction uses;
- /deleteme: `MemoryStore.delete_scope` of the second user, with its backups;
- once per old database: m022's full-text rebuild and the VACUUM at the first start.
"""
from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory.account import erasure  # noqa: E402
from memory.ledgers.journal import NewMessage  # noqa: E402
from memory.records.notes import NewNote  # noqa: E402
from memory.storage.backup import backup, backup_name  # noqa: E402
from memory.store import MemoryStore  # noqa: E402
from tests.fakes.embedder import FakeEmbedder  # noqa: E402

WORDS = ("Garten Schwester Urlaub Arbeit Kino Konzert Zahnarzt Geburtstag Fahrrad Kuchen Regen Bahnhof Katze Buch "
         "Hamburg Leipzig Chor Cello Laufen Suppe Termin Nachbarin Projekt Wochenende Abend Freundin Sorgen").split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) + str(rng.randint(0, 2000)) for _ in range(n)) + "."


async def fill(store: MemoryStore, users: int, messages: int, notes: int) -> None:
    rng, now = random.Random(1), time.time()
    for u in range(users):
        scope = await store.scope("mnemo", f"user{u}")
        for start in range(0, messages, 1000):
            await store.messages.add_many(scope, [NewMessage(rng.choice(("user", "assistant")), sentence(rng, 18),
                                                             now - (messages - start - i) * 60.0)
                                                  for i in range(min(1000, messages - start))])
        for start in range(0, notes, 1000):
            await store.notes.add_many(scope, [NewNote(sentence(rng, 9)) for _ in range(min(1000, notes - start))])


def ms(values: list[float]) -> str:
    values = sorted(values)
    return f"median {statistics.median(values) * 1000:.1f} ms, max {values[-1] * 1000:.1f} ms"


async def timed_forgets(store: MemoryStore, ids: list[int], erase: bool) -> tuple[list[float], list[float]]:
    """Per note: the whole call, and the part after the transaction (`settle`)."""
    scope = await store.scope("mnemo", "user0")
    total, settle = [], []
    for note_id in ids:
        started = time.perf_counter()
        if erase:
            async with store.db.transaction() as tx:
                await erasure.erase_note(tx, scope.id, note_id)
                await erasure.record(tx, scope.id, [("note", note_id)], "/forget")
            middle = time.perf_counter()
            await erasure.settle(store.db)
        else:
            await store.notes.delete(scope, note_id)
            middle = time.perf_counter()
        total.append(time.perf_counter() - started)
        settle.append(time.perf_counter() - middle)
    return total, settle


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=5)
    parser.add_argument("--messages", type=int, default=8000)
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--forgets", type=int, default=20)
    parser.add_argument("--backups", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        store = await MemoryStore.open(data, FakeEmbedder(dim=384))
        started = time.perf_counter()
        await fill(store, args.users, args.messages, args.notes)
        for _ in range(args.backups):
            await backup(store.db, backup_name(store.db.backup_dir))
        size = (data / "mnemo.sqlite3").stat().st_size
        print(f"{args.users} users x ({args.messages} messages + {args.notes} notes): {size / 1e6:.0f} MB,"
              f" {args.backups} backups, filled in {time.perf_counter() - started:.0f} s")
        scope = await store.scope("mnemo", "user0")
        ids = [n.id for n in await store.notes.list(scope, limit=args.notes)]
        random.Random(2).shuffle(ids)
        total, settle = await timed_forgets(store, ids[:args.forgets], erase=True)
        print(f"/forget (Notes.erase): {ms(total)}; of it checkpoint and {args.backups} backups: {ms(settle)}")
        total, _ = await timed_forgets(store, ids[args.forgets:2 * args.forgets], erase=False)
        print(f"Notes.delete (undoable, corrections): {ms(total)}")

        other = await store.scope("mnemo", "user1")
        started = time.perf_counter()
        removed = await store.delete_scope(other)
        print(f"/deleteme (delete_scope of {removed} rows with {args.backups} backups):"
              f" {time.perf_counter() - started:.1f} s")

        started = time.perf_counter()
        async with store.db.transaction() as tx:
            for table in ("fts_words", "fts_trigram"):
                await tx.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
        rebuilt = time.perf_counter() - started
        started = time.perf_counter()
        await store.db.vacuum()
        print(f"once per old database: full-text rebuild {rebuilt:.1f} s, VACUUM {time.perf_counter() - started:.1f} s"
              f" ({(data / 'mnemo.sqlite3').stat().st_size / 1e6:.0f} MB after)")
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
