"""The web page's way in: one-time login links and the sessions they start, per scope.

A link or session token is shown once (in the chat, on the operator's terminal, in a cookie) and kept only as its
SHA-256: a copy of the database opens nothing. A link works once and for a few minutes; a session until it
expires or its person logs out. Erasing a scope (/deleteme) removes both, since they carry the scope's id.
"""
from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Literal

from memory.models import Scope
from memory.storage.db import Database

LinkProblem = Literal["unknown", "used", "expired"]


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """A fresh secret for a link, a session or a form (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class WebSession:
    """A logged-in browser: whose memory it shows, its form token, its language (None: the deployment's)."""

    id: int
    scope: Scope
    csrf: str
    lang: str | None
    expires_at: float


@dataclass(frozen=True)
class Redeemed:
    """A link that worked: the new session's secret (for the cookie) and the session itself."""

    token: str
    session: WebSession


class WebAccess:
    """Issue and redeem login links; look up, change and end sessions."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def issue_link(self, scope: Scope, now: float, valid_for: float) -> str:
        """A new one-time login link's secret for the scope, valid `valid_for` seconds from `now`."""
        token = new_token()
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM web_links WHERE expires_at < ?", (now - 86400,))  # old ones, kept a day
            await tx.execute(
                "INSERT INTO web_links(scope_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)",
                (scope.id, _hash(token), now, now + valid_for),
            )
        return token

    async def redeem(self, token: str, now: float, session_for: float) -> Redeemed | LinkProblem:
        """Use a link once: a new session lasting `session_for` seconds, or why the link does not work."""
        session_token, csrf = new_token(), new_token()
        async with self.db.transaction() as tx:
            row = await tx.fetchone(
                "SELECT l.id, l.expires_at, l.used_at, s.id, s.companion_id, s.user_id FROM web_links l"
                " JOIN scopes s ON s.id = l.scope_id WHERE l.token_hash = ?", (_hash(token),))
            if row is None:
                return "unknown"
            if row[2] is not None:
                return "used"
            if now >= float(row[1]):
                return "expired"
            await tx.execute("UPDATE web_links SET used_at = ? WHERE id = ?", (now, row[0]))
            await tx.execute("DELETE FROM web_sessions WHERE expires_at < ?", (now,))
            session_id = await tx.execute(
                "INSERT INTO web_sessions(scope_id, token_hash, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                (row[3], _hash(session_token), csrf, now, now + session_for),
            )
        scope = Scope(int(row[3]), row[4], row[5])
        return Redeemed(session_token, WebSession(session_id, scope, csrf, None, now + session_for))

    async def session(self, token: str, now: float) -> WebSession | None:
        """The session of a cookie's secret, or None when there is none or it expired."""
        async with self.db.reading() as tx:
            row = await tx.fetchone(
                "SELECT w.id, w.csrf, w.lang, w.expires_at, s.id, s.companion_id, s.user_id FROM web_sessions w"
                " JOIN scopes s ON s.id = w.scope_id WHERE w.token_hash = ? AND w.expires_at > ?",
                (_hash(token), now),
            )
        if row is None:
            return None
        return WebSession(int(row[0]), Scope(int(row[4]), row[5], row[6]), row[1], row[2], float(row[3]))

    async def set_lang(self, session: WebSession, lang: str) -> None:
        """The language the session's pages are shown in."""
        async with self.db.transaction() as tx:
            await tx.execute("UPDATE web_sessions SET lang = ? WHERE id = ?", (lang, session.id))

    async def end(self, session: WebSession) -> None:
        """Log out: the session is gone."""
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM web_sessions WHERE id = ?", (session.id,))

    async def end_all(self, scope: Scope) -> int:
        """Log every browser of a scope out (and its unused links go); returns the sessions ended."""
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM web_links WHERE scope_id = ?", (scope.id,))
            await tx.execute("DELETE FROM web_sessions WHERE scope_id = ?", (scope.id,))
            return await tx.changes()

    async def scope_by_id(self, scope_id: int) -> Scope | None:
        """The scope with this id, or None."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT id, companion_id, user_id FROM scopes WHERE id = ?", (scope_id,))
        return None if row is None else Scope(int(row[0]), row[1], row[2])

    async def scope_of(self, companion_id: str, user_id: str) -> Scope | None:
        """The scope of a companion and user, or None when that user never talked to it."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT id FROM scopes WHERE companion_id = ? AND user_id = ?",
                                    (companion_id, user_id))
        return None if row is None else Scope(int(row[0]), companion_id, user_id)
