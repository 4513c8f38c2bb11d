"""`mnemo safety-check`: which messages the crisis detector flags, one message a line on standard input.

Prints `1<TAB>text` for a message that would get the help line and `0<TAB>text` for one that would not, in the
order read, so an operator can see what triggers it. It runs the layers a turn runs: the patterns, the classifier on
the bundled embedders' vectors (e5 and USE, the process's own copies: `local_detector`), and the moderation service
when MNEMO_MODERATION_URL sets one (its failures are logged and counted on standard error; the local verdict then
stands).
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING, TextIO

from bot.conversation.crisis import CrisisDetector, LayeredDetector, local_detector
from bot.conversation.moderation import ModerationConfig, ModerationDetector

if TYPE_CHECKING:
    from bot.settings import Settings


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of `mnemo safety-check` (its name and help are `bot.cli`'s)."""
    p.add_argument("--no-moderation", action="store_true", help="the local layers only, even with a moderation URL")


async def run_command(settings: Settings, args: argparse.Namespace, lines: TextIO | None = None,
                      out: TextIO | None = None) -> int:
    """Print each line's verdict; return the exit code (0)."""
    lines, out = lines or sys.stdin, out or sys.stdout
    failures: Counter[str] = Counter()

    async def count(name: str) -> None:
        failures[name] += 1

    detector: CrisisDetector = local_detector()
    moderation = None
    if settings.moderation_url and not args.no_moderation:
        moderation = ModerationDetector(
            ModerationConfig(settings.moderation_url, settings.moderation_kind, settings.moderation_model,
                             settings.moderation_api_key, settings.moderation_timeout), count)
        detector = LayeredDetector((detector, moderation))
    try:
        for line in lines:
            text = line.rstrip("\r\n")
            print(f"{int(await detector.crisis(text))}\t{text}", file=out, flush=True)
    finally:
        if moderation is not None:
            await moderation.aclose()
    for name, n in sorted(failures.items()):
        print(f"mnemo safety-check: {name} x{n} (the local layers decided those lines)", file=sys.stderr)
    return 0
