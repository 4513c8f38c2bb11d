"""Page search benchmark: what the memory page's search and /memories WORDS find, by words and by meaning.

Usage: bench/page_search.py [PATH] [--held-out] [--sweep] [--json]

The set (bench/data/page_search_set.json) has one person's notes in German and English, some named by a query's
words ("Hund"), some only by its meaning ("Dackel", "Boulderhalle", "Wagen", "Job"), and page-search queries (a
few of two words, some that no note is about), each with the notes that must be found ("relevant"), those that may
be ("maybe") and a split. Every note is stored in a real store with the bundled embedder and USE beside it, as the
product opens it; each query goes through the store as the page calls it: before, `MemoryStore.keyword_search`
(words only, what the page and /memories WORDS found until issue 54); now, `MemoryStore.find_notes` (the words'
notes first, then those about the query by meaning, `memory/search/meaning.py`). Precision: found notes that are
relevant or maybe; recall: relevant notes found; per language, and the notes found for queries nothing is about.

Only the tuning queries are read unless --held-out is given (read once, at the end). --sweep: the tuning figures
for each second-signal floor of 0.10, 0.11, … 0.30 (the main model's floor at its calibration), from which
`meaning.SECOND` was chosen: the highest recall at a precision of at least 0.95 among the floors that find the
issue's "Dackel" for "Hund". With --json the last line is the figures as JSON.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.keywords import Tally, language  # noqa: E402
from memory.models import Scope  # noqa: E402
from memory.records.notes import NewNote  # noqa: E402
from memory.search import meaning  # noqa: E402
from memory.search.embedder import Embedder, calibration, make_embedder  # noqa: E402
from memory.search.use_signal import make_use_embedder  # noqa: E402
from memory.store import MemoryStore  # noqa: E402

DEFAULT_PATH = ROOT / "bench" / "data" / "page_search_set.json"
FOUND = 100  # what the page lists at most (bot/web_page/pages/notes.py)
SWEEP = [round(0.10 + 0.01 * i, 2) for i in range(21)]


async def tallied(store: MemoryStore, scope: Scope, ids: dict[int, str], queries: list[dict[str, Any]],
                  strict: float | None, floor: meaning.Floor | None) -> dict[str, Any]:
    """Precision and recall over the queries: the words alone (floor None) or words and meaning."""
    rows = {"all": Tally(), "de": Tally(), "en": Tally()}
    nothing = 0
    for q in queries:
        if floor is None:
            hits = await store.keyword_search(scope, q["query"], FOUND, strict=strict)
        else:
            hits = await store.find_notes(scope, q["query"], FOUND, strict=strict, floor=floor)
        offered = [ids[h.item_id] for h in hits]
        rows["all"].add(q, offered)
        rows[language(q)].add(q, offered)
        nothing += 0 if q["relevant"] or q["maybe"] else len(offered)
    return {**{key: tally.figures() for key, tally in rows.items()}, "found_for_nothing": nothing}


async def run(path: Path, embedder: Embedder, second: Embedder | None, *, held_out: bool,
              sweep: bool) -> dict[str, Any]:
    """The tuning figures (and, with held_out, the held-out ones) before and now; with sweep, now per floor."""
    data = json.loads(path.read_text(encoding="utf-8"))
    notes = {n["id"]: n["text"] for n in data["notes"]}
    splits = ["tune"] + (["held_out"] if held_out else [])
    strict = calibration(embedder.name).keyword
    floor = meaning.floor_for(calibration(embedder.name))
    with tempfile.TemporaryDirectory() as folder:
        store = await MemoryStore.open(Path(folder) / "mnemo.sqlite3", embedder, second=second)
        try:
            scope = await store.scope("mnemo", "anna")
            stored = await store.notes.add_many(scope, [NewNote(text, kind="fact") for text in notes.values()])
            ids = {s.id: note_id for s, note_id in zip(stored, notes)}
            result: dict[str, Any] = {"embedder": embedder.name + (f" + {second.name}" if second else ""),
                                      "notes": len(notes), "floor": {"cosine": floor.cosine, "second": floor.second}}
            for split in splits:
                queries = [q for q in data["queries"] if q["split"] == split]
                result[split] = {"queries": len(queries),
                                 "before": await tallied(store, scope, ids, queries, strict, None),
                                 "now": await tallied(store, scope, ids, queries, strict, floor)}
            if sweep:
                tune = [q for q in data["queries"] if q["split"] == "tune"]
                result["sweep"] = {str(s): (await tallied(store, scope, ids, tune, strict, replace(floor, second=s)))
                                   ["all"] for s in SWEEP}
        finally:
            await store.close()
    return result


def show(result: dict[str, Any]) -> None:
    """Print the figures as a table per split."""
    print(f"embedder {result['embedder']}; {result['notes']} notes; floors {result['floor']}")
    for split in ("tune", "held_out"):
        if split not in result:
            continue
        print(f"\n{split} ({result[split]['queries']} queries)")
        print(f"{'':12} {'precision':>9} {'recall':>7} {'offered':>8} {'unrelated':>9} {'relevant':>8} {'found':>6}"
              f" {'for nothing':>11}")
        for when in ("before", "now"):
            for row in ("all", "de", "en"):
                f = result[split][when][row]
                extra = f" {result[split][when]['found_for_nothing']:11d}" if row == "all" else ""
                print(f"{when + ' ' + row:12} {f['precision']:9.3f} {f['recall']:7.3f} {f['offered']:8d}"
                      f" {f['unrelated_offered']:9d} {f['relevant']:8d} {f['relevant_found']:6d}{extra}")
    for floor, f in result.get("sweep", {}).items():
        print(f"second >= {floor}: precision {f['precision']:.3f} recall {f['recall']:.3f} offered {f['offered']}"
              f" unrelated {f['unrelated_offered']}")


def main() -> None:
    """Run the benchmark with the bundled embedder and USE beside it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--held-out", action="store_true", help="also the held-out queries (read them once)")
    parser.add_argument("--sweep", action="store_true", help="the tuning figures per second-signal floor")
    parser.add_argument("--no-second-signal", action="store_true", help="without USE (as MNEMO_SECOND_SIGNAL=off)")
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    second = None if args.no_second_signal else make_use_embedder()
    result = asyncio.run(run(args.path, make_embedder(), second, held_out=args.held_out, sweep=args.sweep))
    show(result)
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
