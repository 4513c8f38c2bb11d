"""The mnemo command: configuration errors are one sentence, undo works from the shell."""
from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import ADMIN_COMMANDS, chosen_command, main, parse_args
from memory.search.embedder import make_embedder
from memory.store import MemoryStore


def test_a_wrong_setting_is_one_sentence_and_exit_code_2(  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path) -> None:
    monkeypatch.setenv("MNEMO_TIMEZONE", "Mars/Olympus")
    monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path))
    assert main(["--env-file", str(tmp_path / "none.env"), "console"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mnemo: MNEMO_TIMEZONE is not valid") and "\n" not in err


def test_undo_from_the_shell_restores_a_forgotten_note(monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path))

    async def forget() -> int:
        async with await MemoryStore.open(tmp_path, make_embedder()) as store:
            scope = await store.scope("mnemo", "tg:42")
            note = (await store.notes.add(scope, "Anna mag Tee")).note
            await store.notes.delete(scope, note.id)
            return note.id

    note_id = asyncio.run(forget())
    assert main(["--env-file", str(tmp_path / "none.env"), "undo", "--user", "tg:42"]) == 0
    assert f"undone: delete note #{note_id}" in capsys.readouterr().out

    async def texts() -> list[str]:
        async with await MemoryStore.open(tmp_path, make_embedder()) as store:
            scope = await store.scope("mnemo", "tg:42")
            return [n.text for n in await store.notes.list(scope)]

    assert asyncio.run(texts()) == ["Anna mag Tee"]


def test_the_command_is_found_behind_the_options_and_their_values() -> None:
    assert chosen_command(["--env-file", "run", "companion", "list"]) == "companion"  # "run" is the file's name
    assert chosen_command(["--log-level", "debug", "safety-check", "--no-moderation"]) == "safety-check"
    assert chosen_command(["--env-file=/x", "web-link", "--user", "tg:1"]) == "web-link"
    assert chosen_command(["--help"]) is None and chosen_command([]) is None


def test_an_admin_command_reads_its_own_arguments_and_help_lists_every_command(capsys) -> None:  # type: ignore[no-untyped-def]
    args = parse_args(["--env-file", "/dev/null", "import-history", "export.zip", "--user", "tg:1", "--preview"])
    assert (args.command, args.file, args.user, args.preview) == ("import-history", Path("export.zip"), "tg:1", True)
    assert parse_args(["companion", "create", "--id", "lena", "--name", "Lena"]).template == "warm"
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    shown = capsys.readouterr().out
    assert all(name in shown for name in (*ADMIN_COMMANDS, "run", "doctor", "pair", "analyse"))
    with pytest.raises(SystemExit) as exited:
        parse_args(["web-link"])  # --user is required: argparse says so and exits 2
    assert exited.value.code == 2 and "--user" in capsys.readouterr().err


def test_mnemo_run_does_not_import_the_admin_commands() -> None:
    probe = ("import sys; from bot.cli import parse_args, ADMIN_COMMANDS; parse_args(['run']); "
             "print(sorted(m for m, _ in ADMIN_COMMANDS.values() if m in sys.modules))")
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                           cwd=Path(__file__).resolve().parent.parent).stdout
    assert shown.strip() == "[]"
