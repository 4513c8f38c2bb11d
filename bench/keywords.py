"""Keyword search benchmark: which notes /memories WORD and /forget WORD offer, on mnemo's own labelled set.

Usage: bench/keywords.py [PATH] [--json]

The set (bench/data/keyword_set.json) has one person's notes in German and English and one-word queries (a few of
two words), each with the notes that must be offered ("relevant"), related ones that may be ("maybe") and a split.
Every note is stored in a real store with the bundled embedder; each query goes through `MemoryStore.
keyword_search` as the commands call it. The strict one-word similarity is chosen on the "tune" queries only: the
lowest threshold (0.800, 0.805, … 0.950) at which the similarity offers no unrelated note of theirs. The "held_out"
queries are then reported with it: precision (offered notes that are relevant or maybe), recall (relevant notes
offered), per language; beside them the words alone (no similarity), the words with the parts of the query's own
compounds ("Steuern" for "Steuererklärung", which the commands leave out) and what the search offered before (a
page of the hybrid search above the chat's relevance floor, or any note holding a query word or word part).
With --strict the similarity is that value instead (the product's: `--strict calibrated`, the bundled model's
calibration). bench/data/near_miss_set.json (issue 52) holds near misses of one field ("Bad" and "Schläft
schlecht.", "Motorrad" and "Fährt Fahrrad."): run it with `--strict calibrated` to see what /forget offers there.
With --json the last line is the held-out figures as JSON.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory.models import Scope  # noqa: E402
from memory.records.notes import NewNote  # noqa: E402
from memory.search.embedder import Embedder, calibration, make_embedder  # noqa: E402
from memory.search.keywords import Candidate, matching  # noqa: E402
from memory.search.use_signal import make_use_embedder  # noqa: E402
from memory.store import KEYWORD_CANDIDATES, MemoryStore  # noqa: E402

DEFAULT_PATH = ROOT / "bench" / "data" / "keyword_set.json"
NEAR_MISS_PATH = ROOT / "bench" / "data" / "near_miss_set.json"  # issue 52: "Bad" and "Schläft schlecht."
GRID = [round(0.80 + 0.005 * i, 3) for i in range(31)]
OLD_K = 10  # what /memories WORD listed before: a page


@dataclass
class Tally:
    """Offered notes and how many of them were right, and the relevant notes found, over some queries."""

    offered: int = 0
    wrong: int = 0
    relevant: int = 0
    found: int = 0

    def add(self, query: dict[str, Any], offered: list[str]) -> None:
        """Count one query's offered notes against its labels."""
        allowed = set(query["relevant"]) | set(query["maybe"])
        self.offered += len(offered)
        self.wrong += sum(1 for n in offered if n not in allowed)
        self.relevant += len(query["relevant"])
        self.found += sum(1 for n in query["relevant"] if n in offered)

    def figures(self) -> dict[str, float | int]:
        """Precision, recall and the counts behind them."""
        return {"precision": round((self.offered - self.wrong) / self.offered, 3) if self.offered else 1.0,
                "recall": round(self.found / self.relevant, 3) if self.relevant else 1.0,
                "offered": self.offered, "unrelated_offered": self.wrong, "relevant": self.relevant,
                "relevant_found": self.found}


def language(query: dict[str, Any]) -> str:
    """A query's language: that of its relevant notes ('de' when it has none and looks German)."""
    ids = query["relevant"] + query["maybe"]
    return ids[0][:2] if ids else ("de" if query["query"][:1].isupper() else "en")


async def offers(store: MemoryStore, scope: Scope, ids: dict[int, str], query: str, strict: float | None,
                 parts_of_query: bool = False) -> list[str]:
    """The set's ids of the notes the keyword search offers for a query."""
    hits = await store.keyword_search(scope, query, 100, strict=strict, parts_of_query=parts_of_query)
    return [ids[h.item_id] for h in hits]


async def gathered(store: MemoryStore, scope: Scope, ids: dict[int, str], query: str) -> list[tuple[str, Candidate]]:
    """The candidates `MemoryStore.keyword_search` chooses from, with the set's ids (searched once per query)."""
    hits = await store.search(scope, query, ("note",), k=KEYWORD_CANDIDATES, include_faded=True)
    return [(ids[h.item_id], Candidate(h.text, h.components.cosine)) for h in hits]


def choose(tune: list[dict[str, Any]], words: dict[str, list[str]],
           candidates: dict[str, list[tuple[str, Candidate]]]) -> float | None:
    """The lowest threshold of the grid at which the similarity offers no unrelated note for a tuning query."""
    for strict in GRID:
        wrong = 0
        for q in tune:
            allowed = set(q["relevant"]) | set(q["maybe"]) | set(words[q["query"]])
            found = candidates[q["query"]]
            wrong += sum(found[i][0] not in allowed for i in matching(q["query"], [c for _, c in found], strict))
        if wrong == 0:
            return strict
    return None


async def before(store: MemoryStore, scope: Scope, ids: dict[int, str], query: str, floor: float) -> list[str]:
    """What /memories WORD listed before: the hybrid search's page above the chat's floor, or holding a word."""
    hits = await store.search(scope, query, ("note",), k=OLD_K, min_cosine=floor, words_pass=True)
    return [ids[h.item_id] for h in hits]


async def run(path: Path, embedder: Embedder, second: Embedder | None = None,
              strict: float | None = None) -> dict[str, Any]:
    """Choose the threshold on the tuning queries (or take `strict`), then report the held-out ones (`second`: the
    second signal's model, as the product opens its store beside the bundled e5)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    notes = {n["id"]: n["text"] for n in data["notes"]}
    tune = [q for q in data["queries"] if q["split"] == "tune"]
    held = [q for q in data["queries"] if q["split"] == "held_out"]
    with tempfile.TemporaryDirectory() as folder:
        store = await MemoryStore.open(Path(folder) / "mnemo.sqlite3", embedder, second=second)
        try:
            scope = await store.scope("mnemo", "anna")
            stored = await store.notes.add_many(scope, [NewNote(text, kind="fact") for text in notes.values()])
            ids = {s.id: note_id for s, note_id in zip(stored, notes)}
            words = {q["query"]: await offers(store, scope, ids, q["query"], None) for q in data["queries"]}
            chosen = strict if strict is not None else choose(
                tune, words, {q["query"]: await gathered(store, scope, ids, q["query"]) for q in tune})
            floor = calibration(embedder.name).relevant
            named = embedder.name + (f" + {second.name}" if second else "")
            result: dict[str, Any] = {"embedder": named, "notes": len(notes), "tune_queries": len(tune),
                                      "held_out_queries": len(held), "strict": chosen, "given": strict is not None}
            for name, queries in (("tune", tune), ("held_out", held)):
                rows = {"all": Tally(), "de": Tally(), "en": Tally(), "words_only": Tally(), "query_parts": Tally(),
                        "before": Tally()}
                for q in queries:
                    offered = await offers(store, scope, ids, q["query"], chosen)
                    rows["all"].add(q, offered)
                    rows[language(q)].add(q, offered)
                    rows["words_only"].add(q, words[q["query"]])
                    rows["query_parts"].add(q, await offers(store, scope, ids, q["query"], chosen, parts_of_query=True))
                    rows["before"].add(q, await before(store, scope, ids, q["query"], floor))
                result[name] = {key: tally.figures() for key, tally in rows.items()}
                gibberish = [q["query"] for q in queries if not q["relevant"] and not q["maybe"]]
                result[name]["gibberish_offered"] = sum([len(await offers(store, scope, ids, g, chosen))
                                                         for g in gibberish])
        finally:
            await store.close()
    return result


def show(result: dict[str, Any]) -> None:
    """Print the figures as a table per split."""
    print(f"embedder {result['embedder']}; {result['notes']} notes; {result['tune_queries']} tuning queries, "
          f"{result['held_out_queries']} held out; strict one-word cosine "
          f"{'given' if result.get('given') else 'chosen on tuning'}: {result['strict']}")
    for name in ("tune", "held_out"):
        print(f"\n{name}: gibberish queries offered {result[name]['gibberish_offered']} notes")
        print(f"{'':12} {'precision':>9} {'recall':>7} {'offered':>8} {'unrelated':>9} {'relevant':>8} {'found':>6}")
        for row in ("all", "de", "en", "words_only", "query_parts", "before"):
            f = result[name][row]
            print(f"{row:12} {f['precision']:9.3f} {f['recall']:7.3f} {f['offered']:8d} {f['unrelated_offered']:9d}"
                  f" {f['relevant']:8d} {f['relevant_found']:6d}")


def main() -> None:
    """Run the benchmark with the bundled embedder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--json", action="store_true", help="end with the held-out figures as one JSON line")
    parser.add_argument("--no-second-signal", action="store_true",
                        help="without USE beside e5 (as MNEMO_SECOND_SIGNAL=off; before issue 43 shipped it)")
    parser.add_argument("--strict", help="the one-word similarity to use instead of choosing it: a number, or "
                        "'calibrated' (what the product uses with the bundled model)")
    args = parser.parse_args()
    embedder = make_embedder()
    strict = None if args.strict is None else (
        calibration(embedder.name).keyword if args.strict == "calibrated" else float(args.strict))
    result = asyncio.run(run(args.path, embedder, None if args.no_second_signal else make_use_embedder(), strict))
    show(result)
    if args.json:
        print(json.dumps({"strict": result["strict"], **result["held_out"]}))


if __name__ == "__main__":
    main()
