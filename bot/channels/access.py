"""Who may talk to mnemo on a messenger: the settings allowlist, users approved by pairing code, and the admins.

Shared by every channel: a channel asks `allows(user_id)` for each private message, lets `turn_away` answer
an unknown user (a pairing code, a refusal, or silence), and offers its admins `/pair` through `admin_command`.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from bot.commands.catalog import parse_command
from bot.texts import counted, t
from memory import AccessStore, ApprovedUser, Expired, NotFound, PairingRequest, normalize_code

log = logging.getLogger(__name__)

UnknownUsers = Literal["pair", "refuse", "silent"]
Welcome = Callable[[ApprovedUser], Awaitable[None]]
WELCOME_EVERY = 3.0  # seconds between looks for users approved by `mnemo pair approve` (another process)
REVOKE_WORDS = ("revoke", "entziehen")  # '/pair revoke USER' in either language


@dataclass(frozen=True)
class AccessConfig:
    """A channel's access settings, user ids written as scopes ('tg:42', '@anna:example.org')."""

    allowed: frozenset[str] = frozenset()
    admins: frozenset[str] = frozenset()
    unknown_users: UnknownUsers = "pair"
    pairing_minutes: float = 10.0


@dataclass(frozen=True)
class AdminAnswer:
    """What an admin's /pair command says, and whom it approved (to welcome them)."""

    text: str
    approved: ApprovedUser | None = None


class RecentIds:
    """Remembers the last `size` keys it was shown, to say whether a key is new."""

    def __init__(self, size: int = 10_000) -> None:
        self._order: deque[object] = deque(maxlen=size)
        self._keys: set[object] = set()

    def first_time(self, key: object) -> bool:
        """True the first time a key is shown (while it is among the last `size`)."""
        if key in self._keys:
            return False
        if len(self._order) == self._order.maxlen:
            self._keys.discard(self._order[0])
        self._order.append(key)
        self._keys.add(key)
        return True


class Access:
    """Decides who is let in, answers unknown users, and runs the admins' /pair command."""

    def __init__(self, store: AccessStore, config: AccessConfig, lang: str,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.config = config
        self.lang = lang
        self.clock = clock
        self._refused = RecentIds()
        self.channel: str | None = None  # set while the channel runs: its users approved in a chat are welcomed there
        self.welcome_every = WELCOME_EVERY
        self._welcoming: asyncio.Task[None] | None = None

    async def allows(self, user_id: str) -> bool:
        """Whether the user is on the settings allowlist or was approved by pairing code (and not revoked)."""
        return user_id in self.config.allowed or await self.store.is_approved(user_id)

    def is_admin(self, user_id: str) -> bool:
        """Whether the user may approve and revoke from the chat."""
        return user_id in self.config.admins

    async def turn_away(self, channel: str, user_id: str, display_name: str) -> str | None:
        """What to tell an unknown user: a new pairing code, a refusal (once per process), or nothing."""
        mode = self.config.unknown_users
        if mode == "silent":
            log.info("%s is not allowed; ignored (MNEMO_UNKNOWN_USERS=silent)", user_id)
            return None
        if mode == "pair":
            step, request = await self.store.request(channel, user_id, display_name, self.clock(),
                                                     self.config.pairing_minutes * 60)
            if step == "new" and request is not None:
                return t(self.lang, "pairing_code", code=request.code,
                         minutes=counted(self.lang, self.config.pairing_minutes, "minutes"))
            if step == "wait":
                return None  # the code is in their chat already; a stranger cannot make us talk more
            log.warning("too many open pairing requests; %s refused", user_id)
        if not self._refused.first_time(user_id):
            return None
        log.warning("%s is not allowed; refused", user_id)
        return t(self.lang, "pairing_full" if mode == "pair" else "refused")

    async def admin_command(self, user_id: str, text: str) -> AdminAnswer | None:
        """Run '/pair', '/pair CODE' or '/pair revoke USER' (German: entziehen) for an admin; None for anything else."""
        parsed = parse_command(text)
        if parsed is None or parsed[0] != "pair" or not self.is_admin(user_id):
            return None
        words = parsed[1].split()
        if not words:
            return AdminAnswer(describe_pending(await self.store.pending(self.clock()), self.lang, self.clock()))
        if words[0].lower() in REVOKE_WORDS and len(words) == 2:
            return AdminAnswer(await self.revoke(words[1], by=user_id))
        if len(words) != 1:
            return AdminAnswer(t(self.lang, "pair_usage"))
        return await self.approve(words[0], by=user_id)

    async def approve(self, code: str, by: str) -> AdminAnswer:
        """Approve a pairing code; the answer says whom, or why not."""
        try:
            user = await self.store.approve(code, by, self.clock(), welcomed_on=self.channel)
        except NotFound:
            return AdminAnswer(t(self.lang, "pair_unknown", what=normalize_code(code)))
        except Expired:
            return AdminAnswer(t(self.lang, "pair_expired", code=normalize_code(code)))
        return AdminAnswer(t(self.lang, "pair_approved", user=user.user_id, name=user.display_name or "?"), user)

    async def welcome_approved(self, welcome: Welcome) -> int:
        """Welcome, once, each user of the running channel approved elsewhere since the last look; how many."""
        if self.channel is None:
            return 0
        users = await self.store.claim_welcomes(self.channel, self.clock())
        for user in users:
            await welcome(user)
        return len(users)

    def start_welcoming(self, channel: str, welcome: Welcome) -> None:
        """While the channel runs, welcome its users approved from the command line (looked for every few seconds)."""
        self.channel = channel
        self._welcoming = asyncio.create_task(self._keep_welcoming(welcome), name=f"{channel}-welcomes")

    async def stop_welcoming(self) -> None:
        """Stop looking for approved users to welcome."""
        task, self._welcoming = self._welcoming, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _keep_welcoming(self, welcome: Welcome) -> None:
        while True:
            try:
                await self.welcome_approved(welcome)
            except Exception:  # a failing look must not end the loop; the next one tries again
                log.exception("welcoming users approved on %s failed", self.channel)
            await asyncio.sleep(self.welcome_every)

    async def revoke(self, user_id: str, by: str) -> str:
        """Revoke an approved user; the answer says so, or why not."""
        try:
            await self.store.revoke(user_id, by, self.clock())
        except NotFound:
            return t(self.lang, "pair_not_approved", user=user_id)
        return t(self.lang, "pair_revoked", user=user_id)


def describe_pending(requests: Sequence[PairingRequest], lang: str, now: float) -> str:
    """The open pairing requests, one a line, with the minutes each has left."""
    if not requests:
        return t(lang, "pair_list_empty")
    lines = [f"{r.code}  {r.user_id}  {r.display_name}  ({max(0, int((r.expires_at - now) // 60))} min)"
             for r in requests]
    return "\n".join([t(lang, "pair_list_head"), *lines])


def describe_approved(users: Sequence[ApprovedUser], lang: str) -> str:
    """Approved users under a heading, one a line: id, name, when and by whom (and when revoked)."""
    def when(stamp: float) -> str:
        return datetime.fromtimestamp(stamp).strftime("%d.%m.%Y %H:%M" if lang == "de" else "%Y-%m-%d %H:%M")

    def who(by: str | None) -> str:
        return t(lang, "pair_by_cli") if by == "cli" else str(by)

    lines = [t(lang, "pair_list_approved", user=u.user_id, name=u.display_name, when=when(u.approved_at),
               by=who(u.approved_by))
             + (t(lang, "pair_list_revoked", when=when(u.revoked_at), by=who(u.revoked_by))
                if u.revoked_at is not None else "")
             for u in users]
    return "\n".join([t(lang, "pair_list_approved_head"), *lines])


async def run_pair(store: AccessStore, action: str, value: str | None, lang: str, now: float) -> tuple[int, str]:
    """`mnemo pair list|approve CODE|revoke USER` on an open store: the exit code and what to print."""
    access = Access(store, AccessConfig(), lang, clock=lambda: now)
    if action == "approve" and value:
        answer = await access.approve(value, by="cli")
        return (0 if answer.approved else 1), answer.text
    if action == "revoke" and value:
        text = await access.revoke(value, by="cli")
        return (0 if text == t(lang, "pair_revoked", user=value) else 1), text
    if action == "list":
        approved = await store.approved(with_revoked=True)
        listing = describe_pending(await store.pending(now), lang, now)
        return 0, listing + (f"\n\n{describe_approved(approved, lang)}" if approved else "")
    return 2, t(lang, "pair_usage")
