"""Streamed replies: what of a half-written reply may be shown, and one preview message edited in place."""
from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from bot.conversation.bubbles import first_bubble
from bot.conversation.markers import split_markers

if TYPE_CHECKING:
    from bot.channels.shown import Shown

log = logging.getLogger(__name__)

PREVIEW_EVERY = 0.6  # seconds between two edits of a preview in a private chat
GROUP_PREVIEW_EVERY = 3.0  # in groups Telegram allows about 20 messages a minute

H = TypeVar("H")  # whatever identifies the preview message on the messenger (a message id, an event id)

_OPEN_MARKER = re.compile(r"\[[^\[\]]*$")


def preview_text(text: str, user_text: str = "") -> str:
    """The part of a half-written reply that may be shown: markers stripped, an unfinished '[…' cut off."""
    return split_markers(_OPEN_MARKER.sub("", text), user_text)[0]


class LivePreview(Generic[H]):
    """Shows the reply while the model writes: one message, sent with the first text, then edited in place.

    `update` never blocks the model's stream and never raises: a worker task shows the newest text at most
    every `every` seconds. `close` waits for a send or edit in flight, so the preview is never left half-known.
    """

    def __init__(self, show: Callable[[str], Awaitable[H]], edit: Callable[[H, str], Awaitable[None]],
                 every: float = PREVIEW_EVERY) -> None:
        self._show = show
        self._edit = edit
        self.every = every
        self.handle: H | None = None
        self.shown = ""
        self._kept = 0  # a resumed preview shows no fewer characters than it showed before the crash
        self._latest = ""
        self._changed = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None
        self._put: asyncio.Task[None] | None = None

    @classmethod
    def resumed(cls, shown: Shown[H], show: Callable[[str], Awaitable[H]], edit: Callable[[H, str], Awaitable[None]],
                group: bool) -> LivePreview[H]:
        """A preview that goes on from the one `shown` holds from before a crash; edited less often in a group."""
        preview = cls(show, edit, GROUP_PREVIEW_EVERY if group else PREVIEW_EVERY)
        preview.resume(shown.at(0), shown.text(0))
        return preview

    @property
    def visible(self) -> bool:
        """Whether the preview message exists."""
        return self.handle is not None

    def resume(self, handle: H | None, text: str) -> None:
        """Go on with a preview shown before a crash: it shows `text` and keeps it until the new reply is longer."""
        self.handle = handle
        if handle is not None:
            self.shown, self._kept = text, len(text)

    async def update(self, text: str) -> None:
        """Take the reply's visible text so far; only its first bubble is shown (the rest comes as bubbles of its own
        when the reply is finished, so the preview never shrinks)."""
        text = first_bubble(text)
        if not text or len(text) <= self._kept:
            return
        self._kept = 0
        self._latest = text
        self._changed.set()
        if self._worker is None:
            self._worker = asyncio.create_task(self._run(), name="live-preview")

    async def close(self) -> H | None:
        """Stop showing; return the preview message (None when nothing was shown)."""
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
        if self._put is not None:
            await asyncio.gather(self._put, return_exceptions=True)
        return self.handle

    async def _run(self) -> None:
        while True:
            await self._changed.wait()
            self._changed.clear()
            text = self._latest
            if text == self.shown:
                continue
            self._put = asyncio.ensure_future(self._show_or_edit(text))
            await asyncio.shield(self._put)
            await asyncio.sleep(self.every)

    async def _show_or_edit(self, text: str) -> None:
        """Send the preview, or edit it; a failure is logged and the final reply still comes."""
        try:
            if self.handle is None:
                self.handle = await self._show(text)
            else:
                await self._edit(self.handle, text)
            self.shown = text
        except Exception:
            log.warning("could not show the reply preview", exc_info=True)
