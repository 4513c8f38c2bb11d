"""Byte search of a data folder for what a user wrote: every file, every spelling SQLite or JSON may keep."""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path


def spellings(word: str) -> set[str]:
    """The word, without diacritics (as the word index stores it), its first 7 letters (a porter stem starts
    so), its last 6 (the word index stores a term after the part it shares with the term before it), and
    its ASCII runs of 5 or more (a JSON payload escapes the rest as \\u00e4).
    """
    plain = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    found = {word, plain}
    if len(plain) > 7:
        found.update((plain[:7], plain[-6:]))
    found.update(run for run in re.findall(r"[A-Za-z0-9]+", word) if len(run) >= 5)
    return found


def traces(folder: Path, needles: set[str]) -> dict[str, list[str]]:
    """Which needles occur (case-insensitively, as UTF-8) in which files under folder."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        lower, text = data.lower(), data.decode("utf-8", "replace").casefold()
        for needle in needles:
            if needle.lower().encode() in lower or needle.casefold() in text:
                found.setdefault(needle, []).append(str(path.relative_to(folder)))
    return found


def files(folder: Path) -> list[str]:
    """Every file under folder, relative to it."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
