"""The isolation tests on PostgreSQL, many times in one pytest process, under load: how often does one fail?

Each selected test runs `--runs` times (the collected items repeated, in order); a failure's report is written to
`--out` (the operation, the caller and what of the victim's data moved: the test's own message). `--load N` keeps
N busy processes (`while True: pass`) beside the run, ended when it ends, so the tests run on a machine with no
core to spare, as in CI.

`--minutes` ends the run early (after the test running then); the counts printed are of the tests that ran, and the
failures are written as they happen.

Usage: nice -n 10 .venv/bin/python bench/isolation_runs.py [--runs 300] [--load 2]
       [-k "postgres and not randomized"] [--minutes 50] [--out /tmp/isolation-failures.txt]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


class Repeat:
    """A pytest plugin: every test `runs` times; counts outcomes and keeps the failures' reports."""

    def __init__(self, runs: int, out: Path, minutes: float) -> None:
        self.runs, self.out = runs, out
        self.deadline = time.monotonic() + minutes * 60
        self.outcomes: Counter[tuple[str, str]] = Counter()
        self.failures = 0
        out.write_text("")

    @pytest.hookimpl(trylast=True)
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Each test once per run, a fresh item each time (its own fixtures: a fresh database)."""
        metafunc.fixturenames.append("isolation_run")
        metafunc.parametrize("isolation_run", range(1, self.runs + 1), ids=lambda n: f"run{n}")

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Run by run: all selected tests of run 1, then of run 2 ..."""
        items.sort(key=lambda item: item.callspec.getparam("isolation_run") if hasattr(item, "callspec") else 0)

    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        if time.monotonic() > self.deadline:  # the time is up: stop after this test (its database is dropped)
            item.session.shouldstop = "the --minutes given are up"

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or report.outcome != "passed":
            test = report.nodeid.split("::")[-1].split("[")[0]
            backend = "postgres" if "postgres" in report.nodeid else "sqlite"
            self.outcomes[(f"{test}[{backend}]", report.outcome)] += 1
        if report.outcome == "failed":  # written at once: a run stopped early (Ctrl-C) keeps what it found
            self.failures += 1
            with self.out.open("a") as out:
                out.write(f"== {report.nodeid} ({report.when}, {time.strftime('%H:%M:%S')})\n{report.longreprtext}\n")


def main(argv: list[str] | None = None) -> int:
    """Run the isolation tests many times; print the outcomes per test; 1 when any failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--load", type=int, default=0, help="busy processes beside the run")
    parser.add_argument("-k", default="postgres", help="pytest's -k: which of the module's tests")
    parser.add_argument("--file", default="tests/test_isolation.py")
    parser.add_argument("--minutes", type=float, default=600.0, help="stop after the test running then")
    parser.add_argument("--out", default="/tmp/isolation-failures.txt")
    args = parser.parse_args(argv)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    repeat = Repeat(args.runs, Path(args.out), args.minutes)
    started = time.monotonic()
    try:
        pytest.main(["-q", "-p", "no:randomly", "-p", "no:cacheprovider", "--no-header", "-k", args.k,
                     str(ROOT / args.file)], plugins=[repeat])
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    print(f"\nup to {args.runs} runs of {args.file} -k {args.k!r}, {args.load} busy processes beside, "
          f"{time.monotonic() - started:.0f} s")
    for (test, outcome), count in sorted(repeat.outcomes.items()):
        print(f"  {test}: {count} {outcome}")
    print(f"failures written to {args.out}" if repeat.failures else "no failures")
    return 1 if repeat.failures else 0


if __name__ == "__main__":
    sys.exit(main())
