"""`bench/crisis.py judge`: measure an operator's own model as mnemo's crisis judge (MNEMO_CRISIS_JUDGE), with the
very request the judge makes (`bot.conversation.crisis_judge.judge_request`, no earlier messages), on the sets.

Usage:
  python -m bench.crisis judge [--base-url URL] [--model NAME] [--api-key KEY] [--provider openai]
                               [--timeout 3] [--concurrency 4] [--limit N]

The model: the flags, else MNEMO_BACKGROUND_* (what the judge asks in production), else MNEMO_CHAT_*. The sets: the
crisis set's held-out split (bench/data/crisis_set.tsv), the voices set (bench/data/crisis_voices.tsv), and where this
branch has them the everyday set's held-out split (bench/everyday_set.py) and the template suite's held-out fillers
(bench/crisis_suite.py); a set that is not here is named and skipped. For each set and language it prints the confusion
matrix. An answer that is not exactly {"help_line": true|false}, a failure or one later than --timeout is no verdict:
counted apart, and in the matrix as a 'no' (the judge only ever adds a yes; the fast layers' verdict stands). No text
of a set is printed: the held-out sets stay unread by people tuning the detector.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import importlib
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.crisis import SET, Row, heldout_rows, per_language

VOICES = SET.with_name("crisis_voices.tsv")


@dataclass(frozen=True)
class Judged:
    """The judge's answer to one row: its yes or no (None: no verdict, and why), and how long it took."""

    verdict: bool | None
    failure: str  # '', or the failure's name (crisis_judge.garbage, .error, .timeout)
    seconds: float


def voices_rows(path: Path = VOICES) -> list[Row]:
    """The voices set (id, lang, label, kind, voice, text): every row is held out."""
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [Row(r["id"], "heldout", r["lang"], int(r["label"]), r["kind"], r["text"]) for r in reader]


def _field(item: Any, name: str) -> Any:
    """A row's field, whether the row is an object or a mapping."""
    return item[name] if isinstance(item, dict) else getattr(item, name)


def everyday_rows() -> list[Row] | None:
    """The everyday set's held-out split (every message an implicit 0), or None when this branch has no such set."""
    try:
        everyday = importlib.import_module("bench.everyday_set")
        return [Row(str(_field(r, "id")), "heldout", str(_field(r, "lang")), 0, "everyday", str(_field(r, "text")))
                for r in everyday.rows("heldout")]
    except (ImportError, AttributeError, KeyError, TypeError, ValueError, FileNotFoundError):
        return None


def suite_rows() -> list[Row] | None:
    """The template suite's cases with held-out fillers: the crisis statements and their near misses (bench/
    crisis_suite.py: `cases`, `near_misses`), or None when this branch has no suite."""
    try:
        suite = importlib.import_module("bench.crisis_suite")
        found = [*suite.cases("heldout"), *getattr(suite, "near_misses", lambda split: [])("heldout")]
        return [Row(str(_field(r, "id")), "heldout", str(_field(r, "lang")), int(_field(r, "label")), "suite",
                    str(_field(r, "text"))) for r in found]
    except (ImportError, AttributeError, KeyError, TypeError, ValueError, FileNotFoundError):
        return None


def the_sets(limit: int | None = None) -> list[tuple[str, list[Row] | None]]:
    """Each set by name, its rows (at most `limit` per language and label, taken in order), None where it is missing."""
    sets: list[tuple[str, Callable[[], list[Row] | None]]] = [
        ("crisis_set.tsv held-out", heldout_rows), ("crisis_voices.tsv", voices_rows),
        ("everyday set held-out", everyday_rows), ("template suite held-out fillers", suite_rows)]
    out: list[tuple[str, list[Row] | None]] = []
    for name, read in sets:
        rows = read()
        if rows is not None and limit is not None:
            taken: Counter[tuple[str, int]] = Counter()
            kept = []
            for row in rows:
                if taken[(row.lang, row.label)] < limit:
                    taken[(row.lang, row.label)] += 1
                    kept.append(row)
            rows = kept
        out.append((name, rows))
    return out


async def judge_rows(llm: Any, rows: Sequence[Row], timeout: float, concurrency: int) -> list[Judged]:
    """Ask the judge about every row (at most `concurrency` at a time), as MNEMO_CRISIS_JUDGE would."""
    from bot.conversation.crisis_judge import CrisisJudge

    gate = asyncio.Semaphore(concurrency)

    async def one(row: Row) -> Judged:
        failures: list[str] = []

        async def count(name: str) -> None:
            failures.append(name)

        async with gate:
            started = time.perf_counter()
            said = await CrisisJudge(llm, timeout, count).needs_help(row.text)
            return Judged(said, failures[0] if failures else "", time.perf_counter() - started)

    return list(await asyncio.gather(*(one(row) for row in rows)))


def report(name: str, rows: Sequence[Row], judged: Sequence[Judged], say: Callable[[str], None] = print) -> None:
    """The confusion matrix per language (no verdict counted as a no), the answers without a verdict, the time."""
    said = [j.verdict is True for j in judged]
    say("")
    say(f"{name}: {len(rows)} rows")
    for lang, figures in per_language(said, rows).items():
        missing = sum(1 for r, j in zip(rows, judged) if j.verdict is None and lang in ("all", r.lang))
        say(f"  {figures.line(lang)}   no verdict {missing}")
    failures = Counter(j.failure for j in judged if j.failure)
    if failures:
        say("  no verdict: " + ", ".join(f"{kind} {count}" for kind, count in sorted(failures.items())))
    seconds = sorted(j.seconds for j in judged)
    if seconds:
        p95 = seconds[min(len(seconds) - 1, round(0.95 * (len(seconds) - 1)))]
        say(f"  seconds per answer: median {statistics.median(seconds):.2f}, p95 {p95:.2f}")


def model_settings(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """The judge model's provider, name, base URL and key: the flags, else MNEMO_BACKGROUND_*, else MNEMO_CHAT_*."""
    def setting(flag: str | None, name: str) -> str | None:
        return flag or env.get(f"MNEMO_BACKGROUND_{name}") or env.get(f"MNEMO_CHAT_{name}") or None

    found = {"provider": setting(args.provider, "PROVIDER") or "openai", "model": setting(args.model, "MODEL"),
             "base_url": setting(args.base_url, "BASE_URL"), "api_key": setting(args.api_key, "API_KEY")}
    if not found["model"]:
        raise SystemExit("no model: give --model or set MNEMO_BACKGROUND_MODEL (or MNEMO_CHAT_MODEL)")
    return found


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line of `bench/crisis.py judge`."""
    parser = argparse.ArgumentParser(prog="bench/crisis.py judge", description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default=None, help="openai (any OpenAI-compatible endpoint) or anthropic")
    parser.add_argument("--model", default=None)
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--timeout", type=float, default=float(os.environ.get("MNEMO_CRISIS_JUDGE_TIMEOUT", "3")),
                        help="seconds an answer may take, as MNEMO_CRISIS_JUDGE_TIMEOUT (later: no verdict)")
    parser.add_argument("--concurrency", type=int, default=4, help="requests at a time")
    parser.add_argument("--limit", type=int, default=None, help="at most N rows per set, language and label")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace, env: dict[str, str], say: Callable[[str], None] = print) -> None:
    """Judge every set with the model and print the figures."""
    from bot.llm.factory import make_llm

    found = model_settings(args, env)
    llm = make_llm(found["provider"], found["model"], found["base_url"], found["api_key"], args.timeout + 10)
    say(f"crisis judge: model {found['model']} ({found['provider']}, {found['base_url'] or 'its default URL'}), "
        f"timeout {args.timeout:g} s; the request MNEMO_CRISIS_JUDGE makes, without earlier messages")
    try:
        for name, rows in the_sets(args.limit):
            if rows is None:
                say("")
                say(f"{name}: not on this branch, skipped")
                continue
            report(name, rows, await judge_rows(llm, rows, args.timeout, args.concurrency), say)
    finally:
        close = getattr(llm, "aclose", None)
        if close is not None:
            await close()


def main(argv: Sequence[str] | None = None) -> int:
    """Run `bench/crisis.py judge`."""
    asyncio.run(run(parse_args(argv), dict(os.environ)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
