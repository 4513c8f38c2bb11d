"""Who may talk to the companion: approved users and pending pairing requests, with pure decisions on codes."""
from __future__ import annotations

import logging
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from memory.errors import Expired, NotFound
from memory.storage.db import Database

log = logging.getLogger(__name__)

# Letters and digits that cannot be mistaken for each other (no 0/O, 1/I/L).
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
MAX_PENDING = 20  # open pairing requests at once; more strangers are refused until some expire

Step = Literal["new", "wait", "full"]


@dataclass(frozen=True)
class PairingRequest:
    """An unknown user asked to talk; the operator approves the code (or lets it expire)."""

    code: str
    channel: str
    user_id: str
    display_name: str
    created_at: float
    expires_at: float


@dataclass(frozen=True)
class ApprovedUser:
    """A user the operator let in by approving a pairing code (revoked_at set once revoked)."""

    channel: str
    user_id: str
    display_name: str
    approved_at: float
    approved_by: str
    revoked_at: float | None = None
    revoked_by: str | None = None


def new_code() -> str:
    """A random pairing code of 8 unambiguous characters."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(text: str) -> str:
    """A code as typed ('k7pq-2xmd ') in its stored form ('K7PQ2XMD')."""
    return re.sub(r"[\s\-_]", "", text).upper()


def code_valid(request: PairingRequest, now: float) -> bool:
    """Whether the request can still be approved at `now`."""
    return request.created_at <= now < request.expires_at


def pairing_step(existing: PairingRequest | None, now: float, open_requests: int, limit: int = MAX_PENDING) -> Step:
    """What an unknown user's message does: 'new' code, 'wait' (their code is still valid), or 'full'."""
    if existing is not None and code_valid(existing, now):
        return "wait"
    return "full" if open_requests >= limit else "new"


GROUP_TITLE = "group_title"  # the state key (memory/records/state.py) of a group's name, as its messenger last gave it


def _request(row: Any) -> PairingRequest:
    return PairingRequest(row[0], row[1], row[2], row[3], float(row[4]), float(row[5]))


def _approved(row: Any) -> ApprovedUser:
    return ApprovedUser(*row)


_REQUEST_COLS = "code, channel, user_id, display_name, created_at, expires_at"
_APPROVED_COLS = "channel, user_id, display_name, approved_at, approved_by, revoked_at, revoked_by"


class AccessStore:
    """Approved users and pairing requests; nothing else of an unknown user is stored."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def is_approved(self, user_id: str) -> bool:
        """Whether the user was approved and not revoked since."""
        async with self.db.reading() as tx:
            row = await tx.fetchone("SELECT 1 FROM approved_users WHERE user_id = ? AND revoked_at IS NULL", (user_id,))
        return row is not None

    async def approved(self, channel: str | None = None, *, with_revoked: bool = False) -> list[ApprovedUser]:
        """Approved users (of one channel), oldest approval first."""
        sql = f"SELECT {_APPROVED_COLS} FROM approved_users WHERE (? IS NULL OR channel = ?)"
        if not with_revoked:
            sql += " AND revoked_at IS NULL"
        async with self.db.reading() as tx:
            rows = await tx.fetchall(sql + " ORDER BY approved_at", (channel, channel))
        return [_approved(r) for r in rows]

    async def pending(self, now: float) -> list[PairingRequest]:
        """Requests that can still be approved, oldest first."""
        async with self.db.reading() as tx:
            rows = await tx.fetchall(f"SELECT {_REQUEST_COLS} FROM pairing_requests WHERE expires_at > ?"
                                     " ORDER BY created_at", (now,))
        return [_request(r) for r in rows]

    async def request(
        self, channel: str, user_id: str, display_name: str, now: float, ttl: float, limit: int = MAX_PENDING,
    ) -> tuple[Step, PairingRequest | None]:
        """Open a pairing request for an unknown user (expired ones are deleted first); the step and the request."""
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM pairing_requests WHERE expires_at <= ?", (now,))
            row = await tx.fetchone(f"SELECT {_REQUEST_COLS} FROM pairing_requests WHERE channel = ? AND user_id = ?",
                                    (channel, user_id))
            existing = _request(row) if row else None
            open_requests = int((await tx.fetchone("SELECT count(*) FROM pairing_requests"))[0])
            step = pairing_step(existing, now, open_requests, limit)
            if step != "new":
                return step, existing
            made = PairingRequest(new_code(), channel, user_id, display_name[:100], now, now + ttl)
            await tx.execute(f"INSERT INTO pairing_requests({_REQUEST_COLS}) VALUES (?, ?, ?, ?, ?, ?)",
                             (made.code, made.channel, made.user_id, made.display_name, made.created_at,
                              made.expires_at))
        log.warning("pairing request from %s (%s) on %s: code %s, valid until %s; approve with `mnemo pair approve %s`",
                    user_id, made.display_name, channel, made.code, _when(made.expires_at), made.code)
        return step, made

    async def approve(self, code: str, by: str, now: float, *, welcomed_on: str | None = None) -> ApprovedUser:
        """Approve a pairing code: the user joins the allowlist and the request is gone; NotFound or Expired.

        welcomed_on: the channel that tells the user itself, right away, that they can write now; a user of
        any other channel (and every approval from `mnemo pair approve`) waits for their channel's running bot.
        """
        code = normalize_code(code)
        async with self.db.transaction() as tx:
            row = await tx.fetchone(f"SELECT {_REQUEST_COLS} FROM pairing_requests WHERE code = ?", (code,))
            if row is None:
                raise NotFound(f"no pairing request with code {code}")
            request = _request(row)
            await tx.execute("DELETE FROM pairing_requests WHERE code = ?", (code,))
            valid = code_valid(request, now)
            if valid:
                await tx.execute(
                    f"INSERT INTO approved_users({_APPROVED_COLS}, welcomed_at) VALUES (?, ?, ?, ?, ?, NULL, NULL, ?)"
                    " ON CONFLICT(channel, user_id) DO UPDATE SET display_name = excluded.display_name,"
                    " approved_at = excluded.approved_at, approved_by = excluded.approved_by,"
                    " revoked_at = NULL, revoked_by = NULL, welcomed_at = excluded.welcomed_at",
                    (request.channel, request.user_id, request.display_name, now, by,
                     now if request.channel == welcomed_on else None),
                )
        if not valid:  # the expired request is deleted all the same
            raise Expired(f"pairing code {code} expired at {_when(request.expires_at)}")
        log.warning("pairing approved: %s (%s) on %s by %s", request.user_id, request.display_name, request.channel, by)
        return ApprovedUser(request.channel, request.user_id, request.display_name, now, by)

    async def claim_welcomes(self, channel: str, now: float) -> list[ApprovedUser]:
        """The channel's approved users not yet welcomed, marked welcomed now (so each is welcomed once)."""
        async with self.db.transaction() as tx:
            rows = await tx.fetchall(f"SELECT {_APPROVED_COLS} FROM approved_users WHERE channel = ?"
                                     " AND revoked_at IS NULL AND welcomed_at IS NULL ORDER BY approved_at", (channel,))
            if rows:
                await tx.execute("UPDATE approved_users SET welcomed_at = ? WHERE channel = ? AND revoked_at IS NULL"
                                 " AND welcomed_at IS NULL", (now, channel))
        return [_approved(r) for r in rows]

    async def revoke(self, user_id: str, by: str, now: float) -> ApprovedUser:
        """Take an approved user off the allowlist (the row stays, marked revoked); NotFound if not approved."""
        async with self.db.transaction() as tx:
            row = await tx.fetchone(f"SELECT {_APPROVED_COLS} FROM approved_users WHERE user_id = ?"
                                    " AND revoked_at IS NULL", (user_id,))
            if row is None:
                raise NotFound(f"{user_id} is not an approved user")
            await tx.execute("UPDATE approved_users SET revoked_at = ?, revoked_by = ? WHERE user_id = ?",
                             (now, by, user_id))
        user = _approved(row)
        log.warning("pairing revoked: %s (%s) on %s by %s", user.user_id, user.display_name, user.channel, by)
        return ApprovedUser(user.channel, user.user_id, user.display_name, user.approved_at, user.approved_by, now, by)


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")
