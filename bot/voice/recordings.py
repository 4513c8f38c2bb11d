"""Voice notes kept (MNEMO_VOICE_KEEP, off by default): the audio of each heard voice note, once its transcript is
logged, kept in the database by its message (`memory.records.voice_recordings`), so every worker reaches it: /deleteme
erases it through any worker, /export carries it (the audio as base64), a backup of the database holds it, `mnemo
doctor` says how many there are.

Earlier versions wrote them as files into each worker's own data directory,
`<data dir>/recordings/<companion>/<scope id>/<message id>.<format>`, out of the other workers' reach; a worker moves
the files it finds there into the database at its start (`move_old_files`) and deletes them.
"""
from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any

from memory import MemoryStore, Scope

log = logging.getLogger(__name__)

RECORDINGS_DIR = "recordings"  # where earlier versions kept them as files, per worker


def recordings_root(data_dir: Path) -> Path:
    """The folder earlier versions kept voice notes in (moved into the database at start)."""
    return data_dir / RECORDINGS_DIR


async def exported(store: MemoryStore, scope: Scope) -> dict[str, Any]:
    """Everything stored about the scope, as /export, the web page and `mnemo export` give it: the store's export
    with the kept voice notes (message, format, bytes, when kept, the audio as base64)."""
    data = await store.export(scope)
    data["voice_recordings"] = [
        {"message_id": r.message_id, "format": r.format, "bytes": len(r.audio), "kept_at": r.kept_at,
         "audio_base64": base64.b64encode(r.audio).decode("ascii")}
        for r in await store.voice_recordings.of(scope)]
    return data


async def move_old_files(store: MemoryStore, data_dir: Path, now: float) -> int:
    """Move the voice notes an earlier version kept as files in this worker's data directory into the database (each
    of a message that still exists; the others were to go with their message), deleting the files and the folders
    they leave empty; returns how many were moved. A file that cannot be read is logged and stays."""
    root = recordings_root(data_dir)
    if not root.is_dir():
        return 0
    moved = 0
    for path in sorted(p for p in root.glob("*/*/*") if p.is_file()):
        scope_id, message_id = path.parent.name, path.stem
        if not (scope_id.isdigit() and message_id.isdigit()):
            log.warning("%s is not a kept voice note's file; left as it is", path)
            continue
        try:
            audio = path.read_bytes()
        except OSError:
            log.exception("the kept voice note %s could not be read; left as it is", path)
            continue
        scope = Scope(int(scope_id), path.parent.parent.name, "")  # the row is named by the scope's id alone
        if await store.voice_recordings.keep(scope, int(message_id), audio, path.suffix.lstrip(".") or "audio", now):
            moved += 1
        else:
            log.info("%s belonged to a message no longer stored; deleted", path)
        path.unlink()
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    if not any(root.iterdir()):
        root.rmdir()
    if moved:
        log.warning("moved %d voice note(s) kept as files in %s into the database", moved, root)
    return moved


def where_kept(data_dir: Path, keep: bool) -> str:
    """What `mnemo doctor` says about kept voice notes: whether they are kept, and files an earlier version left."""
    root = recordings_root(data_dir)
    count = sum(1 for p in root.rglob("*") if p.is_file()) if root.is_dir() else 0
    said = ("kept (MNEMO_VOICE_KEEP) in the database, with their messages; deleted with the person's /deleteme"
            if keep else "not kept (only the transcript is stored)")
    if count:
        said += f"; {count} file(s) an earlier version kept in {root} are moved into the database at the next start"
    return said
