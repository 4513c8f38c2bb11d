"""Login links for the web page: made for a scope by /web in the chat and by `mnemo web-link`."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from memory import MemoryStore, Scope

LINK_MINUTES = 10  # a login link works this long, and once


def base_url(web_base_url: str, web_listen: str) -> str:
    """Where people reach the page: the configured base URL, else the listening address over http (no slash)."""
    if web_base_url:
        return web_base_url.rstrip("/")
    host, _, port = web_listen.rpartition(":")
    if host in ("0.0.0.0", "::", "[::]", ""):
        host = "127.0.0.1"
    return f"http://{host}:{port}"


@dataclass(frozen=True)
class WebLinks:
    """Issues one-time login links to the page at `base`."""

    store: MemoryStore
    base: str
    clock: Callable[[], float] = field(default=time.time)

    async def link(self, scope: Scope) -> str:
        """A new login link for the scope's memory, valid LINK_MINUTES minutes and once."""
        token = await self.store.web.issue_link(scope, self.clock(), LINK_MINUTES * 60)
        return f"{self.base}/web/login?t={token}"
