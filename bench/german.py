"""German memory retrieval benchmark: index the notes through the real store and ask the questions.

Usage: bench/german.py [PATH] [--json] [--as-used] [--backend sqlite|postgres|both]

--as-used searches every note as if it had been used (faded notes included) and each question with an "asked"
day on that day: the way mnemo's own set (bench/data/german_memories.json) is meant to be read, since its notes
span 14 months and the set measures finding, not forgetting.

Prints any@1, any@5 and MRR for the hybrid search and for each retriever alone; with --json the
last line is the hybrid's figures as one JSON object (one line per backend). --backend postgres (or both) runs the
same on a PostgreSQL the bench starts itself (`bench/backends.py`).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.backends import PostgresServer, database_url, parse_backends, places  # noqa: E402
from bench.metrics import any_at, mean, parse_weights, reciprocal_rank, retrievers  # noqa: E402
from memory.models import Scope  # noqa: E402
from memory.records.notes import NewNote  # noqa: E402
from memory.search.embedder import Embedder, make_embedder  # noqa: E402
from memory.search.ranking import Weights  # noqa: E402
from memory.store import MemoryStore  # noqa: E402

DEFAULT_PATH = ROOT.parent / "shared" / "data" / "german" / "memories_de_dev.json"


def load(path: Path) -> dict[str, Any]:
    """Read the set: `notes` (id, date, text) and `questions` (q, gold)."""
    return json.loads(path.read_text(encoding="utf-8"))


def day(value: str) -> float:
    """Unix time of an ISO date at noon UTC."""
    return datetime.fromisoformat(value).replace(hour=12, tzinfo=UTC).timestamp()


def now_of(data: dict[str, Any]) -> float:
    """The moment of asking: the day after the newest note."""
    return max(day(n["date"]) for n in data["notes"]) + 86400.0


async def index(store: MemoryStore, data: dict[str, Any]) -> tuple[Scope, dict[int, str]]:
    """Store every note as a fact of one user; return the scope and the set's id of each stored note."""
    scope = await store.scope("mnemo", "anna")
    notes = await store.notes.add_many(scope, [NewNote(n["text"], kind="fact", created_at=day(n["date"]))
                                               for n in data["notes"]])
    return scope, {stored.id: n["id"] for stored, n in zip(notes, data["notes"])}


async def evaluate(store: MemoryStore, scope: Scope, ids: dict[int, str], data: dict[str, Any],
                   as_used: bool = False) -> dict[str, float]:
    """any@1, any@5 and MRR over all questions."""
    rows = []
    now = now_of(data)
    for q in data["questions"]:
        moment = day(q["asked"]) if as_used and q.get("asked") else now
        hits = await store.search(scope, q["q"], sources=("note",), k=len(data["notes"]), now=moment,
                                  include_faded=as_used)
        ranked = [ids[h.item_id] for h in hits]
        gold = set(q["gold"])
        rows.append((any_at(ranked, gold, 1), any_at(ranked, gold, 5), reciprocal_rank(ranked, gold, len(ranked))))
    return {name: round(mean([r[i] for r in rows]), 3) for i, name in enumerate(("any@1", "any@5", "mrr"))}


async def measure(path: Path, embedder: Embedder, weights: Weights, data: dict[str, Any],
                  as_used: bool = False, server: PostgresServer | None = None) -> dict[str, float]:
    """Index the set into a fresh store at path (or a fresh database on the server) and evaluate it with the given
    weights."""
    store = await MemoryStore.open(path, embedder, weights=weights, database_url=database_url(server, path.stem))
    try:
        scope, ids = await index(store, data)
        return await evaluate(store, scope, ids, data, as_used)
    finally:
        await store.close()


async def main(argv: list[str] | None = None) -> None:
    """Print every retriever's figures (with --json, the hybrid's as the last line)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--json", action="store_true", help="print the hybrid's figures as one JSON object last")
    parser.add_argument("--weights", default="", help='overrides of the default Weights, e.g. "context=0,dated=0"')
    parser.add_argument("--as-used", action="store_true", help="faded notes included, questions on their asked day")
    parser.add_argument("--backend", default="sqlite", help="sqlite, postgres, sqlite,postgres or both")
    args = parser.parse_args(argv)
    backends = parse_backends(args.backend)
    base = parse_weights(args.weights)
    path = args.path if args.path.is_absolute() else ROOT / args.path
    data = load(path.resolve())
    embedder = make_embedder()
    print(f"German set {path.name}: {len(data['notes'])} notes, {len(data['questions'])} questions, "
          f"model {embedder.name}")
    print(f"weights: {base}")
    print(f"{'backend':<8} {'retriever':<9} {'any@1':>6} {'any@5':>6} {'MRR':>6} {'seconds':>8}")
    hybrids = {}
    with tempfile.TemporaryDirectory(prefix="mnemo-german-") as tmp, places(backends) as servers:
        for backend, server in servers.items():
            for name, weights in retrievers(base).items():
                start = time.perf_counter()
                path = Path(tmp) / f"{backend}_{name}.sqlite3"
                r = await measure(path, embedder, weights, data, args.as_used, server)
                hybrids.setdefault(backend, r)
                print(f"{backend:<8} {name:<9} {r['any@1']:>6.3f} {r['any@5']:>6.3f} {r['mrr']:>6.3f}"
                      f" {time.perf_counter() - start:>8.1f}")
    if args.json:
        for backend, hybrid in hybrids.items():
            print(json.dumps({"backend": backend, **hybrid}))


if __name__ == "__main__":
    asyncio.run(main())
