"""What every channel does around a send: wait out a rate limit and send the same request again; show "typing…"."""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from bot.channels.streaming import LivePreview

log = logging.getLogger(__name__)

R = TypeVar("R")
Sleep = Callable[[float], Awaitable[object]]
Indicate = Callable[[bool], Awaitable[None]]  # show (True) or stop showing (False) "typing…"

FLOOD_TRIES = 5  # sends of the same request while the messenger keeps saying "too many requests"
MAX_FLOOD_WAIT = 300.0  # seconds; a longer wait is not waited out but reported
TYPING_EVERY = 4.0  # seconds between typing notices (Telegram shows one for about 5 s)


def retry_wait(asked: float | None, attempt: int, tries: int = FLOOD_TRIES,
               longest: float = MAX_FLOOD_WAIT) -> float | None:
    """Seconds to wait before sending the same request again, when the messenger asked for `asked`; None: do not.

    None when it asked for no wait, when `attempt` was the last of `tries`, or when it asks for longer than
    `longest` (the failure is then reported instead of waited out).
    """
    if asked is None or attempt >= tries or asked > longest:
        return None
    return float(asked)


async def patiently(call: Callable[[], Awaitable[R]], asked: Callable[[object], float | None], what: str, *,
                    sleep: Sleep = asyncio.sleep, tries: int = FLOOD_TRIES) -> R:
    """Run a request; while the messenger says "too many requests, wait", wait as told and run the same one again.

    `asked` reads the wait out of an answer or an error (None: it asks for none). An error that asks for no
    wait is raised at once, and so is the last one; an answer is returned.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            answer = await call()
        except Exception as exc:
            wait = retry_wait(asked(exc), attempt, tries)
            if wait is None:
                raise
        else:
            wait = retry_wait(asked(answer), attempt, tries)
            if wait is None:
                return answer
        log.warning("%s: waiting %.1f s, then the same request again", what, wait)
        await sleep(wait)


@contextlib.asynccontextmanager
async def typing(indicate: Indicate, preview: LivePreview[Any] | None = None,
                 every: float = TYPING_EVERY) -> AsyncIterator[None]:
    """Show "typing…" now and every few seconds until the block is done or the preview is visible, then stop."""
    if preview is None or not preview.visible:
        await indicate(True)
    task = asyncio.create_task(_keep_typing(indicate, preview, every), name="typing")
    try:
        yield
    finally:
        await stop_task(task)
        await indicate(False)


async def _keep_typing(indicate: Indicate, preview: LivePreview[Any] | None, every: float) -> None:
    while True:
        await asyncio.sleep(every)
        if preview is not None and preview.visible:
            return
        await indicate(True)


async def stop_task(task: asyncio.Task[Any]) -> None:
    """Cancel a task and wait until it ended; when the caller itself is being cancelled, that goes on."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
