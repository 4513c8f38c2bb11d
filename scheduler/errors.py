"""Errors raised by the scheduler package.

    SchedulerError
    ├── BadModelOutput   the background model's answer is not in the shape asked for
    └── RetryLater       a channel asked to wait before the next try (Telegram's 429 retry_after)
"""
from __future__ import annotations


class SchedulerError(Exception):
    """Base of every error the scheduler package raises."""


class BadModelOutput(SchedulerError):
    """A reflection or diary answer that cannot be used; nothing is stored."""


class RetryLater(SchedulerError):
    """The channel refused for now and named how long to wait; the outbox tries again no sooner."""

    def __init__(self, seconds: float, detail: str = "") -> None:
        super().__init__(detail or f"retry after {seconds:g} s")
        self.seconds = seconds
