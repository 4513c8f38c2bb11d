"""The house's figures (issue 41), counted on the source tree: memory's rooms and loose modules, deep imports of
memory from bot/ and scheduler/, import circles between bot/'s parts, README.md's length, the longest module.

tests/test_house_rules.py asserts the limits; this prints the figures themselves.
Usage: .venv/bin/python bench/house.py
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_house_rules import bot_part, name_of, parts_in_circles, sources  # noqa: E402


def main() -> None:
    memory = ROOT / "memory"
    loose = sorted(p.name for p in memory.glob("*.py") if p.name != "__init__.py")
    rooms = sorted(d.name for d in memory.iterdir() if (d / "__init__.py").is_file())
    deep = sorted({f"{name_of(p)} -> {n}" for layer in ("bot", "scheduler") for p in (ROOT / layer).rglob("*.py")
                   for n in sources(p) if n.startswith("memory.")})
    parts = {bot_part(name_of(p)) for p in (ROOT / "bot").rglob("*.py")} - {None, "__init__"}
    lengths = {name_of(p): len(p.read_text(encoding="utf-8").splitlines())
               for layer in ("bot", "memory", "scheduler") for p in (ROOT / layer).rglob("*.py")
               if "migrations" not in p.parts}
    longest = max(lengths, key=lambda k: lengths[k])
    print(f"memory/: {len(loose)} loose modules ({', '.join(loose)}), {len(rooms)} sub-packages ({', '.join(rooms)})")
    print(f"imports of memory from bot/ and scheduler/ past the front door: {len(deep)}")
    print(f"bot/: {len(parts)} parts (sub-packages, loose modules); in an import circle: {len(parts_in_circles())}")
    print(f"README.md: {len((ROOT / 'README.md').read_text(encoding='utf-8').splitlines())} lines")
    print(f"longest module (migrations aside): {longest} with {lengths[longest]} lines")


if __name__ == "__main__":
    main()
