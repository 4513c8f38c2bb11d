"""One check-in per person across a lost scheduler lease, run many times on both backends.

Each run is `tests/test_scheduler_leader.py`'s scenario: two workers on one database (SQLite; PostgreSQL from the
`pgserver` wheel), a fake clock; w1 plans a slot and, while it writes Anna's check-in, loses the lease; w2 takes it
and plans the same slot at once. A run passes when Anna got exactly one check-in. Not part of the suite
(`testpaths` is tests/): pytest runs this file with the suite's fixtures as a plugin.

Usage: .venv/bin/python bench/checkin_once.py [runs, default 50]
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory.store import MemoryStore  # noqa: E402
from tests.test_scheduler_leader import lost_lease_in_the_middle_of_a_person  # noqa: E402

RUNS = int(os.environ.get("MNEMO_BENCH_RUNS", "50"))
pytestmark = pytest.mark.both_backends("the per-person claim across two workers")


@pytest.mark.parametrize("run", range(RUNS))
async def test_one_checkin_per_person_and_slot(run: int, store: MemoryStore, second_store: MemoryStore,
                                                tmp_path: Path) -> None:
    sent = await lost_lease_in_the_middle_of_a_person(store, second_store, tmp_path)
    assert len(sent) == 1, sent


if __name__ == "__main__":
    if len(sys.argv) > 1:
        os.environ["MNEMO_BENCH_RUNS"] = sys.argv[1]
    os.chdir(ROOT)
    sys.exit(pytest.main(["-q", "-p", "no:randomly", "-p", "tests.conftest", "--rootdir", str(ROOT),
                          "-W", "ignore::pytest.PytestAssertRewriteWarning", __file__]))
