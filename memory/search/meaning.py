"""What a person's search for notes finds (the memory page's search, /memories WORDS): the notes a keyword search
offers, in its order, then the notes about the query by meaning, best first. A pure decision over the hybrid
search's hits.

A meaning match must pass two floors: the main model's cosine its calibrated 'related enough for the prompt'
(`Calibration.relevant`, 0.79 for the bundled e5) and the second signal's (USE's) cosine `SECOND`. Measured on
bench/data/page_search_set.json's tuning queries (bench/page_search.py, docs/benchmarks.md): e5's cosines alone do not
tell a meaning match from an unrelated note ("Dackel" is 0.790 close to "Hund", "Mein Knie tut …" 0.802, and a query
no note is about reaches 0.81); the fused score does not either (it is scaled within each query, so the best unrelated
note of such a query scores as high as a real match), and a cut relative to the best hit took no unrelated note out
that the two floors leave in without losing "Dackel". USE's cosine stands apart: under 0.2 for every note of a tuning
query nothing is about (held out, two near topics reached 0.20 and 0.21). Without USE for the query (off, another
model than the bundled e5, or an English query of several words, which the language gate keeps from it) nothing is
found by meaning: the words only. /forget WORD keeps the keyword search alone (`MemoryStore.keyword_search`): a
deletion list offers only what names the word.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.models import SearchHit
from memory.search.embedder import Calibration

SECOND = 0.20  # USE's cosine a meaning match needs: bench/page_search.py, chosen on its tuning queries


@dataclass(frozen=True)
class Floor:
    """The cosines a note found by meaning alone needs: the main model's and the second signal's."""

    cosine: float
    second: float = SECOND


def floor_for(calibration: Calibration) -> Floor:
    """The floors for a model: its calibrated relevance, and the second signal's measured floor."""
    return Floor(cosine=calibration.relevant)


def by_meaning(hit: SearchHit, floor: Floor) -> bool:
    """Whether a hit is about the query by meaning: both cosines at their floors (none without the second signal)."""
    second = hit.components.second
    return second is not None and second >= floor.second and hit.components.cosine >= floor.cosine


def found(hits: Sequence[SearchHit], words: Sequence[int], floor: Floor) -> list[SearchHit]:
    """The hits the keyword search kept (their positions `words`, in that order), then the others about the query
    by meaning in the hybrid search's order (best first), each note once."""
    kept = [hits[i] for i in words]
    named = {h.item_id for h in kept}
    return kept + [h for h in hits if h.item_id not in named and by_meaning(h, floor)]
