"""Search latency at 10k notes of one user, without and with the query embedding.

Usage: bench/latency.py [--notes 10000] [--queries 300] [--json]

Generates varied German and English notes (seeded, so every run stores the same ones), stores
them through the real store in batches, then times `SearchIndex.search_vector` with query vectors
embedded beforehand (the search alone), and the query embedding on its own.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory.records.notes import NewNote  # noqa: E402
from memory.search.embedder import make_embedder  # noqa: E402
from memory.store import MemoryStore  # noqa: E402

BATCH = 500
GOAL_P95_MS = 20.0

_PEOPLE_DE = ["Anna", "Annas Freund Tobias", "Annas Mutter", "Annas Schwester Mia", "Annas Kollegin Jana", "Lea"]
_PEOPLE_EN = ["Anna", "Anna's friend Tobias", "Anna's mother", "Anna's sister Mia", "Her colleague Jana", "Lea"]
_FACTS_DE = [
    "mag {food} zum Abendessen", "trinkt morgens gern {drink}", "spielt am Wochenende {sport}",
    "will im {month} nach {place} reisen", "hat Angst vor {fear}", "liest gerade ein Buch über {topic}",
    "arbeitet seit {years} Jahren als {job}", "hat sich {thing} gekauft", "fährt jeden {day} mit dem Rad zur Arbeit",
    "findet {topic} spannend", "hat am {dayno}. {month} einen Termin beim {doctor}", "übt abends {instrument}",
    "vermisst die Zeit in {place}", "möchte weniger {food} essen", "hat {pet} namens {name}",
]
_FACTS_EN = [
    "likes {food} for dinner", "drinks {drink} in the morning", "plays {sport} at the weekend",
    "wants to travel to {place} in {month}", "is afraid of {fear}", "is reading a book about {topic}",
    "has worked as a {job} for {years} years", "bought {thing}", "cycles to work every {day}",
    "finds {topic} exciting", "has an appointment with the {doctor} on {month} {dayno}",
    "practises {instrument} at night",
    "misses the time in {place}", "wants to eat less {food}", "has {pet} called {name}",
]
_FILL = {
    "food": ["Linsen mit Spätzle", "Pizza", "Sushi", "Käsespätzle", "Gemüsecurry", "pasta", "ramen", "Flammkuchen"],
    "drink": ["Kräutertee", "Kaffee", "green tea", "Kakao", "Ingwertee", "espresso"],
    "sport": ["Tennis", "Volleyball", "Badminton", "chess", "football", "Klettern", "yoga"],
    "month": ["Januar", "März", "Mai", "Juli", "September", "November", "April", "June", "October"],
    "place": ["Kopenhagen", "Lissabon", "Wien", "Norwegen", "Kanada", "Freiburg", "the Black Forest", "Scotland"],
    "fear": ["Spinnen", "Höhen", "dem Zahnarzt", "spiders", "flying", "deep water", "Prüfungen"],
    "topic": ["Astronomie", "Gebärdensprache", "Klimapolitik", "Vikings", "Pilze", "jazz history", "Bienen"],
    "job": ["Grundschullehrerin", "Tischler", "Pflegerin", "nurse", "software developer", "Bibliothekarin"],
    "years": ["zwei", "drei", "fünf", "zehn", "two", "seven"],
    "thing": ["ein Lastenrad", "einen Füller", "eine Kamera", "a used van", "a cello", "ein Zelt", "new boots"],
    "day": ["Montag", "Mittwoch", "Freitag", "Monday", "Thursday"],
    "dayno": [str(n) for n in range(1, 29)],
    "doctor": ["Zahnarzt", "Hausarzt", "Orthopäden", "dentist", "eye doctor"],
    "instrument": ["Cello", "Klavier", "Gitarre", "the violin", "the flute"],
    "pet": ["einen Hund", "eine Katze", "zwei Wellensittiche", "a dog", "a tortoise"],
    "name": ["Bruno", "Mila", "Pepe", "Luna", "Oskar", "Frida"],
}
_QUESTIONS = [
    "Was esse ich am liebsten?", "Wovor habe ich Angst?", "Wohin will ich reisen?", "Welches Instrument übe ich?",
    "Was trinke ich morgens?", "Welchen Sport mache ich?", "Wann habe ich einen Arzttermin?", "Wie heißt mein Hund?",
    "What do I like for dinner?", "Where do I want to travel?", "What am I reading about?", "What did I buy?",
    "What is my job?", "Which pet do I have?", "Was weißt du über Tobias?", "Was macht meine Schwester?",
    "Welche Bücher lese ich?", "What am I afraid of?", "Wann fahre ich mit dem Rad?", "Was finde ich spannend?",
]


def synthetic_notes(n: int, seed: int = 7) -> list[str]:
    """n varied notes about one user, about half German and half English."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        german = rng.random() < 0.55
        person = rng.choice(_PEOPLE_DE if german else _PEOPLE_EN)
        fact = rng.choice(_FACTS_DE if german else _FACTS_EN)
        text = f"{person} " + fact.format(**{k: rng.choice(v) for k, v in _FILL.items()})
        if rng.random() < 0.3:
            text += rng.choice([", sagt sie.", ", seit letztem Jahr.", ", she said.", ", since last spring."])
        out.append(text + ("" if text.endswith(".") else "."))
    return out


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation."""
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


async def main(argv: list[str] | None = None) -> None:
    """Store the notes, then time search without and with the query embedding."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object last")
    args = parser.parse_args(argv)
    embedder = make_embedder()
    rng = random.Random(11)
    queries = [rng.choice(_QUESTIONS) for _ in range(args.queries)]
    with tempfile.TemporaryDirectory(prefix="mnemo-latency-") as tmp:
        store = await MemoryStore.open(Path(tmp), embedder)
        try:
            scope = await store.scope("mnemo", "anna")
            start = time.perf_counter()
            texts = synthetic_notes(args.notes)
            day = 86400.0
            for i in range(0, len(texts), BATCH):
                await store.notes.add_many(scope, [
                    NewNote(t, created_at=time.time() - (len(texts) - i - j) * day / 10)
                    for j, t in enumerate(texts[i:i + BATCH])
                ])
            index_s = time.perf_counter() - start
            embed_ms, search_ms = [], []
            for q in queries:
                t0 = time.perf_counter()
                qvec = embedder.embed([q], "query")[0]
                embed_ms.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                await store.index.search_vector(scope.id, qvec, q, ("note",), k=10)
                search_ms.append((time.perf_counter() - t0) * 1000)
        finally:
            await store.close()
    search_ms, embed_ms = search_ms[10:], embed_ms[10:]  # the first queries warm the caches
    result = {
        "notes": args.notes, "queries": len(search_ms), "index_seconds": round(index_s, 1),
        "search_ms_p50": round(percentile(search_ms, 50), 2), "search_ms_p95": round(percentile(search_ms, 95), 2),
        "embed_ms_p50": round(percentile(embed_ms, 50), 2), "embed_ms_p95": round(percentile(embed_ms, 95), 2),
    }
    print(f"{args.notes} notes of one user stored in {index_s:.1f} s ({embedder.name})")
    print(f"search without embedding: p50 {result['search_ms_p50']:.2f} ms, p95 {result['search_ms_p95']:.2f} ms"
          f" (goal p95 <= {GOAL_P95_MS:.0f} ms)")
    print(f"query embedding alone:    p50 {result['embed_ms_p50']:.2f} ms, p95 {result['embed_ms_p95']:.2f} ms")
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
