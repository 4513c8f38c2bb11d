"""Learning after the reply: extraction (with the saved notice after it) and the summary, now or when the chat goes
quiet, as background tasks.

One run per scope at a time across every worker (its learning lock, `memory.storage.learning_locks`); the day's token
budget is asked before each model call; a failing task is logged with where it was created; `drain` and `close` end
them all.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.conversation.config import EngineConfig
from bot.conversation.saved_notices import SavedNotices
from bot.errors import LLMError
from bot.learning import extraction, summary
from bot.llm.port import LLM
from memory import EmbeddingUnavailable, MemoryStore, Scope
from scheduler.budget import TokenBudget

log = logging.getLogger(__name__)


class LearningRuns:
    """Schedules and runs what is learnt from a scope's messages; keeps the background tasks and quiet timers."""

    def __init__(
        self, store: MemoryStore, background: LLM, config: EngineConfig,
        zone_for: Callable[[Scope], Awaitable[ZoneInfo]], clock: Callable[[], float] = time.time,
        budget: TokenBudget | None = None,
    ) -> None:
        self.store, self.background, self.config, self.zone_for = store, background, config, zone_for
        self.clock, self.budget = clock, budget
        self._tasks: set[asyncio.Task[object]] = set()
        self._quiet: dict[int, tuple[asyncio.TimerHandle, Scope]] = {}  # a scope's timer until the chat is quiet
        self.notices = SavedNotices(store, config.language, clock)  # "💾 gemerkt: …" after a run, when asked for

    def after_reply(self, scope: Scope) -> None:
        """Schedule extraction and the summary refresh: now, or when the chat has gone quiet.

        The quiet timer restarts with every reply, so in a chat without a pause each full batch of
        messages is read at once as well.
        """
        if self.config.extraction == "when_quiet":
            self._stop_timer(scope)
            handle = asyncio.get_running_loop().call_later(
                self.config.extraction_quiet_seconds, lambda: self.spawn(self.learn(scope), "learn")
            )
            self._quiet[scope.id] = (handle, scope)
            self.spawn(self.learn(scope, full_batches_only=True), "learn")
        else:
            self.spawn(self.learn(scope), "learn")

    async def learn(self, scope: Scope, full_batches_only: bool = False) -> None:
        """Extract from every message after the cursor in batches, then fold the summary; one run per scope at a time.

        Before each model call the day's token budget is asked; when it is spent, the rest waits for the next run.
        """
        if not full_batches_only:
            self._quiet.pop(scope.id, None)

        async def budget_allows() -> bool:
            return self.budget is None or await self.budget.allows(self.clock())

        async with self.store.learning_locks.hold(scope):
            run = extraction.ExtractionRun()
            try:
                await extraction.extract(self.store, self.background, scope, self.config.profile_consent,
                                         datetime.fromtimestamp(self.clock(), await self.zone_for(scope)),
                                         admission=self.config.admission, may_continue=budget_allows,
                                         full_batches_only=full_batches_only, run=run)
            except (LLMError, EmbeddingUnavailable) as exc:  # the embedding server down: its notes wait too
                await self.store.failures.add("extraction.failed")
                log.warning("extraction failed for scope %s; the batch waits for the next run: %s", scope.id, exc)
                await self.notices.after_extraction(scope, run)  # what earlier batches of the run stored
                return
            await self.notices.after_extraction(scope, run)
            try:
                await summary.refresh_summary(self.store, self.background, scope, self.config.recent_messages,
                                              may_continue=budget_allows)
            except LLMError as exc:
                await self.store.failures.add("summary.failed")
                log.warning("summary refresh failed for scope %s; the summary is kept: %s", scope.id, exc)

    @contextlib.asynccontextmanager
    async def paused(self, scope: Scope) -> AsyncIterator[None]:
        """Run a block while no learning runs for the scope on any worker: /deleteme and /forget wait for an
        extraction in flight (which would otherwise store what they erase right after them) and drop its quiet timer."""
        self._stop_timer(scope)
        async with self.store.learning_locks.hold(scope):
            yield

    def spawn(self, coro: Awaitable[object], name: str) -> asyncio.Task[object]:
        """Run a background task; a failure is logged with where the task was created."""
        created_at = "".join(traceback.format_stack(limit=4)[:-1])
        task: asyncio.Task[object] = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.add(task)

        def done(finished: asyncio.Task[object]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("background task %s failed; created at:\n%s", name, created_at,
                          exc_info=finished.exception())

        task.add_done_callback(done)
        return task

    async def drain(self) -> None:
        """Wait until every background task has finished (quiet-timers fire first)."""
        waiting = list(self._quiet.values())
        self._quiet.clear()
        for handle, scope in waiting:
            handle.cancel()
            self.spawn(self.learn(scope), "learn")
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        """Cancel background work."""
        for handle, _scope in self._quiet.values():
            handle.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _stop_timer(self, scope: Scope) -> None:
        """Drop the scope's quiet timer, if one runs."""
        waiting = self._quiet.pop(scope.id, None)
        if waiting:
            waiting[0].cancel()
