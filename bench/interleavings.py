"""The state machine over random interleavings (tests/test_interleavings.py), run longer than CI and with fresh
random draws: every broken promise it finds, each shrunk to its shortest sequence of steps.

Usage: .venv/bin/python -m bench.interleavings [--examples 200] [--steps 40] [--rounds 8] [--ci] [--tolerate CODE,…]

A run stops at the first broken promise (Hypothesis then shrinks it); to find the others, the bench runs again with
that invariant's code tolerated, until a run finds nothing new (at most --rounds runs). By default nothing is
tolerated, not even the known open failures (`OPEN`); --ci tolerates those, as CI does. Printed: each failure (its
code, what happened, the shrunk steps), then how many examples and steps ran and how long it took.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis.stateful import run_state_machine_as_test  # noqa: E402

from tests.test_interleavings import OPEN, Interleavings  # noqa: E402

CODE = re.compile(r"^([a-e]-[a-z-]+): ", re.MULTILINE)


def run(examples: int, steps: int, tolerated: frozenset[str]) -> BaseException | None:
    """One run of the machine; the failure it found, or None."""
    Interleavings.tolerated = tolerated
    chosen = settings(max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
                      derandomize=False, suppress_health_check=list(HealthCheck), print_blob=False)
    machine = type("Run", (Interleavings,), {})
    try:
        run_state_machine_as_test(machine, settings=chosen)
    except Exception as exc:  # noqa: BLE001 - a broken promise (AssertionError) or a crash of mnemo: both reported
        return exc
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--ci", action="store_true", help="tolerate the known open failures, as CI does")
    parser.add_argument("--tolerate", default="", help="codes to tolerate from the start, comma-separated")
    args = parser.parse_args(argv)
    tolerated = frozenset(OPEN if args.ci else ()) | {c for c in args.tolerate.split(",") if c}
    failures, started = 0, time.monotonic()
    for _ in range(args.rounds):
        found = run(args.examples, args.steps, tolerated)
        if found is None:
            break
        failures += 1
        codes = set(CODE.findall(str(found))) or {f"crash-{type(found).__name__}"}
        print(f"--- failure {failures}: {', '.join(sorted(codes))}")
        print(str(found).split("\nassert ")[0])
        for note in getattr(found, "__notes__", []):
            print(note)
        if codes <= tolerated:
            break  # a crash seen again: nothing new to tolerate
        tolerated |= codes
    print(f"examples: {Interleavings.examples}, steps: {Interleavings.steps}, "
          f"failures: {failures}, seconds: {time.monotonic() - started:.0f}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
