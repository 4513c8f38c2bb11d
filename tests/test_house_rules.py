"""The house rules of issue 21, checked on the source tree: layers import downwards only, a port imports no
engine, every module says in its first line what it is for, and no module grows past about 400 lines."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("bot", "scheduler", "memory")  # each may import only the ones after it
MAX_LINES = 420  # "about 400"; frozen migrations are history and exempt
# The engine and the packages built on it: a port (the contract an outside service or a channel implements)
# must not reach them.
HIGH_LEVEL = ("bot.conversation.engine", "bot.commands", "bot.channels.telegram", "bot.channels.matrix",
              "bot.app", "bot.cli", "bot.web_page")


def modules() -> list[Path]:
    return sorted(p for layer in LAYERS for p in (ROOT / layer).rglob("*.py"))


def imported(path: Path) -> set[str]:
    """Every module a file imports, at any depth of the file (imports inside functions count too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def name_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def test_layers_import_only_downwards() -> None:
    upward = []
    for path in modules():
        layer = path.relative_to(ROOT).parts[0]
        above = LAYERS[:LAYERS.index(layer)]
        upward += [f"{name_of(path)} imports {name}" for name in imported(path)
                   if name.split(".")[0] in above]
    assert upward == []


def test_a_port_imports_no_engine_channel_or_command() -> None:
    ports = [p for p in modules() if p.name in ("port.py", "ports.py")]
    assert len(ports) >= 4  # the LLM, voice, channel and scheduler ports
    reaching = [f"{name_of(p)} imports {name}" for p in ports for name in imported(p)
                if any(name == high or name.startswith(high + ".") for high in HIGH_LEVEL)]
    assert reaching == []


def test_every_module_opens_with_a_line_saying_what_it_is_for() -> None:
    silent = []
    for path in modules():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if (path.name != "__init__.py" or path.stat().st_size > 0) and (not doc or not doc.splitlines()[0].strip()):
            silent.append(name_of(path))
    assert silent == []


@pytest.mark.parametrize("layer", LAYERS)
def test_no_module_is_over_about_400_lines(layer: str) -> None:
    long = {name_of(p): n for p in (ROOT / layer).rglob("*.py")
            if "migrations" not in p.parts and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def sources(path: Path) -> set[str]:
    """The modules a file's import statements name (`from a.b import c` names `a.b`), at any depth of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_bot_and_scheduler_enter_memory_by_its_front_door() -> None:
    deep = [f"{name_of(p)} imports {name}" for layer in ("bot", "scheduler") for p in (ROOT / layer).rglob("*.py")
            for name in sources(p) if name.startswith("memory.")]
    assert deep == []


def test_the_front_door_exports_what_it_imports_and_memory_never_enters_by_it() -> None:
    import memory
    door = ast.parse((ROOT / "memory" / "__init__.py").read_text(encoding="utf-8"))
    imported_names = {alias.asname or alias.name for node in door.body if isinstance(node, ast.ImportFrom)
                      for alias in node.names}
    assert set(memory.__all__) == imported_names
    assert all(hasattr(memory, name) for name in memory.__all__)
    # a module behind the door importing the door would close a circle at start-up
    inside = [f"{name_of(p)}: from memory import {', '.join(names)}" for p in (ROOT / "memory").rglob("*.py")
              if p != ROOT / "memory" / "__init__.py"
              for names in [[a.name for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                             if isinstance(n, ast.ImportFrom) and n.module == "memory" for a in n.names]] if names]
    assert inside == []


def test_memory_is_in_rooms_with_few_loose_modules() -> None:
    loose = sorted(p.name for p in (ROOT / "memory").glob("*.py") if p.name != "__init__.py")
    rooms = sorted(d.name for d in (ROOT / "memory").iterdir() if (d / "__init__.py").is_file())
    assert len(loose) <= 12, loose
    assert len(rooms) >= 4, rooms


def bot_part(module: str) -> str | None:
    """`bot.conversation.engine` -> 'conversation'; `bot.texts` -> 'texts': a sub-package or a loose module of bot/."""
    parts = module.split(".")
    return parts[1] if parts[0] == "bot" and len(parts) > 1 else None


def parts_in_circles() -> list[str]:
    """bot/'s parts (sub-packages and loose modules) that reach themselves again through imports (inside functions
    too): each part of a circle is named."""
    edges: dict[str, set[str]] = {}
    for path in (ROOT / "bot").rglob("*.py"):
        here = bot_part(name_of(path))
        if here is not None and here != "__init__":
            edges.setdefault(here, set()).update(p for p in {bot_part(n) for n in imported(path)} if p and p != here)
    found = []
    for start, nexts in edges.items():
        seen, todo = set(), list(nexts)
        while todo:
            part = todo.pop()
            if part == start:
                found.append(start)
                break
            if part not in seen:
                seen.add(part)
                todo.extend(edges.get(part, ()))
    return sorted(found)


def test_no_import_circle_between_the_parts_of_bot() -> None:
    assert parts_in_circles() == []
