"""Voice notes kept as files (MNEMO_VOICE_KEEP, off by default): the audio of each heard voice note, once its
transcript is logged, as `<data dir>/recordings/<companion>/<scope id>/<message id>.<format>`, mode 0600 in 0700
folders. A recording belongs to its message: it goes with the scope on /deleteme (whatever the setting says now),
/export lists it, `mnemo doctor` says where they are.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.private_files import private_folders, write_private
from bot.voice.audio import audio_format
from memory.models import Scope
from memory.store import MemoryStore

RECORDINGS_DIR = "recordings"


@dataclass(frozen=True)
class Recording:
    """One kept voice note: the logged message it was heard as, and its file."""

    message_id: int
    path: Path
    size: int


def recordings_root(data_dir: Path) -> Path:
    """The folder all kept voice notes live under."""
    return data_dir / RECORDINGS_DIR


def scope_folder(data_dir: Path, scope: Scope) -> Path:
    """The folder of one companion's and one chat's kept voice notes (the scope's id, never the user's id)."""
    return recordings_root(data_dir) / scope.companion_id / str(scope.id)


def keep_recording(data_dir: Path, scope: Scope, message_id: int, audio: bytes) -> Path:
    """Write a voice note's audio as the file of its logged message (0600; a replayed note replaces it whole)."""
    folder = scope_folder(data_dir, scope)
    private_folders(data_dir, folder)
    path = folder / f"{message_id}.{audio_format(audio) or 'audio'}"
    write_private(path, audio)
    return path


def forget_recording(path: Path) -> None:
    """Delete one recording, and its scope's folder when that leaves it empty."""
    path.unlink(missing_ok=True)
    if path.parent.is_dir() and not any(path.parent.iterdir()):
        path.parent.rmdir()


def recordings_of(data_dir: Path, scope: Scope) -> list[Recording]:
    """The scope's kept voice notes, oldest message first."""
    folder = scope_folder(data_dir, scope)
    if not folder.is_dir():
        return []
    found = [Recording(int(p.stem), p, p.stat().st_size) for p in folder.iterdir() if p.stem.isdigit()]
    return sorted(found, key=lambda r: r.message_id)


def delete_recordings(data_dir: Path, scope: Scope) -> None:
    """Delete the scope's folder of kept voice notes (after its /deleteme)."""
    folder = scope_folder(data_dir, scope)
    if folder.is_dir():
        shutil.rmtree(folder)


async def exported(store: MemoryStore, scope: Scope) -> dict[str, Any]:
    """Everything stored about the scope, as /export, the web page and `mnemo export` give it: the store's export
    with the kept voice notes listed (message, file under the data directory, bytes), not copied in."""
    data = await store.export(scope)
    data_dir = store.db.path.parent
    data["voice_recordings"] = [{"message_id": r.message_id, "file": str(r.path.relative_to(data_dir)),
                                 "bytes": r.size} for r in recordings_of(data_dir, scope)]
    return data


def where_kept(data_dir: Path, keep: bool) -> str:
    """What `mnemo doctor` says about kept voice notes: whether they are kept, where, and how many there are."""
    root = recordings_root(data_dir)
    count = sum(1 for p in root.rglob("*") if p.is_file()) if root.is_dir() else 0
    if keep:
        return f"kept (MNEMO_VOICE_KEEP) in {root}: {count} file(s), deleted with the person's /deleteme"
    if count:
        return f"not kept now; {count} file(s) kept earlier remain in {root} until their person's /deleteme"
    return "not kept (only the transcript is stored)"
