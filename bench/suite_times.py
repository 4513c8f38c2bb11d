"""Where the test suite's time goes: per-file sums and the slowest tests of a pytest JUnit XML report.

    python -m pytest --junitxml=/tmp/suite.xml ...
    python bench/suite_times.py /tmp/suite.xml [--top 30]

A test's time in the report is its setup, call and teardown together (pytest's default `junit_duration_report`).
With pytest-xdist the files ran side by side, so the sum is CPU-side test time, not the run's wall time.
"""
from __future__ import annotations

import argparse
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass


@dataclass(frozen=True)
class Timed:
    """One test case of the report: its file, its name with parameters, seconds, and its backend if it has one."""

    file: str
    name: str
    seconds: float
    backend: str | None


def read_report(path: str) -> list[Timed]:
    """The test cases of a JUnit XML report."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        classname = case.get("classname", "")
        module = classname.split(".")
        # "tests.test_store" or "tests.test_store.TestClass": the file is the part up to the first test_ module.
        parts = []
        for part in module:
            parts.append(part)
            if part.startswith("test_"):
                break
        name = case.get("name", "")
        match = re.search(r"\[(sqlite|postgres)[\]-]", name)
        cases.append(Timed("/".join(parts) + ".py", name, float(case.get("time", 0.0)), match and match.group(1)))
    return cases


def summary(cases: list[Timed], top: int) -> str:
    """The report's total, its split by backend, the slowest files and the slowest tests, as text."""
    total = sum(c.seconds for c in cases)
    by_file: dict[str, list[Timed]] = defaultdict(list)
    for case in cases:
        by_file[case.file].append(case)
    by_backend: dict[str, float] = defaultdict(float)
    for case in cases:
        by_backend[case.backend or "no store"] += case.seconds
    lines = [f"{len(cases)} tests, {total:.0f} s in all"]
    lines += [f"  {backend}: {seconds:.0f} s" for backend, seconds in sorted(by_backend.items())]
    lines.append(f"\nslowest {top} files (seconds, tests):")
    ranked = sorted(by_file.items(), key=lambda item: -sum(c.seconds for c in item[1]))
    for file, file_cases in ranked[:top]:
        lines.append(f"  {sum(c.seconds for c in file_cases):7.1f}  {len(file_cases):4d}  {file}")
    lines.append(f"\nslowest {top} tests (seconds):")
    for case in sorted(cases, key=lambda c: -c.seconds)[:top]:
        lines.append(f"  {case.seconds:7.2f}  {case.file}::{case.name}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report", help="a pytest --junitxml file")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    print(summary(read_report(args.report), args.top))


if __name__ == "__main__":
    main()
