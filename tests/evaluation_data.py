"""The evaluation data beside the repository (../shared), which the project cannot ship: found, or a loud skip.

Retrieval is also measured on data that ships (bench/data/german_memories.json, tests/test_retrieval_own_set.py),
so a clone alone still proves the search; what needs ../shared is the comparison with the shared development set.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"

# how a skip for want of ../shared begins (tests/conftest.py lists them at the end)
MISSING = "evaluation data missing: "


def shared_data(path: Path, what: str) -> Path:
    """A file from the evaluation data beside the repository (../shared), which the project cannot ship.

    Without it the test is skipped loudly (named again at the end of the run); where MNEMO_REQUIRE_SHARED_DATA is
    set, as `.ci/run` sets it, it fails instead, so CI never proves less than it says.
    """
    if path.exists():
        return path
    if os.environ.get("MNEMO_REQUIRE_SHARED_DATA"):
        pytest.fail(f"{what} not found at {path} (MNEMO_REQUIRE_SHARED_DATA is set)")
    pytest.skip(f"{MISSING}{what} not found at {path}")
