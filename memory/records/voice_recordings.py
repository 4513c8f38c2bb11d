"""Kept voice notes (MNEMO_VOICE_KEEP): the audio of a heard voice note as a row beside its logged message, so every
worker on the database reaches it: /deleteme erases it with its scope (every table with a scope id, zeroed), /export
carries it, a backup of the database holds it. A recording belongs to its message: it is only written while the
message exists, and goes when the message goes.
"""
from __future__ import annotations

from dataclasses import dataclass

from memory.models import Scope
from memory.storage.db import Database


@dataclass(frozen=True)
class Recording:
    """One kept voice note: the message its transcript was logged as, the container ('ogg', …) and the audio."""

    message_id: int
    format: str
    audio: bytes
    kept_at: float


class VoiceRecordings:
    """Keep, read and count the scopes' voice notes."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def keep(self, scope: Scope, message_id: int, audio: bytes, audio_format: str, now: float) -> bool:
        """Keep the audio of the scope's logged message (a note heard again replaces it); False when the message is
        gone (a /deleteme took it meanwhile): then nothing is written."""
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO voice_recordings(scope_id, message_id, format, audio, kept_at)"
                " SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM messages WHERE id = ? AND scope_id = ?)"
                " ON CONFLICT(scope_id, message_id) DO UPDATE SET format = excluded.format, audio = excluded.audio,"
                " kept_at = excluded.kept_at",
                (scope.id, message_id, audio_format, audio, now, message_id, scope.id))
            return await tx.changes() > 0

    async def of(self, scope: Scope) -> list[Recording]:
        """The scope's kept voice notes, oldest message first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall("SELECT message_id, format, audio, kept_at FROM voice_recordings"
                                     " WHERE scope_id = ? ORDER BY message_id", (scope.id,))
        return [Recording(int(r[0]), r[1], bytes(r[2]), float(r[3])) for r in rows]

    async def count(self) -> int:
        """How many voice notes are kept, of everyone."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT count(*) FROM voice_recordings")
        return int(row[0])
